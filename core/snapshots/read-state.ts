// Reading a recorded state back: the decoded state tree of a snapshot and the
// counts `git undo show` prints.
import { decodeHead, decodeRefs, decodeStash, decodeState as decodeStateBlob, decodeUnmerged, OPERATION_MARKERS, type ObjectId, type RefLine, type Snapshot, type StateTree } from "../format/index.ts";
import { decodeBytes } from "../bytes.ts";
import { parseNameStatus } from "../describe.ts";
import { readObjects, type RawObject } from "../git-data/objects.ts";
import { hashLengthOf, type Repo } from "../repo.ts";
import { checkConsistent, checkHead, checkIndexBlobs, checkKeep, checkMarkers, checkRefs, checkStash, checkUnmerged, parseRawTree, problemOf, SnapshotRefused, STATE_ENTRY_TYPES } from "../format/validate.ts";

const BLOB_ENTRIES = ["HEAD", "refs", "stash", "state", "index-unmerged"] as const;
const TREE_ENTRIES = ["index", "index-blobs", "worktree", "keep"] as const;

/**
 * Decode a snapshot's state tree with one cat-file, checking everything in it
 * (core/format/validate.ts) before anyone uses it: an invalid state is refused as a
 * whole, naming the first problem. `label` names the snapshot in that line.
 */
export async function loadState(repo: Repo, tree: ObjectId, label = `tree ${tree.slice(0, 7)}`): Promise<StateTree> {
  const [state] = await loadStates(repo, [tree], label);
  if (state instanceof SnapshotRefused) throw state;
  return state!;
}

/**
 * loadState for many trees in one cat-file (a first `list` of a long history
 * checks them all): each one's state, or the SnapshotRefused naming its problem.
 */
export async function loadStates(repo: Repo, trees: readonly ObjectId[], label = ""): Promise<(StateTree | SnapshotRefused)[]> {
  const names = [...BLOB_ENTRIES, ...TREE_ENTRIES];
  const objects = await readObjects(repo, trees.flatMap((tree) => names.map((n) => `${tree}:${n}`)));
  return trees.map((tree, i) => {
    try {
      return decodeState(repo, objects.slice(i * names.length, (i + 1) * names.length), label || `tree ${tree.slice(0, 7)}`);
    } catch (e) {
      if (e instanceof SnapshotRefused) return e;
      throw e;
    }
  });
}

/** A state tree from its entries as cat-file gave them (in BLOB_ENTRIES, TREE_ENTRIES order), checked. */
function decodeState(repo: Repo, objects: readonly (RawObject | null)[], label: string): StateTree {
  const names = [...BLOB_ENTRIES, ...TREE_ENTRIES];
  const problem = (why: string) => new SnapshotRefused(label, why);
  const hex = hashLengthOf(repo) * 2;
  const get = (name: (typeof names)[number]) => {
    const o = objects[names.indexOf(name)] ?? null;
    if (o && o.type !== STATE_ENTRY_TYPES[name]) throw problem(`its ${name} entry is a ${o.type}, not a ${STATE_ENTRY_TYPES[name]}`);
    return o;
  };
  const head = get("HEAD");
  const refs = get("refs");
  if (!head || !refs) throw problem("it has no HEAD or refs entry");
  const text = (name: (typeof BLOB_ENTRIES)[number]) => decodeBytes(get(name)?.content ?? new Uint8Array());
  const unmerged = get("index-unmerged");
  const why = problemOf(() => {
    checkHead(text("HEAD"), hex);
    checkRefs(text("refs"), hex);
    checkStash(text("stash"), hex);
    checkMarkers(text("state"), OPERATION_MARKERS);
    if (unmerged) checkUnmerged(unmerged.content, hex);
    const blobs = get("index-blobs");
    if (blobs) checkIndexBlobs(parseRawTree(blobs.content, hashLengthOf(repo)));
    const keep = get("keep");
    if (keep) checkKeep(parseRawTree(keep.content, hashLengthOf(repo)), hex);
  });
  if (why !== null) throw problem(why);
  const state: StateTree = {
    head: decodeHead(text("HEAD")),
    refs: decodeRefs(text("refs")),
    stash: decodeStash(text("stash")),
    state: decodeStateBlob(text("state")),
  };
  if (unmerged) state.indexUnmerged = unmerged.content;
  for (const name of TREE_ENTRIES) {
    const o = get(name);
    if (!o) continue;
    if (name === "index") state.index = o.oid;
    else if (name === "index-blobs") state.indexBlobs = o.oid;
    else if (name === "keep") state.keep = o.oid;
    else state.worktree = o.oid;
  }
  const consistent = problemOf(() => checkConsistent(state));
  if (consistent !== null) throw problem(consistent);
  return state;
}

/** The commit HEAD resolves to in a recorded state, or null when unborn. */
export function headCommit(state: StateTree): ObjectId | null {
  if (state.head.kind === "detached") return state.head.commit || null;
  const target = resolveRef(state.refs, state.head.target);
  return target && target.type === "commit" ? target.object : null;
}

export function resolveRef(refs: readonly RefLine[], name: string): RefLine | undefined {
  return refs.find((r) => r.name === name && r.object !== null);
}

export interface SnapshotDetails {
  snapshot: Snapshot;
  state: StateTree;
  /** Paths whose index entry differs from HEAD's commit. */
  staged: string[];
  /** Tracked paths whose working file differs from the index. */
  unstaged: string[];
  /** Files in the working tree that the index does not have. */
  untracked: string[];
  conflicts: string[];
}

/** What `git undo show` reports about a snapshot. */
export async function inspectSnapshot(repo: Repo, snapshot: Snapshot): Promise<SnapshotDetails> {
  const state = await loadState(repo, snapshot.tree, `snapshot #${snapshot.number}`);
  const conflicts = state.indexUnmerged
    ? [...new Set(decodeUnmerged(state.indexUnmerged).map((e) => Buffer.from(e.path).toString("utf8")))]
    : [];
  const details: SnapshotDetails = { snapshot, state, staged: [], unstaged: [], untracked: [], conflicts };
  if (state.index === undefined) return details;
  const head = headCommit(state);
  const diffs: Promise<string>[] = [
    head
      ? repo.git.text(["diff-tree", "-r", "-z", "--no-renames", "--name-status", `${head}^{tree}`, state.index], { okExit: [128] })
      : repo.git.text(["ls-tree", "-r", "-z", "--name-only", state.index]).then((o) =>
          o
            .split("\0")
            .filter(Boolean)
            .map((p) => `A\0${p}\0`)
            .join(""),
        ),
  ];
  if (state.worktree !== undefined) {
    diffs.push(repo.git.text(["diff-tree", "-r", "-z", "--no-renames", "--name-status", state.index, state.worktree]));
  }
  const [staged, worktree] = await Promise.all(diffs);
  details.staged = parseNameStatus(staged ?? "").map(([, p]) => p);
  const conflictSet = new Set(conflicts);
  for (const [status, path] of parseNameStatus(worktree ?? "")) {
    if (conflictSet.has(path)) continue;
    if (status === "A") details.untracked.push(path);
    else details.unstaged.push(path);
  }
  return details;
}
