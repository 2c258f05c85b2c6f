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
 * shows it. (RestoreRefused in core/plan.ts does the same for a restore's blockers.)
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
  /** Pathspecs typed outside the working tree. */
  | { kind: "pathspec-outside" }
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
  | { kind: "numbers-used-up"; ref: string };

export class Refused extends UndoError {
  constructor(
    readonly refusal: Refusal,
    kind: ErrorKind = "refused",
  ) {
    // What a log shows when nothing words it: the kind and its facts.
    super(`${refusal.kind} ${JSON.stringify(refusal)}`, kind);
    this.name = "Refused";
  }
}

/** A typed refusal (exit 1 unless `kind` says usage or fatal). */
export const refused = (refusal: Refusal, kind: ErrorKind = "refused"): Refused => new Refused(refusal, kind);
