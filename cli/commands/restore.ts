// git undo restore <n>: put snapshot n's state back.
import { usage } from "../../core/errors.ts";
import { resolveSnapshotArg } from "../../core/history.ts";
import { openRepo } from "../../core/repo.ts";
import type { Command } from "../command.ts";
import { RESTORE_FLAGS, RESTORE_OPTIONS, runRestore } from "./undo.ts";

export const restore: Command = {
  name: "restore",
  usage: [
    "git undo restore <n> [--force] [--dry-run] [--skip-missing]",
    "",
    "Restores snapshot <n> (as 'git undo list' numbers it), or @{<date>}: the",
    "newest snapshot recorded at or before <date> (@{yesterday}, @{2.hours.ago}).",
    "",
    RESTORE_FLAGS,
    "    --skip-missing  when objects the snapshot needs are gone (pruned by git gc",
    "                    after the snapshots holding them were deleted), restore",
    "                    everything else and list the refs, HEAD and stash entries",
    "                    left as they are; exits 0 with a warning line. Without it",
    "                    such a restore is refused (exit 1) and changes nothing",
  ].join("\n"),
  options: { ...RESTORE_OPTIONS, "skip-missing": { type: "boolean" } },
  takesArguments: true,
  async run({ values, positionals }) {
    if (positionals.length !== 1) throw usage("git undo restore takes one snapshot number, such as 'git undo restore 12'");
    const arg = positionals[0]!;
    // A number needs no repository yet; a date is resolved against this worktree's snapshots.
    const n = await resolveSnapshotArg(() => openRepo(), arg);
    return runRestore({ kind: "restore", number: n }, values);
  },
};
