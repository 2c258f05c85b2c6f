// The files part of a restore plan (spec step 4): the diff of the two state
// trees, what happens to the working tree, and what on disk stops the merge
// (files no snapshot holds, submodules with files, the folder the user is in,
// paths too long, a .gitmodules Git refuses).
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { platform } from "node:os";
import { join } from "node:path";
import { pathKey, type ObjectId, type Snapshot, type StateTree } from "../format/index.ts";
import { decodeBytes } from "../bytes.ts";
import { gitBool, type Repo } from "../repo.ts";
import { MODE } from "../mode.ts";
import { lstatOrNull } from "../stat.ts";
import type { Blocker, FileAction, FileChange, GitmodulesProblem, RestorePlan, WorktreePlan } from "./plan-types.ts";

const RAW_RE = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) ([A-Z])\d*$/;

/** Parse `diff-tree -r -z --raw --numstat` output: raw records first, then one numstat record each. */
export function parseRawNumstat(out: Uint8Array): FileChange[] {
  const tokens: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < out.length; i++) {
    if (out[i] === 0) {
      tokens.push(out.subarray(start, i));
      start = i + 1;
    }
  }
  const dec = new TextDecoder();
  const changes: FileChange[] = [];
  let i = 0;
  while (i + 1 < tokens.length) {
    const m = RAW_RE.exec(dec.decode(tokens[i]!));
    if (!m) break;
    const raw = tokens[i + 1]!.slice();
    const status = m[5]!;
    const action: FileAction = status === "A" ? "created" : status === "D" ? "removed" : "changed";
    changes.push({
      path: dec.decode(raw),
      raw,
      action,
      oldMode: m[1]!,
      newMode: m[2]!,
      oldObject: m[3]!,
      newObject: m[4]!,
      added: null,
      removed: null,
    });
    i += 2;
  }
  for (let k = 0; k < changes.length && i < tokens.length; k++, i++) {
    const rec = dec.decode(tokens[i]!);
    const [a, r] = rec.split("\t", 2);
    const c = changes[k]!;
    if (a !== undefined && /^\d+$/.test(a)) c.added = Number(a);
    if (r !== undefined && /^\d+$/.test(r)) c.removed = Number(r);
  }
  return changes;
}

/** The parts of two state trees a plan compares: files only when the state left has them (a target without them is rare). */
export const comparedParts = (s: StateTree): string[] => (s.worktree !== undefined ? ["index", "worktree"] : ["index"]);

/**
 * `git diff-tree` of two state trees at `paths`, raw records and, with
 * `lines`, numstat ones. Git would read the whole real index to look up
 * attributes there as well; an index that does not exist spares that (only a
 * .gitattributes deleted from the disk but still staged goes unread, which at
 * most shows a binary file's line counts).
 */
export function stateDiff(repo: Repo, from: ObjectId, to: ObjectId, paths: readonly string[], lines: boolean): Promise<Uint8Array> {
  // Git 2.44+ stops at 2048 levels (core.maxTreeDepth); 4096, its first default,
  // lets the plan see a path nested deeper than any the system can write and
  // refuse it by name (pathTooLong) rather than pass on Git's failure.
  const args = ["-c", "core.maxTreeDepth=4096", "diff-tree", "-r", "-z", "--raw", ...(lines ? ["--numstat"] : []), "--no-renames", from, to, "--", ...paths];
  const env = { GIT_INDEX_FILE: join(repo.undoDir, "no-such-dir", "index") };
  return repo.git.run(args, { env }).then((r) => r.stdout);
}

