// When a snapshot is due: the worker's policy, per command, and `git undo
// watch`'s for edits made outside Git (settleDelay). Each hook appends
// the pid of the Git process it ran under to the mark; the worker follows that
// process up to the command the user started (an alias's Git, `git pull` over
// its fetch and merge, a rebase over its `exec` steps' Git) and records once
// every Git process of it has exited and `undo.settle` more has passed with no
// new mark. A new mark in that time (a script's next command) joins the same
// recording. Where no process information exists, the mark must have been
// quiet for NO_PROCESS_QUIET_MS instead. `watch` sees no processes either:
// its edits must have been quiet for undo.settle, and Git busy with nothing.
import { sameProcess, type ProcessInfo, type ProcessTable } from "../core/git-data/proc/index.ts";

/** The quiet the worker waits for when it cannot see processes (the format's rule). */
export const NO_PROCESS_QUIET_MS = 700;
/**
 * A Git process that keeps running without marking for this long (`git gui`,
 * `git commit` with its editor open) is recorded as it is; an operation that
 * runs (a rebase in an `exec` step) is not.
 */
export const RUNNING_QUIET_MS = 3000;
/** How far above a marked process the worker looks for the command's own Git. */
export const ANCESTRY_DEPTH = 8;

/** What the worker knows at one look. */
export interface SettleView {
  now: number;
  /** When a hook last wrote the mark. */
  markMs: number;
  /** When the worker first saw marks it has not recorded yet. */
  firstSeenMs: number;
  /** Whether a Git process of the commands marked still runs; null when processes cannot be seen. */
  running: boolean | null;
  /** When the worker saw the last of them exit; null while one runs or when unknown. */
  endedMs: number | null;
  /** An operation (rebase, am, cherry-pick or revert sequence, bisect, merge) is in progress. */
  operation: boolean;
  /** A Git command holds index.lock right now. */
  indexLocked: boolean;
  settleMs: number;
  settleMaxMs: number;
  /**
   * The least quiet after the last mark when processes cannot be seen:
   * NO_PROCESS_QUIET_MS for the hooks' marks (the format's rule), 0 for the
   * edits `watch` sees (undo.settle alone).
   */
  blindQuietMs: number;
}

/** How long to wait before looking again; 0 to record now. */
export function settleDelay(v: SettleView): number {
  if (v.now - v.firstSeenMs >= v.settleMaxMs) return 0;
  const sinceMark = v.now - v.markMs;
  if (v.running === null) {
    const quiet = Math.max(v.settleMs, v.blindQuietMs);
    if (sinceMark < quiet) return quiet - sinceMark;
    // Git busy: look again within a quarter of a second, and no sooner than 20 ms (an undo.settle of 0).
    return v.operation || v.indexLocked ? Math.max(20, Math.min(250, quiet)) : 0;
  }
  if (v.running) {
    // Still running: wait for it, unless it has long stopped marking and is no operation.
    return !v.operation && sinceMark >= RUNNING_QUIET_MS ? 0 : pollMs(v.now - v.firstSeenMs);
  }
  // Every process has exited: a stopped operation (a conflict, an `edit`) is recorded
  // too, with its state. index.lock: a command writing right now that has not marked yet.
  if (v.indexLocked) return 20;
  const since = Math.max(v.endedMs ?? v.markMs, v.markMs);
  return v.now - since < v.settleMs ? v.settleMs - (v.now - since) : 0;
}

/**
 * Once every process of the command has exited, the worker reads the state
 * this soon, and records it when undo.settle has passed with no new mark (a
 * new mark meanwhile, a script's next command, throws the reading away). A
 * command typed a quarter of a second later then finds the state read long
 * before it starts, even on a busy machine; a script's commands, closer than
 * this, cost no reading at all.
 */
export const READ_AFTER_MS = 40;

/**
 * How long to wait before reading the state ahead of recording it: null when
 * it is not to be read early (a command still runs, or one is writing the
 * index), else the ms left until `readAfterMs` (READ_AFTER_MS, or undo.settle
 * while a script runs: see the worker) have passed since the command's end.
 */
