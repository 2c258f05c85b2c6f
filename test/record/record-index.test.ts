// Recording the index and the working tree: conflicts, intent-to-add, odd
// paths, modes, submodules, sparse checkout, undo.worktree, and the private
// index copy (the real index is never written).
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../helpers/auto.ts";
import { makeRepo, tempDir, type TestRepo } from "../helpers/repo.ts";
import { blobBytes, commitMessage, entries, gitBytes, snap, snapIn, treeFiles } from "../helpers/snap.ts";

/** The stage-0 entries of the real index: path -> "<mode> blob <oid>". */
function stageZero(r: TestRepo): Map<string, string> {
  const out = new Map<string, string>();
  for (const rec of r.git(["ls-files", "-s", "-z"]).stdout.split("\0")) {
    if (!rec) continue;
    const tab = rec.indexOf("\t");
    const [mode, oid, stage] = rec.slice(0, tab).split(" ");
    if (stage !== "0") continue;
    out.set(rec.slice(tab + 1), `${mode} ${mode === "160000" ? "commit" : "blob"} ${oid}`);
  }
  return out;
}

/** A repository stopped in a merge with a content conflict (a.c) and a delete/modify conflict (d.c). */
function conflicted(): TestRepo {
  const r = makeRepo();
  r.commit("base", { "a.c": "base\n", "d.c": "keep me\n", "ok.c": "ok\n" });
  r.git(["checkout", "-q", "-b", "other"]);
  r.write("a.c", "other\n");
  r.remove("d.c");
  r.commit("other side");
  r.git(["checkout", "-q", "main"]);
  r.commit("main side", { "a.c": "main\n", "d.c": "modified\n", "ok.c": "ok, merged\n" });
  expect(r.git(["merge", "-q", "other"], { allowFail: true }).code).not.toBe(0);
  return r;
}

describe("conflicts", () => {
  test("index-unmerged is git ls-files -z --unmerged byte for byte; index omits those paths", async () => {
    const r = conflicted();
    const realIndex = readFileSync(join(r.gitDir(), "index"));
    const s = await snapIn(r);
    const e = entries(r, s.tree);
    // clarifications: blobs 100644, trees 040000.
    for (const name of ["HEAD", "refs", "state", "index-unmerged"]) expect(e[name]).toMatch(/^100644 blob /);
    for (const name of ["index", "index-blobs", "worktree"]) expect(e[name]).toMatch(/^040000 tree /);
    expect(Object.keys(e).sort()).toEqual(["HEAD", "index", "index-blobs", "index-unmerged", "refs", "state", "worktree"]);
    const want = gitBytes(r, ["ls-files", "-z", "--unmerged"]);
    expect(want.toString()).toContain("\td.c\0");
    expect(blobBytes(r, s.tree, "index-unmerged").equals(want)).toBe(true);
    // The index tree is exactly the stage-0 entries.
    expect(treeFiles(r, `${s.tree}:index`)).toEqual(stageZero(r));
    expect(treeFiles(r, `${s.tree}:index`).has("a.c")).toBe(false);
    // The recording never wrote the real index.
    expect(readFileSync(join(r.gitDir(), "index")).equals(realIndex)).toBe(true);
    // The worktree tree holds the file with conflict markers, as on disk.
    const worktreeA = r.g("cat-file", "blob", `${s.tree}:worktree/a.c`);
    expect(worktreeA).toBe(r.read("a.c").replace(/\n$/, ""));
    expect(worktreeA).toContain("<<<<<<<");
    const state = r.g("cat-file", "blob", `${s.tree}:state`);
    expect(state).toBe("MERGE_HEAD");
  });

  test("index-blobs holds each unmerged blob under its own id; the blob rebuilds the stages", async () => {
    const r = conflicted();
    const s = await snapIn(r);
    const unmerged = gitBytes(r, ["ls-files", "-z", "--unmerged"]).toString();
    const ids = [...new Set(unmerged.split("\0").filter(Boolean).map((rec) => rec.split(" ")[1]!))].sort();
    const blobs = treeFiles(r, `${s.tree}:index-blobs`);
    expect([...blobs.keys()].sort()).toEqual(ids);
    for (const [name, info] of blobs) expect(info).toBe(`100644 blob ${name}`);

    // Feed index-unmerged to update-index on a fresh index: the same stages come back.
    const fresh = join(tempDir("idx"), "index");
    const env = { GIT_INDEX_FILE: fresh };
    r.git(["read-tree", `${s.tree}:index`], { env });
    r.git(["update-index", "-z", "--index-info"], { env, input: blobBytes(r, s.tree, "index-unmerged") });
    expect(gitBytes(r, ["ls-files", "-s", "-z"], env).equals(gitBytes(r, ["ls-files", "-s", "-z"]))).toBe(true);
  });

  test("a conflict whose path needs quoting is recorded raw", async () => {
    const r = makeRepo();
    const name = "sp ace\tand\nnewline-é.c";
    r.commit("base", { [name]: "base\n" });
    r.git(["checkout", "-q", "-b", "other"]);
    r.commit("other", { [name]: "other\n" });
    r.git(["checkout", "-q", "main"]);
    r.commit("main", { [name]: "main\n" });
    r.git(["merge", "-q", "other"], { allowFail: true });
    const s = await snapIn(r);
    expect(blobBytes(r, s.tree, "index-unmerged").equals(gitBytes(r, ["ls-files", "-z", "--unmerged"]))).toBe(true);
    // The summary stays on one line whatever the path holds.
    const msg = commitMessage(r, s.commit);
    expect(msg.split("\n")[1]).toBe("");
    expect(msg.split("\n")[2]).toBe("Undo-Format: 1");
  });
});