/** Fill in the line counts of a plan made without them (PlanOptions.lineCounts false). */
export async function addLineCounts(repo: Repo, plan: RestorePlan): Promise<void> {
  if (plan.from.tree === plan.target.tree) return;
  const diff = await stateDiff(repo, plan.from.tree, plan.target.tree, comparedParts(plan.from.state), true);
  const counted = new Map(parseRawNumstat(diff).map((c) => [pathKey(c.raw), c]));
  const fill = (prefix: string, f: FileChange) => {
    const c = counted.get(pathKey(Buffer.concat([Buffer.from(prefix), f.raw])));
    if (c) {
      f.added = c.added;
      f.removed = c.removed;
    }
  };
  for (const f of plan.worktree.files) fill("worktree/", f);
  for (const e of plan.index?.entries ?? []) fill("index/", e);
}

/**
 * Paths T creates that something on disk already occupies, which the state left
 * does not know (ignored files, typically: `read-tree -m -u` would overwrite them).
 * `known` holds the paths of S's worktree that the restore removes.
 */
function occupiedPaths(workTree: string, files: readonly FileChange[]): { path: string; raw: Buffer }[] {
  const removed = new Set(files.filter((f) => f.action !== "created").map((f) => pathKey(f.raw)));
  const sInTree = (rel: Buffer) => removed.has(pathKey(rel));
  const found: { path: string; raw: Buffer }[] = [];
  const checkedAncestors = new Set<string>();
  const abs = (rel: Buffer) => Buffer.concat([Buffer.from(workTree), Buffer.from("/"), rel]);
  /** The first entry under directory `rel` that S does not record (empty directories do not count). */
  const unknownInside = (rel: Buffer): Buffer | null => {
    let names: Buffer[];
    try {
      names = readdirSync(abs(rel), { encoding: "buffer" });
    } catch {
      return rel;
    }
    for (const name of names) {
      const child = Buffer.concat([rel, Buffer.from("/"), name]);
      if (lstatOrNull(abs(child))?.isDirectory()) {
        const inner = unknownInside(child);
        if (inner) return inner;
      } else if (!sInTree(child)) return child;
    }
    return null;
  };
  for (const f of files) {
    if (f.action !== "created") continue;
    const rel = Buffer.from(f.raw);
    // Leading directories: one that exists as a file or symlink S does not record blocks the path.
    for (let i = rel.indexOf(0x2f); i > 0; i = rel.indexOf(0x2f, i + 1)) {
      const dir = rel.subarray(0, i);
      const key = pathKey(dir);
      if (checkedAncestors.has(key)) continue;
      checkedAncestors.add(key);
      const st = lstatOrNull(abs(dir));
      if (st && !st.isDirectory() && !sInTree(dir)) found.push({ path: dir.toString("utf8"), raw: Buffer.from(dir) });
    }
    const st = lstatOrNull(abs(rel));
    if (!st) continue;
    if (st.isDirectory()) {
      const inner = unknownInside(rel);
      if (inner) found.push({ path: inner.toString("utf8"), raw: inner });
    } else {
      found.push({ path: f.path, raw: rel });
    }
  }
  return found;
}

/**
 * Spec step 4: what stops the merge of the files: what stands on disk where
 * the target writes (worktreeBlockers), the folder the user is in where the
 * target has a file, and a path the system cannot take.
 */
export async function filesBlockers(repo: Repo, target: number, files: readonly FileChange[]): Promise<Blocker[]> {
  const blockers = await worktreeBlockers(repo, target, files);
  const here = currentFolder(repo);
  const over = here && files.find((f) => f.newMode !== MODE.absent && f.newMode !== MODE.gitlink && (here.rel === f.path || here.rel.startsWith(`${f.path}/`)));
  if (over) blockers.push({ kind: "current-directory", target, names: [over.path] });
  const tooLong = pathTooLong(target, files);
  if (tooLong) blockers.push(tooLong);
  return blockers;
}

/** The longest path (PATH_MAX, its NUL included) and file name (NAME_MAX) the system takes: Linux's, else the BSDs' and macOS's. */
const PATH_MAX = platform() === "linux" ? 4096 : 1024;
const NAME_MAX = 255;

