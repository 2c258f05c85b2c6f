// The files of state trees as the finders search them: the index and the
// working tree, and what changed in them between pairs of state trees.
import { blobAfter, diffTreePairs } from "../git-data/tree-diff.ts";
import type { ObjectId } from "../format/index.ts";
import type { Repo } from "../repo.ts";

/** The state-tree entries whose files are searched: the index and the working tree. */
export const FILE_TREES = ["index", "worktree"] as const;

/** One changed file of a state-tree diff: `index/<path>` or `worktree/<path>`, and its blob after (null: removed). */
export interface Change {
  where: (typeof FILE_TREES)[number];
  path: Uint8Array;
  blob: ObjectId | null;
}

/** Every pair's changes to the index and working-tree files, in one `git diff-tree --stdin` (core/git-data/tree-diff.ts). */
export async function diffPairs(repo: Repo, pairs: readonly [ObjectId, ObjectId][], pathspecs: readonly string[], flags: readonly string[] = []): Promise<Map<string, Change[]>> {
  const result = new Map<string, Change[]>();
  for (const [header, records] of await diffTreePairs(repo, pairs, { pathspecs, flags })) {
    const changes: Change[] = [];
    for (const { meta, path: full } of records) {
      const slash = full.indexOf(0x2f);
      const top = Buffer.from(full.subarray(0, slash)).toString("latin1");
      if (slash === -1 || (top !== "index" && top !== "worktree")) continue;
      changes.push({ where: top, path: full.subarray(slash + 1), blob: blobAfter(meta) });
    }
    result.set(header, changes);
  }
  return result;
}
