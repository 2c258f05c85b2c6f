// The stash (spec: Restoring step 6), linked worktrees, undo.worktree=false, and
// the restore snapshot (step 7).
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { makeRepo, tempDir, TestRepo } from "../helpers/repo.ts";
import { trailersOf } from "../helpers/restore.ts";

const stashList = (r: TestRepo) => r.git(["stash", "list", "--format=%H %gs"]).stdout;

describe("stash", () => {
  test("pushed, popped, dropped (a middle entry too) and cleared entries come back: same commits, messages, order", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "0\n" });
    for (const n of [1, 2, 3]) {
      r.write("a.txt", `${n}\n`);
      r.git(["stash", "-q", "-m", `entry ${n}`]);
    }
    const full = stashList(r);
    await r.okIn("snapshot"); // #1: three entries
    r.git(["stash", "drop", "-q", "stash@{1}"]); // the middle one: no hook reports this
    await r.okIn("snapshot"); // #2
    r.git(["stash", "pop", "-q"]);
    r.git(["reset", "-q", "--hard"]);
    await r.okIn("snapshot"); // #3
    r.git(["stash", "clear"]);
    await r.okIn("snapshot"); // #4
    r.write("a.txt", "pushed\n");
    r.git(["stash", "-q"]);
    const pushed = stashList(r);
    await r.okIn("snapshot"); // #5

    expect(await r.okIn("restore", "1")).toMatch(/stash: 3 entries back, 1 removed \(3 entries after\)/);
    expect(stashList(r)).toBe(full);
    await r.okIn("restore", "4");
    expect(stashList(r)).toBe("");
    await r.okIn("restore", "2");
    expect(stashList(r).split("\n").filter(Boolean)).toEqual([full.split("\n")[0]!, full.split("\n")[2]!]);
    await r.okIn("restore", "5");
    expect(stashList(r)).toBe(pushed);
    await r.okIn("restore", "1");
    // The entries still apply as Git's own.
    r.git(["stash", "pop", "-q", "stash@{2}"]);
    expect(r.read("a.txt")).toBe("1\n");
  });
});

describe("linked worktrees", () => {
  function withWorktree(): { r: TestRepo; w: TestRepo } {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n" });
    const path = join(tempDir("wt"), "feature-wt");
    r.git(["worktree", "add", "-q", "-b", "feature", path]);
    const w = new TestRepo(path, r.home);
    return { r, w };
  }

  test("a linked worktree restores its own sequence", async () => {
    const { r, w } = withWorktree();
    await r.okIn("snapshot"); // main #1
    await w.okIn("snapshot"); // worktree #1
    w.commit("feature work", { "b.txt": "feature\n" });
    await w.okIn("snapshot"); // worktree #2
    const out = await w.okIn();
    expect(out).toMatch(/^Restored #1 /m);
    expect(w.g("rev-parse", "feature")).toBe(r.g("rev-parse", "main"));
    expect(trailersOf(w, 3, "refs/undo/worktrees/feature-wt/snapshots/")).toMatchObject({ "Undo-Restored": "1", "Undo-From": "2" });
    // The main worktree's sequence is untouched.
    expect((await r.snapshotsIn()).map((s) => s.number)).toEqual([1]);
    expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/main");
  });

  test("a branch checked out in another worktree stays where it is unless --force, and the output names the worktree", async () => {
    const { r, w } = withWorktree();
    await r.okIn("snapshot"); // main #1: feature at c1
    w.commit("feature work", { "b.txt": "feature\n" });
    const featureTip = w.g("rev-parse", "HEAD");
    r.commit("main work", { "a.txt": "2\n" });
    await r.okIn("snapshot"); // main #2: feature moved under the other worktree
    const out = await r.okIn();
    expect(out).toMatch(new RegExp(`feature left at ${featureTip.slice(0, 7)}: checked out in worktree .*feature-wt`));
    expect(out).toMatch(/note: refs differs from #1: refs\/heads\/feature/);
    expect(r.g("rev-parse", "feature")).toBe(featureTip);
    expect(r.read("a.txt")).toBe("1\n");
    // --force moves it.
    await r.okIn("restore", "2");
    await r.okIn("--force");
    expect(r.g("rev-parse", "feature")).toBe(r.g("rev-parse", "main"));
  });
});

test("undo.worktree=false: refs, HEAD, index and stash only; the output says the files were left alone", async () => {
  const r = makeRepo();
  r.git(["config", "undo.worktree", "false"]);
  const c1 = r.commit("one", { "a.txt": "1\n" });
  await r.okIn("snapshot");
  r.commit("two", { "a.txt": "2\n", "b.txt": "b\n" });
  await r.okIn("snapshot");
  r.write("scratch.txt", "never recorded\n");
  const out = await r.okIn();
  expect(out).toContain("files left alone: undo.worktree is false");
  expect(r.g("rev-parse", "main")).toBe(c1);
  expect(r.g("ls-files")).toBe("a.txt");
  expect(r.read("a.txt")).toBe("2\n");
  expect(r.read("b.txt")).toBe("b\n");
  expect(r.read("scratch.txt")).toBe("never recorded\n");
});

test("the restore snapshot is always recorded, and a part that differs from the target is reported (a submodule checkout, as no file)", async () => {
  const sub = makeRepo();
  const s1 = sub.commit("sub one", { "s.txt": "1\n" });
  const s2 = sub.commit("sub two", { "s.txt": "2\n" });
  const r = makeRepo();
  r.commit("one", { "a.txt": "1\n" });
  r.git(["-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.dir, "sub"]);
  r.git(["-C", "sub", "checkout", "-q", s1]);
  r.git(["add", "sub"]);
  r.git(["commit", "-q", "-m", "sub at one"]);
  await r.okIn("snapshot"); // #1
  r.git(["-C", "sub", "checkout", "-q", s2]);
  r.git(["add", "sub"]);
  r.git(["commit", "-q", "-m", "sub at two"]);
  await r.okIn("snapshot"); // #2
  const out = await r.okIn();
  // The checkout is left as it is, said once; no file changed on disk (issue #30.11).
  expect(out).toContain(`submodule sub: #1 records ${s1.slice(0, 7)}, its files stay as they are (git submodule update checks it out)`);
  expect(out).not.toMatch(/files:|note: worktree differs/);
  expect(r.g("ls-files", "-s", "sub")).toContain(s1);
  expect(r.g("-C", "sub", "rev-parse", "HEAD")).toBe(s2);
  // Restoring what is already there still records a restore snapshot.
  const again = await r.okIn("restore", "3");
  expect(again).toMatch(/nothing changes/);
  expect(trailersOf(r, 4)).toMatchObject({ "Undo-Kind": "restore", "Undo-Restored": "3", "Undo-From": "3" });
});
