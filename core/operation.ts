// Git's operation in progress, by the files it keeps for one in the git dir
// (rebase-merge, MERGE_HEAD, sequencer...): the one reader of them, for the
// markers a snapshot records and for the facts its summary names (which
// branch a rebase rebases, where it stopped, what a merge merges). With
// reftable, two markers are refs instead; core/ref-store.ts adds those.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeBytes } from "./bytes.ts";
import { OPERATION_MARKERS, type OperationMarker } from "./format.ts";

/** The markers present as files in `gitDir`, in the format's order. */
export function markerFiles(gitDir: string): OperationMarker[] {
  return OPERATION_MARKERS.filter((m) => existsSync(join(gitDir, m)));
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
