// Snapshots fetched from another repository are somebody else's history: list,
// show and an explicit `restore <n>` reach them, but plain undo and redo never
// land on them, undo.limit neither counts nor deletes them, and gc leaves them.
// What tells them apart is the recorder's own record in <gitdir>/undo/
// (own-snapshots), never anything a snapshot says. Numbers go on from our own
// highest, past the numbers fetched ones hold.
import { expect, test } from "bun:test";
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, TestRepo, tempDir } from "../helpers/repo.ts";
import { userFingerprint } from "../helpers/restore.ts";
import { snapshotRefs } from "../helpers/snap.ts";

const numbers = (r: TestRepo) => snapshotRefs(r).map((s) => Number(s.ref.slice(-10)));

/** A clone of `r` (its own HOME and identity) with `count` snapshots of its own edits to a.txt. */
function otherClone(r: TestRepo, count: number): TestRepo {
  const base = tempDir("other");
  const other = new TestRepo(join(base, "other"), r.home);
  r.git(["clone", "-q", r.dir, other.dir], { cwd: base });
  other.git(["config", "user.name", "Someone Else"]);
  other.git(["config", "user.email", "else@example.com"]);
  for (let i = 1; i <= count; i++) {
    other.write("a.txt", `theirs ${i}\n`);
    other.ok("snapshot");
  }
  return other;
}

/** Fetch every snapshot ref of `other` that this repository lacks (Git refuses to overwrite ours: not fast-forwards). */
function fetchSnapshots(r: TestRepo, other: TestRepo): void {
  r.git(["fetch", "-q", other.dir, "refs/undo/*:refs/undo/*"], { allowFail: true });
}

/** A repository with two snapshots of its own, then six of another clone's fetched: #3 to #6 are theirs. */
function withFetched(limit = 100): { r: TestRepo; other: TestRepo } {
  const r = makeRepo();
  r.git(["config", "undo.limit", String(limit)]);
  r.commit("one", { "a.txt": "mine 0\n" });
  const other = otherClone(r, 6);
  r.ok("snapshot");
  r.write("a.txt", "mine 1\n");
  r.ok("snapshot");
  fetchSnapshots(r, other);
  expect(numbers(r)).toEqual([1, 2, 3, 4, 5, 6]);
  return { r, other };
}

