// Git's operation in progress, by the files it keeps for one in the git dir
// (rebase-merge, MERGE_HEAD, sequencer...): the one reader of them. With
// reftable, some markers are refs instead; core/refs.ts readMarkers adds those
// from its scan of the refs.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { OPERATION_MARKERS, type OperationMarker } from "./format.ts";

/** The markers present as files in `gitDir`, in the format's order. */
export function markerFiles(gitDir: string): OperationMarker[] {
  return OPERATION_MARKERS.filter((m) => existsSync(join(gitDir, m)));
}
