// capture.lock: one recorder or restorer per worktree at a time. The file is
// created exclusively and holds "<pid> <host>\n". A lock is stale, and taken
// over, when it cannot be parsed or its owner on this host is gone: dead, or
// its pid now names a process that started after the lock was written (the pid
// was reused). A lock of another host (a shared file system) is never taken.
// Also the owner checks the scratch folders and index.lock use, and the ref
// writers' owner file. Writing git-undo's files is core/files.ts's.
import { closeSync, existsSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { refused, type Refused } from "./errors.ts";
import { fileSafeHost, readUndoFile, replaceFile, thisHost } from "./files.ts";
import { clearBrokenUndoFiles, ensureUndoDir, undoFile } from "./undo-files.ts";
import { checkRepositoryThere } from "./repository-gone.ts";
import { seams } from "./seams.ts";
import { processes } from "./git-data/proc/index.ts";

export interface Lock {
  path: string;
  release(): void;
}


/** Whether a temporary file named with ownerTag, last changed at `changedMs`, belongs to a gone process of this host. */
export function tagOwnerGone(tag: string, changedMs: number): boolean {
  const m = /^(\d+)@(.+)$/.exec(tag);
  if (!m || m[2] !== fileSafeHost(thisHost())) return false;
  return ownerGone(Number(m[1]), changedMs);
}

/**
 * The boot time (/proc/uptime) and the start time (a tick) are not exact: a live owner
 * is only judged to have started after its file when it did by more than this.
 */
const START_SLACK_MS = 2000;

/**
 * Whether a pid written on this host at `writtenMs` no longer names its
 * writer: no such process, or one that started after the file was written.
 * Without a process table only the first can be told.
 */
export function ownerGone(pid: number, writtenMs: number): boolean {
  const running = processes();
  if (!running.alive(pid)) return true;
  const started = running.startedAt(pid);
  return started !== null && started > writtenMs + START_SLACK_MS;
}

/** "<pid> <host>" parsed; null when it is not that. */
export function parseOwner(content: string): { pid: number; host: string } | null {
  const m = /^(\d+) (\S+)$/.exec(content.trim());
  if (!m) return null;
  const pid = Number(m[1]);
  return Number.isSafeInteger(pid) && pid > 0 ? { pid, host: m[2]! } : null;
}

/** What capture.lock says: nobody holds it, a gone owner left it, a live owner on this host holds it, or another host does. */
export type LockState = "free" | "stale" | "held" | "foreign";
/** Why a lock is stale. */
export type StaleReason = "dead" | "reused" | "unreadable";

export interface LockStatus {
  state: LockState;
  path: string;
  pid: number | null;
  host: string | null;
  /** For a stale lock: why. */
  reason: StaleReason | null;
  /** The lock file's mtime (ms since the epoch), or null when there is none. */
  writtenMs: number | null;
}

/** A file being created (opened, not yet written) is empty for a moment: empty and younger than this, it is held. */
const BEING_WRITTEN_MS = 2000;

function judgeLock(path: string, content: string, writtenMs: number): LockStatus {
  const owner = parseOwner(content);
  const base = { path, writtenMs, pid: owner?.pid ?? null, host: owner?.host ?? null };
  if (owner === null) {
    if (content.trim() === "" && Date.now() - writtenMs < BEING_WRITTEN_MS) return { ...base, state: "held", reason: null };
    return { ...base, state: "stale", reason: "unreadable" };
  }
  if (owner.host !== thisHost()) return { ...base, state: "foreign", reason: null };
  if (!processes().alive(owner.pid)) return { ...base, state: "stale", reason: "dead" };
  if (ownerGone(owner.pid, writtenMs)) return { ...base, state: "stale", reason: "reused" };
  return { ...base, state: "held", reason: null };
}

function mtimeOf(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** The state of a worktree's capture.lock, for `doctor` and for refusals. */
export function inspectLock(undoDir: string): LockStatus {
  const path = undoFile(undoDir, "captureLock");
  let content: string;
  try {
    content = readFileSync(path, "utf8");
  } catch {
    return { state: "free", path, pid: null, host: null, reason: null, writtenMs: null };
  }
  return judgeLock(path, content, mtimeOf(path) ?? Date.now());
}

/** Whether capture.lock's content (as read from `path`) may be taken over. */
function isStale(content: string, path: string): boolean {
  return judgeLock(path, content, mtimeOf(path) ?? Date.now()).state === "stale";
}

/**
 * Who took index.lock for a restore: "<pid> <host>" written before index.lock
 * is created, then index.lock's device and inode added. A restore killed
 * before it let go leaves both, and the next run can tell that index.lock from
 * a Git command's, which it never removes.
 */

/** index.lock created before its owner file was last written, by at most this (the inode line comes right after). */
const INDEX_LOCK_SLACK_MS = 2000;

const ownerFile = (undoDir: string) => undoFile(undoDir, "indexLockOwner");
/** Git's lock on an index file; only this module creates or removes one. */
export const indexLockPath = (indexFile: string): string => `${indexFile}.lock`;
/** Whether some process (a Git command, or a restore) holds the index's lock now. */
export const indexLockHeld = (indexFile: string): boolean => existsSync(indexLockPath(indexFile));
const lockOf = indexLockPath;

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* gone already */
  }
}

