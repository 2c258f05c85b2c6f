// The markers Git leaves for an operation in progress (rebase-merge,
// MERGE_HEAD, sequencer...): files in the git dir, except with reftable, which
// keeps two of them (REF_MARKERS) as refs. Read here as files, and from the
// answers Git gave for the refs; each ref storage's backend
// (core/git-data/refs/) reads them with its state, and core/git-data/operation.ts
// asks the storage for them.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { OPERATION_MARKERS, type OperationMarker } from "../format/index.ts";

/** The markers present as files in `gitDir`, in the format's order. */
export function markerFiles(gitDir: string): OperationMarker[] {
  return OPERATION_MARKERS.filter((m) => existsSync(join(gitDir, m)));
}

/** Pseudo-refs among the markers: files with the files storage, refs with reftable. */
export const REF_MARKERS = ["CHERRY_PICK_HEAD", "REVERT_HEAD"] as const satisfies readonly OperationMarker[];

/** `cat-file --batch-check=%(objectname)` input asking for REF_MARKERS (the reftable backend, core/git-data/refs/reftable-store.ts, adds it to a batch of its own). */
export const REF_MARKER_QUERY = REF_MARKERS.map((n) => `${n}\n`).join("");

/**
 * The markers in the format's order: the files in `gitDir`, and the marker
 * refs whose answers to REF_MARKER_QUERY (one line each, in order) name an object.
 */
export function markersWith(gitDir: string, refAnswers: readonly string[]): OperationMarker[] {
  const refs = REF_MARKERS.filter((_, i) => refAnswers[i] && !refAnswers[i]!.endsWith(" missing"));
  const files = markerFiles(gitDir);
  return OPERATION_MARKERS.filter((m) => files.includes(m) || (refs as readonly string[]).includes(m));
}
