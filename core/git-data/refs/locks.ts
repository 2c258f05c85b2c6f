// The ref storage's locks: the lock files a killed Git (or git-undo) leaves
// on a ref, on the packed refs or on reftable's table list, which block the
// writes that need them until they are removed. Listed for doctor, and the
// ones that are git-undo's for sure removed before a recording.
import { lstatSync, readdirSync, unlinkSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { forgetRefWriter, killedRefWriteStart } from "../../lock.ts";
import type { Repo } from "../../repo.ts";
import { PER_WORKTREE, walkRefFiles } from "./index.ts";
import { refStoreOf } from "./store.ts";

/**
 * A lock file in Git's ref storage: on one ref (`<ref>.lock`, files storage),
 * on the packed refs (`packed-refs.lock`: every ref deletion takes it), or on
 * reftable's list of tables (`reftable/tables.list.lock`: every ref write
 * takes it). Git holds one for milliseconds; one left by a killed Git blocks
 * the writes that need it until it is removed.
 */
export interface RefLock {
  path: string;
  kind: "ref" | "packed-refs" | "reftable";
  /** The ref a ref's lock is for. */
  ref: string | null;
  /** Since its last change (ms). */
  ageMs: number;
}

/**
 * A lock in the ref storage left alone this long is no live Git's: Git holds
 * one for the length of a transaction, and waits 1 s (core.packedRefsTimeout)
 * for packed-refs.lock before it gives up.
 */
export const STALE_REF_LOCK_MS = 10_000;

/**
 * packed-refs.lock (or reftable's tables.list.lock) is taken for git-undo's
 * when it was made within this long after a ref transaction of git-undo's that
 * was killed had started: Git takes it at the start of a transaction.
 */
const KILLED_WRITE_WINDOW_MS = 5_000;

const ageOf = (path: string, now: number): number | null => {
  try {
    const st = lstatSync(path);
    return st.isFile() ? now - st.mtimeMs : null;
  } catch {
    return null;
  }
};

/** The repository-wide locks: packed-refs.lock, reftable's tables.list.lock. */
function storageLocks(repo: Repo, now: number): RefLock[] {
  const found: RefLock[] = [];
  for (const [kind, path] of [["packed-refs", join(repo.commonDir, "packed-refs.lock")], ["reftable", join(repo.commonDir, "reftable", "tables.list.lock")]] as const) {
    const ageMs = ageOf(path, now);
    if (ageMs !== null) found.push({ path, kind, ref: null, ageMs });
  }
  return found;
}

/** Every lock file in the ref storage now: on refs (under refs/, this worktree's own ones included), packed-refs, reftable's table list. */
export function refLocks(repo: Repo, now = Date.now()): RefLock[] {
  const found: RefLock[] = [];
  const visit = (base: string, rel: string, e: Dirent) => {
    if (!e.name.endsWith(".lock")) return;
    const ageMs = ageOf(join(base, rel), now);
    if (ageMs !== null) found.push({ path: join(base, rel), kind: "ref", ref: rel.slice(0, -".lock".length), ageMs });
  };
  walkRefFiles(repo.commonDir, "refs", visit);
  if (repo.worktreeName !== null) for (const dir of PER_WORKTREE) walkRefFiles(repo.gitDir, dir, visit);
  return [...found, ...storageLocks(repo, now)];
}

/**
 * Remove the stale locks on this worktree's snapshot refs (a storage with
 * lock files per ref, RefStore.refLockFiles):
 * `.lock` files in its snapshot folder left alone for STALE_REF_LOCK_MS. Only
 * git-undo writes there, always holding capture.lock, which the caller holds:
 * such a lock is a killed git-undo's (or a killed fetch's of snapshot refs).
 * Returns the paths removed.
 */
export function clearStaleSnapshotRefLocks(repo: Repo, now = Date.now()): string[] {
  if (!refStoreOf(repo).refLockFiles) return [];
  const dir = join(repo.commonDir, repo.snapshotPrefix);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.endsWith(".lock")) continue;
    const path = join(dir, name);
    const age = ageOf(path, now);
    if (age === null || age < STALE_REF_LOCK_MS) continue;
    try {
      unlinkSync(path);
      removed.push(path);
    } catch {
      /* gone already */
    }
  }
  return removed;
}

/**
 * After a ref transaction of git-undo's was killed (core/lock.ts asRefWriter):
 * remove the stale locks on snapshot refs, and packed-refs.lock or reftable's
 * tables.list.lock when it is git-undo's for sure: made within
 * KILLED_WRITE_WINDOW_MS of that transaction's start (no Git of the user's
 * could have taken it while ours held it) and left alone since for
 * STALE_REF_LOCK_MS. One a user's Git made, or one still changing, stays
 * (doctor names it). The caller holds capture.lock. Returns the paths removed.
 */
export function clearKilledRefWrite(repo: Repo, now = Date.now()): string[] {
  const started = killedRefWriteStart(repo.undoDir);
  if (started === null) return [];
  const removed = clearStaleSnapshotRefLocks(repo, now);
  for (const lock of killedWriteLocks(repo, started, now)) {
    // Ours, but perhaps the Git we started outlived us by a moment: decide next time.
    if (lock.ageMs < STALE_REF_LOCK_MS) return removed;
    try {
      unlinkSync(lock.path);
      removed.push(lock.path);
    } catch {
      /* gone already */
    }
  }
  forgetRefWriter(repo.undoDir);
  return removed;
}

/**
 * packed-refs.lock and tables.list.lock when a ref transaction of git-undo's
 * that started at `started` (default: the killed one core/lock.ts knows of)
 * made them: made within KILLED_WRITE_WINDOW_MS of its start.
 */
export function killedWriteLocks(repo: Repo, started = killedRefWriteStart(repo.undoDir), now = Date.now()): RefLock[] {
  if (started === null) return [];
  return storageLocks(repo, now).filter((lock) => {
    const madeMs = now - lock.ageMs;
    return madeMs >= started - 1000 && madeMs <= started + KILLED_WRITE_WINDOW_MS;
  });
}

/** Whether the next recording removes `lock` once it is stale (clearStaleSnapshotRefLocks): a lock on one of this worktree's snapshot refs. */
export const recordingRemoves = (repo: Repo, lock: RefLock): boolean =>
  lock.kind === "ref" && refStoreOf(repo).refLockFiles && lock.ref!.startsWith(repo.snapshotPrefix);
