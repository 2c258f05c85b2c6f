// Installing and removing git-undo's hooks. The hooks folder is wherever Git
// runs hooks from (core.hooksPath, or <common dir>/hooks). A hook we create is
// ours entirely; in a hook the user already has, we add one marked block right
// after its #! line and touch nothing else, so removing that block gives the
// user's file back byte for byte. A hook we cannot add lines to (a Python
// script, a symbolic link) is either left alone because it calls
// hooks/hook.sh itself, or, with the user's consent, chained: it keeps its
// content under <hook>.local and our hook, in its place, runs it with the same
// arguments and stdin and ends with its exit status.
// The template and its block are core/hooks/template.ts's, the folder
// core/hooks/folder.ts's; hooks the configuration defines (Git 2.54 and
// newer) are core/hooks/config.ts's.
import {
  chmodSync,
  copyFileSync,
  constants as fsConstants,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { refused, type HookProblem } from "../errors.ts";
import { replaceFile } from "../files.ts";
import type { Repo } from "../repo.ts";
import { hooksFolder, real, within, type HooksFolder } from "./folder.ts";
import { findBlock, HOOK_NAMES, insertBlock, removeBlock, renderHook, shellInterpreter, toolkitCalledBy, toolkitsNamed, TOOLKIT_ROOT, type HookName } from "./template.ts";

const EXCLUDE_NOTE = "# git-undo: hook written by 'git undo init' (uninstall removes this and the next line)";

/** Where a chained hook keeps the user's own: beside ours, same name plus this. */
export const CHAIN_SUFFIX = ".local";
/** The first line of what follows our block in a chained hook: uninstall puts the user's hook back where it finds it. */
export const CHAIN_NOTE = "# git-undo: your own hook is kept beside this file as <this hook>.local ('git undo init --chain').";
/**
 * The rest of a chained hook. Git runs a hook by its path, so "$0.local" is
 * the user's hook wherever the folder is. exec: the same arguments, stdin
 * (our block reads none) and pid, and its exit status is the hook's (a
 * reference-transaction hook failing in "prepared" aborts the command, as the
 * user's did before). A hook that is gone or not executable Git would not
 * have run either.
 */
const CHAIN_TAIL = `${CHAIN_NOTE}
# It runs next, with the same arguments and stdin; its exit status is this hook's.
# 'git undo uninstall' puts it back in this file's place.
[ -x "$0${CHAIN_SUFFIX}" ] || exit 0
exec "$0${CHAIN_SUFFIX}" "$@"
`;

/** Whether a hook is one init --chain wrote (the user's hook then lives at <path>.local). */
export const isChained = (content: string): boolean => findBlock(content) !== null && content.includes(`\n${CHAIN_NOTE}\n`);

/** chain: the user's hook moves to <path>.local and ours runs it; called: the user's hook calls ours already (nothing written). */
export type HookAction = "create" | "insert" | "update" | "unchanged" | "chain" | "called";

export interface HookChange {
  name: HookName;
  path: string;
  action: HookAction;
  content: string;
  mode: number;
  /** chain: where the user's hook is kept. called: the toolkit it calls. */
  local?: string;
  calls?: string;
}

/** A hook init can take part in only by chaining it (or by the user calling ours from it). */
export interface Unchained {
  name: HookName;
  path: string;
  why: "not-shell" | "symlink";
  /** not-shell: its #! line. symlink: where it points. */
  detail: string;
}

export interface InstallPlan {
  folder: HooksFolder;
  changes: HookChange[];
  /** Paths (relative to the worktree top) to add to info/exclude: new hooks inside the worktree. */
  exclude: string[];
  /** Hooks left out because chaining was not asked for: applyInstall refuses while there are any. */
  unchained: Unchained[];
}

export interface InstallOptions {
  root?: string;
  bun: string;
  /** Allow a hooks folder outside the repository. */
  globalHooks?: boolean;
  /** Chain hooks that are not shell scripts, or are symbolic links (see CHAIN_TAIL). */
  chain?: boolean;
}

/** Work out every file init would write, refusing (before writing anything) when one cannot be. */
export async function planInstall(repo: Repo, opts: InstallOptions): Promise<InstallPlan> {
  const folder = await hooksFolder(repo);
  if (folder.problem) {
    throw refused({ kind: "hooks-folder-unusable", problem: folder.problem, origin: folder.origin ? folder.origin.replace(/^file:/, "") : null });
  }
  if (folder.where === "outside" && !opts.globalHooks) {
    throw refused({ kind: "hooks-folder-outside", dir: folder.dir, origin: folder.origin ? folder.origin.replace(/^file:/, "") : null });
  }
  const root = opts.root ?? TOOLKIT_ROOT;
  const problems: HookProblem[] = [];
  const changes: HookChange[] = [];
  const exclude: string[] = [];
  const unchainedHooks: Unchained[] = [];
  const chainExcludes: string[] = [];
  // A folder in the working tree (husky's .husky/_, a tracked .githooks) can hold tracked files.
  const inWorktree =
    repo.workTree !== null && within(real(folder.dir), real(repo.workTree)) && !within(real(folder.dir), real(repo.commonDir));
  for (const name of HOOK_NAMES) {
    const path = join(folder.dir, name);
    const rendered = renderHook(name, root, opts.bun);
    let st;
    try {
      st = lstatSync(path);
    } catch {
      st = null;
    }
    if (inWorktree) {
      const rel = relative(real(repo.workTree!), join(real(folder.dir), name));
      const tracked = (await repo.git.text(["ls-files", "-z", "--", `:(literal)${rel}`])).length > 0;
      if (tracked) {
        problems.push({ path: rel, why: "tracked" });
        continue;
      }
      if (st === null && !(await repo.git.succeeds(["check-ignore", "-q", "--", rel]))) exclude.push(rel);
    }
    if (st === null) {
      changes.push({ name, path, action: "create", content: rendered.file, mode: 0o755 });
      continue;
    }
    // What a chain would need: <hook>.local free, and (in the working tree) left out of `git status`.
    const chainTo = (): string | null => {
      const local = path + CHAIN_SUFFIX;
      if (existsSync(local) || isSymlink(local)) {
        problems.push({ path: local, why: "local-exists", hook: name });
        return null;
      }
      return local;
    };
    const unchained = (why: Unchained["why"], detail: string): void => {
      if (!opts.chain) {
        unchainedHooks.push({ name, path, why, detail });
        return;
      }
      const local = chainTo();
      if (local === null) return;
      changes.push({ name, path, action: "chain", content: rendered.file + CHAIN_TAIL, mode: 0o755, local });
      if (inWorktree) chainExcludes.push(relative(real(repo.workTree!), join(real(folder.dir), name + CHAIN_SUFFIX)));
    };
    if (st.isSymbolicLink()) {
      // The link stays as it is under <hook>.local: a hook shared by several repositories keeps being shared.
      const target = readlinkSync(path);
      let linked: string | null = null;
      try {
        linked = readFileSync(path, "utf8");
      } catch {
        /* dangling: Git runs nothing there */
      }
      const span = linked !== null ? findBlock(linked) : null;
      if (span && linked !== null) {
        // The user put our block in the linked file (as init suggested before --chain): theirs to keep up to date.
        changes.push({ name, path, action: "unchanged", content: linked, mode: 0 });
        continue;
      }
      const calls = linked !== null ? toolkitCalledBy(linked) : null;
      if (calls !== null) {
        changes.push({ name, path, action: "called", content: linked!, mode: 0, calls });
        continue;
      }
      unchained("symlink", target);
      continue;
    }
    if (!st.isFile()) {
      problems.push({ path, why: "not-regular" });
      continue;
    }
    const content = readFileSync(path, "utf8");
    const span = findBlock(content);
    if (span) {
      const updated = content.slice(0, span.start) + rendered.block + content.slice(span.end);
      changes.push({ name, path, action: updated === content ? "unchanged" : "update", content: updated, mode: st.mode & 0o7777 });
      continue;
    }
    if ((st.mode & 0o111) === 0) {
      problems.push({ path, why: "not-executable" });
      continue;
    }
    if (shellInterpreter(content) === null) {
      const calls = toolkitCalledBy(content);
      if (calls !== null) changes.push({ name, path, action: "called", content, mode: st.mode & 0o7777, calls });
      else unchained("not-shell", content.split("\n", 1)[0]!);
      continue;
    }
    changes.push({ name, path, action: "insert", content: insertBlock(content, rendered.block), mode: st.mode & 0o7777 });
  }
  for (const rel of chainExcludes) if (!(await repo.git.succeeds(["check-ignore", "-q", "--", rel]))) exclude.push(rel);
  if (problems.length) throw refused({ kind: "hooks-in-the-way", problems });
  return { folder, changes, exclude, unchained: unchainedHooks };
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Keep the user's hook at `local` and put ours at `path`. The user's hook is
 * never without a name: `local` is made beside it first (a hard link, a copy
 * where the file system has none, or the same symbolic link), then ours
 * replaces `path` in one rename; if that fails, `local` goes again.
 */
function chainHook(path: string, local: string, content: string, mode: number): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) symlinkSync(readlinkSync(path), local);
  else {
    try {
      linkSync(path, local);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") throw e;
      copyFileSync(path, local, fsConstants.COPYFILE_EXCL);
      chmodSync(local, st.mode & 0o7777);
    }
  }
  try {
    replaceFile(path, content, mode);
  } catch (e) {
    unlinkSync(local);
    throw e;
  }
}

