// Spec: Restoring step 5 ends with update-index --refresh. git-undo refreshes the
// entries whose stat data the restore can have made stale (files the merge wrote,
// entries T's index changed), so plumbing that trusts stat data (diff-files, no
// refresh of its own) sees a clean index where the files match it.
import { expect, test } from "bun:test";
import { makeRepo } from "../helpers/repo.ts";

const diffFiles = (r: ReturnType<typeof makeRepo>) => r.git(["diff-files", "--name-only"]).stdout.split("\n").filter(Boolean);

test("after undo and redo, diff-files lists only paths that really differ from the index", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a1\n", "b.txt": "b1\n", "keep.txt": "k\n" });
  await r.okIn("snapshot");
  r.commit("two", { "a.txt": "a2 longer\n", "c.txt": "c\n" });
  r.remove("b.txt");
  r.git(["add", "-A"]);
  r.git(["commit", "-qm", "three"]);
  // Staged and unstaged at once: the index holds s1, the file s2.
  r.write("s.txt", "s1\n");
  r.git(["add", "s.txt"]);
  r.write("s.txt", "s2, not staged\n");
  await r.okIn("snapshot");

  await r.okIn("undo"); // back to "one": a rewritten, b back, c and s gone
  expect(r.read("a.txt")).toBe("a1\n");
  expect(diffFiles(r)).toEqual([]);

  await r.okIn("redo"); // forward again: s staged as s1 with s2 on disk
  expect(r.read("s.txt")).toBe("s2, not staged\n");
  expect(r.git(["show", ":s.txt"]).stdout).toBe("s1\n");
  expect(diffFiles(r)).toEqual(["s.txt"]);
});

test("a restore that changes only the index refreshes the entries it changed", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n", "b.txt": "b\n" });
  r.write("a.txt", "a staged\n");
  r.git(["add", "a.txt"]);
  await r.okIn("snapshot");
  r.git(["reset", "-q"]); // unstage: the files stay, the index changes
  await r.okIn("snapshot");
  await r.okIn("undo"); // the index holds a.txt's staged content again, the file is the same
  expect(r.git(["diff", "--cached", "--name-only"]).stdout.trim()).toBe("a.txt");
  expect(diffFiles(r)).toEqual([]);
});
