// The worker's protocol with the hooks and the CLI: the marks the hooks
// leave, worker.pid with its lease and claim, the wait for the next mark, and
// the git dir the worker holds. Used by worker/main.ts and by the commands
// that ask after the worker (doctor, list, show, the picker, uninstall). The
// files core writes too (worker.log, the recording-problem note) are
// core/worker-files.ts; when a snapshot is due is worker/settle.ts.
import {
  closeSync,
  existsSync,
  constants as fsConstants,
  fstatSync,
  linkSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  watch,
  type FSWatcher,
} from "node:fs";
import { join, resolve } from "node:path";
import { checkRepositoryThere } from "../core/repository-gone.ts";
import { refMigrationRunning } from "../core/git-data/refs/migration.ts";
import { guardRequests, guardUnanswered } from "../core/guard.ts";
import { claimFile, releaseFile } from "../core/lock.ts";
import { readUndoFile, withUndoFile } from "../core/files.ts";
import { processes, type ProcessTable } from "../core/git-data/proc/index.ts";
import { guardFile, undoFile, UNDO_FILES } from "../core/undo-files.ts";
import { logLine, safeMtime } from "../core/worker-files.ts";

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

/** When the current mark was begun (its first hook), or null when there is none. */
export function markStartedMs(undoDir: string): number | null {
  try {
    const st = statSync(undoFile(undoDir, "pending"));
    // Where the file system keeps no birth time, its last change is the best that is known.
    return st.birthtimeMs > 0 ? Math.min(st.birthtimeMs, st.mtimeMs) : st.mtimeMs;
  } catch {
    return null;
  }
}

/** Take the mark for a recording. False when it vanished (another taker). */
export function takeMark(undoDir: string): boolean {
  checkRepositoryThere(); // a new name in undo/: never in a folder being deleted
  try {
    renameSync(undoFile(undoDir, "pending"), undoFile(undoDir, "pendingTaken"));
    return true;
  } catch {
    return false;
  }
}

/**
 * A recording that took the mark was thrown away: put the mark back, unless
 * hooks have written a new one meanwhile (which then stands for both).
 */
export function restoreMark(undoDir: string): void {
  checkRepositoryThere();
  try {
    linkSync(undoFile(undoDir, "pendingTaken"), undoFile(undoDir, "pending"));
  } catch {
    /* a new mark is there */
  }
  dropTaken(undoDir);
}

/** The recording that took the mark succeeded. */
export function dropTaken(undoDir: string): void {
  try {
    unlinkSync(undoFile(undoDir, "pendingTaken"));
  } catch {
    /* already gone */
  }
}

/**
 * Where the worker has read the mark up to. The hooks only append to it (one
 * pid a line); a taken mark starts a new file, and a mark written over by the
 * hooks of an earlier version may shrink: either starts the reading over.
 */
export interface MarkCursor {
  ino: number;
  offset: number;
}

export interface MarkRead {
  /** The pids written since the cursor (older hooks wrote several on a line, or "pid:start"). */
  pids: number[];
  /** How many post-index-change hooks marked since the cursor (each a write of the index). */
  indexWrites: number;
  /** One of them said Git wrote files in the working tree (checkout, reset --hard, merge). */
  worktreeWritten: boolean;
  /** When a hook last wrote the mark. */
  markMs: number;
  cursor: MarkCursor;
  /** Each line's pid and what it says (`committed`, `0`, `1`, `guard`; `` for an earlier version's line). */
  lines: Array<{ pid: number; word: string }>;
}

const PID = /^[1-9]\d{0,9}$/;

/**
 * What hooks wrote into the mark since `cursor`; null when there is no mark
 * (or it is not a regular file). A line is `<pid> <hook's first argument>`:
 * `committed` from reference-transaction, `1` or `0` from post-index-change
 * (1: it wrote files). Hooks of earlier versions wrote pids alone, several a
 * line, some as `pid:start`.
 */