/** The first file of the target whose path (relative to the working tree, as Git writes it) the system cannot take; null when none. */
function pathTooLong(target: number, files: readonly FileChange[]): Blocker | null {
  for (const f of files) {
    if (f.newMode === MODE.absent) continue;
    const names = Buffer.from(f.raw).toString("latin1").split("/");
    const depth = names.length - 1;
    if (f.raw.length >= PATH_MAX) return { kind: "path-too-long", target, names: [f.path], part: "path", bytes: f.raw.length, depth, limit: PATH_MAX - 1 };
    const name = names.find((n) => n.length > NAME_MAX);
    if (name) return { kind: "path-too-long", target, names: [f.path], part: "name", bytes: name.length, depth, limit: NAME_MAX };
  }
  return null;
}

/** The submodule update strategies Git takes from .gitmodules (submodule.c parse_submodule_update_type, less "!command"). */
const UPDATE_STRATEGIES = new Set(["none", "checkout", "rebase", "merge"]);

/**
 * What Git would refuse in the .gitmodules blob `oid`, as Git reads a
 * .gitmodules in the working tree (submodule-config.c): the file parsed by Git
 * itself (`config --blob`, which follows no include), then the two settings it
 * dies on. Null when Git reads it.
 */
export async function gitmodulesProblem(repo: Repo, oid: ObjectId): Promise<GitmodulesProblem | null> {
  const listed = await repo.git.run(["config", "-z", `--blob=${oid}`, "--list"], { okExit: [1, 128] });
  if (listed.exitCode !== 0) return { why: "unreadable" };
  for (const rec of decodeBytes(listed.stdout).split("\0")) {
    const nl = rec.indexOf("\n");
    const key = nl < 0 ? rec : rec.slice(0, nl);
    const value = nl < 0 ? null : rec.slice(nl + 1);
    const item = /^submodule\..*\.([^.]+)$/s.exec(key)?.[1];
    if (item === "update" && (value === null || !UPDATE_STRATEGIES.has(value))) return { why: "update", key, value };
    if (item === "fetchrecursesubmodules" && value !== null && value !== "on-demand" && gitBool(value) === null) return { why: "fetch-recurse", key, value };
  }
  return null;
}

/**
 * The folder the user is in, when it is inside the working tree below its top:
 * its absolute path, and its path from the top as Git names paths. Null at the
 * top, outside the working tree, or when the folder is gone.
 */
export function currentFolder(repo: Repo): { abs: string; rel: string } | null {
  if (repo.workTree === null) return null;
  try {
    const here = realpathSync(repo.cwd);
    const top = realpathSync(repo.workTree);
    return here.startsWith(`${top}/`) ? { abs: here, rel: here.slice(top.length + 1) } : null;
  } catch {
    return null;
  }
}

/** What happens to the files: merged, the same on both sides, or left alone (a side has no record of them). */
export function planWorktree(repo: Repo, s: StateTree, t: StateTree, target: Snapshot, changes: readonly FileChange[]): WorktreePlan {
  if (s.worktree === undefined || t.worktree === undefined) {
    const why =
      !repo.config.worktree || s.worktree === undefined
        ? "undo.worktree is false"
        : t.index === undefined
          ? `snapshot #${target.number} has no record of the files (it was recorded without a work tree)`
          : `snapshot #${target.number} has no record of the files (undo.worktree was false)`;
    return { mode: "skipped", reason: repo.bare ? "a bare repository has no files" : why, files: [], submodulesLeft: [] };
  }
  if (s.worktree === t.worktree) return { mode: "same", files: [], submodulesLeft: [] };
  const files = changes.filter((c) => c.path.startsWith("worktree/")).map((c) => stripPrefix(c, "worktree/"));
  const submodulesLeft = repo.workTree === null ? [] : submodulesWithFiles(repo.workTree, files.filter((f) => f.oldMode === MODE.gitlink && f.newMode === MODE.absent));
  return { mode: files.length ? "merge" : "same", files, submodulesLeft };
}

