// The working tree's way back from a merge that fails halfway: hard links to
// the files it replaces, made before it runs, and the room the rollback of refs,
// HEAD and the stash needs, reserved before the first change (the working-tree
// step itself is core/restore/worktree.ts).
import { linkSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmdirSync, rmSync, unlinkSync, writeFileSync, type Stats } from "node:fs";
import { join } from "node:path";
import type { FileChange, RefMove, RestorePlan } from "./plan.ts";
import type { Repo } from "../repo.ts";
import { MODE } from "../mode.ts";
import { blobId } from "../git-data/objects.ts";
import { lstatOrNull } from "../stat.ts";
import { noSpaceLeft } from "../errors.ts";

/*
 * The working tree's way back, without new disk space: a full disk is what
 * makes a merge fail halfway, and it must not stop the rollback too.
 *
 * Git's checkout never writes into a file it replaces: it unlinks it and
 * creates a new one (entry.c), and it removes files by unlinking them. So hard
 * links to S's files that the merge changes or removes, made in the scratch
 * directory before the merge, keep S's contents on disk, and going back is:
 * unlink what the merge wrote (which frees space), rmdir the directories it
 * made, mkdir the ones it removed, and rename the links over their paths. A
 * rename and an unlink allocate no data blocks; a directory made again takes at
 * most what the merge's own rmdir freed, and only after every file the merge
 * wrote is gone. The links' directory entries are allocated before the merge,
 * where running out of space still changes nothing. A file at a path that is
 * neither S's (the same inode) nor T's (its content, or for a write cut short,
 * the start of it) was written by someone else meanwhile and stays as it is.
 * Where no link can be made (the git dir on another file system, a file system
 * without hard links), the rollback goes back to Git's own merge, which writes.
 *
 * The rollback of refs, HEAD and the stash does write (lock files, reflog
 * lines): reserveSpace holds room for it from before the first change.
 */

/** A path the merge may change, as it was before the merge. */
interface PathBefore {
  file: FileChange;
  /** The absolute path as bytes (names need not be UTF-8). */
  abs: Buffer;
  /** What stood there (null: nothing). */
  was: StoodBefore | null;
  /** S's file or symlink, kept by a hard link in the scratch directory. */
  backup: string | null;
}

/** What stood at a path before the merge: its identity, and its kind (file, link, directory). */
export interface StoodBefore {
  dev: number;
  ino: number;
  kind: number;
}

/** A path's kind (regular file, symbolic link, directory...): the type bits of its mode. */
const kindOf = (st: Stats): number => st.mode & 0o170000;

/** What stands at a path, as `StoodBefore` keeps it. */
export const stoodBefore = (st: Stats): StoodBefore => ({ dev: st.dev, ino: st.ino, kind: kindOf(st) });

/**
 * Whether `st` is what stood there before the merge. The kind counts too: a
 * directory the merge removed keeps no link, so the file the merge writes in
 * its place can be given its freed inode number (ext4 does, under load).
 */
export const untouched = (st: Stats, was: StoodBefore | null): boolean => was !== null && st.dev === was.dev && st.ino === was.ino && kindOf(st) === was.kind;

/** A directory above a path the merge may change, as it was before the merge. */
interface DirBefore {
  abs: Buffer;
  depth: number;
  /** Whether it was a directory (false: nothing there, or a file the merge replaces). */
  dir: boolean;
  mode: number;
}

export interface WorktreeBackup {
  /** The top of the working tree, ending in a slash. */
  top: Buffer;
  paths: PathBefore[];
  dirs: DirBefore[];
}


/**
 * Hard links to S's files and symlinks at the paths the merge changes or
 * removes, and the state of the directories above them. Null when links cannot
 * be made here (the rollback then uses Git's merge); throws when the disk has
 * no room for them, before anything changed.
 */
