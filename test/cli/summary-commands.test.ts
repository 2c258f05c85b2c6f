// Words that are true (issue #42): a snapshot after a script's commands says
// how many there were and what each changed beyond the first one's words, and
// HEAD's reflog line names a snapshot only when it describes that change.
import { describe, expect, test } from "bun:test";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { openRepo } from "../../core/repo.ts";
import { record } from "../../core/record.ts";

/** Record the state as the worker does after `commands` Git commands it could not tell apart. */
async function recordAfter(r: TestRepo, commands: number): Promise<string> {
  const made = await record(await openRepo(r.at()), { kind: "change", commands });
  if (!made.created) throw new Error("nothing recorded");
  return made.snapshot.summary;
}

describe("a snapshot after several commands names what each changed and counts them", () => {
  test("checkout then branch -D: the checkout's words, the deleted branch, and the count", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.git(["branch", "foo"]);
    r.git(["checkout", "-q", "-b", "bar"]);
    r.commit("on bar", { "b.txt": "b\n" });
    expect((await r.run(["snapshot"])).code).toBe(0);
    r.git(["checkout", "-q", "main"]);
    r.git(["branch", "-D", "-q", "foo"]);
    expect(await recordAfter(r, 2)).toBe("checkout: moving from bar to main; branch foo deleted (2 commands)");
    // What is left staged or edited after the commands is named too; what followed HEAD is not.
    r.git(["checkout", "-q", "bar"]);
    r.write("c.txt", "c\n");
    r.git(["add", "c.txt"]);
    expect(await recordAfter(r, 2)).toBe("checkout: moving from main to bar; staged: c.txt (2 commands)");
  });

  test("add then commit: the commit's words and the count, the staging it committed unsaid", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.write("a", "a\n");
    r.write("m", "m\n");
    expect((await r.run(["snapshot"])).code).toBe(0);
    r.git(["add", "a", "m"]);
    r.git(["commit", "-qm", "add a and m"]);
    expect(await recordAfter(r, 2)).toBe("commit: add a and m (2 commands)");
    // With no reflog line of theirs, what differs, and the count.
    r.git(["branch", "x"]);
    r.write("a", "edited\n");
    r.git(["add", "a"]);
    expect(await recordAfter(r, 2)).toBe("branch x created; staged: a (2 commands)");
  });
});

describe("HEAD's reflog line names a snapshot only when it describes the change", () => {
  test("a commit and a reset never recorded: a later `git add` is named by what it staged", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    expect((await r.run(["snapshot"])).code).toBe(0);
    r.commit("gone", { "g.txt": "g\n" });
    r.git(["reset", "-q", "--hard", "HEAD~1"]);
    r.write("n.txt", "n\n");
    r.git(["add", "n.txt"]);
    expect((await r.run(["snapshot"])).code).toBe(0);
    expect((await r.snapshotsIn())[0]!.summary).toBe("staged: n.txt");
  });

  test("a reset --hard that changed nothing: the next `git add` is not named after it; one that discarded edits is", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    expect((await r.run(["snapshot"])).code).toBe(0);
    r.git(["reset", "-q", "--hard"]);
    expect((await r.run(["snapshot"])).stdout).toMatch(/^no change since #1/);
    r.write("b.txt", "b\n");
    r.git(["add", "b.txt"]);
    expect((await r.run(["snapshot"])).code).toBe(0);
    expect((await r.snapshotsIn())[0]!.summary).toBe("staged: b.txt");
    // HEAD moved: the line says it, whenever it was written.
    r.commit("next", { "c.txt": "c\n" });
    expect((await r.run(["snapshot"])).code).toBe(0);
    expect((await r.snapshotsIn())[0]!.summary).toBe("commit: next");
    // A reset --hard that discarded edits is what its line says.
    r.write("a.txt", "edited\n");
    expect((await r.run(["snapshot"])).code).toBe(0);
    r.git(["reset", "-q", "--hard"]);
    expect((await r.run(["snapshot"])).code).toBe(0);
    expect((await r.snapshotsIn())[0]!.summary).toBe("reset: moving to HEAD");
  });
});