/**
 * Take index.lock the way Git takes it (created exclusively, empty), recording
 * who took it first. False when it exists (a Git command holds it).
 */
export function createIndexLock(indexFile: string, undoDir: string): boolean {
  ensureUndoDir(undoDir);
  const stuck = clearBrokenUndoFiles(undoDir).find((b) => b.name === "indexLockOwner");
  if (stuck) throw refused({ kind: "undo-file-blocked", path: stuck.path, is: stuck.kind, what: "file" });
  const me = `${processes().selfPid} ${thisHost()}\n`;
  replaceFile(ownerFile(undoDir), me);
  try {
    closeSync(openSync(lockOf(indexFile), "wx", 0o644));
  } catch (e) {
    removeQuietly(ownerFile(undoDir));
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
  try {
    const st = statSync(lockOf(indexFile), { bigint: true });
    replaceFile(ownerFile(undoDir), `${me}${st.dev}:${st.ino}\n`);
  } catch {
    /* the owner line alone still tells the lock by its time */
  }
  return true;
}

/** Let go of index.lock taken by createIndexLock; the owner file goes last, so a lock never outlives it. */
export function releaseIndexLock(indexFile: string, undoDir: string): void {
  removeQuietly(lockOf(indexFile));
  removeQuietly(ownerFile(undoDir));
}

/** Who holds index.lock: nobody, a git-undo on this host that is gone or alive, or someone else (a Git command). */
export type IndexLockHolder =
  | { kind: "none" }
  | { kind: "git-undo-gone"; pid: number; path: string }
  | { kind: "git-undo-alive"; pid: number; path: string }
  | { kind: "other"; path: string; ageMs: number };

/**
 * Who holds the index's lock. It is a killed git-undo's when the owner file
 * names a gone process on this host and index.lock is still the empty file it
 * made (same inode, made when the owner file was written); a live owner's
 * when that process still runs; anyone else's otherwise. An owner file with
 * no index.lock of its own is dropped.
 */
export function indexLockHolder(indexFile: string, undoDir: string, now = Date.now()): IndexLockHolder {
  const lock = lockOf(indexFile);
  let lockStat;
  try {
    lockStat = statSync(lock, { bigint: true });
  } catch {
    lockStat = null;
  }
  const path = ownerFile(undoDir);
  let content: string | null = null;
  let ownerMs = 0;
  try {
    content = readFileSync(path, "utf8");
    ownerMs = statSync(path).mtimeMs;
  } catch {
    /* no owner file: not git-undo's */
  }
  const [first = "", second = ""] = (content ?? "").split("\n");
  const owner = content === null ? null : parseOwner(first);
  if (content !== null && owner === null) removeQuietly(path); // written in one step, so never half: it says nothing
  if (lockStat === null) return { kind: "none" };
  const made = Number(lockStat.mtimeMs);
  const other: IndexLockHolder = { kind: "other", path: lock, ageMs: now - made };
  if (owner === null || owner.host !== thisHost()) return other;
  const inode = /^(\d+):(\d+)$/.exec(second.trim());
  const ours =
    lockStat.isFile() &&
    lockStat.size === 0n &&
    made <= ownerMs + INDEX_LOCK_SLACK_MS / 2 &&
    made >= ownerMs - INDEX_LOCK_SLACK_MS &&
    (inode === null || (String(lockStat.dev) === inode[1] && String(lockStat.ino) === inode[2]));
  if (!ours) return other;
  return { kind: ownerGone(owner.pid, ownerMs) ? "git-undo-gone" : "git-undo-alive", pid: owner.pid, path: lock };
}

/**
 * Remove the index.lock a killed git-undo on this host left (indexLockHolder).
 * An index.lock of a Git command, or of a git-undo alive or on another host,
 * stays. Returns whether one was removed.
 */
export function clearDeadIndexLock(indexFile: string, undoDir: string): boolean {
  const path = ownerFile(undoDir);
  if (!existsSync(path)) return false;
  const holder = indexLockHolder(indexFile, undoDir);
  if (holder.kind === "git-undo-alive") return false;
  if (holder.kind === "git-undo-gone") removeQuietly(holder.path);
  // The owner file of a gone owner says nothing more; one of a live owner whose lock is someone else's neither.
  const owner = (() => {
    try {
      return parseOwner(readFileSync(path, "utf8").split("\n")[0] ?? "");
    } catch {
      return null;
    }
  })();
  if (owner !== null && owner.host === thisHost() && ownerGone(owner.pid, statMs(path))) removeQuietly(path);
  return holder.kind === "git-undo-gone";
}

function statMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

/**
 * Who runs a ref transaction of git-undo's (creating a snapshot ref, deleting
 * old ones, packing them): "<pid> <host>\n", written before Git starts and
 * removed once it has exited. A transaction killed halfway leaves Git's locks
 * behind (a ref's `.lock`, `packed-refs.lock`, reftable's `tables.list.lock`);
 * this file, left with them, says that git-undo's Git made them and when, so
 * the next recording can remove them (core/git-data/refs/locks.ts clearKilledRefWrite).
 */
export async function asRefWriter<T>(undoDir: string, work: () => Promise<T>): Promise<T> {
  const path = undoFile(undoDir, "refWriteOwner");
  try {
    ensureUndoDir(undoDir);
    replaceFile(path, `${processes().selfPid} ${thisHost()}\n`);
  } catch {
    /* without it a killed transaction's locks are only named by doctor */
  }
  try {
    return await work();
  } finally {
    removeQuietly(path);
  }
}

/**
 * When the ref transaction of a git-undo on this host that is gone started
 * (ms since the epoch): the owner file asRefWriter left names a dead process.
 * Null when there is none, or its owner may still run.
 */
export function killedRefWriteStart(undoDir: string): number | null {
  const path = undoFile(undoDir, "refWriteOwner");
  let content: string;
  let writtenMs: number;
  try {
    content = readFileSync(path, "utf8");
    writtenMs = statSync(path).mtimeMs;
  } catch {
    return null;
  }
  const owner = parseOwner(content);
  if (owner === null) {
    removeQuietly(path); // written in one step, so never half: it says nothing
    return null;
  }
  return owner.host === thisHost() && ownerGone(owner.pid, writtenMs) ? writtenMs : null;
}

/** Forget a killed ref writer once what it left has been dealt with. */
export const forgetRefWriter = (undoDir: string): void => removeQuietly(undoFile(undoDir, "refWriteOwner"));

/**
 * Create `path` exclusively with `content`, taking over a file whose content
 * `stale` says belongs to a dead owner. Only the stale content that was read is
 * removed, so a fresh owner's file never is. Shared by capture.lock and the
 * worker's pid file.
 */
export function claimFile(path: string, content: string, stale: (current: string, path: string) => boolean): boolean {
  for (let attempt = 0; attempt < 3; attempt++) {
    checkRepositoryThere(); // a new name: never in a folder being deleted
    try {
      const fd = openSync(path, "wx", 0o644);
      writeSync(fd, content);
      closeSync(fd);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    let current: string;
    try {
      current = readFileSync(path, "utf8");
    } catch {
      continue; // released between our attempt and the read
    }
    if (!stale(current, path)) return false;
    try {
      if (readFileSync(path, "utf8") === current) unlinkSync(path);
    } catch {
      /* gone already */
    }
  }
  return false;
}

/** Remove `path` if its first word is our pid. */
export function releaseFile(path: string): void {
  try {
    // Read as git-undo's files are read: a FIFO planted there must not hang a process on its way out.
    const [pid] = (readUndoFile(path)?.toString("utf8") ?? "").trim().split(" ");
    if (Number(pid) === processes().selfPid) unlinkSync(path);
  } catch {
    /* already gone */
  }
}

/**
 * Try once to take the lock; takes over a stale one. Returns null when a live
 * owner holds it. Whatever stands at git-undo's names and is no plain file is
 * cleared first (core/undo-files.ts), so every recorder and restorer starts
 * from files it can use; a folder with things in it at capture.lock is refused.
 */
export function tryLock(undoDir: string): Lock | null {
  ensureUndoDir(undoDir);
  const path = undoFile(undoDir, "captureLock");
  const stuck = clearBrokenUndoFiles(undoDir).find((b) => b.name === "captureLock");
  if (stuck) throw refused({ kind: "undo-file-blocked", path, is: stuck.kind, what: "lock" });
  if (!claimFile(path, `${processes().selfPid} ${thisHost()}\n`, isStale)) return null;
  return { path, release: () => releaseFile(path) };
}


/** How long to wait for a live owner: 10 seconds, unless the tests shorten it (core/seams.ts). */
export function defaultLockWaitMs(): number {
  return seams.lockWaitMs ?? 10_000;
}

/**
 * Take the lock, waiting up to `waitMs` for a live owner to finish; then refuse.
 * Every recorder and restorer holds it for as short a time as it can.
 */
export async function acquireLock(undoDir: string, waitMs = defaultLockWaitMs()): Promise<Lock> {
  const deadline = Date.now() + waitMs;
  let delay = 10;
  for (;;) {
    const lock = tryLock(undoDir);
    if (lock) return lock;
    const status = inspectLock(undoDir);
    // Waiting cannot help: nothing here can tell whether that host's git-undo still runs.
    if (status.state === "foreign") throw foreignLockRefusal(status);
    if (Date.now() >= deadline) {
      throw refused({ kind: "lock-busy", path: status.path, pid: status.pid });
    }
    await Bun.sleep(delay);
    delay = Math.min(delay * 2, 200);
  }
}

/** The refusal for a lock another host holds: the file, the host and the pid. */
const foreignLockRefusal = (status: LockStatus): Refused => refused({ kind: "lock-foreign", path: status.path, host: status.host, pid: status.pid });

export async function withLock<T>(undoDir: string, fn: () => Promise<T>, waitMs?: number): Promise<T> {
  const lock = await acquireLock(undoDir, waitMs);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}
