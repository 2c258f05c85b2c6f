// git undo revert <n>: take out the change snapshot n recorded, keeping everything since.
import { usage } from "../../core/errors.ts";
import { resolveSnapshotArg } from "../../core/snapshots/history.ts";
import type { Command } from "../command.ts";
import { RESTORE_FLAGS, RESTORE_OPTIONS, runRestore } from "./undo.ts";

export const revert: Command = {
  name: "revert",
  usage: [
    "git undo revert <n> [--force] [--dry-run]",
    "",
    "Undoes the change snapshot <n> recorded (from the snapshot before it to <n>)",
    "on top of the current state, keeping everything done since: refs <n> moved",
    "go back if they are still where <n> left them, stash entries it pushed are",
    "dropped and those it dropped come back, and files go through Git's three-way",
    "merge. When something <n> changed has changed again since (a ref moved, the",
    "same lines edited), nothing is reverted and every conflict is named. The",
    "result is recorded as a new change, which plain 'git undo' undoes.",
    "",
    RESTORE_FLAGS,
  ].join("\n"),
  options: RESTORE_OPTIONS,
  takesArguments: true,
  async run({ values, positionals }, ctx) {
    if (positionals.length !== 1) throw usage("git undo revert takes one snapshot number, such as 'git undo revert 17'");
    const n = await resolveSnapshotArg(() => ctx.openRepo(), positionals[0]!);
    return runRestore({ kind: "revert", number: n }, values, ctx);
  },
};
