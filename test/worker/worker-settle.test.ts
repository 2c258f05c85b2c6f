// The worker's rules (spec: Automatic recording): wait for quiet and for the
// operation to end, bounded by undo.settleMax; one worker per worktree; no mark
// lost; errors to a bounded worker.log; the hook's environment never leaks in.
import { expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claimWorker, hasMark, MarkWatch, releaseWorker, takeMark } from "../../worker/protocol.ts";
import { lastLogLines, LOG_LIMIT, logLine } from "../../core/worker-files.ts";
import { processTable } from "../../core/git-data/proc/index.ts";
import { scrubEnvironment } from "../../worker/main.ts";
import { NO_PROCESS_QUIET_MS, RUNNING_QUIET_MS, settleDelay, type SettleView } from "../../worker/settle.ts";
import { list, settled, waitFor } from "../helpers/auto.ts";
import { makeRepo, OWN_PROCESS, PROCESS_BACKENDS, ROOT, tempDir } from "../helpers/repo.ts";

/** A look at t=1000, marked at t=0, first seen at t=0, every process exited at t=0. */
const view = (over: Partial<SettleView> = {}): SettleView => ({
  now: 1000,
  markMs: 0,
  firstSeenMs: 0,
  running: false,
  endedMs: 0,
  operation: false,
  indexLocked: false,
  settleMs: 150,
  settleMaxMs: 600_000,
  blindQuietMs: NO_PROCESS_QUIET_MS,
  ...over,
});

/** A repository with one commit, `undo.settle` set, and an empty undo folder for a worker started by hand. */
function committedRepo(settleMs: number) {
  const r = makeRepo();
  r.git(["config", "undo.settle", String(settleMs)]);
  r.commit("base", { "a.txt": "a\n" });
  const gitDir = r.gitDir();
  const undo = join(gitDir, "undo");
  mkdirSync(undo);
  return { r, gitDir, undo };
}

test("settling per command: undo.settle counts from the end of the command, not from its last mark", () => {
  // Ended 100 ms ago, marked 1 s ago: 50 ms more.
  expect(settleDelay(view({ now: 1100, endedMs: 1000 }))).toBe(50);
  // Ended and quiet for undo.settle: record.
  expect(settleDelay(view({ now: 1150, endedMs: 1000 }))).toBe(0);
  // A mark after the end (the next command of a script) counts as the later of the two.
  expect(settleDelay(view({ now: 1150, endedMs: 1000, markMs: 1100 }))).toBe(100);
  // Still running: look again soon, however long ago it marked (short of RUNNING_QUIET_MS).
  expect(settleDelay(view({ running: true, endedMs: null, now: 2000 }))).toBeGreaterThan(0);
  expect(settleDelay(view({ running: true, endedMs: null, now: 2000 }))).toBeLessThanOrEqual(50);
  // A Git that runs on without marking (git gui, an editor open) is recorded as it is...
  expect(settleDelay(view({ running: true, endedMs: null, now: RUNNING_QUIET_MS }))).toBe(0);
  // ...but not a running operation: a rebase's long `exec` step is part of it.
  expect(settleDelay(view({ running: true, endedMs: null, operation: true, now: 60_000 }))).toBeGreaterThan(0);
  // A stopped operation (every process gone: a conflict, an edit) is recorded.
  expect(settleDelay(view({ operation: true }))).toBe(0);
  // index.lock: a command writing right now that has not marked yet.
  expect(settleDelay(view({ indexLocked: true }))).toBeGreaterThan(0);
  // settleMax bounds every wait.
  expect(settleDelay(view({ running: true, endedMs: null, operation: true, now: 600_000 }))).toBe(0);
});

test("without process information, the mark must be quiet for the format's 700 ms, and an operation waits", () => {
  expect(NO_PROCESS_QUIET_MS).toBe(700);
  expect(settleDelay(view({ running: null, endedMs: null, now: 500 }))).toBe(200);
  expect(settleDelay(view({ running: null, endedMs: null, now: 700 }))).toBe(0);
  expect(settleDelay(view({ running: null, endedMs: null, now: 700, operation: true }))).toBeGreaterThan(0);
  // A larger undo.settle is kept.
  expect(settleDelay(view({ running: null, endedMs: null, now: 700, settleMs: 1000 }))).toBe(300);
});