/**
 * Of the paths given (gitlinks in the state left), those whose folder on disk
 * holds anything: a submodule's checkout, with whatever it has not committed.
 * An empty folder (a submodule never checked out) holds nothing to lose.
 */
function submodulesWithFiles(workTree: string, gitlinks: readonly FileChange[]): string[] {
  const top = Buffer.from(`${workTree}/`);
  return gitlinks
    .filter((f) => {
      const abs = Buffer.concat([top, f.raw]);
      try {
        return lstatSync(abs).isDirectory() && readdirSync(abs).length > 0;
      } catch {
        return false;
      }
    })
    .map((f) => f.path);
}

/**
 * The same check again, just before the merge: an ignored file written since the
 * plan was made (a build running meanwhile) would be overwritten by the merge,
 * which treats ignored files as expendable. Only lstat()s, unless one is found.
 */
export async function occupiedNow(repo: Repo, plan: RestorePlan): Promise<Blocker[]> {
  return plan.worktree.mode === "merge" ? worktreeBlockers(repo, plan.target.number, plan.worktree.files) : [];
}

/** What on disk stops the merge: files no snapshot holds where T creates one, and submodules T replaces by a file. */
async function worktreeBlockers(repo: Repo, target: number, files: readonly FileChange[]): Promise<Blocker[]> {
  if (repo.workTree === null) return [];
  const blockers: Blocker[] = [];
  // Git's merge checks nothing inside a gitlink it replaces by a file or symlink: it deletes the folder.
  const replaced = files.filter((f) => f.oldMode === MODE.gitlink && f.newMode !== MODE.gitlink && f.newMode !== MODE.absent);
  const inTheWay = submodulesWithFiles(repo.workTree, replaced);
  if (inTheWay.length) blockers.push({ kind: "submodule-in-the-way", target, names: inTheWay });
  const occupied = await occupiedBlocker(repo, target, files);
  if (occupied) blockers.push(occupied);
  return blockers;
}

/**
 * Files no snapshot holds standing where the target creates one, named: ignored
 * files, or untracked ones Git could not record (a FIFO, say). Null when none.
 */
async function occupiedBlocker(repo: Repo, target: number, files: readonly FileChange[]): Promise<Blocker | null> {
  if (repo.workTree === null) return null;
  const occupied = occupiedPaths(repo.workTree, files);
  if (!occupied.length) return null;
  const input = Buffer.concat(occupied.flatMap((o) => [o.raw, Buffer.from([0])]));
  const r = await repo.git.run(["check-ignore", "-z", "--stdin", "--no-index"], { input, okExit: [1] });
  const ignored = new Set(new TextDecoder().decode(r.stdout).split("\0").filter(Boolean));
  const names = occupied.map((o) => o.path);
  return { kind: names.every((n) => ignored.has(n)) ? "ignored-file" : "untracked-file", target, names };
}

export function stripPrefix(c: FileChange, prefix: string): FileChange {
  return { ...c, path: c.path.slice(prefix.length), raw: c.raw.slice(Buffer.byteLength(prefix)) };
}

/**
 * Whether a change is only a submodule's recorded commit: a gitlink on one
 * side and no file on the other. The merge moves no submodule's checkout (and
 * leaves a folder with files, submodulesLeft), so no file on disk changes.
 */
export const submoduleOnly = (f: FileChange): boolean =>
  (f.oldMode === MODE.gitlink || f.newMode === MODE.gitlink) && (f.oldMode === MODE.gitlink || f.oldMode === MODE.absent) && (f.newMode === MODE.gitlink || f.newMode === MODE.absent);

/** The changes of a plan's files that change something on disk (submodules' recorded commits left out). */
export const filesOnDisk = (w: WorktreePlan): FileChange[] => w.files.filter((f) => !submoduleOnly(f));