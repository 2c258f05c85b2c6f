// The worktree index kept between recordings.
//
// The spec writes the worktree tree with `git add -A` and `git write-tree` on a
// fresh copy of the real index. That copy lacks every untracked file, so
// add -A inserts them all and write-tree rebuilds every directory tree they
// sit in, writing the whole index twice: on a large repository, most of a
// recording. The index the previous recording ended with already holds those
// files, with fresh stat data and a valid cache tree, so add -A and write-tree
// on it do only what changed since.
//
// It is reused only when `git add -A` on it must give the tree the fresh copy
// would. Where the two indexes agree, add -A treats a path the same way in
// both; they differ only at the paths the earlier add -A runs added, removed or
// rehashed, which their --verbose output lists. Reuse therefore needs:
//   - the real index in version 2 (so no intent-to-add or skip-worktree
//     entries), without conflicts or assume-unchanged entries, not split; with
//     the entries the kept index last followed (stat data aside: `git status`
//     rewrites it with fresh stat data), or with changes that the old and new
//     index trees show, which then join the listed paths and hold no gitlink,
//     .gitattributes or .gitmodules;
//   - the same configuration, and none of sparse checkout, a split index,
//     fsmonitor or case folding;
//   - each listed path still not ignored (an untracked file that became ignored
//     leaves the fresh copy's tree; a tracked file deleted and recreated under
//     an ignore rule comes back into it): git check-ignore, unless the ignore
//     rules that can apply to them (the .gitignore of each folder above them,
//     info/exclude, the user's excludes file) are, byte for byte, those under
//     which check-ignore last found every one of them not ignored; none of them inside a repository
//     nested since, none now a directory, and none a .gitattributes or
//     .gitmodules file or a gitlink;
//   - the attribute files outside the working tree unchanged, so that a file
//     hashed earlier would hash the same now.
// Anything else, or any failure, and the recording copies the real index as
// the spec says. What this cannot see: a .gitattributes that is itself ignored
// (add -A never reports it) changing between recordings, or a clean filter
// whose output changes; a file hashed earlier then keeps its old blob until
// the file itself changes. Before Git touches the kept index, it is moved into
// the capture's scratch folder and its description is deleted, so an
// interrupted recording leaves nothing that could be reused wrongly.
//
// `git status`, with an untracked cache of the kept index's own, makes the runs
// on it cheap without changing what add -A does: it names the paths where the
// working tree differs from the kept index, rereading only the folders whose
// time changed, and add -A then runs on those paths alone. The kept index is
// never a split index (core/git.ts): its shared part would sit in <gitdir>
// beside the real index's, where either could take the other's away. One made
// split by an earlier version is written whole at its first use, or, its
// shared part gone, fails and is dropped; that shared part is left to Git.
//
// Its parts, beside it: the untracked files too large to record
// (large-files.ts), what Git's commands on it print (command-output.ts), and
// the digests of the attribute and ignore rules (rule-digests.ts).
import { existsSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { type ObjectId } from "../../format/index.ts";
import { decodeBytes, encodeBytes, hasEscapedBytes } from "../../bytes.ts";
import type { RealIndex } from "./file.ts";
import { undoFile } from "../../undo-files.ts";
import { readJsonFile, replaceFile } from "../../files.ts";
import { gitBool, type Repo } from "../../repo.ts";
import { monitorSetting } from "../../monitor-setting.ts";
import { MODE } from "../../mode.ts";
import { lstatOrNull } from "../../stat.ts";
import { checkRepositoryThere } from "../../repository-gone.ts";
import { changedPaths, worktreeRecords, type WorktreeRecord } from "./command-output.ts";
import { largeInKept, magicPathspecs, MAX_PATHSPECS, type LeftOutFile } from "./large-files.ts";
import { foldersAbove, ignoreRulesDigest, MAX_RULE_FOLDERS } from "./rule-digests.ts";

/** What the kept index was made from and what it holds. */
export interface KeptIndex {
  version: 2;
  /** entriesDigest() of the real index it was made from. */
  realIndex: string;
  /** RealIndex.identity of the real index last seen with those entries. */
  realFile: string;
  /** Digest of `git config --list` when it was written. */
  config: string;
  /** Digest of the attribute files outside the working tree. */
  attributes: string;
  /** The real index written as a tree. */
  index: ObjectId;
  /** The worktree tree the kept index writes. */
  worktree: ObjectId;
  /** Every path where it may differ from the real index (decodeBytes form). */
  paths: string[];
  /** How many paths there were when `paths` was last exactly where the two indexes differ (absent: not known). */
  exactPaths?: number;
  /**
   * ignoreRulesDigest() of the folders above `paths` when every one of them
   * was last found not ignored under those rules; null (or absent) when that
   * cannot be said, and check-ignore runs.
   */
  ignoreRules?: string | null;
}

/** Beyond this many differing paths, checking them costs more than the copy saves. */
const MAX_PATHS = 20000;
const BASENAMES_NEVER_KEPT = new Set([".gitattributes", ".gitmodules"]);

/** The kept index and its description, in <gitdir>/undo/. */
const keptFile = (repo: Repo): string => undoFile(repo.undoDir, "keptIndex");
const describedBy = (repo: Repo): string => undoFile(repo.undoDir, "keptIndexInfo");

/** Forget the kept index (whenever it cannot be reused). */
export function dropKeptIndex(repo: Repo): void {
  rmSync(describedBy(repo), { force: true });
  rmSync(keptFile(repo), { force: true });
}

/** Whether the configuration lets the kept index stand in for a fresh copy at all. */
function configAllows(repo: Repo): boolean {
  // Set and not plainly false counts as on: a value this does not read must not allow reuse.
  const on = (key: string) => repo.settings.has(key) && gitBool(repo.settings.get(key) ?? null) !== false;
  // git-undo's own Git runs with no monitor (core/git.ts): only the user's own one counts, when it is there.
  const monitor = monitorSetting(repo.settings.get("core.fsmonitor"), gitBool).kind;
  return !on("core.sparsecheckout") && !on("core.splitindex") && !on("core.ignorecase") && (monitor === "none" || monitor === "guard");
}

/**
 * Git's settings for every command on the kept index: an untracked cache of
 * its own, unless the user turned the cache off (a file system that does not
 * update folder times, say).
 */
function keptIndexSettings(repo: Repo): string[] {
  const cache = repo.settings.get("core.untrackedcache");
  const off = cache !== undefined && gitBool(cache) === false;
  return ["-c", `core.untrackedCache=${off ? "false" : "true"}`];
}

/** Pathspecs taken as plain names (a file may be called `*` or `:(glob)x`); core/git.ts drops the user's own settings. */
const LITERAL_PATHSPECS = { GIT_LITERAL_PATHSPECS: "1" };

interface KeptUpdate {
  exitCode: number;
  /** What `add -A --verbose` printed: the paths it changed. */
  stdout: Uint8Array;
  /** Nothing to add: the kept index still writes the tree it wrote last time. */
  unchanged: boolean;
  /** The untracked files add -A was kept away from for their size. */
  leftOut: LeftOutFile[];
}

/**
 * `git add -A --verbose` on the kept index, in two steps. `git status` names
 * every path where the working tree differs from the kept index (changed,
 * deleted or untracked, the kind add -A updates), and add -A then runs with
 * those paths alone as pathspecs, which treats each of them as the whole-tree
 * run would. Anything status prints that is not such a path, or too many
 * paths, and add -A runs on the whole tree; so it does, at once, with `whole`
 * (only without undo.maxNewFileSize: the files too large for it must be
 * known before add -A runs, and status names them). Null when the kept index
 * cannot stand in for a fresh copy.
 */
async function updateKept(
  repo: Repo,
  settings: string[],
  env: Record<string, string>,
  signal: AbortSignal,
  whole: boolean,
  real: RealIndex,
  onStatus?: (records: readonly WorktreeRecord[] | null) => void,
): Promise<KeptUpdate | null> {
  const add = [...settings, "add", "-A", "--verbose", "--ignore-errors"];
  const limit = repo.config.maxNewFileSize;
  if (whole && limit <= 0) return { ...(await repo.git.run(add, { env, okExit: [1], signal })), unchanged: false, leftOut: [] };
  // --ignore-submodules=dirty: a submodule's own edits are nothing add -A records, its commit is.
  const status = ["status", "--porcelain", "-z", "--no-renames", "--ignore-submodules=dirty", "--untracked-files=normal"];
  // GIT_OPTIONAL_LOCKS: status writes the cache it refreshed back to the kept index.
  const shown = await repo.git.run([...settings, ...status], { env: { ...env, GIT_OPTIONAL_LOCKS: "1" }, signal });
  const records = worktreeRecords(shown.stdout);
  onStatus?.(records);
  let paths = records?.map((r) => r.path) ?? null;
  let leftOut: LeftOutFile[] = [];
  if (limit > 0 && records) {
    const large = await largeInKept(repo, settings, env, signal, records, real);
    if (large === null) return null;
    leftOut = large;
    const out = new Set(large.map((f) => f.path));
    if (out.size) paths = records.filter((r) => r.dir || !out.has(decodeBytes(r.path))).map((r) => r.path);
  } else if (limit > 0) {
    return null; // status said something unexpected: a whole add -A could hash a file too large
  }
  if (paths?.length === 0) return { exitCode: 0, stdout: new Uint8Array(), unchanged: true, leftOut };
  if (signal.aborted) throw new Error("stopped");
  const excludes = leftOut.length ? magicPathspecs("exclude,", leftOut.map((f) => encodeBytes(f.path))) : null;
  const fromStdin = ["--pathspec-from-file=-", "--pathspec-file-nul"];
  if (paths === null || paths.length > MAX_PATHSPECS) {
    const added = excludes ? await repo.git.run([...add, ...fromStdin], { env, input: excludes, okExit: [1], signal }) : await repo.git.run(add, { env, okExit: [1], signal });
    return { ...added, unchanged: false, leftOut };
  }
  // Names taken literally: with excludes, by magic on each; else by GIT_LITERAL_PATHSPECS.
  const input = excludes
    ? Buffer.concat([magicPathspecs("", paths), excludes])
    : Buffer.concat(paths.flatMap((p) => [p, new Uint8Array([0])]));
  const added = await repo.git.run([...add, ...fromStdin], {
    env: excludes ? env : { ...env, ...LITERAL_PATHSPECS },
    input,
    okExit: [1],
    signal,
  });
  return { ...added, unchanged: false, leftOut };
}

const neverKept = (path: string): boolean => BASENAMES_NEVER_KEPT.has(path.slice(path.lastIndexOf("/") + 1));

/**
 * Whether the filesystem still allows reuse at the listed paths: none is now
 * a directory, and no directory above one holds a nested repository.
 */
function layoutAllows(workTree: string, paths: readonly string[]): boolean {
  const dirs = new Set<string>();
  for (const p of paths) {
    if (lstatOrNull(join(workTree, p))?.isDirectory()) return false;
    for (let d = dirname(p); d !== "." && d !== "/" && !dirs.has(d); d = dirname(d)) dirs.add(d);
  }
  for (const d of dirs) if (existsSync(join(workTree, d, ".git"))) return false;
  return true;
}

function readKept(repo: Repo): KeptIndex | null {
  const k = readJsonFile(describedBy(repo)) as KeptIndex | null;
  return k?.version === 2 && Array.isArray(k.paths) && existsSync(keptFile(repo)) ? k : null;
}

function writeKept(repo: Repo, kept: KeptIndex): void {
  replaceFile(describedBy(repo), JSON.stringify(kept));
}

export interface KeptCapture {
  index: ObjectId;
  worktree: ObjectId;
  /** Untracked files left out of the worktree tree for their size. */
  leftOut: LeftOutFile[];
}

/**
 * The index and worktree trees from the kept index, or null when it cannot
 * stand in for a fresh copy (the caller then takes the full path).
 */
export async function captureFromKept(
  repo: Repo,
  real: RealIndex,
  attributes: string,
  config: Promise<string>,
  scratchDir: string,
): Promise<KeptCapture | null> {
  const kept = readKept(repo);
  if (!repo.workTree || !kept || kept.attributes !== attributes || !configAllows(repo)) return null;
  // The same file needs no reading; another one (git status rewrote it) may hold the same entries.
  const sameEntries = kept.realFile === real.identity || kept.realIndex === real.entries;
  if (!sameEntries && real.entries === null) return null;
  // Take the kept index into the scratch directory and forget its description:
  // whatever happens to <gitdir>/undo meanwhile (uninstall, a crash), Git works
  // on a file nobody else removes, and nothing is left that could be reused wrongly.
  const taken = join(scratchDir, "kept-index");
  rmSync(describedBy(repo), { force: true });
  try {
    renameSync(keptFile(repo), taken);
  } catch {
    return null;
  }
  const followed = await followKept(repo, kept, real, sameEntries, taken, config, scratchDir).catch(() => null);
  if (!followed || followed.kept.paths.length > MAX_PATHS) {
    rmSync(taken, { force: true });
    return followed?.capture ?? null;
  }
  try {
    checkRepositoryThere(); // back into undo/: never into a folder being deleted
    renameSync(taken, keptFile(repo));
    writeKept(repo, followed.kept);
  } catch {
    dropKeptIndex(repo);
  }
  return followed.capture;
}

/**
 * Bring the taken kept index up to date with the working tree and check that
 * it stands in for a fresh copy. Returns the trees and the kept index's new
 * description, or null when it cannot stand in; every Git it started has
 * ended by then.
 */
async function followKept(
  repo: Repo,
  kept: KeptIndex,
  real: RealIndex,
  sameEntries: boolean,
  taken: string,
  config: Promise<string>,
  scratchDir: string,
): Promise<{ capture: KeptCapture; kept: KeptIndex } | null> {
  const workTree = repo.workTree!;
  const env = { GIT_INDEX_FILE: taken };
  const settings = keptIndexSettings(repo);
  // Updating the kept index is nearly all of a recording: start it first, check the rest while it runs.
  const stop = new AbortController();
  // When the real index moved on and its tree must be written as well (after
  // git add; git commit leaves its cache tree whole), one whole add -A instead
  // of status and add keeps the recording within its Git processes.
  const cached = sameEntries ? null : real.cacheTree;
  const whole = !sameEntries && cached === null;
  // With undo.maxNewFileSize status runs even then (updateKept); what it shows
  // spares check-ignore the paths both indexes track, keeping the count.
  const viaStatus = whole && repo.config.maxNewFileSize > 0;
  let showStatus: (records: readonly WorktreeRecord[] | null) => void = () => {};
  const shown = new Promise<readonly WorktreeRecord[] | null>((resolve) => (showStatus = resolve));
  const updating = updateKept(repo, settings, env, stop.signal, whole, real, viaStatus ? showStatus : undefined);
  // The ignore rules above the listed paths, read while git status runs and
  // before add -A or check-ignore start: when they are those under which each
  // path was last found not ignored, no path can have become ignored, and
  // check-ignore need not run.
  const ruleDirs = sameEntries ? foldersAbove(kept.paths) : null;
  const rulesBefore = ruleDirs ? ignoreRulesDigest(repo, workTree, ruleDirs) : null;
  const rulesKnown = rulesBefore !== null && kept.ignoreRules === rulesBefore;
  updating.then(
    () => showStatus(null),
    () => showStatus(null),
  ); // never left waiting; settled below
  // When the real index moved on (a commit, git add), the paths whose entries
  // changed join those the two indexes may differ at.
  const moved = sameEntries
    ? { index: kept.index, paths: [] }
    : await realIndexMoves(repo, real, kept.index, cached, scratchDir).catch(() => null);
  if (!moved) {
    // The kept index cannot follow: stop Git (it only wrote the taken copy).
    stop.abort();
    await updating.catch(() => undefined);
    return null;
  }
  const watched = moved.paths.length ? [...new Set([...kept.paths, ...moved.paths])] : kept.paths;
  // A real index that moved on (a commit): check-ignore runs over the paths
  // its changes add as well. The rules above all of them, read now, before it
  // starts, are kept as the others are when it finds none ignored, so that the
  // next recording can do without it. Not when status stands in for part of
  // the check (viaStatus), nor for a change in so many folders that reading
  // their rules would cost more than the check.
  const watchedDirs = ruleDirs || viaStatus ? null : foldersAbove(watched);
  const checkedDirs = ruleDirs ?? (watchedDirs && watchedDirs.length <= MAX_RULE_FOLDERS ? watchedDirs : null);
  const checkedRules = ruleDirs ? rulesBefore : checkedDirs && ignoreRulesDigest(repo, workTree, checkedDirs);
  const checkIgnored = (paths: readonly string[]) => {
    // "./" before each: check-ignore reads its input as pathspecs, and takes no
    // magic; a name like ":(glob)x" stays a name.
    const input = Buffer.concat(paths.map((p) => Buffer.concat([encodeBytes(`./${p}`), Buffer.from([0])])));
    // Exit 1: none of them is ignored.
    return paths.length ? repo.git.run(["check-ignore", "--no-index", "-z", "--stdin"], { input, okExit: [0, 1, 128] }) : Promise.resolve({ exitCode: 1 });
  };
  const ignoring = rulesKnown
    ? Promise.resolve({ exitCode: 1 })
    : viaStatus
      ? shown.then((records) => checkIgnored(ignoreMatters(watched, records, real)))
      : checkIgnored(watched);
  const layoutOk = layoutAllows(workTree, watched);
  // Settle all three before deciding, so that no Git is left writing the kept index.
  const [configNow, ignored, updated] = await Promise.allSettled([config, ignoring, updating]);
  if (configNow.status === "rejected" || ignored.status === "rejected" || updated.status === "rejected" || !updated.value) return null;
  const changed = updated.value.exitCode === 0 ? changedPaths(updated.value.stdout, workTree) : null;
  if (!layoutOk || configNow.value !== kept.config || ignored.value.exitCode !== 1 || !changed || changed.some(neverKept)) return null;
  // What add -A added at paths it was named: nothing there may sit in a nested repository.
  if (!layoutAllows(workTree, changed)) return null;
  const writing = updated.value.unchanged ? null : repo.git.line([...settings, "write-tree"], { env });
  const paths = changed.length ? [...new Set([...watched, ...changed])] : watched;
  const realIndex = sameEntries ? kept.realIndex : real.entries!;
  // The rules are kept when check-ignore found every listed path not ignored
  // under them (now, or at a recording before with the same rules): add -A
  // listed no path it did not check (a path add -A lists may be ignored: a
  // tracked file it removes), and the rules did not change while Git ran.
  // Read again while write-tree (which judges nothing) runs.
  const watchedSet = changed.length ? new Set(watched) : null;
  const allChecked = !watchedSet || changed.every((p) => watchedSet.has(p));
  const ignoreRules = checkedDirs && checkedRules !== null && allChecked && ignoreRulesDigest(repo, workTree, checkedDirs) === checkedRules ? checkedRules : null;
  const worktree = writing ? await writing : kept.worktree;
  // The list only grows (an edit, then its commit, leaves the path listed), and
  // every recording reads the rules above each path and looks at it on disk:
  // once it has grown past PRUNE_ABOVE and to twice what it was when last
  // exact, it is cut to where the two indexes differ now. Their trees say
  // where, exactly; a path missing from the list (which cannot be) leaves the
  // list as it is. The rules are read afresh for the shorter list: check-ignore
  // runs once more.
  const grown = paths.length > kept.paths.length && paths.length > Math.max(PRUNE_ABOVE, 2 * (kept.exactPaths ?? 0));
  const exact = grown ? await pathsDiffering(repo, moved.index, worktree, paths) : null;
  const listed = exact ? { paths: exact, exactPaths: exact.length, ignoreRules: null } : { paths, ignoreRules };
  return {
    capture: { index: moved.index, worktree, leftOut: updated.value.leftOut },
    kept: { ...kept, realIndex, realFile: real.identity, index: moved.index, worktree, ...listed },
  };
}

/** Past this many listed paths, the kept index's list is cut to where the two indexes differ (followKept). */
const PRUNE_ABOVE = 128;

/**
 * The paths where the trees `index` (the real index's) and `worktree` (the
 * kept index's) differ, when all are among `listed`; null otherwise, or when a
 * name is not UTF-8 (the list holds text).
 */
async function pathsDiffering(repo: Repo, index: ObjectId, worktree: ObjectId, listed: readonly string[]): Promise<string[] | null> {
  const r = await repo.git.run(["diff-tree", "-r", "-z", "--name-only", "--no-renames", index, worktree], { okExit: [128] });
  if (r.exitCode !== 0) return null;
  const known = new Set(listed);
  const paths = decodeBytes(r.stdout).split("\0").filter(Boolean);
  return paths.every((p) => known.has(p) && !hasEscapedBytes(p)) ? paths : null;
}

/**
 * The watched paths whose ignore rules matter: all but those both the kept
 * index (status showed it changed, not untracked) and the real index track,
 * which add -A treats alike in either index, ignored or not.
 */
function ignoreMatters(watched: readonly string[], records: readonly WorktreeRecord[] | null, real: RealIndex): readonly string[] {
  if (!records) return watched;
  const inKept = new Set(records.filter((r) => !r.untracked).map((r) => decodeBytes(r.path)));
  const candidates = watched.filter((p) => inKept.has(p));
  const inReal = candidates.length ? real.has(candidates.map(encodeBytes)) : null;
  if (!inReal) return watched;
  const both = new Set(candidates.filter((_, i) => inReal[i]));
  return watched.filter((p) => !both.has(p));
}

/**
 * The real index as a tree, and the paths whose entries differ from the one
 * the kept index follows (`before`, its tree): with zero flags everywhere
 * (entriesDigest), the two trees say every difference. Null when the kept
 * index cannot follow: conflicts, a gitlink or a .gitattributes or .gitmodules
 * entry among the changes. `cached` is the tree the real index's cache tree
 * names, if whole; diff-tree then reads every tree of it that differs, so a
 * missing one fails the capture instead of entering a snapshot.
 */
async function realIndexMoves(repo: Repo, real: RealIndex, before: ObjectId, cached: ObjectId | null, scratchDir: string): Promise<{ index: ObjectId; paths: string[] } | null> {
  let index = cached;
  if (index === null) {
    const env = { GIT_INDEX_FILE: real.copyTo(join(scratchDir, "index-now")) };
    const written = await repo.git.run(["write-tree"], { env, okExit: [128] });
    if (written.exitCode !== 0) return null;
    index = decodeBytes(written.stdout).trim();
  }
  if (index === before) return { index, paths: [] };
  const diff = decodeBytes((await repo.git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", before, index])).stdout);
  const fields = diff.split("\0");
  const paths: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [oldMode, newMode] = fields[i]!.slice(1).split(" ");
    if (oldMode === MODE.gitlink || newMode === MODE.gitlink) return null;
    paths.push(fields[i + 1]!);
  }
  // A name that is not UTF-8 cannot be looked at through a JS string (layoutAllows).
  return paths.some((p) => neverKept(p) || hasEscapedBytes(p)) ? null : { index, paths };
}

/**
 * After a full capture: keep the worktree index it wrote (at `built`) for the
 * next recording, when that one could reuse it. `addOutput` is its
 * `add -A --verbose` output (null when a file could not be read); `real`,
 * `attributes` and `config` were read before it ran.
 */
export function keepAfterFullCapture(
  repo: Repo,
  real: RealIndex,
  attributes: string,
  config: string,
  built: string,
  trees: { index: ObjectId; worktree: ObjectId },
  addOutput: Uint8Array | null,
): void {
  const workTree = repo.workTree;
  const entries = real.entries;
  if (!workTree || entries === null || addOutput === null || !configAllows(repo)) return;
  const paths = changedPaths(addOutput, workTree);
  if (!paths || paths.length > MAX_PATHS || paths.some(neverKept)) return;
  try {
    dropKeptIndex(repo); // the one it replaces
    checkRepositoryThere();
    renameSync(built, keptFile(repo));
    writeKept(repo, {
      version: 2,
      realIndex: entries,
      realFile: real.identity,
      config,
      attributes,
      ...trees,
      paths,
      exactPaths: paths.length, // what add -A changed in a fresh copy of the real index: where the two differ
    });
  } catch {
    dropKeptIndex(repo);
  }
}
