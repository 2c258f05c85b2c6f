// Where a text occurs (`git undo grep`, the picker's `?` filter): in the
// files of snapshots and of the stash entries they hold, and in lost work.
import { itemPairs, type LostCommit, type LostItem, type LostStash, type LostWork } from "./lost.ts";
import { grepBlobs, grepTree, type GrepOptions } from "./git-grep.ts";
import { diffPairs, FILE_TREES } from "./state-diff.ts";
import { blobAfter, diffTreePairs, EMPTY_TREE } from "../git-data/tree-diff.ts";
import { readBlobs, readObjects } from "../git-data/objects.ts";
import { decodeStash, type ObjectId, type Snapshot } from "../format/index.ts";
import { decodeBytes } from "../bytes.ts";
import { hashLengthOf, type Repo } from "../repo.ts";
import { checkStash, problemOf } from "../format/validate.ts";

export type { GrepOptions } from "./git-grep.ts";

export interface GrepMatch {
  /** The newest of the searched snapshots holding this content at this path (null: lost work, see `lost`). */
  snapshot: number | null;
  /** Every searched snapshot holding it, oldest first. */
  snapshots: number[];
  /** A stash entry's file: the entry's position in the newest of those snapshots' stash lists. */
  stash?: number;
  /** Lost work (`--lost`): the object `git undo rescue` takes, and what it is. */
  lost?: { id: ObjectId; kind: LostItem["kind"] };
  /** Where the file was: its path in the index, the working tree or the stash entry (null: a content no tree named). */
  path: string | null;
  line: number;
  text: string;
}

/** A file content a run of consecutive snapshots held at one path (index or working tree). */
interface Held {
  where: (typeof FILE_TREES)[number];
  path: string;
  /** The path's bytes as latin1, to match Git's output exactly. */
  raw: string;
  blob: ObjectId;
  /** The oldest and newest snapshot of the run. */
  first: number;
  last: number;
}

/** Each snapshot's whole content on its own (grep with every holder), and the matching lines of each content. */
async function everyHolderRuns(repo: Repo, chosen: readonly Snapshot[], pattern: string, opts: GrepOptions): Promise<{ held: Held[]; lines: Lines }> {
  const empty = EMPTY_TREE[hashLengthOf(repo)]!;
  const pairs = chosen.map((s): [ObjectId, ObjectId] => [empty, s.tree]);
  const changes = await diffPairs(repo, pairs, FILE_TREES);
  const decoder = new TextDecoder();
  const held: Held[] = [];
  for (const s of chosen) {
    for (const c of changes.get(`${empty} ${s.tree}`) ?? []) {
      if (c.blob === null) continue;
      const raw = Buffer.from(c.path).toString("latin1");
      held.push({ where: c.where, path: decoder.decode(c.path), raw, blob: c.blob, first: s.number, last: s.number });
    }
  }
  const lines = await grepBlobs(repo, [...new Set(held.map((h) => h.blob))], pattern, opts);
  return { held, lines };
}

type Lines = Map<ObjectId, { line: number; text: string }[]>;

/**
 * The runs of (path, content) across `chosen` snapshots whose content matches
 * `pattern`, and the matching lines of each such content. The oldest snapshot
 * holds every file, so it is never listed: its index is searched as a tree
 * (`git grep <tree>:index`, threaded; one `ls-tree` beside it names the
 * blobs of the paths that match), its working tree is compared with its index (files
 * that are the same share the index's answer), and the later snapshots'
 * changes (one diff-tree for all) are searched by blob id, all side by side.
 */
