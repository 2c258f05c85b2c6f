// Locks in Git's ref storage never wedge recording. Past undo.limit a
// recording creates its ref first and deletes the oldest in a transaction of
// its own, so a lock on an old snapshot or packed-refs.lock only postpones the
// deletion. Locks a killed git-undo left are removed by the next recording; a
// user's Git's never are. doctor names every one of them, and index.lock.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { backdate, deadPid, killAfter, killMidTransaction } from "../helpers/kill.ts";
import { copyRepo, makeRepo, refFormatOf, type TestRepo } from "../helpers/repo.ts";
import { userFingerprint } from "../helpers/restore.ts";
import { snapshotRefs } from "../helpers/snap.ts";

const numbers = (r: TestRepo) => snapshotRefs(r).map((s) => Number(s.ref.slice(-10)));
const refPath = (n: number) => `refs/undo/snapshots/${String(n).padStart(10, "0")}`;

/** undo.limit=3 and four snapshots: #2, #3, #4 are left. Built once per file (its recordings in-process), copied for each test. */
let template: TestRepo | undefined;
async function fullHistory(): Promise<TestRepo> {
  // The temporary folders go when a file's tests are done (test/setup.ts): built again then.
  if (!template || !existsSync(template.dir)) template = await buildFullHistory();
  return copyRepo(template);
}

async function buildFullHistory(): Promise<TestRepo> {
  const r = makeRepo();
  r.git(["config", "undo.limit", "3"]);
  r.commit("one", { "a.txt": "0\n" });
  r.git(["branch", "doomed"]);
  r.git(["pack-refs", "--all"]); // doomed is packed: deleting it needs packed-refs.lock
  await r.okIn("snapshot");
  for (let i = 1; i < 4; i++) {
    r.write("a.txt", `${i}\n`);
    await r.okIn("snapshot");
  }
  expect(numbers(r)).toEqual([2, 3, 4]);
  return r;
}

