// Summary lines: HEAD's reflog message when it is new, otherwise what differs
// from the previous snapshot, always one line of sensible length.
import { describe, expect, test } from "bun:test";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { commitMessage, snap, snapIn } from "../helpers/snap.ts";

const summary = (r: TestRepo): string => {
  const s = snap(r);
  const line = commitMessage(r, s.commit).split("\n", 1)[0]!;
  expect(s.out).toBe(`#${Number(s.ref.slice(-10))} ${line}\n`);
  return line;
};

function base(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.c": "a\n", "b.c": "b\n" });
  snap(r);
  return r;
}

describe("what differs from the previous snapshot", () => {
  test("branches and tags created and deleted", async () => {
    const r = base();
    r.git(["branch", "feature"]);
    expect(summary(r)).toBe("branch feature created");
    r.git(["branch", "-q", "-D", "feature"]);
    expect(summary(r)).toBe("branch feature deleted");
    r.git(["tag", "v1"]);
    expect(summary(r)).toBe("tag v1 created");
  });

  test("staged, edited, untracked", async () => {
    const r = base();
    r.write("a.c", "staged\n");
    r.git(["add", "a.c"]);
    expect(summary(r)).toBe("staged: a.c");
    r.write("a.c", "edited\n");
    r.write("b.c", "edited\n");
    expect(summary(r)).toBe("edited: a.c, b.c");
    r.write("notes.txt", "n\n");
    expect(summary(r)).toBe("untracked: notes.txt");
  });

  test("a stash push is the stash, not its reset of HEAD; a pop is a drop plus what came back", async () => {
    const r = base();
    r.write("a.c", "wip\n");
    r.git(["stash", "-q"]);
    // git stash wrote a new HEAD reflog entry without moving HEAD.
    expect(r.g("reflog", "-1", "--format=%gs", "HEAD")).toBe("reset: moving to HEAD");
    expect(summary(r)).toBe("stash: 1 entry pushed");
    r.git(["stash", "pop", "-q"]);
    expect(summary(r)).toBe("stash: 1 entry dropped; edited: a.c");
  });

  test("a conflict names its paths", async () => {
    const r = makeRepo();
    r.commit("base", { "a.c": "base\n" });
    r.git(["checkout", "-q", "-b", "other"]);
    r.commit("other", { "a.c": "other\n" });
    r.git(["checkout", "-q", "main"]);
    r.commit("main", { "a.c": "main\n" });
    await snapIn(r);
    r.git(["merge", "other"], { allowFail: true });
    expect(summary(r)).toBe("merge of other stopped: conflict in a.c");
  });

  test("many paths are cut with 'and N more' within the width", async () => {
    const r = base();
    for (let i = 0; i < 40; i++) r.write(`some/longish/directory/file-${i}.txt`, `${i}\n`);
    const line = summary(r);
    expect(line).toMatch(/^untracked: some\/longish\/directory\/file-\d+\.txt(, \S+)* and \d+ more$/);
    expect(line.length).toBeLessThanOrEqual(72);
  });
});

describe("the reflog message", () => {
  test("is the summary when it differs from the previous snapshot's Undo-Reflog", async () => {
    const r = base();
    r.commit("two", { "a.c": "2\n" });
    expect(summary(r)).toBe("commit: two");
    r.git(["checkout", "-q", "-b", "side"]);
    expect(summary(r)).toBe("checkout: moving from main to side");
    // Same reflog entry as before: the difference is described instead.
    r.git(["tag", "t"]);
    expect(summary(r)).toBe("tag t created");
  });

  test("a long one is cut to a sensible length; the trailer keeps it whole", async () => {
    const r = base();
    const subject = "word ".repeat(60).trim();
    r.commit(subject, { "a.c": "long\n" });
    const s = await snapIn(r);
    const line = commitMessage(r, s.commit).split("\n", 1)[0]!;
    expect(line.length).toBeLessThanOrEqual(72);
    expect(line).toStartWith("commit: word word");
    expect(line).toEndWith("...");
    expect(commitMessage(r, s.commit)).toContain(`\nUndo-Reflog: ${r.g("rev-parse", "HEAD")} commit: ${subject}\n`);
  });
});

describe("the previous snapshot's parts kept by the process that recorded it (core/change-facts.ts rememberParts)", () => {
  test("are what reading them back from the tree gives: refs, a symbolic ref, HEAD, the stash, markers and conflicts", async () => {
    const { rememberParts, previousParts } = await import("../../core/change-facts.ts");
    const { captureLive } = await import("../../core/capture.ts");
    const { openRepo } = await import("../../core/repo.ts");
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.git(["tag", "-a", "-m", "annotated", "v1"]);
    r.git(["symbolic-ref", "refs/heads/alias", "refs/heads/main"]);
    r.write("a.c", "stashed\n");
    r.git(["stash", "push", "-q", "-m", "a message"]);
    r.git(["checkout", "-q", "-b", "other"]);
    r.commit("other", { "a.c": "other\n" });
    r.git(["checkout", "-q", "main"]);
    r.commit("main", { "a.c": "main\n" });
    r.git(["merge", "-q", "other"], { allowFail: true }); // a conflict in a.c, MERGE_HEAD
    const repo = await openRepo({ cwd: r.dir, env: r.env });
    const capture = await captureLive(repo);
    expect(capture.state.state).toContain("MERGE_HEAD");
    const read = await previousParts(repo, capture.tree);
    expect(read.conflicts).toEqual(["a.c"]);
    expect(read.stash.length).toBe(1);
    rememberParts(capture.tree, capture.state);
    expect(await previousParts(repo, capture.tree)).toEqual(read);
  });
});
