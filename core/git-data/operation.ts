// Git's operation in progress, by the markers it keeps for one (rebase-merge,
// MERGE_HEAD, sequencer...): the one reader of them, for the markers a
// snapshot records, for whether the worker and `watch` should wait, for a
// restore's --force that ends the operation, and for the facts a summary
// names (which branch a rebase rebases, where it stopped, what a merge
// merges). The markers are files in the git dir, except with reftable, which
// keeps two of them as refs (core/git-data/operation-markers.ts reads both):
// the ref storage's backend says where they are, and asks Git for the refs.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { decodeBytes } from "../bytes.ts";
import type { OperationMarker } from "../format/index.ts";
import { indexLockHeld } from "../lock.ts";
import { markerFiles } from "./operation-markers.ts";
import { refStoreOf } from "./refs/store.ts";
import type { Repo } from "../repo.ts";

/** The markers now, on either ref storage (with reftable one Git process). */
export const currentMarkers = (repo: Repo): Promise<OperationMarker[]> => refStoreOf(repo).markers(repo);

/** What the marker refs said, and the state of the ref storage when they said it. */
const refMarkersSeen = new WeakMap<Repo, { stamp: string; marker: OperationMarker | null }>();

/**
 * An operation's marker when one is in progress, else null: for callers that
 * ask often (the worker's settle, `watch`). The files come first; with
 * reftable the marker refs take Git, asked only when the ref storage changed
 * since the last answer (reftable replaces its table list on every write).
 */
export async function operationMarker(repo: Repo): Promise<OperationMarker | null> {
  const [file] = markerFiles(repo.gitDir);
  const store = refStoreOf(repo);
  if (file || !store.markerRefs) return file ?? null;
  const stamp = store.writeStamp(repo);
  const seen = refMarkersSeen.get(repo);
  if (stamp !== null && seen?.stamp === stamp) return seen.marker;
  const marker = (await store.markers(repo))[0] ?? null;
  if (stamp !== null) refMarkersSeen.set(repo, { stamp, marker });
  return marker;
}


/** index.lock alone: a Git command writing the index right now. */
export const indexLocked = (repo: Repo): boolean => indexLockHeld(repo.indexFile);

/**
 * Whether Git is in the middle of an operation, by the files it keeps for one:
 * all of it with the files storage; with reftable, operationMarker also asks
 * for the markers that are refs there.
 */
export const operationFiles = (gitDir: string): boolean => markerFiles(gitDir).length > 0;

/** What bisect keeps besides refs/bisect/*: its files, and two pseudo-refs (refs with reftable). */
const BISECT_FILES = ["BISECT_LOG", "BISECT_START", "BISECT_ANCESTORS_OK", "BISECT_NAMES", "BISECT_TERMS", "BISECT_RUN", "BISECT_FIRST_PARENT"];
const BISECT_REFS = ["BISECT_EXPECTED_REV", "BISECT_HEAD"];

/**
 * End a bisect as `git bisect reset` would, but without checking anything
 * out: bisect has no --quit. Its refs/bisect/* stay, as refs a restore puts
 * back as recorded.
 */
export async function endBisect(repo: Repo): Promise<void> {
  await repo.git.run(["update-ref", "--stdin"], { input: BISECT_REFS.map((r) => `delete ${r}\n`).join("") });
  for (const f of BISECT_FILES) rmSync(join(repo.gitDir, f), { force: true });
}

/** What Git's files say about the operation in progress, as its summary names it. */
export interface OperationFacts {
  /** rebase-apply is `git am` applying patches. */
  am: boolean;
  /** The sequencer's next step is a revert (it runs a revert of several commits). */
  revert: boolean;
  /** MERGE_MSG's first line ("" when none). */
  mergeMessage: string;
  /** The branch a rebase rebases, as a ref (head-name; "" when detached or none). */
  rebaseHead: string;
  /** The last step an interactive rebase did (rebase-merge/done), comments left out; null without one. */
  lastRebaseStep: string | null;
}

function gitFile(gitDir: string, name: string): string | null {
  try {
    return decodeBytes(readFileSync(join(gitDir, name)));
  } catch {
    return null;
  }
}

const firstLine = (text: string | null): string => (text ?? "").split("\n", 1)[0]!.trim();

/** The facts of the operation `markers` name, read from its files now. */
export function operationFacts(gitDir: string, markers: readonly OperationMarker[]): OperationFacts {
  const m = markers[0];
  const done = m === "rebase-merge" ? gitFile(gitDir, "rebase-merge/done") : null;
  return {
    am: m === "rebase-apply" && gitFile(gitDir, "rebase-apply/applying") !== null,
    revert: m === "sequencer" && /^(?:revert|r)\b/.test(firstLine(gitFile(gitDir, "sequencer/todo"))),
    mergeMessage: m === "MERGE_HEAD" ? firstLine(gitFile(gitDir, "MERGE_MSG")) : "",
    rebaseHead: m === "rebase-merge" || m === "rebase-apply" ? firstLine(gitFile(gitDir, `${m}/head-name`)) : "",
    lastRebaseStep: done === null ? null : (done.split("\n").filter((l) => l.trim() && !l.startsWith("#")).pop()?.trim() ?? ""),
  };
}