async function matchingRuns(repo: Repo, chosen: readonly Snapshot[], pattern: string, opts: GrepOptions): Promise<{ held: Held[]; lines: Lines }> {
  const sorted = [...chosen].sort((a, b) => a.number - b.number);
  const oldest = sorted[0];
  if (!oldest) return { held: [], lines: new Map() };
  const pairs = sorted.slice(1).map((s, i): [ObjectId, ObjectId] => [sorted[i]!.tree, s.tree]);
  const [changes, searchedIndex, worktreeDiff, indexBlobs] = await Promise.all([
    diffPairs(repo, pairs, FILE_TREES),
    grepTree(repo, `${oldest.tree}:index`, pattern, opts).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e)))),
    subtreeDiff(repo, oldest.tree),
    blobsOf(repo, `${oldest.tree}:index`),
  ]);
  // A state tree without an index has nothing to search there; any other failure (a pattern Git refuses) is the answer.
  if (searchedIndex instanceof Error && indexBlobs.size) throw searchedIndex;
  const inIndex = searchedIndex instanceof Error ? new Map<string, { line: number; text: string }[]>() : searchedIndex;
  const decoder = new TextDecoder();
  type Open = Omit<Held, "last">;
  const open = new Map<string, Open>();
  // The oldest snapshot: the index's matching files, and the working tree where it differs from the index.
  const lines: Lines = new Map();
  for (const [raw, found] of inIndex) {
    const blob = indexBlobs.get(raw);
    if (!blob) continue;
    lines.set(blob, found);
    const path = decoder.decode(Buffer.from(raw, "latin1"));
    open.set(`index/${raw}`, { where: "index", path, raw, blob, first: oldest.number });
    if (!worktreeDiff.has(raw)) open.set(`worktree/${raw}`, { where: "worktree", path, raw, blob, first: oldest.number });
  }
  for (const [raw, blob] of worktreeDiff) {
    if (blob !== null) open.set(`worktree/${raw}`, { where: "worktree", path: decoder.decode(Buffer.from(raw, "latin1")), raw, blob, first: oldest.number });
  }
  const held: Held[] = [];
  for (const [i, s] of sorted.entries()) {
    if (i === 0) continue;
    const prev = sorted[i - 1]!;
    for (const c of changes.get(`${pairs[i - 1]![0]} ${pairs[i - 1]![1]}`) ?? []) {
      const raw = Buffer.from(c.path).toString("latin1");
      const key = `${c.where}/${raw}`;
      const was = open.get(key);
      if (was && was.blob === c.blob) continue;
      if (was) held.push({ ...was, last: prev.number });
      if (c.blob === null) open.delete(key);
      else open.set(key, { where: c.where, path: decoder.decode(c.path), raw, blob: c.blob, first: s.number });
    }
  }
  const last = sorted[sorted.length - 1]!;
  for (const v of open.values()) held.push({ ...v, last: last.number });
  // Every content not answered by the oldest index's search, by id.
  // (The oldest index's other files were searched too, and hold no match.)
  const searched = new Set(indexBlobs.values());
  const rest = [...new Set(held.map((h) => h.blob))].filter((b) => !lines.has(b) && !searched.has(b));
  for (const [blob, found] of await grepBlobs(repo, rest, pattern, opts)) lines.set(blob, found);
  return { held: held.filter((h) => lines.has(h.blob)), lines };
}

/** The oldest snapshot's working-tree files that differ from its index: path (latin1) -> blob, null where removed. */
async function subtreeDiff(repo: Repo, tree: ObjectId): Promise<Map<string, ObjectId | null>> {
  const out = new Map<string, ObjectId | null>();
  let r;
  try {
    r = await repo.git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", `${tree}:index`, `${tree}:worktree`]);
  } catch {
    return out; // a state tree without both entries: readers skip its files
  }
  const recs = Buffer.from(r.stdout).toString("latin1").split("\0");
  for (let i = 0; i + 1 < recs.length; i += 2) {
    out.set(recs[i + 1]!, blobAfter(recs[i]!.replace(/^:/, "").split(" ")));
  }
  return out;
}

/** Every blob of a tree by path (latin1): one ls-tree, run beside the search that says which paths matter. */
async function blobsOf(repo: Repo, treeish: string): Promise<Map<string, ObjectId>> {
  const out = new Map<string, ObjectId>();
  let r;
  try {
    r = await repo.git.run(["ls-tree", "-r", "-z", "--full-tree", treeish]);
  } catch {
    return out;
  }
  for (const rec of Buffer.from(r.stdout).toString("latin1").split("\0")) {
    const tab = rec.indexOf("\t");
    if (tab < 0) continue;
    const [, type, oid] = rec.slice(0, tab).split(" ");
    if (type === "blob" && oid) out.set(rec.slice(tab + 1), oid);
  }
  return out;
}

