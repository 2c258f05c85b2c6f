// Installing and removing git-undo's hooks. The hooks folder is wherever Git
// runs hooks from (core.hooksPath, or <common dir>/hooks). A hook we create is
// ours entirely; in a hook the user already has, we add one marked block right
// after its #! line and touch nothing else, so removing that block gives the
// user's file back byte for byte. A hook we cannot add lines to (a Python
// script, a symbolic link) is either left alone because it calls
// hooks/hook.sh itself, or, with the user's consent, chained: it keeps its
// content under <hook>.local and our hook, in its place, runs it with the same
// arguments and stdin and ends with its exit status.
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
  realpathSync,
  renameSync,
  rmdirSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { toolkitRoot } from "../bundle.ts";
import { decodeBytes, nulRecords } from "../bytes.ts";
import { refused, type HookProblem } from "../errors.ts";
import { replaceFile } from "../lock.ts";
import { gitBool, type Repo } from "../repo.ts";
import { undoFile } from "../undo-files.ts";

export const HOOK_NAMES = ["reference-transaction", "post-index-change"] as const;
export type HookName = (typeof HOOK_NAMES)[number];

/** The checkout this code runs from: the hooks start its worker. */
export const TOOLKIT_ROOT = toolkitRoot();

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

export const BEGIN = "# >>> git-undo >>>";
export const END = "# <<< git-undo <<<";
/** Line 2 of a hook git-undo created: uninstall deletes such a file rather than editing it. */
export const CREATED_NOTE = "# git-undo: 'git undo init' created this file; 'git undo uninstall' deletes it.";
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

const HOOK_PATH_END = /\/hooks\/(?:hook\.sh|reference-transaction|post-index-change)(?![\w.-])/g;

/** The toolkit paths a hook names in a call of git-undo's hook (hooks/hook.sh, or the older hooks/<event>), absolute ones only. */
export function toolkitsNamed(content: string): string[] {
  const roots: string[] = [];
  for (const m of content.matchAll(HOOK_PATH_END)) {
    // The path runs back to a quote, whitespace, `=`, `(` or `[`.
    const before = content.slice(0, m.index);
    const start = Math.max(...["'", '"', " ", "\t", "\n", "=", "(", "["].map((c) => before.lastIndexOf(c))) + 1;
    const root = before.slice(start);
    if (root.startsWith("/")) roots.push(root);
  }
  return roots;
}

/**
 * The toolkit a hook calls git-undo's hook from: a path it names whose folder
 * holds a git-undo toolkit. The call is trusted to pass the hook's arguments
 * on; only the user's hook shows that.
 */
export const toolkitCalledBy = (content: string): string | null =>
  toolkitsNamed(content).find((root) => existsSync(join(root, "worker", "main.ts"))) ?? null;

/** The line a user's own hook can run to record with git-undo (its arguments follow). */
export function hookCallLine(root: string, bun: string): string {
  return `GIT_UNDO_HOOK_BUN=${shq(bun)} sh ${shq(join(root, "hooks", HOOK_TEMPLATE))}`;
}

/** Quote for sh: single quotes, with embedded ones closed and escaped. */
export const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export interface RenderedHook {
  /** A whole hook file, for when the user has none. */
  file: string;
  /** The marked block alone, for adding to the user's hook. */
  block: string;
}

/** Every hook, file or config-defined, is this one template (its block tells the events apart by their arguments). */
export const HOOK_TEMPLATE = "hook.sh";

/** The hook for `name` (hooks/hook.sh) with this checkout's path and Bun written in. */
export function renderHook(name: HookName, root: string, bun: string, template?: string): RenderedHook {
  const text = template ?? readFileSync(join(TOOLKIT_ROOT, "hooks", HOOK_TEMPLATE), "utf8");
  const file = text
    .replace(/^(\s*)git_undo_root=.*$/m, (_, sp: string) => `${sp}git_undo_root=${shq(root)}`)
    .replace(/^(\s*)git_undo_bun=.*$/m, (_, sp: string) => `${sp}git_undo_bun=${shq(bun)}`);
  const span = findBlock(file);
  if (!span) throw new Error(`hooks/${name} has no git-undo block`);
  return { file, block: file.slice(span.start, span.end) };
}

/** Where our block is: from the start of its BEGIN line to just after its END line. */
export function findBlock(content: string): { start: number; end: number } | null {
  let begin = content.startsWith(BEGIN) ? 0 : content.indexOf(`\n${BEGIN}`);
  if (begin < 0) return null;
  if (begin > 0) begin++;
  const endAt = content.indexOf(`\n${END}`, begin);
  if (endAt < 0) return null;
  const nl = content.indexOf("\n", endAt + 1 + END.length);
  return { start: begin, end: nl < 0 ? content.length : nl + 1 };
}