export function applyInstall(repo: Repo, plan: InstallPlan): void {
  if (plan.unchained.length) throw new Error(`hooks not chained: ${plan.unchained.map((u) => u.path).join(", ")}`);
  mkdirSync(plan.folder.dir, { recursive: true });
  for (const c of plan.changes) {
    if (c.action === "chain") chainHook(c.path, c.local!, c.content, c.mode);
    else if (c.action !== "unchanged" && c.action !== "called") replaceFile(c.path, c.content, c.mode);
  }
  if (plan.exclude.length) {
    const path = join(repo.commonDir, "info", "exclude");
    mkdirSync(dirname(path), { recursive: true });
    let content = existsSync(path) ? readFileSync(path, "utf8") : "";
    for (const rel of plan.exclude) {
      const line = `/${rel}`;
      if (content.includes(`${EXCLUDE_NOTE}\n${line}\n`)) continue;
      if (content && !content.endsWith("\n")) content += "\n";
      content += `${EXCLUDE_NOTE}\n${line}\n`;
    }
    writeFileSync(path, content);
  }
}


export interface RemovedHook {
  path: string;
  deleted: boolean;
  /** The user's hook that init --chain kept at <path>.local is back at `path`. */
  restored?: boolean;
}

/** Remove our blocks (and files we created) from `folders`, and our info/exclude lines. */
export function removeHooks(repo: Repo, folders: readonly HooksFolder[]): RemovedHook[] {
  const removed: RemovedHook[] = [];
  for (const folder of folders) {
    for (const name of HOOK_NAMES) {
      const path = join(folder.dir, name);
      let st;
      try {
        st = lstatSync(path);
      } catch {
        continue;
      }
      if (!st.isFile()) continue;
      const content = readFileSync(path, "utf8");
      if (!findBlock(content)) continue;
      if (isChained(content)) {
        // One rename puts the user's hook back in place of ours.
        const local = path + CHAIN_SUFFIX;
        if (existsSync(local) || isSymlink(local)) {
          renameSync(local, path);
          removed.push({ path, deleted: false, restored: true });
        } else {
          unlinkSync(path);
          removed.push({ path, deleted: true });
        }
        continue;
      }
      const rest = removeBlock(content);
      if (rest === null) {
        unlinkSync(path);
        removed.push({ path, deleted: true });
      } else {
        replaceFile(path, rest, st.mode & 0o7777);
        removed.push({ path, deleted: false });
      }
    }
  }
  const exclude = join(repo.commonDir, "info", "exclude");
  if (existsSync(exclude)) {
    const content = readFileSync(exclude, "utf8");
    const kept = content.replace(new RegExp(`${EXCLUDE_NOTE.replace(/[.*+?^${}()|[\]\\']/g, "\\$&")}\\n[^\\n]*\\n?`, "g"), "");
    if (kept !== content) writeFileSync(exclude, kept);
  }
  return removed;
}

