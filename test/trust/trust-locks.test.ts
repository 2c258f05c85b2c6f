// capture.lock never wedges: unreadable content and a reused pid are stale and
// taken over; a live owner is waited for, then refused; another host's lock is
// refused at once, named with its host and how to remove it, and doctor says so,
// as it does for a worker that keeps failing.
import { expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fingerprint, makeRepo, PROCESS_BACKENDS, tempDir, type TestRepo } from "../helpers/repo.ts";

const WAIT = { GIT_UNDO_LOCK_WAIT_MS: "300" };

function withCommit(): { r: TestRepo; lock: string } {
  const r = makeRepo();
  r.commit("one", { "a.txt": "1\n" });
  r.ok("snapshot");
  r.write("a.txt", "2\n");
  const undoDir = join(r.gitDir(), "undo");
  mkdirSync(undoDir, { recursive: true });
  return { r, lock: join(undoDir, "capture.lock") };
}

/** Set a file's mtime `seconds` into the past. */
function backdate(path: string, seconds: number): void {
  const t = Date.now() / 1000 - seconds;
  utimesSync(path, t, t);
}

test("a lock whose content cannot be parsed is stale: the next run takes it over", async () => {
  const { r, lock } = withCommit();
  writeFileSync(lock, "\x00\x7fnot a pid at all\n");
  const res = await r.run(["snapshot"], { env: WAIT });
  expect(res.code).toBe(0);
  expect(res.stdout).toMatch(/^#2 /);
  expect(existsSync(lock)).toBe(false);
});

test("an empty lock left by a crash is stale once it is old; while new it is being written", async () => {
  const { r, lock } = withCommit();
  writeFileSync(lock, "");
  const before = fingerprint(r);
  expect(r.undo(["snapshot"], { env: WAIT }).code).toBe(1);
  expect(fingerprint(r)).toBe(before);
  backdate(lock, 60);
  expect(r.undo(["snapshot"], { env: WAIT }).code).toBe(0);
  expect((await r.snapshotsIn()).length).toBe(2);
});

for (const backend of PROCESS_BACKENDS) {
  test(`a lock whose pid now names a process started after it was written is stale (pid reused), by the ${backend} table`, async () => {
    const { r, lock } = withCommit();
    const sleeper = Bun.spawn({ cmd: ["sleep", "30"] });
    try {
      writeFileSync(lock, `${sleeper.pid} ${hostname()}\n`);
      backdate(lock, 60); // written a minute before that process started
      const res = await r.run(["snapshot"], { env: { ...WAIT, GIT_UNDO_PROCESS_TABLE: backend } });
      expect(res.code).toBe(0);
      expect((await r.snapshotsIn()).length).toBe(2);
      expect(existsSync(lock)).toBe(false);
    } finally {
      sleeper.kill();
    }
  });
}

test("where only ps tells (macOS), the owner's start is ps's: a pid ps says started after the lock was written is reused", async () => {
  const { r, lock } = withCommit();
  const realPs = Bun.which("ps");
  if (!realPs) return;
  // The owner really started before the lock was written (so /proc says held), but
  // this ps, the only table a system without /proc has, says it started just now.
  const sleeper = Bun.spawn({ cmd: ["sleep", "30"] });
  const bin = tempDir("fake-ps");
  writeFileSync(join(bin, "ps"), `#!/bin/sh\n"${realPs}" "$@" | awk '$1 == "${sleeper.pid}" && NF >= 5 { $3 = "00:00" } { print }'\n`);
  chmodSync(join(bin, "ps"), 0o755);
  try {
    await Bun.sleep(3000);
    writeFileSync(lock, `${sleeper.pid} ${hostname()}\n`);
    backdate(lock, 2.5); // after the sleeper started, more than the slack before now
    const env = { ...WAIT, GIT_UNDO_PROCESS_TABLE: "ps", PATH: `${bin}:${r.env.PATH}` };
    const held = await r.run(["snapshot"], { env: { ...WAIT, GIT_UNDO_PROCESS_TABLE: "proc" } });
    expect(held.code).toBe(1);
    const res = r.undo(["snapshot"], { env });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(existsSync(lock)).toBe(false);
  } finally {
    sleeper.kill();
  }
}, 30_000);

test("a lock of a live process that started before it is held: waited for, then refused, nothing changed", async () => {
  const { r, lock } = withCommit();
  const sleeper = Bun.spawn({ cmd: ["sleep", "30"] });
  try {
    writeFileSync(lock, `${sleeper.pid} ${hostname()}\n`);
    const before = fingerprint(r);
    const res = await r.run(["snapshot"], { env: WAIT });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`pid ${sleeper.pid}`);
    expect(fingerprint(r)).toBe(before);
    expect(readFileSync(lock, "utf8")).toBe(`${sleeper.pid} ${hostname()}\n`);
    const doctor = await r.run(["doctor"]);
    expect(doctor.stdout).toContain(`held by pid ${sleeper.pid}`);
  } finally {
    sleeper.kill();
  }
});

test("a lock of another host is never taken over: refused at once, naming file, host and how to remove it; doctor reports it", async () => {
  const { r, lock } = withCommit();
  const content = "4242 build-box.example.org\n";
  writeFileSync(lock, content);
  backdate(lock, 3600);
  const before = fingerprint(r);
  for (const args of [["snapshot"], [], ["restore", "1"]]) {
    const started = Date.now();
    // A long wait would not help: the refusal comes without it.
    const res = await r.run(args, { env: { GIT_UNDO_LOCK_WAIT_MS: "20000" } });
    expect(res.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(res.stderr).toContain(lock);
    expect(res.stderr).toContain("build-box.example.org");
    expect(res.stderr).toContain(`rm '${lock}'`);
  }
  expect(fingerprint(r)).toBe(before);
  expect(readFileSync(lock, "utf8")).toBe(content);
  const doctor = await r.run(["doctor"]);
  expect(doctor.code).toBe(1);
  expect(doctor.stdout).toMatch(/problem .*capture\.lock.*build-box\.example\.org/);
  expect(doctor.stdout).toContain(`rm '${lock}'`);
  expect(readFileSync(lock, "utf8")).toBe(content);
});

test("doctor reports a worker that keeps failing, with its last error; old failures are not a problem", async () => {
  const { r } = withCommit();
  const log = join(r.gitDir(), "undo", "worker.log");
  const line = (ago: number, msg: string) => `${new Date(Date.now() - ago).toISOString()} [999] ${msg}\n`;
  writeFileSync(log, [line(3 * 3600_000, "recording failed: long ago"), line(3 * 3600_000, "recording failed: long ago"), line(3 * 3600_000, "recording failed: long ago")].join(""));
  expect(r.undo(["doctor"]).stdout).not.toContain("failed to record");
  writeFileSync(log, [line(50_000, "recording failed: disk quota"), line(30_000, "recording failed: disk quota"), line(10_000, "recording failed: cannot lock ref 'refs/undo/x'")].join(""), { flag: "a" });
  const doctor = await r.run(["doctor"]);
  expect(doctor.stdout).toMatch(/problem .*failed to record 3 times .*cannot lock ref 'refs\/undo\/x'/);
});
