// Work that no ref and no snapshot holds any more, found in the object
// database: dropped stash entries, lost commits (amended, reset away, on a
// deleted branch), and file contents that were staged, or recorded by a
// snapshot deleted since, and never committed. Git says which objects nothing
// reaches (one `git fsck --unreachable --no-reflogs`, beside one listing of
// every reflog); what they are is read in batches (cat-file), never one
// process per object.
import { lstatSync, statSync } from "node:fs";
import { join } from "node:path";
import { KEEP_MESSAGE, OPERATION_MARKERS, PLACEHOLDER_EMAIL, PLACEHOLDER_NAME, type ObjectId } from "../format/index.ts";
import { decodeBytes } from "../bytes.ts";
import { objectSizes, readObjects } from "../git-data/objects.ts";
import { hashLengthOf, type Repo } from "../repo.ts";
import { phase } from "../trace.ts";
import { parseRawTree, type RawTreeEntry } from "../format/validate.ts";
import { diffTreePairs } from "../git-data/tree-diff.ts";
import { branchOf, headBranchAt, readReflogs, reflogNames, type ReflogLine } from "./reflogs.ts";
import type { LostCommit, LostCommitObject, LostFile, LostItem, LostStash, LostWork } from "./lost-items.ts";

export type { LostCommit, LostCommitObject, LostFile, LostItem, LostStash, LostWork } from "./lost-items.ts";

/** The most of a content read to show its first lines. */
const PREVIEW_BYTES = 64 * 1024;
const PREVIEW_LINES = 3;

/**
 * Every lost stash entry, lost commit (the newest of each run) and lost file
 * content, newest first. What the current stash list holds is never lost.
 */
export function findLost(repo: Repo): Promise<LostWork> {
  return phase("find lost work", () => lostWork(repo));
}

