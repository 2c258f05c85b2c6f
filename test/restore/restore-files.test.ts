// The index and the working tree (spec: Restoring steps 4 and 5).
import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, readlinkSync, statSync, utimesSync } from "node:fs";
import { makeRepo } from "../helpers/repo.ts";

const mtime = (p: string) => lstatSync(p).mtimeMs;

describe("index", () => {
  test("staged changes and intent-to-add entries", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n" });
    r.write("a.txt", "staged\n");
    r.git(["add", "a.txt"]);
    r.write("a.txt", "staged\nand unstaged\n");
    r.write("ita.txt", "intent to add\n");
    r.git(["add", "-N", "ita.txt"]);
    await r.okIn("snapshot"); // #1
    r.git(["reset", "-q", "--hard"]);
    r.remove("ita.txt");
    await r.okIn("snapshot"); // #2
    await r.okIn("restore", "1");
    expect(r.g("show", ":a.txt")).toBe("staged");
    expect(r.read("a.txt")).toBe("staged\nand unstaged\n");
    // Intent-to-add is not recorded (write-tree omits it); the file itself comes back, untracked.
    expect(r.read("ita.txt")).toBe("intent to add\n");
    expect(r.g("status", "--porcelain")).toBe("MM a.txt\n?? ita.txt".replace(/\n/g, "\n"));
  });

  test("an intent-to-add entry in the state left leaves the index, as read-tree --reset drops it", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n" });
    await r.okIn("snapshot"); // #1
    r.write("a.txt", "2\n");
    r.git(["add", "a.txt"]);
    r.write("ita.txt", "intent to add\n");
    r.git(["add", "-N", "ita.txt"]);
    await r.okIn("snapshot"); // #2
    await r.okIn("restore", "1");
    expect(r.g("ls-files")).toBe("a.txt");
    expect(r.g("show", ":a.txt")).toBe("1");
    // #1 had no ita.txt; #2 holds it (add -A recorded the file), so it may go.
    expect(existsSync(r.path("ita.txt"))).toBe(false);
    expect(r.g("status", "--porcelain")).toBe("");
  });

  test("a conflict comes back with all its stages, and can be resolved and committed", async () => {
    const r = makeRepo();
    r.commit("base", { "c.txt": "base\n" });
    r.git(["checkout", "-q", "-b", "side"]);
    r.commit("side", { "c.txt": "side\n" });
    r.git(["checkout", "-q", "main"]);
    r.commit("main", { "c.txt": "main\n" });
    r.git(["merge", "side"], { allowFail: true });
    const stages = r.g("ls-files", "-u");
    expect(stages.split("\n")).toHaveLength(3);
    await r.okIn("snapshot"); // #1: the conflict
    r.git(["merge", "--abort"]);
    await r.okIn("snapshot"); // #2
    const out = await r.okIn("restore", "1");
    expect(out).toContain("conflicts restored: c.txt");
    expect(r.g("ls-files", "-u")).toBe(stages);
    expect(r.read("c.txt")).toContain("<<<<<<<");
    // Resolve and commit as usual (the merge itself is not re-created, so a plain commit).
    r.write("c.txt", "resolved\n");
    r.git(["add", "c.txt"]);
    r.git(["commit", "-q", "-m", "resolved"]);
    expect(r.g("show", "HEAD:c.txt")).toBe("resolved");
    expect(r.g("ls-files", "-u")).toBe("");
  });
});

