// Expiry: delete snapshots older than an age, never the newest of a sequence.
import type { SnapshotEntry } from "./format.ts";
import { withLock } from "./lock.ts";
import type { Repo } from "./repo.ts";

/** The snapshots older than `ageSeconds` (null: none), oldest first, without the newest. */
export function expired(snaps: readonly SnapshotEntry[], ageSeconds: number | null, now = Date.now() / 1000): SnapshotEntry[] {
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
  await withLock(repo.undoDir, () =>
    repo.git.run(["update-ref", "--stdin"], { input: doomed.map((s) => `delete ${s.ref} ${s.commit}\n`).join("") }),
  );
  return doomed;
}