export function readMark(undoDir: string, cursor: MarkCursor | null, which: "pending" | "pendingTaken" = "pending"): MarkRead | null {
  return withUndoFile(undoFile(undoDir, which), (fd, st) => {
    const from = cursor && cursor.ino === st.ino && cursor.offset <= st.size ? cursor.offset : 0;
    // Whole lines only: a hook may be writing the next one right now.
    const buf = Buffer.alloc(Math.max(0, Math.min(st.size - from, 1 << 20)));
    const got = buf.length ? readSync(fd, buf, 0, buf.length, from) : 0;
    const text = buf.subarray(0, got).toString("latin1");
    const end = text.lastIndexOf("\n") + 1;
    const read: MarkRead = { pids: [], indexWrites: 0, worktreeWritten: false, markMs: st.mtimeMs, cursor: { ino: st.ino, offset: from + end }, lines: [] };
    for (const line of text.slice(0, end).split("\n")) {
      const words = line.trim().split(/\s+/);
      const [first, second] = words;
      // guard: the worker's own mark for a command the guard saw (worker/guard-desk.ts).
      if (words.length === 2 && first !== undefined && PID.test(first) && (second === "committed" || second === "0" || second === "1" || second === "guard")) {
        read.pids.push(Number(first));
        read.lines.push({ pid: Number(first), word: second });
        if (second === "0" || second === "1") read.indexWrites++;
        if (second === "1") read.worktreeWritten = true;
        continue;
      }
      for (const word of words) {
        const m = /^([1-9]\d{0,9})(?::\d+)?$/.exec(word);
        if (m) {
          read.pids.push(Number(m[1]));
          read.lines.push({ pid: Number(m[1]), word: "" });
        }
      }
    }
    return read;
  });
}

/**
 * The worker's lease: it keeps worker.pid's modification time this far ahead
 * of the clock, renewing it every LEASE_RENEW_MS. A hook whose mark is newer
 * than that time knows no worker of ours is alive under the pid (a crash, a
 * reboot, the pid given to another program) and starts one to take over.
 */
export const LEASE_MS = 5000;
export const LEASE_RENEW_MS = 1000;

export function renewLease(undoDir: string, now = Date.now()): void {
  try {
    const at = new Date(now + LEASE_MS);
    utimesSync(undoFile(undoDir, "workerPid"), at, at);
  } catch {
    /* released, or not ours to touch */
  }
}

/** How far past LEASE_MS a lease may stand ahead of the clock (a renewal late by a busy machine) before it is no lease. */
const LEASE_SLACK_MS = 2000;

/**
 * Whether a lease is held: worker.pid's time still ahead of the clock, and no
 * further ahead than a worker ever sets it (one far ahead is a clock set back,
 * or a file planted: nobody's lease).
 */
export function leaseHeld(undoDir: string, now = Date.now()): boolean {
  const until = safeMtime(undoFile(undoDir, "workerPid"));
  return until > now && until <= now + LEASE_MS + LEASE_SLACK_MS;
}

/**
 * Remove worker.pid when its lease stands further ahead than any worker sets
 * it: the hooks would trust it, and start no worker, until the clock caught up
 * (a clock set back, a pid reused after a reboot). Every git-undo command
 * looks (one stat); the next Git command then starts a worker.
 */
