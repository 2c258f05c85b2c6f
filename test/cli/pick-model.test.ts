// @pure: runs no Git, so one run of the suite covers it (test/run, GIT_UNDO_TEST_SKIP_PURE).
// The picker's parts that need no terminal: the list model (order, position,
// filter, moves) and the preview scheduler (lazy, cached, one at a time).
import { expect, test } from "bun:test";
import type { SnapshotEntry } from "../../core/format/index.ts";
import { LazyCache } from "../../cli/pick/lazy.ts";
import type { LostItem } from "../../core/find/lost.ts";
import { contentQuery, lostRowsOf, PickModel, rowsOf } from "../../cli/pick/model.ts";
import { renderFrame, type View } from "../../cli/pick/render.ts";
import { fit } from "../../cli/pick/text.ts";
import { fixedPalette } from "../../cli/ui.ts";

function snap(number: number, summary: string, head = "main", kind: "change" | "manual" | "restore" = "change"): SnapshotEntry {
  return {
    number,
    ref: `refs/undo/snapshots/${String(number).padStart(10, "0")}`,
    commit: "c".repeat(40),
    tree: "t".repeat(40),
    date: 1_700_000_000 + number,
    summary,
    trailers: { format: 1, kind, head },
  } as SnapshotEntry;
}

const snaps = [snap(1, "commit: one"), snap(2, "commit: parser fix", "feature"), snap(3, "edited: a.c"), snap(4, "restore #2", "feature", "restore")];

test("rows are newest first and the cursor starts just below the position", async () => {
  // Position 2 (the latest is a restore of #2): the cursor starts on #1, what `git undo` would pick.
  const m = new PickModel(rowsOf(snaps, 2));
  expect(m.rows.map((r) => r.number)).toEqual([4, 3, 2, 1]);
  expect(m.rows.filter((r) => r.current).map((r) => r.number)).toEqual([2]);
  expect(m.highlighted()?.number).toBe(1);
});

test("the filter matches number, summary, branch and changed paths; every word must match", async () => {
  const m = new PickModel(rowsOf(snaps, 3));
  m.setFilter("parser");
  expect(m.visible.map((r) => r.number)).toEqual([2]);
  m.setFilter("#3");
  expect(m.visible.map((r) => r.number)).toEqual([3]);
  // #2 is snapshot 2, not #4 whose summary says "restore #2".
  m.setFilter("#2");
  expect(m.visible.map((r) => r.number)).toEqual([2]);
  m.setFilter("restore #2");
  expect(m.visible).toEqual([]);
  m.setFilter("feature");
  expect(m.visible.map((r) => r.number)).toEqual([4, 2]);
  m.setFilter("feature fix");
  expect(m.visible.map((r) => r.number)).toEqual([2]);
  m.setFilter("src/lexer.c");
  expect(m.visible).toEqual([]);
  m.rows.find((r) => r.number === 1)!.paths = ["src/lexer.c"];
  m.refilter();
  expect(m.visible.map((r) => r.number)).toEqual([1]);
  m.setFilter("");
  expect(m.visible).toHaveLength(4);
  // The highlighted row stays highlighted when the filter is cleared.
  expect(m.highlighted()?.number).toBe(1);
});

test("moves stop at the ends and scrolling keeps the cursor on screen", async () => {
  const many = Array.from({ length: 1000 }, (_, i) => snap(i + 1, `change ${i + 1}`));
  const m = new PickModel(rowsOf(many, 1000));
  m.home();
  m.move(-5);
  expect(m.cursor).toBe(0);
  m.move(25);
  expect(m.scroll(10)).toBe(16);
  m.end();
  expect(m.highlighted()?.number).toBe(1);
  expect(m.scroll(10)).toBe(990);
  m.move(10_000);
  expect(m.cursor).toBe(999);
});

test("previews: computed on demand, cached, one at a time, and only the latest request waits", async () => {
  const started: number[] = [];
  const release = new Map<number, () => void>();
  const ready: number[] = [];
  const cache = new LazyCache<number, string>(
    (k) => {
      started.push(k);
      return new Promise((resolve) => release.set(k, () => resolve(`preview ${k}`)));
    },
    (k) => ready.push(k),
  );
  // The cursor runs over 1..50 while #1 computes: nothing else starts.
  for (let k = 1; k <= 50; k++) expect(cache.get(k).state).toBe("pending");
  expect(started).toEqual([1]);
  release.get(1)!();
  await Bun.sleep(0);
  // Then only the row the cursor rests on (#50), not the 48 it passed.
  expect(started).toEqual([1, 50]);
  release.get(50)!();
  await Bun.sleep(0);
  expect(ready).toEqual([1, 50]);
  expect(cache.get(50)).toEqual({ state: "ready", value: "preview 50" });
  expect(cache.get(1)).toEqual({ state: "ready", value: "preview 1" });
  expect(started).toEqual([1, 50]); // cached: not computed again
});

test("a failed preview is reported, not retried in a loop", async () => {
  let calls = 0;
  const cache = new LazyCache<number, string>(
    async () => {
      calls++;
      throw new Error("boom");
    },
    () => {},
  );
  cache.get(1);
  await Bun.sleep(0);
  const r = cache.get(1);
  expect(r.state).toBe("failed");
  expect(calls).toBe(1);
});

