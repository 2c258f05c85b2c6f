// Errors the CLI turns into one line and an exit code, the way Git does:
// 1 refused or nothing to do, 128 fatal, 129 usage.

export type ErrorKind = "refused" | "fatal" | "usage";

export const EXIT_CODE: Record<ErrorKind, number> = { refused: 1, fatal: 128, usage: 129 };

export class UndoError extends Error {
  constructor(
    message: string,
    readonly kind: ErrorKind = "fatal",
  ) {
    super(message);
    this.name = "UndoError";
  }
  get exitCode(): number {
    return EXIT_CODE[this.kind];
  }
}

export const refuse = (message: string): UndoError => new UndoError(message, "refused");
export const fatal = (message: string): UndoError => new UndoError(message, "fatal");
export const usage = (message: string): UndoError => new UndoError(message, "usage");

/**
 * Why the core refuses, as data, where the words name a command or an option
 * of the CLI: cli/refusal-words.ts words each kind once, for every place that
 * shows it. (RestoreRefused in core/restore/plan.ts does the same for a restore's blockers.)
 */
export type Refusal =
  /** core.hooksPath names something Git cannot run hooks from. */
  | { kind: "hooks-folder-unusable"; problem: string; origin: string | null }
  /** core.hooksPath points outside the repository, and init was not told to install there. */
  | { kind: "hooks-folder-outside"; dir: string; origin: string | null }
  /** A partial restore naming HEAD, the stash ref or one of git-undo's own refs as a ref to restore. */
  | { kind: "ref-not-by-name"; ref: string }
  /** Git cannot parse its configuration files. */
  | { kind: "config-unreadable"; where: string }
  /** Git refuses a configuration value; `scope` is where `git config` can edit it (null: the command line or the environment). */
  | { kind: "config-value"; key: string; value: string | null; scope: "local" | "global" | "system" | "worktree" | null; origin: string }
  /** `@{N}` or `@{-N}` where a date was wanted. */
  | { kind: "not-a-date"; arg: string }
  /** A date asked of a history that has no snapshot. */
  | { kind: "no-snapshots" }
  /** log -- <pathspec> run from a folder outside the working tree. */
  | { kind: "run-outside-tree" }
  /** rescue: the id is no object id, matches nothing lost, or is part of a stash entry. */
  | { kind: "rescue-not-an-id"; id: string }
  | { kind: "rescue-not-lost"; prefix: string }
  | { kind: "rescue-needs-path"; id: string }
  | { kind: "rescue-stash-part"; id: string; entry: string }
  /** rescue: a file would be written where something is. */
  | { kind: "rescue-path-exists"; path: string }
  /** rescue: the stash list has the entry already. */
  | { kind: "rescue-in-stash"; id: string }
  /** Something other than a plain file stands where git-undo keeps one of its files (`what`: its lock, or another). */
  | { kind: "undo-file-blocked"; path: string; is: string; what: "lock" | "file" }
  /** capture.lock held by a git-undo on another host sharing the repository. */
  | { kind: "lock-foreign"; path: string; host: string | null; pid: number | null }
  /** capture.lock still held by a live git-undo after the wait. */
  | { kind: "lock-busy"; path: string; pid: number | null }
  /** The snapshot numbers are used up: a ref at the highest name ends the sequence. */
  | { kind: "numbers-used-up"; ref: string }
  /** An age (undo.expire, gc --expire) in no form git-undo reads. */
  | { kind: "bad-age"; key: string; value: string }
  /** undo or redo with nowhere to go (`empty`: no snapshot at all). */
  | { kind: "nothing-to-step"; direction: "undo" | "redo"; empty: boolean; before?: number }
  | { kind: "too-few-steps"; direction: "undo" | "redo"; steps: number; available: number }
  /** A snapshot argument that is no number, or a date Git cannot read. */
  | { kind: "not-a-snapshot-number"; arg: string }
  | { kind: "not-a-git-date"; date: string }
  /** No snapshot at or before a date; `first` is the oldest one and its date (unix seconds). */
  | { kind: "none-at-date"; date: string; first: number; firstDate: number }
  /** init cannot install a hook: each file in the way and why. */
  | { kind: "hooks-in-the-way"; problems: HookProblem[] }
  /** A pathspec with magic other than `:/`, or outside the working tree. */
  | { kind: "pathspec-magic"; spec: string }
  | { kind: "pathspec-outside-tree"; spec: string }
  /** A -G pattern Git cannot compile, with Git's reason. */
  | { kind: "bad-regex"; pattern: string; reason: string }
  /** A partial restore naming a ref neither side has, or a path no file matches. */
  | { kind: "no-such-ref"; ref: string; number: number }
  | { kind: "pathspec-no-match"; spec: string; number: number }
  /** A partial restore of the index in a bare repository, or of files one side did not record. */
  | { kind: "bare-no-index" }
  | { kind: "files-not-recorded"; number: number | null; why: "no-work-tree" | "worktree-off" }
  /** revert of the oldest snapshot; a revert or partial restore that changes nothing (`what`: the description of what was asked). */
  | { kind: "revert-oldest"; number: number }
  | { kind: "nothing-to-change"; revert: boolean; number: number; what: string }
  /** A snapshot whose keep entry does not give back a tag it names. */
  | { kind: "keep-entry-damaged"; number: number; tag: string }
  /** A snapshot recording paths Git refuses to write. */
  | { kind: "paths-git-refuses"; number: number; paths: string[] }
  /** rescue: more than one lost object has the prefix; an id with a path that is no file's content; git-undo's own commit. */
  | { kind: "rescue-ambiguous"; prefix: string; ids: string[] }
  | { kind: "rescue-not-a-file"; id: string; is: "stash entry" | "commit" }
  | { kind: "rescue-own-commit"; id: string }
  /** rescue: the branch it would create exists or is no valid name. */
  | { kind: "rescue-branch-exists"; ref: string }
  | { kind: "rescue-bad-branch"; ref: string }
  /** rescue of a file where no file can be written and taken back. */
  | { kind: "rescue-no-files"; bare: boolean }
  /** rescue to a path Git would not write, or through something that is no folder. */
  | { kind: "rescue-bad-path"; path: string }
  | { kind: "rescue-not-a-folder"; path: string; is: "symbolic link" | "file" }
  /** No snapshot of that number; `range` is the lowest and highest there are (null: none). */
  | { kind: "no-such-snapshot"; number: number; range: [number, number] | null }
  /** A restore failed before changing anything (`disk-full`: no space left on the device). */
  | { kind: "restore-not-started"; cause: Error; diskFull: boolean }
  /** Git's --quit left an operation's markers behind. */
  | { kind: "operation-not-ended"; markers: string[] }
  /** A restore failed and was rolled back: nothing changed. */
  | { kind: "restore-rolled-back"; number: number; cause: Error }
  /** A restore failed and so did its rollback: `before` is the snapshot of the state before it. */
  | { kind: "rollback-failed"; number: number; cause: Error; failures: string[]; before: number | null };

