// Writing and reading git-undo's own files safely: replaceFile, the one-step
// replacement the hook installer and the recorder's caches use (a reader sees
// the old content or the new, never half), appendToFile and readUndoFile,
// which never follow a symbolic link or hang on a FIFO planted at a name, and
// readJsonFile for the caches. A temporary name carries its owner (ownerTag:
// <pid>@<host>) so that one a killed process left can be told and removed;
// core/lock.ts judges whether an owner is gone.
import { chmodSync, closeSync, constants, fstatSync, openSync, readFileSync, renameSync, writeFileSync, writeSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { checkRepositoryThere } from "./repository-gone.ts";
import { processes } from "./git-data/proc/index.ts";

/**
 * This machine's name as the owner files write it: the kernel's, read from
 * /proc where there is one (loading node:os costs every command about half a
 * millisecond), else node:os's (the same uname answer).
 */
export function thisHost(): string {
  try {
    const name = readFileSync("/proc/sys/kernel/hostname", "utf8").trim();
    if (name) return name;
  } catch {
    /* no /proc: macOS, the BSDs */
  }
  return (require("node:os") as typeof import("node:os")).hostname();
}

/** "<pid>@<host>", naming a temporary file or folder by its owner (the host kept to file-name characters). */
export const ownerTag = (): string => `${processes().selfPid}@${fileSafeHost(thisHost())}`;
/** A host name kept to file-name characters. */
export const fileSafeHost = (host: string): string => host.replace(/[^A-Za-z0-9._-]/g, "_");

/**
 * Replace a file in one step: written beside it under a hidden name, then
 * renamed over it, so a reader sees the old content or the new, never half.
 */
export function replaceFile(path: string, content: string, mode?: number): void {
  // Named by its owner, so that one a killed process left is removed (core/git-data/objects.ts sweepLeftovers).
  const tmp = join(dirname(path), `.${basename(path)}.git-undo-${ownerTag()}`);
  checkRepositoryThere();
  writeFileSync(tmp, content, mode === undefined ? {} : { mode });
  if (mode !== undefined) chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/**
 * Append to one of git-undo's files, creating it if need be, without following
 * a symbolic link, without waiting for a FIFO's reader, and writing into
 * nothing but a regular file: something planted at its name makes this throw,
 * never hang or write elsewhere.
 */
export function appendToFile(path: string, content: string): void {
  checkRepositoryThere();
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${path} is not a regular file`);
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}

/**
 * One of git-undo's own files, read without following a symbolic link and
 * without waiting for a FIFO's writer; null when it is missing or is not a
 * regular file (something planted at its name is never read through, and
 * never hangs the reader).
 */
export function readUndoFile(path: string): Buffer | null {
  try {
    return withUndoFile(path, (fd) => readFileSync(fd));
  } catch {
    return null;
  }
}

/**
 * `read` given one of git-undo's own files, opened as readUndoFile opens it,
 * and its stat; null (read not called) when it is missing or not a regular file.
 */
export function withUndoFile<T>(path: string, read: (fd: number, st: Stats) => T): T | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    return st.isFile() ? read(fd, st) : null;
  } finally {
    closeSync(fd);
  }
}

/** A JSON file written by replaceFile (the recorder's caches), or null when it is missing or unreadable. */
export function readJsonFile(path: string): unknown {
  const bytes = readUndoFile(path);
  if (bytes === null) return null;
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    return null;
  }
}
