// The working-tree step of a restore: Git's own merge (read-tree -m -u) from
// a merge index, checked before anything moves, and the hard-link backup of the
// files it replaces (core/restore/backup.ts, with the space the rollback needs
// reserved), so that a failure (a full disk included) puts every file back as it was.
import { RestoreRefused } from "./plan.ts";
import { mkdirSync, readdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { nameList } from "../text.ts";
import { pathKey, type ObjectId } from "../format/index.ts";
import { gitVersion, versionAtLeast } from "../git.ts";
import { currentFolder, occupiedNow, parseRawNumstat, type Blocker, type FileChange, type RestorePlan } from "./plan.ts";
import { linkBackup, putBackLinked, type WorktreeBackup } from "./backup.ts";
import type { Repo } from "../repo.ts";
import { copyIndexFile } from "../git-data/index/file.ts";
import { MODE } from "../mode.ts";

import { indexInfo, snapshotEntries } from "./index-step.ts";
import type { StepContext, WorktreeOutcome } from "./types.ts";
import { processes } from "../git-data/proc/index.ts";
import { asideObjects } from "../git-data/quarantine.ts";

/**
 * A Git step on one of the merge's own indexes. The trees it writes (the two
 * sides, the rollback's) only serve the merge: they go into the scratch folder
 * and never reach the store, where they would dangle.
 */
function mergeEnv(repo: Repo, scratch: string, indexFile: string): Record<string, string> {
  const objects = join(scratch, "merge-objects");
  mkdirSync(objects, { recursive: true });
  return { GIT_INDEX_FILE: indexFile, ...asideObjects(repo, objects) };
}

/** The working-tree merge's private index, and the two trees it merges between. */
export interface MergeIndex {
  file: string;
  /** The variables of a Git working on it: its index, and its trees' own object folder (mergeEnv). */
  env: Record<string, string>;
  /** S's entries at the paths that change, as a tree. */
  from: ObjectId;
  /** T's entries at those paths. */
  to: ObjectId;
  /**
   * S's files kept by hard links for the rollback (linkBackup), made before
   * the index's refresh (a link changes a file's ctime, which the refresh then
   * takes in); undefined when mergeIndexFor was not asked for them.
   */
  backup?: WorktreeBackup | null;
}

/**
 * The working-tree merge (spec step 4), narrowed to the paths S and T record
 * differently. A two-tree merge leaves a path alone when both trees agree on
 * it and the index has no entry ("keep index"), so merging from a tree of S's
 * entries at those paths to a tree of T's, on an index of S's entries there
 * with fresh stat data, writes and removes exactly the files the whole-tree
 * merge would, with the same checks, without Git walking the 100,000 paths
 * that stay, or reading and writing an entry for each. The refresh hashes just
 * these files: one that differs from S keeps stale stat data, and the merge
 * refuses it.
 */
export async function mergeIndexFor(repo: Repo, scratch: string, plan: RestorePlan, opts: { keepFiles?: boolean } = {}): Promise<MergeIndex> {
  const file = join(scratch, MERGE_INDEX);
  // keepFiles: the links first, so the refresh below sees the files as the merge will.
  const backup = opts.keepFiles ? linkBackup(repo, scratch, plan) : undefined;
  const side = async (path: string, entries: FileChange[], which: "old" | "new", refresh: boolean): Promise<ObjectId> => {
    rmSync(path, { force: true });
    const env = mergeEnv(repo, scratch, path);
    // An empty index file, not a missing one: without a file read-tree takes the
    // merge for an initial checkout and writes every path.
    if (!entries.length) await repo.git.run(["read-tree", "--empty"], { env });
    else {
      await snapshotEntries(repo, plan, env, indexInfo(entries, which));
      if (refresh) await repo.git.run(["update-index", "-q", "--refresh"], { env, okExit: [1] });
    }
    return repo.git.line(["write-tree"], { env });
  };
  const files = plan.worktree.files;
  const [from, to] = await Promise.all([
    side(file, files.filter((f) => f.oldMode !== MODE.absent), "old", true),
    side(join(scratch, "merge-target"), files.filter((f) => f.newMode !== MODE.absent), "new", false),
  ]);
  const env = mergeEnv(repo, scratch, file);
  return backup === undefined ? { file, env, from, to } : { file, env, from, to, backup };
}

const MERGE_INDEX = "merge-index";

/** Paths Git's unpack-trees errors name (`Entry 'a' not uptodate`, `Untracked ... file 'b' would be overwritten`). */
function pathsInErrors(stderr: string): string[] {
  const names: string[] = [];
  for (const line of stderr.split("\n")) {
    const m = /'(.+)'/.exec(line);
    if (m && /uptodate|overwritten|removed|lost/.test(line)) names.push(m[1]!);
  }
  return [...new Set(names)];
}

/** The two-tree merge as a dry run: fails when a file on disk differs from the state left. */
async function checkMerge(repo: Repo, plan: RestorePlan, merge: MergeIndex): Promise<Blocker | null> {
  const r = await repo.git.run(["read-tree", "-m", "-u", "-n", merge.from, merge.to], { env: merge.env, okExit: [128] });
  return r.exitCode === 0 ? null : mergeBlocker(plan, r.stderr);
}

/** What a refused two-tree merge means for the user. */
function mergeBlocker(plan: RestorePlan, stderr: string): Blocker {
  const names = pathsInErrors(stderr);
  const target = plan.target.number;
  if (/untracked/i.test(stderr)) return { kind: "untracked-file", target, names };
  return { kind: "not-uptodate", target, names, detail: stderr.trim().split("\n")[0] ?? "" };
}

/**
 * The checks only a look at the disk can make, added to the plan's blockers: the
 * two-tree merge as a dry run (a file differs from the state left, an untracked
 * file would be overwritten). Returns the private merge index for the restore.
 */
export async function checkWorktree(repo: Repo, scratch: string, plan: RestorePlan): Promise<MergeIndex | null> {
  if (plan.worktree.mode !== "merge" || plan.blockers.some((b) => b.kind === "missing-objects")) return null;
  const mergeIndex = await mergeIndexFor(repo, scratch, plan);
  const b = await checkMerge(repo, plan, mergeIndex);
  if (b) plan.blockers.push(b);
  return mergeIndex;
}

/** The first Git that leaves the folder it runs in when a checkout empties it. */
const KEEPS_ITS_FOLDER_SINCE: readonly [number, number] = [2, 35];

/**
 * Keep the folder the user is in when the merge empties it, as Git itself
 * does: the merge runs there, and Git (2.35 and newer) does not remove the
 * folder it runs in. An older Git would, and the user's shell would be left in
 * a folder that is gone: for it, a file of git-undo's own holds the folder for
 * the merge's length. Returns what to call after the merge.
 */
async function holdCurrentFolder(repo: Repo, plan: RestorePlan): Promise<{ cwd: string | undefined; release(): string | null }> {
  const here = currentFolder(repo);
  const emptying = here !== null && plan.worktree.files.some((f) => f.newMode === MODE.absent && f.path.startsWith(`${here.rel}/`));
  if (!emptying) return { cwd: here?.abs, release: () => null };
  let keeper: string | null = null;
  if (!versionAtLeast(await gitVersion(repo.git), KEEPS_ITS_FOLDER_SINCE)) {
    const file = join(here.abs, `.git-undo-keep-${processes().selfPid}`);
    try {
      writeFileSync(file, "", { flag: "wx" });
      keeper = file;
    } catch {
      /* a folder we may not write in: Git may remove it then, as Git itself would */
    }
  }
  return {
    cwd: here.abs,
    release() {
      if (keeper) rmSync(keeper, { force: true });
      try {
        return readdirSync(here.abs).length === 0 ? here.rel : null;
      } catch {
        return null;
      }
    },
  };
}

/** Step 4: the working tree, by a two-tree merge on the private index. */
export async function restoreWorktree({ repo, plan, journal }: StepContext, mergeIndex: MergeIndex, scratch: string): Promise<WorktreeOutcome> {
  if (plan.worktree.mode !== "merge") return { readFilesAgain: false, keptFolder: null };
  const { from: s, to: t, env } = mergeIndex;
  // The merge checks every path before it writes one, but a write can still fail
  // halfway (a directory it may not write in, a full disk, a signal): then some
  // files are T's and others S's, and its index is left as it was.
  const occupied = await occupiedNow(repo, plan);
  if (occupied.length) throw new RestoreRefused(occupied);
  // S's files kept by hard links, so that going back needs no disk space:
  // made with the merge index, or now; then the merge index is refreshed
  // again, as a link changes a file's ctime.
  let backup = mergeIndex.backup;
  if (backup === undefined) {
    backup = linkBackup(repo, scratch, plan);
    if (backup?.paths.some((p) => p.backup)) await repo.git.run(["update-index", "-q", "--refresh"], { env, okExit: [1] });
  }
  let failed: string | null = null;
  let refused: Blocker | null = null;
  let readFilesAgain = false;
  const folder = await holdCurrentFolder(repo, plan);
  let keptFolder: string | null = null;
  try {
    const r = await repo.git.run(["read-tree", "-m", "-u", s, t], { env, okExit: [128], cwd: folder.cwd });
    if (r.exitCode !== 0) {
      failed = mergeErrors(r.stderr, repo.workTree);
      refused = mergeBlocker(plan, r.stderr);
    }
    // A merge that went through can still warn: a file it could not remove stays on disk.
    readFilesAgain = r.stderr.trim() !== "" || plan.worktree.files.some((f) => RULE_FILES.test(f.path));
  } catch (e) {
    failed = (e as Error).message;
  } finally {
    keptFolder = folder.release();
  }
  if (failed !== null) {
    let putBack: string[];
    try {
      putBack = await undoPartialMerge(repo, scratch, plan, mergeIndex, backup);
    } catch (e) {
      // Leave the rollback's own failure for the journal to report (the state left is recorded).
      journal.push("worktree", () => Promise.reject(e as Error));
      throw new Error(`the working-tree merge failed (${failed})`);
    }
    if (!putBack.length && refused) throw new RestoreRefused([refused]);
    throw new Error(`the working-tree merge failed (${failed})${putBack.length ? `; the files it had changed are back: ${nameList(putBack)}` : ""}`);
  }
  if (backup) {
    journal.push("worktree", async () => {
      const { left } = await putBackLinked(repo, backup, "complete");
      if (left.length) throw new Error(`files changed since the restore wrote them are left as they are: ${nameList(left)}`);
    });
  } else {
    // The reverse merge refuses to overwrite a file that changed since, rather than lose it.
    journal.push("worktree", () => repo.git.run(["read-tree", "-m", "-u", t, s], { env }).then(() => undefined));
  }
  return { readFilesAgain, keptFolder };
}

/** Files whose change changes what `git add -A` reads from the others: ignore rules, attributes (filters, eol). */
const RULE_FILES = /(^|\/)\.git(ignore|attributes)$/;

/** Git's errors from a merge that failed, on one line; Git's own do not say that the disk is full. */
function mergeErrors(stderr: string, workTree: string | null): string {
  const lines = stderr.trim().split("\n").filter(Boolean);
  const shown = lines.length > 4 ? [...lines.slice(0, 3), `and ${lines.length - 3} more`] : lines;
  return shown.join("; ") + (diskFull(workTree) && !/no space left/i.test(stderr) ? "; no space left on the device" : "");
}

function diskFull(dir: string | null): boolean {
  if (dir === null) return false;
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize < 64 * 1024;
  } catch {
    return false;
  }
}