/** A new edit and `git undo snapshot` (in-process: what is tested is the recording, not the process), expecting a snapshot. */
async function recordEdit(r: TestRepo, content: string): Promise<void> {
  r.write("a.txt", content);
  const res = await r.run(["snapshot"]);
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  expect(res.stdout).toMatch(/^#\d+ /);
}

const doctorOut = async (r: TestRepo) => (await r.run(["doctor"])).stdout;
const workerLog = (r: TestRepo) => {
  const path = join(r.gitDir(), "undo", "worker.log");
  return existsSync(path) ? readFileSync(path, "utf8") : "";
};

test.skipIf(!isFiles())("a lock on the oldest snapshot's ref postpones its deletion, nothing else; once stale the next recording removes it", async () => {
  const r = await fullHistory();
  const lock = join(r.gitDir(), `${refPath(2)}.lock`);
  writeFileSync(lock, "");
  await recordEdit(r, "5\n");
  // Recorded all the same; #2 stays until its lock goes, and the log says why.
  expect(numbers(r)).toEqual([2, 3, 4, 5]);
  expect(workerLog(r)).toMatch(/could not delete 1 snapshot beyond undo\.limit .*0000000002\.lock/);
  // undo and restore work: each records first, then moves. The lock is made
  // new again before each step: one held longer than STALE_REF_LOCK_MS counts
  // as a killed Git's, which a loaded machine reaches within these steps.
  const before = userFingerprint(r);
  backdate(lock, 0);
  expect((await r.run([])).code).toBe(0);
  expect(r.read("a.txt")).toBe("3\n");
  backdate(lock, 0);
  expect((await r.run(["restore", "5"])).code).toBe(0);
  expect(userFingerprint(r)).toBe(before);
  backdate(lock, 0);
  expect(await doctorOut(r)).toMatch(/note .*0000000002\.lock is held/);
  // Left alone for a minute: a killed Git's. The next recording removes it and keeps the limit.
  backdate(lock, 60);
  expect(await doctorOut(r)).toMatch(/note .*0000000002\.lock was left \d+s ago by a Git that was killed; the next recording removes it/);
  await recordEdit(r, "8\n");
  expect(existsSync(lock)).toBe(false);
  expect(numbers(r).length).toBe(3);
  expect(numbers(r).at(-1)).toBe(8);
});

test.skipIf(!isFiles())("the user's packed-refs.lock: recording goes on, it is never removed, doctor names it; once removed, the limit is kept again", async () => {
  const r = await fullHistory();
  const lock = join(r.gitDir(), "packed-refs.lock");
  writeFileSync(lock, "");
  backdate(lock, 600);
  await recordEdit(r, "5\n");
  await recordEdit(r, "6\n");
  expect(numbers(r)).toEqual([2, 3, 4, 5, 6]);
  expect(existsSync(lock)).toBe(true);
  const doctor = await r.run(["doctor"]);
  expect(doctor.code).toBe(1);
  expect(doctor.stdout).toMatch(/problem .*packed-refs\.lock has been there for \d+s: Git cannot delete any ref .*rm '.*packed-refs\.lock'/);
  // The user's own deletion fails as Git says; once the lock is gone, all is well again.
  expect(r.git(["branch", "-D", "doomed"], { allowFail: true }).code).not.toBe(0);
  rmSync(lock);
  await recordEdit(r, "7\n");
  expect(numbers(r)).toEqual([5, 6, 7]);
  r.git(["branch", "-D", "doomed"]);
  expect(await doctorOut(r)).not.toMatch(/(problem|note) +\S*packed-refs\.lock/);
});

test("git-undo killed mid-commit while deleting the oldest: the next recording removes its locks and keeps the limit; nothing is lost", async () => {
  const r = await fullHistory();
  const undo = join(r.gitDir(), "undo");
  const owner = join(undo, "ref-write.owner");
  // What a recording killed inside its deleting transaction leaves: its owner file, then Git's locks.
  writeFileSync(owner, `${await deadPid()} ${hostname()}\n`);
  const oldest = snapshotRefs(r)[0]!;
  const files = refFormatOf(r) === "files";
  const locks = files ? [join(r.gitDir(), `${oldest.ref}.lock`), join(r.gitDir(), "packed-refs.lock")] : [join(r.gitDir(), "reftable", "tables.list.lock")];
  await killMidTransaction(r, [`delete ${oldest.ref} ${oldest.commit}`], locks);
  backdate(owner, 61);
  for (const l of locks) backdate(l, 60);
  const doctor = await doctorOut(r);
  expect(doctor).toMatch(new RegExp(`problem .*${files ? "packed-refs" : "tables\\.list"}\\.lock was left by git-undo, killed while it changed refs; the next recording removes it`));
  const before = userFingerprint(r);
  await recordEdit(r, "5\n");
  for (const l of locks) expect(existsSync(l)).toBe(false);
  expect(existsSync(owner)).toBe(false);
  expect(numbers(r)).toEqual([3, 4, 5]);
  // The user's deletions work again, and undo lands on the state before the edit.
  r.git(["branch", "-D", "doomed"]);
  r.git(["branch", "doomed", "main"]);
  expect((await r.run([])).code).toBe(0);
  expect(userFingerprint(r)).toBe(before);
  expect(await doctorOut(r)).not.toMatch(/(problem|note) +\S*\.lock/);
});

test.skipIf(!isFiles())("packed-refs.lock made long after a killed git-undo started is a user's Git's: it stays, and doctor says how to remove it", async () => {
  const r = await fullHistory();
  const owner = join(r.gitDir(), "undo", "ref-write.owner");
  writeFileSync(owner, `${await deadPid()} ${hostname()}\n`);
  backdate(owner, 3600);
  const lock = join(r.gitDir(), "packed-refs.lock");
  writeFileSync(lock, "");
  backdate(lock, 60);
  await recordEdit(r, "5\n");
  expect(existsSync(lock)).toBe(true);
  expect(numbers(r)).toEqual([2, 3, 4, 5]);
  expect(await doctorOut(r)).toMatch(/problem .*packed-refs\.lock has been there for \d+s/);
});

test.skipIf(!isFiles())("a lock on the next number: a live one is stepped over, a stale one removed and the number used", async () => {
  const r = await fullHistory();
  const live = join(r.gitDir(), `${refPath(5)}.lock`);
  writeFileSync(live, "");
  await recordEdit(r, "5\n");
  expect(numbers(r)).toEqual([3, 4, 6]);
  rmSync(live);
  const stale = join(r.gitDir(), `${refPath(7)}.lock`);
  writeFileSync(stale, "");
  backdate(stale, 60);
  await recordEdit(r, "7\n");
  expect(numbers(r)).toEqual([4, 6, 7]);
  expect(existsSync(stale)).toBe(false);
});

test("index.lock: doctor names a killed restore's (the next git undo removes it) and a crashed Git's (only the user removes it)", async () => {
  const r = await fullHistory();
  r.write("a.txt", "wip\n");
  await killAfter(r, "refs", ["restore", "3"]);
  const lock = join(r.gitDir(), "index.lock");
  expect(existsSync(lock)).toBe(true);
  const doctor = await r.run(["doctor"]);
  expect(doctor.code).toBe(1);
  expect(doctor.stdout).toMatch(/problem .*index\.lock was left by a git-undo restore that was killed \(pid \d+\).*rm '.*index\.lock'/);
  expect((await r.run(["restore", "4"])).code).toBe(0);
  expect(existsSync(lock)).toBe(false);
  expect(r.read("a.txt")).toBe("3\n");
  // A Git command's index.lock, a minute old: named, never removed by git-undo.
  writeFileSync(lock, "");
  backdate(lock, 60);
  expect(await doctorOut(r)).toMatch(/problem .*index\.lock has been there for \d+s: Git cannot write the index while it exists; if no Git command is running, one that crashed left it: rm '.*index\.lock'/);
  r.write("a.txt", "later\n");
  await r.run(["snapshot"]);
  expect(existsSync(lock)).toBe(true);
});

test("doctor names the lock a live Git holds on the ref storage without calling it a problem", async () => {
  const r = await fullHistory();
  const lock = refFormatOf(r) === "files" ? join(r.gitDir(), "refs", "heads", "main.lock") : join(r.gitDir(), "reftable", "tables.list.lock");
  mkdirSync(join(lock, ".."), { recursive: true });
  writeFileSync(lock, "");
  expect(await doctorOut(r)).toMatch(/note .*(main|tables\.list)\.lock is held: a Git command is writing refs right now/);
  backdate(lock, 60);
  expect(await doctorOut(r)).toMatch(/problem .*(main|tables\.list)\.lock has been there for \d+s: Git cannot change (refs\/heads\/main|any ref) while it exists/);
});

/** Whether new test repositories use the files ref storage. */
function isFiles(): boolean {
  return process.env.GIT_UNDO_TEST_REF_FORMAT !== "reftable";
}
