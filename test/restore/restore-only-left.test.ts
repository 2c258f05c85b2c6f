// "Only the state left has this file" (issue #30.9): said of content the
// restore takes off disk that nothing keeps once it is done. Content the
// target's own commits or stash entries hold is kept: undoing a stash pop puts
// the entry back, undoing a rebase leaves the branch it was rebased onto.
import { describe, expect, test } from "bun:test";
import { previewOf } from "../helpers/hostile.ts";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";

test("undoing a stash pop: the popped edit is in the stash entry it puts back, so no warning", async () => {
  const r = makeRepo();
  r.commit("base", { "t.txt": "1\n" });
  await r.okIn("snapshot"); // #1
  r.write("t.txt", "2, never recorded on disk\n");
  r.git(["stash", "-q"]);
  await r.okIn("snapshot"); // #2: in the stash only
  r.git(["stash", "pop", "-q"]);
  await r.okIn("snapshot"); // #3: on disk, the stash empty
  const dry = await r.okIn("undo", "--dry-run");
  expect(dry).toMatch(/stash: 1 entry back/);
  expect(dry).not.toMatch(/only the state left/);
  const out = await r.okIn("undo");
  expect(out).not.toMatch(/only the state left/);
  // Where it said the content is: in the stash entry.
  expect(r.read("t.txt")).toBe("1\n");
  r.git(["stash", "pop", "-q"]);
  expect(r.read("t.txt")).toBe("2, never recorded on disk\n");
});

test("undoing a rebase: a file from the branch rebased onto is on that branch still, so no warning", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  r.git(["checkout", "-q", "-b", "feature"]);
  r.commit("feature work", { "f.txt": "f\n" });
  r.git(["checkout", "-q", "main"]);
  r.commit("mod2 on main", { "src/mod2.ts": "export const two = 2;\n" });
  r.git(["checkout", "-q", "feature"]);
  await r.okIn("snapshot"); // #1: on feature, no src/mod2.ts on disk in any snapshot
  r.git(["rebase", "-q", "main"]);
  await r.okIn("snapshot"); // #2
  const out = await r.okIn("undo");
  expect(out).toMatch(/files: 1 removed/);
  expect(out).not.toMatch(/only the state left/);
  expect(r.git(["cat-file", "-p", "main:src/mod2.ts"]).stdout).toBe("export const two = 2;\n");
});

test("content nothing keeps is still named (a fresh edit, and a file no commit or stash entry has)", async () => {
  const r = makeRepo();
  r.commit("base", { "t.txt": "1\n" });
  r.write("t.txt", "in the stash\n");
  r.git(["stash", "-q"]);
  await r.okIn("snapshot"); // #1: one stash entry
  r.write("t.txt", "a fresh edit\n");
  r.write("n.txt", "new\n");
  r.git(["add", "n.txt"]);
  await r.okIn("snapshot"); // #2
  const out = await r.okIn("undo");
  expect(out).toMatch(/only the state left has these files: n\.txt, t\.txt; to get them back: git undo redo/);
});

test("content an older snapshot holds is found past newer ones that differ there, or have no such file", async () => {
  // onlyInLeft follows each path from the state left through the snapshots,
  // newest first, one step's changes at a time: a path that changed and came
  // back, or went and came back, must still be matched with its older content.
  const r = makeRepo();
  r.commit("base", { "keep.txt": "k\n" });
  r.write("a.txt", "X\n");
  r.write("dir/b.txt", "P\n");
  r.write("c.txt", "only now, never before\n");
  await r.okIn("snapshot"); // #1: a = X, b = P
  r.write("a.txt", "Y\n");
  r.remove("dir/b.txt");
  await r.okIn("snapshot"); // #2: a = Y, no b
  r.write("a.txt", "Z\n");
  r.write("dir/b.txt", "Q\n");
  await r.okIn("snapshot"); // #3: a = Z, b = Q
  r.write("a.txt", "X\n");
  r.write("dir/b.txt", "P\n");
  r.write("c.txt", "fresh\n");
  await r.okIn("snapshot"); // #4: a and b as in #1; c as in no other
  const out = await r.okIn("undo");
  expect(out).toMatch(/only the state left has this file: c\.txt;/);
  expect(r.read("a.txt")).toBe("Z\n");
  expect(r.read("dir/b.txt")).toBe("Q\n");
});

test("restore of an older snapshot: a file the snapshot before the state left holds as it is now is not named, however older ones differ", async () => {
  const r = makeRepo();
  r.commit("base", { "keep.txt": "k\n" });
  r.write("p.txt", "one\n");
  await r.okIn("snapshot"); // #1
  r.write("p.txt", "two\n");
  await r.okIn("snapshot"); // #2
  r.write("p.txt", "now\n");
  await r.okIn("snapshot"); // #3: p as it is now
  r.write("q.txt", "fresh\n");
  await r.okIn("snapshot"); // #4: q in no other snapshot
  const out = await r.okIn("restore", "1");
  expect(out).toMatch(/only the state left has this file: q\.txt;/);
  expect(r.read("p.txt")).toBe("one\n");
});

describe("the way back, said before and after (issue #30.8)", () => {
  /** #1 to #8, one edit each; #8's content is in no earlier snapshot. */
  function eight(): TestRepo {
    const r = makeRepo();
    r.commit("base", { "n.txt": "0\n" });
    for (let i = 1; i <= 8; i++) {
      r.write("n.txt", `${i}\n`);
      r.ok("snapshot");
    }
    return r;
  }

  test("restore 4 from #8: redo would go to #5, so only 'git undo restore 8' is offered, by the dry run, the preview and the report alike", async () => {
    const r = eight();
    const said = "only the state left has this file: n.txt; to get it back: git undo restore 8";
    expect(await r.okIn("restore", "4", "--dry-run")).toContain(said);
    expect(previewOf(r, 4).stdout).toContain(said);
    const out = await r.okIn("restore", "4");
    expect(out).toContain(said);
    expect(out).toContain("To go back: git undo restore 8");
    // And that is where it leads: redo goes elsewhere.
    await r.okIn("redo");
    expect(r.read("n.txt")).toBe("5\n");
  });

  test("git undo from #8: redo lands on #8, and both say so", async () => {
    const r = eight();
    const said = "to get it back: git undo redo or git undo restore 8";
    expect(await r.okIn("undo", "--dry-run")).toContain(said);
    expect(previewOf(r, 7).stdout).toContain(said);
    expect(await r.okIn("undo")).toContain(said);
  });

  test("unrecorded changes: the number they will be saved as is the one offered", async () => {
    const r = eight();
    r.write("n.txt", "9, not recorded\n");
    const said = "to get it back: git undo redo or git undo restore 9";
    expect(await r.okIn("undo", "--dry-run")).toContain(said);
    expect(await r.okIn("undo")).toContain(said);
    expect(await r.okIn("redo")).toMatch(/Redid #9/);
    expect(r.read("n.txt")).toBe("9, not recorded\n");
  });
});
