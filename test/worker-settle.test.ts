// The worker's rules (spec: Automatic recording): wait for quiet and for the
// operation to end, bounded by undo.settleMax; one worker per worktree; no mark
// lost; errors to a bounded worker.log; the hook's environment never leaks in.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  burstSettle,
  claimWorker,
  hasMark,
  lastLogLines,
  LOG_LIMIT,
  logLine,
  markCommand,
  markRunning,
  nextStreak,
  releaseWorker,
  RUNNING_QUIET_MS,
  settleDelay,
  streakOnLook,
  takeMark,
} from "../core/settle.ts";
import { scrubEnvironment } from "../worker/main.ts";
import { list, settled, waitFor } from "./helpers/auto.ts";
import { makeRepo, ROOT, tempDir } from "./helpers/repo.ts";

const base = { settleMs: 700, settleMaxMs: 600_000 };

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

test("settleDelay waits for quiet, then for the operation, and gives up waiting at settleMax", () => {
  expect(settleDelay({ ...base, quietMs: 100, waitedMs: 100, busy: null })).toBe(605);
  expect(settleDelay({ ...base, quietMs: 700, waitedMs: 5000, busy: null })).toBe(0);
  expect(settleDelay({ ...base, quietMs: 900, waitedMs: 900, busy: "rebase-merge" })).toBeGreaterThan(0);
  expect(settleDelay({ ...base, quietMs: 600_000, waitedMs: 600_000, busy: "MERGE_HEAD" })).toBe(0);
  // Marks that never stop coming are recorded once settleMax has passed.
  expect(settleDelay({ ...base, quietMs: 10, waitedMs: 600_001, busy: null })).toBe(0);
});

test("one claim at a time; a dead owner's pid file is taken over; a new mark after taking one is kept", () => {
  const dir = tempDir("undo");
  expect(claimWorker(dir)).toBe(true);
  expect(readFileSync(join(dir, "worker.pid"), "utf8")).toBe(`${process.pid}\n`);
  // Held by another live process (the test runner above us): not ours.
  writeFileSync(join(dir, "worker.pid"), `${process.ppid}\n`);
  expect(claimWorker(dir, false)).toBe(false);
  expect(readFileSync(join(dir, "worker.pid"), "utf8")).toBe(`${process.ppid}\n`);
  releaseWorker(dir); // not ours: stays
  expect(existsSync(join(dir, "worker.pid"))).toBe(true);
  writeFileSync(join(dir, "worker.pid"), `${process.pid}\n`);
  releaseWorker(dir);
  writeFileSync(join(dir, "worker.pid"), "999999999\n");
  expect(claimWorker(dir)).toBe(true);
  releaseWorker(dir);
  expect(existsSync(join(dir, "worker.pid"))).toBe(false);

  writeFileSync(join(dir, "pending"), "\n");
  expect(takeMark(dir)).toBe(true);
  expect(hasMark(dir)).toBe(false);
  writeFileSync(join(dir, "pending"), "\n"); // a hook fires during the recording
  expect(hasMark(dir)).toBe(true);
  expect(takeMark(dir)).toBe(true);
});

test("a hook's reservation: the worker it starts waits for its pid in the file; another live pid is not taken", async () => {
  const dir = tempDir("undo");
  const file = join(dir, "worker.pid");
  // The starting hook (here a shell, alive) holds the file, then writes the new worker's pid.
  const hook = Bun.spawn(["sh", "-c", `printf '%s\\n' "$$" >"$1"; sleep 0.3; printf '%s\\n' "$2" >|"$1"`, "sh", file, String(process.pid)]);
  await waitFor(() => existsSync(file) && readFileSync(file, "utf8").trim() === String(hook.pid), "the hook's reservation");
  expect(claimWorker(dir)).toBe(true);
  expect(readFileSync(file, "utf8")).toBe(`${process.pid}\n`);
  await hook.exited;
  releaseWorker(dir);
  expect(existsSync(file)).toBe(false);
});

test("a mark quiet for longer than undo.settle waits while the Git that made it still runs, up to a bound", () => {
  expect(settleDelay({ ...base, quietMs: 900, waitedMs: 900, busy: null, running: true })).toBeGreaterThan(0);
  expect(settleDelay({ ...base, quietMs: 900, waitedMs: 900, busy: null, running: false })).toBe(0);
  expect(settleDelay({ ...base, quietMs: 900, waitedMs: 900, busy: null, running: null })).toBe(0);
  expect(settleDelay({ ...base, quietMs: RUNNING_QUIET_MS, waitedMs: RUNNING_QUIET_MS, busy: null, running: true })).toBe(0);
});

