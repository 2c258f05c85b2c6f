// capture.lock: one recorder or restorer per worktree at a time. The file is
// created exclusively and holds "<pid> <host>\n"; a lock whose owner on this
// host is dead is stale and is taken over. Also replaceFile: the one-step file
// replacement the hook installer and the recorder's caches use, and readJsonFile
// for those caches.
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { refuse } from "./errors.ts";

export interface Lock {
  path: string;
  release(): void;
}

/** Whether a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether the lock content belongs to a dead process on this host. */
function isStale(content: string): boolean {
  const [pidText, host] = content.trim().split(" ");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return content.trim() === ""; // half-written by a crashed owner
  if (host !== undefined && host !== hostname()) return false;
  return !pidAlive(pid);
}

/**
 * Replace a file in one step: written beside it under a hidden name, then
 * renamed over it, so a reader sees the old content or the new, never half.
 */
export function replaceFile(path: string, content: string, mode?: number): void {
  const tmp = join(dirname(path), `.${basename(path)}.git-undo-${process.pid}`);
  writeFileSync(tmp, content, mode === undefined ? {} : { mode });
  if (mode !== undefined) chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/** A JSON file written by replaceFile (the recorder's caches), or null when it is missing or unreadable. */
export function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

/**
 * Create `path` exclusively with `content`, taking over a file whose content
 * `stale` says belongs to a dead owner. Only the stale content that was read is
 * removed, so a fresh owner's file never is. Shared by capture.lock and the
 * worker's pid file.
 */
export function claimFile(path: string, content: string, stale: (current: string, path: string) => boolean): boolean {
  for (let attempt = 0; attempt < 3; attempt++) {
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
    const [pid] = readFileSync(path, "utf8").trim().split(" ");
    if (Number(pid) === process.pid) unlinkSync(path);
  } catch {
    /* already gone */
  }
}

/** Try once to take the lock; takes over a stale one. Returns null when a live owner holds it. */
export function tryLock(undoDir: string): Lock | null {
  mkdirSync(undoDir, { recursive: true });
  const path = join(undoDir, "capture.lock");
  if (!claimFile(path, `${process.pid} ${hostname()}\n`, isStale)) return null;
  return { path, release: () => releaseFile(path) };
}

/** Who holds the lock, for messages. */
export function lockOwner(undoDir: string): string | null {
  try {
    return readFileSync(join(undoDir, "capture.lock"), "utf8").trim();
  } catch {
    return null;
  }
}

/** How long to wait for a live owner: GIT_UNDO_LOCK_WAIT_MS (tests shorten it), else 10 seconds. */
export function defaultLockWaitMs(): number {
  const v = process.env.GIT_UNDO_LOCK_WAIT_MS;
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : 10_000;
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
    if (Date.now() >= deadline) {
      const owner = lockOwner(undoDir);
      throw refuse(
        `another git-undo is recording or restoring in this worktree (${join(undoDir, "capture.lock")}${owner ? ` held by pid ${owner.split(" ")[0]}` : ""}); try again`,
      );
    }
    await Bun.sleep(delay);
    delay = Math.min(delay * 2, 200);
  }
}

export async function withLock<T>(undoDir: string, fn: () => Promise<T>, waitMs?: number): Promise<T> {
  const lock = await acquireLock(undoDir, waitMs);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}
