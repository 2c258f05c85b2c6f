// git undo pick on a terminal (in-process, helpers/vterm.ts): open it, move,
// preview, filter, confirm, and the repository ends up in the chosen state.
import { afterEach, expect, test } from "bun:test";
import { fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { VirtualTerminal } from "../helpers/vterm.ts";

const terminals: VirtualTerminal[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) await t.kill();
});
const open = (r: TestRepo, cols = 100, rows = 30) => {
  const t = new VirtualTerminal(r, cols, rows);
  terminals.push(t);
  t.start(["pick"]);
  return t;
};

/** Three snapshots: #1 a.txt; #2 a.txt edited, b.txt added; #3 c.txt added (the current state). */
function threeStates(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  r.ok("snapshot");
  r.commit("two", { "a.txt": "one\ntwo\n", "b.txt": "new\n" });
  r.ok("snapshot");
  r.commit("three", { "c.txt": "see\n" });
  r.ok("snapshot");
  return r;
}

test("pick lists snapshots newest first and previews the highlighted one's plan", async () => {
  const r = threeStates();
  const t = open(r);
  // The cursor starts on the state `git undo` would restore: #2, just older than the position #3.
  let s = await t.waitForText("Restoring #2");
  const rows = s.split("\n").filter((l) => /#\d\b/.test(l) && /[●○]/.test(l));
  expect(rows.map((l) => /#(\d+)/.exec(l)![1])).toEqual(["3", "2", "1"]);
  expect(rows[0]).toContain("*#3"); // the position is marked
  expect(s).toMatch(/D \+0 -1\s+c\.txt/);
  t.keys("Down");
  s = await t.waitForText("Restoring #1");
  // spec: Restoring step 4 — the preview names every file that differs, with line counts.
  expect(s).toMatch(/files\s+1 changed, 2 removed \(\+0 -3 lines\)/);
  expect(s).toMatch(/M \+0 -1\s+a\.txt/);
  expect(s).toMatch(/D \+0 -1\s+b\.txt/);
  expect(s).toMatch(/D \+0 -1\s+c\.txt/);
  expect(s).toMatch(/main \w+ -> \w+\s+one/);
  // Tab: Git's own diff of the highlighted snapshot.
  t.keys("Tab");
  s = await t.waitForText("diff --git a/a.txt b/a.txt");
  expect(s).toContain("-two");
  t.keys("Escape");
  expect(await t.exitCode()).toBe(1);
});

test("typing filters by path, summary and number; Enter, y restores and reports", async () => {
  const r = threeStates();
  const before = r.g("rev-parse", "HEAD~1");
  const t = open(r);
  await t.waitForText("Restoring #2");
  t.type("c.txt");
  let s = await t.waitForText("1 of 3 snapshots");
  expect(s).toContain("*#3");
  expect(s).not.toMatch(/[●○]\s+#2/);
  for (let i = 0; i < 5; i++) t.keys("BSpace");
  t.type("#1");
  s = await t.waitForText("Restoring #1");
  expect(s).toContain("1 of 3 snapshots");
  for (let i = 0; i < 2; i++) t.keys("BSpace");
  t.type("two");
  s = await t.waitForText("Restoring #2");
  t.keys("Enter");
  await t.waitForText("Restore #2?");
  t.keys("y");
  s = await t.waitForText(/EXIT=\d+/);
  expect(s).toContain("Restored #2 · commit: two");
  expect(await t.exitCode()).toBe(0);
  // The repository is in #2's state, and the restore was recorded as a restore snapshot.
  expect(r.g("rev-parse", "HEAD")).toBe(before);
  expect(r.read("a.txt")).toBe("one\ntwo\n");
  expect(r.read("b.txt")).toBe("new\n");
  expect(() => r.read("c.txt")).toThrow();
  const latest = r.snapshots()[0]!;
  expect(latest.kind).toBe("restore");
  expect(latest.restored).toBe(2);
});

test("?text lists the snapshots whose files hold it (index or working tree), and restores one", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "plain\n" });
  r.ok("snapshot"); // #1
  r.write("notes.txt", "the Lost Idea\n");
  r.ok("snapshot"); // #2: only the working tree holds it
  r.git(["add", "notes.txt"]);
  r.write("notes.txt", "rewritten\n");
  r.ok("snapshot"); // #3: only the index does
  r.git(["reset", "-q", "--hard"]);
  r.remove("notes.txt");
  r.ok("snapshot"); // #4: gone
  const t = open(r);
  await t.waitForText("Restoring #3");
  t.type("?lost idea");
  let s = await t.waitForText("2 of 4 snapshots");
  expect(s).not.toContain("searching files");
  const rows = s.split("\n").filter((l) => /#\d\b/.test(l) && /[●○]/.test(l));
  expect(rows.map((l) => /#(\d+)/.exec(l)![1])).toEqual(["3", "2"]);
  t.keys("Down");
  s = await t.waitForText("Restoring #2");
  t.keys("Enter");
  await t.waitForText("Restore #2?");
  t.keys("y");
  await t.waitForText(/EXIT=\d+/);
  expect(await t.exitCode()).toBe(0);
  expect(r.read("notes.txt")).toBe("the Lost Idea\n");
});

test("answering no goes back to the list; nothing changes until confirmed", async () => {
  const r = threeStates();
  const before = fingerprint(r);
  const t = open(r);
  await t.waitForText("Restoring #2");
  t.keys("Enter");
  await t.waitForText("Restore #2?");
  t.keys("n");
  await t.waitFor((s) => !s.includes("Restore #2?") && s.includes("Enter restore"), "the list again");
  t.keys("End");
  await t.waitForText("Restoring #1");
  t.keys("Escape");
  expect(await t.exitCode()).toBe(1);
  expect(fingerprint(r)).toBe(before);
});

test("not a terminal: one line pointing to list and restore, exit 1, nothing changed", () => {
  const r = threeStates();
  const before = fingerprint(r);
  const res = r.undo(["pick"]);
  expect(res.code).toBe(1);
  expect(res.stderr.trim().split("\n")).toHaveLength(1);
  expect(res.stderr).toContain("git undo list");
  expect(res.stderr).toContain("git undo restore <n>");
  expect(res.stdout).toBe("");
  expect(fingerprint(r)).toBe(before);
});
