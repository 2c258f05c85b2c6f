// What a restore is asked, what it answers, and what its steps share.
import type { OperationMarker, Snapshot } from "../format/index.ts";
import type { Direction } from "../snapshots/history.ts";
import type { RestorePlan } from "./plan.ts";
import type { Repo } from "../repo.ts";
import type { ComposedTarget, PartialSelection } from "../compose.ts";
import type { RescueTarget } from "../find/rescue.ts";

import type { Journal } from "./journal.ts";

export type RestoreRequest =
  | { kind: Direction; steps: number }
  | { kind: "restore"; number: number }
  /** Parts of snapshot `number` over the current state (core/compose.ts). */
  | { kind: "partial"; number: number; selection: PartialSelection }
  /** The current state without the change snapshot `number` recorded. */
  | { kind: "revert"; number: number }
  /** The current state with lost work added back (core/find/rescue.ts). */
  | { kind: "rescue"; rescue: RescueTarget };

export interface RestoreOptions {
  force?: boolean;
  dryRun?: boolean;
  /** Restore what can be, leaving refs, HEAD and stash entries whose objects are gone (plan.notRestored). */
  skipMissing?: boolean;
  /** How the process running the restore keeps it from being cut short (the CLI's: cli/io.ts); none: nothing held. */
  guard?: ProcessGuard;
}

/** What the process running a restore does for it: the core asks, the entry point knows the process. */
export interface ProcessGuard {
  /** Hold off interruptions (Ctrl-C, a terminal closing) until the returned function is called: a half-done restore is worse than a late one. */
  holdInterruptions(): () => void;
  /** Run `fn` if the process exits before the returned function is called (index.lock released). */
  atExit(fn: () => void): () => void;
}

export const STEPS = ["record-first", "refs", "symbolic-refs", "head", "worktree", "index", "stash", "record"] as const;

export type Step = (typeof STEPS)[number];

/** A part of the restore snapshot's tree that differs from the target's. */
export interface PartDifference {
  /** Top-level entry of the state tree: refs, HEAD, worktree, index, state, ... */
  part: string;
  /** Paths (worktree, index) or ref names within it; submodules marked. */
  names: string[];
}

export interface RestoreResult {
  plan: RestorePlan;
  dryRun: boolean;
  /** The change snapshot recorded first (the user's unrecorded state). */
  recordedFirst: Snapshot | null;
  /** Operations ended with --force. */
  endedOperations: OperationMarker[];
  /** The restore snapshot (null on a dry run). */
  restoreSnapshot: Snapshot | null;
  /** Where the state after the restore differs from the target. */
  differences: PartDifference[];
  /** The ways back to the state left: redo or undo when one step lands on it, and restore of its number (on a dry run, those the restore would offer). */
  goBack: GoBack[];
  /** The state the run of restores this one ends left, when that is not the state this one left (core/snapshots/history.ts streakOrigin); null otherwise. */
  before: number | null;
  /**
   * `git undo`: the changes it undid, newest first; `git undo redo`: the ones
   * it did again, oldest first. Empty for `git undo restore`. A change not yet
   * recorded on a dry run has number null and an empty summary.
   */
  stepped: SteppedChange[];
  /** What was asked: undo, redo, restore, a partial restore or a revert. */
  kind: RestoreRequest["kind"];
  /** The folder the user is in, which the restore emptied and kept (path from the top). */
  keptFolder: string | null;
  /** A partial restore or a revert: what it brings back (`src/a.c from #12`, `#17`) and what it records. */
  composed?: { description: string; summary: string; branchAlone?: ComposedTarget["branchAlone"] };
}

/** One way back to the state a restore left. */
export type GoBack = { command: "redo" | "undo" } | { command: "restore"; number: number };

/** A change `git undo` undid or `git undo redo` did again. */
export interface SteppedChange {
  number: number | null;
  summary: string;
}

/** What every step shares: the plan, the journal, and the reflog messages of the restore and of its rollback. */
export interface StepContext {
  repo: Repo;
  plan: RestorePlan;
  journal: Journal;
  message: string;
  back: string;
  /** Wraps an undo so that it first gives back the space set aside for the rollback. */
  withSpace: (undo: () => Promise<void>) => () => Promise<void>;
}

/** What the working-tree step tells the rest of the restore. */
export interface WorktreeOutcome {
  /** The files must be read again for the restore snapshot (the merge warned, or a rule file such as .gitignore changed). */
  readFilesAgain: boolean;
  /** The folder the user is in, emptied by the restore and kept (Git never removes the current directory). */
  keptFolder: string | null;
}
