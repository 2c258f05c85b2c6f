// The worker's side of the guard (core/guard.ts). Each request is read while
// its Git command waits; the desk works out what that command needs first:
// nothing (it goes on at once), or a recording of the state as it is (the
// settling loop makes it, then lets every waiting command go). It also
// remembers which Git processes it found read-only, so that the index
// refresh a `/` answer causes in them is no change to record.
import { appendToFile } from "../core/files.ts";
import { answerGuard, commandEffect, dropOldAnswers, guardHeard, guardRequests, NO_EFFECT, type GuardRequest } from "../core/guard.ts";
import type { GuardAnswer } from "./tree-watch.ts";
import { sameProcess, type ProcessInfo, type ProcessTable } from "../core/git-data/proc/index.ts";
import { join } from "node:path";
import { ANCESTRY_DEPTH } from "./settle.ts";

/** A request older than this is looked at for a guard still waiting (the guard removes its own past its bound). */
const STALE_MS = 2000;
/** How long after a read-only process is gone its marks are still known as its. */
const FORGET_GONE_MS = 3000;
/** How long the desk remembers a read-only Git process or a command already recorded before. */
const REMEMBER_MS = 10 * 60_000;

export interface DeskSettings {
  /** undo.guard: false lets every command go at once, with nothing recorded or marked. */
  on: boolean;
  /** undo.guardTimeout, in ms. */
  timeoutMs: number;
}

export interface DeskView {
  /** Whether an earlier command that ended before `madeMs` (by 250 ms or more) is still to be recorded. */
  owed(madeMs: number): boolean;
  /**
   * Whether something may be in no snapshot yet: files changed since the last
   * recording read them (or that cannot be told), or a command's marks not recorded.
   */
  unseen(workTree: string): boolean;
  /** Whether a command's marks are not recorded yet (or being recorded). */
  unrecorded(): boolean;
  /** The answer to Git for `token` on `workTree`; null when there is none to give ("/"). */
  answer(token: string, workTree: string): GuardAnswer | null;
  /** Whether `word` names a commit (`git checkout x`: a branch switch, not a path). */
  namesCommit(word: string): Promise<boolean>;
  settings(): DeskSettings;
}

interface Waiting {
  req: GuardRequest;
  marks: number | null;
  alwaysList: string[];
  timer: ReturnType<typeof setTimeout>;
}

const isGit = (p: ProcessInfo): boolean => p.name === "git" || p.name.startsWith("git-");

export class GuardDesk {
  /** Requests already looked at, by file. */
  private seen = new Set<string>();
  /** Git processes found read-only: pid → when. */
  private readOnly = new Map<number, number>();
  /** When each of them was first seen gone. */
  private goneSince = new Map<number, number>();
  /** The outermost Git of commands recorded before they ran (their own Git children need it no more): pid → start. */
  private recordedFirst = new Map<number, number>();
  private waiting: Waiting[] = [];
  private scanning: Promise<void> = Promise.resolve();

  constructor(
    private undoDir: string,
    private table: ProcessTable | null,
    private view: DeskView,
  ) {}

  /** Whether a guard has asked this worker anything yet (until then a repository without one costs no look). */
  asked = false;

  /** Whether commands wait for a recording. */
  get due(): boolean {
    return this.waiting.length > 0;
  }

  /** Whether the process behind a mark is one the desk found read-only (its index write is a refresh). */
  readOnlyPid(pid: number): boolean {
    return this.readOnly.has(pid);
  }

  /**
   * The read-only processes that have exited. Every mark they wrote is in
   * the mark file by now (a hook ends before its Git does): once that is
   * read, forget them (forgetReadOnly), before their pids can be reused.
   */
  readOnlyGone(): number[] {
    if (this.readOnly.size === 0) return [];
    const pids = [...this.readOnly.keys()];
    const found = this.table?.get(pids);
    return pids.filter((pid) => (found ? !sameProcess(this.table!, found.get(pid), this.readOnly.get(pid)!) : !this.alive(pid)));
  }

  /**
   * Forget read-only processes seen gone for a while: their marks may still be
   * in a mark being recorded or put back, and a pid is not reused that soon.
   */
  forgetReadOnly(pids: readonly number[]): void {
    const now = Date.now();
    for (const pid of pids) {
      const since = this.goneSince.get(pid);
      if (since === undefined) this.goneSince.set(pid, now);
      else if (now - since > FORGET_GONE_MS) {
        this.readOnly.delete(pid);
        this.goneSince.delete(pid);
      }
    }
  }

  /** Whether a read-only command the desk let go still runs: the worker stays to read its marks. */
  get readOnlyRunning(): boolean {
    return this.readOnly.size > this.readOnlyGone().length;
  }

  /** Look at new requests; those that need nothing go on at once. One look at a time. */
  scan(): Promise<void> {
    this.scanning = this.scanning.then(() => this.look()).catch(() => {});
    return this.scanning;
  }