test("`watch`'s edits: quiet for undo.settle alone, then Git not busy, bounded by undo.settleMax", () => {
  const edits = (over: Partial<SettleView>) => view({ running: null, endedMs: null, blindQuietMs: 0, ...over });
  expect(settleDelay(edits({ now: 100 }))).toBe(50);
  expect(settleDelay(edits({ now: 150 }))).toBe(0);
  expect(settleDelay(edits({ now: 150, operation: true }))).toBe(150);
  expect(settleDelay(edits({ now: 150, indexLocked: true, settleMs: 0 }))).toBe(20);
  expect(settleDelay(edits({ now: 1000, indexLocked: true, settleMs: 1000 }))).toBe(250);
  expect(settleDelay(edits({ now: 100, markMs: 90, settleMaxMs: 100 }))).toBe(0);
});

/** A process whose command line looks like git-undo's worker for `gitDir` (as `ps` and /proc show it). */
function fakeWorker(gitDir: string) {
  return Bun.spawn({ cmd: ["sh", "-c", "sleep 30", "worker/main.ts", gitDir], stdout: "ignore", stderr: "ignore" });
}

for (const backend of PROCESS_BACKENDS) {
  test(`claiming worker.pid (${backend}): a worker of ours is left alone, anything else is taken over`, async () => {
    const table = processTable(backend, OWN_PROCESS);
    const dir = tempDir("undo");
    const gitDir = tempDir("git");
    const file = join(dir, "worker.pid");
    const ours = fakeWorker(gitDir);
    const stranger = Bun.spawn({ cmd: ["sleep", "30"], stdout: "ignore" });
    try {
      await Bun.sleep(50);
      expect(claimWorker(dir, gitDir, table, { waitForHook: false })).toBe(true);
      expect(readFileSync(file, "utf8")).toBe(`${process.pid}\n`);
      // Its lease: the file's time is ahead of the clock.
      expect(statSync(file).mtimeMs).toBeGreaterThan(Date.now());
      releaseWorker(dir);
      expect(existsSync(file)).toBe(false);
      // A live worker of ours for this git dir keeps the file.
      writeFileSync(file, `${ours.pid}\n`);
      expect(claimWorker(dir, gitDir, table, { waitForHook: false })).toBe(false);
      expect(readFileSync(file, "utf8")).toBe(`${ours.pid}\n`);
      releaseWorker(dir); // not ours: stays
      expect(existsSync(file)).toBe(true);
      // The same process is no worker for another git dir; a pid given to another program,
      // a dead one, and what is no pid at all are taken over.
      for (const content of [`${stranger.pid}\n`, "999999999\n", "-1\n", "0\n", "garbage", ""]) {
        writeFileSync(file, content);
        expect(claimWorker(dir, gitDir, table, { waitForHook: false })).toBe(true);
        expect(readFileSync(file, "utf8")).toBe(`${process.pid}\n`);
      }
      writeFileSync(file, `${ours.pid}\n`);
      expect(claimWorker(dir, tempDir("other-git"), table, { waitForHook: false })).toBe(true);
      releaseWorker(dir);

      writeFileSync(join(dir, "pending"), "\n");
      expect(takeMark(dir)).toBe(true);
      expect(hasMark(dir)).toBe(false);
      writeFileSync(join(dir, "pending"), "\n"); // a hook fires during the recording
      expect(hasMark(dir)).toBe(true);
      expect(takeMark(dir)).toBe(true);
    } finally {
      ours.kill();
      stranger.kill();
    }
  });
}

test("a hook's reservation: the worker it starts waits for its pid in the file", async () => {
  const dir = tempDir("undo");
  const file = join(dir, "worker.pid");
  // The starting hook (here a shell, alive) holds the file, then writes the new worker's pid.
  const hook = Bun.spawn(["sh", "-c", `printf '%s\\n' "$$" >"$1"; sleep 0.3; printf '%s\\n' "$2" >|"$1"`, "sh", file, String(process.pid)]);
  await waitFor(() => existsSync(file) && readFileSync(file, "utf8").trim() === String(hook.pid), "the hook's reservation");
  expect(claimWorker(dir, "/nowhere", processTable(process.env.GIT_UNDO_PROCESS_TABLE, OWN_PROCESS))).toBe(true);
  expect(readFileSync(file, "utf8")).toBe(`${process.pid}\n`);
  await hook.exited;
  releaseWorker(dir);
  expect(existsSync(file)).toBe(false);
});

