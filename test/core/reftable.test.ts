// The reftable ref storage (Git 2.45 and newer; clarifications: Ref storage):
// .git/HEAD is a placeholder and there are no loose ref or reflog files, so
// HEAD, symbolic refs and the reflogs are read through Git. Snapshots must be
// the same bytes as in a files repository holding the same state, and restores
// must work the same.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gitAtLeast, gitVersion, immediateSymref, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { trailersOf, userFingerprint } from "../helpers/restore.ts";
import { blobText, refLine, snap, snapIn } from "../helpers/snap.ts";

const supported = gitAtLeast(2, 45);
if (!supported) console.log(`test/core/reftable.test.ts: skipped, git ${gitVersion().join(".")} has no reftable (2.45 and newer)`);

/** A repository of the given storage whose commits have fixed dates, so that twins get the same ids. */
function repoOf(refFormat: "files" | "reftable"): TestRepo {
  const r = makeRepo({ refFormat });
  const date = "1700000000 +0000";
  r.env = { ...r.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
  expect(r.g("rev-parse", "--show-ref-format")).toBe(refFormat);
  return r;
}

/** Refs, symbolic refs (a chain), tags (a tag of a tag), HEAD on a branch and two stash entries. */
function buildState(r: TestRepo): void {
  r.commit("one", { "a.txt": "1\n" });
  r.git(["branch", "other"]);
  r.git(["tag", "-a", "-m", "first", "v1"]);
  r.git(["tag", "-a", "-m", "of a tag", "v1-again", "v1"]);
  r.commit("two", { "a.txt": "2\n" });
  r.git(["symbolic-ref", "refs/x/b", "refs/heads/other"]);
  r.git(["symbolic-ref", "refs/x/a", "refs/x/b"]);
  r.git(["update-ref", "refs/remotes/origin/main", "HEAD"]);
  r.git(["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
  r.write("a.txt", "stash one\n");
  r.git(["stash", "push", "-q", "-m", "first stash"]);
  r.write("a.txt", "stash two\n");
  r.git(["stash", "push", "-q", "-m", "second stash"]);
}

/** What a snapshot says about the refs: its HEAD, refs and stash blobs and its reflog trailer. */
function refParts(r: TestRepo, s: { tree: string }, n: number): string[] {
  return [blobText(r, s.tree, "HEAD"), blobText(r, s.tree, "refs"), blobText(r, s.tree, "stash"), trailersOf(r, n)["Undo-Reflog"] ?? "(none)"];
}

describe.skipIf(!supported)("reftable repositories", () => {
  test("HEAD is a placeholder file there: the snapshot has the files twin's HEAD, refs, stash and reflog bytes", async () => {
    const files = repoOf("files");
    const reftable = repoOf("reftable");
    buildState(files);
    buildState(reftable);
    expect(readFileSync(join(reftable.gitDir(), "HEAD"), "utf8")).toBe("ref: refs/heads/.invalid\n");
    const a = await snapIn(files);
    const b = await snapIn(reftable);
    expect(refParts(reftable, b, 1)).toEqual(refParts(files, a, 1));
    const c = reftable.g("rev-parse", "HEAD");
    const refs = blobText(reftable, b.tree, "refs");
    // The immediate target of a chain, not its end (clarifications: The refs blob).
    expect(refs).toContain(refLine("refs/x/a", reftable.g("rev-parse", "other"), "commit", "refs/x/b"));
    expect(refs).toContain(refLine("refs/remotes/origin/HEAD", c, "commit", "refs/remotes/origin/main"));
    expect(blobText(reftable, b.tree, "HEAD")).toBe("ref: refs/heads/main\n");
    expect(blobText(reftable, b.tree, "stash")).toBe(reftable.git(["stash", "list", "--format=%H%x09%gs"]).stdout);
    expect(trailersOf(reftable, 1)["Undo-Reflog"]).toBe(reftable.g("reflog", "-1", "--format=%H %gs", "HEAD"));
    // The whole state tree is the same: the index and the files too.
    expect(b.tree).toBe(a.tree);
  });

  test("a dangling symbolic ref is invisible to Git there, so it is left out; the files twin has its line", async () => {
    const files = repoOf("files");
    const reftable = repoOf("reftable");
    for (const r of [files, reftable]) {
      r.commit("one", { "a.txt": "1\n" });
      r.git(["symbolic-ref", "refs/remotes/gone/HEAD", "refs/remotes/gone/main"]);
    }
    const dangling = refLine("refs/remotes/gone/HEAD", "", "", "refs/remotes/gone/main");
    const inFiles = blobText(files, snap(files).tree, "refs");
    const inReftable = blobText(reftable, snap(reftable).tree, "refs");
    expect(inFiles).toContain(dangling);
    expect(inReftable).toBe(inFiles.replace(dangling, ""));
    expect(inReftable).toBe(refLine("refs/heads/main", reftable.g("rev-parse", "HEAD"), "commit"));
  });

  test("a branch switch: checkout other then snapshot records HEAD on other, and git undo goes back", async () => {
    const r = repoOf("reftable");
    r.commit("one", { "a.txt": "1\n" });
    r.git(["checkout", "-q", "-b", "other"]);
    r.commit("on other", { "a.txt": "other\n" });
    r.git(["checkout", "-q", "main"]);
    const onMain = userFingerprint(r);
    await r.okIn("snapshot");
    r.git(["checkout", "-q", "other"]);
    const onOther = userFingerprint(r);
    const s = await snapIn(r);
    expect(blobText(r, s.tree, "HEAD")).toBe("ref: refs/heads/other\n");
    expect(trailersOf(r, 2)["Undo-Head"]).toBe("other");
    expect(trailersOf(r, 2)["Undo-Reflog"]).toBe(r.g("reflog", "-1", "--format=%H %gs", "HEAD"));
    await r.okIn();
    expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/main");
    expect(r.read("a.txt")).toBe("1\n");
    expect(userFingerprint(r)).toBe(onMain);
    await r.okIn("redo");
    expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/other");
    expect(userFingerprint(r)).toBe(onOther);
  });

  test("a detached HEAD is recorded as its commit and comes back detached", async () => {
    const r = repoOf("reftable");
    const c1 = r.commit("one", { "a.txt": "1\n" });
    r.commit("two", { "a.txt": "2\n" });
    r.git(["checkout", "-q", "--detach", c1]);
    const detached = userFingerprint(r);
    const s = await snapIn(r);
    expect(blobText(r, s.tree, "HEAD")).toBe(`${c1}\n`);
    expect(trailersOf(r, 1)["Undo-Head"]).toBe("detached");
    r.git(["checkout", "-q", "main"]);
    await r.okIn("snapshot");
    await r.okIn();
    expect(r.git(["symbolic-ref", "-q", "HEAD"], { allowFail: true }).code).toBe(1);
    expect(r.g("rev-parse", "HEAD")).toBe(c1);
    expect(userFingerprint(r)).toBe(detached);
  });

  test("refs and symbolic refs moved, created and deleted come back", async () => {
    const r = repoOf("reftable");
    r.commit("one", { "a.txt": "1\n" });
    r.git(["branch", "keep"]);
    r.git(["branch", "doomed"]);
    r.git(["symbolic-ref", "refs/x/b", "refs/heads/keep"]);
    r.git(["symbolic-ref", "refs/x/a", "refs/x/b"]);
    const before = userFingerprint(r);
    await r.okIn("snapshot");
    r.commit("two", { "a.txt": "2\n" });
    r.git(["branch", "-f", "keep", "HEAD"]);
    r.git(["branch", "-D", "doomed"]);
    r.git(["branch", "fresh"]);
    r.git(["symbolic-ref", "refs/x/a", "refs/heads/fresh"]);
    r.git(["symbolic-ref", "--delete", "refs/x/b"]);
    await r.okIn("snapshot");
    await r.okIn();
    expect(userFingerprint(r)).toBe(before);
    expect(immediateSymref(r, "refs/x/a")).toBe("refs/x/b");
    expect(immediateSymref(r, "refs/x/b")).toBe("refs/heads/keep");
    expect(r.git(["rev-parse", "-q", "--verify", "refs/heads/fresh"], { allowFail: true }).code).not.toBe(0);
  });

  test("stash push and drop, then restore: the same entries, messages and order come back", async () => {
    const r = repoOf("reftable");
    r.commit("one", { "a.txt": "1\n" });
    for (const n of ["one", "two", "three"]) {
      r.write("a.txt", `${n}\n`);
      r.git(["stash", "push", "-q", "-m", `stash ${n}`]);
    }
    const stashes = r.git(["stash", "list", "--format=%H %gs"]).stdout;
    const before = userFingerprint(r);
    const s1 = await snapIn(r);
    expect(blobText(r, s1.tree, "stash").split("\n").filter(Boolean).length).toBe(3);
    r.git(["stash", "drop", "-q", "stash@{1}"]);
    const s2 = await snapIn(r);
    expect(blobText(r, s2.tree, "stash")).toBe(r.git(["stash", "list", "--format=%H%x09%gs"]).stdout);
    expect(blobText(r, s2.tree, "stash").split("\n").filter(Boolean).length).toBe(2);
    await r.okIn();
    expect(r.git(["stash", "list", "--format=%H %gs"]).stdout).toBe(stashes);
    expect(userFingerprint(r)).toBe(before);
    // All of them dropped, then back again.
    r.git(["stash", "clear"]);
    expect(blobText(r, snap(r).tree, "refs")).not.toContain("refs/stash");
    await r.okIn("restore", "1");
    expect(r.git(["stash", "list", "--format=%H %gs"]).stdout).toBe(stashes);
  });
  test("a conflicted cherry-pick (CHERRY_PICK_HEAD is a ref there) is recorded, refused, and ended with --force", async () => {
    const r = repoOf("reftable");
    r.commit("one", { "a.txt": "1\n" });
    r.git(["checkout", "-q", "-b", "side"]);
    r.commit("side", { "a.txt": "side\n" });
    r.git(["checkout", "-q", "main"]);
    r.commit("two", { "a.txt": "2\n" });
    await snapIn(r);
    const main = r.g("rev-parse", "main");
    expect(r.git(["cherry-pick", "side"], { allowFail: true }).code).not.toBe(0);
    expect(r.git(["rev-parse", "-q", "--verify", "CHERRY_PICK_HEAD"]).code).toBe(0);
    const s2 = await snapIn(r);
    expect(blobText(r, s2.tree, "state")).toBe("CHERRY_PICK_HEAD\n");
    const refused = await r.run(["restore", "1"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("cherry-pick");
    await r.okIn("restore", "1", "--force");
    expect(r.git(["rev-parse", "-q", "--verify", "CHERRY_PICK_HEAD"], { allowFail: true }).code).not.toBe(0);
    expect(r.read("a.txt")).toBe("2\n");
    expect(r.g("rev-parse", "HEAD")).toBe(main);
    expect(r.g("ls-files", "-u")).toBe("");
  });
});
