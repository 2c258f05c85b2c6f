// Forgetting snapshots: the oldest beyond undo.limit after each recording,
// those older than an age (`git undo gc`), never the newest of a sequence;
// and those that need objects the repository lost (`git undo gc`).
import type { ObjectId, Snapshot, SnapshotEntry } from "../format/index.ts";
import { GitError } from "../git.ts";
import { missingSnapshotObjects, ownOnly } from "./history.ts";
import { asRefWriter, withLock } from "../lock.ts";
import type { SnapshotRef } from "../git-data/refs/index.ts";
import { clearStaleSnapshotRefLocks } from "../git-data/refs/locks.ts";
import type { Repo } from "../repo.ts";
import { dropCaches } from "../undo-files.ts";

/** The snapshots this worktree recorded older than `ageSeconds` (null: none), oldest first, without its newest. */
export function expired(all: readonly SnapshotEntry[], ageSeconds: number | null, now = Date.now() / 1000): SnapshotEntry[] {
  // Only this worktree's own: fetched snapshots are its owner's to expire, not ours.
  const snaps = ownOnly(all);
  if (ageSeconds === null || snaps.length === 0) return [];
  const cutoff = now - ageSeconds;
  return snaps.slice(0, -1).filter((s) => s.date < cutoff || ageSeconds === 0);
}

/** Delete expired snapshots in one transaction; returns what was (or would be) deleted. */
export async function expireSnapshots(
  repo: Repo,
  snaps: readonly SnapshotEntry[],
  ageSeconds: number | null,
  opts: { dryRun?: boolean } = {},
): Promise<SnapshotEntry[]> {
  const doomed = expired(snaps, ageSeconds);
  if (doomed.length === 0 || opts.dryRun) return doomed;
  await withLock(repo.undoDir, () => deleteSnapshots(repo, doomed));
  return doomed;
}

/**
 * Delete snapshot refs in one transaction, each only while it still names the
 * commit it was read with. The caller holds capture.lock. When Git refuses,
 * locks a killed git-undo left on this sequence's refs are removed and it is
 * tried once more; then Git's error is thrown (a lock of the user's Git, such
 * as packed-refs.lock, stays where it is).
 */
export async function deleteSnapshots(repo: Repo, doomed: readonly Pick<SnapshotRef, "ref" | "commit">[]): Promise<void> {
  if (doomed.length === 0) return;
  const input = doomed.map((s) => `delete ${s.ref} ${s.commit}\n`).join("");
  const run = () => asRefWriter(repo.undoDir, () => repo.git.run(["update-ref", "--stdin"], { input }));
  try {
    await run();
  } catch (e) {
    if (!(e instanceof GitError) || clearStaleSnapshotRefLocks(repo).length === 0) throw e;
    await run();
  }
}

/**
 * The snapshots undo.limit lets go of once `sequence` (oldest first, the new
 * snapshot last) exists: the oldest beyond the limit, never the newest.
 */
export function beyondLimit<T>(sequence: readonly T[], limit: number): T[] {
  return sequence.slice(0, Math.max(0, Math.min(sequence.length - 1, sequence.length - limit)));
}

/** What `git undo gc` does about snapshots that need objects the repository lost. */
export interface DamagedDrop {
  /** The snapshots of this sequence (fetched ones too) that need a missing object: deleted, or to be. */
  doomed: SnapshotEntry[];
  /** The objects missing. */
  missing: ObjectId[];
  /** The newest of our own is among them: the current state is (or would be) recorded first, so that numbers keep growing. */
  newestDamaged: boolean;
  /** That snapshot of the current state, once recorded. */
  recordedFirst: Snapshot | null;
  /** Whether the current state itself needs a missing object (its index names one): then Git's gc still fails on it. */
  currentDamaged: boolean;
}

/**
 * A recording with capture.lock held (core/record.ts recordLocked), given by
 * the caller: the recorder's store deletes snapshots through this module, so
 * this module does not import the recorder.
 */
export type RecordLocked = (repo: Repo, opts: { kind: "manual"; message: string; always: true }) => Promise<{ created: true; snapshot: Snapshot } | { created: false }>;

/**
 * Delete every snapshot of `snaps` (this worktree's sequence) that needs an
 * object the repository lost (a disk fault, a pack deleted by hand): Git's
 * gc, repack, maintenance and fsck all fail on such a ref, and no restore of
 * it can succeed. The others stay. Fetched ones too, for Git fails on them
 * just the same. The newest of our own is never simply deleted (numbers only
 * grow): when it is damaged, the current state is recorded first, with every
 * cache dropped so that no blob is taken as stored because a damaged
 * snapshot named it (by `recordLocked`), and the damaged one deleted after it.
 */
export async function dropDamagedSnapshots(repo: Repo, snaps: readonly SnapshotEntry[], recordLocked: RecordLocked, opts: { dryRun?: boolean } = {}): Promise<DamagedDrop> {
  const { missing, needing } = await missingSnapshotObjects(repo, snaps);
  const doomed = snaps.filter((s) => needing.has(s.commit));
  const newest = ownOnly(snaps).at(-1);
  const newestDamaged = newest !== undefined && needing.has(newest.commit);
  const drop: DamagedDrop = { doomed, missing, newestDamaged, recordedFirst: null, currentDamaged: false };
  if (doomed.length === 0 || opts.dryRun) return drop;
  return withLock(repo.undoDir, async () => {
    if (newestDamaged) {
      dropCaches(repo.undoDir);
      const made = await recordLocked(repo, { kind: "manual", message: `recorded by git undo gc before deleting #${newest.number}, which needs a missing object`, always: true });
      if (made.created) {
        drop.recordedFirst = made.snapshot;
        drop.currentDamaged = (await missingSnapshotObjects(repo, [made.snapshot])).missing.length > 0;
      }
    }
    await deleteSnapshots(repo, doomed);
    return drop;
  });
}
