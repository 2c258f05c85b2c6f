// `git undo revert <n>`: the change snapshot n recorded (from the snapshot
// before it to n) taken out of the current state, keeping everything since;
// refused, naming every conflict and changing nothing, when something it
// changed has changed again.
import { describe, expect, test } from "bun:test";
import { fingerprint, makeRepo } from "../helpers/repo.ts";
import { expectWellFormed, userFingerprint, expectRefusedIn } from "../helpers/restore.ts";

const lines = (n: number, changed: Record<number, string> = {}) =>
  Array.from({ length: n }, (_, i) => changed[i] ?? `line ${i}`).join("\n") + "\n";

describe("git undo revert", () => {
  test("an old branch deletion comes back while later commits, files and the stash stay", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n" });
    const feature = r.commit("feature work", { "f.txt": "feature\n" });
    r.git(["branch", "feature"]);
    r.git(["reset", "-q", "--hard", "HEAD~1"]);
    await r.okIn("snapshot"); // #1
    r.git(["branch", "-D", "-q", "feature"]);
    await r.okIn("snapshot"); // #2: the deletion
    const later = r.commit("later", { "a.txt": "2\n" });
    r.write("wip.txt", "unrecorded\n");
    r.git(["stash", "push", "-q", "-u", "-m", "wip"]);
    r.write("new.txt", "new\n");
    await r.okIn("snapshot"); // #3
    const rest = userFingerprint(r);
    const out = await r.okIn("revert", "2");
    expect(out).toContain("Reverted #2");
    expect(out).toContain("feature created at");
    expect(r.g("rev-parse", "feature")).toBe(feature);
    expect(r.g("rev-parse", "main")).toBe(later);
    expect(userFingerprint(r).split("\n").filter((l) => !l.startsWith("refs/heads/feature ")).join("\n")).toBe(rest);
    const latest = (await r.snapshotsIn())[0]!;
    expect(latest.kind).toBe("change");
    expect(latest.summary).toMatch(/^reverted #2: /);
    // A plain undo takes the revert back.
    await r.okIn("undo");
    expect(userFingerprint(r)).toBe(rest);
    await expectWellFormed(r);
  });

  test("a file edit is taken out by a three-way merge that keeps later edits elsewhere in the file", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": lines(20) });
    await r.okIn("snapshot"); // #1
    r.write("a.txt", lines(20, { 2: "edit to revert" }));
    await r.okIn("snapshot"); // #2
    r.write("a.txt", lines(20, { 2: "edit to revert", 17: "later edit" }));
    r.write("b.txt", "other\n");
    await r.okIn("snapshot"); // #3
    await r.okIn("revert", "2");
    expect(r.read("a.txt")).toBe(lines(20, { 17: "later edit" }));
    expect(r.read("b.txt")).toBe("other\n");
  });

  test("a commit is reverted in refs, index and files alike", async () => {
    const r = makeRepo();
    const c1 = r.commit("one", { "a.txt": lines(10) });
    await r.okIn("snapshot"); // #1
    r.commit("two", { "a.txt": lines(10, { 1: "committed" }) });
    await r.okIn("snapshot"); // #2
    r.write("c.txt", "since\n");
    await r.okIn("snapshot"); // #3
    await r.okIn("revert", "2");
    expect(r.g("rev-parse", "main")).toBe(c1);
    expect(r.read("a.txt")).toBe(lines(10));
    expect(r.git(["status", "--porcelain"]).stdout).toBe("?? c.txt\n");
  });

  test("a conflict on a file and on a ref: refused, each named, nothing changed; the dry run shows them", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": lines(5) });
    r.git(["branch", "topic"]);
    await r.okIn("snapshot"); // #1
    r.write("a.txt", lines(5, { 2: "first" }));
    r.git(["branch", "-f", "topic", "HEAD"]);
    r.commit("moved topic's base", {});
    r.git(["branch", "-f", "topic", "HEAD"]);
    await r.okIn("snapshot"); // #2
    r.write("a.txt", lines(5, { 2: "changed again" }));
    r.commit("topic again", {});
    r.git(["branch", "-f", "topic", "HEAD"]);
    await r.okIn("snapshot"); // #3
    const before = fingerprint(r);
    const dry = await r.run(["revert", "2", "--dry-run"]);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toMatch(/would refuse: what #2 changed has changed again since: .*refs\/heads\/topic/);
    expect(dry.stdout).toContain("a.txt");
    const res = await expectRefusedIn(r, ["revert", "2"], /changed again since/);
    expect(res.stderr).toContain("refs/heads/topic");
    expect(res.stderr).toContain("a.txt");
    expect(fingerprint(r)).toBe(before);
  });

  test("a dropped stash entry comes back; a pushed one goes and its edits return", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n", "b.txt": "b\n" });
    r.write("a.txt", "stashed a\n");
    r.git(["stash", "push", "-q", "-m", "keep me"]);
    await r.okIn("snapshot"); // #1
    const entry = r.g("rev-parse", "stash@{0}");
    r.git(["stash", "drop", "-q"]);
    await r.okIn("snapshot"); // #2: dropped
    r.write("b.txt", "my edit\n");
    await r.okIn("snapshot"); // #3
    r.git(["stash", "push", "-q", "-m", "pushed"]);
    await r.okIn("snapshot"); // #4: pushed, b.txt clean again
    r.write("c.txt", "later\n");
    await r.okIn("snapshot"); // #5
    await r.okIn("revert", "2");
    expect(r.g("stash", "list", "--format=%H")).toContain(entry);
    await r.okIn("revert", "4");
    expect(r.read("b.txt")).toBe("my edit\n");
    expect(r.g("stash", "list", "--format=%gs")).not.toContain("pushed");
    expect(r.g("stash", "list", "--format=%H")).toContain(entry);
    expect(r.read("c.txt")).toBe("later\n");
    await expectWellFormed(r);
  });

  test("a restore snapshot as <n> reverts that restore; the oldest snapshot has nothing to revert", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "1\n" });
    await r.okIn("snapshot"); // #1
    r.write("a.txt", "2\n");
    await r.okIn("snapshot"); // #2
    await r.okIn("undo"); // #3: restore of #1
    expect(r.read("a.txt")).toBe("1\n");
    r.write("b.txt", "since\n");
    await r.okIn("snapshot"); // #4
    await r.okIn("revert", "3");
    expect(r.read("a.txt")).toBe("2\n");
    expect(r.read("b.txt")).toBe("since\n");
    await expectRefusedIn(r, ["revert", "1"], /oldest/);
    await expectRefusedIn(r, ["revert", "99"], /no snapshot #99/);
  });

  test("mid-merge, with a stash, untracked and ignored files: a file edit is reverted and nothing else changes", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": lines(8), "c.txt": "c\n", ".gitignore": "*.log\n" });
    r.git(["branch", "topic"]);
    r.commit("main side", { "c.txt": "c main\n" });
    r.git(["switch", "-q", "topic"]);
    r.commit("topic side", { "c.txt": "c topic\n" });
    r.git(["switch", "-q", "main"]);
    r.write("s.txt", "stashed\n");
    r.git(["stash", "push", "-q", "-u", "-m", "kept"]);
    await r.okIn("snapshot"); // #1
    r.write("a.txt", lines(8, { 0: "edit to take out" }));
    await r.okIn("snapshot"); // #2
    r.git(["merge", "-q", "topic"], { allowFail: true }); // stops on c.txt
    r.write("u.txt", "untracked\n");
    r.write("build.log", "ignored\n");
    await r.okIn("snapshot"); // #3
    const others = (s: string) => s.split("\n").filter((l) => !l.startsWith("a.txt ") && !l.endsWith("\ta.txt")).join("\n");
    const rest = others(userFingerprint(r));
    await r.okIn("revert", "2");
    expect(r.read("a.txt")).toBe(lines(8));
    expect(others(userFingerprint(r))).toBe(rest);
    expect(r.read("build.log")).toBe("ignored\n");
    expect(r.g("ls-files", "-u")).toContain("c.txt");
    await expectWellFormed(r);
  });

  test("a revert failing halfway leaves everything as it was", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": lines(6) });
    r.git(["branch", "gone"]);
    await r.okIn("snapshot"); // #1
    r.git(["branch", "-D", "-q", "gone"]);
    r.write("a.txt", lines(6, { 1: "edit" }));
    await r.okIn("snapshot"); // #2
    r.write("b.txt", "later, unrecorded\n");
    const before = userFingerprint(r);
    for (const step of ["worktree", "refs", "index"]) {
      const res = await r.run(["revert", "2"], { env: { GIT_UNDO_TEST_FAIL_AFTER: step } });
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain("rolled back");
      expect(userFingerprint(r)).toBe(before);
    }
  });
});

