// What restoring a snapshot would change: the difference between the state being
// left (S, usually just captured) and the target (T), as a typed plan. --dry-run
// prints it, the restorer carries it out, the picker previews it. It is computed
// from the two state trees with a handful of batched Git calls and some lstat()s.
//
// This file is the planner and the plan's entry: the parts live beside it, and
// what they export that importers use is exported from here too.
//   plan-types.ts      the plan as data (RestorePlan, Blocker...)
//   plan-refs.ts       refs, HEAD and the stash (spec step 2)
//   plan-files.ts      the files: the diff, the worktree plan, what on disk stops it (step 4)
//   plan-only-left.ts  which files only the state being left holds (plan.onlyLeft)
import { decodeUnmerged, unmergedBlobIds, type ObjectId, type Snapshot, type StateTree } from "../format/index.ts";
import { loadState } from "../snapshots/read-state.ts";
import { isSafePath, SnapshotRefused } from "../format/validate.ts";
import { escapeControls } from "../text.ts";
import { indexLockHeld, indexLockPath } from "../lock.ts";
import type { Repo } from "../repo.ts";
import { MODE } from "../mode.ts";
import { phase } from "../trace.ts";
import { UndoError } from "../errors.ts";
import type { Blocker, IndexPlan, PlanOptions, RestorePlan, StateSide } from "./plan-types.ts";
import { planRefs } from "./plan-refs.ts";
import { comparedParts, filesBlockers, gitmodulesProblem, parseRawNumstat, planWorktree, stateDiff, stripPrefix } from "./plan-files.ts";
import { onlyInLeft } from "./plan-only-left.ts";

export type {
  Blocker,
  FileAction,
  FileChange,
  GitmodulesProblem,
  HeadChange,
  IndexPlan,
  NotRestored,
  PlanOptions,
  RefAction,
  RefMove,
  RefProblem,
  RestorePlan,
  StashPlan,
  StateSide,
  WorktreePlan,
} from "./plan-types.ts";
export { headsEqual, listWorktrees, refMoves, stashPlan, type WorktreeInfo } from "./plan-refs.ts";
export { addLineCounts, currentFolder, filesOnDisk, occupiedNow, parseRawNumstat, submoduleOnly } from "./plan-files.ts";
export { addOnlyLeft } from "./plan-only-left.ts";

const conflictPaths = (state: StateTree): string[] =>
  state.indexUnmerged ? [...new Set(decodeUnmerged(state.indexUnmerged).map((e) => Buffer.from(e.path).toString("utf8")))] : [];

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
  const refsPlan = await planRefs(repo, s, t, target, opts);
  blockers.push(...refsPlan.blockers);
  const { refs, head, stash } = refsPlan;

  // Spec step 4: the files.
  if (worktree.mode === "merge") blockers.push(...(await filesBlockers(repo, target.number, worktree.files)));

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
    tagsToWrite: refsPlan.tagsToWrite,
    notRestored: refsPlan.notRestored,
    onlyLeft: await onlyLeft,
  };
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
