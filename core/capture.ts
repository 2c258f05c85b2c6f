// Capturing: the live state read (refs, HEAD, its reflog, the stash, the
// operation markers, the index and the files) and written as a state tree,
// not yet committed. Recording and restoring both start here.
import { encodeHead, encodeRefs, encodeStash, encodeState, decodeUnmerged, unmergedBlobIds, type ObjectId, type HeadReflogEntry, type SnapshotEntry, type StateTree } from "./format/index.ts";
import { decodeSnapshot, numberedRefs, ownOnly, readOwnSnapshots, type NumberedRef } from "./snapshots/history.ts";
import { KEEP_ENTRY, keepTree } from "./snapshots/keep-entry.ts";
import { blobId, treeId, withScratch, writeBlobs, writeTree, type TreeEntry } from "./git-data/objects.ts";
import { encodeBytes } from "./bytes.ts";
import { readJsonFile, replaceFile } from "./files.ts";
import { undoFile } from "./undo-files.ts";
import { rereadConfig, type Repo } from "./repo.ts";
import { readRefState, type RefState } from "./git-data/refs/store.ts";
import type { SnapshotRef } from "./git-data/refs/index.ts";
import { captureIndex, type LeftOutFile } from "./git-data/index/trees.ts";
import { MODE } from "./mode.ts";
import { phase } from "./trace.ts";

/** The live state, written as a tree but not yet committed. */
export interface LiveCapture {
  state: StateTree;
  tree: ObjectId;
  /** HEAD's newest reflog entry. */
  reflog?: HeadReflogEntry;
  /** This worktree's snapshot refs before this capture, oldest first, their messages not decoded; fetched ones marked foreign. */
  sequence: NumberedRef[];
  /** The newest of them this worktree recorded itself, decoded. */
  latest?: SnapshotEntry;
  /** All of them, decoded when first asked for (a restore's targets): a recording needs only the newest. */
  readonly snapshots: SnapshotEntry[];
  /** The worktree tree came from the index the last recording kept (core/git-data/index/kept.ts). */
  fromKept?: boolean;
  /** Untracked files left out of the worktree tree for their size (undo.maxNewFileSize), sorted by path. */
  leftOut?: LeftOutFile[];
  /** The configuration's digest as the capture saw it (keys the committer answer). */
  configDigest?: string;
}

/** This worktree's snapshot refs, oldest first, as a capture follows them. */
const sequenceOf = (repo: Repo, undoRefs: readonly SnapshotRef[]): NumberedRef[] => numberedRefs(undoRefs, repo.snapshotPrefix, readOwnSnapshots(repo.undoDir));

/**
 * The snapshots a capture over `undoRefs` would follow (LiveCapture's
 * `snapshots` and `latest`), before any capture: what a restore plans on
 * while its capture runs.
 */
export const snapshotSequence = (repo: Repo, undoRefs: readonly SnapshotRef[]): Pick<LiveCapture, "latest" | "snapshots"> => followed(sequenceOf(repo, undoRefs));

/** A capture of `state`, written as `tree`, over the sequence of snapshot refs it follows. */
function liveCapture(state: StateTree, tree: ObjectId, sequence: NumberedRef[]): LiveCapture {
  const snaps = followed(sequence);
  const capture: LiveCapture = {
    state,
    tree,
    sequence,
    get snapshots() {
      return snaps.snapshots;
    },
  };
  if (snaps.latest) capture.latest = snaps.latest;
  return capture;
}

/** The snapshots of a sequence: the newest own one decoded now, all of them when first asked for. */
function followed(sequence: readonly NumberedRef[]): Pick<LiveCapture, "latest" | "snapshots"> {
  let all: SnapshotEntry[] | undefined;
  const own = ownOnly(sequence);
  const newest = own[own.length - 1];
  const snaps = {
    get snapshots() {
      return (all ??= sequence.map(decodeSnapshot));
    },
  };
  return newest ? Object.assign(snaps, { latest: decodeSnapshot(newest) }) : snaps;
}

