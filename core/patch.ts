// The file-level difference between two recorded states, as Git's own diff
// shows it: which pair of trees to hand to `git diff` (show -p, the picker's
// diff view).
import type { ObjectId, SnapshotEntry, StateTree } from "./format/index.ts";
import type { Repo } from "./repo.ts";

export interface TreePair {
  /** The trees compared, old side first. */
  from: ObjectId;
  to: ObjectId;
  /** "worktree" when both states recorded their files; else the index trees. */
  part: "worktree" | "index";
}

/**
 * The trees whose diff shows how `to` differs from `from` on disk: the worktree
 * trees when both states have one (undo.worktree=false leaves it out), else the
 * index trees. Null when either state has neither (a bare repository).
 */
export function treePair(from: StateTree, to: StateTree): TreePair | null {
  if (from.worktree !== undefined && to.worktree !== undefined) return { from: from.worktree, to: to.worktree, part: "worktree" };
  if (from.index !== undefined && to.index !== undefined) return { from: from.index, to: to.index, part: "index" };
  return null;
}

/** The entries of a state tree `git undo diff` compares: what the user sees of a state (git-undo's own records left out). */
export const STATE_PARTS = ["HEAD", "refs", "stash", "state", "index", "worktree"] as const;

/** The ways `git undo diff` prints a difference, as Git's diff options. */
export type DiffFormat = "patch" | "stat" | "name-only";

/**
 * `git diff` arguments for two whole state trees: refs, HEAD and the stash as
 * their text records, the index and the files under `index/` and `worktree/`.
 */
export function stateDiffArgs(from: ObjectId, to: ObjectId, format: DiffFormat, color?: "always" | "never" | "auto"): string[] {
  const how = format === "stat" ? ["--stat"] : format === "name-only" ? ["--name-only"] : [];
  return ["diff", ...(color ? [`--color=${color}`] : []), ...how, from, to, "--", ...STATE_PARTS];
}

/** `git diff` arguments for a pair of trees; `color` as Git's --color takes it. */
export function diffArgs(pair: TreePair, color?: "always" | "never" | "auto"): string[] {
  return ["diff", ...(color ? [`--color=${color}`] : []), pair.from, pair.to];
}

/**
 * The file paths each snapshot changed since the one before it (worktree and
 * index, without their prefix), for the picker's filter: one diff-tree for the
 * whole sequence, fed the pairs of trees on stdin.
 */
export async function changedPaths(repo: Repo, snaps: readonly SnapshotEntry[]): Promise<Map<number, string[]>> {
  const found = new Map<number, string[]>();
  if (snaps.length < 2) return found;
  const byPair = new Map<string, number>();
  const pairs: string[] = [];
  for (let i = 1; i < snaps.length; i++) {
    const key = `${snaps[i - 1]!.tree} ${snaps[i]!.tree}`;
    if (snaps[i - 1]!.tree === snaps[i]!.tree) continue;
    byPair.set(key, snaps[i]!.number);
    pairs.push(key);
  }
  if (!pairs.length) return found;
  const out = await repo.git.text(["diff-tree", "--stdin", "-r", "-z", "--name-only", "--no-renames"], { input: `${pairs.join("\n")}\n` });
  // Each pair's output starts with "<tree> <tree>\n", then NUL-terminated paths.
  let current: Set<string> | null = null;
  const sets = new Map<number, Set<string>>();
  for (const rec of out.split("\0")) {
    const header = /^([0-9a-f]{40,64} [0-9a-f]{40,64})\n/.exec(rec);
    let path = rec;
    if (header) {
      const n = byPair.get(header[1]!);
      current = n === undefined ? null : (sets.get(n) ?? new Set());
      if (n !== undefined) sets.set(n, current!);
      path = rec.slice(header[0].length);
    }
    if (!current || !path) continue;
    const m = /^(?:worktree|index)\/(.*)$/s.exec(path);
    if (m) current.add(m[1]!);
  }
  for (const [n, set] of sets) found.set(n, [...set]);
  return found;
}
