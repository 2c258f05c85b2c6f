// Refusals (spec: Restoring steps 1, 2, 4; clarifications: "Restoring", "Locks and
// markers"): each leaves the repository byte-identical, exits non-zero, names the reason.
import { describe, expect, test } from "bun:test";
import { blockerText } from "../../cli/plan-words.ts";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { readableSnapshot, listSnapshots } from "../../core/snapshots/history.ts";
import { loadState } from "../../core/snapshots/read-state.ts";
import { withScratch } from "../../core/git-data/objects.ts";
import { planRestore } from "../../core/restore/plan.ts";
import { openRepo } from "../../core/repo.ts";
import { refusal } from "../../core/restore/index.ts";
import { checkWorktree } from "../../core/restore/worktree.ts";
import { fromTemplate, fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { trailersOf, expectRefusedIn, numbersIn, untrackedLogHistory } from "../helpers/restore.ts";

/** Two recorded commits on main: a.txt "base" then "main". */
/** Built once per file, copied for each test. */
const twoCommits = (): TestRepo => fromTemplate("twoCommits", buildTwoCommits);

function buildTwoCommits(): TestRepo {
  const r = makeRepo();
  r.commit("base", { "a.txt": "base\n" });
  r.ok("snapshot");
  r.commit("main work", { "a.txt": "main\n" });
  r.ok("snapshot");
  return r;
}

/** A merge stopped on a conflict in a.txt. */
function mergeConflict(r: TestRepo): void {
  r.git(["checkout", "-q", "-b", "side", "HEAD~1"]);
  r.commit("side work", { "a.txt": "side\n" });
  r.git(["checkout", "-q", "main"]);
  r.ok("snapshot");
  r.git(["merge", "side"], { allowFail: true });
  expect(r.g("rev-parse", "-q", "--verify", "MERGE_HEAD")).toBeTruthy();
}

describe("an operation in progress", () => {
  test("refuses without --force, naming the operation", async () => {
    const r = twoCommits();
    mergeConflict(r);
    await expectRefusedIn(r, [], /a merge is in progress.*--force/);
    await expectRefusedIn(r, ["restore", "1"], /a merge is in progress/);
  });

  test("--force ends a merge with Git's --quit, then restores; the conflicted state stays recorded", async () => {
    const r = twoCommits();
    mergeConflict(r);
    const out = await r.okIn("--force");
    expect(out).toMatch(/Saved your unrecorded changes as #4 first/);
    expect(out).toMatch(/Ended a merge in progress/);
    expect(r.git(["rev-parse", "-q", "--verify", "MERGE_HEAD"], { allowFail: true }).code).not.toBe(0);
    expect(r.read("a.txt")).toBe("main\n");
    expect(r.g("ls-files", "-u")).toBe("");
    // #4 holds the conflict; restoring it brings the conflicted index back (not the merge itself).
    await r.okIn("restore", "4");
    expect(r.g("ls-files", "-u").split("\n")).toHaveLength(3);
    expect(r.read("a.txt")).toContain("<<<<<<<");
  });

  test("--force from a conflict on a file the target never had: no conflict stage is left behind", async () => {
    const r = twoCommits();
    r.git(["checkout", "-q", "-b", "side", "HEAD~1"]);
    r.commit("side adds", { "new.txt": "side\n" });
    r.git(["checkout", "-q", "main"]);
    r.commit("main adds", { "new.txt": "main\n" });
    await r.okIn("snapshot");
    r.git(["merge", "side"], { allowFail: true });
    expect(r.g("ls-files", "-u", "new.txt").split("\n")).toHaveLength(2);
    await r.okIn("restore", "--force", "2");
    expect(r.g("ls-files", "-u")).toBe("");
    expect(r.g("ls-files")).toBe("a.txt");
    expect(r.g("status", "--porcelain", "--untracked-files=no")).toBe("");
  });

  test("--force ends a stopped rebase with rebase --quit", async () => {
    const r = twoCommits();
    r.git(["checkout", "-q", "-b", "side", "HEAD~1"]);
    r.commit("side work", { "a.txt": "side\n" });
    await r.okIn("snapshot");
    r.git(["rebase", "main"], { allowFail: true });
    await expectRefusedIn(r, [], /a rebase is in progress/);
    await r.okIn("--force");
    expect(existsSync(join(r.gitDir(), "rebase-merge"))).toBe(false);
    expect(r.git(["status"]).stdout).not.toMatch(/rebase in progress/);
    expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/side");
    expect(r.read("a.txt")).toBe("side\n");
  });
});

test("an object the target needs was pruned: refuses and names the refs affected", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  r.git(["tag", "-a", "-m", "release one", "v1"]);
  const tagObject = r.g("rev-parse", "v1");
  await r.okIn("snapshot"); // #1 points refs/tags/v1 at the tag object
  // As an earlier git-undo wrote it: no keep entry (which would hold the tag), so only parents keep objects.
  const one = "refs/undo/snapshots/0000000001";
  const tree = r.git(["mktree"], { input: r.g("ls-tree", `${one}^{tree}`).split("\n").filter((l) => !l.endsWith("\tkeep")).join("\n") + "\n" }).stdout.trim();
  const parents = r.g("log", "-1", "--format=%P", one).split(" ").filter(Boolean).flatMap((p) => ["-p", p]);
  r.git(["update-ref", one, r.git(["commit-tree", tree, ...parents], { input: r.git(["log", "-1", "--format=%B", one]).stdout }).stdout.trim()]);
  r.git(["tag", "-d", "v1"]);
  r.commit("two", { "a.txt": "b\n" });
  await r.okIn("snapshot"); // #2
  r.commit("three", { "a.txt": "c\n" });
  await r.okIn("snapshot"); // #3
  // Delete a snapshot, then let gc prune what nothing reaches any more.
  r.git(["update-ref", "-d", "refs/undo/snapshots/0000000002"]);
  r.git(["reflog", "expire", "--expire=now", "--all"]);
  r.git(["gc", "-q", "--prune=now"]);
  expect(r.git(["cat-file", "-e", tagObject], { allowFail: true }).code).not.toBe(0);
  const res = await expectRefusedIn(r, ["restore", "1"], /refs\/tags\/v1/);
  expect(res.stderr).toMatch(/gone|pruned/);
  expect(await numbersIn(r)).toEqual([1, 3]);
});

test("a file on disk differs from the state left (edited after it was recorded): the check refuses, names it", async () => {
  const r = twoCommits();
  // The state left is #2; a.txt changes on disk after it was recorded (a race with
  // the restore). The restorer's working-tree check must catch it before anything moves.
  r.write("a.txt", "edited after #2 was recorded\n");
  r.write("new.txt", "untracked, after #2\n");
  const before = fingerprint(r);
  const plan = await (async () => {
    const repo = await openRepo(r.at());
    const snaps = await listSnapshots(repo);
    const s = readableSnapshot(snaps, 2);
    const from = { number: 2, tree: s.tree, state: await loadState(repo, s.tree) };
    const plan = await planRestore(repo, from, readableSnapshot(snaps, 1));
    expect(plan.blockers).toEqual([]);
    await withScratch(repo, (dir) => checkWorktree(repo, dir, plan));
    return plan;
  })();
  const b = plan.blockers.find((x) => x.kind === "not-uptodate");
  expect(b?.names).toEqual(["a.txt"]);
  expect(blockerText(b!)).toMatch(/a file on disk differs from the state being left.*a\.txt/);
  expect(refusal(plan.blockers).exitCode).toBe(1);
  expect(fingerprint(r)).toBe(before);
});

test("an untracked file stands where the target creates one (created after the state left was recorded): refused", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n", "b.txt": "in #1\n" });
  await r.okIn("snapshot");
  r.git(["rm", "-q", "b.txt"]);
  r.commit("two");
  await r.okIn("snapshot");
  r.write("b.txt", "made after #2, in no snapshot\n");
  const plan = await (async () => {
    const repo = await openRepo(r.at());
    const snaps = await listSnapshots(repo);
    const s = readableSnapshot(snaps, 2);
    return planRestore(repo, { number: 2, tree: s.tree, state: await loadState(repo, s.tree) }, readableSnapshot(snaps, 1));
  })();
  expect(plan.blockers.map((b) => b.kind)).toEqual(["untracked-file"]);
  expect(plan.blockers[0]!.names).toEqual(["b.txt"]);
  expect(r.read("b.txt")).toBe("made after #2, in no snapshot\n");
});

