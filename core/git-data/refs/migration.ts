// `git refs migrate` under way, or done since a capture began: read from
// files alone, for the worker and for every recording.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readUndoFile } from "../../files.ts";
import { refStoreOf } from "./store.ts";
import type { Repo } from "../../repo.ts";

/**
 * Whether `git refs migrate` is moving this repository's refs to another
 * format: it builds the new store in <gitdir>/ref_migration.XXXXXX. Git's
 * manual warns that writes meanwhile can leave the repository inconsistent,
 * so nothing is read or written for a snapshot until it is done.
 */
export function refMigrationRunning(gitDir: string): boolean {
  try {
    return readdirSync(gitDir).some((name) => name.startsWith("ref_migration."));
  } catch {
    return false;
  }
}

/**
 * Whether the ref format a capture began with is still the repository's: a
 * migration that ran meanwhile leaves, in place of the files backend's HEAD,
 * the stub reftable keeps for older Gits, or takes the reftable folder away.
 * Read from files alone, for every recording.
 */
export function refFormatKept(repo: Pick<Repo, "gitDir" | "commonDir" | "settings">): boolean {
  if (refMigrationRunning(repo.commonDir)) return false;
  if (refStoreOf(repo).name === "reftable") return existsSync(join(repo.commonDir, "reftable"));
  const head = readUndoFile(join(repo.gitDir, "HEAD"))?.toString("latin1") ?? "";
  return !/^ref: refs\/heads\/\.invalid\s*$/.test(head);
}
