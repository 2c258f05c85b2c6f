// Digests of the rules Git reads besides the index for `git add -A`: the
// attribute files outside the working tree, and the ignore rules that can
// apply to the kept index's paths. Equal digests let the kept index skip
// git check-ignore (core/git-data/index/kept.ts).
import { lstatSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { Repo } from "../../repo.ts";

/** The user's file a setting names (`~/` expanded, as Git expands it), else $XDG_CONFIG_HOME/git/<name>, Git's default for it. */
function userGitFile(repo: Repo, key: "core.attributesfile" | "core.excludesfile", name: string): string {
  const configured = repo.settings.get(key);
  // Git itself reads $HOME; node:os (loaded only then) answers without one.
  const home = repo.env.HOME || (require("node:os") as typeof import("node:os")).homedir();
  return configured ? configured.replace(/^~(?=\/|$)/, home) : join(repo.env.XDG_CONFIG_HOME || join(home, ".config"), "git", name);
}

/** Digest of the attribute files Git reads besides the working tree's .gitattributes (read before add -A runs). */
export function attributesDigest(repo: Repo): string {
  const files = [join(repo.commonDir, "info", "attributes"), userGitFile(repo, "core.attributesfile", "attributes")];
  if (!repo.env.GIT_ATTR_NOSYSTEM) files.push("/etc/gitattributes", "/usr/local/etc/gitattributes");
  const parts = files.map((f) => {
    try {
      return `${f}\0${Bun.hash(readFileSync(f)).toString(16)}`;
    } catch {
      return `${f}\0-`;
    }
  });
  return Bun.hash(parts.join("\n")).toString(16);
}

/** Every folder above `paths`, the top of the working tree ("") included, sorted. */
export function foldersAbove(paths: readonly string[]): string[] {
  const dirs = new Set<string>([""]);
  for (const p of paths) for (let at = p.lastIndexOf("/"); at > 0; at = p.lastIndexOf("/", at - 1)) dirs.add(p.slice(0, at));
  return [...dirs].sort();
}

/** Past this many folders above the paths a commit changed, their ignore rules are not read (check-ignore runs next time too). */
export const MAX_RULE_FOLDERS = 256;

/** Files larger than this make the digest unknown (null): no .gitignore is that large. */
const MAX_RULES_FILE = 1024 * 1024;

/**
 * Digest of every ignore rule that can apply to a path in `dirs`:
 * info/exclude and the user's excludes file (core.excludesFile, else
 * $XDG_CONFIG_HOME/git/ignore; links followed, as Git follows them), and the
 * .gitignore of each of those folders, each by its content. Null when one
 * cannot be read, or a .gitignore is a symbolic link (Git before 2.32 reads
 * through it, later ones do not): check-ignore runs then.
 */
export function ignoreRulesDigest(repo: Repo, workTree: string, dirs: readonly string[]): string | null {
  const h = new Bun.CryptoHasher("sha256");
  const add = (file: string, follow: boolean): boolean => {
    let st;
    try {
      // Most folders have no .gitignore: no exception for that (one costs more than the lstat).
      st = follow ? statSync(file, { throwIfNoEntry: false }) : lstatSync(file, { throwIfNoEntry: false });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOTDIR") return false;
    }
    if (st === undefined) {
      h.update(`${file}\0none\0`);
      return true;
    }
    if (!st.isFile()) {
      if (st.isSymbolicLink()) return false;
      h.update(`${file}\0other\0`);
      return true;
    }
    if (st.size > MAX_RULES_FILE) return false;
    try {
      const content = readFileSync(file);
      h.update(`${file}\0file\0${content.length}\0`).update(content);
      return true;
    } catch {
      return false;
    }
  };
  const excludes = userGitFile(repo, "core.excludesfile", "ignore");
  // A relative core.excludesFile is read from where Git runs: not something to digest.
  if (!isAbsolute(excludes)) return null;
  const outside = [join(repo.commonDir, "info", "exclude"), excludes];
  for (const f of outside) if (!add(f, true)) return null;
  for (const d of dirs) if (!add(join(workTree, d, ".gitignore"), false)) return null;
  return h.digest("hex");
}