test("fit cuts to the width with an ellipsis, keeps colours closed, expands tabs", async () => {
  const plain = fixedPalette(false);
  expect(fit(plain, "abcdef", 4)).toBe("abc…");
  expect(fit(plain, "abc", 6, true)).toBe("abc   ");
  expect(fit(fixedPalette(true), "\x1b[31mred text\x1b[39m", 4)).toBe("\x1b[31mred…\x1b[0m");
  expect(Bun.stringWidth(fit(plain, "日本語のテキスト", 5))).toBeLessThanOrEqual(5);
  expect(fit(plain, "a\tb", 20)).toBe("a       b");
  expect(fit(plain, "new\nline", 20)).toBe("new\\nline");
});

test("a filter starting with ? shows the rows a file search found, keeping the old rows while it runs", async () => {
  const m = new PickModel(rowsOf(snaps, 3));
  expect(contentQuery("parser")).toBeNull();
  expect(contentQuery("?  lost line ")).toBe("lost line");
  m.setFilter("?lost");
  // Searching: nothing hidden yet, so the cursor still moves over every row.
  expect(m.pendingSearch()).toBe("lost");
  expect(m.visible.map((r) => r.number)).toEqual([4, 3, 2, 1]);
  m.move(1);
  m.setFound("lost", new Set([3, 1]));
  expect(m.pendingSearch()).toBeNull();
  expect(m.visible.map((r) => r.number)).toEqual([3, 1]);
  // An answer for a text no longer typed is kept for later, and changes nothing now.
  m.setFilter("?lo");
  m.setFound("lo", new Set([2]));
  m.setFound("lost", new Set([4]));
  expect(m.visible.map((r) => r.number)).toEqual([2]);
  m.setFilter("?lost");
  expect(m.visible.map((r) => r.number)).toEqual([4]);
  // A lone ? is every row; the ? filter does not match summaries.
  m.setFilter("?");
  expect(m.visible).toHaveLength(4);
  m.setFilter("?parser");
  m.setFound("parser", new Set());
  expect(m.visible).toEqual([]);
});

const lostItems: LostItem[] = [
  { kind: "stash", id: "4c0f7164d03cf56bdb43501f90309c8c3ee6b6e5", date: 1_700_000_100, reflogs: [], message: "On main: parser ideas", branch: "main", base: "b".repeat(40), index: "i".repeat(40), untracked: null, files: ["parse.c"] },
  { kind: "commit", id: "8c9cd01df3916201d83322fd3cf019318ab32c5f", date: 1_700_000_050, reflogs: ["HEAD"], subject: "Add the lexer", branch: "main", branchFrom: "reflog", earlier: 0, base: null },
  { kind: "file", id: "a50bcb6003fee24cd0dcb7d7da23c9150cd95457", date: null, reflogs: [], path: null, size: 5, lines: ["lost"], binary: false },
];

test("lost work is a section after the snapshots: the cursor runs into it, the filter keeps what matches, #n and ?text never", async () => {
  const m = new PickModel(rowsOf(snaps, 3));
  m.setLost(lostRowsOf(lostItems, 7));
  expect(m.length).toBe(7);
  m.end();
  expect(m.highlighted()).toBeUndefined();
  expect(m.highlightedLost()?.lost.kind).toBe("file");
  m.move(-2);
  expect(m.highlightedLost()?.shortId).toBe("4c0f716");
  m.move(-1);
  expect(m.highlighted()?.number).toBe(1);
  m.setFilter("parser");
  expect(m.visible.map((r) => r.number)).toEqual([2]);
  expect(m.visibleLost.map((r) => r.shortId)).toEqual(["4c0f716"]);
  m.setFilter("lexer");
  expect(m.visible).toEqual([]);
  expect(m.highlightedLost()?.lost.kind).toBe("commit");
  m.setFilter("#2");
  expect(m.visibleLost).toEqual([]);
  m.setFilter("?lost");
  expect(m.visibleLost).toEqual([]);
  m.setFilter("");
  expect(m.length).toBe(7);
});

test("the picker draws the lost section under its title; its preview says what rescuing does, or how", async () => {
  const m = new PickModel(rowsOf(snaps, 3));
  m.setLost(lostRowsOf(lostItems, 7));
  const pending = () => ({ state: "pending" }) as const;
  const view: View = { model: m, color: fixedPalette(false), phase: "active", mode: "summary", diffTop: 0, typing: false, confirmYes: true, action: { kind: "restore" }, note: null, preview: pending, gist: pending };
  m.end();
  m.move(-2); // the stash entry
  const frame = renderFrame(view, 140, 30);
  expect(frame).toContain("4 snapshots · 3 lost");
  expect(frame).toContain("lost work (no ref or snapshot holds it; Enter rescues)");
  expect(frame).toContain("4c0f716");
  expect(frame).toContain("Enter: comes back as the newest stash entry");
  expect(frame).toContain("as git undo rescue 4c0f716 does");
  expect(frame).toContain("Enter rescue");
  expect(frame).toContain("files: parse.c");
  m.end(); // the content no tree named
  expect(renderFrame(view, 140, 30)).toContain("git undo rescue a50bcb6 -- <path>");
  // A narrow terminal still shows the section and fits its width.
  m.home();
  const narrow = renderFrame(view, 70, 24).split("\n");
  expect(narrow.join("\n")).toContain("lost work");
  for (const l of narrow) expect(Bun.stringWidth(l)).toBeLessThanOrEqual(70);
});
