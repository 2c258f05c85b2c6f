// The refs, HEAD and stash part of a restore plan (spec step 2): which refs move,
// the objects the target needs and whether they are here (or in its keep entry),
// the commits' subjects for the report, branches checked out in other
// worktrees, and the refs Git would refuse to write.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { HeadState, ObjectId, RefLine, Snapshot, StashEntry, StateTree } from "../format/index.ts";
import { recoverTags, type KeptTag } from "../snapshots/keep-entry.ts";
import { SnapshotRefused } from "../format/validate.ts";
import { escapeControls, nameList } from "../text.ts";
import { readObjects } from "../git-data/objects.ts";
import type { Repo } from "../repo.ts";
import { refStoreOf } from "../git-data/refs/store.ts";
import type { Blocker, HeadChange, NotRestored, PlanOptions, RefMove, RefProblem, StashPlan } from "./plan-types.ts";

/** The commit a ref line names, for subjects. */
export const commitOf = (r: RefLine | null): ObjectId | null =>
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

/** What the refs, HEAD and the stash part of a plan holds: the moves, what stops them, and what --skip-missing leaves. */
export interface RefsPlan {
  refs: RefMove[];
  head: HeadChange | null;
  stash: StashPlan | null;
  blockers: Blocker[];
  tagsToWrite: KeptTag[];
  notRestored: NotRestored[];
}

/**
 * Spec step 2: refs, HEAD and the stash, and the objects they need. One
 * cat-file for those objects (which also gives the commit subjects), and
 * `git worktree list` only when a branch moves in a repository with linked worktrees.
 */
export async function planRefs(repo: Repo, s: StateTree, t: StateTree, target: Snapshot, opts: PlanOptions): Promise<RefsPlan> {
  const blockers: Blocker[] = [];
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
  return { refs, head, stash, blockers, tagsToWrite, notRestored };
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