async function lostWork(repo: Repo): Promise<LostWork> {
  const [unreachable, reflogs] = await Promise.all([unreachableObjects(repo), readReflogs(repo)]);
  const walkable = [...unreachable].filter(([, type]) => type === "commit" || type === "tree").map(([id]) => id);
  const blobIds = [...unreachable].filter(([, type]) => type === "blob").map(([id]) => id);
  const [objects, sizes] = await Promise.all([readObjects(repo, walkable), objectSizes(repo, blobIds)]);

  const hashBytes = hashLengthOf(repo);
  const commits = new Map<ObjectId, LostCommitObject>();
  const trees = new Map<ObjectId, RawTreeEntry[]>();
  for (const o of objects) {
    if (!o) continue;
    if (o.type === "commit") commits.set(o.oid, parseCommit(o.oid, o.content));
    else if (o.type === "tree") {
      try {
        trees.set(o.oid, parseRawTree(o.content, hashBytes));
      } catch {
        /* a damaged tree names nothing */
      }
    }
  }
  const blobs = new Map<ObjectId, number>();
  blobIds.forEach((id, i) => {
    const s = sizes[i];
    if (s) blobs.set(id, s.size);
  });

  // The stash list (refs/stash's reflog) is the user's, not lost: its entries and all they hold are set aside.
  const stashList = new Set(reflogs.filter((l) => l.ref === "refs/stash").map((l) => l.commit));
  const byCommit = new Map<ObjectId, ReflogLine[]>();
  for (const l of reflogs) {
    if (l.ref === "refs/stash") continue;
    const list = byCommit.get(l.commit) ?? [];
    list.push(l);
    byCommit.set(l.commit, list);
  }

  // Stash entries: their index and untracked commits are parts of them, not commits of their own.
  const stashes: LostStash[] = [];
  const stashParts = new Map<ObjectId, ObjectId>();
  const held = new Set<ObjectId>(); // commits the stash list holds
  for (const c of commits.values()) {
    const shape = stashShape(c, commits);
    if (!shape) continue;
    stashParts.set(shape.index, c.id);
    if (shape.untracked) stashParts.set(shape.untracked, c.id);
    if (stashList.has(c.id)) {
      held.add(c.id);
      continue;
    }
    const subject = firstLine(c.message);
    stashes.push({
      kind: "stash",
      id: c.id,
      date: c.date,
      reflogs: reflogNames(byCommit.get(c.id)),
      message: subject,
      branch: shape.branch,
      base: c.parents[0]!,
      index: shape.index,
      untracked: shape.untracked,
      files: [],
    });
  }
  // What the stash list holds reaches back through the commits it was made on.
  const heldCommits = ancestorsWithin(commits, [...held], (id) => !commits.get(id)?.ownCommit);

  // Lost commits: the user's (not git-undo's, not a stash entry or part of one, not the stash list's).
  const lost = new Set<ObjectId>();
  const stashIds = new Set(stashes.map((s) => s.id));
  for (const c of commits.values()) {
    if (c.ownCommit || stashParts.has(c.id) || heldCommits.has(c.id) || stashIds.has(c.id)) continue;
    lost.add(c.id);
  }
  const isParent = new Set<ObjectId>();
  for (const id of lost) for (const p of commits.get(id)!.parents) if (lost.has(p)) isParent.add(p);
  const stashBranch = new Map<ObjectId, string>();
  for (const s of stashes) if (s.branch) stashBranch.set(s.base, s.branch);
  const headBranches = headBranchAt(reflogs);
  const lostCommits: LostCommit[] = [];
  for (const id of lost) {
    if (isParent.has(id)) continue;
    const c = commits.get(id)!;
    const lines = byCommit.get(id);
    const fromReflog = lines ? branchOf(lines, headBranches) : null;
    const fromMessage = fromReflog ? null : (stashBranch.get(id) ?? branchInMessage(c.message));
    lostCommits.push({
      kind: "commit",
      id,
      date: c.date,
      reflogs: reflogNames(lines),
      subject: firstLine(c.message),
      branch: fromReflog ?? fromMessage,
      branchFrom: fromReflog ? "reflog" : fromMessage ? "message" : null,
      earlier: ancestorsWithin(commits, c.parents, (p) => lost.has(p)).size,
      base: baseOf(commits, lost, c),
    });
  }

  // File contents: those no lost commit or stash entry holds (theirs come back with them),
  // named by the trees that are left: a deleted snapshot's, or one no commit holds.
  const covered = new Set<ObjectId>();
  const treeOfCommit = new Set<ObjectId>();
  for (const c of commits.values()) {
    treeOfCommit.add(c.tree);
    if (!c.ownCommit) blobsUnder(trees, c.tree, covered);
  }
  const named = nameBlobs(repo, trees, commits, treeOfCommit);
  const objectsDir = join(repo.commonDir, "objects");
  const files: LostFile[] = [];
  for (const [id, size] of blobs) {
    if (covered.has(id) || named.internal.has(id)) continue;
    const name = named.paths.get(id);
    const file: LostFile = { kind: "file", id, date: looseTime(objectsDir, id) ?? name?.date ?? null, reflogs: [], path: name?.path ?? null, size, lines: [], binary: false };
    if (name?.unrecorded) file.unrecorded = true;
    files.push(file);
  }
  const kept = await withoutOwnRecords(repo, await withoutCurrentFiles(repo, files));

  const items: LostItem[] = [...stashes, ...lostCommits, ...kept].sort(newestFirst);
  return { items, commits, stashParts, blobs, abbrev: abbreviation([...unreachable.keys()]) };
}

const KIND_ORDER: Record<LostItem["kind"], number> = { stash: 0, commit: 1, file: 2 };

function newestFirst(a: LostItem, b: LostItem): number {
  if (a.date !== b.date) return a.date === null ? 1 : b.date === null ? -1 : b.date - a.date;
  return KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** `git fsck`'s unreachable objects (reflogs not counted), by id with their type. */
async function unreachableObjects(repo: Repo): Promise<Map<ObjectId, string>> {
  // --connectivity-only: which objects are reachable is all we ask, not whether each is intact.
  // fsck exits non-zero when it meets damage; what it listed is still right.
  const r = await repo.git.run(["fsck", "--connectivity-only", "--unreachable", "--no-reflogs", "--no-progress"], { okExit: Array.from({ length: 63 }, (_, i) => i + 1) });
  const found = new Map<ObjectId, string>();
  for (const line of new TextDecoder().decode(r.stdout).split("\n")) {
    const m = /^unreachable (commit|tree|blob|tag) ([0-9a-f]{40,64})$/.exec(line);
    if (m) found.set(m[2]!, m[1]!);
  }
  return found;
}

/** The branch a commit message names as its own: `Merge branch 'x' into y` was made on y. */
function branchInMessage(message: string): string | null {
  const m = /^Merge (?:remote-tracking )?branch '[^']+' into (\S+)/.exec(message);
  return m ? m[1]! : null;
}

