// The index and the working tree as trees: the spec's method on a private
// copy of the real index, or the index kept since the last recording when it
// gives the same trees (core/git-data/index/kept.ts). The refs, HEAD, reflog and stash
// come from core/git-data/refs/index.ts.
import { lstatSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { decodeUnmerged, pathKey, type ObjectId } from "../../format/index.ts";
import { encodeBytes } from "../../bytes.ts";
import { GitError, text } from "../../git.ts";
import { captureFromKept, keepAfterFullCapture } from "./kept.ts";
import { largeUntracked, magicPathspecs, type LeftOutFile } from "./large-files.ts";
import { attributesDigest } from "./rule-digests.ts";
import { copyIndexFile, RealIndex } from "./file.ts";
import { gitBool, hashLengthOf, type Repo } from "../../repo.ts";
import { undoFile } from "../../undo-files.ts";
import { seams } from "../../seams.ts";

export interface IndexCapture {
  index: ObjectId;
  /** Raw unmerged entries, when there are conflicts. */
  unmerged?: Uint8Array;
  worktree?: ObjectId;
  /** With a worktree tree: the untracked files left out of it for their size (undo.maxNewFileSize), sorted by path. */
  leftOut?: LeftOutFile[];
  /** Whether the worktree tree came from the index kept since the last recording (core/git-data/index/kept.ts). */
  fromKept?: boolean;
  /** The configuration's digest, read while the trees were written. */
  configDigest?: string;
}

export interface CaptureIndexOptions {
  /** Write the working tree's tree too (undo.worktree). */
  worktree: boolean;
  /** The caller holds capture.lock: the kept index may be used and kept. */
  lockHeld: boolean;
}

/**
 * Write the index and the working tree as trees, on a private copy of the index
 * so the real one is never written (a Git command may hold index.lock). With
 * `lockHeld` (the caller holds capture.lock, so no other capture runs), the
 * worktree tree comes from the index the last recording kept when that gives
 * the same tree, and this capture's index is kept in turn; otherwise, and
 * when it cannot, from a fresh copy as the spec describes.
 */
export async function captureIndex(repo: Repo, scratchDir: string, { worktree: withWorktree, lockHeld }: CaptureIndexOptions): Promise<IndexCapture> {
  const real = RealIndex.open(repo.indexFile, hashLengthOf(repo));
  // The kept index follows add -A; tracked files alone are one add -u on a fresh copy.
  const useKept = withWorktree && real !== null && lockHeld && recordsUntracked(repo) && keptFilesUsable(repo);
  const attributes = useKept ? attributesDigest(repo) : "";
  const config = Promise.resolve(useKept ? repo.configDigest : ""); // read for this capture (core/capture.ts useFreshConfig)
  if (useKept && real) {
    const kept = await captureFromKept(repo, real, attributes, config, scratchDir);
    if (kept) {
      if (seams.verifyKept) await verifyKept(repo, scratchDir, real, kept);
      return { ...kept, fromKept: true, configDigest: await config };
    }
  }
  const fresh = await captureFresh(repo, scratchDir, real, { withWorktree, keepable: useKept });
  const { result, worktreeIndex } = fresh;
  if (useKept) result.configDigest = await config;
  if (useKept && real && worktreeIndex !== undefined && result.worktree !== undefined && !result.unmerged) {
    const trees = { index: result.index, worktree: result.worktree };
    keepAfterFullCapture(repo, real, attributes, result.configDigest!, worktreeIndex, trees, fresh.addOutput);
  }
  return result;
}

export type { LeftOutFile };

/** The kept index and its description are plain files or absent: a folder left at their names (core/undo-files.ts) turns the kept index off. */
function keptFilesUsable(repo: Repo): boolean {
  return (["keptIndex", "keptIndexInfo"] as const).every((name) => {
    try {
      return lstatSync(undoFile(repo.undoDir, name)).isFile();
    } catch {
      return true;
    }
  });
}

/**
 * The untracked files a recording would leave out now for their size
 * (undo.maxNewFileSize), found as the spec's method finds them, writing nothing.
 */
export async function filesLeftOut(repo: Repo): Promise<LeftOutFile[]> {
  return repo.bare || !repo.config.worktree || !recordsUntracked(repo) ? [] : largeUntracked(repo, {});
}

/**
 * Whether the worktree tree holds untracked files: not with
 * status.showUntrackedFiles=no, the setting of a repository whose work tree
 * is full of files that are none of its business (a dotfiles repository
 * whose work tree is $HOME: its secrets must not go into snapshots). Then
 * tracked files alone are recorded, as `git status` shows them alone.
 */
export function recordsUntracked(repo: Repo): boolean {
  const v = repo.settings.get("status.showuntrackedfiles");
  if (v === undefined) return true;
  const word = (v ?? "").trim().toLowerCase();
  return !(word === "no" || gitBool(v) === false);
}

/** The spec's method itself: both trees from a fresh copy of the real index. */
async function captureFresh(
  repo: Repo,
  scratchDir: string,
  real: RealIndex | null,
  opts: { withWorktree: boolean; keepable?: boolean },
): Promise<{ result: IndexCapture; worktreeIndex?: string; addOutput: Uint8Array | null }> {
  const { withWorktree, keepable = false } = opts;
  const copy = real ? real.copyTo(join(scratchDir, "index")) : join(scratchDir, "index");
  const env = { GIT_INDEX_FILE: copy };
  const git = repo.git;
  // Without conflicts the worktree tree is written from a copy of the copy while
  // the index tree is written from the first (add -A after write-tree on one
  // copy gives the same tree); with conflicts it is discarded and redone below
  // in the spec's order, after the unmerged paths are removed. The files too
  // large to record are listed first, against the real index's entries.
  const worktreeCopy = withWorktree ? copyIndexFile(copy, join(scratchDir, "index-worktree")) : undefined;
  const untracked = recordsUntracked(repo);
  const leftOut = worktreeCopy === undefined ? undefined : untracked ? largeUntracked(repo, { GIT_INDEX_FILE: worktreeCopy }) : Promise.resolve([]);
  const early = worktreeCopy === undefined ? undefined : leftOut!.then((files) => worktreeTree(repo, worktreeCopy, files, { untracked }));
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
  const worktree = early && !unmerged ? await early : await worktreeTree(repo, copy, await leftOut!, { untracked });
  result.worktree = worktree.tree;
  result.leftOut = await leftOut!;
  return { result, worktreeIndex: early && !unmerged ? join(scratchDir, "index-worktree") : copy, addOutput: worktree.addOutput };
}

/**
 * Test-only (core/seams.ts verifyKept, set by the test suite): check every use of the kept
 * index against the spec's method on a fresh copy, and fail loudly on a difference.
 */
async function verifyKept(repo: Repo, scratchDir: string, real: RealIndex, kept: { index: ObjectId; worktree: ObjectId; leftOut: LeftOutFile[] }): Promise<void> {
  const dir = join(scratchDir, "verify");
  mkdirSync(dir, { recursive: true });
  const { result } = await captureFresh(repo, dir, real, { withWorktree: true });
  const names = (files: readonly LeftOutFile[] | undefined) => (files ?? []).map((f) => f.path).join("\0");
  if (result.index !== kept.index || result.worktree !== kept.worktree || result.unmerged || names(result.leftOut) !== names(kept.leftOut)) {
    throw new Error(
      `kept index disagrees with a fresh copy: index ${kept.index} vs ${result.index}, worktree ${kept.worktree} vs ${result.worktree}, ` +
        `left out [${names(kept.leftOut)}] vs [${names(result.leftOut)}]`,
    );
  }
}

/**
 * `git add -A` then write-tree on a private index: the working tree as a tree,
 * without the files in `leftOut`; with `untracked` false, `git add -u`:
 * tracked files only (recordsUntracked).
 */
async function worktreeTree(repo: Repo, indexFile: string, leftOut: readonly LeftOutFile[], { untracked }: { untracked: boolean }): Promise<{ tree: ObjectId; addOutput: Uint8Array | null }> {
  const env = { GIT_INDEX_FILE: indexFile };
  // Exit 1 is a file that could not be read; --ignore-errors records the rest.
  // --verbose lists what add changed: the paths core/git-data/index/kept.ts must watch.
  const add = ["add", untracked ? "-A" : "-u", "--verbose", "--ignore-errors"];
  // Exclude pathspecs alone still mean the whole tree: add -A leaves those files unread.
  const added = leftOut.length
    ? await repo.git.run([...add, "--pathspec-from-file=-", "--pathspec-file-nul"], { env, okExit: [1], input: magicPathspecs("exclude,", leftOut.map((f) => encodeBytes(f.path))) })
    : await repo.git.run(add, { env, okExit: [1] });
  const tree = await repo.git.line(["write-tree"], { env });
  // A file that could not be read is missing from this index: not one to keep (null).
  return { tree, addOutput: added.exitCode === 0 ? added.stdout : null };
}
