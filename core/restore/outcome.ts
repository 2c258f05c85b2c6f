// What a restore leaves: the parts of the restore snapshot it wrote, how the
// recorded state differs from the target, the changes stepped over, and the
// ways back.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ObjectId, Snapshot, SnapshotEntry } from "../format/index.ts";
import { candidates, navigationTarget, position, type Direction } from "../snapshots/history.ts";
import { loadState } from "../snapshots/read-state.ts";
import { parseRawNumstat, refMoves, type RestorePlan } from "./plan.ts";
import type { IndexParts, LiveCapture } from "../capture.ts";
import type { Repo } from "../repo.ts";
import { captureIndex } from "../git-data/index/trees.ts";
import { MODE } from "../mode.ts";

import type { GoBack, PartDifference, SteppedChange } from "./types.ts";

/**
 * The index and working-tree parts of the state the restore left, known by
 * construction: the real index is T's, and the files are T's (S's when no
 * merge ran). Only a submodule's checkout is not moved by the merge; and a
 * merge that warned (a file it could not remove) or changed ignore rules or
 * attributes changes what a capture reads. Then the files are read again as a
 * capture reads them, so the snapshot says what is on disk.
 */
export async function partsAfter(repo: Repo, scratch: string, plan: RestorePlan, merged: boolean, readFilesAgain: boolean): Promise<IndexParts> {
  if (repo.bare) return {};
  const t = plan.targetState;
  const parts: IndexParts = {};
  if (t.index !== undefined) {
    parts.index = t.index;
    if (t.indexUnmerged) parts.indexUnmerged = t.indexUnmerged;
  } else if (plan.from.state.index !== undefined) {
    parts.index = plan.from.state.index;
    if (plan.from.state.indexUnmerged) parts.indexUnmerged = plan.from.state.indexUnmerged;
  }
  if (!repo.config.worktree) return parts;
  parts.worktree = merged ? t.worktree : plan.from.state.worktree;
  if (!merged) return parts;
  const gitlinks = plan.worktree.files.some((f) => f.oldMode === MODE.gitlink || f.newMode === MODE.gitlink);
  if (!readFilesAgain && !gitlinks) return parts;
  const dir = join(scratch, "after");
  mkdirSync(dir, { recursive: true });
  parts.worktree = (await captureIndex(repo, dir, { worktree: true, lockHeld: true })).worktree;
  return parts;
}

/** Whether two state trees differ only in the `state` entry (the operation markers). */
export async function sameButMarkers(repo: Repo, a: ObjectId, b: ObjectId): Promise<boolean> {
  if (a === b) return true;
  const out = await repo.git.records(["diff-tree", "-z", "--name-only", a, b]);
  return out.every((p) => p === "state");
}

/** Which parts of the restore snapshot differ from the target, for the report. */
export async function differences(repo: Repo, target: Snapshot, recorded: LiveCapture): Promise<PartDifference[]> {
  const out = await repo.git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", target.tree, recorded.tree]);
  const parts = new Map<string, string[]>();
  const add = (part: string, name?: string) => {
    const list = parts.get(part) ?? [];
    if (name !== undefined && !list.includes(name)) list.push(name);
    parts.set(part, list);
  };
  for (const c of parseRawNumstat(out.stdout)) {
    const slash = c.path.indexOf("/");
    const part = slash < 0 ? c.path : c.path.slice(0, slash);
    if (part === "index-blobs") continue;
    if (slash < 0) add(part);
    else add(part, c.path.slice(slash + 1) + (c.oldMode === MODE.gitlink || c.newMode === MODE.gitlink ? " (submodule checkout)" : ""));
  }
  if (parts.has("refs")) {
    const t = await loadState(repo, target.tree, `snapshot #${target.number}`);
    parts.set(
      "refs",
      refMoves(t.refs, recorded.state.refs).map((m) => m.name),
    );
  }
  return [...parts].map(([part, names]) => ({ part, names }));
}

/**
 * The changes between the position and the target: undone (newest first) or
 * done again (oldest first). `pendingTree`: the state not yet recorded, which
 * `snaps` ends with as a provisional snapshot (number null in the answer).
 */
export function steppedOver(snaps: readonly SnapshotEntry[], direction: Direction, target: Snapshot, pendingTree: ObjectId | null): SteppedChange[] {
  const p = position(snaps);
  if (p === null) return [];
  const pendingNumber = pendingTree === null ? null : snaps[snaps.length - 1]?.number;
  const over = candidates(snaps).filter((s) => (direction === "undo" ? s.number > target.number && s.number <= p : s.number > p && s.number <= target.number));
  if (direction === "undo") over.reverse();
  return over.map((s) => (s.number === pendingNumber ? { number: null, summary: "" } : { number: s.number, summary: s.summary }));
}

/**
 * The ways back a restore of `target` from the state `from` will offer once
 * done (goBack), worked out before it runs, for a dry run and the picker's
 * preview: on the sequence as it will be then, the state left recorded first
 * when it is new, and the restore's own snapshot after it (a change for a
 * partial restore or a revert).
 */
export function waysBack(snaps: readonly SnapshotEntry[], from: { number: number | null; tree: ObjectId }, target: Snapshot, composed: boolean): GoBack[] {
  const sequence = [...snaps];
  const next = () => (sequence[sequence.length - 1]?.number ?? 0) + 1;
  const provisional = (number: number, tree: ObjectId, trailers: Partial<Snapshot["trailers"]>): Snapshot => ({
    number,
    ref: "",
    commit: "",
    tree,
    date: 0,
    summary: "",
    trailers: { format: 1, kind: "change", head: "", ...trailers },
  });
  let left = from.number;
  if (left === null) {
    left = next();
    sequence.push(provisional(left, from.tree, { kind: "change" }));
  }
  sequence.push(provisional(next(), target.tree, composed ? { kind: "change" } : { kind: "restore", restored: target.number, from: left }));
  return goBack(sequence, left);
}

/** How to get back to the state left: redo or undo when one step lands on it, and restore always. */
export function goBack(snaps: readonly SnapshotEntry[], from: number | null): GoBack[] {
  const left = snaps.find((s) => s.number === from);
  if (!left) return [];
  const ways: GoBack[] = [];
  for (const command of ["redo", "undo"] as const) {
    try {
      if (navigationTarget(snaps, command, 1).tree === left.tree) {
        ways.push({ command });
        break;
      }
    } catch {
      /* nothing that way */
    }
  }
  ways.push({ command: "restore", number: left.number });
  return ways;
}