test("fetched snapshots are listed and marked, never a target of plain undo or redo; numbering goes on past their numbers", async () => {
  const { r } = withFetched();
  const listed = (await r.snapshotsIn());
  expect(listed.filter((s) => (s as { foreign?: boolean }).foreign).map((s) => s.number)).toEqual([6, 5, 4, 3]);
  expect(listed.find((s) => s.number === 2)!.current).toBe(true);
  expect(await r.okIn("list")).toMatch(/#6 .*\(fetched\) /);
  expect(await r.okIn("list")).not.toMatch(/#2 .*\(fetched\)/);
  // A new recording takes the next number free after our own highest (#3 to #6 are theirs), and is our own.
  r.write("a.txt", "mine 2\n");
  expect(await r.okIn("snapshot")).toMatch(/^#7 /);
  const mine2 = userFingerprint(r);
  // undo walks our own history only: #7 -> #2 -> #1, never into #3..#6.
  expect(r.undo([]).code).toBe(0);
  expect(r.read("a.txt")).toBe("mine 1\n");
  expect(r.undo([]).code).toBe(0);
  expect(r.read("a.txt")).toBe("mine 0\n");
  expect(r.undo([]).code).toBe(1); // nothing older of ours
  expect(r.undo(["redo", "2"]).code).toBe(0);
  expect(userFingerprint(r)).toBe(mine2);
});

test("undo.limit counts and deletes only our own snapshots; gc never expires fetched ones", async () => {
  const { r } = withFetched(3);
  for (let i = 2; i <= 4; i++) {
    r.write("a.txt", `mine ${i}\n`);
    await r.okIn("snapshot");
  }
  // Ours: #1 #2 #7 #8 #9 with undo.limit 3 -> #7 #8 #9; theirs all stay.
  expect(numbers(r)).toEqual([3, 4, 5, 6, 7, 8, 9]);
  const gc = await r.run(["gc", "--expire=now"]);
  expect(gc.code).toBe(0);
  expect(gc.stdout).toContain("deleted 2 snapshots: #7, #8");
  expect(numbers(r)).toEqual([3, 4, 5, 6, 9]);
});

test("an explicit restore <n> and show reach a fetched snapshot; undo comes back from it", async () => {
  const { r } = withFetched();
  const before = userFingerprint(r);
  expect(await r.okIn("show", "5")).toMatch(/^snapshot #5 /);
  const res = await r.run(["restore", "5"]);
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  expect(r.read("a.txt")).toBe("theirs 5\n");
  // The restore is ours; undo goes back to where we were.
  expect(r.undo([]).code).toBe(0);
  expect(userFingerprint(r)).toBe(before);
});

test("what a snapshot says cannot make it ours: a fetched copy of our own number with other content stays foreign", async () => {
  const { r, other } = withFetched();
  // Forced over our #2: the ref name is ours, the commit is not.
  r.git(["fetch", "-q", other.dir, "+refs/undo/snapshots/0000000002:refs/undo/snapshots/0000000002"]);
  const two = (await r.snapshotsIn()).find((s) => s.number === 2)!;
  expect((two as { foreign?: boolean }).foreign).toBe(true);
  expect((await r.snapshotsIn()).find((s) => s.current)!.number).toBe(1);
});

test("a repository recorded before the record existed: every snapshot there is its own, the first recording writes them all down", async () => {
  const r = makeRepo();
  r.git(["config", "undo.limit", "3"]);
  r.commit("one", { "a.txt": "0\n" });
  for (let i = 1; i <= 3; i++) {
    r.write("a.txt", `${i}\n`);
    await r.okIn("snapshot");
  }
  const record = join(r.gitDir(), "undo", "own-snapshots");
  rmSync(record);
  // With no record, everything is own: undo walks all of it.
  expect((await r.snapshotsIn()).some((s) => (s as { foreign?: boolean }).foreign)).toBe(false);
  r.write("a.txt", "4\n");
  await r.okIn("snapshot");
  expect(existsSync(record)).toBe(true);
  const lines = readFileSync(record, "utf8").trim().split("\n");
  expect(lines.map((l) => Number(l.slice(-10)))).toEqual([1, 2, 3, 4]);
  // The limit counted them all: #1 went.
  expect(numbers(r)).toEqual([2, 3, 4]);
  expect(r.undo([]).code).toBe(0);
  expect(r.read("a.txt")).toBe("3\n");
});

test("a fetched snapshot numbered 9999999999 uses up nothing: recording and undo go on from our own numbers", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "mine 0\n" });
  const other = otherClone(r, 2);
  // Theirs, renumbered to the last number a name has.
  other.git(["update-ref", "refs/undo/snapshots/9999999999", other.g("rev-parse", "refs/undo/snapshots/0000000002")]);
  other.git(["update-ref", "-d", "refs/undo/snapshots/0000000001"]);
  other.git(["update-ref", "-d", "refs/undo/snapshots/0000000002"]);
  await r.okIn("snapshot");
  r.write("a.txt", "mine 1\n");
  await r.okIn("snapshot");
  fetchSnapshots(r, other);
  expect(numbers(r)).toEqual([1, 2, 9999999999]);
  r.write("a.txt", "mine 2\n");
  expect(await r.okIn("snapshot")).toMatch(/^#3 /);
  expect(await r.okIn("list")).toMatch(/#9999999999 .*\(fetched\) /);
  const undone = await r.run([]);
  expect(undone.stderr).toBe("");
  expect(undone.code).toBe(0);
  expect(r.read("a.txt")).toBe("mine 1\n");
  // The restore was recorded under the next own number, past nothing.
  expect(numbers(r)).toEqual([1, 2, 3, 4, 9999999999]);
  // Fetched numbers in the way are skipped, not retried one by one.
  for (let n = 5; n <= 20; n++) r.git(["update-ref", `refs/undo/snapshots/${String(n).padStart(10, "0")}`, other.g("rev-parse", "refs/undo/snapshots/9999999999")]);
  r.write("a.txt", "mine 3\n");
  expect(await r.okIn("snapshot")).toMatch(/^#21 /);
});

/** Whether snapshot `n` counts as fetched. */
const isForeign = async (r: TestRepo, n: number) => Boolean(((await r.snapshotsIn()).find((s) => s.number === n) as { foreign?: boolean } | undefined)?.foreign);
const workerLog = (r: TestRepo) => (existsSync(join(r.gitDir(), "undo", "worker.log")) ? readFileSync(join(r.gitDir(), "undo", "worker.log"), "utf8") : "");

test("a record of our own snapshots that cannot be appended to is written anew; one that cannot be written at all is said, never silent", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "0\n" });
  await r.okIn("snapshot");
  const record = join(r.gitDir(), "undo", "own-snapshots");
  chmodSync(record, 0o444);
  let appendable = true;
  try {
    appendFileSync(record, "");
  } catch {
    appendable = false;
  }
  // A read-only file stops an append but not a rename over it (not for root, who writes anyway).
  let immutable = false;
  if (appendable) immutable = Bun.spawnSync({ cmd: ["chattr", "+i", record], stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  try {
    r.write("a.txt", "1\n");
    const made = await r.run(["snapshot"]);
    expect(made.code).toBe(0);
    if (!appendable) {
      expect(made.stderr).toBe("");
      expect(await isForeign(r, 2)).toBe(false);
      expect(readFileSync(record, "utf8")).toContain("refs/undo/snapshots/0000000002");
    } else if (immutable) {
      // Nothing can write it: the snapshot counts as fetched, and the recording says so.
      expect(await isForeign(r, 2)).toBe(true);
      expect(made.stderr).toMatch(/^warning: #2 could not be written down as this worktree's own \(.*\), so it counts as fetched/);
      expect(workerLog(r)).toContain("could not add snapshot #2 to the record of this worktree's own snapshots");
    }
  } finally {
    if (immutable) Bun.spawnSync({ cmd: ["chattr", "-i", record] });
  }
});

test("a folder where the record of our own snapshots belongs: each recording says it, in worker.log too", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "0\n" });
  await r.okIn("snapshot");
  const record = join(r.gitDir(), "undo", "own-snapshots");
  rmSync(record);
  mkdirSync(join(record, "planted"), { recursive: true });
  r.write("a.txt", "1\n");
  const made = await r.run(["snapshot"]);
  expect(made.code).toBe(0);
  // Unreadable, the record counts every snapshot as own (fetched ones too): said as it is.
  expect(made.stderr).toMatch(/^warning: #2 could not be written down as this worktree's own \(.*\), and that record cannot be read, so every snapshot counts as own/);
  expect(workerLog(r)).toContain("could not add snapshot #2 to the record of this worktree's own snapshots, which cannot be read");
  expect(await isForeign(r, 2)).toBe(false);
  expect(r.undo(["doctor"]).stdout).toContain("own-snapshots is a folder");
});
