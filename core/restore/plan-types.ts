// The restore plan as data: what restoring a snapshot would change (refs, HEAD,
// files, index, stash), and what stops it. The planner (core/restore/plan.ts)
// fills it in; the CLI words it (cli/plan-words.ts).
import type { HeadState, ObjectId, OperationMarker, RefLine, Snapshot, SnapshotEntry, StashEntry, StateTree } from "../format/index.ts";
import type { KeptTag } from "../snapshots/keep-entry.ts";
import type { RefStoreName } from "../git-data/refs/store.ts";

/** The state being left: a recorded snapshot, or a capture not yet recorded (number null). */
export interface StateSide {
  number: number | null;
  tree: ObjectId;
  state: StateTree;
}

export type RefAction = "create" | "update" | "delete";

export interface RefMove {
  name: string;
  action: RefAction;
  /** The ref now (S), null when it does not exist. */
  old: RefLine | null;
  /** The ref in T, null when T lacks it. */
  new: RefLine | null;
  /** Subjects of the commits the ref leaves and reaches, when they are commits. */
  oldSubject?: string;
  newSubject?: string;
  /** A symbolic ref on either side: set with symbolic-ref after the transaction. */
  symbolic: boolean;
  /** A branch another worktree has checked out: left alone unless forced. */
  checkedOutIn?: string;
}

export interface HeadChange {
  old: HeadState;
  new: HeadState;
  /** Subject of the commit HEAD ends up on, when there is one. */
  newSubject?: string;
}

export type FileAction = "created" | "removed" | "changed";

export interface FileChange {
  /** The path as UTF-8 text (for display). */
  path: string;
  /** The path's bytes as Git printed them (for the file system). */
  raw: Uint8Array;
  action: FileAction;
  oldMode: string;
  newMode: string;
  oldObject: ObjectId;
  newObject: ObjectId;
  /** Lines added and removed; null for binary files and submodules. */
  added: number | null;
  removed: number | null;
}

export interface WorktreePlan {
  /** merge: files change; same: S and T record the same files; skipped: a side has no worktree record. */
  mode: "merge" | "same" | "skipped";
  /** Why files are left alone when skipped. */
  reason?: string;
  files: FileChange[];
  /**
   * Submodules the target does not have whose folders hold files: Git's merge
   * removes the gitlink but leaves the folder and everything in it on disk.
   */
  submodulesLeft: string[];
}

export interface IndexPlan {
  /** Index entries (stage 0) that differ between S and T. */
  entries: FileChange[];
  /** Conflicted paths now and in T. */
  conflictsNow: string[];
  conflictsAfter: string[];
}

export interface StashPlan {
  now: StashEntry[];
  after: StashEntry[];
  /** Entries T has that the stash now lacks (brought back), and entries that go. */
  added: StashEntry[];
  removed: StashEntry[];
}

/**
 * What stops a restore, as data: the CLI words it (cli/plan-words.ts). Every
 * blocker names the snapshot being restored (`target`) and the paths or refs
 * it is about (`names`).
 */
export type Blocker = { target: number; names: string[] } & (
  | /** An operation is in progress in the state being left (names: its markers). */ { kind: "operation" }
  | /** Objects the target needs are gone (names: what needs them; each with the object). */ { kind: "missing-objects"; missing: { what: string; object: ObjectId }[] }
  | /** Files no snapshot holds stand where the target creates files. */ { kind: "untracked-file" | "ignored-file" }
  | /**
     * A submodule's working tree (or another repository inside the working
     * tree) holds files where the target has a file or symlink: Git's merge
     * would delete the whole folder, its uncommitted work with it (names: the folders).
     */ { kind: "submodule-in-the-way" }
  | /** A file on disk differs from the state being left (changed while git-undo read it). */ { kind: "not-uptodate"; detail: string }
  | /** index.lock exists (names: its path). */ { kind: "index-lock" }
  | /** The target's HEAD branch is checked out in another worktree (names: the branch). */ { kind: "head-in-other-worktree"; worktree: string }
  | /** A revert: what the change touched has changed again (names: the refs and paths). */ { kind: "revert-conflict" }
  | /** The target has a file where the folder the user is in is (names: that path): Git would have to remove the folder. */ { kind: "current-directory" }
  | /** Refs of the target Git would refuse to write here (names: the refs; each with why). */ { kind: "ref-refused"; refs: RefProblem[] }
  | /**
     * Objects the index needs are gone: the blobs of conflicted entries (names:
     * the paths). --skip-missing cannot leave a part of the index out.
     */ { kind: "missing-conflict-blobs"; missing: { path: string; object: ObjectId }[] }
  | /**
     * A path of the target's files is longer than this system's paths can be, or
     * has a name longer than a file name can be (names: the path): a tree nested
     * thousands of folders deep. Git's merge would fail on it partway.
     */ { kind: "path-too-long"; part: "path" | "name"; bytes: number; depth: number; limit: number }
  | /**
     * The target's .gitmodules is one Git refuses to read (names: ".gitmodules"):
     * once written, Git dies on its next look at submodules, the restore's own diff first.
     */ { kind: "gitmodules-refused"; problem: GitmodulesProblem }
);