test("a process the mark names counts as running only while it is the one the hook saw", async () => {
  const dir = tempDir("undo");
  const pending = join(dir, "pending");
  const holder = Bun.spawn({ cmd: ["sleep", "30"] });
  try {
    await Bun.sleep(20);
    writeFileSync(pending, `${holder.pid}\n`);
    expect(markRunning(dir)).toBe(true);
    // The same pid in a mark written before that process started: a reused pid, not the Git the hook ran under.
    const before = new Date(Date.now() - 60_000);
    utimesSync(pending, before, before);
    expect(markRunning(dir)).toBe(false);
    // Older hooks wrote "pid:start": the start time decides.
    const stat = readFileSync(`/proc/${holder.pid}/stat`, "latin1");
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
    writeFileSync(pending, `${holder.pid}:${start}\n`);
    utimesSync(pending, before, before);
    expect(markRunning(dir)).toBe(true);
    writeFileSync(pending, `${holder.pid}:${Number(start) + 1}\n`);
    expect(markRunning(dir)).toBe(false);
  } finally {
    holder.kill();
    await holder.exited;
  }
  writeFileSync(pending, `${holder.pid}\n`);
  expect(markRunning(dir)).toBe(false); // exited
  writeFileSync(pending, "");
  expect(markRunning(dir)).toBeNull(); // names nothing: the markers decide
});

test("a burst of marks doubles the quiet needed, up to four times undo.settle; a pause ends it", () => {
  let streak = nextStreak(0, null, 700); // the worker's first recording
  expect(burstSettle(700, streak)).toBe(700);
  for (const expected of [1400, 2800, 2800]) {
    streak = nextStreak(streak, 300, 700); // each mark 300 ms after the previous recording
    expect(burstSettle(700, streak)).toBe(expected);
  }
  streak = nextStreak(streak, 1400, 700); // a pause of twice undo.settle
  expect(burstSettle(700, streak)).toBe(700);
  expect(nextStreak(0, -50, 700)).toBe(1); // a mark made during the recording
});

test("a different Git command marking while the worker waits is a burst too; one command's own hooks are not", () => {
  expect(streakOnLook(0, "10:5 9:4", "10:5 9:4")).toBe(0); // not the pair: the outermost alone is compared (markCommand)
  expect(streakOnLook(0, "9:4", "9:4")).toBe(0);
  expect(streakOnLook(0, "9:4", "12:7")).toBe(1);
  expect(streakOnLook(1, "9:4", "12:7")).toBe(2);
  expect(streakOnLook(2, "9:4", "12:7")).toBe(2); // four times undo.settle at most
  expect(streakOnLook(1, null, "12:7")).toBe(1); // a mark naming no process (no /proc) tells nothing
  expect(streakOnLook(1, "9:4", null)).toBe(1);
  const dir = tempDir("undo");
  writeFileSync(join(dir, "pending"), "31 30 2\n"); // the hook's Git, an alias's Git above it, the outermost last
  expect(markCommand(dir)).toBe("2");
  writeFileSync(join(dir, "pending"), "31:100 2:7\n"); // as older hooks wrote it
  expect(markCommand(dir)).toBe("2:7");
  writeFileSync(join(dir, "pending"), "");
  expect(markCommand(dir)).toBeNull();
});

test("a script's pauses just longer than undo.settle are not each recorded once its commands came faster than that", async () => {
  // Commands 100 ms apart for 1.5 s, a pause of 1.75 undo.settle, one more:
  // without the rule the pause would be recorded, then the end.
  const { r, gitDir, undo } = committedRepo(400);
  // Marks as the hooks write them, each naming a Git command that has exited (no such pid).
  let n = 0;
  const mark = () => {
    n++;
    r.write("a.txt", `edit ${n}\n`);
    writeFileSync(join(undo, "pending"), `${4_000_000 + n}:${n}\n`);
  };
  mark();
  const p = Bun.spawn({ cmd: [process.execPath, join(ROOT, "worker", "main.ts"), gitDir, r.dir], cwd: r.dir, env: r.env, stdout: "ignore", stderr: "ignore" });
  for (let i = 0; i < 15; i++) {
    await Bun.sleep(100);
    mark();
  }
  await Bun.sleep(700);
  mark();
  expect(await p.exited).toBe(0);
  await settled(gitDir);
  const snaps = list(r);
  expect(snaps).toHaveLength(1);
  expect(r.g("show", `${snaps[0]!.commit}:worktree/a.txt`)).toBe(`edit ${n}`);
}, 30_000);

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
