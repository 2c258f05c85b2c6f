// The user's split index (core.splitIndex, `git update-index --split-index`,
// GIT_TEST_SPLIT_INDEX) beside git-undo's own indexes. A split index keeps
// most entries in <gitdir>/sharedindex.<id>, and every write of a new one
// deletes the others older than splitIndex.sharedIndexExpire: git-undo's
// copies must never take the user's shared index away, so that every Git
// command keeps working, and every snapshot must still restore.
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, sharedIndexOf, type TestRepo } from "../helpers/repo.ts";

/** The shared index files in the repository's git dir. */
const sharedIndexes = (r: TestRepo): string[] => readdirSync(r.gitDir()).filter((f) => f.startsWith("sharedindex.")).sort();

/** Git works on the user's index: status and fsck, and the index's shared part is there when it has one. */
function gitWorks(r: TestRepo, step: string): void {
  for (const args of [["status", "--porcelain"], ["fsck", "--no-progress"], ["ls-files", "-s"]]) {
    const out = r.git(args, { allowFail: true });
    if (out.code !== 0) throw new Error(`after ${step}: git ${args.join(" ")} failed: ${out.stderr}`);
  }
  const shared = sharedIndexOf(r);
  if (shared) expect(sharedIndexes(r)).toContain(shared);
  // git-undo's kept index is never split: no shared index of its own in <gitdir>.
  expect(sharedIndexOf(r, join(r.gitDir(), "undo", "worktree-index"))).toBeNull();
}

/** Record in-process, as a hook's recording would after the step; then Git must still work. */
async function recordAfter(r: TestRepo, step: string): Promise<void> {
  const out = await r.run(["snapshot"]);
  if (out.code !== 0 && out.code !== 1) throw new Error(`snapshot after ${step} exited ${out.code}: ${out.stderr}`);
  expect(out.stderr).toBe("");
  gitWorks(r, step);
}

/**
 * The index and worktree trees by the spec's method, in plain Git on a copy of
 * the real index: not split and expiring nothing, so that it disturbs nothing.
 */
function plainTrees(r: TestRepo): { index: string; worktree: string } {
  const env = { GIT_INDEX_FILE: join(mkdtempSync(join(r.dir, "..", "plain-")), "index") };
  copyFileSync(join(r.gitDir(), "index"), env.GIT_INDEX_FILE);
  const git = (...args: string[]) => r.git(["-c", "core.splitIndex=false", "-c", "splitIndex.sharedIndexExpire=never", ...args], { env }).stdout.trim();
  const index = git("write-tree");
  git("add", "-A");
  return { index, worktree: git("write-tree") };
}

/** Restore every snapshot (or every `nth`) in turn: each gives back its index and files, and Git keeps working. */
async function snapshotsRestore(r: TestRepo, nth = 1): Promise<void> {
  const snapshots = (await r.snapshotsIn()).filter((s) => s.kind !== "restore");
  expect(snapshots.length).toBeGreaterThan(3);
  for (const s of snapshots.filter((_, i) => i % nth === 0)) {
    const out = await r.run(["restore", String(s.number)]);
    if (out.code !== 0) throw new Error(`restore ${s.number} exited ${out.code}: ${out.stderr}${out.stdout}`);
    gitWorks(r, `restore ${s.number}`);
    expect(plainTrees(r)).toEqual({ index: r.g("rev-parse", `${s.commit}:index`), worktree: r.g("rev-parse", `${s.commit}:worktree`) });
  }
}

