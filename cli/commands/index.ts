// Every command the CLI knows, in the order `git undo --help` lists them.
// Each command's module loads only when it runs: a recording from the CLI
// should not pay for the picker's prompt library.
import type { Command } from "../command.ts";

export interface CommandEntry {
  name: string;
  aliases?: readonly string[];
  /** One line for `git undo --help`. */
  summary: string;
  /** Null in a part of the bundle without this command's code (core/bundled.ts). */
  load: (() => Promise<Command>) | null;
}

// Which commands' code this build holds: all of them in the sources and the
// whole bundle; only its own in a part (build/bundle.ts builds one for the
// commands people run most, with GIT_UNDO_PART set, and the bundler drops the
// others' code, as these are constants there).
const ALL = globalThis.GIT_UNDO_PART === undefined;
const RESTORE = ALL || globalThis.GIT_UNDO_PART === "restore";
const SNAPSHOT = ALL || globalThis.GIT_UNDO_PART === "snapshot";
const LIST = ALL || globalThis.GIT_UNDO_PART === "list";

export const COMMANDS: readonly CommandEntry[] = [
  { name: "undo", summary: "go back N snapshots (also plain 'git undo [N]')", load: RESTORE ? async () => (await import("./undo.ts")).undo : null },
  { name: "redo", summary: "go forward N snapshots again after git undo", load: RESTORE ? async () => (await import("./redo.ts")).redo : null },
  { name: "restore", summary: "restore the state of snapshot <n>", load: RESTORE ? async () => (await import("./restore.ts")).restore : null },
  { name: "revert", summary: "undo the change snapshot <n> recorded, keeping everything since", load: RESTORE ? async () => (await import("./revert.ts")).revert : null },
  { name: "pick", summary: "choose a state to restore, with a preview of what it changes", load: ALL ? async () => (await import("./pick.ts")).pick : null },
  { name: "snapshot", summary: "record the current state as a manual snapshot", load: SNAPSHOT ? async () => (await import("./snapshot.ts")).snapshot : null },
  { name: "list", aliases: ["log"], summary: "list snapshots, newest first (log -- <path>: those that changed it)", load: LIST ? async () => (await import("./list.ts")).list : null },
  { name: "show", summary: "show what a snapshot holds", load: ALL ? async () => (await import("./show.ts")).show : null },
  { name: "rescue", summary: "find work no ref or snapshot holds (dropped stashes, lost commits), bring it back", load: ALL ? async () => (await import("./rescue.ts")).rescue : null },
  { name: "diff", summary: "what snapshot <n> changed (or between two snapshots), in Git's diff format", load: ALL ? async () => (await import("./diff.ts")).diff : null },
  { name: "grep", summary: "search the files of snapshots for a pattern (--all: every snapshot)", load: ALL ? async () => (await import("./grep.ts")).grep : null },
  { name: "gc", summary: "delete snapshots older than undo.expire", load: ALL ? async () => (await import("./gc.ts")).gc : null },
  { name: "init", summary: "record automatically after every Git command (installs the hooks)", load: ALL ? async () => (await import("./init.ts")).init : null },
  { name: "uninstall", summary: "stop recording automatically (removes what init added)", load: ALL ? async () => (await import("./uninstall.ts")).uninstall : null },
  { name: "doctor", summary: "check that automatic recording is set up and would work", load: ALL ? async () => (await import("./doctor.ts")).doctor : null },
  { name: "completion", summary: "set up shell completion (install), where npm's install script did not", load: ALL ? async () => (await import("./completion.ts")).completion : null },
  { name: "watch", summary: "record edits made outside Git as they happen (Ctrl-C stops)", load: ALL ? async () => (await import("./watch.ts")).watch : null },
];

export function findCommand(name: string): CommandEntry | undefined {
  return COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
}