/**
 * Steps 2 to 4 of the spec's Recording: read everything and write the state
 * tree. `lockHeld`: the caller holds capture.lock, which lets the capture use
 * and keep the worktree index of core/git-data/index/kept.ts (no other capture can be
 * touching it); a capture without the lock (a preview) takes a fresh copy.
 */
export function captureLive(repo: Repo, opts: CaptureOptions = {}): Promise<LiveCapture> {
  return phase("capture", () => captureState(repo, opts));
}

export interface CaptureOptions {
  lockHeld?: boolean;
  /** Asked as soon as the index and the files are read: false throws CaptureTorn (RecordOptions.intact). */
  intact?: () => boolean | Promise<boolean>;
  /** The snapshot refs, listed already by the caller (readRefState). */
  undoRefs?: Promise<SnapshotRef[]>;
}

async function captureState(repo: Repo, opts: CaptureOptions = {}): Promise<LiveCapture> {
  await useFreshConfig(repo);
  return withScratch(repo, async (scratch) => {
    // The refs and the index are independent: read them at the same time.
    const indexing = repo.bare ? undefined : captureIndex(repo, scratch, { worktree: repo.config.worktree, lockHeld: opts.lockHeld ?? false });
    indexing?.catch(() => {}); // awaited in buildCapture
    const scan = await readRefState(repo, opts.undoRefs).catch(async (e) => {
      await indexing?.catch(() => undefined); // no Git left running on the scratch directory
      throw e;
    });
    const parts = indexing?.then(async (index): Promise<IndexParts> => {
      if (opts.intact && !(await opts.intact())) throw new CaptureTorn();
      const p: IndexParts = { index: index.index };
      if (index.unmerged) p.indexUnmerged = index.unmerged;
      if (index.worktree) p.worktree = index.worktree;
      return p;
    });
    const capture = await buildCapture(repo, scratch, scan, parts ?? Promise.resolve({}));
    const index = await indexing; // settled: buildCapture awaited it
    if (index?.fromKept) capture.fromKept = true;
    if (index?.leftOut?.length) capture.leftOut = index.leftOut;
    if (index?.configDigest !== undefined) capture.configDigest = index.configDigest;
    return capture;
  });
}

/**
 * Every capture works from a configuration read for it: the one openRepo read,
 * when no capture has used it yet, else read again now. So a long-lived Repo
 * (the worker, watch) never records with an old configuration, and the kept
 * index and the committer cache, keyed by its digest, never outlive a change.
 */
async function useFreshConfig(repo: Repo): Promise<void> {
  if (!repo.configFresh) await rereadConfig(repo);
  repo.configFresh = false;
}

/** The index and working-tree parts of a state tree. */
export type IndexParts = Pick<StateTree, "index" | "indexUnmerged" | "worktree">;

/**
 * The state after a restore: refs, HEAD, stash and markers read afresh, with
 * the index and working-tree parts the restore itself wrote (known by
 * construction, so the files need not be read again).
 */
export function captureWith(repo: Repo, parts: IndexParts, target: ObjectId, configDigest?: string, refs?: Promise<RefState>): Promise<LiveCapture> {
  return phase("capture after restore", () => captureRefsWith(repo, parts, target, configDigest, refs));
}

/** `refs`: the ref storage read already, once nothing that the restore still did could change it. */
async function captureRefsWith(repo: Repo, parts: IndexParts, target: ObjectId, configDigest?: string, refs?: Promise<RefState>): Promise<LiveCapture> {
  const capture = await withScratch(repo, async (scratch) => buildCapture(repo, scratch, await (refs ?? readRefState(repo)), Promise.resolve(parts), [target]));
  if (configDigest !== undefined) capture.configDigest = configDigest;
  return capture;
}