export interface HookStatus {
  name: HookName;
  path: string;
  exists: boolean;
  executable: boolean;
  /** A symbolic link (to this target), or null. */
  linkTo: string | null;
  /** Run by a shell, so init can add its block. */
  shell: boolean;
  hasBlock: boolean;
  /** The block matches what init would write now. */
  current: boolean;
  /** The toolkit path written into the block, and the Bun. */
  root: string | null;
  bun: string | null;
  /** init --chain wrote it: the user's hook is at `local`, which exists or not. */
  chained: { local: string; exists: boolean } | null;
  /** No block, but the hook calls git-undo's hook from this toolkit path (which may be gone). */
  calls: string | null;
}

/** What is installed in a folder, for doctor. */
export function hookStatus(folder: HooksFolder, root: string, bun: string): HookStatus[] {
  return HOOK_NAMES.map((name) => {
    const path = join(folder.dir, name);
    let content: string | null = null;
    let executable = false;
    let linkTo: string | null = null;
    try {
      if (lstatSync(path).isSymbolicLink()) linkTo = readlinkSync(path);
      const st = statSync(path);
      executable = st.isFile() && (st.mode & 0o111) !== 0;
      content = readFileSync(path, "utf8");
    } catch {
      /* missing */
    }
    const span = content !== null ? findBlock(content) : null;
    const block = span ? content!.slice(span.start, span.end) : null;
    const value = (key: string) => {
      const m = block ? new RegExp(`^\\s*${key}='((?:[^']|'\\\\'')*)'`, "m").exec(block) : null;
      return m ? m[1]!.replace(/'\\''/g, "'") : null;
    };
    const local = path + CHAIN_SUFFIX;
    const named = content !== null && block === null ? toolkitsNamed(content) : [];
    return {
      name,
      path,
      exists: content !== null,
      executable,
      linkTo,
      shell: content !== null && shellInterpreter(content) !== null,
      hasBlock: block !== null,
      current: block !== null && block === renderHook(name, root, bun).block,
      root: value("git_undo_root"),
      bun: value("git_undo_bun"),
      chained: content !== null && isChained(content) ? { local, exists: existsSync(local) } : null,
      calls: named.find((r) => existsSync(join(r, "worker", "main.ts"))) ?? named[0] ?? null,
    };
  });
}

