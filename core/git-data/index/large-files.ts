// Untracked files too large to record (undo.maxNewFileSize): found before
// `git add -A` runs, so that it never hashes them, both for a fresh copy of
// the index and for the kept index (core/git-data/index/kept.ts).
import { compareBytes } from "../../format/index.ts";
import { decodeBytes, encodeBytes } from "../../bytes.ts";
import type { RealIndex } from "./file.ts";
import type { Repo } from "../../repo.ts";
import { lstatOrNull } from "../../stat.ts";
import type { WorktreeRecord } from "./command-output.ts";

/** An untracked file left out of the worktree tree for its size (undo.maxNewFileSize, docs/format.md). */
export interface LeftOutFile {
  /** Relative to the top of the working tree (decodeBytes form). */
  path: string;
  /** Bytes, as lstat gives them (a symbolic link's blob is its target). */
  size: number;
}

/** The size of the file or symbolic link at `path` when it is larger than `limit`, else null (smaller, gone, a folder). */
export function sizeOver(workTree: string, path: Uint8Array, limit: number): number | null {
  if (limit <= 0) return null;
  const st = lstatOrNull(Buffer.concat([Buffer.from(`${workTree}/`), path]));
  return st && (st.isFile() || st.isSymbolicLink()) && st.size > limit ? st.size : null;
}

/** NUL-ended pathspecs for --pathspec-from-file: `:(<magic>,literal)` before each path, so no name is taken as a pattern. */
export function magicPathspecs(magic: "" | "exclude,", paths: readonly Uint8Array[]): Buffer {
  const prefix = Buffer.from(`:(${magic}literal)`);
  return Buffer.concat(paths.flatMap((p) => [prefix, p, new Uint8Array([0])]));
}

/**
 * The files larger than undo.maxNewFileSize that `git ls-files --others
 * --exclude-standard` lists for the index in `env` (untracked, not ignored),
 * only under `dirs` when given; sorted by path. They are found before add -A
 * runs, so that it never hashes them.
 */
export async function largeUntracked(repo: Repo, env: Record<string, string>, opts: { dirs?: readonly Uint8Array[]; settings?: string[]; signal?: AbortSignal } = {}): Promise<LeftOutFile[]> {
  const limit = repo.config.maxNewFileSize;
  if (limit <= 0 || !repo.workTree || opts.dirs?.length === 0) return [];
  const args = [...(opts.settings ?? []), "ls-files", "-z", "--others", "--exclude-standard"];
  // ls-files takes no --pathspec-from-file; past a few folders the whole listing holds them all.
  if (opts.dirs && opts.dirs.length <= MAX_PATHSPECS) args.push("--", ...opts.dirs.map((d) => `:(literal)${decodeBytes(d)}`));
  const listed = await repo.git.run(args, { env, ...(opts.signal ? { signal: opts.signal } : {}) });
  const found: LeftOutFile[] = [];
  const out = listed.stdout;
  for (let at = 0; at < out.length; ) {
    const end = out.indexOf(0, at);
    const path = out.subarray(at, end < 0 ? out.length : end);
    at = end < 0 ? out.length : end + 1;
    const size = sizeOver(repo.workTree, path, limit);
    if (size !== null) found.push({ path: decodeBytes(path), size });
  }
  return found;
}

/** Past this many paths, Git's pathspec matching costs more than a whole add -A. */
export const MAX_PATHSPECS = 200;

/**
 * The untracked files among what status showed that are larger than
 * undo.maxNewFileSize and have no entry in the real index: files it named,
 * and those in the new folders it named (one ls-files for them, when there
 * are any). Null when the kept index cannot stand in for a fresh copy: it
 * holds an earlier, smaller version of such a file, which a fresh copy would
 * leave out, or the real index does not parse.
 */
export async function largeInKept(
  repo: Repo,
  settings: string[],
  env: Record<string, string>,
  signal: AbortSignal,
  records: readonly WorktreeRecord[],
  real: RealIndex,
): Promise<LeftOutFile[] | null> {
  const limit = repo.config.maxNewFileSize;
  const candidates: { file: LeftOutFile; inKept: boolean }[] = [];
  for (const r of records) {
    if (r.dir) continue;
    const size = sizeOver(repo.workTree!, r.path, limit);
    if (size !== null) candidates.push({ file: { path: decodeBytes(r.path), size }, inKept: !r.untracked });
  }
  const dirs = records.filter((r) => r.dir).map((r) => r.path);
  if (dirs.length) {
    // Past MAX_PATHSPECS folders the listing is the whole tree's: files status named may come again.
    const named = new Set(candidates.map((c) => c.file.path));
    for (const file of await largeUntracked(repo, env, { dirs, settings, signal })) if (!named.has(file.path)) candidates.push({ file, inKept: false });
  }
  if (!candidates.length) return [];
  const indexed = real.has(candidates.map((c) => encodeBytes(c.file.path)));
  if (indexed === null) return null;
  const leftOut: LeftOutFile[] = [];
  for (const [i, c] of candidates.entries()) {
    if (indexed[i]) continue; // the real index has it: recorded whatever its size
    if (c.inKept) return null;
    leftOut.push(c.file);
  }
  return leftOut.sort((a, b) => compareBytes(a.path, b.path));
}
