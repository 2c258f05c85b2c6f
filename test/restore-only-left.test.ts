// "Only the state left has this file" (issue #30.9): said of content the
// restore takes off disk that nothing keeps once it is done. Content the
// target's own commits or stash entries hold is kept: undoing a stash pop puts
// the entry back, undoing a rebase leaves the branch it was rebased onto.
import { expect, test } from "bun:test";
import { makeRepo } from "./helpers/repo.ts";

test("undoing a stash pop: the popped edit is in the stash entry it puts back, so no warning", () => {
  const r = makeRepo();
  r.commit("base", { "t.txt": "1\n" });
  r.ok("snapshot"); // #1
  r.write("t.txt", "2, never recorded on disk\n");
  r.git(["stash", "-q"]);
  r.ok("snapshot"); // #2: in the stash only
  r.git(["stash", "pop", "-q"]);
  r.ok("snapshot"); // #3: on disk, the stash empty
  const dry = r.ok("undo", "--dry-run");
  expect(dry).toMatch(/stash: 1 entry back/);
  expect(dry).not.toMatch(/only the state left/);
  const out = r.ok("undo");
  expect(out).not.toMatch(/only the state left/);
  // Where it said the content is: in the stash entry.
  expect(r.read("t.txt")).toBe("1\n");
  r.git(["stash", "pop", "-q"]);
  expect(r.read("t.txt")).toBe("2, never recorded on disk\n");
});

test("undoing a rebase: a file from the branch rebased onto is on that branch still, so no warning", () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  r.git(["checkout", "-q", "-b", "feature"]);
  r.commit("feature work", { "f.txt": "f\n" });
  r.git(["checkout", "-q", "main"]);
  r.commit("mod2 on main", { "src/mod2.ts": "export const two = 2;\n" });
  r.git(["checkout", "-q", "feature"]);
  r.ok("snapshot"); // #1: on feature, no src/mod2.ts on disk in any snapshot
  r.git(["rebase", "-q", "main"]);
  r.ok("snapshot"); // #2
  const out = r.ok("undo");
  expect(out).toMatch(/files: 1 removed/);
  expect(out).not.toMatch(/only the state left/);
  expect(r.git(["cat-file", "-p", "main:src/mod2.ts"]).stdout).toBe("export const two = 2;\n");
});

test("content nothing keeps is still named (a fresh edit, and a file no commit or stash entry has)", () => {
  const r = makeRepo();
  r.commit("base", { "t.txt": "1\n" });
  r.write("t.txt", "in the stash\n");
  r.git(["stash", "-q"]);
  r.ok("snapshot"); // #1: one stash entry
  r.write("t.txt", "a fresh edit\n");
  r.write("n.txt", "new\n");
  r.git(["add", "n.txt"]);
  r.ok("snapshot"); // #2
  const out = r.ok("undo");
  expect(out).toMatch(/only the state left has these files: n\.txt, t\.txt; to get them back: git undo redo/);
});
