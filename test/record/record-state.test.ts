// Recording the stash and in-progress operations, each made for real by Git.
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { blobText, entries, refLine, snap, snapIn } from "../helpers/snap.ts";

describe("the stash", () => {
  test("two entries: the stash blob lists them newest first with their %gs messages", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "1\n" });
    r.write("a.c", "2\n");
    r.git(["stash", "push", "-q", "-m", "first\tone"]);
    r.write("a.c", "3\n");
    r.git(["stash", "-q"]);
    const s = await snapIn(r);
    expect(blobText(r, s.tree, "stash")).toBe(r.git(["stash", "list", "--format=%H%x09%gs"]).stdout);
    expect(blobText(r, s.tree, "stash").split("\n")[1]).toContain("On main: first one");
    const top = r.g("rev-parse", "refs/stash");
    expect(blobText(r, s.tree, "refs")).toContain(refLine("refs/stash", top, "commit"));
  });

  test("an empty stash has no stash entry", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "1\n" });
    r.write("a.c", "2\n");
    r.git(["stash", "-q"]);
    r.git(["stash", "drop", "-q"]);
    expect(entries(r, snap(r).tree).stash).toBeUndefined();
  });
});

/** Commits a.c on main and on a branch so that bringing one onto the other conflicts. */
function diverged(): { r: TestRepo; side: string } {
  const r = makeRepo();
  r.commit("base", { "a.c": "base\n", "b.c": "b\n" });
  r.git(["checkout", "-q", "-b", "side"]);
  const side = r.commit("side", { "a.c": "side\n" });
  r.git(["checkout", "-q", "main"]);
  r.commit("main", { "a.c": "main\n" });
  return { r, side };
}

const stateOf = (r: TestRepo): string | undefined => {
  const s = snap(r);
  return entries(r, s.tree).state ? blobText(r, s.tree, "state") : undefined;
};

describe("in-progress operations", () => {
  test("nothing in progress: no state entry", async () => {
    const { r } = diverged();
    expect(stateOf(r)).toBeUndefined();
  });

  test("a conflicted merge: MERGE_HEAD", async () => {
    const { r } = diverged();
    r.git(["merge", "side"], { allowFail: true });
    expect(stateOf(r)).toBe("MERGE_HEAD\n");
  });

  test("a stopped rebase: rebase-merge", async () => {
    const { r } = diverged();
    r.git(["rebase", "side"], { allowFail: true });
    expect(stateOf(r)).toBe("rebase-merge\n");
  });

  test("a stopped am: rebase-apply", async () => {
    const { r, side } = diverged();
    const patch = r.git(["format-patch", "-1", "--stdout", side]).stdout;
    r.git(["am", "-q"], { input: patch, allowFail: true });
    expect(stateOf(r)).toBe("rebase-apply\n");
  });

  test("a conflicted cherry-pick, and one of a range (sequencer)", async () => {
    const { r, side } = diverged();
    r.git(["cherry-pick", side], { allowFail: true });
    expect(stateOf(r)).toBe("CHERRY_PICK_HEAD\n");
    r.git(["cherry-pick", "--abort"]);
    r.git(["checkout", "-q", "side"]);
    r.commit("side 2", { "b.c": "side 2\n" });
    r.git(["checkout", "-q", "main"]);
    r.git(["cherry-pick", "main..side"], { allowFail: true });
    expect(stateOf(r)).toBe("CHERRY_PICK_HEAD\nsequencer\n");
  });

  test("a conflicted revert: REVERT_HEAD", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "1\n" });
    const two = r.commit("two", { "a.c": "2\n" });
    r.commit("three", { "a.c": "3\n" });
    r.git(["revert", "--no-edit", two], { allowFail: true });
    expect(stateOf(r)).toBe("REVERT_HEAD\n");
  });

  test("bisect: BISECT_LOG; with a conflicted merge too, in the spec's order", async () => {
    const { r } = diverged();
    r.git(["bisect", "start"]);
    expect(stateOf(r)).toBe("BISECT_LOG\n");
    r.git(["merge", "side"], { allowFail: true });
    expect(stateOf(r)).toBe("MERGE_HEAD\nBISECT_LOG\n");
  });

  test("every marker at once is listed in the spec's order", async () => {
    const r = makeRepo();
    r.commit("one");
    const gitDir = r.gitDir();
    // Created in reverse of the spec's order; the blob lists them in it.
    mkdirSync(join(gitDir, "sequencer"));
    for (const f of ["BISECT_LOG", "REVERT_HEAD", "CHERRY_PICK_HEAD", "MERGE_HEAD"]) writeFileSync(join(gitDir, f), `${r.g("rev-parse", "HEAD")}\n`);
    mkdirSync(join(gitDir, "rebase-apply"));
    mkdirSync(join(gitDir, "rebase-merge"));
    expect(stateOf(r)).toBe("rebase-merge\nrebase-apply\nMERGE_HEAD\nCHERRY_PICK_HEAD\nREVERT_HEAD\nBISECT_LOG\nsequencer\n");
  });

  test("a linked worktree sees only its own git directory's markers", async () => {
    const { r } = diverged();
    r.git(["worktree", "add", "-q", "-b", "wtb", "../wt"]);
    r.git(["merge", "side"], { allowFail: true });
    const wt = join(r.dir, "..", "wt");
    const s = await snapIn(r, [], { cwd: wt });
    expect(s.ref).toBe("refs/undo/worktrees/wt/snapshots/0000000001");
    expect(entries(r, s.tree).state).toBeUndefined();
    expect(stateOf(r)).toBe("MERGE_HEAD\n");
  });
});
