// The hooks folder: wherever Git runs hooks from (core.hooksPath, or
// <common dir>/hooks), and whether it is inside the repository or shared.
import { realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Repo } from "../repo.ts";

export type FolderWhere = "default" | "inside" | "outside";

export interface HooksFolder {
  /** Absolute path of the folder Git runs hooks from. */
  dir: string;
  /** core.hooksPath as configured (includeIf and includes count), or null. */
  configured: string | null;
  /** Where that setting comes from (`file:...`). */
  origin: string | null;
  /** The default folder, one inside the repository, or one outside it (shared by other repositories). */
  where: FolderWhere;
  /** Why hooks cannot run from there, if they cannot. */
  problem: string | null;
}

/** The path with its links resolved; as given when it cannot be. */
export function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Whether `path` is `dir` or inside it. */
export const within = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);

/**
 * The hooks folder as Git sees it. Our own Git calls override core.hooksPath
 * on the command line, so the setting is read with its origins and
 * command-line values are skipped; Git then resolves the path (~, relative).
 */
export async function hooksFolder(repo: Repo): Promise<HooksFolder> {
  const r = await repo.git.run(["config", "--show-origin", "-z", "--get-all", "core.hooksPath"], { okExit: [1] });
  const parts = new TextDecoder().decode(r.stdout).split("\0");
  let configured: string | null = null;
  let origin: string | null = null;
  for (let i = 0; i + 1 < parts.length; i += 2) {
    if (parts[i]!.startsWith("command line:")) continue;
    origin = parts[i]!;
    configured = parts[i + 1]!;
  }
  if (configured === null) {
    return { dir: join(repo.commonDir, "hooks"), configured, origin, where: "default", problem: null };
  }
  const dir =
    configured === ""
      ? join(repo.commonDir, "hooks")
      : await repo.git.line(["-c", `core.hooksPath=${configured}`, "rev-parse", "--path-format=absolute", "--git-path", "hooks"]);
  let problem: string | null = null;
  let st;
  try {
    st = statSync(dir);
  } catch {
    st = null;
  }
  if (dir === "/dev/null") problem = "core.hooksPath is /dev/null, which turns all hooks off";
  else if (st === null) problem = `core.hooksPath names ${dir}, which does not exist`;
  else if (!st.isDirectory()) problem = `core.hooksPath names ${dir}, which is not a folder`;
  const rdir = real(dir);
  const inside = within(rdir, real(repo.commonDir)) || (repo.workTree !== null && within(rdir, real(repo.workTree)));
  return { dir, configured, origin, where: inside ? "inside" : "outside", problem };
}

/** The folders that may hold our hooks: the current one and the default one. */
export async function candidateFolders(repo: Repo): Promise<HooksFolder[]> {
  const current = await hooksFolder(repo);
  const folders = [current];
  const def = join(repo.commonDir, "hooks");
  if (real(current.dir) !== real(def)) folders.push({ dir: def, configured: null, origin: null, where: "default", problem: null });
  return folders;
}
