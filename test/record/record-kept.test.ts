// The kept worktree index (core/git-data/index/kept.ts): a recording may reuse the
// index the last one ended with instead of a fresh copy of the real index,
// but the worktree tree must be exactly what the spec's method gives (add -A
// and write-tree on a copy of the index). Every case compares with plain Git
// run here, and says whether the kept index was used or, where it could give
// a different tree, refused.
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { captureLive } from "../../core/capture.ts";
import { record } from "../../core/record.ts";
import { worktreeRecords } from "../../core/git-data/index/command-output.ts";
import { cacheTreeRoot } from "../../core/git-data/index/file.ts";
import { openRepo } from "../../core/repo.ts";
import { copyRepo, makeRepo, sharedIndexOf, TestRepo } from "../helpers/repo.ts";
import { seams } from "../../core/seams.ts";

/** Each repository's git dir, asked of Git once (a test's repository keeps its git dir). */
const gitDirs = new WeakMap<TestRepo, string>();
function gitDirOf(r: TestRepo): string {
  let dir = gitDirs.get(r);
  if (dir === undefined) gitDirs.set(r, (dir = r.gitDir()));
  return dir;
}

/** The spec's index and worktree trees, by plain Git on a copy of the real index. */
function specTrees(r: TestRepo): { index: string; worktree: string } {
  const dir = mkdtempSync(join(r.dir, "..", "spec-"));
  const env = { GIT_INDEX_FILE: join(dir, "index") };
  copyFileSync(join(gitDirOf(r), "index"), env.GIT_INDEX_FILE);
  // The spec's order: unmerged paths out, then the index tree.
  const unmerged = new Set(
    r.git(["ls-files", "-u", "-z"], { env }).stdout.split("\0").filter(Boolean).map((rec) => rec.slice(rec.indexOf("\t") + 1)),
  );
  if (unmerged.size) r.git(["update-index", "-z", "--force-remove", "--stdin"], { env, input: [...unmerged].map((p) => `${p}\0`).join("") });
  const index = r.git(["write-tree"], { env }).stdout.trim();
  r.git(["add", "-A", "--ignore-errors"], { env, allowFail: true });
  return { index, worktree: r.git(["write-tree"], { env }).stdout.trim() };
}

/**
 * Record in-process (without the suite's cross-check, to see the recorder
 * alone) and compare with plain Git; `checkedIgnores`: whether the recording
 * ran git check-ignore.
 */
async function recordAndCompare(r: TestRepo): Promise<{ fromKept: boolean; checkedIgnores: boolean }> {
  const suite = seams.verifyKept;
  seams.verifyKept = false;
  const spawns = join(mkdtempSync(join(r.dir, "..", "spawns-")), "trace");
  writeFileSync(spawns, "");
  const out = await (async () => record(await openRepo({ cwd: r.dir, env: { ...r.env, GIT_UNDO_TRACE_SPAWNS: spawns } }), { kind: "manual" }))().finally(() => {
    seams.verifyKept = suite;
  });
  const { index, worktree } = specTrees(r);
  expect(out.capture.state.worktree).toBe(worktree);
  expect(out.capture.state.index).toBe(index);
  return { fromKept: Boolean(out.capture.fromKept), checkedIgnores: /(^|\s)check-ignore\s/m.test(readFileSync(spawns, "utf8")) };
}

/** The shared index files in a git dir. */
const sharedIndexes = (gitDir: string): string[] => readdirSync(gitDir).filter((f) => f.startsWith("sharedindex.")).sort();
const keptIndexOf = (r: TestRepo): string => join(gitDirOf(r), "undo", "worktree-index");

/** Set every folder's time (and the files') back a day, so Git's untracked cache can trust them. */
function ageFolders(r: TestRepo): void {
  const day = Date.now() / 1000 - 86400;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === ".git") continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      utimesSync(p, day, day);
    }
    utimesSync(dir, day, day);
  };
  walk(r.dir);
}

