// git undo diff <n> [<m>]: what a snapshot changed, in Git's diff format.
import { describe, expect, test } from "bun:test";
import { makeRepo } from "../helpers/repo.ts";

describe("git undo diff", () => {
  test("what each snapshot changed against the one before: refs, HEAD, index, files, stash", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    await r.okIn("snapshot"); // #1
    r.write("a.txt", "a\nedited\n");
    await r.okIn("snapshot"); // #2: the file
    r.git(["add", "a.txt"]);
    await r.okIn("snapshot"); // #3: the index
    const commit = r.commit("second");
    await r.okIn("snapshot"); // #4: the branch
    r.git(["checkout", "-q", "-b", "topic"]);
    await r.okIn("snapshot"); // #5: HEAD
    r.write("a.txt", "stashed\n");
    r.git(["stash", "-q"]);
    await r.okIn("snapshot"); // #6: the stash (and the file back)

    expect(r.ok("diff", "2", "--name-only")).toBe("worktree/a.txt\n");
    expect(r.ok("diff", "3", "--name-only")).toBe("index/a.txt\n");
    expect(r.ok("diff", "4", "--name-only")).toBe("refs\n");
    expect(r.ok("diff", "5", "--name-only")).toBe("HEAD\nrefs\n");
    expect(r.ok("diff", "6", "--name-only")).toBe("refs\nstash\n");
    const patch = r.ok("diff", "2");
    expect(patch).toContain("diff --git a/worktree/a.txt b/worktree/a.txt");
    expect(patch).toContain("+edited");
    expect(r.ok("diff", "4")).toContain(`+refs/heads/main\t${commit}\tcommit`);
    expect(r.ok("diff", "5")).toContain("-ref: refs/heads/main\n+ref: refs/heads/topic");
    expect(r.ok("diff", "6")).toMatch(/\+[0-9a-f]{40}\tWIP on topic: /);
    expect(r.ok("diff", "3", "--stat")).toMatch(/index\/a\.txt \| 1 \+\n 1 file changed, 1 insertion\(\+\)/);
    // Between two snapshots, in the order given; a date names one too.
    expect(r.ok("diff", "1", "3", "--name-only")).toBe("index/a.txt\nworktree/a.txt\n");
    expect(r.ok("diff", "3", "1")).toContain("-edited");
    expect(r.ok("diff", "@{now}", "--name-only")).toBe("refs\nstash\n");
    // The first snapshot: everything it holds is new.
    expect(r.ok("diff", "1", "--name-only")).toBe("HEAD\nindex/a.txt\nrefs\nworktree/a.txt\n");
  });

  test("usage errors and unknown snapshots", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    await r.okIn("snapshot");
    expect(r.undo(["diff"]).code).toBe(129);
    expect(r.undo(["diff", "1", "2", "3"]).code).toBe(129);
    expect(r.undo(["diff", "1", "--stat", "--name-only"]).code).toBe(129);
    expect(r.undo(["diff", "9"]).code).toBe(128);
    expect(r.undo(["diff", "-h"]).stdout).toContain("usage: git undo diff <n> [<m>]");
  });
});
