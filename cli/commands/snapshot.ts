// git undo snapshot: record the current state now.
import { record } from "../../core/record.ts";
import { openRepo } from "../../core/repo.ts";
import { str, type Command } from "../command.ts";
import { out } from "../ui.ts";

export const snapshot: Command = {
  name: "snapshot",
  summary: "record the current state as a manual snapshot",
  usage: "git undo snapshot [-m <message>]\n\n    -m, --message <message>   the summary line (default: what changed)",
  options: { message: { type: "string", short: "m" } },
  async run({ values }) {
    const repo = await openRepo();
    const message = str(values.message);
    const result = await record(repo, { kind: "manual", ...(message !== undefined ? { message } : {}) });
    if (result.created) out(`#${result.snapshot.number} ${result.snapshot.summary}`);
    else out(`no change since #${result.latest.number}`);
    return 0;
  },
};