describe("a split index whose shared indexes expire at once (splitIndex.sharedIndexExpire=now)", () => {
  test("core.splitIndex=true: add, commit, reset, checkout and split toggles, each recorded; Git works throughout, every snapshot restores", async () => {
    const r = makeRepo();
    r.git(["config", "core.splitIndex", "true"]);
    r.git(["config", "splitIndex.sharedIndexExpire", "now"]);
    r.commit("base", { "a.txt": "a\n", "b.txt": "b\n" });
    await recordAfter(r, "the first commit");
    // Many untracked files: add -A on a copy of the index changes most of its
    // entries, which makes Git write a new shared index for that copy.
    for (let i = 0; i < 12; i++) r.write(`new/${i}.txt`, `${i}\n`);
    await recordAfter(r, "new untracked files");
    const steps: [string, () => void][] = [
      ["git add", () => r.git(["add", "new/0.txt", "new/1.txt"])],
      ["git commit", () => r.git(["commit", "-q", "-m", "two"])],
      ["an edit", () => r.write("a.txt", "edited\n")],
      ["git add -A", () => r.git(["add", "-A"])],
      ["git commit -a", () => r.git(["commit", "-q", "-am", "three"])],
      ["git reset", () => r.git(["reset", "-q", "HEAD~1"])],
      ["git checkout -b", () => r.git(["checkout", "-q", "-b", "side"])],
      ["git commit on side", () => r.commit("side", { "side.txt": "side\n" })],
      ["git checkout main", () => r.git(["checkout", "-q", "main"])],
      ["git update-index --no-split-index", () => r.git(["update-index", "--no-split-index"])],
      ["git update-index --split-index", () => r.git(["update-index", "--split-index"])],
      ["core.splitIndex=false and a write", () => (r.git(["config", "core.splitIndex", "false"]), r.write("c.txt", "c\n"), r.git(["add", "c.txt"]))],
      ["core.splitIndex=true and a write", () => (r.git(["config", "core.splitIndex", "true"]), r.write("d.txt", "d\n"), r.git(["add", "d.txt"]))],
      ["git reset --hard", () => r.git(["reset", "-q", "--hard"])],
    ];
    for (const [step, run] of steps) {
      run();
      gitWorks(r, step);
      await recordAfter(r, step);
    }
    await snapshotsRestore(r);
  });

  test("split by GIT_TEST_SPLIT_INDEX, core.splitIndex unset: git-undo's indexes stay whole", async () => {
    const r = makeRepo();
    r.env = { ...r.env, GIT_TEST_SPLIT_INDEX: "1" };
    r.git(["config", "splitIndex.sharedIndexExpire", "now"]);
    r.commit("base", { "a.txt": "a\n", "b.txt": "b\n" });
    // Git before 2.34 splits only an index written from nothing: split it once.
    r.git(["update-index", "--split-index"]);
    expect(sharedIndexOf(r)).not.toBeNull();
    for (let i = 0; i < 12; i++) r.write(`new/${i}.txt`, `${i}\n`);
    await recordAfter(r, "new untracked files");
    r.git(["add", "new"]);
    await recordAfter(r, "git add");
    r.git(["commit", "-q", "-m", "two"]);
    await recordAfter(r, "git commit");
    r.write("a.txt", "edited\n");
    await recordAfter(r, "an edit");
    r.git(["checkout", "-q", "-b", "side"]);
    await recordAfter(r, "git checkout -b");
    await snapshotsRestore(r);
  });
});

