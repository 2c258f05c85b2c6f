// Automatic recording's shared rules: the marks the hooks leave, the worker's
// pid file and log, and when a burst of Git activity has settled enough to
// record. Used by worker/main.ts and `git undo watch`.
import { appendFileSync, existsSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";
import { join } from "node:path";
import { OPERATION_MARKERS } from "./format.ts";
import { claimFile, indexLockHeld, pidAlive, releaseFile } from "./lock.ts";
import type { Repo } from "./repo.ts";
import { undoFile, UNDO_FILES } from "./undo-files.ts";

/** worker.log is cut back to its newest half past this size. */
export const LOG_LIMIT = 64 * 1024;

/** Milliseconds since the mark was last touched, or null when there is none. */
export function markAge(undoDir: string, now = Date.now()): number | null {
  try {
    return Math.max(0, now - statSync(undoFile(undoDir, "pending")).mtimeMs);
  } catch {
    return null;
  }
}

export const hasMark = (undoDir: string): boolean => existsSync(undoFile(undoDir, "pending"));
export const hasTaken = (undoDir: string): boolean => existsSync(undoFile(undoDir, "pendingTaken"));

/** Take the mark for a recording. False when it vanished (another taker). */
export function takeMark(undoDir: string): boolean {
  try {
    renameSync(undoFile(undoDir, "pending"), undoFile(undoDir, "pendingTaken"));
    return true;
  } catch {
    return false;
  }
}

/** The recording that took the mark succeeded. */
export function dropTaken(undoDir: string): void {
  try {
    unlinkSync(undoFile(undoDir, "pendingTaken"));
  } catch {
    /* already gone */
  }
}

/** What Git is in the middle of: an operation marker, or index.lock (a command running now). */
export function busyReason(repo: Repo): string | null {
  for (const m of OPERATION_MARKERS) if (existsSync(join(repo.gitDir, m))) return m;
  if (indexLockHeld(repo.indexFile)) return "index.lock";
  return null;
}

/**
 * The same, with the markers read as the recorder reads them (core/refs.ts):
 * in a reftable repository CHERRY_PICK_HEAD and REVERT_HEAD are refs, not files.
 */
export async function operationBusy(repo: Repo): Promise<string | null> {
  if (indexLockHeld(repo.indexFile)) return "index.lock";
  const { currentMarkers } = await import("./refs.ts");
  return (await currentMarkers(repo))[0] ?? null;
}

/** index.lock alone: a Git command writing the index right now. */
export const indexLocked = (repo: Repo): string | null => (indexLockHeld(repo.indexFile) ? "index.lock" : null);

/**
 * A Git process a hook ran under, as the hooks write it into the mark: its
 * pid, and from the hooks of earlier versions also its start time (field 22
 * of /proc/<pid>/stat, in clock ticks since boot).
 */
export interface MarkProcess {
  pid: number;
  start: string | null;
}

/**
 * The Git processes the mark names: the hook walks up to five parent links
 * from $PPID (Name and PPid from /proc/<pid>/status) and writes the pids of
 * those whose name is git ("pid:start" from older hooks). Null when it names
 * none (no /proc where the hook ran): then only the operation markers can
 * tell, as before.
 */
export function markProcesses(undoDir: string): MarkProcess[] | null {
  let text: string;
  try {
    text = readFileSync(undoFile(undoDir, "pending"), "latin1");
  } catch {
    return null;
  }
  const procs: MarkProcess[] = [];
  for (const word of text.split(/\s+/)) {
    const m = /^([1-9]\d*)(?::(\d+))?$/.exec(word);
    if (m) procs.push({ pid: Number(m[1]), start: m[2] ?? null });
  }
  return procs.length ? procs : null;
}

/**
 * How much later than the mark a process may seem to have started and still
 * be the one it names: the start time has 10 ms ticks, the clocks may drift
 * apart a little. Another process given the same pid that soon is unheard of.
 */
const START_SLACK_MS = 1000;

/**
 * Whether the process still runs: alive, not a zombie, and the one the mark
 * names, not a later process given the same pid: the same start time when
 * the mark has it, otherwise started no later than the mark was written
 * (`markedMs`), since every process it names was running then.
 */
export function processRunning(p: MarkProcess, markedMs: number): boolean {
  let line: string;
  try {
    line = readFileSync(`/proc/${p.pid}/stat`, "latin1");
  } catch {
    return false;
  }
  // The name in parentheses may hold spaces and parentheses: fields follow the last ")".
  const fields = line.slice(line.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z" || fields[0] === "X") return false;
  if (p.start !== null) return fields[19] === p.start;
  const startedMs = processStartMs(Number(fields[19]));
  return startedMs === null || startedMs <= markedMs + START_SLACK_MS;
}

/**
 * When a process started (ms since the epoch), from its start in clock ticks
 * since boot: /proc reports them at 100 a second (USER_HZ), and /proc/uptime
 * says how long ago boot was. Null when that cannot be read.
 */
function processStartMs(ticks: number): number | null {
  try {
    const uptimeS = Number(readFileSync("/proc/uptime", "latin1").split(" ")[0]);
    if (!Number.isFinite(uptimeS) || !Number.isFinite(ticks)) return null;
    return Date.now() - (uptimeS - ticks / 100) * 1000;
  } catch {
    return null;
  }
}

/**
 * Whether Git is still running the command that made the newest mark, the
 * signal that tells a running operation from a stopped one on every Git:
 * between the steps of a rebase (and during its `exec` commands) `git rebase`
 * itself is alive, an ancestor of every hook it fires; once Git stops at a
 * conflict or an `edit`, or a merge waits for its commit, every Git process
 * above the last hook has exited and control is back with the user. Null when
 * the mark cannot tell (no /proc): the markers decide, as before.
 */
export function markRunning(undoDir: string): boolean | null {
  // The names first, then the time: a hook rewriting the mark in between
  // leaves a later time, which every process it names started before.
  const procs = markProcesses(undoDir);
  if (procs === null) return null;
  const markedMs = safeMtime(undoFile(undoDir, "pending")) || Date.now();
  return procs.some((p) => processRunning(p, markedMs));
}

export interface SettleInput {
  /** ms since the mark was last touched. */
  quietMs: number;
  /** ms since this mark was first seen. */
  waitedMs: number;
  busy: string | null;
  /** Whether a Git process the mark names still runs (markRunning); null or absent when unknown. */
  running?: boolean | null;
  settleMs: number;
  settleMaxMs: number;
}

/** How long a mark may be quiet while the Git command that made it still runs before it is recorded anyway. */
export const RUNNING_QUIET_MS = 3000;

/**
 * Record once the mark has been quiet for undo.settle and Git is not in the
 * middle of something. An operation Git has stopped (every Git process the
 * mark names has exited: a conflict, an `edit`, a merge waiting for its
 * commit) is recorded then too, the state blob saying what is in progress;
 * one still running (or, without /proc, any in progress) is waited for. After
 * undo.settleMax, record anyway (marks that never stop). Returns how long to
 * wait before asking again, or 0 to record now.
 */
export function settleDelay(s: SettleInput): number {
  const overdue = s.waitedMs >= s.settleMaxMs || s.quietMs >= s.settleMaxMs;
  if (s.quietMs < s.settleMs && !overdue) return Math.max(5, s.settleMs - s.quietMs + 5);
  // The command that marked still runs, between two of its own writes (on a
  // loaded machine a `stash push` can be quiet for longer than undo.settle):
  // its end is the state to record. A Git that stays alive for good (`git gui`,
  // an alias running a long script) is recorded after RUNNING_QUIET_MS of quiet.
  const midCommand = s.running === true && s.quietMs < RUNNING_QUIET_MS;
  const waitForIt = midCommand || (s.busy !== null && (s.busy === "index.lock" || s.running !== false));
  if (waitForIt && !overdue) return Math.max(20, Math.min(250, s.settleMs));
  return 0;
}

/**
 * A sustained burst (a script running Git with no pauses) must not cost a
 * recording per command: when a mark comes less than BURST_GAP_SETTLES
 * undo.settle after the previous recording ended, the burst streak grows,
 * and each step doubles the quiet the next recording waits for, up to
 * BURST_MAX_FACTOR × undo.settle. A pause of that length ends the burst (the
 * streak starts again at 0), so commands typed by hand, seconds apart, are
 * each recorded after undo.settle as before.
 */
export const BURST_GAP_SETTLES = 2;
export const BURST_MAX_FACTOR = 4;

/** The burst streak once a new mark arrives `gapMs` after the previous recording ended (null: none yet). */
export function nextStreak(streak: number, gapMs: number | null, settleMs: number): number {
  if (gapMs === null || gapMs >= BURST_GAP_SETTLES * settleMs) return 0;
  return Math.min(streak + 1, Math.log2(BURST_MAX_FACTOR));
}

/**
 * The Git command that made the mark: the outermost Git process it names
 * (`git pull` and the fetch it runs are one command), or null
 * when it names none (no /proc).
 */
export function markCommand(undoDir: string): string | null {
  const procs = markProcesses(undoDir);
  const outer = procs?.at(-1);
  if (!outer) return null;
  return outer.start === null ? String(outer.pid) : `${outer.pid}:${outer.start}`;
}

/**
 * The burst streak when the worker looks at the mark again while waiting for
 * it to be quiet: a different Git command has marked since its last look
 * (commands coming faster than undo.settle, as a script runs them) is a burst
 * as surely as a mark soon after a recording, and grows the streak the same
 * way, so that a script's pauses just longer than undo.settle are not each
 * recorded. One command's own hooks, or a mark that names no process, leave it.
 */
export function streakOnLook(streak: number, seen: string | null, now: string | null): number {
  if (seen === null || now === null || seen === now) return streak;
  return Math.min(streak + 1, Math.log2(BURST_MAX_FACTOR));
}

/** The quiet the next recording waits for at this streak. */
export const burstSettle = (settleMs: number, streak: number): number => settleMs * 2 ** streak;

/** The pid in the worker's pid file when that process is alive. */
export function liveWorker(undoDir: string): number | null {
  try {
    const pid = Number(readFileSync(undoFile(undoDir, "workerPid"), "utf8").trim());
    return Number.isInteger(pid) && pid > 0 && pidAlive(pid) ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Whether a recording is on its way: a mark (or one being recorded) newer than
 * the latest snapshot (unix seconds; null for none), and a worker alive to
 * record it. `list`, `show` and the picker say so; `git undo` records first.
 */
export function recordingPending(undoDir: string, latestDate: number | null): boolean {
  let newest = -Infinity;
  for (const name of [UNDO_FILES.pending, UNDO_FILES.pendingTaken]) {
    try {
      newest = Math.max(newest, statSync(join(undoDir, name)).mtimeMs);
    } catch {
      /* none */
    }
  }
  // Snapshot dates are whole seconds: a mark within the snapshot's second counts as newer.
  if (newest === -Infinity || (latestDate !== null && newest < latestDate * 1000)) return false;
  return liveWorker(undoDir) !== null;
}

/**
 * Become the worktree's one worker. A hook that found no worker reserves the
 * pid file before starting one (it creates the file exclusively with its own
 * pid, then writes the new worker's), so two hooks firing together start one
 * worker; the worker it started finds its pid there. Otherwise the file is
 * created exclusively, taking over a dead owner's. `waitForHook` gives the
 * starting hook a moment to write our pid when the file still names it.
 */
export function claimWorker(undoDir: string, waitForHook = true): boolean {
  const path = undoFile(undoDir, "workerPid");
  const mine = String(process.pid);
  const deadline = Date.now() + (waitForHook ? 1000 : 0);
  for (;;) {
    let current: string | null = null;
    try {
      current = readFileSync(path, "utf8").trim();
    } catch {
      /* absent: claim it below */
    }
    if (current === mine) return true;
    const owner = Number(current);
    const liveOther = current !== null && current !== "" && Number.isInteger(owner) && owner > 0 && pidAlive(owner);
    if (!liveOther || Date.now() >= deadline) break;
    Bun.sleepSync(10);
  }
  try {
    return claimFile(path, `${mine}\n`, (content, file) => {
      const pid = Number(content.trim());
      if (content.trim() === "") return Date.now() - safeMtime(file) >= 5000; // empty: being written, unless old
      return Number.isInteger(pid) && pid > 0 && !pidAlive(pid);
    });
  } catch {
    return false; // no undo dir, or no permission: no worker
  }
}

/**
 * How long a worker with nothing to record stays, watching for the next mark,
 * before it exits: a burst of Git commands with short pauses then starts one
 * worker, not one per pause. GIT_UNDO_WORKER_LINGER (milliseconds) sets it;
 * the test suite sets 0, so that a settled worktree has no worker left.
 */
export const LINGER_MS = 10_000;

export function lingerMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.GIT_UNDO_WORKER_LINGER;
  const n = v === undefined || v.trim() === "" ? NaN : Number(v);
  return Number.isFinite(n) && n >= 0 ? n : LINGER_MS;
}

/**
 * Wait up to `ms` for a new mark, looking a few times a second (one stat).
 * True when one came; false at the end, or at once when automatic recording
 * was switched off here (`uninstall` deletes hooks-enabled and waits for us).
 */
export async function lingerForMark(undoDir: string, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!existsSync(undoFile(undoDir, "hooksEnabled"))) return false;
    await Bun.sleep(Math.min(100, Math.max(1, end - Date.now())));
    if (hasMark(undoDir) || hasTaken(undoDir)) return true;
  }
  return false;
}

/**
 * Give the worker the lowest CPU priority (nice 19) and the idle I/O class,
 * both inherited by the Git processes it starts, so that a recording never
 * competes with what the user runs. Best effort: where either is refused or
 * `ionice` is missing, the worker runs as it is.
 */
export async function lowerPriority(): Promise<void> {
  try {
    setPriority(19);
  } catch {
    /* not permitted */
  }
  try {
    const ionice = Bun.which("ionice");
    if (!ionice) return;
    const p = Bun.spawn([ionice, "-c", "3", "-p", String(process.pid)], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    await p.exited;
  } catch {
    /* no I/O classes here */
  }
}

/**
 * An empty pid file is a hook's reservation being written (hooks/*), which
 * the hooks leave alone; one left empty for good (the hook killed between
 * creating and writing it, a full disk) would keep every hook from starting a
 * worker, so every recording clears one older than a few seconds.
 */
export function clearStaleReservation(undoDir: string): void {
  const path = undoFile(undoDir, "workerPid");
  try {
    if (readFileSync(path, "utf8").trim() === "" && Date.now() - safeMtime(path) >= 5000) unlinkSync(path);
  } catch {
    /* none, or not ours to remove */
  }
}

function safeMtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

export function releaseWorker(undoDir: string): void {
  releaseFile(undoFile(undoDir, "workerPid"));
}

/** Append a line to worker.log, keeping the file under LOG_LIMIT. */
export function logLine(undoDir: string, message: string): void {
  const path = undoFile(undoDir, "workerLog");
  try {
    const line = `${new Date().toISOString()} [${process.pid}] ${message.replace(/\n+$/, "").replace(/\n/g, "\n    ")}\n`;
    appendFileSync(path, line);
    if (statSync(path).size > LOG_LIMIT) {
      const body = readFileSync(path, "utf8");
      const tail = body.slice(body.length - LOG_LIMIT / 2);
      writeFileSync(path, tail.slice(tail.indexOf("\n") + 1));
    }
  } catch {
    /* a log that cannot be written must not stop the recording */
  }
}

/** The last `n` lines of worker.log. */
export function lastLogLines(undoDir: string, n: number): string[] {
  try {
    return readFileSync(undoFile(undoDir, "workerLog"), "utf8").split("\n").filter(Boolean).slice(-n);
  } catch {
    return [];
  }
}

/** The paths among `paths` (relative to the worktree top) that Git ignores; tracked files never are. */
export async function ignoredPaths(repo: Repo, paths: readonly string[]): Promise<Set<string>> {
  if (paths.length === 0) return new Set();
  const r = await repo.git.run(["check-ignore", "-z", "--stdin"], { input: paths.join("\0") + "\0", okExit: [1] });
  return new Set(new TextDecoder().decode(r.stdout).split("\0").filter(Boolean));
}