describe("working tree", () => {
  test("the user's GIT_*_PATHSPECS change nothing git-undo asks Git (a refresh by :(literal) names)", async () => {
    const r = makeRepo();
    r.commit("one", { "a*.txt": "one\n", "b.txt": "b\n" });
    await r.okIn("snapshot"); // #1
    r.commit("two", { "a*.txt": "two\n" });
    for (const v of ["GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"]) {
      // After a restore the state is recorded already: "no change" exits 1.
      expect(r.undo(["snapshot"]).code).toBe(v === "GIT_LITERAL_PATHSPECS" ? 0 : 1);
      const res = await r.run(["restore", "1"], { env: { [v]: "1" } });
      expect(res.code).toBe(0);
      expect(r.read("a*.txt")).toBe("one\n");
      // The index was refreshed: plumbing that does not refresh sees nothing changed.
      expect(r.git(["diff-files", "--quiet"], { allowFail: true }).code).toBe(0);
      await r.okIn("redo");
      expect(r.read("a*.txt")).toBe("two\n");
    }
  });

  test("modified, created, deleted and renamed files; untracked files and folders; exec bits; symlinks; odd names", async () => {
    const r = makeRepo();
    const odd = ["sp ace.txt", "quo\"te.txt", "new\nline.txt", "ünïcødé.txt", "tab\there.txt", "-dash.txt"];
    const files: Record<string, string> = { "mod.txt": "before\n", "gone.txt": "deleted later\n", "old-name.txt": "renamed later\n" };
    for (const o of odd) files[o] = `odd ${o}\n`;
    r.commit("one", files);
    r.write("run.sh", "#!/bin/sh\n", 0o755);
    r.symlink("mod.txt", "link");
    r.write("untracked/deep/file.txt", "untracked in #1\n");
    r.git(["add", "run.sh", "link"]);
    r.git(["commit", "-q", "-m", "exec and link"]);
    await r.okIn("snapshot"); // #1
    r.write("mod.txt", "after\n");
    r.remove("gone.txt");
    r.git(["mv", "old-name.txt", "new-name.txt"]);
    r.write("created.txt", "created later\n");
    r.git(["update-index", "--chmod=-x", "run.sh"]);
    r.write("run.sh", "#!/bin/sh\n", 0o644);
    r.remove("link");
    r.symlink("created.txt", "link");
    r.remove("untracked");
    r.write("untracked2/x.txt", "another untracked folder\n");
    for (const o of odd) r.remove(o);
    r.git(["add", "-A"]);
    r.git(["commit", "-q", "-m", "two"]);
    await r.okIn("snapshot"); // #2

    await r.okIn("restore", "1");
    expect(r.read("mod.txt")).toBe("before\n");
    expect(r.read("gone.txt")).toBe("deleted later\n");
    expect(r.read("old-name.txt")).toBe("renamed later\n");
    expect(existsSync(r.path("new-name.txt"))).toBe(false);
    expect(existsSync(r.path("created.txt"))).toBe(false);
    expect(statSync(r.path("run.sh")).mode & 0o111).not.toBe(0);
    expect(readlinkSync(r.path("link"))).toBe("mod.txt");
    expect(r.read("untracked/deep/file.txt")).toBe("untracked in #1\n");
    expect(existsSync(r.path("untracked2"))).toBe(false);
    for (const o of odd) expect(r.read(o)).toBe(`odd ${o}\n`);
    expect(r.g("status", "--porcelain")).toBe("?? untracked/");
    // The index's stat data is fresh: plumbing that does not refresh sees no change either.
    expect(r.git(["diff-files", "--quiet"], { allowFail: true }).code).toBe(0);

    await r.okIn("restore", "2");
    expect(r.read("mod.txt")).toBe("after\n");
    expect(statSync(r.path("run.sh")).mode & 0o111).toBe(0);
    expect(readlinkSync(r.path("link"))).toBe("created.txt");
    expect(r.read("untracked2/x.txt")).toBe("another untracked folder\n");
    expect(existsSync(r.path("untracked"))).toBe(false);
    for (const o of odd) expect(existsSync(r.path(o))).toBe(false);
  });

  test("ignored files are never touched, and files equal in both states are not rewritten (mtime unchanged)", async () => {
    const r = makeRepo();
    r.write(".gitignore", "*.log\nbuild/\n");
    r.commit("one", { "same.txt": "same in both\n", "diff.txt": "1\n", "dir/same.txt": "same\n" });
    r.write("app.log", "ignored log\n");
    r.write("build/out.bin", "ignored build output\n");
    r.write("dir/inner.log", "ignored inside a tracked dir\n");
    await r.okIn("snapshot"); // #1
    r.commit("two", { "diff.txt": "2\n", "dir/extra.txt": "new\n" });
    await r.okIn("snapshot"); // #2
    const past = Date.now() / 1000 - 3600;
    const watched = ["same.txt", "dir/same.txt", "app.log", "build/out.bin", "dir/inner.log"];
    for (const p of watched) utimesSync(r.path(p), past, past);
    const before = new Map(watched.map((p) => [p, mtime(r.path(p))]));
    await r.okIn("restore", "1");
    expect(r.read("diff.txt")).toBe("1\n");
    expect(existsSync(r.path("dir/extra.txt"))).toBe(false);
    for (const p of watched) expect(mtime(r.path(p))).toBe(before.get(p)!);
    expect(r.read("app.log")).toBe("ignored log\n");
    expect(r.read("build/out.bin")).toBe("ignored build output\n");
    expect(r.read("dir/inner.log")).toBe("ignored inside a tracked dir\n");
    // Removing every tracked file of a folder keeps the ignored file in it.
    r.commit("three", { "only/tracked.txt": "t\n" });
    r.write("only/keep.log", "ignored, keep me\n");
    await r.okIn("snapshot"); // #4
    await r.okIn("restore", "1");
    expect(existsSync(r.path("only/tracked.txt"))).toBe(false);
    expect(r.read("only/keep.log")).toBe("ignored, keep me\n");
  });
});

