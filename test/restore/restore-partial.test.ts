// Partial restores: `git undo restore <n> -- <pathspec>`, --staged, --worktree,
// --ref, --stash, --only. Exactly the named parts change; everything else the
// user has stays byte for byte; the result is a change snapshot that plain
// `git undo` takes back; refusals change nothing.
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { copyRepo, fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { expectWellFormed, trailersOf, userFingerprint, expectRefusedIn } from "../helpers/restore.ts";

/** The fingerprint without the lines naming `paths` (files and index entries) and git-undo's refs. */
const without = (r: TestRepo, ...paths: string[]) =>
  userFingerprint(r)
    .split("\n")
    .filter((l) => !paths.some((p) => l.startsWith(`${p} `) || l.includes(`\t${p}`) || l.endsWith(`\t${p}`)))
    .join("\n");

/**
 * A state with everything at once: a branch and tag, a merge stopped on a
 * conflict, two stash entries, untracked and ignored files, and names with a
 * space and a leading dash. #1 has the first versions of the files.
 */
function mixedState(opts: { merge?: boolean } = {}): TestRepo {
  // Built once per file for each kind (beforeAll), copied for every test.
  const template = templates.get(opts.merge ?? true);
  if (!template) throw new Error("mixedState: the templates are built in beforeAll");
  return copyRepo(template);
}

const templates = new Map<boolean, TestRepo>();
// The snapshots of the templates are taken in-process (okIn), as the tests' own commands are.
beforeAll(async () => {
  for (const merge of [true, false]) templates.set(merge, await buildMixedState({ merge }));
});

async function buildMixedState(opts: { merge?: boolean }): Promise<TestRepo> {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a1\n", "b.txt": "b1\n", "sp ace.txt": "s1\n", "-dash.txt": "d1\n", "dir/deep/x.txt": "x1\n", ".gitignore": "*.log\n", "c.txt": "c\n" });
  r.git(["branch", "topic"]);
  r.git(["tag", "v1"]);
  await r.okIn("snapshot"); // #1
  r.commit("two", { "a.txt": "a2\n", "b.txt": "b2\n", "sp ace.txt": "s2\n", "-dash.txt": "d2\n", "dir/deep/x.txt": "x2\n", "c.txt": "c main\n" });
  r.git(["switch", "-q", "topic"]);
  r.commit("topic", { "c.txt": "c topic\n" });
  r.git(["switch", "-q", "main"]);
  r.write("a.txt", "a3 stashed\n");
  r.git(["stash", "push", "-q", "-m", "first"]);
  r.write("b.txt", "b3 stashed\n");
  r.git(["stash", "push", "-q", "-m", "second"]);
  if (opts.merge ?? true) r.git(["merge", "-q", "topic"], { allowFail: true }); // conflict in c.txt
  r.write("u.txt", "untracked\n");
  r.write("build.log", "ignored\n");
  r.write("b.txt", "b4 unrecorded edit\n");
  await r.okIn("snapshot"); // #2
  return r;
}

describe("restore <n> -- <pathspec>", () => {
  test("one file comes back with its index entry, mid-merge; the rest (conflict, stash, untracked, ignored) is untouched", async () => {
    const r = mixedState();
    const rest = without(r, "a.txt");
    const out = await r.okIn("restore", "1", "--", "a.txt");
    expect(out).toContain("Restored a.txt from #1");
    expect(r.read("a.txt")).toBe("a1\n");
    expect(r.g("ls-files", "-s", "a.txt")).toContain(r.g("rev-parse", "v1:a.txt"));
    expect(without(r, "a.txt")).toBe(rest);
    expect(existsSync(r.path(".git/MERGE_HEAD"))).toBe(true);
    expect(r.read("build.log")).toBe("ignored\n");
    const latest = (await r.snapshotsIn())[0]!;
    expect(latest.kind).toBe("change");
    expect(latest.summary).toBe("restored a.txt from #1");
    expect(trailersOf(r, latest.number)["Undo-Restored"]).toBeUndefined();
    await expectWellFormed(r);
  });

  test("git undo afterwards returns to the state before the partial restore", async () => {
    const r = mixedState({ merge: false });
    const before = userFingerprint(r);
    await r.okIn("restore", "1", "--", "a.txt", "sp ace.txt");
    expect(userFingerprint(r)).not.toBe(before);
    await r.okIn("undo");
    expect(userFingerprint(r)).toBe(before);
  });

  test("--staged only the index entry, --worktree only the file", async () => {
    const r = mixedState();
    const file = r.read("-dash.txt");
    const rest = without(r, "-dash.txt");
    await r.okIn("restore", "1", "--staged", "--", "-dash.txt");
    expect(r.read("-dash.txt")).toBe(file);
    expect(r.g("ls-files", "-s", "--", "-dash.txt")).toContain(r.g("rev-parse", "v1:-dash.txt"));
    expect(without(r, "-dash.txt")).toBe(rest);
    const staged = r.g("ls-files", "-s", "--", "sp ace.txt");
    await r.okIn("restore", "1", "-W", "sp ace.txt");
    expect(r.read("sp ace.txt")).toBe("s1\n");
    expect(r.g("ls-files", "-s", "--", "sp ace.txt")).toBe(staged);
  });

  test("pathspec magic, a file into a folder that is gone, and a file the snapshot lacked is removed", async () => {
    const r = mixedState({ merge: false });
    r.git(["rm", "-q", "-r", "dir"]);
    r.write("later/new.txt", "new since #1\n");
    await r.okIn("snapshot"); // #3
    const rest = without(r, "dir/deep/x.txt", "later/new.txt");
    const out = await r.okIn("restore", "1", "--", ":(glob)dir/**/*.txt", "later");
    expect(out).toContain("Restored");
    expect(r.read("dir/deep/x.txt")).toBe("x1\n");
    expect(existsSync(r.path("later/new.txt"))).toBe(false);
    expect(without(r, "dir/deep/x.txt", "later/new.txt")).toBe(rest);
    // The removed file is held by #3 and comes back with git undo.
    await r.okIn("undo");
    expect(r.read("later/new.txt")).toBe("new since #1\n");
  });

  test("pathspecs are relative to the current directory, as in Git", async () => {
    const r = mixedState();
    await r.run(["restore", "1", "--", "x.txt"], { cwd: r.path("dir/deep") });
    expect(r.read("dir/deep/x.txt")).toBe("x1\n");
    expect(r.read("a.txt")).not.toBe("a1\n");
  });

  test("refusals change nothing: a pathspec matching nothing, --staged without paths, an ignored file in the way", async () => {
    const r = mixedState();
    await expectRefusedIn(r, ["restore", "1", "--", "nothing-*.md"], /did not match any file/);
    await expectRefusedIn(r, ["restore", "1", "--staged"], /limits a restore of pathspecs/);
    const q = makeRepo();
    q.commit("one", { "keep.txt": "k\n", "b.txt": "b1\n" });
    await q.okIn("snapshot"); // #1 has b.txt
    q.git(["rm", "-q", "b.txt"]);
    q.commit("b gone");
    q.write(".git/info/exclude", "b.txt\n");
    q.write("b.txt", "ignored precious\n");
    await q.okIn("snapshot");
    await expectRefusedIn(q, ["restore", "1", "--", "b.txt"], /ignored file/);
    expect(q.read("b.txt")).toBe("ignored precious\n");
  });

  test("unrecorded work at the paths is saved first and named; git undo brings it back", async () => {
    const r = mixedState({ merge: false });
    r.write("a.txt", "fresh unrecorded\n");
    const out = await r.okIn("restore", "1", "--", "a.txt");
    expect(out).toContain("Saved your unrecorded changes");
    expect(out).toMatch(/only the state left has this file: a.txt/);
    expect(r.read("a.txt")).toBe("a1\n");
    await r.okIn("undo");
    expect(r.read("a.txt")).toBe("fresh unrecorded\n");
  });

  test("--dry-run shows the plan and changes nothing", async () => {
    const r = mixedState();
    const before = fingerprint(r);
    const out = await r.okIn("restore", "1", "--dry-run", "--", "a.txt");
    expect(out).toContain("Would restore a.txt from #1");
    expect(out).toContain("files: 1 changed");
    expect(fingerprint(r)).toBe(before);
  });
});

describe("restore <n> --ref / --stash / --only", () => {
  test("one ref by its short name: created, moved or deleted as <n> had it; nothing else moves", async () => {
    const r = mixedState();
    r.git(["merge", "--abort"]);
    const c1 = r.g("rev-parse", "v1");
    r.git(["branch", "-D", "topic"]);
    r.git(["tag", "-f", "v1", "HEAD"]);
    r.git(["branch", "since"]);
    await r.okIn("snapshot"); // #3
    const keep = (s: string) => s.split("\n").filter((l) => !/^refs\/(undo|heads\/topic|tags\/v1) /.test(l)).join("\n");
    const rest = keep(userFingerprint(r));
    const out = await r.okIn("restore", "1", "--ref", "topic", "--ref", "v1");
    expect(out).toContain("Restored branch topic and tag v1 from #1");
    expect(r.g("rev-parse", "topic", "v1")).toBe(`${c1}\n${c1}`);
    expect(keep(userFingerprint(r))).toBe(rest);
    expect(r.g("rev-parse", "since")).toBe(r.g("rev-parse", "main"));
    // A ref #1 lacked goes.
    await r.okIn("restore", "1", "--ref", "since");
    expect(r.git(["rev-parse", "-q", "--verify", "refs/heads/since"], { allowFail: true }).code).not.toBe(0);
    expect((await r.snapshotsIn())[0]!.summary).toBe("restored branch since from #1");
    await expectWellFormed(r);
  });

  test("--stash brings the stash list back; --only refs,stash leaves files, index and HEAD", async () => {
    const r = mixedState();
    r.git(["merge", "--abort"]);
    const stashes = r.git(["stash", "list", "--format=%H %gs"]).stdout;
    r.git(["stash", "drop", "-q"]);
    r.git(["stash", "drop", "-q"]);
    await r.okIn("snapshot");
    const files = r.g("ls-files", "-s");
    const head = r.g("rev-parse", "HEAD");
    const noStash = (f: string) => f.split("\n").filter((l) => !l.startsWith("refs/stash ") && !/^[0-9a-f]{40} /.test(l)).join("\n");
    const rest = noStash(userFingerprint(r));
    await r.okIn("restore", "2", "--stash");
    expect(r.git(["stash", "list", "--format=%H %gs"]).stdout).toBe(stashes);
    expect(noStash(userFingerprint(r))).toBe(rest);
    r.git(["stash", "clear"]);
    r.git(["branch", "-D", "topic"]);
    await r.okIn("snapshot");
    await r.okIn("restore", "2", "--only", "refs,stash");
    expect(r.git(["stash", "list", "--format=%H %gs"]).stdout).toBe(stashes);
    expect(r.g("rev-parse", "--verify", "topic")).toBeTruthy();
    expect(r.g("ls-files", "-s")).toBe(files);
    expect(r.g("rev-parse", "HEAD")).toBe(head);
  });

  test("HEAD moves only with --only head", async () => {
    const r = makeRepo();
    const c1 = r.commit("one", { "f": "1\n" });
    r.git(["branch", "other"]);
    await r.okIn("snapshot"); // #1 on main
    r.commit("two", { "f": "2\n" });
    r.git(["switch", "-q", "other"]);
    await r.okIn("snapshot");
    await r.okIn("restore", "1", "--ref", "main");
    expect(r.g("rev-parse", "main")).toBe(c1);
    expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/other");
    await r.okIn("restore", "1", "--only", "head");
    expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/main");
  });

  test("unknown refs and parts are refused, changing nothing", async () => {
    const r = mixedState();
    await expectRefusedIn(r, ["restore", "1", "--ref", "no-such"], /no ref 'no-such'/);
    await expectRefusedIn(r, ["restore", "1", "--only", "files"], /--only takes refs, head, index, worktree, stash/);
    await expectRefusedIn(r, ["restore", "1", "--ref", "HEAD"], /--only head/);
  });
});

describe("all or nothing", () => {
  for (const step of ["worktree", "index", "refs", "stash", "record"]) {
    test(`a partial restore failing after '${step}' leaves everything as it was`, async () => {
      const r = mixedState({ merge: false });
      r.git(["branch", "-D", "topic"]);
      r.git(["stash", "drop", "-q"]);
      r.write("a.txt", "unrecorded\n");
      const before = userFingerprint(r);
      const res = await r.run(["restore", "1", "--ref", "topic", "--stash", "--", "a.txt", "dir"], { env: { GIT_UNDO_TEST_FAIL_AFTER: step } });
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain("rolled back");
      expect(userFingerprint(r)).toBe(before);
    });
  }
});