test("an untracked file Git cannot record stands where the target creates one: refuses, names it", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n", "pipe": "a file in #1\n" });
  await r.okIn("snapshot");
  r.git(["rm", "-q", "pipe"]);
  r.commit("two");
  await r.okIn("snapshot");
  // A FIFO: git add -A skips it, so the state left does not have it.
  Bun.spawnSync({ cmd: ["mkfifo", r.path("pipe")] });
  const res = await expectRefusedIn(r, ["restore", "1"], /pipe/);
  expect(res.stderr).toMatch(/stands where snapshot #1 creates/);
});

test("an ignored file stands where the target creates one: refuses (read-tree -m -u would overwrite it)", async () => {
  const r = makeRepo();
  await untrackedLogHistory(r);
  r.write("debug.log", "precious, ignored, in no snapshot\n");
  const res = await expectRefusedIn(r, [], /ignored file stands where snapshot #1 creates one: debug\.log/);
  expect(res.code).toBe(1);
  expect(r.read("debug.log")).toBe("precious, ignored, in no snapshot\n");
  // An ignored file inside a directory where the target creates a file is found too.
  r.remove("debug.log");
  mkdirSync(r.path("debug.log"));
  r.write("debug.log/inner.log", "also precious\n");
  await expectRefusedIn(r, [], /debug\.log\/inner\.log/);
});

test("index.lock held by another process: refuses", async () => {
  const r = twoCommits();
  writeFileSync(join(r.gitDir(), "index.lock"), "");
  await expectRefusedIn(r, [], /index\.lock exists/);
  await expectRefusedIn(r, ["--dry-run"], /index\.lock|/);
  expect(r.undo(["--dry-run"]).stdout).toMatch(/would refuse: .*index\.lock exists/);
});

test("capture.lock held: waits a bounded time, then refuses", async () => {
  const r = twoCommits();
  mkdirSync(join(r.gitDir(), "undo"), { recursive: true });
  // Held by a live process on this host: this test runner.
  writeFileSync(join(r.gitDir(), "undo", "capture.lock"), `${process.pid} ${hostname()}\n`);
  await expectRefusedIn(r, [], /another git-undo is recording or restoring/, { env: { GIT_UNDO_LOCK_WAIT_MS: "300" } });
});

test("a refused restore records nothing, and a later one works", async () => {
  const r = twoCommits();
  writeFileSync(join(r.gitDir(), "index.lock"), "");
  r.write("unrecorded.txt", "x\n");
  const before = fingerprint(r);
  expect(r.undo([]).code).toBe(1);
  expect(fingerprint(r)).toBe(before);
  r.remove(".git/index.lock");
  expect(await r.okIn()).toContain("Saved your unrecorded changes as #3 first");
  expect(trailersOf(r, 4)).toMatchObject({ "Undo-Restored": "2", "Undo-From": "3" });
});