  private async look(): Promise<void> {
    const now = Date.now();
    guardHeard(this.undoDir); // reading requests again (woken, unstuck): the guards wait for this worker again
    for (const [pid, at] of this.readOnly) if (now - at > REMEMBER_MS) this.readOnly.delete(pid);
    for (const [pid, at] of this.recordedFirst) if (now - at > REMEMBER_MS) this.recordedFirst.delete(pid);
    const requests = guardRequests(this.undoDir);
    if (requests.length > 0) this.asked = true;
    if (requests.length === 0) dropOldAnswers(this.undoDir, (pid) => this.alive(pid));
    const present = new Set(requests.map((r) => r.file));
    for (const f of this.seen) if (!present.has(f)) this.seen.delete(f);
    for (const req of requests) {
      if (this.seen.has(req.file)) continue;
      // Left by a guard gone since (past its bound, killed): nobody waits for this one.
      if (now - req.madeMs > STALE_MS && !this.alive(req.shellPid)) {
        answerGuard(req);
        continue;
      }
      if (req.gitPid === null) continue; // being written: the next look
      this.seen.add(req.file);
      const settings = this.view.settings();
      if (!settings.on) {
        answerGuard(req);
        continue;
      }
      let effect = commandEffect(this.table?.commandLine(req.gitPid) ?? null);
      if (effect.readOnly) this.readOnly.set(req.gitPid, now);
      // A command recorded before its first guard (stash) needs no recording before its own children (its reset --hard).
      let root = effect.discards ? this.outermostGit(req.gitPid) : null;
      const firstAt = root === null ? undefined : this.recordedFirst.get(root.pid);
      // The same process (a start time read again may move by the table's resolution).
      const recorded = root !== null && firstAt !== undefined && Math.abs(firstAt - root.startMs) <= (this.table?.resolutionMs ?? 0);
      let discardsUnseen = effect.discards && !recorded && this.view.unseen(req.workTree);
      // `git checkout x`: Git is asked whether x names a commit (a branch switch, which discards
      // nothing) only where the answer decides, as it costs the command a Git process's time.
      // Elsewhere it counts as a file's checkout, and is marked: a switch's own hooks mark it too.
      if (discardsUnseen && effect.unlessCommit !== undefined && (await this.view.namesCommit(effect.unlessCommit).catch(() => false))) {
        effect = NO_EFFECT;
        root = null;
        discardsUnseen = false;
      }
      const mustRecord = discardsUnseen || this.view.owed(req.madeMs) || (effect.prunes === true && this.view.unrecorded());
      if (!mustRecord) {
        this.letGo(req, effect.marks ? req.gitPid : null, effect.alwaysList ?? []);
        continue;
      }
      if (root !== null) this.recordedFirst.set(root.pid, root.startMs);
      const w: Waiting = {
        req,
        marks: effect.marks ? req.gitPid : null,
        alwaysList: effect.alwaysList ?? [],
        // Past undo.guardTimeout the command goes on: the recording may still end well, or be torn by it.
        timer: setTimeout(() => this.release(w), Math.max(0, req.madeMs + settings.timeoutMs - Date.now())),
      };
      this.waiting.push(w);
    }
  }

  /** The recording the waiting commands needed is made (or failed): let them all go. */
  releaseAll(): void {
    for (const w of [...this.waiting]) this.release(w);
  }

  /** Let every waiting command go, the worker leaving. */
  close(): void {
    this.releaseAll();
  }

  private release(w: Waiting): void {
    const i = this.waiting.indexOf(w);
    if (i < 0) return;
    this.waiting.splice(i, 1);
    clearTimeout(w.timer);
    this.letGo(w.req, w.marks, w.alwaysList);
  }

  /** The command goes on; one that changes files without a hook of its own is marked first. */
  private letGo(req: GuardRequest, marks: number | null, alwaysList: readonly string[]): void {
    if (marks !== null) appendToFile(join(this.undoDir, "pending"), `${marks} guard\n`);
    const answer = this.view.answer(req.token, req.workTree);
    if (answer?.paths) for (const p of alwaysList) answer.paths.push(Buffer.from(p));
    answerGuard(req, answer);
  }

  /** The outermost Git process of the command `pid` belongs to (stash above its reset --hard). */
  private outermostGit(pid: number): ProcessInfo | null {
    if (!this.table) return null;
    let outer: ProcessInfo | null = null;
    for (const p of this.table.ancestry(pid, ANCESTRY_DEPTH)) {
      if (isGit(p)) outer = p;
      else if (p.name !== "sh") break;
    }
    return outer;
  }

  private alive(pid: number): boolean {
    if (this.table) {
      const found = this.table.get([pid]).get(pid);
      return found !== undefined && sameProcess(this.table, found, Date.now());
    }
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}
