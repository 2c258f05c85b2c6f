// lstat that answers null for a path with nothing at it (or that cannot be
// looked at): the checks of the kept index and the restore's file steps ask it
// for paths that are mostly missing, and a missing one raises no exception
// (building one costs more than the lstat).
import { lstatSync, type Stats } from "node:fs";

/** The path's lstat, or null when nothing is there or it cannot be read. */
export function lstatOrNull(path: string | Buffer): Stats | null {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