/** The state tree: the refs' parts are written while the index parts may still be on their way. */
async function buildCapture(repo: Repo, scratch: string, scan: RefState, indexParts: Promise<IndexParts>, existingTrees: readonly ObjectId[] = []): Promise<LiveCapture> {
  const head = scan.head;
  const state: StateTree = {
    head,
    refs: scan.refs,
    stash: scan.stash,
    state: scan.markers,
  };
  // Read with the refs (core/git-data/refs/store.ts), not after the files: a Git command that
  // moves HEAD meanwhile must not lend its message to a state from before it.
  const reflog = scan.headReflog;
  const blobs = stateBlobs(state);
  const sequence = sequenceOf(repo, scan.undoRefs);
  // Our own newest: a fetched snapshot may hold a higher number without being the one we last wrote.
  const newestTree = ownOnly(sequence).at(-1)?.tree;
  const kept = keptBlobs(repo);
  const stored = new Set(kept && kept.tree === newestTree ? kept.blobs : []);
  // With trees the state may well be (a restore's target), its blobs are written
  // only once the state is known not to be one of them; else at once, beside the files.
  const writing = () => {
    const w = writeBlobs(repo, scratch, blobs, stored);
    w.catch(() => {}); // awaited below
    return w;
  };
  let written = existingTrees.length ? null : writing();
  const keeping = keepTree(repo, scratch, state.refs, newestTree);
  keeping.catch(() => {}); // awaited below
  const parts = await indexParts.catch(async (e) => {
    await Promise.all([written?.catch(() => undefined), keeping.catch(() => undefined)]);
    throw e;
  });
  if (parts.index !== undefined) state.index = parts.index;
  if (parts.indexUnmerged) state.indexUnmerged = parts.indexUnmerged;
  if (parts.worktree !== undefined) state.worktree = parts.worktree;
  const keepPart = await keeping.catch(async (e) => {
    await written?.catch(() => undefined);
    throw e;
  });
  if (keepPart.keep !== undefined) state.keep = keepPart.keep;
  // Nothing changed since the newest snapshot (or the restore wrote its target): that tree, no Git.
  let assembled = knownStateTree(repo, state, blobs, [...(newestTree ? [newestTree] : []), ...existingTrees]);
  if (assembled) await written?.catch(() => undefined);
  else {
    const ids = await (written ??= writing());
    if (state.indexUnmerged) ids.push(...(await writeBlobs(repo, scratch, [state.indexUnmerged])));
    assembled = await assembleStateTree(repo, state, ids);
  }
  const { tree, entries } = assembled;
  if (kept?.tree !== tree) keepBlobsOf(repo, tree, entries);
  keepPart.remember(tree);
  const capture = liveCapture(state, tree, sequence);
  if (reflog !== undefined) capture.reflog = reflog;
  return capture;
}

/**
 * The state tree of `state` from the ids of its blobs, in the order the tree
 * lists them (HEAD, refs, then stash, state and index-unmerged when present);
 * writes index-blobs (setting state.indexBlobs) and the tree itself.
 */
export async function assembleStateTree(repo: Repo, state: StateTree, blobIds: readonly ObjectId[]): Promise<{ tree: ObjectId; entries: TreeEntry[] }> {
  if (state.indexUnmerged) state.indexBlobs = await writeTree(repo, indexBlobEntries(state.indexUnmerged));
  const entries = stateTreeEntries(state, blobIds);
  return { tree: await writeTree(repo, entries), entries };
}

/** The index-blobs tree's entries: each blob the conflicts name, under its own id. */
const indexBlobEntries = (unmerged: Uint8Array): TreeEntry[] => unmergedBlobIds(decodeUnmerged(unmerged)).map((oid) => ({ mode: MODE.file, type: "blob", oid, name: oid }));