test("while a followed command runs, its hooks' marks do not wake the worker; a guard's request does, and so does a mark otherwise", async () => {
  const undo = tempDir("marks");
  // The mark is there already, as while a command runs: a new file is a "rename" event, which always wakes.
  writeFileSync(join(undo, "pending"), "122 committed\n");
  const marks = new MarkWatch(undo);
  try {
    /** How long `wait(ms, onMark)` lasts when `poke` runs 20 ms into it. */
    const timed = async (ms: number, onMark: boolean, poke: () => void): Promise<number> => {
      const t0 = performance.now();
      const waiting = marks.wait(ms, onMark);
      setTimeout(poke, 20);
      await waiting;
      return performance.now() - t0;
    };
    // A look per hook while a script runs is CPU taken from the script (bench/scripted): the poll alone ends this wait.
    expect(await timed(300, false, () => appendFileSync(join(undo, "pending"), "123 committed\n"))).toBeGreaterThanOrEqual(290);
    expect(await timed(5000, true, () => appendFileSync(join(undo, "pending"), "124 committed\n"))).toBeLessThan(2500);
    expect(await timed(5000, false, () => writeFileSync(join(undo, "guard.125"), "125\n"))).toBeLessThan(2500);
  } finally {
    marks.close();
  }
});

test("worker.log stays bounded and keeps the newest lines", () => {
  const dir = tempDir("undo");
  for (let i = 0; i < 2000; i++) logLine(dir, `line ${i} ${"x".repeat(60)}`);
  expect(statSync(join(dir, "worker.log")).size).toBeLessThanOrEqual(LOG_LIMIT);
  expect(lastLogLines(dir, 1)[0]).toContain("line 1999 ");
});

test("the hook's environment is scrubbed: its index, dates and -c settings are not the state", () => {
  const env: NodeJS.ProcessEnv = {
    GIT_DIR: "x", GIT_INDEX_FILE: "i", GIT_WORK_TREE: ".", GIT_CONFIG_PARAMETERS: "'a.b'='c'", GIT_COMMITTER_DATE: "1 +0000",
    GIT_QUARANTINE_PATH: "q", GIT_REFLOG_ACTION: "rebase", GIT_CONFIG_NOSYSTEM: "1", GIT_COMMITTER_NAME: "Me",
    GIT_UNDO_BUN: "/b", GIT_UNDO_INTERNAL: "1", HOME: "/h",
  };
  scrubEnvironment(env);
  expect(env).toEqual({ GIT_CONFIG_NOSYSTEM: "1", GIT_COMMITTER_NAME: "Me", GIT_UNDO_BUN: "/b", HOME: "/h" });
});

test("a worker records the repository it is given, whatever the hook's environment, including a mark left by a crashed worker", async () => {
  const { r, gitDir, undo } = committedRepo(100);
  writeFileSync(join(undo, "pending.taken"), "\n"); // taken, never recorded
  writeFileSync(join(undo, "worker.pid"), "999999999\n"); // its owner is dead
  const bogus = tempDir("bogus");
  const p = Bun.spawn({
    cmd: [process.execPath, join(ROOT, "worker", "main.ts"), gitDir, r.dir],
    cwd: bogus,
    env: { ...r.env, GIT_DIR: bogus, GIT_INDEX_FILE: join(bogus, "index"), GIT_WORK_TREE: bogus, GIT_CONFIG_PARAMETERS: "'undo.worktree'='false'" },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await p.exited).toBe(0);
  expect(await new Response(p.stdout).text()).toBe("");
  expect(await new Response(p.stderr).text()).toBe("");
  await settled(gitDir);
  const snaps = list(r);
  expect(snaps).toHaveLength(1);
  expect(snaps[0]!.summary).toBe("commit (initial): base");
  expect(r.g("ls-tree", "--name-only", `${snaps[0]!.commit}:worktree`)).toBe("a.txt");
  expect(existsSync(join(undo, "pending.taken"))).toBe(false);
  expect(existsSync(join(undo, "worker.log"))).toBe(false); // nothing went wrong
}, 30_000);
