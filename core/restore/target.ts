// What a restore request restores: a snapshot of the sequence (undo, redo,
// restore N), or a target composed over the state now (a partial restore, a
// revert, a rescue), and the blocker a revert's conflicts make.
import { refused } from "../errors.ts";
import type { Snapshot, SnapshotEntry } from "../format/index.ts";
import { navigationTarget, readableSnapshot } from "../snapshots/history.ts";
import type { LiveCapture } from "../capture.ts";
import type { Repo } from "../repo.ts";
import { composePartial, composeRevert, type ComposedTarget, type CurrentState, type RevertConflict } from "../compose.ts";
import { composeRescue } from "../find/rescue.ts";
import type { Blocker } from "./plan.ts";
import type { RestoreRequest } from "./types.ts";

/** A snapshot as it would be if the capture were recorded now (for counting targets). */
export function pending(capture: LiveCapture): Snapshot {
  const latest = capture.latest;
  return {
    number: (latest?.number ?? 0) + 1,
    ref: "",
    commit: "",
    tree: capture.tree,
    date: Math.floor(Date.now() / 1000),
    summary: "",
    trailers: { format: 1, kind: "change", head: "" },
  };
}

export function resolveTarget(snaps: readonly SnapshotEntry[], request: RestoreRequest): Snapshot {
  if (request.kind === "rescue") throw new Error("a rescue is a composed target");
  return "steps" in request ? navigationTarget(snaps, request.kind, request.steps) : readableSnapshot(snaps, request.number);
}

/** The snapshot a change snapshot's change started from: a restore's `from`, else the one before it. */
function changeBase(snaps: readonly SnapshotEntry[], change: Snapshot): Snapshot {
  const from = change.trailers.kind === "restore" ? change.trailers.from : undefined;
  if (from !== undefined && snaps.some((s) => s.number === from)) return readableSnapshot(snaps, from);
  const i = snaps.findIndex((s) => s.number === change.number);
  if (i <= 0) throw refused({ kind: "revert-oldest", number: change.number });
  return readableSnapshot(snaps, snaps[i - 1]!.number);
}

/** The target of a partial restore or a revert, built over the state `now`. */
export async function composeTarget(repo: Repo, scratch: string, request: RestoreRequest, snaps: readonly SnapshotEntry[], now: CurrentState): Promise<ComposedTarget | null> {
  if (request.kind === "partial") return composePartial(repo, scratch, now, readableSnapshot(snaps, request.number), request.selection);
  if (request.kind === "rescue") return composeRescue(repo, scratch, now, snaps, request.rescue);
  if (request.kind !== "revert") return null;
  const change = readableSnapshot(snaps, request.number);
  return composeRevert(repo, scratch, now, change, changeBase(snaps, change));
}

/** A revert's conflicts as the blocker that refuses it. */
export function revertBlocker(number: number, conflicts: readonly RevertConflict[]): Blocker {
  const names = conflicts.map((c) =>
    c.kind === "ref" ? c.name : c.kind === "head" ? "HEAD" : c.kind === "conflicts" ? "the index's conflicts" : c.part === "index" ? `${c.path} (staged)` : c.path,
  );
  return { kind: "revert-conflict", target: number, names };
}
