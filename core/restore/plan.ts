// What restoring a snapshot would change: the difference between the state being
// left (S, usually just captured) and the target (T), as a typed plan. --dry-run
// prints it, the restorer carries it out, the picker previews it. It is computed
// from the two state trees with a handful of batched Git calls and some lstat()s.
import { existsSync, lstatSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { decodeUnmerged, unmergedBlobIds, pathKey, type HeadState, type ObjectId, type OperationMarker, type RefLine, type Snapshot, type SnapshotEntry, type StashEntry, type StateTree } from "../format/index.ts";
import { loadState } from "../snapshots/read-state.ts";
import { recoverTags, type KeptTag } from "../snapshots/keep-entry.ts";
import { isSafePath, SnapshotRefused } from "../format/validate.ts";
import { escapeControls, nameList } from "../text.ts";
import { indexLockHeld, indexLockPath } from "../lock.ts";
import { readObjects } from "../git-data/objects.ts";
import { decodeBytes } from "../bytes.ts";
import { diffTreePairs, type RawChange } from "../git-data/tree-diff.ts";
import { refStoreOf, type RefStoreName } from "../git-data/refs/store.ts";
import { gitBool, type Repo } from "../repo.ts";
import { MODE } from "../mode.ts";
import { lstatOrNull } from "../stat.ts";
import { phase } from "../trace.ts";
import { UndoError } from "../errors.ts";

/** The state being left: a recorded snapshot, or a capture not yet recorded (number null). */
export interface StateSide {
  number: number | null;
  tree: ObjectId;
  state: StateTree;
}

export type RefAction = "create" | "update" | "delete";

export interface RefMove {
  name: string;
  action: RefAction;
  /** The ref now (S), null when it does not exist. */
  old: RefLine | null;
  /** The ref in T, null when T lacks it. */
  new: RefLine | null;
  /** Subjects of the commits the ref leaves and reaches, when they are commits. */
  oldSubject?: string;
  newSubject?: string;
  /** A symbolic ref on either side: set with symbolic-ref after the transaction. */
  symbolic: boolean;
  /** A branch another worktree has checked out: left alone unless forced. */
  checkedOutIn?: string;
}

export interface HeadChange {
  old: HeadState;
  new: HeadState;
  /** Subject of the commit HEAD ends up on, when there is one. */
  newSubject?: string;
}

export type FileAction = "created" | "removed" | "changed";

export interface FileChange {
  /** The path as UTF-8 text (for display). */
  path: string;
  /** The path's bytes as Git printed them (for the file system). */
  raw: Uint8Array;
  action: FileAction;
  oldMode: string;
  newMode: string;
  oldObject: ObjectId;
  newObject: ObjectId;
  /** Lines added and removed; null for binary files and submodules. */
  added: number | null;
  removed: number | null;
}

export interface WorktreePlan {
  /** merge: files change; same: S and T record the same files; skipped: a side has no worktree record. */
  mode: "merge" | "same" | "skipped";
  /** Why files are left alone when skipped. */
  reason?: string;
  files: FileChange[];
  /**
   * Submodules the target does not have whose folders hold files: Git's merge
   * removes the gitlink but leaves the folder and everything in it on disk.
   */
  submodulesLeft: string[];
}

export interface IndexPlan {
  /** Index entries (stage 0) that differ between S and T. */
  entries: FileChange[];
  /** Conflicted paths now and in T. */
  conflictsNow: string[];
  conflictsAfter: string[];
}

export interface StashPlan {
  now: StashEntry[];
  after: StashEntry[];
  /** Entries T has that the stash now lacks (brought back), and entries that go. */
  added: StashEntry[];
  removed: StashEntry[];
}

/**
 * What stops a restore, as data: the CLI words it (cli/plan-words.ts). Every
 * blocker names the snapshot being restored (`target`) and the paths or refs
 * it is about (`names`).
 */
export type Blocker = { target: number; names: string[] } & (
  | /** An operation is in progress in the state being left (names: its markers). */ { kind: "operation" }
  | /** Objects the target needs are gone (names: what needs them; each with the object). */ { kind: "missing-objects"; missing: { what: string; object: ObjectId }[] }
  | /** Files no snapshot holds stand where the target creates files. */ { kind: "untracked-file" | "ignored-file" }
  | /**
     * A submodule's working tree (or another repository inside the working
     * tree) holds files where the target has a file or symlink: Git's merge
     * would delete the whole folder, its uncommitted work with it (names: the folders).
     */ { kind: "submodule-in-the-way" }
  | /** A file on disk differs from the state being left (changed while git-undo read it). */ { kind: "not-uptodate"; detail: string }
  | /** index.lock exists (names: its path). */ { kind: "index-lock" }
  | /** The target's HEAD branch is checked out in another worktree (names: the branch). */ { kind: "head-in-other-worktree"; worktree: string }
  | /** A revert: what the change touched has changed again (names: the refs and paths). */ { kind: "revert-conflict" }
  | /** The target has a file where the folder the user is in is (names: that path): Git would have to remove the folder. */ { kind: "current-directory" }
  | /** Refs of the target Git would refuse to write here (names: the refs; each with why). */ { kind: "ref-refused"; refs: RefProblem[] }
  | /**
     * Objects the index needs are gone: the blobs of conflicted entries (names:
     * the paths). --skip-missing cannot leave a part of the index out.
     */ { kind: "missing-conflict-blobs"; missing: { path: string; object: ObjectId }[] }
  | /**
     * A path of the target's files is longer than this system's paths can be, or
     * has a name longer than a file name can be (names: the path): a tree nested
     * thousands of folders deep. Git's merge would fail on it partway.
     */ { kind: "path-too-long"; part: "path" | "name"; bytes: number; depth: number; limit: number }
  | /**
     * The target's .gitmodules is one Git refuses to read (names: ".gitmodules"):
     * once written, Git dies on its next look at submodules, the restore's own diff first.
     */ { kind: "gitmodules-refused"; problem: GitmodulesProblem }
);

/** What Git refuses in a .gitmodules: a line it cannot parse, or a submodule setting it dies on. */
export type GitmodulesProblem =
  | { why: "unreadable" }
  | /** submodule.<name>.update: a command (Git runs those only from .git/config) or no strategy Git knows. */ { why: "update"; key: string; value: string | null }
  | /** submodule.<name>.fetchRecurseSubmodules: neither a boolean nor on-demand. */ { why: "fetch-recurse"; key: string; value: string };

/** Why Git would refuse to write a ref of the target (checked before anything moves). */
export type RefProblem =
  | /** A ref that stays (or is also written) is this ref's folder, or has it as its folder. */ { name: string; why: "conflict"; other: string }
  | /** Longer than the ref storage holds: a file name past 255 bytes, a reftable record past a block. */ { name: string; why: "too-long"; storage: RefStoreName }
  | /** A branch (refs/heads/) naming something other than a commit: Git writes only commits there. */ { name: string; why: "not-a-commit"; type: string }
  | /** A symbolic ref that would end up naming itself, through the refs in `loop`. */ { name: string; why: "loop"; loop: string[] };

/** A part of the target left as it is because objects it needs are gone (--skip-missing). */
export type NotRestored =
  | { kind: "ref"; name: string; object: ObjectId }
  | { kind: "head"; head: HeadState }
  | { kind: "stash"; entry: StashEntry };

export interface RestorePlan {
  from: StateSide;
  target: Snapshot;
  targetState: StateTree;
  /** The current state is not the latest snapshot: it is recorded as a change snapshot first. */
  recordFirst: boolean;
  refs: RefMove[];
  head: HeadChange | null;
  worktree: WorktreePlan;
  /** Null in a bare repository. */
  index: IndexPlan | null;
  stash: StashPlan | null;
  /** Operations in progress in the state being left. */
  operations: OperationMarker[];
  blockers: Blocker[];
  /** Tag objects pruned since, to write back from the target's keep entry before anything moves. */
  tagsToWrite: KeptTag[];
  /** With skipMissing: what stays as it is because its objects are gone. */
  notRestored: NotRestored[];
  /**
   * Files whose content now (the state being left) no snapshot before that
   * state holds: a file created outside Git and just added, a fresh edit. The
   * restore takes them off disk or changes them; only the state left (recorded
   * first when new) keeps them. Empty unless PlanOptions.earlier was given.
   */
  onlyLeft: string[];
}

export interface PlanOptions {
  /** --force: an operation in progress, or a branch checked out elsewhere, does not stop the restore. */
  force?: boolean;
  /** The caller holds index.lock itself (the restorer takes it before planning). */
  holdsIndexLock?: boolean;
  /**
   * Count the lines each file change adds and removes (default). A restore
   * leaves them out of the plan and has addLineCounts fill them in while it
   * works, since the merge does not need them.
   */
  lineCounts?: boolean;
  /**
   * --skip-missing: refs, HEAD and stash entries whose objects are gone stay as
   * they are (listed in notRestored) instead of refusing the whole restore.
   */
  skipMissing?: boolean;
  /** The snapshots before the state being left, oldest first: fills plan.onlyLeft. */
  earlier?: readonly SnapshotEntry[];
  /**
   * Leave plan.onlyLeft empty even with `earlier`: a restore has addOnlyLeft
   * fill it while it works, as only its report shows it.
   */
  deferOnlyLeft?: boolean;
  /**
   * A partial restore or a revert (core/compose.ts): it keeps the operation
   * markers, so an operation in progress stops it only when refs or HEAD move
   * (restoring a file mid-merge is what `git restore` does too).
   */
  partial?: boolean;
}

/** The commit a ref line names, for subjects. */
const commitOf = (r: RefLine | null): ObjectId | null =>
  !r || !r.object ? null : r.type === "commit" ? r.object : r.peeledType === "commit" ? r.peeledObject : null;

/** Same target: a symbolic ref by its target's name (its object is the target's business), others by object. */
const sameRef = (a: RefLine, b: RefLine) =>
  a.symrefTarget || b.symrefTarget ? a.symrefTarget === b.symrefTarget : a.object === b.object && a.type === b.type;

export const headsEqual = (a: HeadState, b: HeadState): boolean =>
  a.kind === b.kind && (a.kind === "symbolic" ? a.target === (b as typeof a).target : a.commit === (b as typeof a).commit);

/** Ref moves from `now` to `after`; refs/stash is the stash's business, not the transaction's. */
export function refMoves(now: readonly RefLine[], after: readonly RefLine[]): RefMove[] {
  const before = new Map(now.filter((r) => r.name !== "refs/stash").map((r) => [r.name, r]));
  const moves: RefMove[] = [];
  for (const t of after) {
    if (t.name === "refs/stash") continue;
    const s = before.get(t.name) ?? null;
    before.delete(t.name);
    if (s && sameRef(s, t)) continue;
    const symbolic = Boolean(t.symrefTarget || s?.symrefTarget);
    moves.push({ name: t.name, action: s ? "update" : "create", old: s, new: t, symbolic });
  }
  for (const s of before.values()) moves.push({ name: s.name, action: "delete", old: s, new: null, symbolic: Boolean(s.symrefTarget) });
  return moves;
}

export function stashPlan(now: readonly StashEntry[], after: readonly StashEntry[]): StashPlan | null {
  const same = now.length === after.length && now.every((e, i) => e.commit === after[i]!.commit && e.message === after[i]!.message);
  if (same) return null;
  const key = (e: StashEntry) => `${e.commit}\t${e.message}`;
  const had = new Set(now.map(key));
  const has = new Set(after.map(key));
  return { now: [...now], after: [...after], added: after.filter((e) => !had.has(key(e))), removed: now.filter((e) => !has.has(key(e))) };
}

const conflictPaths = (state: StateTree): string[] =>
  state.indexUnmerged ? [...new Set(decodeUnmerged(state.indexUnmerged).map((e) => Buffer.from(e.path).toString("utf8")))] : [];

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
const comparedParts = (s: StateTree): string[] => (s.worktree !== undefined ? ["index", "worktree"] : ["index"]);

/**
 * `git diff-tree` of two state trees at `paths`, raw records and, with
 * `lines`, numstat ones. Git would read the whole real index to look up
 * attributes there as well; an index that does not exist spares that (only a
 * .gitattributes deleted from the disk but still staged goes unread, which at
 * most shows a binary file's line counts).
 */
function stateDiff(repo: Repo, from: ObjectId, to: ObjectId, paths: readonly string[], lines: boolean): Promise<Uint8Array> {
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
 * Fill plan.onlyLeft for a plan made with deferOnlyLeft: a restore runs it
 * beside its steps (it reads only snapshots and the target's commits).
 */
export async function addOnlyLeft(repo: Repo, plan: RestorePlan, earlier: readonly SnapshotEntry[]): Promise<void> {
  if (plan.worktree.mode === "merge") plan.onlyLeft = await onlyInLeft(repo, plan.worktree.files, plan.from.state.worktree, plan.targetState, earlier);
}

/**
 * What T's refs, HEAD and stash name must be what T says it is: a ref line's
 * object of its recorded type, HEAD and stash entries commits. A snapshot
 * saying otherwise (a stash line naming a tree) is refused as a whole, before
 * any of it reaches update-ref or stash store.
 */
function checkObjectTypes(
  target: Snapshot,
  refs: readonly RefMove[],
  t: StateTree,
  stash: StashPlan | null,
  ids: readonly ObjectId[],
  objects: readonly ({ type: string } | null)[],
): void {
  const typeOf = new Map(ids.map((id, i) => [id, objects[i]?.type]));
  const expect = (oid: ObjectId, type: string, what: string) => {
    const actual = typeOf.get(oid);
    if (actual !== undefined && actual !== type) {
      throw new SnapshotRefused(`snapshot #${target.number}`, `${escapeControls(what)} names ${oid.slice(0, 7)} as a ${type}, but it is a ${actual}`);
    }
  };
  for (const m of refs) if (m.new && m.new.object && m.new.type && !m.new.symrefTarget) expect(m.new.object, m.new.type, m.name);
  if (t.head.kind === "detached") expect(t.head.commit, "commit", "HEAD");
  for (const e of stash?.added ?? []) expect(e.commit, "commit", "a stash entry");
}

/** The subject line of a commit object's content. */
function subjectOf(content: Uint8Array): string {
  const s = new TextDecoder().decode(content);
  const body = s.indexOf("\n\n");
  return body < 0 ? "" : (s.slice(body + 2).split("\n", 1)[0] ?? "");
}

export interface WorktreeInfo {
  path: string;
  /** The branch it has checked out (refs/heads/...), or null when detached or bare. */
  branch: string | null;
}

/** Every worktree of the repository (`git worktree list --porcelain`). */
export async function listWorktrees(repo: Repo): Promise<WorktreeInfo[]> {
  const out = await repo.git.text(["worktree", "list", "--porcelain"]);
  const list: WorktreeInfo[] = [];
  for (const block of out.split("\n\n")) {
    let path: string | null = null;
    let branch: string | null = null;
    for (const line of block.split("\n")) {
      if (line.startsWith("worktree ")) path = line.slice(9);
      else if (line.startsWith("branch ")) branch = line.slice(7);
    }
    if (path !== null) list.push({ path, branch });
  }
  return list;
}

/** Branches checked out in worktrees other than this one: branch -> worktree path. */
async function branchesElsewhere(repo: Repo): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  // No linked worktrees: nobody else can have a branch checked out.
  if (!existsSync(join(repo.commonDir, "worktrees"))) return found;
  const { realpathSync } = await import("node:fs");
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const here = repo.workTree ? real(repo.workTree) : null;
  for (const w of await listWorktrees(repo)) {
    if (w.branch && real(w.path) !== here) found.set(w.branch, w.path);
  }
  return found;
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
 * The plan for restoring `target` from `from`. Cheap: one cat-file for T's state,
 * one diff-tree for every file and index entry, one cat-file for the objects
 * T's refs, HEAD and stash need (which also gives the commit subjects), and
 * `git worktree list` only when a branch moves in a repository with linked worktrees.
 */
export function planRestore(repo: Repo, from: StateSide, target: Snapshot, opts: PlanOptions = {}): Promise<RestorePlan> {
  return phase("plan", () => planSteps(repo, from, target, opts));
}

async function planSteps(repo: Repo, from: StateSide, target: Snapshot, opts: PlanOptions = {}): Promise<RestorePlan> {
  const s = from.state;
  const [t, diffOut] = await Promise.all([
    loadState(repo, target.tree, `snapshot #${target.number}`),
    from.tree === target.tree ? Promise.resolve(new Uint8Array()) : stateDiff(repo, from.tree, target.tree, comparedParts(s), opts.lineCounts ?? true),
  ]);
  const changes = parseRawNumstat(diffOut);
  const unsafe = changes.find((c) => !isSafePath(c.raw.subarray(c.raw.indexOf(0x2f) + 1)));
  if (unsafe) throw new SnapshotRefused(`snapshot #${target.number}`, `it records a path Git would not accept: '${escapeControls(unsafe.path)}'`);
  const blockers: Blocker[] = [];
  const worktree = planWorktree(repo, s, t, target, changes);
  // Which files only the state being left holds: its own cat-file, run beside the checks below.
  const onlyLeft = opts.earlier && !opts.deferOnlyLeft && worktree.mode === "merge" ? onlyInLeft(repo, worktree.files, s.worktree, t, opts.earlier) : Promise.resolve([]);
  onlyLeft.catch(() => undefined); // awaited below; a refusal thrown first must not leave it unhandled

  // Spec step 2: refs, HEAD and the stash, and the objects they need.
  const moves: Moves = {
    refs: refMoves(s.refs, t.refs),
    head: headsEqual(s.head, t.head) ? null : { old: s.head, new: t.head },
    stash: stashPlan(s.stash, t.stash),
  };
  const needed = neededObjects(moves, t.head);
  // Subjects of the commits refs leave (they exist: the repository has them now).
  const subjects = moves.refs.map((m) => commitOf(m.old)).filter((o): o is ObjectId => o !== null);
  const ids = [...new Set([...needed.keys(), ...subjects])];
  const objects = await readObjects(repo, ids);
  checkObjectTypes(target, moves.refs, t, moves.stash, ids, objects);
  const found = new Map<ObjectId, string>();
  ids.forEach((id, i) => {
    const o = objects[i];
    if (o) found.set(id, o.type === "commit" ? subjectOf(o.content) : "");
  });
  const { missing, tagsToWrite } = await missingObjects(repo, target, [...needed].filter(([oid]) => !found.has(oid)));
  let notRestored: NotRestored[] = [];
  if (missing.length && opts.skipMissing) {
    notRestored = leaveMissing(moves, s, t, new Set(missing.map(([oid]) => oid)));
  } else if (missing.length) {
    blockers.push({
      kind: "missing-objects",
      target: target.number,
      names: [...new Set(missing.flatMap(([, why]) => why))],
      missing: missing.flatMap(([object, why]) => why.map((what) => ({ what, object }))),
    });
  }
  const { refs, head, stash } = moves;
  await addSubjects(repo, moves, t, found);
  const elsewhere = await checkedOutElsewhere(repo, moves, t, target, opts);
  if (elsewhere) blockers.push(elsewhere);
  const refused = refProblems(repo, s, moves, opts.force ?? false);
  if (refused.length) blockers.push({ kind: "ref-refused", target: target.number, names: refused.map((p) => p.name), refs: refused });

  // Spec step 4: the files.
  if (worktree.mode === "merge") {
    blockers.push(...(await worktreeBlockers(repo, target.number, worktree.files)));
    const here = currentFolder(repo);
    const over = here && worktree.files.find((f) => f.newMode !== MODE.absent && f.newMode !== MODE.gitlink && (here.rel === f.path || here.rel.startsWith(`${f.path}/`)));
    if (over) blockers.push({ kind: "current-directory", target: target.number, names: [over.path] });
    const tooLong = pathTooLong(target.number, worktree.files);
    if (tooLong) blockers.push(tooLong);
  }

  // Spec step 5: the index.
  let index: IndexPlan | null = null;
  if (!repo.bare && t.index !== undefined) {
    const entries = changes.filter((c) => c.path.startsWith("index/")).map((c) => stripPrefix(c, "index/"));
    index = { entries, conflictsNow: conflictPaths(s), conflictsAfter: conflictPaths(t) };
    const gone = await missingConflictBlobs(repo, s, t);
    if (gone.length) blockers.push({ kind: "missing-conflict-blobs", target: target.number, names: [...new Set(gone.map((g) => g.path))], missing: gone });
  }

  // A .gitmodules the restore writes (to the files or the index, which Git reads when no file is there).
  const gitmodules = changes.find((c) => (c.path === "worktree/.gitmodules" || c.path === "index/.gitmodules") && (c.newMode === MODE.file || c.newMode === MODE.executable));
  const modulesProblem = gitmodules ? await gitmodulesProblem(repo, gitmodules.newObject) : null;
  if (modulesProblem) blockers.push({ kind: "gitmodules-refused", target: target.number, names: [".gitmodules"], problem: modulesProblem });

  // Spec step 1: an operation in progress; and a Git command writing the index now.
  if (s.state.length && !opts.force && (!opts.partial || refs.length || head)) {
    blockers.push({ kind: "operation", target: target.number, names: [...s.state] });
  }
  if (!repo.bare && !opts.holdsIndexLock && indexLockHeld(repo.indexFile)) {
    blockers.push({ kind: "index-lock", target: target.number, names: [indexLockPath(repo.indexFile)] });
  }

  return {
    from,
    target,
    targetState: t,
    recordFirst: from.number === null,
    refs,
    head,
    worktree,
    index,
    stash,
    operations: [...s.state],
    blockers,
    tagsToWrite,
    notRestored,
    onlyLeft: await onlyLeft,
  };
}

/** The longest path (PATH_MAX, its NUL included) and file name (NAME_MAX) the system takes: Linux's, else the BSDs' and macOS's. */
const PATH_MAX = process.platform === "linux" ? 4096 : 1024;
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
async function gitmodulesProblem(repo: Repo, oid: ObjectId): Promise<GitmodulesProblem | null> {
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

/** What a restore does to refs, HEAD and the stash; --skip-missing narrows it. */
interface Moves {
  refs: RefMove[];
  head: HeadChange | null;
  stash: StashPlan | null;
}

/** The objects the target's refs, HEAD and new stash entries name, each with what needs it. */
function neededObjects(moves: Moves, targetHead: HeadState): Map<ObjectId, string[]> {
  const needed = new Map<ObjectId, string[]>();
  const need = (oid: ObjectId, why: string) => {
    if (!oid) return;
    const list = needed.get(oid) ?? [];
    list.push(why);
    needed.set(oid, list);
  };
  for (const m of moves.refs) {
    if (!m.new || !m.new.object || m.new.symrefTarget) continue;
    need(m.new.object, m.name);
    // A tag's chain ends at an object of its own: the commit a parent keeps, or a tree or blob keep holds.
    if (m.new.peeledObject) need(m.new.peeledObject, m.name);
  }
  if (targetHead.kind === "detached" && moves.head) need(targetHead.commit, "HEAD");
  for (const e of moves.stash?.added ?? []) need(e.commit, `stash entry '${e.message}'`);
  return needed;
}

/**
 * Of the objects not in the repository, those still missing once the tags
 * pruned since are found in the target's keep entry. Those tags are only read
 * and checked here; the restorer writes them (a dry run or a preview writes
 * nothing, though a tag written back would be harmless: an object nothing
 * points at).
 */
async function missingObjects(repo: Repo, target: Snapshot, missing: [ObjectId, string[]][]): Promise<{ missing: [ObjectId, string[]][]; tagsToWrite: KeptTag[] }> {
  if (!missing.length) return { missing, tagsToWrite: [] };
  const back = await recoverTags(repo, target.tree, missing.map(([oid]) => oid));
  if (back.damaged.length) {
    // Refused as a whole, like any other snapshot that does not hold what it says (core/format/validate.ts).
    throw new SnapshotRefused(
      `snapshot #${target.number}`,
      `its keep entry holds tags that are not what they are named after (${nameList(back.damaged.map((id) => id.slice(0, 7)))})`,
    );
  }
  return { missing: missing.filter(([oid]) => !back.recovered.has(oid)), tagsToWrite: back.tags };
}

/** --skip-missing: refs, HEAD and stash entries whose objects are gone stay as they are; returns what stays. */
function leaveMissing(moves: Moves, s: StateTree, t: StateTree, gone: ReadonlySet<ObjectId>): NotRestored[] {
  const notRestored: NotRestored[] = [];
  const lacks = (r: RefLine) => !r.symrefTarget && ((r.object !== null && gone.has(r.object)) || (r.peeledObject !== null && gone.has(r.peeledObject)));
  // lacks() holds only for plain refs, which always have an object.
  for (const m of moves.refs) if (m.new && lacks(m.new)) notRestored.push({ kind: "ref", name: m.name, object: m.new.object! });
  moves.refs = moves.refs.filter((m) => !(m.new && lacks(m.new)));
  const unmoved = new Set(notRestored.map((n) => (n.kind === "ref" ? n.name : "")));
  const head = moves.head;
  if (head && (head.new.kind === "detached" ? gone.has(head.new.commit) : unmoved.has(head.new.target))) {
    notRestored.push({ kind: "head", head: head.new });
    moves.head = null;
  }
  const stash = moves.stash;
  if (stash && stash.added.some((e) => gone.has(e.commit))) {
    for (const e of stash.added) if (gone.has(e.commit)) notRestored.push({ kind: "stash", entry: e });
    moves.stash = stashPlan(s.stash, t.stash.filter((e) => !gone.has(e.commit)));
  }
  return notRestored;
}

/** The subjects of the commits refs and HEAD leave and reach, for the report. */
async function addSubjects(repo: Repo, moves: Moves, t: StateTree, found: ReadonlyMap<ObjectId, string>): Promise<void> {
  for (const m of moves.refs) {
    const o = commitOf(m.old);
    const n = commitOf(m.new);
    if (o && found.has(o)) m.oldSubject = found.get(o)!;
    if (n && found.has(n)) m.newSubject = found.get(n)!;
  }
  const head = moves.head;
  if (!head) return;
  const c = t.head.kind === "detached" ? t.head.commit : commitOf(t.refs.find((r) => r.name === (t.head as { target: string }).target) ?? null);
  if (c && found.has(c)) head.newSubject = found.get(c)!;
  else if (c) {
    const [o] = await readObjects(repo, [c]);
    if (o && o.type === "commit") head.newSubject = subjectOf(o.content);
  }
}

/**
 * Branches checked out in another worktree stay where they are unless forced
 * (marked on their moves); HEAD on such a branch is a blocker, returned.
 */
async function checkedOutElsewhere(repo: Repo, moves: Moves, t: StateTree, target: Snapshot, opts: PlanOptions): Promise<Blocker | null> {
  const movesBranch = moves.refs.some((m) => m.name.startsWith("refs/heads/"));
  const headTo = moves.head && t.head.kind === "symbolic" ? t.head.target : null;
  if (!movesBranch && !headTo) return null;
  const elsewhere = await branchesElsewhere(repo);
  for (const m of moves.refs) {
    const w = elsewhere.get(m.name);
    if (w !== undefined) m.checkedOutIn = w;
  }
  if (headTo && elsewhere.has(headTo) && !opts.force) {
    return { kind: "head-in-other-worktree", target: target.number, names: [headTo], worktree: elsewhere.get(headTo)! };
  }
  return null;
}

/**
 * The refs of the plan Git would refuse to write, found before anything
 * moves: each fails the transaction, which the restore then rolls back as a
 * whole. The refs after the restore are the ones now, less those it deletes,
 * plus those it writes (a branch checked out elsewhere stays unless forced).
 */
function refProblems(repo: Repo, s: StateTree, moves: Moves, force: boolean): RefProblem[] {
  const applied = moves.refs.filter((m) => force || m.checkedOutIn === undefined);
  const after = new Map<string, RefLine>(s.refs.map((r) => [r.name, r]));
  for (const m of applied) {
    if (m.new) after.set(m.name, m.new);
    else after.delete(m.name);
  }
  if (moves.stash) {
    if (moves.stash.after.length) after.set("refs/stash", { name: "refs/stash", object: moves.stash.after[0]!.commit, type: "commit", symrefTarget: null, peeledObject: null, peeledType: null });
    else after.delete("refs/stash");
  }
  // Every folder the refs after the restore need, with one ref inside it.
  const folders = new Map<string, string>();
  for (const name of after.keys()) {
    for (let i = name.indexOf("/"); i > 0; i = name.indexOf("/", i + 1)) if (!folders.has(name.slice(0, i))) folders.set(name.slice(0, i), name);
  }
  const problems: RefProblem[] = [];
  const store = refStoreOf(repo);
  for (const m of applied) {
    if (!m.new) continue;
    const name = m.name;
    const inside = folders.get(name);
    let above: string | undefined;
    for (let i = name.indexOf("/"); i > 0 && above === undefined; i = name.indexOf("/", i + 1)) if (after.has(name.slice(0, i))) above = name.slice(0, i);
    if (inside !== undefined || above !== undefined) {
      problems.push({ name, why: "conflict", other: (inside ?? above)! });
      continue;
    }
    if (store.nameTooLong(repo, name)) {
      problems.push({ name, why: "too-long", storage: store.name });
      continue;
    }
    if (!m.new.symrefTarget && name.startsWith("refs/heads/") && m.new.type !== "commit") {
      problems.push({ name, why: "not-a-commit", type: m.new.type ?? "unknown" });
      continue;
    }
    if (m.new.symrefTarget) {
      // Follow the chain through the refs after the restore: back at a ref already passed is a loop.
      const chain = [name];
      for (let next = m.new.symrefTarget; next; next = after.get(next)?.symrefTarget ?? "") {
        const seen = chain.indexOf(next);
        if (seen >= 0) {
          problems.push({ name, why: "loop", loop: [...chain.slice(seen), next] });
          break;
        }
        chain.push(next);
      }
    }
  }
  return problems;
}

/**
 * The blobs of T's conflicted entries that are in neither the repository nor
 * T's index-blobs (a damaged or crafted snapshot): update-index takes such an
 * entry, and the restore would fail only when it records the result. One
 * `cat-file --batch-check`, only when T has conflicts that differ from now's.
 */
async function missingConflictBlobs(repo: Repo, s: StateTree, t: StateTree): Promise<{ path: string; object: ObjectId }[]> {
  if (!t.indexUnmerged || bytesEqual(s.indexUnmerged, t.indexUnmerged)) return [];
  const entries = decodeUnmerged(t.indexUnmerged).filter((e) => e.mode !== MODE.gitlink);
  const ids = unmergedBlobIds(entries);
  if (!ids.length) return [];
  const out = await repo.git.text(["cat-file", "--batch-check=%(objectname) %(objecttype)"], { input: ids.map((id) => `${id}\n`).join("") });
  const lines = out.split("\n");
  const gone = new Set(ids.filter((id, i) => lines[i] !== `${id} blob`));
  return entries.filter((e) => gone.has(e.object)).map((e) => ({ path: Buffer.from(e.path).toString("utf8"), object: e.object }));
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
function planWorktree(repo: Repo, s: StateTree, t: StateTree, target: Snapshot, changes: readonly FileChange[]): WorktreePlan {
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
 * Most snapshots onlyInLeft looks in, newest first, and most of the target's
 * commits (HEAD's and the stash's first, then branches); past them, a file
 * counts as held only now.
 */
const ONLY_LEFT_PLACES = 64;
/** Most paths onlyInLeft names to diff-tree; with more, it compares whole trees. */
const ONLY_LEFT_PATHSPECS = 1000;

/**
 * Where the target keeps files once it is restored, as revisions: the commits
 * its HEAD, stash entries (their files, index and untracked parts) and refs
 * point at. A file the restore takes off disk is not lost when one of these
 * holds it (undoing a stash pop puts the entry back; undoing a rebase leaves
 * the branch it was rebased onto).
 */
function targetCommits(t: StateTree): string[] {
  const commits: string[] = [];
  if (t.head.kind === "detached") commits.push(t.head.commit);
  // HEAD's branch, then the stash, then the other branches, then the rest (tags...): the likeliest first.
  const headRef = t.head.kind === "symbolic" ? t.head.target : null;
  const rank = (name: string) => (name === headRef ? 0 : name.startsWith("refs/heads/") ? 1 : 2);
  const refs = [...t.refs].sort((a, b) => rank(a.name) - rank(b.name));
  const head = refs.length && rank(refs[0]!.name) === 0 ? commitOf(refs[0]!) : null;
  if (head) commits.push(head);
  for (const e of t.stash) commits.push(e.commit, `${e.commit}^2`, `${e.commit}^3`);
  for (const r of refs) {
    const c = commitOf(r);
    if (c) commits.push(c);
  }
  return [...new Set(commits)];
}

/**
 * The files of a plan whose current content (what the restore removes or
 * replaces, as the left state's worktree tree `left` holds it) is in none of
 * the places it stays reachable: `earlier`'s worktree records and the trees of
 * the target's commits and stash entries (targetCommits). Unsure means
 * listed: saying too much costs a line, saying too little loses track of work.
 */
async function onlyInLeft(repo: Repo, files: readonly FileChange[], left: ObjectId | undefined, t: StateTree, earlier: readonly SnapshotEntry[]): Promise<string[]> {
  const zero = /^0+$/;
  const candidates = files.filter((f) => f.action !== "created" && f.oldMode !== MODE.gitlink && !zero.test(f.oldObject));
  if (!candidates.length) return [];
  // Names diff-tree prints as they are: no newline (its output is read by
  // lines between pairs), and bytes that are UTF-8, so that the text is the name.
  const askable = candidates.filter((f) => !f.raw.includes(10) && Buffer.from(f.path).equals(f.raw));
  if (left === undefined || !askable.length) return candidates.map((f) => f.path);
  const states = [...new Set(earlier.map((e) => e.tree).reverse())];
  const places = await placeTrees(repo, states.slice(0, ONLY_LEFT_PLACES), targetCommits(t).slice(0, ONLY_LEFT_PLACES));
  const held = await heldAlong(repo, left, places, new Map(askable.map((f) => [f.path, f.oldObject])));
  return candidates.filter((f) => !held.has(f.path)).map((f) => f.path);
}

/**
 * The paths of `content` (path to object, as the tree `from` has them) where
 * one of `trees` has that same object; none when Git's answer cannot be read.
 * One diff-tree --stdin walks the chain from, trees[0], trees[1]...: each
 * step says only what changed since the step before (neighbouring snapshots
 * share nearly every folder, which Git then skips), so a path a step leaves
 * alone keeps what it had, and a path the first step leaves alone is held.
 */
async function heldAlong(repo: Repo, from: ObjectId, trees: readonly ObjectId[], content: ReadonlyMap<string, ObjectId>): Promise<Set<string>> {
  if (!trees.length) return new Set();
  const paths = [...content.keys()];
  const steps = trees.map((tree, i) => [i ? trees[i - 1]! : from, tree] as const);
  let changes: Map<string, RawChange[]>;
  try {
    changes = await diffTreePairs(repo, steps, paths.length <= ONLY_LEFT_PATHSPECS ? { pathspecs: paths.map((p) => `:(literal)${p}`) } : {});
  } catch {
    return new Set(); // unsure: every file listed
  }
  const held = new Set<string>();
  const firstStep = new Set<string>();
  steps.forEach(([a, b], step) => {
    for (const { meta, path: raw } of changes.get(`${a} ${b}`) ?? []) {
      const path = decodeBytes(raw);
      if (!content.has(path)) continue;
      if (step === 0) firstStep.add(path);
      if (meta[3] === content.get(path)) held.add(path);
    }
  });
  for (const path of paths) if (!firstStep.has(path)) held.add(path);
  return held;
}

/**
 * The worktree trees of the state trees `states`, then the trees of
 * `commits` (revisions), in that order, each once, in one cat-file: a restore
 * snapshot has the worktree of the one it restored, a ref's change that of
 * the one before. A name that is no tree (a stash entry without untracked
 * files has no third parent) is left out.
 */
async function placeTrees(repo: Repo, states: readonly ObjectId[], commits: readonly string[]): Promise<ObjectId[]> {
  const names = [...states.map((t) => `${t}:worktree`), ...commits.map((c) => `${c}^{tree}`)];
  if (!names.length) return [];
  const out = await repo.git.text(["cat-file", "--batch-check=%(objectname) %(objecttype)"], { input: names.map((n) => `${n}\n`).join("") });
  const trees = out.split("\n").flatMap((line) => (/^[0-9a-f]+ tree$/.test(line) ? [line.slice(0, line.indexOf(" "))] : []));
  return [...new Set(trees)];
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

function stripPrefix(c: FileChange, prefix: string): FileChange {
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

/** Whether the plan changes nothing at all. */
export function planIsEmpty(p: RestorePlan): boolean {
  return !p.refs.length && !p.head && !p.worktree.files.length && !p.stash && !indexChanges(p);
}

/** Whether the index changes. */
export function indexChanges(p: RestorePlan): boolean {
  if (!p.index) return false;
  return (
    p.index.entries.length > 0 ||
    p.from.state.index !== p.targetState.index ||
    !bytesEqual(p.from.state.indexUnmerged, p.targetState.indexUnmerged)
  );
}

function bytesEqual(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (!a || !b) return !a && !b;
  return Buffer.from(a).equals(Buffer.from(b));
}

/**
 * A restore refused before anything changed, with every reason as data: the
 * CLI words them (cli/plan-words.ts). The message is only a fallback.
 */
export class RestoreRefused extends UndoError {
  constructor(readonly blockers: readonly Blocker[]) {
    super(`restore refused: ${blockers.map((b) => `${b.kind} (${b.names.join(", ")})`).join("; ")}`, "refused");
    this.name = "RestoreRefused";
  }
}