/**
 * Where `pattern` occurs in the files of `chosen` snapshots (index, working
 * tree, and the files of their stash entries), each distinct blob searched
 * once (one git grep over blob ids). With `everyHolder` each chosen snapshot
 * holding a match gets its line; else each content at a path is said once,
 * naming every snapshot holding it. Newest first.
 */
export async function grepSnapshots(repo: Repo, chosen: readonly Snapshot[], pattern: string, opts: GrepOptions = {}, everyHolder = false): Promise<GrepMatch[]> {
  const [{ held, lines }, stashed] = await Promise.all([
    everyHolder ? everyHolderRuns(repo, chosen, pattern, opts) : matchingRuns(repo, chosen, pattern, opts),
    grepStashEntries(repo, chosen, pattern, opts),
  ]);
  const numbers = chosen.map((s) => s.number).sort((a, b) => a - b);
  // Each content at a path once: the runs of the same blob at the same path (index or working tree) together.
  const groups = new Map<string, { path: string; blob: ObjectId; snapshots: Set<number> }>();
  for (const h of held) {
    const key = `${everyHolder ? h.last : ""}\0${h.raw}\0${h.blob}`;
    const g = groups.get(key) ?? { path: h.path, blob: h.blob, snapshots: new Set<number>() };
    for (const n of numbers) if (n >= h.first && n <= h.last) g.snapshots.add(n);
    groups.set(key, g);
  }
  const seen = new Set<string>();
  const out: GrepMatch[] = [];
  for (const g of groups.values()) {
    const snapshots = [...g.snapshots].sort((a, b) => a - b);
    const newest = snapshots[snapshots.length - 1]!;
    for (const m of lines.get(g.blob) ?? []) {
      const key = `${newest}\0${g.path}\0${m.line}\0${m.text}`;
      if (everyHolder && seen.has(key)) continue; // the same line in the index and the working tree
      seen.add(key);
      out.push({ snapshot: newest, snapshots, path: g.path, line: m.line, text: m.text });
    }
  }
  out.push(...stashed);
  return out.sort((a, b) => (b.snapshot ?? 0) - (a.snapshot ?? 0) || (a.stash ?? -1) - (b.stash ?? -1) || compareText(a.path ?? "", b.path ?? "") || a.line - b.line);
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The matching lines of the files of the stash entries the chosen snapshots
 * hold (what each entry changed in the working tree and the index, and its
 * untracked files), each entry once, naming the snapshots holding it. Three
 * Git processes: the stash lists, the entries' commits, their changes.
 */
async function grepStashEntries(repo: Repo, chosen: readonly Snapshot[], pattern: string, opts: GrepOptions): Promise<GrepMatch[]> {
  if (!chosen.length) return [];
  const hexLength = hashLengthOf(repo) * 2;
  const lists = await readBlobs(repo, chosen.map((s) => `${s.tree}:stash`));
  // Each entry, with the snapshots holding it and its place in the newest one's list.
  const entries = new Map<ObjectId, { snapshots: number[]; position: number; newest: number }>();
  chosen.forEach((s, i) => {
    const blob = lists[i];
    if (!blob || problemOf(() => checkStash(blob, hexLength))) return; // validated as every reader does
    decodeStash(blob).forEach((e, position) => {
      const found = entries.get(e.commit) ?? { snapshots: [], position, newest: -1 };
      found.snapshots.push(s.number);
      if (s.number > found.newest) Object.assign(found, { newest: s.number, position });
      entries.set(e.commit, found);
    });
  });
  if (!entries.size) return [];
  const commits = await readObjects(repo, [...entries.keys()]);
  const pairs: [ObjectId, ObjectId | null][] = [];
  const parts = new Map<ObjectId, ObjectId[]>(); // entry -> the commits whose changes it holds
  for (const c of commits) {
    if (!c || c.type !== "commit") continue;
    const parents = [...decodeBytes(c.content).split("\n\n", 1)[0]!.matchAll(/^parent ([0-9a-f]+)$/gm)].map((m) => m[1]!);
    const [base, index, untracked] = parents;
    if (base === undefined) continue;
    const mine: [ObjectId, ObjectId | null][] = [[c.oid, base]];
    if (index !== undefined) mine.push([index, base]);
    if (untracked !== undefined) mine.push([untracked, null]);
    pairs.push(...mine);
    parts.set(c.oid, mine.map(([commit]) => commit));
  }
  const changes = await diffTreePairs(repo, pairs);
  const files = new Map<ObjectId, { path: string; blob: ObjectId }[]>();
  const decoder = new TextDecoder();
  for (const [entry, commitsOf] of parts) {
    const held = new Map<string, { path: string; blob: ObjectId }>();
    for (const commit of commitsOf) {
      for (const c of changes.get(commit) ?? []) {
        const blob = blobAfter(c.meta);
        if (blob) held.set(`${Buffer.from(c.path).toString("latin1")}\0${blob}`, { path: decoder.decode(c.path), blob });
      }
    }
    files.set(entry, [...held.values()]);
  }
  const found = await grepBlobs(repo, [...new Set([...files.values()].flat().map((f) => f.blob))], pattern, opts);
  const out: GrepMatch[] = [];
  for (const [entry, list] of files) {
    const where = entries.get(entry)!;
    const snapshots = [...where.snapshots].sort((a, b) => a - b);
    for (const f of list) {
      for (const m of found.get(f.blob) ?? []) out.push({ snapshot: where.newest, snapshots, stash: where.position, path: f.path, line: m.line, text: m.text });
    }
  }
  return out;
}

/**
 * Where `pattern` occurs in lost work (core/find/lost.ts): the files of lost
 * stash entries, of lost commits (what a run of them changed), and the lost
 * file contents; each distinct blob searched once. Newest item first.
 */
export async function grepLost(repo: Repo, work: LostWork, pattern: string, opts: GrepOptions = {}): Promise<GrepMatch[]> {
  const held = await lostContents(repo, work);
  const found = await grepBlobs(repo, [...new Set(held.map((h) => h.blob))], pattern, opts);
  const out: GrepMatch[] = [];
  for (const h of held) {
    for (const m of found.get(h.blob) ?? []) out.push({ snapshot: null, snapshots: [], lost: { id: h.item.id, kind: h.item.kind }, path: h.path, line: m.line, text: m.text });
  }
  return out;
}

/** A file a lost item holds: its path (null where no tree named it) and content. */
interface LostContent {
  item: LostItem;
  path: string | null;
  blob: ObjectId;
}

/** The files every lost item holds, in the items' order (newest first); one diff-tree for all the stash entries and commits. */
async function lostContents(repo: Repo, work: LostWork): Promise<LostContent[]> {
  const withCommits = work.items.filter((i): i is LostStash | LostCommit => i.kind !== "file");
  const changes = await diffTreePairs(repo, withCommits.flatMap(itemPairs));
  const decoder = new TextDecoder();
  const out: LostContent[] = [];
  for (const item of work.items) {
    if (item.kind === "file") {
      out.push({ item, path: item.path, blob: item.id });
      continue;
    }
    const seen = new Set<string>();
    for (const [commit] of itemPairs(item)) {
      for (const c of changes.get(commit) ?? []) {
        const blob = blobAfter(c.meta);
        const key = `${Buffer.from(c.path).toString("latin1")}\0${blob}`;
        if (blob === null || seen.has(key)) continue;
        seen.add(key);
        out.push({ item, path: decoder.decode(c.path), blob });
      }
    }
  }
  return out;
}

/**
 * The numbers of the `chosen` snapshots whose recorded files (index or
 * working tree) contain `text`, ignoring case: the picker's `?` filter. The
 * same search as grepSnapshots: each distinct content searched once.
 */
export async function snapshotsHolding(repo: Repo, chosen: readonly Snapshot[], text: string): Promise<Set<number>> {
  const { held, lines } = await matchingRuns(repo, chosen, text, { fixedStrings: true, ignoreCase: true });
  const numbers = [...chosen].map((s) => s.number).sort((a, b) => a - b);
  const found = new Set<number>();
  for (const h of held) {
    if (!lines.has(h.blob)) continue;
    for (const n of numbers) if (n >= h.first && n <= h.last) found.add(n);
  }
  return found;
}