/** Put our block right after the #! line, so it runs before anything that could exit. */
export function insertBlock(content: string, block: string): string {
  if (!content.startsWith("#!")) return block + content;
  const nl = content.indexOf("\n");
  if (nl < 0) return `${content}\n${block}`;
  return content.slice(0, nl + 1) + block + content.slice(nl + 1);
}

/** The hook without our block; null when the whole file was ours and should go. */
export function removeBlock(content: string): string | null {
  const span = findBlock(content);
  if (!span) return content;
  const rest = content.slice(0, span.start) + content.slice(span.end);
  const lines = rest.split("\n");
  if (lines[1] === CREATED_NOTE) {
    lines.splice(1, 1);
    const left = lines.join("\n");
    return /^#![^\n]*\n?$/.test(left) ? null : left;
  }
  return rest;
}

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "posh", "busybox"]);

/** Whether a hook is run by a POSIX-style shell (no #! line: Git runs it with sh). */
export function shellInterpreter(content: string): string | null {
  if (!content.startsWith("#!")) return "sh";
  const words = content.slice(2, content.indexOf("\n") < 0 ? undefined : content.indexOf("\n")).trim().split(/\s+/);
  let prog = basename(words[0] ?? "");
  if (prog === "env") prog = basename(words.slice(1).find((w) => !w.startsWith("-")) ?? "");
  return SHELLS.has(prog) ? prog : null;
}

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

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

const within = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);

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

