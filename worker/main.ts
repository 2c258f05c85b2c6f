// The settling worker the hooks start: `bun worker/main.ts <gitdir> <worktree-top>`.
// One per worktree (its pid file; recordings also take capture.lock). It waits
// until the hooks' mark has been quiet for undo.settle and Git is not running
// an operation (one Git stopped, at a conflict say, is recorded), takes the
// mark, records one change snapshot, repeats while new marks arrive, and exits
// once nothing has been marked for a while (core/settle.ts lingerMs).
// It never prints: errors go to <gitdir>/undo/worker.log.
import { appendFileSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { runEntry } from "../core/bundle.ts";
import {
  burstSettle,
  claimWorker,
  dropTaken,
  hasMark,
  hasTaken,
  indexLocked,
  lingerForMark,
  lingerMs,
  logLine,
  lowerPriority,
  markAge,
  markCommand,
  markRunning,
  nextStreak,
  operationBusy,
  releaseWorker,
  settleDelay,
  streakOnLook,
  takeMark,
} from "../core/settle.ts";

/**
 * The hook's environment describes the Git command that fired it: a temporary
 * index, a quarantine, `-c` settings, its dates. None of that is the state to
 * record, so only variables that say who the user is and how Git is set up stay.
 */
const KEEP = new Set([
  "GIT_CONFIG_NOSYSTEM",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_EXEC_PATH",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "GIT_CEILING_DIRECTORIES",
]);

export function scrubEnvironment(env: NodeJS.ProcessEnv): void {
  for (const key of Object.keys(env)) {
    if (!key.startsWith("GIT_") || KEEP.has(key)) continue;
    if (key.startsWith("GIT_UNDO_") && key !== "GIT_UNDO_INTERNAL") continue;
    delete env[key];
  }
}

/**
 * GIT_UNDO_WORKER_TRACE=<file> (tests, bench/scripted.ts): a line per start
 * and stop; a stop also gives the CPU milliseconds this worker and the Git
 * processes it waited for have used, from /proc.
 */
function trace(event: string): void {
  const path = process.env.GIT_UNDO_WORKER_TRACE;
  if (!path) return;
  appendFileSync(path, event === "stop" ? `stop ${process.pid} ${cpuMs() ?? ""}\n` : `${event} ${process.pid}\n`);
}

function cpuMs(): number | null {
  try {
    const stat = readFileSync("/proc/self/stat", "latin1");
    // utime, stime, cutime, cstime: fields 14 to 17, in clock ticks (100 a second).
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(f[i]), 0) * 10;
  } catch {
    return null;
  }
}

/** How many recordings may fail in a row before the worker leaves the mark to the next one. */
const MAX_FAILURES = 3;

async function settleLoop(gitDir: string, cwd: string, undoDir: string): Promise<void> {
  const { openRepo } = await import("../core/repo.ts");
  const { record } = await import("../core/record.ts");
  // Pin the repository the hook named; Git then takes the cwd as the worktree top.
  process.env.GIT_DIR = gitDir;
  process.chdir(cwd);
  const repo = await openRepo(cwd);
  const { settleMs, settleMaxMs } = repo.config;
  let firstSeen: number | null = null;
  let failures = 0;
  // The end of the previous recording, and how deep into a burst of marks we are (core/settle.ts nextStreak).
  let recordedAt: number | null = null;
  let streak = 0;
  // The Git command that had made the mark at the previous look (core/settle.ts streakOnLook).
  let seenCommand: string | null = null;
  for (;;) {
    if (!hasTaken(undoDir)) {
      const age = markAge(undoDir);
      if (age === null) {
        // Nothing to record: stay a while for the next mark, so that a burst
        // of commands with pauses starts one worker, not one per pause.
        if (await lingerForMark(undoDir, lingerMs())) continue;
        // Leave the pid file first, then look again: a hook that saw us
        // alive may have marked in between, and then nobody else would record.
        trace("stop");
        releaseWorker(undoDir);
        if (!hasMark(undoDir) && !hasTaken(undoDir)) return;
        if (!claimWorker(undoDir, false)) return;
        trace("start");
        continue;
      }
      const now = Date.now();
      const command = markCommand(undoDir);
      if (firstSeen === null) {
        firstSeen = now;
        streak = nextStreak(streak, recordedAt === null ? null : now - age - recordedAt, settleMs);
      } else {
        streak = streakOnLook(streak, seenCommand, command);
      }
      seenCommand = command;
      const quietMs = burstSettle(settleMs, streak);
      // Quiet: is Git still running the command that marked (core/settle.ts
      // markRunning)? If it has exited, an operation in progress is one Git
      // stopped, and only index.lock (a command writing right now) holds us.
      const quiet = age >= quietMs;
      const running = quiet ? markRunning(undoDir) : null;
      const busy = !quiet ? null : running === false ? indexLocked(repo) : await operationBusy(repo);
      const wait = settleDelay({ quietMs: age, waitedMs: now - firstSeen, busy, running, settleMs: quietMs, settleMaxMs });
      if (wait > 0) {
        await Bun.sleep(wait);
        continue;
      }
      if (!takeMark(undoDir)) continue;
    }
    try {
      await record(repo, { kind: "change" });
      dropTaken(undoDir);
      recordedAt = Date.now();
      firstSeen = null;
      failures = 0;
    } catch (e) {
      failures++;
      logLine(undoDir, `recording failed: ${(e as Error)?.message ?? String(e)}`);
      if (failures >= MAX_FAILURES) {
        logLine(undoDir, `giving up after ${failures} failures; the next Git command tries again`);
        trace("stop");
        releaseWorker(undoDir);
        return;
      }
      await Bun.sleep(500 * failures);
    }
  }
}

export async function main(argv: string[]): Promise<number> {
  const [gitDirArg, cwdArg] = argv;
  if (gitDirArg === "--check") {
    // doctor: can this Bun load the recorder?
    await import("../core/record.ts");
    process.stdout.write("ok\n");
    return 0;
  }
  if (!gitDirArg) return 0;
  scrubEnvironment(process.env);
  const gitDir = resolve(gitDirArg);
  const cwd = resolve(cwdArg ?? gitDir);
  const undoDir = join(gitDir, "undo");
  // Claim first, before loading the recorder, so a worker that loses the race costs little.
  if (!claimWorker(undoDir)) {
    trace("lost");
    return 0;
  }
  trace("start");
  // Whatever the user runs comes first: the lowest CPU and I/O priority, inherited by our Git processes.
  await lowerPriority();
  // Stopped from outside (uninstall, a shutdown): leave no pid file behind. The mark stays for the next worker.
  process.on("SIGTERM", () => {
    trace("stop");
    releaseWorker(undoDir);
    process.exit(0);
  });
  try {
    await settleLoop(gitDir, cwd, undoDir);
  } catch (e) {
    logLine(undoDir, `worker stopped: ${(e as Error)?.message ?? String(e)}`);
    trace("stop");
  } finally {
    releaseWorker(undoDir);
  }
  return 0;
}

/** The worker run to its end. */
export async function run(argv: string[]): Promise<never> {
  // Git's streams are not ours; a stray write must go nowhere rather than fail.
  process.on("uncaughtException", () => process.exit(0));
  process.exit(await main(argv));
}

// A bundle older than the sources hands over to them (core/bundle.ts).
if (import.meta.main) await runEntry("worker", import.meta.path, run);