describe("the index and the working tree", () => {
  test("intent-to-add entries are left out of index and present in worktree", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.write("new.c", "new\n");
    r.git(["add", "-N", "new.c"]);
    const s = await snapIn(r);
    expect([...treeFiles(r, `${s.tree}:index`).keys()]).toEqual(["a.c"]);
    expect([...treeFiles(r, `${s.tree}:worktree`).keys()].sort()).toEqual(["a.c", "new.c"]);
    expect(r.g("cat-file", "blob", `${s.tree}:worktree/new.c`)).toBe("new");
  });

  test("staged and unstaged content, untracked files, ignored files left out", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "1\n", ".gitignore": "*.o\n" });
    r.write("a.c", "staged\n");
    r.git(["add", "a.c"]);
    r.write("a.c", "on disk\n");
    r.write("u.txt", "untracked\n");
    r.write("x.o", "ignored\n");
    r.write("deep/dir/f.txt", "deep\n");
    const s = await snapIn(r);
    expect(r.g("cat-file", "blob", `${s.tree}:index/a.c`)).toBe("staged");
    expect(r.g("cat-file", "blob", `${s.tree}:worktree/a.c`)).toBe("on disk");
    expect([...treeFiles(r, `${s.tree}:worktree`).keys()].sort()).toEqual([".gitignore", "a.c", "deep/dir/f.txt", "u.txt"]);
    expect(treeFiles(r, `${s.tree}:index`)).toEqual(stageZero(r));
  });

  test("paths with spaces, tabs, newlines, non-ASCII and a leading dash", async () => {
    const r = makeRepo();
    const names = ["with space.txt", "tab\there", "new\nline", "ünïcødé-名前.txt", "-dash", "--double"];
    r.commit("one", { [names[0]!]: "0\n", [names[4]!]: "4\n" });
    for (const [i, n] of names.entries()) r.write(n, `${i} edited\n`);
    r.git(["add", "--", names[1]!]);
    const s = await snapIn(r);
    const worktree = treeFiles(r, `${s.tree}:worktree`);
    expect([...worktree.keys()].sort()).toEqual([...names].sort());
    for (const [i, n] of names.entries()) {
      const oid = worktree.get(n)!.split(" ")[2]!;
      expect(r.g("cat-file", "blob", oid)).toBe(`${i} edited`);
    }
    expect([...treeFiles(r, `${s.tree}:index`).keys()].sort()).toEqual([names[0]!, names[1]!, names[4]!].sort());
    expect(commitMessage(r, s.commit).split("\n")[1]).toBe("");
  });

  test("symlinks and the executable bit", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.symlink("a.c", "link");
    r.symlink("nowhere/at/all", "dangling");
    r.write("run.sh", "#!/bin/sh\n", 0o755);
    const s = await snapIn(r);
    const w = treeFiles(r, `${s.tree}:worktree`);
    expect(w.get("link")).toMatch(/^120000 blob /);
    expect(r.g("cat-file", "blob", w.get("link")!.split(" ")[2]!)).toBe("a.c");
    expect(w.get("dangling")).toMatch(/^120000 blob /);
    expect(w.get("run.sh")).toMatch(/^100755 blob /);
    expect(w.get("a.c")).toMatch(/^100644 blob /);
  });

  test("a submodule is a gitlink with its checked-out commit", async () => {
    const r = makeRepo();
    const sub = makeRepo();
    const subFirst = sub.commit("sub one", { "s.txt": "1\n" });
    r.commit("one", { "a.c": "a\n" });
    r.git(["-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.dir, "sub"]);
    r.git(["commit", "-q", "-m", "add sub"]);
    // Move the submodule's checkout: the worktree has the new commit, the index the old.
    const inner = new (r.constructor as typeof TestRepo)(r.path("sub"), r.home);
    inner.git(["config", "user.name", "T"]);
    inner.git(["config", "user.email", "t@x"]);
    const subSecond = inner.commit("sub two", { "s.txt": "2\n" });
    const s = await snapIn(r);
    expect(treeFiles(r, `${s.tree}:index`).get("sub")).toBe(`160000 commit ${subFirst}`);
    expect(treeFiles(r, `${s.tree}:worktree`).get("sub")).toBe(`160000 commit ${subSecond}`);
    // Only the gitlink: the submodule's files are not in the tree.
    expect(treeFiles(r, `${s.tree}:worktree`).has("sub/s.txt")).toBe(false);
  });

  test("an embedded repository without a commit does not stop the recording of the rest", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.git(["init", "-q", "nested"]);
    r.write("nested/f", "inner\n");
    r.write("u.txt", "u\n");
    const s = await snapIn(r);
    expect([...treeFiles(r, `${s.tree}:worktree`).keys()].sort()).toEqual(["a.c", "u.txt"]);
  });

  test("sparse checkout: paths outside the cone stay as the index has them", async () => {
    const r = makeRepo();
    r.commit("one", { "in/a.c": "a\n", "out/b.c": "b\n", "top.c": "t\n" });
    r.git(["sparse-checkout", "set", "in"]);
    expect(existsSync(r.path("out/b.c"))).toBe(false);
    r.write("in/a.c", "edited\n");
    const s = await snapIn(r);
    const w = treeFiles(r, `${s.tree}:worktree`);
    expect([...w.keys()].sort()).toEqual(["in/a.c", "out/b.c", "top.c"]);
    expect(w.get("out/b.c")).toBe(treeFiles(r, "HEAD").get("out/b.c"));
    expect(r.g("cat-file", "blob", `${s.tree}:worktree/in/a.c`)).toBe("edited");
    expect(treeFiles(r, `${s.tree}:index`)).toEqual(treeFiles(r, "HEAD"));
  });

  test("undo.worktree=false records no worktree entry", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.git(["config", "undo.worktree", "false"]);
    r.write("a.c", "edited\n");
    r.write("u.txt", "u\n");
    const s = await snapIn(r);
    expect(Object.keys(entries(r, s.tree)).sort()).toEqual(["HEAD", "index", "refs"]);
    // An edit on disk alone is no change then.
    r.write("a.c", "edited again\n");
    const again = await r.run(["snapshot"]);
    expect(again.stdout).toBe("no change since #1\n");
    r.git(["add", "a.c"]);
    expect(snap(r).ref).toBe("refs/undo/snapshots/0000000002");
  });
});

