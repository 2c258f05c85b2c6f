// @pure: runs no Git, so one run of the suite covers it (test/run, GIT_UNDO_TEST_SKIP_PURE).
// Numbers, position, streak and targets as pure functions (core/snapshots/history.ts),
// without Git: the clarifications' worked example of undo and redo, and the
// rules it rests on, as tables.
import { describe, expect, test } from "bun:test";
import { Refused, UndoError } from "../../core/errors.ts";
import { errorText } from "../../cli/refusal-words.ts";
import type { Snapshot, SnapshotEntry, SnapshotKind } from "../../core/format/index.ts";
import { candidates, navigationTarget, position, streak, type Direction } from "../../core/snapshots/history.ts";

/** A snapshot of state `tree` (the state's name stands for its tree). */
function snap(number: number, kind: SnapshotKind, tree: string, restored?: number, from?: number): Snapshot {
  const trailers: Snapshot["trailers"] = { format: 1, kind, head: "main" };
  if (restored !== undefined) trailers.restored = restored;
  if (from !== undefined) trailers.from = from;
  return { number, ref: `refs/undo/snapshots/${String(number).padStart(10, "0")}`, commit: `c${number}`, tree, date: number, summary: `#${number}`, trailers };
}

/** What `git undo` / `git undo redo` do to the sequence: restore the target, recorded as the next number. */
function step(snaps: SnapshotEntry[], direction: Direction): { target: number; snaps: SnapshotEntry[] } {
  const target = navigationTarget(snaps, direction, 1);
  const next = snaps[snaps.length - 1]!.number + 1;
  // From: the snapshot of the state left, the latest (record first keeps it so).
  return { target: target.number, snaps: [...snaps, snap(next, "restore", target.tree, target.number, next - 1)] };
}

describe("the worked example", () => {
  test("changes 1, 2, 3; undo, undo, redo, redo; new work; then undo walks back through everything", async () => {
    let snaps: SnapshotEntry[] = [snap(1, "change", "A"), snap(2, "change", "B"), snap(3, "change", "C")];
    expect(position(snaps)).toBe(3);
    const walk: [Direction, number, number, number][] = [
      // direction, target restored, number it is written as, position after
      ["undo", 2, 4, 2],
      ["undo", 1, 5, 1],
      ["redo", 2, 6, 2],
      ["redo", 3, 7, 3],
    ];
    for (const [direction, target, written, after] of walk) {
      const r = step(snaps, direction);
      expect([r.target, r.snaps.at(-1)!.number, position(r.snaps)]).toEqual([target, written, after]);
      snaps = r.snaps;
    }
    // From and Restored trailers as the example gives them for #4 and #5.
    expect((snaps[3] as Snapshot).trailers).toMatchObject({ restored: 2, from: 3 });
    expect((snaps[4] as Snapshot).trailers).toMatchObject({ restored: 1, from: 4 });
    snaps = [...snaps, snap(8, "change", "D")];
    expect(position(snaps)).toBe(8);
    expect(streak(snaps)).toEqual([]);
    const targets: number[] = [];
    let s = snaps;
    for (let i = 0; i < 7; i++) {
      const r = step(s, "undo");
      targets.push(r.target);
      s = r.snaps;
    }
    expect(targets).toEqual([7, 6, 5, 4, 3, 2, 1]);
    // #7 holds the state of 3.
    expect((snaps[6] as Snapshot).tree).toBe("C");
  });
});

describe("rules", () => {
  const base = [snap(1, "change", "A"), snap(2, "manual", "B"), snap(3, "change", "C")];
  test.each([
    ["no restore at the end", base, [], 3],
    ["one restore", [...base, snap(4, "restore", "B", 2, 3)], [4], 2],
    ["two restores", [...base, snap(4, "restore", "B", 2, 3), snap(5, "restore", "A", 1, 4)], [4, 5], 1],
  ] as const)("streak and position: %s", (_, snaps, inStreak, at) => {
    expect(streak([...snaps]).map((s) => s.number)).toEqual([...inStreak]);
    expect(position([...snaps])).toBe(at);
    expect(candidates([...snaps]).map((s) => s.number)).toEqual(base.map((s) => s.number));
  });

  test.each([
    ["undo", 1, 2],
    ["undo", 2, 1],
    ["redo", 1, null],
  ] as const)("from position 3, %s %i targets %p", (direction, steps, target) => {
    if (target === null) expect(() => navigationTarget(base, direction, steps)).toThrow(UndoError);
    else expect(navigationTarget(base, direction, steps).number).toBe(target);
  });

  test("too few steps: refused, saying how many there are", async () => {
    const thrown = (f: () => unknown): unknown => {
      try {
        f();
      } catch (e) {
        return e;
      }
      return null;
    };
    const tooFew = thrown(() => navigationTarget(base, "undo", 5));
    expect(tooFew instanceof Refused && tooFew.refusal).toEqual({ kind: "too-few-steps", direction: "undo", steps: 5, available: 2 });
    expect(errorText(tooFew)).toMatch(/only 2 are available/);
    expect(errorText(thrown(() => navigationTarget([], "undo", 1)))).toBe("nothing to undo: no snapshots yet");
  });
});
