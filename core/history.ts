// The snapshot sequence of a worktree: numbers, the position, the navigation
// streak, and the targets of undo and redo.
import { refuse, fatal } from "./errors.ts";
import { decodeMessage, isReadable, snapshotNumber, type Snapshot, type SnapshotEntry } from "./format.ts";
import type { Repo } from "./repo.ts";
import { scanUndoRefs, type SnapshotRef } from "./state.ts";

/** Decode the snapshot refs of one sequence, oldest first. Unreadable ones are kept, marked. */
export function decodeSnapshots(undoRefs: readonly SnapshotRef[], prefix: string): SnapshotEntry[] {
  const out: SnapshotEntry[] = [];
  for (const r of undoRefs) {
    const number = snapshotNumber(prefix, r.ref);
    if (number === null) continue;
    try {
      const message = decodeMessage(r.message, `snapshot #${number}`);
      out.push({ number, ref: r.ref, commit: r.commit, tree: r.tree, date: r.date, ...message });
    } catch (e) {
      out.push({ number, ref: r.ref, commit: r.commit, tree: r.tree, date: r.date, reason: (e as Error).message });
    }
  }
  return out.sort((a, b) => a.number - b.number);
}

/** This worktree's snapshots, oldest first. */
export async function listSnapshots(repo: Repo): Promise<SnapshotEntry[]> {
  return decodeSnapshots(await scanUndoRefs(repo, repo.snapshotPrefix), repo.snapshotPrefix);
}

/** The restore snapshots at the end of the sequence. */
export function streak(snaps: readonly SnapshotEntry[]): SnapshotEntry[] {
  let i = snaps.length;
  while (i > 0) {
    const s = snaps[i - 1]!;
    if (!isReadable(s) || s.trailers.kind !== "restore") break;
    i--;
  }
  return snaps.slice(i);
}

/**
 * The position: the latest snapshot's number, or, when the latest is a restore,
 * the number it restored. Null for an empty sequence.
 */
export function position(snaps: readonly SnapshotEntry[]): number | null {
  const latest = snaps[snaps.length - 1];
  if (!latest) return null;
  if (isReadable(latest) && latest.trailers.kind === "restore" && latest.trailers.restored !== undefined) {
    return latest.trailers.restored;
  }
  return latest.number;
}

/** Snapshots undo and redo can land on: readable ones outside the streak. */
export function candidates(snaps: readonly SnapshotEntry[]): Snapshot[] {
  const inStreak = new Set(streak(snaps).map((s) => s.number));
  return snaps.filter((s): s is Snapshot => isReadable(s) && !inStreak.has(s.number));
}

export type Direction = "undo" | "redo";

/** The snapshot `git undo N` (or `git undo redo N`) would restore; refuses when there are too few. */
export function navigationTarget(snaps: readonly SnapshotEntry[], direction: Direction, steps: number): Snapshot {
  const p = position(snaps);
  if (p === null) throw refuse(direction === "undo" ? "nothing to undo: no snapshots yet" : "nothing to redo");
  const all = candidates(snaps);
  const pool = direction === "undo" ? all.filter((s) => s.number < p).reverse() : all.filter((s) => s.number > p);
  const target = pool[steps - 1];
  if (!target) {
    const what = direction === "undo" ? "undo" : "redo";
    if (pool.length === 0) throw refuse(`nothing to ${what}`);
    throw refuse(`cannot ${what} ${steps} steps: only ${pool.length} ${pool.length === 1 ? "is" : "are"} available`);
  }
  return target;
}

/** Snapshot number n of the sequence, or a clear error. */
export function findSnapshot(snaps: readonly SnapshotEntry[], n: number): SnapshotEntry {
  const s = snaps.find((x) => x.number === n);
  if (!s) {
    const range = snaps.length ? ` (this worktree has #${snaps[0]!.number} to #${snaps[snaps.length - 1]!.number})` : "";
    throw fatal(`no snapshot #${n}${range}`);
  }
  return s;
}

/** Snapshot n, readable; the error names why it cannot be read. */
export function readableSnapshot(snaps: readonly SnapshotEntry[], n: number): Snapshot {
  const s = findSnapshot(snaps, n);
  if (!isReadable(s)) throw fatal(s.reason);
  return s;
}

/** Parse a snapshot number as the user typed it: `12` or `#12`. */
export function parseSnapshotNumber(arg: string): number | null {
  const m = /^#?(\d+)$/.exec(arg.trim());
  return m ? Number(m[1]) : null;
}