export function clearFutureLease(undoDir: string, now = Date.now()): boolean {
  const path = undoFile(undoDir, "workerPid");
  if (safeMtime(path) <= now + LEASE_MS + LEASE_SLACK_MS) return false;
  try {
    unlinkSync(path);
    logLine(undoDir, "removed worker.pid: its lease stood far ahead of the clock (a clock set back?), so no worker was started");
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the process with this pid is git-undo's worker for this git dir:
 * its command line runs worker/main and names the directory. A pid the
 * system gave to another program since, or a zombie, is not.
 */
export function isOurWorker(pid: number, gitDir: string, table: ProcessTable | null): boolean {
  if (!table) return processes().alive(pid);
  const p = table.get([pid]).get(pid);
  if (!p || p.zombie) return false;
  const args = table.commandLine(pid);
  return args !== null && WORKER_COMMAND.test(args) && args.includes(gitDir);
}

/** The pid in worker.pid (a number; anything else, or anything but a regular file, is no pid). */
function pidInFile(undoDir: string): number | null {
  const path = undoFile(undoDir, "workerPid");
  try {
    // Never block on a FIFO or follow a link planted there.
    const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
    try {
      if (!fstatSync(fd).isFile()) return null;
      const buf = Buffer.alloc(32);
      const text = buf.subarray(0, readSync(fd, buf, 0, 32, 0)).toString("latin1").trim();
      return /^[1-9]\d{0,9}$/.test(text) ? Number(text) : null;
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

/** Remove worker.pid when it is not a regular file (a FIFO, a link, a folder): nothing of ours, and in the way. */
function clearStrangePidFile(undoDir: string): void {
  const path = undoFile(undoDir, "workerPid");
  try {
    const st = lstatSync(path);
    if (st.isFile()) return;
    if (st.isDirectory()) rmSync(path, { recursive: true, force: true });
    else unlinkSync(path);
  } catch {
    /* none */
  }
}

/**
 * The worker's pid when one is alive and holds its lease. With a process
 * table, it must also run git-undo's worker: a zombie, or a pid given to
 * another program, is none.
 */
/**
 * The worker a guard waited its whole bound for (core/guard.ts guardUnanswered)
 * while worker.pid still names it and it lives: the guards do not wait for it
 * then. Its lease may have run out (a stopped worker renews nothing).
 */
export function deafWorker(undoDir: string): number | null {
  const pid = guardUnanswered(undoDir);
  return pid !== null && pid === pidInFile(undoDir) && processes().alive(pid) ? pid : null;
}

export function liveWorker(undoDir: string, table: ProcessTable | null = null): number | null {
  const pid = pidInFile(undoDir);
  if (pid === null || !processes().alive(pid) || !leaseHeld(undoDir)) return null;
  if (table === null) return pid;
  const p = table.get([pid]).get(pid);
  const args = p && !p.zombie ? table.commandLine(pid) : null;
  return args !== null && WORKER_COMMAND.test(args) ? pid : null;
}

/** The command line of git-undo's worker (cli/start-worker runs it). */
const WORKER_COMMAND = /worker\/main\.(?:ts|js)\b/;

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

/** How long a worker waits for the hook that started it to write its pid over the hook's reservation. */
const RESERVATION_WAIT_MS = 1000;

/**
 * Become the worktree's one worker. A hook that found no worker reserves
 * worker.pid (created exclusively with the hook shell's pid, then the new
 * worker's), so two hooks firing together start one worker. Otherwise the
 * file is taken over when it names no worker of ours for this git dir: a dead
 * process, a zombie, a pid given to another program, or no pid at all. A
 * worker of ours that lost its lease (stopped, or starved of CPU) keeps the
 * file; its lease is renewed for it, so the hooks stop starting workers.
 */
export function claimWorker(undoDir: string, gitDir: string, table: ProcessTable | null, opts: { waitForHook?: boolean } = {}): boolean {
  const path = undoFile(undoDir, "workerPid");
  const mine = processes().selfPid;
  clearStrangePidFile(undoDir);
  const deadline = Date.now() + (opts.waitForHook === false ? 0 : RESERVATION_WAIT_MS);
  for (;;) {
    const owner = pidInFile(undoDir);
    if (owner === mine) {
      renewLease(undoDir);
      return true;
    }
    // Our own hook's reservation (its shell still running) is about to name us: give it a moment.
    if (owner === null || !processes().alive(owner) || isOurWorker(owner, gitDir, table) || Date.now() >= deadline) break;
    Bun.sleepSync(10);
  }
  try {
    // The hook's `>|` empties the file before it writes our pid: the loop above can
    // end in that moment, and the file name us by the time it is claimed.
    let named = false;
    const claimed = claimFile(path, `${mine}\n`, (content) => {
      const pid = Number(content.trim());
      if (!/^[1-9]\d{0,9}$/.test(content.trim())) return true; // no pid: a broken file, or a reservation long dead
      if (pid === mine) {
        named = true;
        return false;
      }
      if (!processes().alive(pid) || !isOurWorker(pid, gitDir, table)) return true;
      renewLease(undoDir); // ours, alive: it records; the hooks need not start another
      return false;
    });
    const ours = claimed || named;
    if (ours) renewLease(undoDir);
    return ours;
  } catch {
    return false; // no undo dir, or no permission: no worker
  }
}

/**
 * How long a worker with nothing to record stays, watching for the next mark,
 * before it exits: a burst of Git commands with short pauses then starts one
 * worker, not one per pause. GIT_UNDO_WORKER_LINGER (milliseconds, read by
 * worker/main.ts) sets it; the test suite sets 0, so that a settled worktree
 * has no worker left.
 */
export const LINGER_MS = 30_000;
/**
 * With the guard on, the worker stays longer: its watch answers Git at once
 * (worker/tree-watch.ts), and a command finding no worker waits for Bun to
 * start one. undo.linger sets either.
 */
export const GUARD_LINGER_MS = 600_000;

/**
 * GIT_UNDO_WORKER_LINGER's milliseconds: null when it is unset; set to
 * anything but a number of milliseconds, LINGER_MS (undo.linger then counts
 * for nothing either).
 */
export function lingerSetting(value: string | undefined): number | null {
  if (value === undefined) return null;
  const n = value.trim() === "" ? NaN : Number(value);
  return Number.isFinite(n) && n >= 0 ? n : LINGER_MS;
}

/** How long to linger: GIT_UNDO_WORKER_LINGER's (lingerSetting) when set, else undo.linger's, else the default for the guard or without it. */
export function lingerMs(fromEnv: number | null, config?: { lingerMs: number | null; guard: boolean }): number {
  if (fromEnv !== null) return fromEnv;
  return config === undefined ? LINGER_MS : (config.lingerMs ?? (config.guard ? GUARD_LINGER_MS : LINGER_MS));
}

/**
 * Resolves when something in `undoDir` changes (a hook appending to the mark)
 * or after `ms`, whichever comes first. The directory is watched where the
 * system can (inotify, kqueue), so a new mark is seen within milliseconds; a
 * look every LOOK_MS covers file systems that send no events.
 */
export class MarkWatch {
  private watcher: FSWatcher | null = null;
  private wake: (() => void) | null = null;
  /** Whether a new line in the mark ends the current wait (`wait`'s `onMark`). */
  private wakeOnMark = true;

  constructor(undoDir: string) {
    try {
      this.watcher = watch(undoDir, { persistent: false }, (_event, name) => {
        // A mark, a guard's request (its line may come after the file: both events count),
        // or a file or folder going away (uninstall; the repository being deleted).
        const file = name === null ? null : String(name);
        if (file === null || _event === "rename" || guardFile(file)?.kind === "request") this.poke(file);
        else if (file.startsWith(UNDO_FILES.pending)) this.poke(file, this.wakeOnMark);
      });
      this.watcher.on("error", () => this.close());
    } catch {
      this.watcher = null;
    }
  }

  /** Called on every event with the file's name: the guard's requests are read even while the worker records. */
  onEvent: ((name: string | null) => void) | null = null;

  private poke(name: string | null = null, wake = true): void {
    this.onEvent?.(name);
    if (!wake) return;
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /**
   * Wait for a change or `ms`, at most LOOK_MS without events to tell. With
   * `onMark` false, a hook's new line in the mark does not end the wait (a
   * guard's request and a file going away still do): while a followed command
   * runs, its hooks mark every few milliseconds and a look for each is CPU
   * taken from the command.
   */
  wait(ms: number, onMark = true): Promise<void> {
    const limit = this.watcher ? ms : Math.min(ms, LOOK_MS);
    this.wakeOnMark = onMark;
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = null;
        resolve();
      }, Math.max(1, limit));
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
    this.poke();
  }
}

/** How often a worker without directory events looks at the mark while it lingers. */
const LOOK_MS = 100;

/**
 * Wait up to `ms` for a new mark. True when one came; false at the end, or at
 * once when automatic recording was switched off here (`uninstall` deletes
 * hooks-enabled and waits for us).
 */
export async function lingerForMark(undoDir: string, ms: number, marks: MarkWatch, held: () => boolean = () => true): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (!held() || !existsSync(undoFile(undoDir, "hooksEnabled"))) return false;
    // A request still being written (no line yet) is read once its line comes (MarkWatch pokes the desk): not before, or this would spin.
    if (hasMark(undoDir) || hasTaken(undoDir) || guardRequests(undoDir).some((r) => r.gitPid !== null)) return true;
    const left = end - Date.now();
    if (left <= 0) return false;
    await marks.wait(Math.min(left, 1000));
  }
}

/** A linked worktree's common git dir, as its `commondir` file names it (the hooks read it the same way); else the git dir. */
function commonDirOf(gitDir: string): string {
  const named = readUndoFile(join(gitDir, "commondir"))?.toString("utf8").replace(/\r?\n$/, "");
  return named ? resolve(gitDir, named) : gitDir;
}

/**
 * The git dir a worker serves, held by its identity (device and inode), not
 * its path: once it is deleted (`rm -rf`, `git worktree remove`) or another
 * repository is made at the same path, the worker writes nothing more there
 * and leaves. A folder being deleted loses its files before itself, in no
 * order we know, so each folder the worker writes into has a witness looked
 * at too: HEAD, the undo folder's hooks-enabled, and the refs and object
 * folders Git makes and never removes (those there when the hold began).
 */
export class GitDirHold {
  private readonly dev: number;
  private readonly ino: number;
  private readonly witnesses: string[];
  /** The work tree once known: a linked worktree's folder removed (`git worktree remove`) ends the worker too. */
  workTree: string | null = null;

  constructor(
    private readonly gitDir: string,
    private readonly undoDir: string,
  ) {
    const st = statSync(gitDir);
    this.dev = st.dev;
    this.ino = st.ino;
    const common = commonDirOf(gitDir);
    this.witnesses = [undoFile(undoDir, "hooksEnabled"), join(common, "refs", "heads"), join(common, "objects", "info"), join(common, "objects", "pack")].filter((p) => existsSync(p));
  }

  held(): boolean {
    try {
      const st = statSync(this.gitDir);
      return (
        st.dev === this.dev &&
        st.ino === this.ino &&
        existsSync(this.undoDir) &&
        this.witnessesKept() &&
        (this.workTree === null || existsSync(this.workTree))
      );
    } catch {
      return false;
    }
  }

  /**
   * HEAD and every witness there, or only moved for a moment: `git refs
   * migrate` removes the old store's HEAD and refs before moving the new ones
   * in from its ref_migration folder. They are looked at again after the
   * folder, which the migration removes last.
   */
  private witnessesKept(): boolean {
    const there = () => existsSync(join(this.gitDir, "HEAD")) && this.witnesses.every((p) => existsSync(p));
    return there() || refMigrationRunning(this.gitDir) || there();
  }
}

/**
 * The worker's CPU priority: below what the user runs, so a recording yields
 * to it, but not the lowest, which on a busy machine starves a recording for
 * so long that the next command starts before it has read the state.
 */
const WORKER_NICE = 5;

/**
 * Lower the worker's CPU priority (WORKER_NICE) and I/O priority (the lowest
 * of the best-effort class), both inherited by the Git processes it starts.
 * Best effort: where either is refused or `ionice` is missing (macOS, the
 * BSDs), the worker runs as it is.
 */
export async function lowerPriority(): Promise<void> {
  try {
    // node:os only here: the CLI, which shares this module, never pays for loading it.
    // Never above the caller's: a command run at nice 15 keeps its worker there.
    const os = require("node:os") as typeof import("node:os");
    os.setPriority(Math.max(os.getPriority(), WORKER_NICE));
  } catch {
    /* not permitted */
  }
  try {
    const ionice = Bun.which("ionice");
    if (!ionice) return;
    const p = Bun.spawn([ionice, "-c", "2", "-n", "7", "-p", String(processes().selfPid)], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    await p.exited;
  } catch {
    /* no I/O classes here */
  }
}

export function releaseWorker(undoDir: string): void {
  releaseFile(undoFile(undoDir, "workerPid"));
}