function firstLine(message: string): string {
  return message.split("\n", 1)[0]!.trim();
}

/** A raw commit's tree, parents, committer date and message; whether git-undo wrote it. */
function parseCommit(id: ObjectId, content: Uint8Array): LostCommitObject {
  const text = decodeBytes(content);
  const end = text.indexOf("\n\n");
  const headers = (end < 0 ? text : text.slice(0, end)).split("\n");
  const message = end < 0 ? "" : text.slice(end + 2);
  let tree = "";
  const parents: ObjectId[] = [];
  let date: number | null = null;
  let author = "";
  for (const h of headers) {
    if (h.startsWith("tree ")) tree = h.slice(5);
    else if (h.startsWith("parent ")) parents.push(h.slice(7));
    else if (h.startsWith("author ")) author = h.slice(7);
    else if (h.startsWith("committer ")) {
      const m = / ([0-9]+) [-+][0-9]{4}$/.exec(h);
      date = m ? Number(m[1]) : null;
    }
  }
  // git-undo's own commits: snapshots and keep commits carry its placeholder author.
  const ownCommit = author.startsWith(`${PLACEHOLDER_NAME} <${PLACEHOLDER_EMAIL}> `) && (message === KEEP_MESSAGE || /^Undo-Format: /m.test(message));
  return { id, tree, parents, date, message, ownCommit };
}

/**
 * Whether a commit has a stash entry's shape: a merge whose message is `WIP on
 * <branch>: ...` or `On <branch>: ...`, whose second parent is the index
 * commit (`index on ...`) and third, when there is one, the untracked files'.
 */
function stashShape(c: LostCommitObject, commits: ReadonlyMap<ObjectId, LostCommitObject>): { branch: string | null; index: ObjectId; untracked: ObjectId | null } | null {
  if (c.parents.length < 2 || c.parents.length > 3) return null;
  const m = /^(?:WIP on|On) ([^:\n]*): /.exec(c.message);
  if (!m) return null;
  const index = commits.get(c.parents[1]!);
  if (!index || !index.message.startsWith("index on ")) return null;
  const untracked = c.parents[2] ?? null;
  if (untracked !== null && !commits.get(untracked)?.message.startsWith("untracked files on ")) return null;
  return { branch: m[1] === "(no branch)" ? null : m[1]!, index: index.id, untracked };
}

/** The commits reachable from `starts` through parents, staying where `within` says (the starts themselves included). */
function ancestorsWithin(commits: ReadonlyMap<ObjectId, LostCommitObject>, starts: readonly ObjectId[], within: (id: ObjectId) => boolean): Set<ObjectId> {
  const seen = new Set<ObjectId>();
  const todo = starts.filter(within);
  while (todo.length) {
    const id = todo.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const p of commits.get(id)?.parents ?? []) if (within(p) && !seen.has(p)) todo.push(p);
  }
  return seen;
}

/** The first ancestor along first parents that is not lost; null when the lost run reaches a root. */
function baseOf(commits: ReadonlyMap<ObjectId, LostCommitObject>, lost: ReadonlySet<ObjectId>, tip: LostCommitObject): ObjectId | null {
  const seen = new Set<ObjectId>();
  let c: LostCommitObject | undefined = tip;
  while (c && !seen.has(c.id)) {
    seen.add(c.id);
    const p = c.parents[0];
    if (p === undefined) return null;
    if (!lost.has(p)) return p;
    c = commits.get(p);
  }
  return null;
}

/** Every unreachable blob under an unreachable tree, added to `into` (reachable subtrees hold only reachable blobs). */
function blobsUnder(trees: ReadonlyMap<ObjectId, RawTreeEntry[]>, root: ObjectId, into: Set<ObjectId>, seen = new Set<ObjectId>()): void {
  const todo = [root];
  while (todo.length) {
    const id = todo.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const e of trees.get(id) ?? []) {
      if (e.mode === "40000") todo.push(e.oid);
      else if (e.mode !== "160000") into.add(e.oid);
    }
  }
}

/** The top-level entries of a git-undo state tree that hold files; the others are its own records. */
const STATE_FILES = new Set(["index", "worktree"]);

/** Whether a tree is one of git-undo's state trees (a snapshot's, or a capture no snapshot took). */
const isStateTree = (entries: readonly RawTreeEntry[]): boolean => entries.some((e) => e.name === "HEAD" && e.mode !== "40000") && entries.some((e) => e.name === "refs");

