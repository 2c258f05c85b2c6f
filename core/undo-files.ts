// Every file git-undo keeps in <gitdir>/undo/, named here and nowhere else.
// Each worktree has its own folder (the main worktree's is <common dir>/undo).
// Three kinds live there:
//   - state the hooks, the worker and the commands share: the marker init
//     writes, the pending mark, the worker's pid and log, capture.lock and
//     the owner of an index.lock a restore holds;
//   - caches, each read and written by one module only (named beside it),
//     which may be dropped at any time: the next recording rebuilds them;
//   - scratch folders (tmp-<owner>-XXXXXX, core/git-data/objects.ts), removed when the
//     process that made them ends, or by the next run when it was killed.
// The hooks (POSIX sh, hooks/hook.sh) cannot import this: they spell out the
// names of the marker, the pending mark, the worker's pid file and the probe.
import { mkdirSync, readdirSync, rmdirSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { checkRepositoryThere } from "./repository-gone.ts";

export const UNDO_FILES = {
  /** Written by init: the hooks record in this worktree while it exists (core/hooks/enabled.ts). */
  hooksEnabled: "hooks-enabled",
  /** Appended to by the hooks after every change, the pid of the Git process a line: a recording is due (worker/protocol.ts). */
  pending: "pending",
  /** The mark the worker is recording; a new `pending` made meanwhile means record again (worker/protocol.ts). */
  pendingTaken: "pending.taken",
  /** The live worker's pid (a hook's while it starts one); its time is the worker's lease (worker/protocol.ts). */
  workerPid: "worker.pid",
  /** Touched by a hook that started a worker, or one to check on worker.pid: once per lease (hooks/hook.sh). */
  probe: "probe",
  /** The worker's last messages (core/worker-files.ts). */
  workerLog: "worker.log",
  /** The worker's last failure, until a recording succeeds; the next command warns of it once (core/worker-files.ts). */
  recordingProblem: "recording-problem",
  /** That failure once a command has warned of it (kept for doctor). */
  recordingProblemShown: "recording-problem.shown",
  /** Held by whoever records or restores (core/lock.ts). */
  captureLock: "capture.lock",
  /** Who holds the index.lock a restore took (core/lock.ts). */
  indexLockOwner: "index-lock.owner",
  /** Who runs a ref transaction that takes packed-refs.lock: deleting snapshots, packing them (core/lock.ts). */
  refWriteOwner: "ref-write.owner",
  /**
   * The snapshots this worktree recorded, "<commit> <ref>" a line (core/snapshots/history.ts):
   * any other snapshot ref was fetched from elsewhere. Not a cache: without it
   * every snapshot counts as this worktree's own.
   */
  ownSnapshots: "own-snapshots",
  /** init added log.excludeDecoration=refs/undo/ (core/hooks/decorations.ts; in the common dir's folder). */
  excludedDecoration: "excluded-decoration",
  /** Cache: the committer identity and its config digest (core/snapshots/store.ts). */
  committer: "committer.json",
  /** Cache: the last state tree and its blobs (core/capture.ts). */
  stateBlobs: "state-blobs.json",
  /** Cache: HEAD's reflog entry a capture found with nothing else changed (a no-op `reset --hard`): old news to the next summary (core/snapshots/store.ts). */
  seenReflog: "seen-reflog.json",
  /** Cache: the last keep tree and its groups (core/snapshots/keep-entry.ts). */
  keepTree: "keep-tree.json",
  /** Cache: the snapshot commits already read, by id (core/git-data/refs/snapshot-commits.ts). */
  snapshotCommits: "snapshot-commits",
  /** Cache: state trees already validated (core/snapshots/history.ts). */
  validTrees: "valid-trees",
  /** Cache: what each tag the refs name peels to (core/git-data/refs/tag-peels.ts). */
  tagPeels: "tag-peels",
  /** Cache: the worktree index kept between recordings (core/git-data/index/kept.ts). */
  keptIndex: "worktree-index",
  /** Cache: what the kept index was made from (core/git-data/index/kept.ts). */
  keptIndexInfo: "worktree-index.json",
  /** How long the guard may wait, in its loop's ticks, as the worker read undo.guardTimeout (core/guard.ts). */
  guardTicks: "guard-ticks",
  /** The core.fsmonitorHookVersion init replaced when it registered the guard (core/guard.ts; in the common dir's folder). */
  guardReplacedHookVersion: "guard-replaced-hook-version",
  /**
   * The pid of a worker a guard waited its whole bound for, alive: later guards wait no longer than their quick looks
   * while worker.pid names it, until it reads a request again and removes the file (hooks/hook.sh, core/guard.ts; doctor reads it).
   */
  guardUnanswered: "guard-unanswered",
  /** Whether the worker's watch answers the guard, and why not (worker/tree-watch.ts; doctor reads it). */
  watchState: "watch-state",
} as const;

/** A guard's request is `guard.<pid of its shell>`; the worker's answer to it, `answer.<pid>` (core/guard.ts). */
export const GUARD_ANSWER_PREFIX = "answer.";
/** What a name in undo/ is to the guard: a request or an answer (`.tmp` while it is written), and the guard's pid; null for anything else. */
export function guardFile(name: string): { kind: "request" | "answer"; pid: number; tmp: boolean } | null {
  const m = /^(guard|answer)\.([1-9]\d{0,9})(\.tmp)?$/.exec(name);
  if (!m || (m[1] === "guard" && m[3])) return null;
  return { kind: m[1] === "guard" ? "request" : "answer", pid: Number(m[2]), tmp: m[3] !== undefined };
}

/** Whether `name` is a guard's request or answer. */
export const isGuardFile = (name: string): boolean => guardFile(name) !== null;

export type UndoFile = keyof typeof UNDO_FILES;

/** The path of one of git-undo's files in a worktree's undo folder. */
export const undoFile = (undoDir: string, name: UndoFile): string => join(undoDir, UNDO_FILES[name]);

/**
 * Make the undo folder inside its git dir, never the git dir itself: a worker
 * still running while its repository is deleted must not bring the folders
 * back (throws ENOENT then, as any write into a missing folder does).
 */
export function ensureUndoDir(undoDir: string): void {
  checkRepositoryThere();
  try {
    mkdirSync(undoDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
}

const CACHES = ["committer", "stateBlobs", "seenReflog", "keepTree", "snapshotCommits", "validTrees", "tagPeels", "keptIndexInfo"] as const satisfies readonly UndoFile[];

/** Drop every cache in one worktree's undo folder (uninstall; the next recording rebuilds them), the kept index among them. */
export function dropCaches(undoDir: string): void {
  for (const name of [...CACHES, "keptIndex"] as const) rmSync(undoFile(undoDir, name), { force: true });
}

/**
 * The files in <gitdir>/undo/ that git-undo writes as plain files: a folder,
 * a symbolic link, a FIFO or a socket at one of these names is not git-undo's
 * (made by hand, or planted): a FIFO there would hang whoever opens it.
 */
const PLAIN_FILES = [
  ...CACHES,
  "keptIndex",
  "ownSnapshots",
  "captureLock",
  "indexLockOwner",
  "refWriteOwner",
  "hooksEnabled",
  "pending",
  "pendingTaken",
  "workerPid",
  "probe",
  "workerLog",
  "recordingProblem",
  "recordingProblemShown",
  "guardTicks",
  "guardReplacedHookVersion",
  "watchState",
] as const satisfies readonly UndoFile[];

/** Left where it is by clearBrokenUndoFiles: without the marker the hooks are off, which `git undo init` puts right. */
const KEPT_BROKEN: readonly UndoFile[] = ["hooksEnabled"];

/** Something other than a plain file at one of git-undo's names. */
export interface BrokenUndoFile {
  name: UndoFile;
  path: string;
  kind: "folder" | "symbolic link" | "special file";
  /** A cache: git-undo works without it (only slower); otherwise the file has a job. */
  cache: boolean;
}

/** What is not a plain file among git-undo's files in `undoDir` (one readdir). */
export function brokenUndoFiles(undoDir: string): BrokenUndoFile[] {
  let entries;
  try {
    entries = readdirSync(undoDir, { withFileTypes: true });
  } catch {
    return [];
  }
  const byName = new Map(entries.map((e) => [e.name, e]));
  const broken: BrokenUndoFile[] = [];
  for (const name of PLAIN_FILES) {
    const e = byName.get(UNDO_FILES[name]);
    if (!e || e.isFile()) continue;
    const kind = e.isDirectory() ? "folder" : e.isSymbolicLink() ? "symbolic link" : "special file";
    broken.push({ name, path: undoFile(undoDir, name), kind, cache: (CACHES as readonly UndoFile[]).includes(name) || name === "keptIndex" });
  }
  return broken;
}

/**
 * Remove what stands at git-undo's names and is not a plain file: a link, a
 * FIFO or a socket (the link itself, never what it points at), an empty
 * folder. A folder with something in it stays (it may hold someone's files):
 * a cache there is not used, and doctor names it. Returns what stays.
 */
export function clearBrokenUndoFiles(undoDir: string): BrokenUndoFile[] {
  return brokenUndoFiles(undoDir).filter((b) => {
    if (KEPT_BROKEN.includes(b.name)) return false;
    try {
      if (b.kind === "folder") rmdirSync(b.path);
      else unlinkSync(b.path);
      return false;
    } catch {
      return true;
    }
  });
}
