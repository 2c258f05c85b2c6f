// Which files only the state being left holds (plan.onlyLeft): content the
// restore takes off disk or changes that no earlier snapshot and none of the
// target's commits or stash entries keeps.
import type { ObjectId, SnapshotEntry, StateTree } from "../format/index.ts";
import { diffTreePairs, type RawChange } from "../git-data/tree-diff.ts";
import { decodeBytes } from "../bytes.ts";
import type { Repo } from "../repo.ts";
import { MODE } from "../mode.ts";
import { commitOf } from "./plan-refs.ts";
import type { FileChange, RestorePlan } from "./plan-types.ts";

/**
 * Fill plan.onlyLeft for a plan made with deferOnlyLeft: a restore runs it
 * beside its steps (it reads only snapshots and the target's commits).
 */
export async function addOnlyLeft(repo: Repo, plan: RestorePlan, earlier: readonly SnapshotEntry[]): Promise<void> {
  if (plan.worktree.mode === "merge") plan.onlyLeft = await onlyInLeft(repo, plan.worktree.files, plan.from.state.worktree, plan.targetState, earlier);
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
export async function onlyInLeft(repo: Repo, files: readonly FileChange[], left: ObjectId | undefined, t: StateTree, earlier: readonly SnapshotEntry[]): Promise<string[]> {
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