export function linkBackup(repo: Repo, scratch: string, plan: RestorePlan): WorktreeBackup | null {
  if (repo.workTree === null) return null;
  const top = Buffer.from(`${repo.workTree}/`);
  const place = join(scratch, "worktree-before");
  const paths: PathBefore[] = [];
  try {
    rmSync(place, { recursive: true, force: true }); // the links of a plan not taken (a guess, core/restore/index.ts)
    mkdirSync(place);
    plan.worktree.files.forEach((file, i) => {
      const abs = Buffer.concat([top, file.raw]);
      const st = lstatOrNull(abs);
      let backup: string | null = null;
      if (st && file.oldMode !== MODE.absent && file.oldMode !== MODE.gitlink && (st.isFile() || st.isSymbolicLink())) {
        backup = join(place, String(i));
        linkSync(abs, backup);
      }
      paths.push({ file, abs, was: st && stoodBefore(st), backup });
    });
  } catch (e) {
    rmSync(place, { recursive: true, force: true });
    if (noSpaceLeft(e)) throw new Error("not enough disk space to keep the files it replaces until it is done");
    return null;
  }
  const dirs = new Map<string, DirBefore>();
  for (const { file } of paths) {
    let depth = 0;
    for (let i = file.raw.indexOf(47); i > 0; i = file.raw.indexOf(47, i + 1)) {
      depth++;
      const rel = Buffer.from(file.raw.subarray(0, i));
      const key = rel.toString("latin1");
      if (dirs.has(key)) continue;
      const abs = Buffer.concat([top, rel]);
      const st = lstatOrNull(abs);
      dirs.set(key, { abs, depth, dir: st?.isDirectory() ?? false, mode: st ? st.mode & 0o7777 : 0o755 });
    }
  }
  return { top, paths, dirs: [...dirs.values()] };
}

/** Whether a directory above the path is a symlink now: Git never writes through one, nor does the rollback. */
function behindSymlink(b: WorktreeBackup, raw: Uint8Array): boolean {
  for (let i = raw.indexOf(47); i > 0; i = raw.indexOf(47, i + 1)) {
    if (lstatOrNull(Buffer.concat([b.top, raw.subarray(0, i)]))?.isSymbolicLink()) return true;
  }
  return false;
}

/**
 * Put S's files back from the links after the merge wrote some or all of T's
 * (see the comment above WorktreeBackup). `complete`: the merge went through,
 * so a file of T's is whole; `cut-short`: a write may have been cut short. Returns
 * the paths put back, and those left as someone else changed them.
 */
export async function putBackLinked(repo: Repo, b: WorktreeBackup, merge: "complete" | "cut-short"): Promise<{ putBack: string[]; left: string[] }> {
  const complete = merge === "complete";
  const undone = new Set<FileChange>();
  const left = new Set<string>();
  const removed = (remove: () => void) => {
    try {
      remove();
      return true;
    } catch {
      return false; // a directory not empty: something the merge did not write is in it
    }
  };
  const rmdir = (abs: Buffer) => removed(() => rmdirSync(abs));
  // What the merge wrote, and only that: T's files where S's no longer stand.
  const found: Found[] = [];
  for (const p of b.paths) {
    if (p.file.newMode === MODE.absent || behindSymlink(b, p.file.raw)) continue;
    const st = lstatOrNull(p.abs);
    if (!st || untouched(st, p.was)) continue;
    if (p.file.newMode === MODE.gitlink) {
      // The merge makes an empty directory for a submodule.
      if (p.was === null && st.isDirectory() && rmdir(p.abs)) undone.add(p.file);
    } else if (st.isFile() || st.isSymbolicLink()) found.push({ p, st });
  }
  const ours = await writtenByMerge(repo, found, complete);
  for (const { p } of found) {
    if (ours.has(p.file) && removed(() => unlinkSync(p.abs))) undone.add(p.file);
    else left.add(p.file.path);
  }
  // Directories the merge made, deepest first; then those it removed (it removes
  // a directory it emptied), shallowest first.
  const dirs = [...b.dirs].sort((x, y) => y.depth - x.depth);
  for (const d of dirs) if (!d.dir && lstatOrNull(d.abs)?.isDirectory()) rmdir(d.abs);
  for (const d of dirs.reverse()) {
    if (!d.dir || lstatOrNull(d.abs)) continue;
    try {
      mkdirSync(d.abs, { mode: d.mode });
    } catch {
      /* the renames below name what stays out */
    }
  }
  for (const p of b.paths) {
    if (p.file.oldMode === MODE.gitlink && p.was && !lstatOrNull(p.abs)) {
      try {
        mkdirSync(p.abs);
        undone.add(p.file);
      } catch {
        left.add(p.file.path);
      }
    }
    if (!p.backup) continue;
    const st = lstatOrNull(p.abs);
    if (st && untouched(st, p.was)) continue;
    if (st || behindSymlink(b, p.file.raw)) {
      left.add(p.file.path); // someone else's file stands there now
      continue;
    }
    try {
      renameSync(p.backup, p.abs);
      undone.add(p.file);
    } catch {
      left.add(p.file.path);
    }
  }
  return { putBack: b.paths.filter((p) => undone.has(p.file)).map((p) => p.file.path), left: [...left] };
}