/** The state tree's entries, from its blobs' ids in the order assembleStateTree takes them (state.indexBlobs set when it has conflicts). */
function stateTreeEntries(state: StateTree, blobIds: readonly ObjectId[]): TreeEntry[] {
  const ids = [...blobIds];
  const entries: TreeEntry[] = [];
  const blob = (name: string) => entries.push({ mode: MODE.file, type: "blob", oid: ids.shift()!, name });
  const subtree = (name: string, oid: ObjectId) => entries.push({ mode: MODE.tree, type: "tree", oid, name });
  blob("HEAD");
  blob("refs");
  if (state.stash.length) blob("stash");
  if (state.state.length) blob("state");
  if (state.index !== undefined) subtree("index", state.index);
  if (state.indexUnmerged) {
    blob("index-unmerged");
    subtree("index-blobs", state.indexBlobs!);
  }
  if (state.worktree !== undefined) subtree("worktree", state.worktree);
  if (state.keep !== undefined) subtree(KEEP_ENTRY, state.keep);
  return entries;
}

/**
 * The state tree worked out without Git, when it is one of `existing` (so it
 * and every object in it are in the repository: its id commits to them all);
 * null otherwise, and the caller writes it. Sets state.indexBlobs then.
 */
function knownStateTree(repo: Repo, state: StateTree, blobs: readonly (string | Uint8Array)[], existing: readonly ObjectId[]): { tree: ObjectId; entries: TreeEntry[] } | null {
  const contents = state.indexUnmerged ? [...blobs, state.indexUnmerged] : blobs;
  const ids = contents.map((c) => blobId(typeof c === "string" ? encodeBytes(c) : c, repo.objectFormat));
  const indexBlobs = state.indexUnmerged ? treeId(indexBlobEntries(state.indexUnmerged), repo.objectFormat) : undefined;
  const entries = stateTreeEntries(indexBlobs ? { ...state, indexBlobs } : state, ids);
  const tree = treeId(entries, repo.objectFormat);
  if (!existing.includes(tree)) return null;
  if (indexBlobs) state.indexBlobs = indexBlobs;
  return { tree, entries };
}

/** The state tree's blobs in the order assembleStateTree takes their ids: HEAD, refs, then stash and state when there are any. */
const stateBlobs = (state: StateTree): (string | Uint8Array)[] => [
  encodeHead(state.head),
  encodeRefs(state.refs),
  ...(state.stash.length ? [encodeStash(state.stash)] : []),
  ...(state.state.length ? [encodeState(state.state)] : []),
];

/**
 * Write a whole state tree (blobs and tree) that no capture read: the targets
 * core/compose.ts builds from parts of others.
 */
export async function writeStateTree(repo: Repo, scratch: string, state: StateTree): Promise<ObjectId> {
  const blobs = stateBlobs(state);
  if (state.indexUnmerged) blobs.push(state.indexUnmerged);
  const ids = await writeBlobs(repo, scratch, blobs);
  return (await assembleStateTree(repo, state, ids)).tree;
}

/** A capture another Git command ran into (RecordOptions.intact): it may mix two states, so it was not recorded. */
export class CaptureTorn extends Error {
  constructor() {
    super("a Git command wrote files while the state was read");
  }
}

/** Whether the capture is the same state as the latest snapshot. */
export function unchanged(capture: LiveCapture): SnapshotEntry | undefined {
  const latest = capture.latest;
  return latest && latest.tree === capture.tree ? latest : undefined;
}

function keptBlobs(repo: Repo): { tree: ObjectId; blobs: ObjectId[] } | null {
  const known = readJsonFile(undoFile(repo.undoDir, "stateBlobs")) as { tree: ObjectId; blobs: ObjectId[] } | null;
  return typeof known?.tree === "string" && Array.isArray(known.blobs) ? known : null;
}

function keepBlobsOf(repo: Repo, tree: ObjectId, entries: readonly TreeEntry[]): void {
  const blobs = entries.filter((e) => e.type === "blob" && e.name !== "index-unmerged").map((e) => e.oid);
  try {
    replaceFile(undoFile(repo.undoDir, "stateBlobs"), JSON.stringify({ tree, blobs }));
  } catch {
    /* the next recording writes its blobs again */
  }
}