/** The folders that may hold our hooks: the current one and the default one. */
export async function candidateFolders(repo: Repo): Promise<HooksFolder[]> {
  const current = await hooksFolder(repo);
  const folders = [current];
  const def = join(repo.commonDir, "hooks");
  if (real(current.dir) !== real(def)) folders.push({ dir: def, configured: null, origin: null, where: "default", problem: null });
  return folders;
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

/** The Bun the hooks should start the worker with: GIT_UNDO_BUN when it names one, else the Bun `running` this command. */
export function hookBun(env: Readonly<Record<string, string | undefined>>, running: string): string {
  const chosen = env.GIT_UNDO_BUN;
  return chosen && existsSync(chosen) ? chosen : running;
}

// Config-defined hooks (Git 2.54 and newer): `hook.<name>.command` run for each
// `hook.<name>.event`. There git-undo is one entry in the repository's own
// configuration, running hooks/<event> straight from the toolkit, so no file in
// the hooks folder is written and no hook manager or same-named file is touched.

/** The name git-undo's config hook goes by: hook.git-undo.command, .event, .enabled. */
export const CONFIG_HOOK = "git-undo";
/** The first Git that runs hooks the configuration defines. */
export const CONFIG_HOOKS_SINCE: readonly [number, number] = [2, 54];

/** The Git on PATH as [major, minor, patch]. */
export async function gitVersion(repo: Repo): Promise<[number, number, number]> {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(await repo.git.line(["version"]));
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : [0, 0, 0];
}

export const versionAtLeast = (v: readonly number[], want: readonly [number, number]): boolean =>
  v[0]! > want[0] || (v[0] === want[0] && v[1]! >= want[1]);

/**
 * The command of git-undo's config hook. Git runs a command with shell syntax
 * as `sh -c '<command> "$@"'` with the hook's arguments, so the template gets
 * them as a file hook would; stdin goes on to it untouched. The template finds
 * the toolkit from its own path and Bun in GIT_UNDO_HOOK_BUN.
 */
export function configHookCommand(root: string, bun: string): string {
  // A toolkit deleted since leaves Git silent and unharmed: no file, no call (a
  // failing reference-transaction hook would abort the command), and sh's words nowhere.
  const hook = shq(`${root}/hooks/${HOOK_TEMPLATE}`);
  return `[ ! -f ${hook} ] || GIT_UNDO_HOOK_BUN=${shq(bun)} exec sh ${hook} 2>/dev/null`;
}

const SHQ = `'((?:[^']|'\\\\'')*)'`;
/** As configHookCommand writes it, or as earlier versions did (no check, no redirection). */
const OUR_COMMAND = new RegExp(`^(?:\\[ ! -f ${SHQ} \\] \\|\\| )?GIT_UNDO_HOOK_BUN=${SHQ} exec sh ${SHQ}(?: 2>/dev/null)?$`);
/** The command earlier versions registered: one script per event, picked by the number of arguments. */
const EARLIER_COMMAND = new RegExp(`^case \\$# in 1\\) h=reference-transaction ;; \\*\\) h=post-index-change ;; esac; GIT_UNDO_HOOK_BUN=${SHQ} exec sh ${SHQ}"\\$h"$`);
const unq = (s: string): string => s.replace(/'\\''/g, "'");

/** The toolkit and Bun a command written by configHookCommand (or an earlier version's) names; null for any other command. */
export function parseConfigHookCommand(command: string): { root: string; bun: string } | null {
  const m = OUR_COMMAND.exec(command);
  if (m) {
    const script = unq(m[3]!);
    const suffix = `/hooks/${HOOK_TEMPLATE}`;
    if (m[1] !== undefined && unq(m[1]) !== script) return null;
    return script.endsWith(suffix) ? { root: script.slice(0, -suffix.length), bun: unq(m[2]!) } : null;
  }
  const e = EARLIER_COMMAND.exec(command);
  if (!e) return null;
  const dir = unq(e[2]!);
  return dir.endsWith("/hooks/") ? { root: dir.slice(0, -"/hooks/".length), bun: unq(e[1]!) } : null;
}

/** One hook the configuration defines, all scopes merged the way Git merges them. */
export interface ConfigHook {
  name: string;
  /** The last command (Git uses the last one), or null when only events are set. */
  command: string | null;
  /** Where that command comes from: `file:<path>`, `command line:`. */
  commandOrigin: string | null;
  /** Its events, every scope. */
  events: string[];
  /** hook.<name>.enabled, last value; null when unset. */
  enabled: boolean | null;
  enabledOrigin: string | null;
  /** Entries in the repository's own configuration (scope local). */
  local: { command: string | null; events: string[]; others: number };
}

/** Every hook the configuration defines (read on any Git: older ones just never run them). */
export async function configHooks(repo: Repo): Promise<ConfigHook[]> {
  const r = await repo.git.run(["config", "-z", "--show-scope", "--show-origin", "--get-regexp", "^hook\\."], { okExit: [1] });
  const parts = new TextDecoder().decode(r.stdout).split("\0");
  const byName = new Map<string, ConfigHook>();
  for (let i = 0; i + 2 < parts.length; i += 3) {
    const scope = parts[i]!;
    const origin = parts[i + 1]!;
    const rec = parts[i + 2]!;
    const nl = rec.indexOf("\n");
    const key = nl < 0 ? rec : rec.slice(0, nl);
    const value = nl < 0 ? null : rec.slice(nl + 1);
    const m = /^hook\.(.+)\.([^.]+)$/s.exec(key);
    if (!m) continue;
    const name = m[1]!;
    let h = byName.get(name);
    if (!h) {
      h = { name, command: null, commandOrigin: null, events: [], enabled: null, enabledOrigin: null, local: { command: null, events: [], others: 0 } };
      byName.set(name, h);
    }
    const local = scope === "local";
    if (m[2] === "command") {
      h.command = value ?? "";
      h.commandOrigin = origin;
      if (local) h.local.command = value ?? "";
    } else if (m[2] === "event") {
      if (value !== null) h.events.push(value);
      if (local && value !== null) h.local.events.push(value);
    } else {
      if (m[2] === "enabled") {
        h.enabled = gitBool(value) ?? false; // Git refuses such a value; it runs nothing then
        h.enabledOrigin = origin;
      }
      if (local) h.local.others++;
    }
  }
  return [...byName.values()];
}

export type ConfigHookAction = "create" | "update" | "unchanged";

export interface ConfigHookInstall {
  action: ConfigHookAction;
  /** The configuration file written: <common dir>/config. */
  file: string;
  /** hook.git-undo.enabled=false as the user set it (init leaves it): Git then runs nothing of ours. */
  disabledIn: string | null;
}

/** Register git-undo in the repository's configuration: the command and both events. */
export async function installConfigHook(repo: Repo, root: string, bun: string): Promise<ConfigHookInstall> {
  const ours = (await configHooks(repo)).find((h) => h.name === CONFIG_HOOK);
  const command = configHookCommand(root, bun);
  let action: ConfigHookAction = "unchanged";
  if (ours?.local.command !== command) {
    await repo.git.run(["config", "--local", "--replace-all", `hook.${CONFIG_HOOK}.command`, command]);
    action = ours?.local.command == null ? "create" : "update";
  }
  for (const event of HOOK_NAMES) {
    if (ours?.local.events.includes(event)) continue;
    await repo.git.run(["config", "--local", "--add", `hook.${CONFIG_HOOK}.event`, event]);
    if (action === "unchanged") action = "update";
  }
  const disabledIn = ours && ours.enabled === false ? (ours.enabledOrigin ?? "").replace(/^file:/, "") : null;
  return { action, file: join(repo.commonDir, "config"), disabledIn };
}

/**
 * Take out what installConfigHook added: its command (when git-undo wrote it)
 * and its two events, and the section when nothing else is left in it, so the
 * configuration file is as it was. Returns whether anything was removed.
 */
export async function removeConfigHook(repo: Repo): Promise<boolean> {
  const ours = (await configHooks(repo)).find((h) => h.name === CONFIG_HOOK);
  if (!ours) return false;
  const key = (v: string) => `hook.${CONFIG_HOOK}.${v}`;
  let removed = false;
  if (ours.local.command !== null && parseConfigHookCommand(ours.local.command)) {
    await repo.git.run(["config", "--local", "--unset-all", key("command")]);
    removed = true;
  }
  if (removed && ours.local.events.some((e) => (HOOK_NAMES as readonly string[]).includes(e))) {
    await repo.git.run(["config", "--local", "--unset-all", key("event"), `^(${HOOK_NAMES.join("|")})$`]);
  }
  if (!removed) return false;
  const left = await repo.git.run(["config", "--local", "--get-regexp", `^hook\\.${CONFIG_HOOK}\\.`], { okExit: [1] });
  if (left.exitCode === 1) await repo.git.run(["config", "--local", "--remove-section", `hook.${CONFIG_HOOK}`], { okExit: [128] });
  return true;
}

// Snapshots in other tools: `git log --decorate`, gitk and tig would label
// every commit a snapshot holds with refs/undo/... names. init adds one
// log.excludeDecoration value to the repository's configuration (unless one
// the user set already hides them) and leaves a mark that it did, so
// uninstall takes out that value and never one the user set.

/** The value init adds to log.excludeDecoration. */
export const EXCLUDED_DECORATION = "refs/undo/";

/** Whether a log.excludeDecoration value hides refs/undo/snapshots/…, matched as Git's log-tree.c matches it. */
export function hidesSnapshots(value: string): boolean {
  // normalize_glob_ref: "refs/" put in front when missing, a trailing "/" dropped.
  const pattern = (value.startsWith("refs/") ? value : `refs/${value}`).replace(/\/$/, "");
  const ref = "refs/undo/snapshots/0000000001";
  if (!/[*?[\\]/.test(pattern)) return ref.startsWith(`${pattern}/`);
  // wildmatch without WM_PATHNAME: * and ? cross "/" too.
  const re = pattern.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*+/g, ".*").replace(/\?/g, ".");
  try {
    return new RegExp(`^${re}$`).test(ref);
  } catch {
    return false;
  }
}

const decorationMark = (repo: Repo): string => undoFile(join(repo.commonDir, "undo"), "excludedDecoration");

async function excludedDecorations(repo: Repo, scope: string[]): Promise<string[]> {
  // Exit 1: no value (and no output).
  return (await repo.git.text(["config", ...scope, "--get-all", "log.excludeDecoration"], { okExit: [1] })).split("\n").filter(Boolean);
}

export type DecorationAction = "added" | "unchanged" | "user's";

/** Hide snapshots from log decorations: add EXCLUDED_DECORATION unless a value already hides them. */
export async function hideSnapshotDecorations(repo: Repo): Promise<DecorationAction> {
  const mark = decorationMark(repo);
  const values = await excludedDecorations(repo, []);
  if (existsSync(mark) && values.includes(EXCLUDED_DECORATION)) return "unchanged";
  if (values.some(hidesSnapshots)) return "user's";
  await repo.git.run(["config", "--local", "--add", "log.excludeDecoration", EXCLUDED_DECORATION]);
  mkdirSync(dirname(mark), { recursive: true });
  writeFileSync(mark, `${EXCLUDED_DECORATION}\n`);
  return "added";
}

/** Take out the value hideSnapshotDecorations added (one copy: the user may have put in the same). Returns whether one was removed. */
export async function showSnapshotDecorations(repo: Repo): Promise<boolean> {
  const mark = decorationMark(repo);
  if (!existsSync(mark)) return false;
  const copies = (await excludedDecorations(repo, ["--local"])).filter((v) => v === EXCLUDED_DECORATION).length;
  if (copies > 0) {
    await repo.git.run(["config", "--local", "--unset-all", "log.excludeDecoration", `^${EXCLUDED_DECORATION}$`]);
    for (let i = 1; i < copies; i++) await repo.git.run(["config", "--local", "--add", "log.excludeDecoration", EXCLUDED_DECORATION]);
    const left = await repo.git.run(["config", "--local", "--get-regexp", "^log\\."], { okExit: [1] });
    if (left.exitCode === 1) await repo.git.run(["config", "--local", "--remove-section", "log"], { okExit: [128] });
  }
  unlinkSync(mark);
  return copies > 0;
}