/**
 * A path for the unreachable blobs that trees still name: from the trees no
 * other unreachable tree holds (a deleted snapshot's state tree, by its
 * `index/` and `worktree/`; a tree written and never committed), newest
 * first. Also the blobs that are git-undo's own records (HEAD, refs, stash,
 * state of a state tree), which are no one's work.
 */
function nameBlobs(
  repo: Repo,
  trees: ReadonlyMap<ObjectId, RawTreeEntry[]>,
  commits: ReadonlyMap<ObjectId, LostCommitObject>,
  treeOfCommit: ReadonlySet<ObjectId>,
): { paths: Map<ObjectId, { path: string; date: number | null; unrecorded: boolean }>; internal: Set<ObjectId> } {
  const inner = new Set<ObjectId>();
  for (const entries of trees.values()) for (const e of entries) if (e.mode === "40000") inner.add(e.oid);
  const objectsDir = join(repo.commonDir, "objects");
  const roots: { tree: ObjectId; date: number | null; committed: boolean }[] = [];
  for (const c of commits.values()) if (c.ownCommit && trees.has(c.tree)) roots.push({ tree: c.tree, date: c.date, committed: true });
  for (const id of trees.keys()) if (!inner.has(id) && !treeOfCommit.has(id)) roots.push({ tree: id, date: looseTime(objectsDir, id), committed: false });
  roots.sort((a, b) => (b.date ?? -1) - (a.date ?? -1));

  const paths = new Map<ObjectId, { path: string; date: number | null; unrecorded: boolean }>();
  const internal = new Set<ObjectId>();
  for (const root of roots) {
    const top = trees.get(root.tree)!;
    const state = isStateTree(top);
    // A state tree no snapshot commit holds: a capture thrown away (torn, or by an earlier version).
    const unrecorded = state && !root.committed;
    const todo: { tree: ObjectId; prefix: string }[] = [];
    for (const e of top) {
      if (state && !STATE_FILES.has(e.name)) {
        if (e.mode !== "40000") internal.add(e.oid);
        continue;
      }
      if (state) todo.push({ tree: e.oid, prefix: "" });
      else if (e.mode === "40000") todo.push({ tree: e.oid, prefix: `${e.name}/` });
      else if (e.mode !== "160000" && !paths.has(e.oid)) paths.set(e.oid, { path: displayPath(e.name), date: root.date, unrecorded });
    }
    const seen = new Set<ObjectId>();
    while (todo.length) {
      const { tree, prefix } = todo.pop()!;
      if (seen.has(tree)) continue;
      seen.add(tree);
      for (const e of trees.get(tree) ?? []) {
        if (e.mode === "40000") todo.push({ tree: e.oid, prefix: `${prefix}${e.name}/` });
        else if (e.mode !== "160000" && !paths.has(e.oid)) paths.set(e.oid, { path: displayPath(prefix + e.name), date: root.date, unrecorded });
      }
    }
  }
  return { paths, internal };
}

/** The largest content looked at as a possible record of git-undo's (a refs table of many refs). */
const RECORD_MAX = 1 << 20;
const OID = "(?:[0-9a-f]{40}|[0-9a-f]{64})";
const TYPE = "(?:commit|tag|tree|blob)";
/** git-undo's own records, as a capture writes them (docs/format.md): HEAD, the refs table, the stash list, the operation markers. */
const OWN_RECORDS = [
  new RegExp(`^(?:ref: refs/[^\\n]+|${OID})\\n$`),
  new RegExp(`^(?:(?:refs/[^\\t\\n]+|[A-Z_]+)\\t(?:${OID})?\\t(?:${TYPE})?(?:\\t[^\\t\\n]*(?:\\t(?:${OID})?(?:\\t(?:${TYPE})?)?)?)?\\n)+$`),
  new RegExp(`^(?:${OID}\\t[^\\n]*\\n)+$`),
  new RegExp(`^(?:(?:${OPERATION_MARKERS.map((m) => m.replace(/[.*+?^$()|[\]\\]/g, "\\$&")).join("|")})\\n)+$`),
];

/**
 * The contents without git-undo's own records that no tree names (a capture
 * thrown away before its state tree was written): HEAD, refs tables, stash
 * lists and markers are no one's work. One cat-file for the unnamed ones.
 */
