// What restoring a snapshot would change: the difference between the state being
// left (S, usually just captured) and the target (T), as a typed plan. --dry-run
// prints it, the restorer carries it out, the picker previews it. It is computed
// from the two state trees with a handful of batched Git calls and some lstat()s.
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  decodeUnmerged,
  pathKey,
  type HeadState,
  type ObjectId,
  type OperationMarker,
  type RefLine,
  type Snapshot,
  type SnapshotEntry,
  type StashEntry,
  type StateTree,
} from "./format.ts";
import { loadState } from "./inspect.ts";
import { recoverTags, type KeptTag } from "./keep.ts";
import { escapeControls, isSafePath, SnapshotRefused } from "./validate.ts";
import { indexLockHeld, indexLockPath } from "./lock.ts";
import { readObjects } from "./objects.ts";
import type { Repo } from "./repo.ts";
import { MODE } from "./mode.ts";
import { phase } from "./trace.ts";

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
  | /** A file on disk differs from the state being left (changed while git-undo read it). */ { kind: "not-uptodate"; detail: string }
  | /** index.lock exists (names: its path). */ { kind: "index-lock" }
  | /** The target's HEAD branch is checked out in another worktree (names: the branch). */ { kind: "head-in-other-worktree"; worktree: string }
  | /** A revert: what the change touched has changed again (names: the refs and paths). */ { kind: "revert-conflict" }
);

export type BlockerKind = Blocker["kind"];

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
  const args = ["diff-tree", "-r", "-z", "--raw", ...(lines ? ["--numstat"] : []), "--no-renames", from, to, "--", ...paths];
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
  const lstat = (p: Buffer) => {
    try {
      return lstatSync(p);
    } catch {
      return null;
    }
  };
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
      if (lstat(abs(child))?.isDirectory()) {
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
      const st = lstat(abs(dir));
      if (st && !st.isDirectory() && !sInTree(dir)) found.push({ path: dir.toString("utf8"), raw: Buffer.from(dir) });
    }
    const st = lstat(abs(rel));
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

const OPERATION_NAMES: Record<OperationMarker, string> = {
  "rebase-merge": "a rebase",
  "rebase-apply": "a rebase or git am",
  MERGE_HEAD: "a merge",
  CHERRY_PICK_HEAD: "a cherry-pick",
  REVERT_HEAD: "a revert",
  BISECT_LOG: "a bisect",
  sequencer: "a cherry-pick or revert sequence",
};

export const operationName = (m: OperationMarker): string => OPERATION_NAMES[m];

/** A list for a message: `a, b and 3 more`, each name with its control characters escaped (names come from snapshots). */
export function nameList(names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).map(escapeControls).join(", ");
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
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
  const onlyLeft = opts.earlier && worktree.mode === "merge" ? onlyInLeft(repo, worktree.files, opts.earlier) : Promise.resolve([]);
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

  // Spec step 4: the files.
  if (worktree.mode === "merge") {
    const occupied = await occupiedBlocker(repo, target.number, worktree.files);
    if (occupied) blockers.push(occupied);
  }

  // Spec step 5: the index.
  let index: IndexPlan | null = null;
  if (!repo.bare && t.index !== undefined) {
    const entries = changes.filter((c) => c.path.startsWith("index/")).map((c) => stripPrefix(c, "index/"));
    index = { entries, conflictsNow: conflictPaths(s), conflictsAfter: conflictPaths(t) };
  }

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
    // Refused as a whole, like any other snapshot that does not hold what it says (core/validate.ts).
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

/** What happens to the files: merged, the same on both sides, or left alone (a side has no record of them). */
function planWorktree(repo: Repo, s: StateTree, t: StateTree, target: Snapshot, changes: readonly FileChange[]): WorktreePlan {
  if (s.worktree === undefined || t.worktree === undefined) {
    const why =
      !repo.config.worktree || s.worktree === undefined
        ? "undo.worktree is false"
        : t.index === undefined
          ? `snapshot #${target.number} has no record of the files (it was recorded without a work tree)`
          : `snapshot #${target.number} has no record of the files (undo.worktree was false)`;
    return { mode: "skipped", reason: repo.bare ? "a bare repository has no files" : why, files: [] };
  }
  if (s.worktree === t.worktree) return { mode: "same", files: [] };
  const files = changes.filter((c) => c.path.startsWith("worktree/")).map((c) => stripPrefix(c, "worktree/"));
  return { mode: files.length ? "merge" : "same", files };
}

/** Most lookups onlyInLeft asks one cat-file for (files times snapshots); past it, a file counts as held only now. */
const ONLY_LEFT_LOOKUPS = 20_000;

/**
 * The files of a plan whose current content (what the restore removes or
 * replaces) is in none of `earlier`'s worktree records: newest snapshots
 * first, in one `cat-file --batch-check`. Unsure means listed: saying too much
 * costs a line, saying too little loses track of work.
 */
async function onlyInLeft(repo: Repo, files: readonly FileChange[], earlier: readonly SnapshotEntry[]): Promise<string[]> {
  const zero = /^0+$/;
  const candidates = files.filter((f) => f.action !== "created" && f.oldMode !== MODE.gitlink && !zero.test(f.oldObject));
  if (!candidates.length) return [];
  // A path with a newline cannot be asked for on cat-file's line-based input.
  const askable = candidates.filter((f) => !f.raw.includes(10));
  const trees = [...new Set(earlier.map((e) => e.tree).reverse())].slice(0, Math.max(1, Math.floor(ONLY_LEFT_LOOKUPS / Math.max(1, askable.length))));
  const held = new Set<string>();
  if (askable.length && trees.length) {
    const lines: Buffer[] = [];
    for (const tree of trees) for (const f of askable) lines.push(Buffer.from(`${tree}:worktree/`), Buffer.from(f.raw), Buffer.from("\n"));
    const r = await repo.git.run(["cat-file", "--batch-check=%(objectname)"], { input: Buffer.concat(lines) });
    const answers = new TextDecoder().decode(r.stdout).split("\n");
    let i = 0;
    for (let t = 0; t < trees.length; t++) {
      for (const f of askable) {
        if (answers[i++] === f.oldObject) held.add(f.path);
      }
    }
  }
  return candidates.filter((f) => !held.has(f.path)).map((f) => f.path);
}

/**
 * The same check again, just before the merge: an ignored file written since the
 * plan was made (a build running meanwhile) would be overwritten by the merge,
 * which treats ignored files as expendable. Only lstat()s, unless one is found.
 */
export async function occupiedNow(repo: Repo, plan: RestorePlan): Promise<Blocker | null> {
  return plan.worktree.mode === "merge" ? occupiedBlocker(repo, plan.target.number, plan.worktree.files) : null;
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