describe("the private index copy", () => {
  test("a held index.lock does not stop a recording, and the real index is not written", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.write("a.c", "edited\n");
    r.write("u.txt", "new\n");
    const indexPath = join(r.gitDir(), "index");
    const before = readFileSync(indexPath);
    const mtime = statSync(indexPath).mtimeMs;
    writeFileSync(join(r.gitDir(), "index.lock"), "held by another command");
    const s = await snapIn(r);
    expect(readFileSync(join(r.gitDir(), "index.lock"), "utf8")).toBe("held by another command");
    expect(readFileSync(indexPath).equals(before)).toBe(true);
    expect(statSync(indexPath).mtimeMs).toBe(mtime);
    expect(r.g("cat-file", "blob", `${s.tree}:worktree/a.c`)).toBe("edited");
    expect(r.g("cat-file", "blob", `${s.tree}:worktree/u.txt`)).toBe("new");
    // Nothing is left behind in the undo directory but the lock's absence.
    expect(existsSync(join(r.gitDir(), "undo", "capture.lock"))).toBe(false);
  });

  test("nor is a submodule's: the git status Git runs in it for add -A takes no index.lock there", async () => {
    const r = makeRepo();
    const sub = makeRepo();
    sub.commit("sub one", { "s.txt": "1\n" });
    r.commit("one", { "a.c": "a\n" });
    r.git(["-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.dir, "sub"]);
    r.git(["commit", "-q", "-m", "add sub"]);
    // The same content with a new mtime: a git status in the submodule refreshes the entry and writes its index back.
    utimesSync(r.path("sub/s.txt"), new Date(Date.now() + 5000), new Date(Date.now() + 5000));
    const subIndex = join(r.gitDir(), "modules", "sub", "index");
    const before = readFileSync(subIndex);
    const { ino, mtimeMs } = statSync(subIndex);
    r.write("a.c", "edited\n");
    const s = await snapIn(r);
    expect(r.g("cat-file", "blob", `${s.tree}:worktree/a.c`)).toBe("edited");
    // Written back, it would be a new file (Git renames index.lock over it): the user's next
    // command in the submodule (git submodule update's checkout) could meet that lock.
    expect(statSync(subIndex).ino).toBe(ino);
    expect(statSync(subIndex).mtimeMs).toBe(mtimeMs);
    expect(readFileSync(subIndex).equals(before)).toBe(true);
  });

  test("a same-size edit made right after git add is recorded (the copy keeps the index's mtime)", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "aaaa\n" });
    r.write("a.c", "bbbb\n");
    r.git(["add", "a.c"]);
    // Same size, same second: only Git's racy-entry check can tell it changed.
    const stat = statSync(r.path("a.c"));
    r.write("a.c", "cccc\n");
    utimesSync(r.path("a.c"), stat.atime, stat.mtime);
    // Record in a later second than the index was written (50 ms past it: file times lag the clock a little).
    const written = statSync(join(r.gitDir(), "index")).mtimeMs;
    await waitFor(() => Date.now() >= (Math.floor(written / 1000) + 1) * 1000 + 50, "a later second than the index's");
    const s = await snapIn(r);
    expect(r.g("cat-file", "blob", `${s.tree}:index/a.c`)).toBe("bbbb");
    expect(r.g("cat-file", "blob", `${s.tree}:worktree/a.c`)).toBe("cccc");
  });
});