/** A repository with untracked files in a few folders, recorded once (the kept index now exists). */
async function withUntracked(): Promise<TestRepo> {
  // The files and the commit are made once per file and copied (copyRepo); the
  // recording is each test's own, at the copy's path (the kept index names it).
  if (!untrackedTemplate || !existsSync(untrackedTemplate.dir)) {
    untrackedTemplate = makeRepo();
    untrackedTemplate.write(".gitignore", "*.log\n");
    untrackedTemplate.commit("base", { "src/a.c": "a\n", "src/deep/b.c": "b\n", "docs/readme.md": "r\n" });
    untrackedTemplate.write("src/new.c", "new\n");
    untrackedTemplate.write("notes/todo.txt", "todo\n");
    untrackedTemplate.write("notes/more/idea.txt", "idea\n");
    untrackedTemplate.write("build.log", "ignored\n");
  }
  const r = copyRepo(untrackedTemplate);
  expect((await recordAndCompare(r)).fromKept).toBe(false);
  return r;
}
let untrackedTemplate: TestRepo | undefined;

describe("the kept worktree index", () => {
  test("edits, new, changed and deleted untracked files, and deleted tracked files: reused, same tree as a fresh copy", async () => {
    const r = await withUntracked();
    r.write("src/a.c", "edited\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.write("notes/todo.txt", "changed\n");
    r.write("notes/third.txt", "third\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.remove("notes/more/idea.txt");
    r.remove("src/deep/b.c");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    // Same size, same second: Git's racy-entry check must still see the edit.
    r.write("notes/todo.txt", "CHANGED\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    // Nothing changed: the same tree again.
    expect((await recordAndCompare(r)).fromKept).toBe(true);
  });

  test("the real index moving on (add, commit, rm --cached, a branch switch): followed, same trees as a fresh copy", async () => {
    const r = await withUntracked();
    r.git(["add", "src/new.c"]);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.write("src/a.c", "edited\n");
    r.git(["commit", "-q", "-am", "two"]);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.git(["rm", "-q", "--cached", "src/deep/b.c"]);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.git(["checkout", "-q", "-b", "side"]);
    r.git(["add", "-A"]);
    r.git(["commit", "-q", "-m", "everything"]);
    r.git(["checkout", "-q", "main"]);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.git(["checkout", "-q", "side"]);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
  });

  test("an index change around an ignored file: rm --cached of a tracked ignored file, add -f of an ignored one", async () => {
    const r = await withUntracked();
    r.write("keep.log", "forced\n");
    r.git(["add", "-f", "keep.log"]);
    expect((await recordAndCompare(r)).fromKept).toBe(false);
    r.git(["rm", "-q", "--cached", "keep.log"]);
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("conflicts, a submodule, a committed .gitattributes and assume-unchanged entries take a fresh copy", async () => {
    const r = await withUntracked();
    r.git(["checkout", "-q", "-b", "other"]);
    r.commit("other", { "src/a.c": "other\n" });
    r.git(["checkout", "-q", "main"]);
    r.commit("main", { "src/a.c": "main\n" });
    await recordAndCompare(r);
    r.git(["merge", "-q", "other"], { allowFail: true });
    expect((await recordAndCompare(r)).fromKept).toBe(false);
    r.git(["merge", "--abort"]);
    await recordAndCompare(r);
    r.commit("attributes", { ".gitattributes": "*.txt text\n" });
    expect((await recordAndCompare(r)).fromKept).toBe(false);
    r.git(["update-index", "--assume-unchanged", "src/deep/b.c"]);
    expect((await recordAndCompare(r)).fromKept).toBe(false);
    r.git(["update-index", "--no-assume-unchanged", "src/deep/b.c"]);
    await recordAndCompare(r);
    const inner = makeRepo();
    inner.commit("inner", { "x.c": "x\n" });
    r.git(["-c", "protocol.file.allow=always", "submodule", "add", "-q", inner.dir, "sub"]);
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a recorded untracked file that a .gitignore now ignores leaves the tree", async () => {
    const r = await withUntracked();
    r.write(".gitignore", "*.log\nnotes/todo.txt\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a .gitignore that ignores itself and its folder ('*'), which no tree shows", async () => {
    const r = await withUntracked();
    r.write("notes/.gitignore", "*\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a rule in .git/info/exclude", async () => {
    const r = await withUntracked();
    writeFileSync(join(gitDirOf(r), "info", "exclude"), "src/new.c\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a tracked file that is ignored, deleted and then recreated comes back into the tree", async () => {
    const r = await withUntracked();
    r.write("keep.log", "forced\n");
    r.git(["add", "-f", "keep.log"]);
    await recordAndCompare(r);
    r.remove("keep.log");
    await recordAndCompare(r);
    r.write("keep.log", "back\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a repository created inside a recorded untracked folder becomes a gitlink", async () => {
    const r = await withUntracked();
    r.git(["init", "-q", "notes"]);
    r.git(["-C", "notes", "add", "-A"]);
    r.git(["-C", "notes", "-c", "user.name=Inner", "-c", "user.email=inner@example.com", "commit", "-q", "-m", "inner"]);
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a new .gitattributes that changes how untracked files hash", async () => {
    const r = await withUntracked();
    r.write("notes/crlf.txt", "one\r\ntwo\r\n");
    await recordAndCompare(r);
    r.write(".gitattributes", "*.txt text eol=lf\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
    // Its presence among the changed paths keeps the index from being kept at all.
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("attributes outside the working tree (info/attributes) and the configuration (core.autocrlf)", async () => {
    const r = await withUntracked();
    r.write("notes/crlf.txt", "one\r\ntwo\r\n");
    await recordAndCompare(r);
    writeFileSync(join(gitDirOf(r), "info", "attributes"), "*.txt text\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.git(["config", "core.autocrlf", "input"]);
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("an untracked file turned into a folder", async () => {
    const r = await withUntracked();
    r.remove("src/new.c");
    r.write("src/new.c/inside.c", "inside\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a file name that is not UTF-8 keeps the kept index out of use", async () => {
    const r = await withUntracked();
    writeFileSync(Buffer.concat([Buffer.from(`${r.dir}/notes/caf`), Buffer.from([0xe9]), Buffer.from(".txt")]), "latin-1 name\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a capture without capture.lock (a preview) neither uses nor keeps the kept index", async () => {
    const r = await withUntracked();
    const kept = join(gitDirOf(r), "undo", "worktree-index");
    const before = readFileSync(kept);
    const described = readFileSync(`${kept}.json`);
    r.write("src/a.c", "previewed\n");
    const capture = await (async () => captureLive(await openRepo(r.at())))();
    expect(capture.fromKept).toBeUndefined();
    expect(capture.state.worktree).toBe(specTrees(r).worktree);
    expect(readFileSync(kept).equals(before)).toBe(true);
    expect(readFileSync(`${kept}.json`).equals(described)).toBe(true);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
  });

  test("intent-to-add entries (index version 3) are never reused", async () => {
    const r = await withUntracked();
    r.git(["add", "-N", "src/new.c"]);
    await recordAndCompare(r);
    r.remove("src/new.c");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("git status rewriting the index with fresh stat data keeps it reusable; an assume-unchanged flag does not", async () => {
    const r = await withUntracked();
    // Same content, another mtime: status refreshes the entry and rewrites the index.
    utimesSync(r.path("src/a.c"), 1_000_000_000, 1_000_000_000);
    const before = readFileSync(join(gitDirOf(r), "index"));
    r.git(["status", "--porcelain"]);
    expect(readFileSync(join(gitDirOf(r), "index")).equals(before)).toBe(false);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    // A mode change is a change of entries: followed through the index trees.
    r.git(["update-index", "--chmod=+x", "src/a.c"]);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.git(["update-index", "--assume-unchanged", "src/deep/b.c"]);
    r.write("src/deep/b.c", "hidden edit\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a restore after recordings from the kept index: files back, and the next recording is right", async () => {
    const r = await withUntracked();
    r.write("src/a.c", "edited\n");
    r.write("notes/todo.txt", "changed\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    expect(r.undo(["restore", "1"]).code).toBe(0);
    expect(r.read("src/a.c")).toBe("a\n");
    expect(r.read("notes/todo.txt")).toBe("todo\n");
    // The real index holds the same entries as before, so the kept index may
    // serve again: refreshed against the restored files, it gives their tree.
    r.write("notes/third.txt", "third\n");
    await recordAndCompare(r);
    r.git(["add", "notes/third.txt"]);
    await recordAndCompare(r);
  });
});

describe("the kept index's untracked cache, and no split index", () => {
  test("folders the cache trusts: new files in them, in new folders and in a new nested repository", async () => {
    const r = await withUntracked();
    ageFolders(r);
    // Two recordings: the first refreshes the kept index against the aged files, the second finds its cache valid.
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    expect(readFileSync(keptIndexOf(r)).includes("UNTR")).toBe(true);
    r.write("notes/more/second.txt", "second\n");
    r.write("fresh/deep/er/file.txt", "in new folders\n");
    r.write("src/a.c", "edited\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    ageFolders(r);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.remove("notes/more/second.txt");
    r.write("notes/more/renamed.txt", "second\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    // A repository in a new folder: a gitlink in the spec's tree, never files of its own.
    r.git(["init", "-q", "other/repo"]);
    r.write("other/repo/inside.c", "inside\n");
    r.git(["-C", "other/repo", "add", "-A"]);
    r.git(["-C", "other/repo", "-c", "user.name=Inner", "-c", "user.email=inner@example.com", "commit", "-q", "-m", "inner"]);
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a repository moved elsewhere: a fresh copy first, then the kept index and its cache again", async () => {
    const first = await withUntracked();
    ageFolders(first);
    expect((await recordAndCompare(first)).fromKept).toBe(true);
    expect((await recordAndCompare(first)).fromKept).toBe(true);
    const moved = join(first.dir, "..", "moved");
    renameSync(first.dir, moved);
    const r = new TestRepo(moved, first.home);
    // The attribute files' digest names their paths, so the first recording takes a fresh copy.
    r.write("notes/more/after-move.txt", "new\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
    r.write("src/a.c", "edited\n");
    r.write("notes/another.txt", "another\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    ageFolders(r);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.write("notes/more/third.txt", "third\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
  });

  // (status.showUntrackedFiles=no means "record no untracked file": test/record/record-dotfiles.test.ts.)
  test("the user's status settings change nothing: untracked files listed file by file, a branch line, glob pathspecs", async () => {
    const r = await withUntracked();
    r.git(["config", "status.showUntrackedFiles", "all"]);
    r.git(["config", "status.branch", "true"]);
    await recordAndCompare(r); // the configuration changed: a fresh copy
    r.write("notes/new.txt", "new\n");
    r.write("src/a.c", "edited\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    // Names Git would read as patterns or magic are taken literally.
    r.write("star*.txt", "star\n");
    r.write(":(glob)odd", "odd\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    // ...and still when they are among the paths checked against the ignore
    // rules, with the user's GIT_GLOB_PATHSPECS, which check-ignore refuses.
    r.write("src/a.c", "again\n");
    r.env.GIT_GLOB_PATHSPECS = "1";
    try {
      expect((await recordAndCompare(r)).fromKept).toBe(true);
      r.write("src/a.c", "once more\n");
      expect((await recordAndCompare(r)).fromKept).toBe(true);
    } finally {
      delete r.env.GIT_GLOB_PATHSPECS;
    }
  });

  test("more changes than are worth naming: add -A on the whole kept index", async () => {
    const r = await withUntracked();
    for (let i = 0; i < 250; i++) r.write(`many/f${i}/file.txt`, `${i}\n`);
    r.write("src/a.c", "edited\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    for (let i = 0; i < 250; i += 2) r.remove(`many/f${i}/file.txt`);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
  });

  test("core.untrackedCache=false is kept to: no cache in the kept index", async () => {
    const r = await withUntracked();
    r.git(["config", "core.untrackedCache", "false"]);
    await recordAndCompare(r);
    r.write("notes/new.txt", "new\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    expect(readFileSync(keptIndexOf(r)).includes("UNTR")).toBe(false);
  });

  test("a SHA-256 repository: edits, a commit (its cache tree) and git add, each from the kept index", async () => {
    const r = makeRepo({ objectFormat: "sha256" });
    r.commit("base", { "src/a.c": "a\n", "docs/b.md": "b\n" });
    r.write("notes/todo.txt", "todo\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
    r.write("src/a.c", "edited\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    expect(sharedIndexOf(r, keptIndexOf(r))).toBeNull();
    r.git(["commit", "-q", "-am", "two"]);
    expect(cacheTreeRoot(readFileSync(join(gitDirOf(r), "index")), 32)).toBe(r.git(["rev-parse", "HEAD^{tree}"]).stdout.trim());
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    r.write("docs/b.md", "staged\n");
    r.git(["add", "docs/b.md"]);
    r.write("notes/more.txt", "more\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
  });

  test("never a split index, whatever changes; one an earlier version split is written whole, or dropped once its shared index is gone", async () => {
    const r = await withUntracked();
    r.write("src/a.c", "edited\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    // Most entries changing, which would make a split index write a new shared index.
    r.commit("many", Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`bulk/${i}.c`, `${i}\n`])));
    for (let i = 0; i < 40; i++) r.write(`bulk/${i}.c`, `${i} edited\n`);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    expect(sharedIndexOf(r, keptIndexOf(r))).toBeNull();
    expect(sharedIndexes(gitDirOf(r))).toEqual([]);
    // A kept index split as an earlier version left it: Git reads its shared index and writes it whole.
    const splitKept = () => r.git(["update-index", "--split-index"], { env: { GIT_INDEX_FILE: keptIndexOf(r) } });
    splitKept();
    const shared = sharedIndexes(gitDirOf(r));
    expect(shared).toHaveLength(1);
    r.write("src/a.c", "again\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    expect(sharedIndexOf(r, keptIndexOf(r))).toBeNull();
    // Its shared index is left to Git: the real index may link to the same file.
    expect(sharedIndexes(gitDirOf(r))).toEqual(shared);
    // Its shared index deleted (by hand, or by Git's expiry): dropped, and the
    // recording goes on from a fresh copy, nothing said; the next one reuses again.
    splitKept();
    for (const f of sharedIndexes(gitDirOf(r))) rmSync(join(gitDirOf(r), f));
    r.write("src/a.c", "once more\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
    splitKept();
    for (const f of sharedIndexes(gitDirOf(r))) rmSync(join(gitDirOf(r), f));
    r.write("src/a.c", "and again\n");
    const recorded = await r.run(["snapshot"]);
    expect(recorded.code).toBe(0);
    expect(recorded.stderr).toBe("");
    expect(r.git(["status", "--porcelain"]).code).toBe(0);
    r.write("notes/todo.txt", "yet again\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    expect(sharedIndexes(gitDirOf(r))).toEqual([]);
    // No hooks were installed (exit 1, nothing to remove), yet the recorder's files go.
    expect(r.undo(["uninstall"]).code).toBe(1);
    expect(existsSync(keptIndexOf(r))).toBe(false);
  });
});

describe("the kept index's list of paths where the two indexes may differ", () => {
  const listed = (r: TestRepo): string[] => (JSON.parse(readFileSync(join(gitDirOf(r), "undo", "worktree-index.json"), "utf8")) as { paths: string[] }).paths;

  test("grown past 128 by paths since committed, it is cut to where they differ now; the recordings stay those of a fresh copy", async () => {
    const r = makeRepo();
    r.write(".gitignore", "*.log\n");
    r.commit("base", { "src/a.c": "a\n" });
    await recordAndCompare(r); // a fresh copy: nothing differs
    for (let i = 0; i < 100; i++) r.write(`gen/f${i}.txt`, `${i}\n`);
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    expect(listed(r).length).toBe(100);
    r.git(["add", "gen"]);
    r.git(["commit", "-q", "-m", "gen"]);
    expect((await recordAndCompare(r)).fromKept).toBe(true); // the commit: the two indexes now agree on gen/
    expect(listed(r).length).toBe(100);
    r.write("src/a.c", "edited\n");
    const fresh = Array.from({ length: 40 }, (_, i) => `new/n${i}.txt`);
    for (const f of fresh) r.write(f, "new\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true); // 141 listed: cut
    expect(listed(r).sort()).toEqual([...fresh, "src/a.c"].sort());
    // The rules are read again for the shorter list: checked once, then kept.
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: true });
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: false });
    // A path cut from the list is followed again when it changes.
    r.write("gen/f7.txt", "edited\n");
    r.write("gen/f8.log", "ignored\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    expect(listed(r)).toContain("gen/f7.txt");
    expect(listed(r)).not.toContain("gen/f8.log");
  });

  test("a list exact since a fresh copy is not cut again until it has doubled", async () => {
    const r = makeRepo();
    r.commit("base", { "src/a.c": "a\n" });
    for (let i = 0; i < 150; i++) r.write(`gen/f${i}.txt`, `${i}\n`);
    await recordAndCompare(r); // a fresh copy: the 150 untracked files, exactly
    r.git(["add", "gen"]);
    r.git(["commit", "-q", "-m", "gen"]);
    expect((await recordAndCompare(r)).fromKept).toBe(true); // the indexes agree on gen/ now, still listed
    r.write("src/a.c", "edited\n");
    expect((await recordAndCompare(r)).fromKept).toBe(true);
    // Grown, but not to twice the 150 of the fresh copy: not cut (cut, it would be src/a.c alone).
    expect(listed(r).length).toBe(151);
    expect(listed(r)).toContain("src/a.c");
  });
});

describe("worktreeRecords", () => {
  const parse = (s: string) => worktreeRecords(Buffer.from(s))?.map((r) => Buffer.from(r.path).toString());
  test("the paths add -A changes; staged-only entries and headers skipped; conflicts refused", () => {
    expect(parse("## main\0 M a.c\0A  staged.c\0AM both.c\0 D gone.c\0?? new dir/\0?? new.txt\0 T link\0")).toEqual([
      "a.c",
      "both.c",
      "gone.c",
      "new dir",
      "new.txt",
      "link",
    ]);
    expect(parse("")).toEqual([]);
    expect(parse("UU both.c\0")).toBeUndefined();
    expect(parse("DD both.c\0")).toBeUndefined();
    expect(parse(" M unterminated")).toBeUndefined();
    expect(parse("XY odd\0")).toBeUndefined();
  });
});

// check-ignore runs only when the ignore rules above the kept paths may have
// changed since each of them was last found not ignored (core/git-data/index/kept.ts
// ignoreRulesDigest); every case still gives the spec's tree.
describe("the ignore rules the kept index was checked under", () => {
  /** withUntracked, then a recording that checks the kept paths and keeps the rules it checked them under. */
  async function settled(): Promise<TestRepo> {
    const r = await withUntracked();
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: true });
    return r;
  }

  test("nothing changed, or an edit where the kept paths already are: no check-ignore", async () => {
    const r = await settled();
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: false });
    r.write("notes/todo.txt", "todo, edited\n");
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: false });
  });

  test("an edit elsewhere is checked once, then no more", async () => {
    const r = await settled();
    r.write("src/a.c", "edited\n");
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: false });
    // src/a.c joined the kept paths unchecked: the next recording checks them all.
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: true });
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: false });
  });

  for (const [what, change] of [
    ["a new .gitignore in a folder above a kept path", (r: TestRepo) => r.write("notes/more/.gitignore", "idea.txt\n")],
    ["a rule added to the top .gitignore", (r: TestRepo) => r.write(".gitignore", "*.log\nsrc/new.c\n")],
    ["a rule in .git/info/exclude", (r: TestRepo) => writeFileSync(join(gitDirOf(r), "info", "exclude"), "notes/todo.txt\n")],
    ["a rule in the user's excludes file", (r: TestRepo) => r.write(join("..", "home", ".config", "git", "ignore"), "notes/\n")],
  ] as const) {
    test(`${what}: checked, and the file it ignores leaves the tree`, async () => {
      const r = await settled();
      expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: false });
      change(r);
      expect(await recordAndCompare(r)).toEqual({ fromKept: false, checkedIgnores: true });
    });
  }

  test("a tracked file that is ignored, deleted after the rules were kept: never taken as checked", async () => {
    const r = await withUntracked();
    r.write("keep.log", "forced\n");
    r.git(["add", "-f", "keep.log"]);
    await recordAndCompare(r);
    await recordAndCompare(r);
    r.remove("keep.log");
    await recordAndCompare(r);
    r.write("keep.log", "back\n");
    expect((await recordAndCompare(r)).fromKept).toBe(false);
  });

  test("a commit (the real index moved on): checked with the paths it changed, the rules kept for the next recording", async () => {
    const r = await settled();
    r.write("lib/y.tmp", "untracked\n");
    await recordAndCompare(r); // lib/y.tmp joins the kept paths, checked next time
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: true });
    r.write("lib/x.c", "x\n");
    r.git(["add", "lib/x.c"]);
    r.git(["commit", "-q", "-m", "lib"]);
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: true });
    expect(await recordAndCompare(r)).toEqual({ fromKept: true, checkedIgnores: false });
    // A rule in the folder the commit added, over the untracked file there: checked, and the file leaves the tree.
    r.write("lib/.gitignore", "*.tmp\n");
    expect((await recordAndCompare(r)).checkedIgnores).toBe(true);
  });

  test("a relative core.excludesFile (read from where Git runs): checked every time", async () => {
    const r = await withUntracked();
    r.git(["config", "core.excludesFile", "my-ignores"]);
    await recordAndCompare(r);
    expect((await recordAndCompare(r)).checkedIgnores).toBe(true);
    expect((await recordAndCompare(r)).checkedIgnores).toBe(true);
  });

  test("a .gitignore that is a symbolic link: checked every time", async () => {
    const r = await withUntracked();
    r.write("rules.txt", "*.tmp\n");
    symlinkSync("../rules.txt", join(r.dir, "notes", ".gitignore"));
    await recordAndCompare(r);
    expect((await recordAndCompare(r)).checkedIgnores).toBe(true);
    expect((await recordAndCompare(r)).checkedIgnores).toBe(true);
  });
});