export function earlyReadIn(v: SettleView, readAfterMs = READ_AFTER_MS): number | null {
  if (v.running !== false || v.indexLocked) return null;
  const since = v.now - Math.max(v.endedMs ?? v.markMs, v.markMs);
  return Math.max(0, Math.min(readAfterMs, v.settleMs) - since);
}

/** When the quiet after the command's end is over: the snapshot may be recorded from then on. */
export const quietFrom = (v: SettleView): number => Math.max(v.endedMs ?? v.markMs, v.markMs) + v.settleMs;

/**
 * How often to look whether a command still runs: often in its first seconds,
 * so that its end is seen within a few hundredths of a second (two commands a
 * quarter of a second apart stay apart), then less.
 */
export const pollMs = (runningForMs: number): number => (runningForMs < 2000 ? 20 : runningForMs < 30_000 ? 50 : 200);

/** A Git process the worker follows: alive while the same process (by start time) is. */
interface Followed {
  pid: number;
  /** When it was first known alive: a process started later under the pid is another one. */
  knownMs: number;
}

const isGit = (p: ProcessInfo): boolean => p.name === "git" || p.name.startsWith("git-");

/**
 * The Git commands marked since the last recording: every Git process the
 * marks lead to, and how many commands the user started (the outermost Git of
 * each chain).
 */
export class CommandWatch {
  private followed = new Map<number, Followed>();
  private commands = new Set<number>();
  /** When the worker saw every followed process gone; null while one runs. */
  endedMs: number | null = null;
  /** When the worker last saw one of them running (0: never). */
  lastRunningMs = 0;

  constructor(private table: ProcessTable | null) {}

  /** Whether processes can be seen at all. */
  get sighted(): boolean {
    return this.table !== null;
  }

  /** How many commands the marks since the last recording came from, as far as seen (at least 1). */
  get commandCount(): number {
    return Math.max(1, this.commands.size);
  }

  /**
   * Take in pids a hook wrote at `markMs`. Each one's ancestors are read: Git
   * processes above it (through the `sh` Git runs aliases with) belong to the
   * same command; while an operation is in progress the walk goes on through
   * anything, so that a rebase's `exec make test` running Git finds the rebase.
   */
  add(pids: readonly number[], markMs: number, operation: boolean): void {
    if (!this.table) return;
    for (const pid of pids) {
      if (this.followed.has(pid)) continue;
      // Started after the mark was written: not the process that wrote it, nor one above it.
      const after = (p: ProcessInfo): boolean => p.startMs > markMs + this.table!.resolutionMs;
      // Where the walk below stops: no ancestor above it is read (a script's Bun, its shell, up to init).
      const last = (p: ProcessInfo): boolean => after(p) || (!isGit(p) && p.name !== "sh" && !operation);
      const chain = this.table.ancestry(pid, ANCESTRY_DEPTH, last);
      let outer: ProcessInfo | null = null;
      for (const p of chain) {
        if (after(p)) break;
        if (isGit(p)) {
          outer = p;
          if (!this.followed.has(p.pid)) this.followed.set(p.pid, { pid: p.pid, knownMs: Date.now() });
        } else if (p.name !== "sh" && !operation) break;
      }
      // Counted by the outermost Git seen alive. A process gone before it could
      // be read may have been a command's child (a pull's fetch) as well as a
      // command of its own: it is not counted, so the count never says more.
      if (outer) {
        this.commands.add(outer.pid);
        this.endedMs = null;
      }
    }
  }

  /** Whether a followed Git process still runs; null when processes cannot be seen. */
  running(now = Date.now()): boolean | null {
    if (!this.table) return null;
    if (this.followed.size === 0) return false;
    const found = this.table.get([...this.followed.keys()]);
    for (const f of this.followed.values()) {
      if (sameProcess(this.table, found.get(f.pid), f.knownMs)) {
        this.lastRunningMs = now;
        return true;
      }
      this.followed.delete(f.pid);
    }
    this.endedMs ??= now;
    return false;
  }

  /** A recording took the marks: start over. */
  reset(): void {
    this.followed.clear();
    this.commands.clear();
    this.endedMs = null;
    this.lastRunningMs = 0;
  }
}
