// `restore <n> --ref <branch>` on the branch checked out here (issue #30.10):
// the branch moves, the index and the files stay, as `git reset --soft` leaves
// them. The report (and the dry run) says so and gives the command that brings
// them too; nothing is lost either way.
import { expect, test } from "bun:test";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { userFingerprint } from "../helpers/restore.ts";

function twoCommits(): { r: TestRepo; one: string; two: string } {
  const r = makeRepo();
  const one = r.commit("one", { "a.txt": "1\n" });
  r.git(["branch", "feature"]);
  r.ok("snapshot"); // #1
  const two = r.commit("two", { "a.txt": "2\n", "b.txt": "b\n" });
  r.git(["branch", "-f", "feature"]);
  r.ok("snapshot"); // #2
  return { r, one, two };
}

const NOTE = "main is checked out here: the index and the files stay as they are (as after git reset --soft); to bring them too: ";

test("--ref main: the report and the dry run say the files stay, and the command given brings them", async () => {
  const { r, one, two } = twoCommits();
  const dry = await r.okIn("restore", "1", "--ref", "main", "--dry-run");
  expect(dry).toContain(`${NOTE}git undo restore 1 --ref main --only index,worktree`);
  const out = await r.okIn("restore", "1", "--ref", "main");
  expect(out).toContain(`${NOTE}git undo restore 1 --ref main --only index,worktree`);
  expect(r.g("rev-parse", "main")).toBe(one);
  // As reset --soft: the files and the index are two's.
  expect(r.read("a.txt")).toBe("2\n");
  expect(r.g("diff", "--cached", "--name-only")).toBe("a.txt\nb.txt");
  // The command it gave: the files and the index of #1 too, nothing staged left.
  const all = await r.okIn("restore", "1", "--ref", "main", "--only", "index,worktree");
  expect(all).not.toContain("checked out here");
  expect(r.read("a.txt")).toBe("1\n");
  expect(r.git(["status", "--porcelain"]).stdout).toBe("");
  // Nothing lost: two undos are back at #2.
  await r.okIn("undo");
  await r.okIn("undo");
  expect(r.g("rev-parse", "main")).toBe(two);
  expect(r.read("b.txt")).toBe("b\n");
});

test("--only refs says it too; a branch not checked out, or one that does not move, says nothing", async () => {
  const { r } = twoCommits();
  expect(await r.okIn("restore", "1", "--only", "refs", "--dry-run")).toContain(`${NOTE}git undo restore 1 --only refs,index,worktree`);
  expect(await r.okIn("restore", "1", "--ref", "feature", "--dry-run")).not.toContain("checked out here");
  expect(await r.okIn("restore", "1", "--only", "refs,index,worktree", "--dry-run")).not.toContain("checked out here");
  const before = userFingerprint(r);
  await r.okIn("restore", "1", "--ref", "feature");
  expect(await r.okIn("restore", "2", "--ref", "feature", "--dry-run")).not.toContain("checked out here");
  expect(userFingerprint(r)).not.toBe(before);
});
