// The facts a summary is worded from (core/describe.ts), read through Git:
// what differs between the previous snapshot and the new state, the previous
// snapshot's refs, HEAD, stash, markers and conflicts when they are needed,
// and which index paths differ from HEAD among those that could go either way.
// As few Git processes as the change needs: one diff-tree --stdin for both
// comparisons, one cat-file for the previous parts, one diff-tree for HEAD.
import { decodeBytes } from "./bytes.ts";
import { decodeRefs, decodeStash, decodeState, encodeHead, encodeRefs, encodeStash, encodeState, type ObjectId, type StateTree } from "./format/index.ts";
import { ambiguousPaths, conflictPathsOf, parseNameStatus, type ChangeFacts, type PreviousParts } from "./describe.ts";
import { readObjects } from "./git-data/objects.ts";
import { emptyTreeOf, type Repo } from "./repo.ts";

/**
 * The parts of the state tree this process recorded last (rememberParts): the
 * worker's next summary compares with them without reading them back. A tree
 * id fixes its blobs, so the tree is the whole key.
 */
let recorded: { tree: ObjectId; parts: PreviousParts } | null = null;

/** Keep the parts of a state just recorded as `tree`, as previousParts would read them back. */
export function rememberParts(tree: ObjectId, state: StateTree): void {
  recorded = {
    tree,
    parts: {
      head: encodeHead(state.head),
      refs: decodeRefs(encodeRefs(state.refs)),
      stash: decodeStash(encodeStash(state.stash)),
      markers: decodeState(encodeState(state.state)),
      conflicts: conflictPathsOf(state.indexUnmerged),
    },
  };
}

/** The parts of a snapshot's tree the summary compares with, in one cat-file (none when this process recorded it last). */
export async function previousParts(repo: Repo, prevTree: ObjectId): Promise<PreviousParts> {
  if (recorded?.tree === prevTree) return recorded.parts;
  const [head, refs, stash, state, unmerged] = await readObjects(
    repo,
    ["HEAD", "refs", "stash", "state", "index-unmerged"].map((n) => `${prevTree}:${n}`),
  );
  const text = (o: typeof head) => (o ? decodeBytes(o.content) : "");
  return {
    head: head ? decodeBytes(head.content) : null,
    refs: decodeRefs(text(refs)),
    stash: decodeStash(text(stash)),
    markers: decodeState(text(state)),
    conflicts: conflictPathsOf(unmerged?.content),
  };
}

/**
 * `git diff-tree -r -z --name-status` of several pairs of trees in one
 * process (`--stdin`): for each pair, its paths by status letter. Each pair's
 * entries follow a line naming the two trees.
 */
export async function treeDiffs(repo: Repo, pairs: readonly (readonly [string, string])[]): Promise<Map<string, string>[]> {
  const out = await repo.git.text(["diff-tree", "--stdin", "-r", "-z", "--no-renames", "--name-status"], {
    input: pairs.map(([a, b]) => `${a} ${b}\n`).join(""),
  });
  const diffs: Map<string, string>[] = [];
  let i = 0;
  while (i < out.length) {
    const header = /^[0-9a-f]{40,64} [0-9a-f]{40,64}\n/.exec(out.slice(i, i + 140));
    if (header) {
      diffs.push(new Map());
      i += header[0].length;
      continue;
    }
    const statusEnd = out.indexOf("\0", i);
    const pathEnd = out.indexOf("\0", statusEnd + 1);
    if (statusEnd < 0 || pathEnd < 0 || !diffs.length) break;
    diffs.at(-1)!.set(out.slice(statusEnd + 1, pathEnd), out.slice(i, statusEnd));
    i = pathEnd + 1;
  }
  return diffs;
}

/** HEAD's commit, by the refs the state holds; null when HEAD's branch is unborn. */
function headCommit(state: StateTree): string | null {
  if (state.head.kind === "detached") return state.head.commit;
  const target = state.head.target;
  const line = state.refs.find((r) => r.name === target);
  return line && line.type === "commit" ? line.object : null;
}

/** The facts of the change from the snapshot with tree `prevTree` to `state` (tree `tree`); `previous` when already read. */
export async function changeFacts(
  repo: Repo,
  prevTree: ObjectId,
  state: StateTree,
  tree: ObjectId,
  previous?: PreviousParts,
  opts: { allIndexPaths?: boolean } = {},
): Promise<ChangeFacts> {
  // What changed since the previous snapshot and, in the same process, how the files differ from the index now.
  const pairs: [string, string][] = [[prevTree, tree]];
  if (state.index !== undefined && state.worktree !== undefined) pairs.push([state.index, state.worktree]);
  const [changed = new Map<string, string>(), unstagedNow = null] = await treeDiffs(repo, pairs);
  const unstaged = pairs.length > 1 ? unstagedNow : null;
  const top = new Set([...changed.keys()].map((p) => p.split("/", 1)[0]!));
  const needPrev = top.has("refs") || top.has("stash") || top.has("HEAD") || top.has("index-unmerged");
  const prev = previous ?? (needPrev ? await previousParts(repo, prevTree) : null);
  // Staged (`add -p`, an edit then `add`) or set back to HEAD (`reset`)? HEAD's tree says, for those paths only.
  const inIndex = new Map<string, string>();
  const inWorktree = new Map<string, string>();
  for (const [path, status] of changed) {
    if (path.startsWith("index/")) inIndex.set(path.slice(6), status);
    else if (path.startsWith("worktree/")) inWorktree.set(path.slice(9), status);
  }
  // Every index path that changed, when asked (a summary that leaves out what followed HEAD: describe.ts changeBesidesHead).
  const ambiguous = opts.allIndexPaths ? [...inIndex.keys()] : ambiguousPaths(inIndex, inWorktree, unstaged);
  const head = headCommit(state);
  const stagedVsHead = new Set(
    ambiguous.length
      ? parseNameStatus(
          await repo.git.text(["diff-tree", "-r", "-z", "--no-renames", "--name-status", head ?? emptyTreeOf(repo), state.index ?? emptyTreeOf(repo), "--", ...ambiguous.map((p) => `:(literal)${p}`)]),
        ).map(([, p]) => p)
      : [],
  );
  return { changed, unstaged, previous: prev, stagedVsHead };
}
