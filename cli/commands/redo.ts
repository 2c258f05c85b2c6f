// git undo redo [N]: go forward N snapshots again, skipping the navigation streak.
import type { Command } from "../command.ts";
import { RESTORE_FLAGS, RESTORE_OPTIONS, runRestore, steps } from "./undo.ts";

export const redo: Command = {
  name: "redo",
  usage: ["git undo redo [<N>] [--force] [--dry-run]", "", "Restores the state N snapshots after the current position (default 1).", "", RESTORE_FLAGS].join("\n"),
  options: RESTORE_OPTIONS,
  takesArguments: true,
  async run({ values, positionals }) {
    return runRestore({ kind: "redo", steps: steps(positionals, "git undo redo") }, values);
  },
};