describe("the merge touches only the paths that change", () => {
  // The merge runs on an index of just the paths S and T record differently
  // (core/restore/worktree.ts mergeIndexFor); everything else must stay exactly as it is.
  test("a restore that only creates files leaves every other file, tracked, untracked and ignored, alone", async () => {
    const r = makeRepo();
    r.write(".gitignore", "*.log\n");
    r.commit("base", { "a.txt": "a\n", "dir/b.txt": "b\n" });
    r.write("notes.txt", "untracked\n");
    r.write("build.log", "ignored\n");
    r.write("new.txt", "created by the restore\n");
    await r.okIn("snapshot"); // #1: new.txt untracked
    r.remove("new.txt");
    await r.okIn("snapshot"); // #2
    const old = 1_000_000_000;
    for (const p of ["a.txt", "dir/b.txt", "notes.txt", "build.log"]) utimesSync(r.path(p), old, old);
    await r.okIn("restore", "1");
    expect(r.read("new.txt")).toBe("created by the restore\n");
    for (const p of ["a.txt", "dir/b.txt", "notes.txt", "build.log"]) expect(mtime(r.path(p))).toBe(old * 1000);
    expect(r.read("build.log")).toBe("ignored\n");
  });

  test("a restore that only deletes files, and one that only edits a file, the same", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n", "keep.txt": "k\n" });
    r.write("notes.txt", "untracked\n");
    await r.okIn("snapshot"); // #1
    r.write("extra.txt", "extra\n");
    r.write("a.txt", "edited\n");
    await r.okIn("snapshot"); // #2
    const old = 1_000_000_000;
    for (const p of ["keep.txt", "notes.txt"]) utimesSync(r.path(p), old, old);
    await r.okIn("restore", "1");
    expect(existsSync(r.path("extra.txt"))).toBe(false);
    expect(r.read("a.txt")).toBe("a\n");
    for (const p of ["keep.txt", "notes.txt"]) expect(mtime(r.path(p))).toBe(old * 1000);
  });
});

test("the report counts the lines each restore changes, in a dry run and in the restore itself", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "1\n2\n3\n" });
  await r.okIn("snapshot"); // #1
  r.write("a.txt", "1\ntwo\n3\nfour\n");
  r.write("new.txt", "n\n");
  await r.okIn("snapshot"); // #2
  // Back to #1: a.txt loses two lines and gets one back, new.txt goes.
  expect(await r.okIn("restore", "1", "--dry-run")).toContain("files: 1 changed, 1 removed (+1 -3 lines)");
  expect(await r.okIn("restore", "1")).toContain("files: 1 changed, 1 removed (+1 -3 lines)");
});
