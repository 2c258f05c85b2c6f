// How much of .git only snapshots hold: the objects reachable from snapshot
// commits and from nothing else (no other ref, reflog or index), and their size
// on disk. That is what deleting those snapshots frees once `git gc` prunes.
import type { ObjectId } from "../format/index.ts";
import type { Repo } from "../repo.ts";
import { scanUndoRefs } from "../git-data/refs/index.ts";

export interface Space {
  /** Objects only the measured snapshots reach. */
  objects: number;
  /** Their size on disk (packed: compressed, and a delta's own size). */
  bytes: number;
}

/**
 * The objects reachable from `held` commits and from neither `others` nor any
 * ref outside refs/undo/, reflog entry or index (of any worktree), with their
 * size: the reflogs' commits (one `rev-list --no-walk`), one `rev-list
 * --objects` walk, then one `cat-file --batch-check`. The walk takes out the
 * trees of every ref, reflog entry and index, and of the user's commits it
 * meets, but does not walk the user's whole history: an object a snapshot
 * shares only with an old commit deep under a branch counts as the snapshot's.
 * The figure is an upper bound, exact in the common case.
 */
export async function heldOnlyBy(repo: Repo, held: readonly ObjectId[], others: readonly ObjectId[]): Promise<Space> {
  if (!held.length) return { objects: 0, bytes: 0 };
  // Reflog entries are listed first (--stdin, empty: no reflog at all is no error), to go on the walk's command line: only those get their trees
  // taken out. A snapshot ref's own reflog (core.logAllRefUpdates=always) names only its snapshot, left out here.
  const snapshots = new Set([...held, ...others]);
  const reflogs = (await repo.git.text(["rev-list", "--no-walk", "--reflog", "--stdin"], { input: "" })).split("\n").filter((c) => c !== "" && !snapshots.has(c));
  const input = [...held, ...[...others, ...new Set(reflogs)].map((o) => `^${o}`)].join("\n") + "\n";
  // Edge-aggressive: the tree of every commit on the command line is taken out, not only the snapshots' parents'.
  const args = ["rev-list", "--objects", "--objects-edge-aggressive", "--no-object-names", "--stdin", "--not", "--exclude=refs/undo/*", "--all", "--indexed-objects"];
  // Edges (the commits taken out) are listed as "-<id>".
  const ids = (await repo.git.text(args, { input })).split("\n").filter((l) => l !== "" && !l.startsWith("-"));
  return diskSize(repo, ids);
}

/** The size on disk of these objects, in one cat-file; a missing one counts as nothing. */
async function diskSize(repo: Repo, ids: readonly ObjectId[]): Promise<{ objects: number; bytes: number }> {
  if (!ids.length) return { objects: 0, bytes: 0 };
  const out = await repo.git.text(["cat-file", "--batch-check=%(objectsize:disk)"], { input: ids.join("\n") + "\n" });
  let objects = 0;
  let bytes = 0;
  for (const line of out.split("\n")) {
    if (!/^[0-9]+$/.test(line)) continue; // "<id> missing"
    objects++;
    bytes += Number(line);
  }
  return { objects, bytes };
}

/** What every snapshot of every worktree holds alone. */
export async function snapshotSpace(repo: Repo): Promise<Space> {
  const refs = await scanUndoRefs(repo);
  return heldOnlyBy(repo, [...new Set(refs.map((r) => r.commit))], []);
}

/**
 * What deleting these snapshots would free: the objects they reach that no
 * other snapshot (of any worktree), ref, reflog or index does.
 */
export async function spaceFreedBy(repo: Repo, doomed: readonly { ref: string; commit: ObjectId }[]): Promise<Space> {
  const goneRefs = new Set(doomed.map((s) => s.ref));
  const kept = new Set((await scanUndoRefs(repo)).filter((r) => !goneRefs.has(r.ref)).map((r) => r.commit));
  // A commit another kept ref names is not freed either.
  return heldOnlyBy(repo, [...new Set(doomed.map((s) => s.commit))].filter((c) => !kept.has(c)), [...kept]);
}

/** The size of .git's objects (loose and packed), from `count-objects -v`. */
export async function objectStoreSize(repo: Repo): Promise<number> {
  const out = await repo.git.text(["count-objects", "-v"]);
  let kib = 0;
  for (const line of out.split("\n")) {
    const m = /^(size|size-pack|size-garbage): ([0-9]+)$/.exec(line);
    if (m) kib += Number(m[2]);
  }
  return kib * 1024;
}