/**
 * After a working-tree merge that failed, put back S's version of every path the
 * merge changed, and only those. The files are read as a capture reads them (on
 * a copy of the merge index, which still holds S): a path of the plan that now
 * holds T's version was written by the merge and goes back to S's; one that holds
 * S's needs nothing; one that holds neither was changed by someone else meanwhile
 * and stays as it is. Git's own two-tree merge then does the writing, with its
 * checks. Returns the paths put back: none when the merge refused before writing.
 * With S's files kept by links (linkBackup) the links go back instead, which
 * needs no disk space; this way, which writes, is for where links cannot be made.
 */
async function undoPartialMerge(repo: Repo, scratch: string, plan: RestorePlan, mergeIndex: MergeIndex, backup: WorktreeBackup | null): Promise<string[]> {
  if (backup) return (await putBackLinked(repo, backup, "cut-short")).putBack;
  const probe = join(scratch, "probe-index");
  rmSync(probe, { force: true });
  copyIndexFile(mergeIndex.file, probe);
  const env = mergeEnv(repo, scratch, probe);
  await repo.git.run(["add", "-A", "--ignore-errors"], { env, okExit: [1] });
  const disk = await repo.git.line(["write-tree"], { env });
  const s = plan.from.state.worktree!;
  if (disk === s) return [];
  const planned = new Map(plan.worktree.files.map((f) => [pathKey(f.raw), f]));
  const out = await repo.git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", s, disk]);
  const back: FileChange[] = [];
  for (const c of parseRawNumstat(out.stdout)) {
    const f = planned.get(pathKey(c.raw));
    if (f && c.newMode === f.newMode && c.newObject === f.newObject) back.push(f);
  }
  if (!back.length) return [];
  // The tree to go back to: the disk as it is, with S's entries at those paths.
  const goal = join(scratch, "goal-index");
  rmSync(goal, { force: true });
  copyIndexFile(probe, goal);
  const goalEnv = mergeEnv(repo, scratch, goal);
  await repo.git.run(["update-index", "-z", "--index-info"], { env: goalEnv, input: indexInfo(back, "old") });
  const goalTree = await repo.git.line(["write-tree"], { env: goalEnv });
  await repo.git.run(["update-index", "-q", "--refresh"], { env, okExit: [1] });
  await repo.git.run(["read-tree", "-m", "-u", disk, goalTree], { env });
  return back.map((f) => f.path);
}