interface Found {
  p: PathBefore;
  st: Stats;
}

/**
 * Which of the files found are the merge's: T's content (hashed as `git add`
 * would, clean filters and end of line included, writing no object), or T's
 * file as checkout writes it, or, when `complete` is false, the start of it
 * (a write cut short by a full disk; Git goes on to the next file).
 */
async function writtenByMerge(repo: Repo, found: readonly Found[], complete: boolean): Promise<Set<FileChange>> {
  const ours = new Set<FileChange>();
  const files: Found[] = [];
  for (const f of found) {
    const c = f.p.file;
    if (c.newMode === MODE.symlink) {
      if (f.st.isSymbolicLink() && blobId(readlinkSync(f.p.abs, { encoding: "buffer" }), repo.objectFormat) === c.newObject) ours.add(c);
    } else if (f.st.isFile()) {
      if (!complete && f.st.size === 0) ours.add(c);
      else files.push(f);
    }
  }
  if (!files.length) return ours;
  const input = Buffer.concat(files.flatMap((f) => [stdinPath(f.p.file.raw), Buffer.from("\n")]));
  const hashed = await repo.git.run(["hash-object", "--stdin-paths"], { input, okExit: [128] });
  const ids = hashed.exitCode === 0 ? Buffer.from(hashed.stdout).toString("latin1").split("\n") : [];
  for (const [i, f] of files.entries()) {
    const c = f.p.file;
    if (ids[i] === c.newObject) {
      ours.add(c);
      continue;
    }
    const want = await repo.git.run(["cat-file", "--filters", `--path=${c.path}`, c.newObject], { okExit: [128] });
    if (want.exitCode !== 0) continue;
    const disk = readFileSync(f.p.abs);
    const t = Buffer.from(want.stdout);
    if (complete ? disk.equals(t) : disk.length <= t.length && disk.equals(t.subarray(0, disk.length))) ours.add(c);
  }
  return ours;
}

/** A name for `--stdin-paths`: C-quoted when a line could not carry it as it is. */
function stdinPath(raw: Uint8Array): Buffer {
  if (raw[0] !== 34 && !raw.includes(10) && raw[raw.length - 1] !== 13) return Buffer.from(raw);
  const out: number[] = [34];
  for (const b of raw) {
    if (b === 34 || b === 92) out.push(92, b);
    else if (b < 32 || b === 127) out.push(...Buffer.from(`\\${b.toString(8).padStart(3, "0")}`));
    else out.push(b);
  }
  out.push(34);
  return Buffer.from(out);
}

/** `n` random bytes (Web Crypto, which hands out at most 64 KiB a call). */
function randomBytes(n: number): Uint8Array {
  const bytes = new Uint8Array(n);
  for (let at = 0; at < n; at += 65536) crypto.getRandomValues(bytes.subarray(at, Math.min(n, at + 65536)));
  return bytes;
}

/**
 * Room for the rollback's writes: a file of `bytes`, written now (real blocks,
 * random so that no file system compresses them away) and removed by free(),
 * so the rollback's lock files and reflog lines find the space it held however
 * full the disk is by then. Throws before anything changed when even that
 * much does not fit.
 */
export function reserveSpace(scratch: string, bytes: number): { free(): void } {
  if (bytes === 0) return { free() {} };
  const file = join(scratch, "rollback-space");
  try {
    // write() takes the blocks (delayed allocation reserves them then): no fsync needed.
    writeFileSync(file, randomBytes(bytes), { flag: "wx", mode: 0o600 });
  } catch (e) {
    rmSync(file, { force: true });
    if (noSpaceLeft(e)) throw new Error(`not enough disk space to keep ${Math.ceil(bytes / 1024)} KiB for a rollback`);
    throw e;
  }
  let held = true;
  return {
    free() {
      if (held) rmSync(file, { force: true });
      held = false;
    },
  };
}

/**
 * What the rollback of refs, HEAD and the stash may write, at worst a block for
 * each ref's lock file, its reflog line and HEAD's: three 4 KiB blocks a ref.
 */
export function rollbackWrites(plan: RestorePlan, moves: readonly RefMove[]): number {
  const refs = moves.length + (plan.head ? 1 : 0) + (plan.stash ? plan.stash.now.length + 1 : 0);
  return refs === 0 ? 0 : Math.min(16 * 1024 + refs * 3 * 4096, 8 * 1024 * 1024);
}
