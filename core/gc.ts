// Forgetting snapshots: the oldest beyond undo.limit after each recording, and
// those older than an age (`git undo gc`); never the newest of a sequence.
import type { SnapshotEntry } from "./format.ts";
import { GitError } from "./git.ts";
import { ownOnly } from "./history.ts";
import { asRefWriter, withLock } from "./lock.ts";
import { clearStaleSnapshotRefLocks, type SnapshotRef } from "./refs.ts";
import type { Repo } from "./repo.ts";

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