/** A file init cannot install a hook at, and why. */
export interface HookProblem {
  path: string;
  why: "tracked" | "local-exists" | "not-regular" | "not-executable";
  /** The hook's name, for "local-exists". */
  hook?: string;
}

export class Refused extends UndoError {
  constructor(
    readonly refusal: Refusal,
    kind: ErrorKind = "refused",
  ) {
    // What a log shows when nothing words it: the kind and its facts.
    super(`${refusal.kind} ${refusalFacts(refusal)}`, kind);
    this.name = "Refused";
  }
}

/** A refusal's facts as JSON, a cause as its message: what a log keeps for the CLI to word later. */
export const refusalFacts = (refusal: Refusal): string => JSON.stringify(refusal, (_, v: unknown) => (v instanceof Error ? v.message : v));

/** An error's message as a log shows it (a refusal's kind and facts: the CLI words it, cli/refusal-words.ts). */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** A typed refusal (exit 1 unless `kind` says usage or fatal). */
export const refused = (refusal: Refusal, kind: ErrorKind = "refused"): Refused => new Refused(refusal, kind);

/** The file system is full (or the user's quota is): a system call's code, or Git's own message for it. */
export function noSpaceLeft(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code === "ENOSPC" || code === "EDQUOT" || (e instanceof Error && /No space left on device/i.test(e.message));
}
