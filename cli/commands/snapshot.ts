// git undo snapshot: record the current state now.
import { foldSummary } from "../../core/format.ts";
import { record } from "../../core/record.ts";
import { openRepo } from "../../core/repo.ts";
import { str, type Command } from "../command.ts";
import { out } from "../ui.ts";

export const snapshot: Command = {
  name: "snapshot",
  usage: "git undo snapshot [-m <message>]\n\n    -m, --message <message>   the summary line (default: what changed)",
  options: { message: { type: "string", short: "m" } },
  argumentHint: "use -m for a message",
  async run({ values }) {
    const repo = await openRepo();
    // An empty -m says nothing: describe the change instead, as without -m.
    const given = str(values.message);
    const message = given !== undefined && foldSummary(given) !== "" ? given : undefined;
    const result = await record(repo, { kind: "manual", ...(message !== undefined ? { message } : {}) });
    if (result.created) out(`#${result.snapshot.number} ${result.snapshot.summary}`);
    else out(`no change since #${result.latest.number}`);
    return 0;
  },
};
