// Every command the CLI knows, in the order `git undo --help` lists them.
// Each command's module loads only when it runs: a recording from the CLI
// should not pay for the picker's prompt library.
import type { Command } from "../command.ts";

export interface CommandEntry {
  name: string;
  aliases?: readonly string[];
  /** One line for `git undo --help`. */
  summary: string;
  load(): Promise<Command>;
}

export const COMMANDS: readonly CommandEntry[] = [
  { name: "undo", summary: "go back N snapshots (also plain 'git undo [N]')", load: async () => (await import("./undo.ts")).undo },
  { name: "redo", summary: "go forward N snapshots again after git undo", load: async () => (await import("./redo.ts")).redo },
  { name: "restore", summary: "restore the state of snapshot <n>", load: async () => (await import("./restore.ts")).restore },
  { name: "revert", summary: "undo the change snapshot <n> recorded, keeping everything since", load: async () => (await import("./revert.ts")).revert },
  { name: "pick", summary: "choose a state to restore, with a preview of what it changes", load: async () => (await import("./pick.ts")).pick },
  { name: "snapshot", summary: "record the current state as a manual snapshot", load: async () => (await import("./snapshot.ts")).snapshot },
  { name: "list", aliases: ["log"], summary: "list snapshots, newest first (log -- <path>: those that changed it)", load: async () => (await import("./list.ts")).list },
  { name: "show", summary: "show what a snapshot holds", load: async () => (await import("./show.ts")).show },
  { name: "rescue", summary: "find work no ref or snapshot holds (dropped stashes, lost commits), bring it back", load: async () => (await import("./rescue.ts")).rescue },
  { name: "diff", summary: "what snapshot <n> changed (or between two snapshots), in Git's diff format", load: async () => (await import("./diff.ts")).diff },
  { name: "grep", summary: "search the files of snapshots for a pattern (--all: every snapshot)", load: async () => (await import("./grep.ts")).grep },
  { name: "gc", summary: "delete snapshots older than undo.expire", load: async () => (await import("./gc.ts")).gc },
  { name: "init", summary: "record automatically after every Git command (installs the hooks)", load: async () => (await import("./init.ts")).init },
  { name: "uninstall", summary: "stop recording automatically (removes what init added)", load: async () => (await import("./uninstall.ts")).uninstall },
  { name: "doctor", summary: "check that automatic recording is set up and would work", load: async () => (await import("./doctor.ts")).doctor },
  { name: "watch", summary: "record edits made outside Git as they happen (Ctrl-C stops)", load: async () => (await import("./watch.ts")).watch },
];

export function findCommand(name: string): CommandEntry | undefined {
  return COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
}
