// git undo snapshot: record the current state now.
import { foldSummary } from "../../core/format/index.ts";
import type { LeftOutFile } from "../../core/git-data/index/trees.ts";
import { record } from "../../core/record.ts";
import { escapeControls } from "../../core/text.ts";
import { str, type Command } from "../command.ts";
import { sizeText } from "../ui.ts";

/** One line naming the files a recording left out for their size, and the setting that decides it. */
export function leftOutLine(files: readonly LeftOutFile[], limit: number): string {
  const names = files.map((f) => `${escapeControls(f.path)} (${sizeText(f.size)})`).join(", ");
  return `not recorded, larger than undo.maxNewFileSize (${sizeText(limit)}; 0 for no limit): ${names}`;
}

export const snapshot: Command = {
  name: "snapshot",
  usage: [
    "git undo snapshot [-m <message>]",
    "",
    "Records the current state now. Without -m, nothing is recorded when nothing",
    "changed since the latest snapshot (exit 1); with -m it is always recorded, so",
    "a state can be bookmarked under a name.",
    "",
    "    -m, --message <message>   the summary line (default: what changed)",
  ].join("\n"),
  options: { message: { type: "string", short: "m" } },
  argumentHint: "use -m for a message",
  async run({ values }, ctx) {
    const { out, write } = ctx.output;
    const repo = await ctx.openRepo();
    // An empty -m says nothing: describe the change instead, as without -m.
    const given = str(values.message);
    const message = given !== undefined && foldSummary(given) !== "" ? given : undefined;
    // A message makes a bookmark: recorded even when nothing changed since the latest snapshot.
    const result = await record(repo, { kind: "manual", ...(message !== undefined ? { message, always: true } : {}) });
    if (result.created) out(`#${result.snapshot.number} ${escapeControls(result.snapshot.summary)}`);
    else out(`no change since #${result.latest.number}`);
    if (result.created && result.ownProblem !== undefined) {
      const { reason, countsAs } = result.ownProblem;
      const counted = countsAs === "fetched" ? "so it counts as fetched and plain undo passes over it" : "and that record cannot be read, so every snapshot counts as own, fetched ones too";
      write(2, `warning: #${result.snapshot.number} could not be written down as this worktree's own (${escapeControls(reason)}), ${counted}; 'git undo doctor' checks ${escapeControls(repo.undoDir)}\n`);
    }
    const leftOut = result.capture.leftOut;
    if (leftOut?.length) write(2, `${leftOutLine(leftOut, repo.config.maxNewFileSize)}\n`);
    return result.created ? 0 : 1; // "no change" is nothing to do, as the README says
  },
};