async function withoutOwnRecords(repo: Repo, files: readonly LostFile[]): Promise<LostFile[]> {
  const unnamed = files.filter((f) => f.path === null && f.size <= RECORD_MAX);
  if (!unnamed.length) return [...files];
  const contents = await readObjects(repo, unnamed.map((f) => f.id));
  const own = new Set<ObjectId>();
  unnamed.forEach((f, i) => {
    const content = contents[i]?.content;
    if (!content || content.includes(0)) return;
    const text = Buffer.from(content).toString("latin1");
    if (OWN_RECORDS.some((re) => re.test(text))) own.add(f.id);
  });
  return files.filter((f) => !own.has(f.id));
}

/** A tree entry's path (bytes read as latin1) as a core string. */
const displayPath = (latin1: string): string => decodeBytes(Buffer.from(latin1, "latin1"));

/** When a loose object was written (its file's mtime), in unix seconds; null when it is packed. */
function looseTime(objectsDir: string, id: ObjectId): number | null {
  try {
    return Math.floor(statSync(join(objectsDir, id.slice(0, 2), id.slice(2))).mtimeMs / 1000);
  } catch {
    return null;
  }
}

/**
 * The contents without those the file at their path holds right now: a preview
 * (`show -p`, the picker) writes the current files as objects that nothing
 * keeps, and those are not lost. One `hash-object` for all of them.
 */
async function withoutCurrentFiles(repo: Repo, files: readonly LostFile[]): Promise<LostFile[]> {
  if (repo.workTree === null) return [...files];
  const top = repo.workTree;
  const onDisk = files.filter((f) => {
    if (f.path === null) return false;
    try {
      return lstatSync(join(top, f.path)).isFile();
    } catch {
      return false;
    }
  });
  if (!onDisk.length) return [...files];
  const paths = onDisk.map((f) => join(top, f.path!));
  const r = await repo.git.run(["hash-object", "--stdin-paths"], { input: `${paths.join("\n")}\n`, okExit: [128] });
  const ids = new TextDecoder().decode(r.stdout).split("\n");
  const current = new Set(onDisk.filter((f, i) => ids[i] === f.id));
  return files.filter((f) => !current.has(f));
}

/** The shortest prefix length, at least 7, that tells these ids apart. */
function abbreviation(ids: readonly ObjectId[]): number {
  const sorted = [...ids].sort();
  let len = 7;
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    let k = 0;
    while (k < a.length && a[k] === b[k]) k++;
    len = Math.max(len, k + 1);
  }
  return len;
}

/** The first lines of the file contents given (read in one cat-file), filled in; binary contents are marked. */
export async function lostPreviews(repo: Repo, files: readonly LostFile[]): Promise<void> {
  const small = files.filter((f) => f.size <= PREVIEW_BYTES);
  const objects = await readObjects(repo, small.map((f) => f.id));
  small.forEach((f, i) => {
    const content = objects[i]?.content;
    if (!content) return;
    f.binary = content.subarray(0, 8000).includes(0);
    if (!f.binary) f.lines = decodeBytes(content).split("\n").slice(0, PREVIEW_LINES).map((l) => l.replace(/\r$/, ""));
    while (f.lines.length && f.lines[f.lines.length - 1] === "") f.lines.pop();
  });
  for (const f of files) if (f.size > PREVIEW_BYTES) f.lines = [];
}

/**
 * The commits whose changes are what a lost item holds, each with the parent
 * it is compared with (diffTreePairs keys each by the commit): a stash
 * entry's working tree and index against the commit it was made on, and its
 * untracked files; a lost commit against the last commit before it that is
 * not lost (a whole run of lost commits at once).
 */
export function itemPairs(item: LostStash | LostCommit): [ObjectId, ObjectId | null][] {
  if (item.kind === "commit") return [[item.id, item.base]];
  const pairs: [ObjectId, ObjectId | null][] = [
    [item.id, item.base],
    [item.index, item.base],
  ];
  if (item.untracked) pairs.push([item.untracked, null]);
  return pairs;
}

/** The files each stash entry holds (changed in its working tree or index, or untracked), filled in with one diff-tree. */
export async function stashFiles(repo: Repo, stashes: readonly LostStash[]): Promise<void> {
  const changes = await diffTreePairs(repo, stashes.flatMap(itemPairs));
  for (const s of stashes) {
    const names = new Set<string>();
    for (const [c] of itemPairs(s)) for (const change of changes.get(c) ?? []) names.add(decodeBytes(change.path));
    s.files = [...names].sort();
  }
}
