// Reading the live state of a repository: refs, HEAD, the stash, in-progress
// markers, HEAD's newest reflog entry, and the index and working tree as trees.
// Plain files (HEAD, markers, reflogs, loose symbolic refs) are read directly
// with the files ref storage, through Git with reftable (which has no such
// files); everything else comes from one for-each-ref and the tree writers.
import { closeSync, copyFileSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import {
  compareBytes,
  pathKey,
  decodeBytes,
  decodeUnmerged,
  encodeBytes,
  OPERATION_MARKERS,
  type HeadState,
  type ObjectId,
  type OperationMarker,
  type RefLine,
  type StashEntry,
} from "./format.ts";
import { GitError, text, type GitResult } from "./git.ts";
import { attributesDigest, captureFromKept, currentConfigDigest, keepAfterFullCapture, largeUntracked, magicPathspecs, RealIndex, type LeftOutFile } from "./kept-index.ts";
import { hashLengthOf, type Repo } from "./repo.ts";

/** A ref under refs/undo/ as for-each-ref listed it. */
export interface SnapshotRef {
  ref: string;
  commit: ObjectId;
  tree: ObjectId;
  date: number;
  message: string;
}

export interface RefScan {
  /** Every ref outside refs/undo/, sorted by name in byte order. */
  refs: RefLine[];
  /** Every ref under refs/undo/ (all worktrees), in for-each-ref order. */
  undoRefs: SnapshotRef[];
}

const FIELD = "%00";
const REF_FORMAT = [
  "%(refname)",
  "%(objectname)",
  "%(objecttype)",
  "%(symref)",
  "%(*objectname)",
  "%(*objecttype)",
  "%(tree)",
  "%(committerdate:unix)",
  "%(contents)",
].join(FIELD) + "%00%01%00";
const RECORD_END = "\0\x01\0\n";

/** Per-worktree ref hierarchies: in a linked worktree they live in its own git dir. */
const PER_WORKTREE = ["refs/bisect", "refs/worktree", "refs/rewritten"];

/**
 * One for-each-ref for every ref, its type and peeled object, plus the tree,
 * date and message of each snapshot commit. Symbolic refs are completed from
 * their files: for-each-ref reports the end of a chain and skips dangling ones.
 */
export async function scanRefs(repo: Repo): Promise<RefScan> {
  if (repo.refStorage !== "files") return scanThroughGit(repo);
  const out = await repo.git.text(["for-each-ref", `--format=${REF_FORMAT}`]);
  return completeScan(repo, parseScan(out));
}

/** What the files ref storage keeps as plain files, as Git reported it with the refs (reftable). */
interface ReadThroughGit {
  head: HeadState;
  /** HEAD's newest reflog entry, `<commit> <message>`. */
  headReflog: string | undefined;
  stash: StashEntry[];
  /** Markers that are refs in this storage (CHERRY_PICK_HEAD, REVERT_HEAD), not files. */
  refMarkers: OperationMarker[];
}

/** Pseudo-refs among the markers: files with the files storage, refs with reftable. */
const REF_MARKERS = ["CHERRY_PICK_HEAD", "REVERT_HEAD"] as const satisfies readonly OperationMarker[];

// readHead, readHeadReflog and readStash answer from the scan they follow.
const readByRefs = new WeakMap<readonly RefLine[], ReadThroughGit>();
const latestRead = new WeakMap<Repo, ReadThroughGit>();

/**
 * A ref storage without files (reftable): the refs, HEAD, HEAD's newest reflog
 * entry and the stash reflog in one wave of Git processes, then the immediate
 * target of each symbolic ref (for-each-ref gives the end of a chain). A
 * dangling symbolic ref is invisible there: no command lists it.
 */
async function scanThroughGit(repo: Repo): Promise<RefScan> {
  const git = repo.git;
  // -z: one NUL after each entry; %gs is the reflog message as the files hold it.
  const reflog = (ref: string, more: string[] = []) =>
    git.run(["log", "-g", "-z", "--no-show-signature", "--format=%H%x09%gs", ...more, ref, "--"], { okExit: [128] });
  const [listing, symbolic, detached, headLog, stashLog] = await Promise.all([
    git.text(["for-each-ref", `--format=${REF_FORMAT}`]),
    git.run(["symbolic-ref", "-q", "--no-recurse", "HEAD"], { okExit: [1] }),
    // HEAD's commit when detached, and which marker refs exist: one batch.
    git.text(["cat-file", "--batch-check=%(objectname)"], { input: ["HEAD", ...REF_MARKERS].map((n) => `${n}\n`).join("") }),
    reflog("HEAD", ["-1"]),
    reflog("refs/stash"),
  ]);
  const scan = parseScan(listing);
  const { refs } = scan;
  const deepTags = refs.filter((r) => r.peeledType === "tag");
  const symrefs = refs.filter((r) => r.symrefTarget);
  await Promise.all([
    deepTags.length > 0 ? peelFully(repo, deepTags) : undefined,
    ...symrefs.map(async (r) => {
      r.symrefTarget = await git.line(["symbolic-ref", "--no-recurse", r.name]);
    }),
  ]);
  refs.sort((a, b) => compareBytes(a.name, b.name));
  const [headCommit = "", ...markerIds] = detached.split("\n");
  const head: HeadState =
    symbolic.exitCode === 0 ? { kind: "symbolic", target: text(symbolic.stdout).trim() } : { kind: "detached", commit: headCommit };
  const entries = (r: GitResult) => (r.exitCode === 0 ? text(r.stdout).split("\0").filter(Boolean).map(parseLogEntry) : []);
  const [newest] = entries(headLog);
  const unborn = head.kind === "symbolic" && !refs.some((r) => r.name === head.target && r.object);
  const read: ReadThroughGit = {
    head,
    headReflog: newest && !unborn ? `${newest.commit} ${newest.message}` : undefined,
    stash: refs.some((r) => r.name === "refs/stash") ? entries(stashLog) : [],
    refMarkers: REF_MARKERS.filter((_, i) => markerIds[i] && !markerIds[i]!.endsWith(" missing")),
  };
  readByRefs.set(refs, read);
  latestRead.set(repo, read);
  return scan;
}

/** One `%H<TAB>%gs` entry of a reflog walk. */
function parseLogEntry(entry: string): StashEntry {
  const tab = entry.indexOf("\t");
  return tab < 0 ? { commit: entry, message: "" } : { commit: entry.slice(0, tab), message: entry.slice(tab + 1) };
}

/** What scanRefs read through Git, for storages without files; null with the files storage. */
function readThroughGit(repo: Repo, refs?: readonly RefLine[]): ReadThroughGit | null {
  if (repo.refStorage === "files") return null;
  const read = (refs && readByRefs.get(refs)) ?? latestRead.get(repo);
  // Without files there is no synchronous way to read HEAD: the refs are scanned first.
  if (!read) throw new Error(`internal error: the ${repo.refStorage} ref storage is read by scanRefs first`);
  return read;
}

/** Only the refs under `prefix` (a snapshot sequence, or all of refs/undo/). */
export async function scanUndoRefs(repo: Repo, prefix = "refs/undo/"): Promise<SnapshotRef[]> {
  const out = await repo.git.text(["for-each-ref", `--format=${REF_FORMAT}`, prefix]);
  return parseScan(out).undoRefs;
}

function parseScan(out: string): RefScan {
  const refs: RefLine[] = [];
  const undoRefs: SnapshotRef[] = [];
  for (const rec of out.split(RECORD_END)) {
    if (!rec) continue;
    const [name = "", object = "", type = "", symref = "", peeled = "", peeledType = "", tree = "", date = "", message = ""] =
      rec.split("\0");
    if (name.startsWith("refs/undo/")) {
      // A symbolic ref there is no snapshot: deleting it (undo.limit, gc) would delete its target.
      if (type === "commit" && !symref) undoRefs.push({ ref: name, commit: object, tree, date: Number(date), message });
      continue;
    }
    const line: RefLine = {
      name,
      object,
      type,
      symrefTarget: symref,
      peeledObject: type === "tag" ? peeled : "",
      peeledType: type === "tag" ? peeledType : "",
    };
    refs.push(line);
  }
  return { refs, undoRefs };
}

async function completeScan(repo: Repo, scan: RefScan): Promise<RefScan> {
  const { refs } = scan;
  const deepTags = refs.filter((r) => r.peeledType === "tag");
  if (deepTags.length > 0) await peelFully(repo, deepTags);
  const symrefs = looseSymrefs(repo);
  if (symrefs.size > 0) {
    const byName = new Map(refs.map((r) => [r.name, r]));
    for (const [name, target] of symrefs) {
      const known = byName.get(name);
      if (known) known.symrefTarget = target;
      else refs.push({ name, object: "", type: "", symrefTarget: target, peeledObject: "", peeledType: "" });
    }
  }
  refs.sort((a, b) => compareBytes(a.name, b.name));
  return scan;
}

/** A tag of a tag: follow the chain to the end, as `<ref>^{}` does. */
async function peelFully(repo: Repo, lines: RefLine[]): Promise<void> {
  const input = lines.map((l) => `${l.object}^{}\n`).join("");
  const out = await repo.git.text(["cat-file", "--batch-check"], { input });
  out
    .split("\n")
    .slice(0, lines.length)
    .forEach((row, i) => {
      const [oid = "", type = ""] = row.split(" ");
      const line = lines[i]!;
      if (type && type !== "missing") {
        line.peeledObject = oid;
        line.peeledType = type;
      }
    });
}

/** Loose symbolic refs and their immediate targets (symbolic refs are never packed). */
export function looseSymrefs(repo: Repo): Map<string, string> {
  const found = new Map<string, string>();
  const linked = repo.worktreeName !== null;
  const walk = (base: string, rel: string, skip: (rel: string) => boolean) => {
    let entries;
    try {
      entries = readdirSync(join(base, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const child = `${rel}/${e.name}`;
      if (skip(child)) continue;
      if (e.isDirectory()) walk(base, child, skip);
      else if (e.isFile() && !e.name.endsWith(".lock")) {
        let content: string;
        try {
          content = decodeBytes(readFileSync(join(base, child)));
        } catch {
          continue;
        }
        if (content.startsWith("ref: ")) found.set(child, content.slice(5).trim());
      }
    }
  };
  walk(repo.commonDir, "refs", (rel) => rel === "refs/undo" || (linked && PER_WORKTREE.includes(rel)));
  if (linked) for (const dir of PER_WORKTREE) walk(repo.gitDir, dir, () => false);
  return found;
}

export function readHead(repo: Repo, scan?: RefScan): HeadState {
  const viaGit = readThroughGit(repo, scan?.refs);
  if (viaGit) return viaGit.head;
  const content = decodeBytes(readFileSync(join(repo.gitDir, "HEAD"))).trim();
  if (content.startsWith("ref: ")) return { kind: "symbolic", target: content.slice(5).trim() };
  return { kind: "detached", commit: content };
}

/** The operation markers now, for a caller that changed them since the last scan (reftable keeps some as refs). */
export async function currentMarkers(repo: Repo): Promise<OperationMarker[]> {
  if (repo.refStorage !== "files") await scanRefs(repo);
  return readMarkers(repo);
}

export function readMarkers(repo: Repo): OperationMarker[] {
  const refMarkers = repo.refStorage === "files" ? [] : (latestRead.get(repo)?.refMarkers ?? []);
  return OPERATION_MARKERS.filter((m) => existsSync(join(repo.gitDir, m)) || refMarkers.includes(m));
}

/** The last line of a file that `accept` takes, read from its end (reflogs grow for years). */
function lastLine(path: string, accept: (line: string) => boolean = () => true): string | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    let chunk = 4096;
    for (;;) {
      const start = Math.max(0, size - chunk);
      const buf = Buffer.alloc(size - start);
      readSync(fd, buf, 0, buf.length, start);
      const lines = decodeBytes(buf).split("\n");
      if (start > 0) lines.shift(); // may be cut
      for (let i = lines.length - 1; i >= 0; i--) if (lines[i] && accept(lines[i]!)) return lines[i]!;
      if (start === 0) return null;
      chunk *= 4;
    }
  } finally {
    closeSync(fd);
  }
}

/** `<new-oid>` and message of a reflog line `<old> <new> <ident> <time> <tz>\t<message>`. */
function parseReflogLine(line: string): { commit: ObjectId; message: string } | null {
  const tab = line.indexOf("\t");
  const head = tab < 0 ? line : line.slice(0, tab);
  const [, commit] = head.split(" ");
  if (!commit) return null;
  return { commit, message: tab < 0 ? "" : line.slice(tab + 1) };
}

/**
 * HEAD's newest reflog entry as `<commit> <message>` (what `git reflog -1
 * --format='%H %gs' HEAD` prints), or undefined when there is none or HEAD is unborn.
 */
export function readHeadReflog(repo: Repo, head: HeadState, refs: readonly RefLine[]): string | undefined {
  const viaGit = readThroughGit(repo, refs);
  if (viaGit) return viaGit.headReflog;
  if (head.kind === "symbolic" && !refs.some((r) => r.name === head.target && r.object)) return undefined;
  // Git's reflog walk skips entries with a null new id (a deletion of HEAD's branch).
  const line = lastLine(join(repo.gitDir, "logs", "HEAD"), (l) => !/^\S+ 0+ /.test(l));
  const entry = line ? parseReflogLine(line) : null;
  return entry ? `${entry.commit} ${entry.message}` : undefined;
}

/** The stash, newest first, from refs/stash's reflog (what `git stash list` shows). */
export function readStash(repo: Repo, refs: readonly RefLine[]): StashEntry[] {
  const viaGit = readThroughGit(repo, refs);
  if (viaGit) return viaGit.stash;
  if (!refs.some((r) => r.name === "refs/stash")) return [];
  let content: string;
  try {
    content = decodeBytes(readFileSync(join(repo.commonDir, "logs", "refs", "stash")));
  } catch {
    return [];
  }
  const entries: StashEntry[] = [];
  for (const line of content.split("\n")) {
    const e = line ? parseReflogLine(line) : null;
    if (e) entries.push(e);
  }
  return entries.reverse();
}

export interface IndexCapture {
  index: ObjectId;
  /** Raw unmerged entries, when there are conflicts. */
  unmerged?: Uint8Array;
  worktree?: ObjectId;
  /** With a worktree tree: the untracked files left out of it for their size (undo.maxNewFileSize), sorted by path. */
  leftOut?: LeftOutFile[];
  /** Whether the worktree tree came from the index kept since the last recording (core/kept-index.ts). */
  fromKept?: boolean;
  /** The configuration's digest, read while the trees were written. */
  configDigest?: string;
}

/**
 * Write the index and the working tree as trees, on a private copy of the index
 * so the real one is never written (a Git command may hold index.lock). With
 * `lockHeld` (the caller holds capture.lock, so no other capture runs), the
 * worktree tree comes from the index the last recording kept when that gives
 * the same tree, and this capture's index is kept in turn; otherwise, and
 * when it cannot, from a fresh copy as the spec describes.
 */
export async function captureIndex(repo: Repo, scratchDir: string, withWorktree: boolean, lockHeld: boolean): Promise<IndexCapture> {
  const real = RealIndex.open(repo.indexFile, hashLengthOf(repo));
  const useKept = withWorktree && real !== null && lockHeld;
  const attributes = useKept ? attributesDigest(repo) : "";
  const config = useKept ? currentConfigDigest(repo) : Promise.resolve("");
  config.catch(() => {}); // awaited below
  if (useKept && real) {
    const kept = await captureFromKept(repo, real, attributes, config, scratchDir);
    if (kept) {
      if (process.env.GIT_UNDO_VERIFY_KEPT) await verifyKept(repo, scratchDir, real, kept);
      return { ...kept, fromKept: true, configDigest: await config };
    }
  }
  const fresh = await captureFresh(repo, scratchDir, real, withWorktree, useKept);
  const { result, worktreeIndex } = fresh;
  if (useKept) result.configDigest = await config;
  if (useKept && real && worktreeIndex !== undefined && result.worktree !== undefined && !result.unmerged) {
    const trees = { index: result.index, worktree: result.worktree };
    keepAfterFullCapture(repo, real, attributes, result.configDigest!, worktreeIndex, trees, fresh.addOutput);
  }
  return result;
}

export type { LeftOutFile };

/**
 * The untracked files a recording would leave out now for their size
 * (undo.maxNewFileSize), found as the spec's method finds them, writing nothing.
 */
export async function filesLeftOut(repo: Repo): Promise<LeftOutFile[]> {
  return repo.bare || !repo.config.worktree ? [] : largeUntracked(repo, {});
}

/** The spec's method itself: both trees from a fresh copy of the real index. */
async function captureFresh(
  repo: Repo,
  scratchDir: string,
  real: RealIndex | null,
  withWorktree: boolean,
  keepable = false,
): Promise<{ result: IndexCapture; worktreeIndex?: string; addOutput: Uint8Array | null }> {
  const copy = real ? real.copyTo(join(scratchDir, "index")) : join(scratchDir, "index");
  const env = { GIT_INDEX_FILE: copy };
  const git = repo.git;
  // Without conflicts the worktree tree is written from a copy of the copy while
  // the index tree is written from the first (add -A after write-tree on one
  // copy gives the same tree); with conflicts it is discarded and redone below
  // in the spec's order, after the unmerged paths are removed. The files too
  // large to record are listed first, against the real index's entries.
  const worktreeCopy = withWorktree ? copyIndex(copy, join(scratchDir, "index-worktree")) : undefined;
  const leftOut = worktreeCopy === undefined ? undefined : largeUntracked(repo, { GIT_INDEX_FILE: worktreeCopy });
  const early = worktreeCopy === undefined ? undefined : leftOut!.then((files) => worktreeTree(repo, worktreeCopy, files));
  early?.catch(() => {});
  if (keepable) void real?.entries; // the digest a kept index needs, worked out while Git runs
  const first = await git.run(["write-tree"], { env, okExit: [128] });
  let index: ObjectId;
  let unmerged: Uint8Array | undefined;
  if (first.exitCode === 0) {
    index = text(first.stdout).trim();
  } else {
    await early?.catch(() => undefined); // no Git left running on the scratch directory
    if (!/unmerged/i.test(first.stderr)) throw new GitError(["write-tree"], first.exitCode, first.stderr);
    unmerged = (await git.run(["ls-files", "-z", "--unmerged"], { env })).stdout;
    const paths = new Set<string>();
    const parts: Uint8Array[] = [];
    for (const e of decodeUnmerged(unmerged)) {
      const key = pathKey(e.path);
      if (paths.has(key)) continue;
      paths.add(key);
      parts.push(e.path, new Uint8Array([0]));
    }
    await git.run(["update-index", "-z", "--force-remove", "--stdin"], { env, input: Buffer.concat(parts) });
    index = await git.line(["write-tree"], { env });
  }
  const result: IndexCapture = { index };
  if (unmerged) result.unmerged = unmerged;
  if (!withWorktree) return { result, addOutput: null };
  const worktree = early && !unmerged ? await early : await worktreeTree(repo, copy, await leftOut!);
  result.worktree = worktree.tree;
  result.leftOut = await leftOut!;
  return { result, worktreeIndex: early && !unmerged ? join(scratchDir, "index-worktree") : copy, addOutput: worktree.addOutput };
}

/**
 * GIT_UNDO_VERIFY_KEPT (set by the test suite): check every use of the kept
 * index against the spec's method on a fresh copy, and fail loudly on a difference.
 */
async function verifyKept(repo: Repo, scratchDir: string, real: RealIndex, kept: { index: ObjectId; worktree: ObjectId; leftOut: LeftOutFile[] }): Promise<void> {
  const dir = join(scratchDir, "verify");
  mkdirSync(dir, { recursive: true });
  const { result } = await captureFresh(repo, dir, real, true);
  const names = (files: readonly LeftOutFile[] | undefined) => (files ?? []).map((f) => f.path).join("\0");
  if (result.index !== kept.index || result.worktree !== kept.worktree || result.unmerged || names(result.leftOut) !== names(kept.leftOut)) {
    throw new Error(
      `kept index disagrees with a fresh copy: index ${kept.index} vs ${result.index}, worktree ${kept.worktree} vs ${result.worktree}, ` +
        `left out [${names(kept.leftOut)}] vs [${names(result.leftOut)}]`,
    );
  }
}

/**
 * Copy an index file keeping its timestamp (whole seconds, never later): a
 * newer copy would defeat Git's racy-entry check and miss a same-size edit.
 * The time is read before the copy, so an index replaced meanwhile can only
 * make the copy look older, never newer.
 */
export function copyIndex(from: string, copy: string): string {
  if (existsSync(from)) {
    const seconds = Math.floor(statSync(from).mtimeMs / 1000);
    copyFileSync(from, copy);
    utimesSync(copy, seconds, seconds);
  }
  return copy;
}

/** `git add -A` then write-tree on a private index: the working tree as a tree, without the files in `leftOut`. */
async function worktreeTree(repo: Repo, indexFile: string, leftOut: readonly LeftOutFile[]): Promise<{ tree: ObjectId; addOutput: Uint8Array | null }> {
  const env = { GIT_INDEX_FILE: indexFile };
  // Exit 1 is a file that could not be read; --ignore-errors records the rest.
  // --verbose lists what add changed: the paths core/kept-index.ts must watch.
  const add = ["add", "-A", "--verbose", "--ignore-errors"];
  // Exclude pathspecs alone still mean the whole tree: add -A leaves those files unread.
  const added = leftOut.length
    ? await repo.git.run([...add, "--pathspec-from-file=-", "--pathspec-file-nul"], { env, okExit: [1], input: magicPathspecs("exclude,", leftOut.map((f) => encodeBytes(f.path))) })
    : await repo.git.run(add, { env, okExit: [1] });
  const tree = await repo.git.line(["write-tree"], { env });
  // A file that could not be read is missing from this index: not one to keep (null).
  return { tree, addOutput: added.exitCode === 0 ? added.stdout : null };
}
