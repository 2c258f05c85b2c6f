// A way back from every state (issue #42): after `restore <n>` or a pick,
// `git undo` steps back from <n> (the format's position rule), and every
// report in that run of restores names the state it left and the command
// back to it; `git undo list` marks that state.
import { expect, test } from "bun:test";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";

/** Six changes, each a snapshot: #1 to #6. */
async function sixSnapshots(): Promise<TestRepo> {
  const r = makeRepo();
  for (let i = 1; i <= 6; i++) {
    r.commit(`c${i}`, { "a.txt": `${i}\n` });
    expect((await r.run(["snapshot"])).code).toBe(0);
  }
  return r;
}

test("from #6, restore 3 then undo twice: each report names #6 and the command back; list marks it", async () => {
  const r = await sixSnapshots();
  const restored = await r.run(["restore", "3"]);
  expect(restored.code).toBe(0);
  expect(restored.stdout + restored.stderr).toContain("git undo restore 6");
  const undone = await r.run(["undo"]);
  expect(undone.code).toBe(0);
  expect(r.read("a.txt")).toBe("2\n");
  expect(undone.stdout + undone.stderr).toContain("where you were before: git undo restore 6");
  const listed = await r.run(["list"]);
  expect(listed.stdout).toMatch(/^< #6 /m);
  expect(listed.stdout).toMatch(/^\* #2 /m);
  // Undone back to #1, nothing is left to undo: that says where you were, too.
  expect((await r.run(["undo"])).code).toBe(0);
  const none = await r.run(["undo"]);
  expect(none.code).toBe(1);
  expect(none.stderr).toContain("nothing to undo; where you were before: git undo restore 6");
  // And the command does bring it back.
  expect((await r.run(["restore", "6"])).code).toBe(0);
  expect(r.read("a.txt")).toBe("6\n");
});

test("a restore of #1 (as a pick makes), then undo: nothing to undo, and the way back", async () => {
  const r = await sixSnapshots();
  expect((await r.run(["restore", "1"])).code).toBe(0);
  const none = await r.run(["undo"]);
  expect(none.code).toBe(1);
  expect(none.stderr).toContain("nothing to undo; where you were before: git undo restore 6");
  // Outside a run of restores, no such words.
  r.commit("new", { "b.txt": "b\n" });
  expect((await r.run(["snapshot"])).code).toBe(0);
  expect((await r.run(["list"])).stdout).not.toMatch(/^</m);
});
