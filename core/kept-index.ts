// The worktree index kept between recordings.
//
// The spec writes the worktree tree with `git add -A` and `git write-tree` on a
// fresh copy of the real index. That copy lacks every untracked file, so
// add -A inserts them all and write-tree rebuilds every directory tree they
// sit in, writing the whole index twice: on a large repository, most of a
// recording. The index the previous recording ended with already holds those
// files, with fresh stat data and a valid cache tree, so add -A and write-tree
// on it do only what changed since.
//
// It is reused only when `git add -A` on it must give the tree the fresh copy
// would. Where the two indexes agree, add -A treats a path the same way in
// both; they differ only at the paths the earlier add -A runs added, removed or
// rehashed, which their --verbose output lists. Reuse therefore needs:
//   - the real index in version 2 (so no intent-to-add or skip-worktree
//     entries), without conflicts or assume-unchanged entries, not split; with
//     the entries the kept index last followed (stat data aside: `git status`
//     rewrites it with fresh stat data), or with changes that the old and new
//     index trees show, which then join the listed paths and hold no gitlink,
//     .gitattributes or .gitmodules;
//   - the same configuration, and none of sparse checkout, a split index,
//     fsmonitor or case folding;
//   - each listed path still not ignored (an untracked file that became ignored
//     leaves the fresh copy's tree; a tracked file deleted and recreated under
//     an ignore rule comes back into it), none of them inside a repository
//     nested since, none now a directory, and none a .gitattributes or
//     .gitmodules file or a gitlink;
//   - the attribute files outside the working tree unchanged, so that a file
//     hashed earlier would hash the same now.
// Anything else, or any failure, and the recording copies the real index as
// the spec says. What this cannot see: a .gitattributes that is itself ignored
// (add -A never reports it) changing between recordings, or a clean filter
// whose output changes; a file hashed earlier then keeps its old blob until
// the file itself changes. Before Git touches the kept index, it is moved into
// the capture's scratch folder and its description is deleted, so an
// interrupted recording leaves nothing that could be reused wrongly.
import { closeSync, existsSync, lstatSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { decodeBytes, encodeBytes, hasEscapedBytes, type ObjectId } from "./format.ts";
import { replaceFile } from "./lock.ts";
import { configDigest, type Repo } from "./repo.ts";

/** What the kept index was made from and what it holds. */
export interface KeptIndex {
  version: 2;
  /** entriesDigest() of the real index it was made from. */
  realIndex: string;
  /** RealIndex.identity of the real index last seen with those entries. */
  realFile: string;
  /** Digest of `git config --list` when it was written. */
  config: string;
  /** Digest of the attribute files outside the working tree. */
  attributes: string;
  /** The real index written as a tree. */
  index: ObjectId;
  /** The worktree tree the kept index writes. */
  worktree: ObjectId;
  /** Every path where it may differ from the real index (decodeBytes form). */
  paths: string[];
}

/**
 * The real index a capture starts from: its stat data at once, its content and
 * entries digest only when asked (reading 10 MB costs more than the stat).
 */
export class RealIndex {
  private content?: Uint8Array;
  private digest?: string | null;
  private constructor(
    readonly path: string,
    private readonly hashLength: number,
    /** Its modification time, read before its content. */
    readonly mtimeMs: number,
    /** Inode, size and times: Git replaces the index by a rename, so any write changes this. */
    readonly identity: string,
  ) {}

  /** The real index, or null when there is none yet (a fresh repository). */
  static open(path: string, hashLength: number): RealIndex | null {
    let st;
    try {
      st = statSync(path, { bigint: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
    return new RealIndex(path, hashLength, Number(st.mtimeMs), `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`);
  }

  get bytes(): Uint8Array {
    return (this.content ??= readFileSync(this.path));
  }

  /** Write the content to a private file with the index's timestamp in whole seconds (never later: Git's racy-entry check). */
  copyTo(path: string): string {
    writeFileSync(path, this.bytes);
    const seconds = Math.floor(this.mtimeMs / 1000);
    utimesSync(path, seconds, seconds);
    return path;
  }

  /** entriesDigest() of the content. */
  get entries(): string | null {
    if (this.digest === undefined) this.digest = entriesDigest(this.bytes, this.hashLength);
    return this.digest;
  }
}

/** Beyond this many differing paths, checking them costs more than the copy saves. */
const MAX_PATHS = 20000;
const BASENAMES_NEVER_KEPT = new Set([".gitattributes", ".gitmodules"]);

/** The kept index and its description, in <gitdir>/undo/. */
export const KEPT_INDEX_FILES = ["worktree-index", "worktree-index.json"] as const;
const keptFile = (repo: Repo): string => join(repo.undoDir, KEPT_INDEX_FILES[0]);
const describedBy = (repo: Repo): string => join(repo.undoDir, KEPT_INDEX_FILES[1]);

/**
 * The digest of the configuration as it is now: the one openRepo or
 * rereadConfig just read, once, else read again. Each read serves one
 * recording, so a long-lived Repo never answers with an old configuration.
 */
export async function currentConfigDigest(repo: Repo): Promise<string> {
  if (repo.configFresh) {
    repo.configFresh = false;
    return repo.configDigest;
  }
  return configDigest((await repo.git.run(["config", "-z", "--list"], { okExit: [1] })).stdout);
}

/** Forget the kept index (before Git writes it, and whenever it cannot be reused). */
export function dropKeptIndex(repo: Repo): void {
  rmSync(describedBy(repo), { force: true });
  rmSync(keptFile(repo), { force: true });
}

/** The version an index file's header names (gitformat-index), or null when it has none. */
export function indexVersion(path: string): number | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const header = Buffer.alloc(8);
    if (readSync(fd, header, 0, 8, 0) !== 8 || header.toString("latin1", 0, 4) !== "DIRC") return null;
    return header.readUInt32BE(4);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * A digest of a version 2 index's entries without their stat data: equal
 * digests mean the same paths, modes, object ids and flags, so `git status`
 * refreshing stat data does not count as a change. Null for anything else
 * (another version, a split index, assume-unchanged entries, a file that does
 * not parse as gitformat-index describes): such an index is never reused. So
 * with a digest, every entry's flags are zero, and its index tree says all.
 */
export function entriesDigest(bytes: Uint8Array, hashLength: number): string | null {
  const end = bytes.length - hashLength; // the trailing checksum
  if (end < 12 || new TextDecoder().decode(bytes.subarray(0, 4)) !== "DIRC") return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Version 2 has no extended flags: no intent-to-add or skip-worktree entries.
  if (view.getUint32(4) !== 2) return null;
  const count = view.getUint32(8);
  // A copy with the stat data zeroed (all but the mode), hashed in one call.
  const masked = new Uint8Array(bytes); // a copy: Buffer#slice would share the bytes
  let at = 12;
  const STAT = 40; // ctime, mtime, dev, ino, mode, uid, gid, size; mode is at 24
  for (let i = 0; i < count; i++) {
    const flagsAt = at + STAT + hashLength;
    if (flagsAt + 2 > end) return null;
    const flags = view.getUint16(flagsAt);
    // Extended flags cannot be in version 2; assume-unchanged entries are never reused around.
    if (flags & 0xc000) return null;
    const nameAt = flagsAt + 2;
    const nameLength = flags & 0x0fff;
    const nameEnd = nameLength < 0x0fff ? nameAt + nameLength : bytes.indexOf(0, nameAt);
    if (nameEnd < 0 || nameEnd >= end || bytes[nameEnd] !== 0) return null;
    for (let j = at; j < at + 24; j++) masked[j] = 0;
    for (let j = at + 28; j < at + STAT; j++) masked[j] = 0;
    at += (nameEnd - at + 8) & ~7; // 1 to 8 NULs end each entry
  }
  const entries = masked.subarray(12, at);
  // Extensions: cache tree and the like change nothing add -A does, but a
  // split index keeps its entries in another file.
  while (at + 8 <= end) {
    const signature = new TextDecoder().decode(bytes.subarray(at, at + 4));
    if (signature === "link" || signature === "sdir") return null;
    at += 8 + view.getUint32(at + 4);
  }
  if (at !== end) return null;
  return `${count}:${entries.length}:${Bun.hash(entries).toString(16)}:${Bun.hash.xxHash64(entries).toString(16)}`;
}

/** Whether the configuration lets the kept index stand in for a fresh copy at all. */
function configAllows(repo: Repo): boolean {
  const on = (key: string) => {
    const v = repo.settings.get(key);
    return v !== undefined && !/^(false|no|off|0|)$/i.test(v ?? "true");
  };
  return !on("core.sparsecheckout") && !on("core.splitindex") && !on("core.ignorecase") && !repo.settings.has("core.fsmonitor");
}

/** Digest of the attribute files Git reads besides the working tree's .gitattributes (read before add -A runs). */
export function attributesDigest(repo: Repo): string {
  const configured = repo.settings.get("core.attributesfile");
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), ".config");
  const files = [
    join(repo.commonDir, "info", "attributes"),
    configured ? configured.replace(/^~(?=\/|$)/, homedir()) : join(xdg, "git", "attributes"),
  ];
  if (!process.env.GIT_ATTR_NOSYSTEM) files.push("/etc/gitattributes", "/usr/local/etc/gitattributes");
  const parts = files.map((f) => {
    try {
      return `${f}\0${Bun.hash(readFileSync(f)).toString(16)}`;
    } catch {
      return `${f}\0-`;
    }
  });
  return Bun.hash(parts.join("\n")).toString(16);
}

/** The paths an `add -A --verbose` run changed, or null when its output cannot be read exactly. */
export function changedPaths(stdout: Uint8Array, workTree: string): string[] | null {
  const out = decodeBytes(stdout);
  const paths: string[] = [];
  for (const line of out.split("\n")) {
    if (!line) continue;
    const m = /^(add|remove) '(.*)'$/s.exec(line);
    if (!m) return null;
    const path = m[2]!;
    // A name that is not UTF-8 cannot be looked at through a JS string.
    if (hasEscapedBytes(path)) return null;
    // Git prints paths raw: a name with a newline in it would split. What the
    // line says must then match the disk, or the list is not trusted.
    const st = lstatOrNull(join(workTree, path));
    if (m[1] === "add" ? st === null || st.isDirectory() : st !== null) return null;
    paths.push(path);
  }
  return paths;
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

const neverKept = (path: string): boolean => BASENAMES_NEVER_KEPT.has(path.slice(path.lastIndexOf("/") + 1));

/**
 * Whether the filesystem still allows reuse at the listed paths: none is now
 * a directory, and no directory above one holds a nested repository.
 */
function layoutAllows(workTree: string, paths: readonly string[]): boolean {
  const dirs = new Set<string>();
  for (const p of paths) {
    if (lstatOrNull(join(workTree, p))?.isDirectory()) return false;
    for (let d = dirname(p); d !== "." && d !== "/" && !dirs.has(d); d = dirname(d)) dirs.add(d);
  }
  for (const d of dirs) if (existsSync(join(workTree, d, ".git"))) return false;
  return true;
}

function readKept(repo: Repo): KeptIndex | null {
  try {
    const k = JSON.parse(readFileSync(describedBy(repo), "utf8")) as KeptIndex;
    if (k.version !== 2 || !Array.isArray(k.paths) || !existsSync(keptFile(repo))) return null;
    return k;
  } catch {
    return null;
  }
}

function writeKept(repo: Repo, kept: KeptIndex): void {
  replaceFile(describedBy(repo), JSON.stringify(kept));
}

export interface KeptCapture {
  index: ObjectId;
  worktree: ObjectId;
}

/**
 * The index and worktree trees from the kept index, or null when it cannot
 * stand in for a fresh copy (the caller then takes the full path).
 */
export async function captureFromKept(
  repo: Repo,
  real: RealIndex,
  attributes: string,
  config: Promise<string>,
  scratchDir: string,
): Promise<KeptCapture | null> {
  const workTree = repo.workTree;
  const kept = readKept(repo);
  if (!workTree || !kept || kept.attributes !== attributes || !configAllows(repo)) return null;
  // The same file needs no reading; another one (git status rewrote it) may hold the same entries.
  const sameEntries = kept.realFile === real.identity || kept.realIndex === real.entries;
  if (!sameEntries && real.entries === null) return null;
  // Take the kept index into the scratch directory and forget its description:
  // whatever happens to <gitdir>/undo meanwhile (uninstall, a crash), Git works
  // on a file nobody else removes, and nothing is left that could be reused wrongly.
  const taken = join(scratchDir, "kept-index");
  rmSync(describedBy(repo), { force: true });
  try {
    renameSync(keptFile(repo), taken);
  } catch {
    return null;
  }
  const env = { GIT_INDEX_FILE: taken };
  // add -A is nearly all of a recording: start it first, check the rest while it runs.
  const stop = new AbortController();
  const adding = repo.git.run(["add", "-A", "--verbose", "--ignore-errors"], { env, okExit: [1], signal: stop.signal });
  adding.catch(() => {}); // settled below
  // When the real index moved on (a commit, git add), the paths whose entries
  // changed join those the two indexes may differ at.
  const moved = sameEntries ? { index: kept.index, paths: [] } : await realIndexMoves(repo, real, kept.index, scratchDir).catch(() => null);
  if (!moved) {
    // The kept index cannot follow: stop add -A (it only wrote the taken copy).
    stop.abort();
    await adding.catch(() => undefined);
    return null;
  }
  const watched = moved.paths.length ? [...new Set([...kept.paths, ...moved.paths])] : kept.paths;
  const input = Buffer.concat(watched.map((p) => Buffer.concat([encodeBytes(p), Buffer.from([0])])));
  // Exit 1: none of them is ignored.
  const ignoring = watched.length
    ? repo.git.run(["check-ignore", "--no-index", "-z", "--stdin"], { input, okExit: [0, 1, 128] })
    : Promise.resolve({ exitCode: 1 });
  const layoutOk = layoutAllows(workTree, watched);
  // Settle all three before deciding, so that no Git is left writing the kept index.
  const [configNow, ignored, added] = await Promise.allSettled([config, ignoring, adding]);
  // A refusal leaves the taken index in the scratch directory, which goes with it.
  if (configNow.status === "rejected" || ignored.status === "rejected" || added.status === "rejected") return null;
  try {
    const changed = added.value.exitCode === 0 ? changedPaths(added.value.stdout, workTree) : null;
    if (!layoutOk || configNow.value !== kept.config || ignored.value.exitCode !== 1 || !changed || changed.some(neverKept)) return null;
    const worktree = await repo.git.line(["write-tree"], { env });
    const paths = changed.length ? [...new Set([...watched, ...changed])] : watched;
    const realIndex = sameEntries ? kept.realIndex : real.entries!;
    if (paths.length <= MAX_PATHS) {
      renameSync(taken, keptFile(repo));
      writeKept(repo, { ...kept, realIndex, realFile: real.identity, index: moved.index, worktree, paths });
    }
    return { index: moved.index, worktree };
  } catch {
    dropKeptIndex(repo);
    return null;
  }
}

/**
 * The real index as a tree, and the paths whose entries differ from the one
 * the kept index follows (`before`, its tree): with zero flags everywhere
 * (entriesDigest), the two trees say every difference. Null when the kept
 * index cannot follow: conflicts, a gitlink or a .gitattributes or .gitmodules
 * entry among the changes.
 */
async function realIndexMoves(repo: Repo, real: RealIndex, before: ObjectId, scratchDir: string): Promise<{ index: ObjectId; paths: string[] } | null> {
  const env = { GIT_INDEX_FILE: real.copyTo(join(scratchDir, "index-now")) };
  const written = await repo.git.run(["write-tree"], { env, okExit: [128] });
  if (written.exitCode !== 0) return null;
  const index = decodeBytes(written.stdout).trim();
  if (index === before) return { index, paths: [] };
  const diff = decodeBytes((await repo.git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", before, index])).stdout);
  const fields = diff.split("\0");
  const paths: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [oldMode, newMode] = fields[i]!.slice(1).split(" ");
    if (oldMode === "160000" || newMode === "160000") return null;
    paths.push(fields[i + 1]!);
  }
  // A name that is not UTF-8 cannot be looked at through a JS string (layoutAllows).
  return paths.some((p) => neverKept(p) || hasEscapedBytes(p)) ? null : { index, paths };
}

/**
 * After a full capture: keep the worktree index it wrote (at `built`) for the
 * next recording, when that one could reuse it. `addOutput` is its
 * `add -A --verbose` output; `real`, `attributes` and `config` were read before it ran.
 */
export function keepAfterFullCapture(
  repo: Repo,
  real: RealIndex,
  attributes: string,
  config: string,
  built: string,
  trees: { index: ObjectId; worktree: ObjectId },
  addOutput: Uint8Array,
): void {
  const workTree = repo.workTree;
  const entries = real.entries;
  if (!workTree || entries === null || !configAllows(repo)) return;
  const paths = changedPaths(addOutput, workTree);
  if (!paths || paths.length > MAX_PATHS || paths.some(neverKept)) return;
  try {
    rmSync(describedBy(repo), { force: true });
    renameSync(built, keptFile(repo));
    writeKept(repo, {
      version: 2,
      realIndex: entries,
      realFile: real.identity,
      config,
      attributes,
      ...trees,
      paths,
    });
  } catch {
    dropKeptIndex(repo);
  }
}
