// The index step of a restore: the next index built aside from the plan
// (startNextIndex), then moved into place with the stat data of the files the
// merge wrote refreshed.
import { existsSync, linkSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { refused as refusedFor } from "../errors.ts";
import { decodeUnmerged, pathKey, type ObjectId } from "../format/index.ts";
import type { FileChange, RestorePlan } from "./plan.ts";
import type { Repo } from "../repo.ts";
import { copyIndexFile, indexVersion } from "../git-data/index/file.ts";
import { MODE } from "../mode.ts";

import type { StepContext } from "./types.ts";

/**
 * `update-index -z --index-info` input that gives each path the entry of one
 * side of its change: removals first (mode 0), so that a file can take the
 * place of a directory.
 */
export function indexInfo(changes: readonly FileChange[], side: "old" | "new"): Buffer {
  const line = (mode: string, oid: ObjectId, raw: Uint8Array) => Buffer.concat([Buffer.from(`${mode} ${oid}\t`), raw, Buffer.from([0])]);
  const mode = (c: FileChange) => (side === "old" ? c.oldMode : c.newMode);
  return Buffer.concat([
    ...changes.filter((c) => mode(c) === MODE.absent).map((c) => line("0", c.oldObject, c.raw)),
    ...changes.filter((c) => mode(c) !== MODE.absent).map((c) => line(mode(c), side === "old" ? c.oldObject : c.newObject, c.raw)),
  ]);
}

/**
 * `update-index -z --index-info` with entries read from a snapshot. Git skips a
 * path it will not have in an index (`git~1`, `.git ` and the other names its
 * core.protectNTFS/protectHFS rules refuse) with a warning and exit 0; such a
 * file would silently not be written, so the restore refuses instead, naming it.
 */
export async function snapshotEntries(repo: Repo, plan: RestorePlan, env: Record<string, string>, input: Uint8Array): Promise<void> {
  const r = await repo.git.run(["update-index", "-z", "--index-info"], { env, input });
  const refused = [...r.stderr.matchAll(/^Ignoring path (.*)$/gm)].map((m) => m[1]!);
  if (refused.length) {
    throw refusedFor({ kind: "paths-git-refuses", number: plan.target.number, paths: refused });
  }
}

/** Step 5's new index, built aside, and the paths whose stat data to refresh once the files are written. */
export interface NextIndex {
  file: string;
  /** Pathspecs for `git add --refresh`; null: refresh every entry. */
  refresh: Uint8Array | null;
}

/**
 * Start building step 5's new index aside (it touches no file the merge
 * writes), as soon as the plan is known: the restore snapshot waits for it.
 * Null when the restore writes no index (a bare repository).
 */
export function startNextIndex(repo: Repo, scratch: string, plan: RestorePlan): Promise<NextIndex> | null {
  if (repo.bare || plan.targetState.index === undefined) return null;
  const building = Promise.all([buildNextIndex(repo, scratch, plan), refreshPaths(repo, plan)]).then(([file, refresh]) => ({ file, refresh }));
  building.catch(() => {}); // awaited by applyPlan, or settled by whoever started it
  return building;
}

/** Step 5: the index, built aside and moved into place while we hold index.lock. */
export async function restoreIndex({ repo, journal }: StepContext, { file: next, refresh }: NextIndex, scratch: string): Promise<void> {
  await refreshChanged(repo, next, refresh);
  const backup = join(scratch, "index-before");
  const hadIndex = existsSync(repo.indexFile);
  if (hadIndex) linkSync(repo.indexFile, backup);
  journal.push("index", async () => {
    if (hadIndex) renameSync(backup, repo.indexFile);
    else rmSync(repo.indexFile, { force: true });
  });
  renameSync(next, repo.indexFile);
}

/**
 * T's index over a copy of the real index (spec step 5: read-tree --reset, then
 * the unmerged entries). When the real index is S's index itself (version 2,
 * so no intent-to-add or skip-worktree entries, and no conflicts), the entries
 * that differ between S and T are all that change: update-index puts T's in
 * their place, which is the one-way merge's result without Git reading T's
 * whole tree. Either way every entry T shares with the index now keeps its
 * stat data, so only the entries refreshChanged names can be stale.
 */
async function buildNextIndex(repo: Repo, scratch: string, plan: RestorePlan): Promise<string> {
  const next = join(scratch, "next-index");
  rmSync(next, { force: true });
  copyIndexFile(repo.indexFile, next);
  const env = { GIT_INDEX_FILE: next };
  const changes = plan.index?.entries;
  if (changes && !plan.from.state.indexUnmerged && indexVersion(next) === 2) {
    if (changes.length) await snapshotEntries(repo, plan, env, indexInfo(changes, "new"));
  } else {
    await repo.git.run(["read-tree", "--reset", plan.targetState.index!], { env });
  }
  if (plan.targetState.indexUnmerged) {
    await snapshotEntries(repo, plan, env, plan.targetState.indexUnmerged);
  }
  return next;
}

/**
 * Step 5's refresh, limited to the entries whose stat data can be stale: files
 * the merge wrote and entries T's index changed. `git add --refresh` takes a
 * pathspec, but one that matches no entry is fatal, so only paths in T's index
 * (asked in one cat-file) are named; conflicted paths have no stat to refresh.
 * Returns the pathspecs, empty when none, or null to refresh every entry.
 */
async function refreshPaths(repo: Repo, plan: RestorePlan): Promise<Uint8Array | null> {
  const t = plan.targetState;
  const conflicted = new Set(t.indexUnmerged ? decodeUnmerged(t.indexUnmerged).map((e) => pathKey(e.path)) : []);
  const paths = new Map<string, Uint8Array>();
  for (const f of [...plan.worktree.files, ...(plan.index?.entries ?? [])]) {
    if (f.newMode !== MODE.absent && !conflicted.has(pathKey(f.raw))) paths.set(pathKey(f.raw), f.raw);
  }
  if (paths.size === 0) return new Uint8Array();
  const raws = [...paths.values()];
  // A newline in a name does not fit cat-file's lines: refresh everything.
  if (raws.some((r) => r.includes(10))) return null;
  const nl = Buffer.from("\n");
  const query = Buffer.concat(raws.flatMap((r) => [Buffer.from(`${t.index}:`), r, nl]));
  const answers = (await repo.git.text(["cat-file", "--batch-check"], { input: query })).split("\n");
  const inIndex = raws.filter((_, i) => answers[i] !== undefined && !answers[i]!.endsWith(" missing"));
  return Buffer.concat(inIndex.flatMap((r) => [Buffer.from(":(literal)"), r, Buffer.from([0])]));
}

async function refreshChanged(repo: Repo, next: string, pathspecs: Uint8Array | null): Promise<void> {
  const env = { GIT_INDEX_FILE: next };
  if (pathspecs === null) await repo.git.run(["update-index", "-q", "--refresh"], { env, okExit: [1] });
  else if (pathspecs.length) await repo.git.run(["add", "--refresh", "--pathspec-from-file=-", "--pathspec-file-nul"], { env, input: pathspecs, okExit: [1] });
}
