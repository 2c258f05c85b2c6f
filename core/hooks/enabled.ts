// Where the hooks record: a worktree whose <gitdir>/undo/ holds the marker
// init writes, and the submodules, repositories of their own, where it is not.
import { existsSync, lstatSync, mkdirSync, rmdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { decodeBytes, nulRecords } from "../bytes.ts";
import { replaceFile } from "../files.ts";
import type { Repo } from "../repo.ts";
import { undoFile } from "../undo-files.ts";

/**
 * Mark a worktree's <gitdir>/undo/ as one the hooks record in: they act only
 * where its marker exists (the directory alone is no sign: a snapshot taken
 * by hand creates it too), which matters when one hooks folder serves many
 * repositories. hooks/* spell the marker's name out.
 */
export function enableHooks(undoDir: string): void {
  mkdirSync(undoDir, { recursive: true });
  const marker = undoFile(undoDir, "hooksEnabled");
  // Whatever else stands there (a FIFO would hang the write) goes first; a folder with things in it stops init.
  if (!isPlainFile(marker)) {
    try {
      unlinkSync(marker);
    } catch {
      try {
        rmdirSync(marker);
      } catch {
        /* nothing there, or a folder with things in it: the write below says */
      }
    }
  }
  replaceFile(marker, "git undo init ran here; git-undo's hooks record while this file exists\n");
}

/** Whether the hooks act in this worktree: its marker, or its repository's (the hooks then copy it); a plain file, as the hooks test. */
export function hooksEnabled(repo: Repo): boolean {
  return hooksEnabledIn(repo.gitDir, repo.commonDir);
}

/** hooksEnabled for the worktree with this git dir (and its repository's common dir). */
function hooksEnabledIn(gitDir: string, commonDir: string): boolean {
  return isPlainFile(undoFile(join(gitDir, "undo"), "hooksEnabled")) || (gitDir !== commonDir && isPlainFile(undoFile(join(commonDir, "undo"), "hooksEnabled")));
}

/** A checked-out submodule, as `git submodule foreach` sees it. */
export interface Submodule {
  /** Its folder relative to the superproject's top (nested ones through theirs). */
  path: string;
  gitDir: string;
}

/** Each submodule's folder and git dirs, NUL-separated, printed by the shell Git runs in it. */
const SUBMODULE_DIRS = `printf '%s\\0' "$displaypath" "$(git rev-parse --path-format=absolute --git-dir)" "$(git rev-parse --path-format=absolute --git-common-dir)"`;

/**
 * The checked-out submodules, nested ones too, where recording is off: each is
 * a repository of its own, which the superproject's hooks never see. No Git
 * runs when the work tree has no .gitmodules. Git's last error line when it
 * cannot list them (a gitlink .gitmodules has no entry for).
 */
export async function submodulesNotRecording(repo: Repo): Promise<Submodule[] | { gitError: string }> {
  if (repo.workTree === null || !existsSync(join(repo.workTree, ".gitmodules"))) return [];
  const listed = await repo.git.run(["submodule", "foreach", "--quiet", "--recursive", SUBMODULE_DIRS], { okExit: [1, 128] });
  if (listed.exitCode !== 0) return { gitError: listed.stderr.trim().split("\n").pop() || `exit ${listed.exitCode}` };
  const fields = nulRecords(listed.stdout).map(decodeBytes);
  const off: Submodule[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const [path, gitDir, commonDir] = [fields[i]!, fields[i + 1]!, fields[i + 2]!];
    // A folder Git could not open as a repository records nothing either, but init cannot run there.
    if (gitDir && commonDir && !hooksEnabledIn(gitDir, commonDir)) off.push({ path, gitDir });
  }
  return off;
}

function isPlainFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}