describe("Git's own split-index tests (t1700), each step recorded", () => {
  test("split on and off by update-index and by configuration, maxPercentChange, expiry: Git finds its index, no shared index is git-undo's, snapshots restore", async () => {
    const r = makeRepo();
    r.commit("base", { "base.txt": "base\n" });
    const step = async (name: string, run: () => void) => {
      run();
      gitWorks(r, name);
      await recordAfter(r, name);
    };
    /** A new file, a few seconds old (t1700's create_non_racy_file), added to the index. */
    const addFile = (name: string) => {
      r.write(name, "");
      const past = Date.now() / 1000 - 5;
      utimesSync(r.path(name), past, past);
      r.git(["update-index", "--add", name]);
    };
    /** Every shared index's time set `secondsAgo` back (test-tool chmtime). */
    const ageShared = (secondsAgo: number) => {
      const then = Date.now() / 1000 - secondsAgo;
      for (const f of sharedIndexes(r)) utimesSync(join(r.gitDir(), f), then, then);
    };
    await step("enable split index", () => (r.git(["config", "splitIndex.maxPercentChange", "100"]), r.git(["update-index", "--split-index"])));
    await step("add one file", () => addFile("one"));
    await step("disable split index", () => r.git(["update-index", "--no-split-index"]));
    await step("enable split index again", () => r.git(["update-index", "--split-index"]));
    await step("modify original file", () => (r.write("one", "xyz\n"), r.git(["update-index", "one"])));
    await step("add another file", () => addFile("two"));
    await step("remove file not in base index", () => r.git(["update-index", "--force-remove", "two"]));
    await step("remove file in base index", () => r.git(["update-index", "--force-remove", "one"]));
    await step("add original file back", () => addFile("one"));
    await step("add new file", () => addFile("two"));
    await step("unify index", () => r.git(["update-index", "--no-split-index"]));
    await step("core.splitIndex true", () => (r.git(["config", "core.splitIndex", "true"]), addFile("three")));
    await step("core.splitIndex false", () => (r.git(["config", "core.splitIndex", "false"]), r.git(["update-index", "--force-remove", "three"])));
    await step("core.splitIndex back to true", () => (r.git(["config", "core.splitIndex", "true"]), addFile("three"), addFile("four")));
    await step("maxPercentChange unset", () => (r.git(["config", "--unset", "splitIndex.maxPercentChange"]), addFile("five"), addFile("six")));
    await step("maxPercentChange 0", () => (r.git(["config", "splitIndex.maxPercentChange", "0"]), addFile("seven"), addFile("eight")));
    // The expiry steps count the shared indexes: Git's own, and none of git-undo's.
    await step("expire after 2 weeks by default", () => {
      addFile("ten");
      ageShared(15 * 86400);
      addFile("twelve");
      expect(sharedIndexes(r).length).toBeLessThanOrEqual(2);
    });
    await step("sharedIndexExpire 16 days", () => {
      r.git(["config", "splitIndex.sharedIndexExpire", "16.days.ago"]);
      addFile("thirteen");
      ageShared(17 * 86400);
      addFile("fourteen");
      expect(sharedIndexes(r).length).toBeLessThanOrEqual(2);
    });
    await step("sharedIndexExpire never", () => {
      r.git(["config", "splitIndex.sharedIndexExpire", "never"]);
      ageShared(10 * 365 * 86400);
      addFile("fifteen");
      expect(sharedIndexes(r).length).toBeGreaterThan(1);
    });
    await step("sharedIndexExpire now", () => {
      r.git(["config", "splitIndex.sharedIndexExpire", "now"]);
      ageShared(1);
      addFile("sixteen");
      expect(sharedIndexes(r).length).toBeLessThanOrEqual(2);
    });
    // Shared indexes all deleted by hand, then exactly one made by Git, however shared the repository: none is git-undo's.
    for (const mode of ["0666", "0642"]) {
      await step(`core.sharedRepository ${mode}`, () => {
        r.git(["config", "core.splitIndex", "false"]);
        r.git(["update-index", "--force-remove", "one"]);
        for (const f of sharedIndexes(r)) rmSync(join(r.gitDir(), f));
        r.git(["config", "core.sharedRepository", mode]);
        r.git(["config", "core.splitIndex", "true"]);
        addFile("one");
        expect(sharedIndexes(r)).toHaveLength(1);
      });
      expect(sharedIndexes(r)).toHaveLength(1);
    }
    for (const name of ["seventeen", "eighteen", "nineteen"]) await step(`add ${name}`, () => addFile(name));
    await step("no split index by configuration", () => (r.git(["config", "core.splitIndex", "false"]), addFile("twenty")));
    // A restore costs more than a recording: every fourth, splits and expiries among them.
    await snapshotsRestore(r, 4);
  });
});