/** What Git refuses in a .gitmodules: a line it cannot parse, or a submodule setting it dies on. */
export type GitmodulesProblem =
  | { why: "unreadable" }
  | /** submodule.<name>.update: a command (Git runs those only from .git/config) or no strategy Git knows. */ { why: "update"; key: string; value: string | null }
  | /** submodule.<name>.fetchRecurseSubmodules: neither a boolean nor on-demand. */ { why: "fetch-recurse"; key: string; value: string };

/** Why Git would refuse to write a ref of the target (checked before anything moves). */
export type RefProblem =
  | /** A ref that stays (or is also written) is this ref's folder, or has it as its folder. */ { name: string; why: "conflict"; other: string }
  | /** Longer than the ref storage holds: a file name past 255 bytes, a reftable record past a block. */ { name: string; why: "too-long"; storage: RefStoreName }
  | /** A branch (refs/heads/) naming something other than a commit: Git writes only commits there. */ { name: string; why: "not-a-commit"; type: string }
  | /** A symbolic ref that would end up naming itself, through the refs in `loop`. */ { name: string; why: "loop"; loop: string[] };

/** A part of the target left as it is because objects it needs are gone (--skip-missing). */
export type NotRestored =
  | { kind: "ref"; name: string; object: ObjectId }
  | { kind: "head"; head: HeadState }
  | { kind: "stash"; entry: StashEntry };

export interface RestorePlan {
  from: StateSide;
  target: Snapshot;
  targetState: StateTree;
  /** The current state is not the latest snapshot: it is recorded as a change snapshot first. */
  recordFirst: boolean;
  refs: RefMove[];
  head: HeadChange | null;
  worktree: WorktreePlan;
  /** Null in a bare repository. */
  index: IndexPlan | null;
  stash: StashPlan | null;
  /** Operations in progress in the state being left. */
  operations: OperationMarker[];
  blockers: Blocker[];
  /** Tag objects pruned since, to write back from the target's keep entry before anything moves. */
  tagsToWrite: KeptTag[];
  /** With skipMissing: what stays as it is because its objects are gone. */
  notRestored: NotRestored[];
  /**
   * Files whose content now (the state being left) no snapshot before that
   * state holds: a file created outside Git and just added, a fresh edit. The
   * restore takes them off disk or changes them; only the state left (recorded
   * first when new) keeps them. Empty unless PlanOptions.earlier was given.
   */
  onlyLeft: string[];
}

export interface PlanOptions {
  /** --force: an operation in progress, or a branch checked out elsewhere, does not stop the restore. */
  force?: boolean;
  /** The caller holds index.lock itself (the restorer takes it before planning). */
  holdsIndexLock?: boolean;
  /**
   * Count the lines each file change adds and removes (default). A restore
   * leaves them out of the plan and has addLineCounts fill them in while it
   * works, since the merge does not need them.
   */
  lineCounts?: boolean;
  /**
   * --skip-missing: refs, HEAD and stash entries whose objects are gone stay as
   * they are (listed in notRestored) instead of refusing the whole restore.
   */
  skipMissing?: boolean;
  /** The snapshots before the state being left, oldest first: fills plan.onlyLeft. */
  earlier?: readonly SnapshotEntry[];
  /**
   * Leave plan.onlyLeft empty even with `earlier`: a restore has addOnlyLeft
   * fill it while it works, as only its report shows it.
   */
  deferOnlyLeft?: boolean;
  /**
   * A partial restore or a revert (core/compose.ts): it keeps the operation
   * markers, so an operation in progress stops it only when refs or HEAD move
   * (restoring a file mid-merge is what `git restore` does too).
   */
  partial?: boolean;
}
