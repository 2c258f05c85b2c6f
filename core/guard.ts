// The guard: git-undo's core.fsmonitor hook, a point before every command.
//
// Git runs the monitor hook (protocol 2: `<hook> 2 <token>`) before it reads
// the working tree, in every process that reads the index. The guard is
// hooks/hook.sh called with `guard` first: it leaves a request,
// <gitdir>/undo/guard.<its pid> holding the pid of the Git process that ran
// it, and waits (bounded) until the worker deletes it; then it answers `/`
// ("anything may have changed"), which is always true, so Git does exactly
// what it would do without a monitor. The worker, which knows processes,
// decides for each request (worker/guard-desk.ts):
//   - a command that may throw away working-tree content (`reset --hard`,
//     `checkout -- <path>`, `clean`, ...) has the state recorded first, so an
//     edit no command saw is in a snapshot before Git overwrites it;
//   - an earlier command that ended 250 ms or more before this one started and
//     is not recorded yet is recorded first, so a busy machine never merges
//     two commands a person typed;
//   - a command that writes files without firing a hook (`clean`, `restore`,
//     `checkout -- <path>`, `apply`) is marked like any other, so it gets a
//     snapshot of its own;
//   - any other command goes on at once, and its refresh of the index is not
//     taken for a change (a monitor that answers `/` makes `git status`
//     rewrite the index every time).
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Config, gitBool, type Repo } from "./repo.ts";
import { shq as shQuote } from "./hooks/template.ts";
import { GUARD_ANSWER_PREFIX, guardFile, undoFile } from "./undo-files.ts";
import { replaceFile } from "./files.ts";
import { GUARD_ARG, monitorSetting, parseGuardCommand } from "./monitor-setting.ts";
import { unwatchableTree } from "./file-system.ts";

/** The monitor protocol the guard speaks (core.fsmonitorHookVersion). */
export const GUARD_PROTOCOL = 2;
/** A request's file name: `guard.<pid of the guard's shell>`. */
/** How long one wait of the guard's loop lasts (hooks/hook.sh sleeps 0.01 s). */
export const GUARD_TICK_MS = 10;

/**
 * The value of core.fsmonitor that runs the guard. Git runs it through the
 * shell with the version and token appended (`<value> "$@"`): the function
 * reads the template into that same shell (one shell, not two: starting one
 * costs Git more than the guard's own work), with `guard` before Git's
 * arguments. A toolkit deleted since makes it fail silently, which Git takes
 * as "/".
 */
export function guardCommand(root: string, bun: string): string {
  const hook = shQuote(join(root, "hooks", "hook.sh"));
  return `git_undo_guard() { [ -f ${hook} ] || return 1; GIT_UNDO_HOOK_BUN=${shQuote(bun)} GIT_UNDO_HOOK_ROOT=${shQuote(root)}; set -- ${GUARD_ARG} "$@"; . ${hook}; }; git_undo_guard 2>/dev/null`;
}

/** A guard waiting in a Git command for the worker's word. */
export interface GuardRequest {
  /** Its file, <gitdir>/undo/guard.<shellPid>. */
  file: string;
  /** The guard's own shell. */
  shellPid: number;
  /** The Git process that ran the guard; null when the file holds no pid (yet). */
  gitPid: number | null;
  /** The token Git gave the guard (its second line). */
  token: string;
  /** The work tree the command runs on: Git runs the guard at its top (the third line; empty when missing). */
  workTree: string;
  /** When the guard wrote it (ms since the epoch). */
  madeMs: number;
}

/** The requests waiting in `undoDir`, oldest first. */
export function guardRequests(undoDir: string): GuardRequest[] {
  let names: string[];
  try {
    names = readdirSync(undoDir);
  } catch {
    return [];
  }
  const found: GuardRequest[] = [];
  for (const name of names) {
    const g = guardFile(name);
    if (g?.kind !== "request") continue;
    const file = join(undoDir, name);
    try {
      const st = statSync(file);
      if (!st.isFile()) continue;
      const [pid = "", token = "", workTree = ""] = st.size <= 8192 ? readFileSync(file, "utf8").split("\n") : [];
      found.push({ file, shellPid: g.pid, gitPid: /^[1-9]\d{0,9}$/.test(pid) ? Number(pid) : null, token, workTree, madeMs: st.mtimeMs });
    } catch {
      /* answered meanwhile */
    }
  }
  return found.sort((a, b) => a.madeMs - b.madeMs);
}

/** The file the guard reads its answer from: `answer.<pid of the guard's shell>`. */
const answerFile = (undoDir: string, shellPid: number): string => join(undoDir, `${GUARD_ANSWER_PREFIX}${shellPid}`);

/**
 * Let the guard go on: its Git command continues once the request is gone.
 * With an answer, the guard prints it (its lines: the Git process's pid, the
 * new token, then the paths that may have changed, or "/"); without one, "/".
 */
export function answerGuard(req: Pick<GuardRequest, "file" | "shellPid" | "gitPid">, answer: { token: string; paths: Buffer[] | null } | null = null): void {
  if (answer !== null && req.gitPid !== null) {
    const dir = req.file.slice(0, req.file.lastIndexOf("/"));
    const target = answerFile(dir, req.shellPid);
    const lines = [Buffer.from(`${req.gitPid}\n${answer.token}\n`), ...(answer.paths === null ? [Buffer.from("/\n")] : answer.paths.flatMap((p) => [p, NEWLINE]))];
    try {
      // Whole or not at all: the guard may read it the moment the request is gone.
      writeFileSync(`${target}.tmp`, Buffer.concat(lines));
      renameSync(`${target}.tmp`, target);
    } catch {
      rmSync(`${target}.tmp`, { force: true });
    }
  }
  rmSync(req.file, { force: true });
}

const NEWLINE = Buffer.from("\n");

/** Answers left by guards that are gone (`alive` says which shells still run). */
export function dropOldAnswers(undoDir: string, alive: (pid: number) => boolean): void {
  let names: string[];
  try {
    names = readdirSync(undoDir);
  } catch {
    return;
  }
  for (const name of names) {
    const g = guardFile(name);
    if (g?.kind === "answer" && !alive(g.pid)) rmSync(join(undoDir, name), { force: true });
  }
}

/** Tell the guard how long it may wait for the worker (undo.guardTimeout), in its loop's ticks. */
export function writeGuardBound(undoDir: string, timeoutMs: number): void {
  const ticks = String(Math.max(0, Math.ceil(timeoutMs / GUARD_TICK_MS)));
  const file = undoFile(undoDir, "guardTicks");
  try {
    if (readFileSync(file, "latin1").trim() === ticks) return;
  } catch {
    /* not written yet */
  }
  try {
    writeFileSync(file, `${ticks}\n`);
  } catch {
    /* the guard then waits its default */
  }
}

/** What a Git command may do to the working tree, as far as the guard cares. */
export interface CommandEffect {
  /** It may overwrite or delete working-tree content that no snapshot holds: record first. */
  discards: boolean;
  /** It may change what git-undo records without firing a hook of its own: mark it. */
  marks: boolean;
  /** It discards only when this word names no commit (`git checkout x`: a branch, or a file). */
  unlessCommit?: string;
  /** It changes nothing git-undo records: an index it writes is a refresh of stat data, no change. */
  readOnly?: boolean;
  /**
   * Paths every answer to it lists, whatever the watch saw: `git rm` and `git
   * mv` of a submodule edit .gitmodules after asking the monitor, then stage
   * it trusting the monitor's word that it did not change (Git's own fault,
   * seen in its t3600 with any monitor), so the change would not be staged.
   */
  alwaysList?: string[];
  /**
   * It deletes unreachable objects however new (`git prune` with no
   * `--expire` or `--expire=now`, `git gc --prune=now`): what is still to be
   * recorded is recorded first, so that the snapshot's ref is among the refs
   * it reads. Otherwise it could take the objects of a snapshot whose ref is
   * made while it runs. (An expiry in the past, `gc`'s two weeks, spares
   * objects made now: `gc --auto`, which a commit may start, waits for nothing.)
   */
  prunes?: boolean;
}

/** A command that discards nothing and needs no mark of the guard's. */
export const NO_EFFECT: CommandEffect = { discards: false, marks: false };
const DISCARDS: CommandEffect = { discards: true, marks: true };
const MARKS: CommandEffect = { discards: false, marks: true };
const READ_ONLY: CommandEffect = { discards: false, marks: false, readOnly: true };

/** Commands that only read (an index they write holds fresher stat data, nothing else). */
const READ_ONLY_COMMANDS = new Set([
  "status", "diff", "diff-files", "diff-index", "diff-tree", "log", "show", "whatchanged", "shortlog", "ls-files", "ls-tree",
  "grep", "blame", "annotate", "describe", "rev-parse", "rev-list", "cat-file", "for-each-ref", "name-rev", "check-ignore",
  "check-attr", "difftool", "format-patch", "archive", "count-objects", "var", "help", "version", "show-ref", "show-branch", "range-diff",
]);

/** Git's options that come before the command and take a value as the next word. */
const GLOBAL_WITH_VALUE = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path", "--list-cmds", "--attr-source"]);

/** The command's name and its arguments, from a command line (its words joined by spaces). */
export function gitCommandWords(commandLine: string): { name: string; args: string[] } | null {
  const words = commandLine.split(" ").filter((w) => w !== "");
  if (words.length === 0) return null;
  const program = words[0]!.slice(words[0]!.lastIndexOf("/") + 1);
  // A dashed form (git-reset) as Git's own children may run.
  if (program.startsWith("git-") && program !== "git-undo") return { name: program.slice(4), args: words.slice(1) };
  if (program !== "git") return null;
  let i = 1;
  while (i < words.length && words[i]!.startsWith("-")) {
    const w = words[i]!;
    i += GLOBAL_WITH_VALUE.has(w) ? 2 : 1;
  }
  if (i >= words.length) return null;
  return { name: words[i]!, args: words.slice(i + 1) };
}

/** The value of `--name=value` or `--name value` among `args`; null when absent. */
function optionValue(args: readonly string[], name: string): string | null {
  for (let i = 0; i < args.length; i++) {
    if (args[i]!.startsWith(`${name}=`)) return args[i]!.slice(name.length + 1);
    if (args[i] === name && i + 1 < args.length) return args[i + 1]!;
  }
  return null;
}

/**
 * What the command on this command line may do (see CommandEffect). Where the
 * words alone cannot tell (`git checkout x`: a branch or a file?), it is taken
 * to discard: a needless recording costs time, a missed one costs work.
 */
export function commandEffect(commandLine: string | null): CommandEffect {
  if (commandLine === null) return NO_EFFECT;
  const cmd = gitCommandWords(commandLine);
  if (!cmd) return NO_EFFECT;
  const { name, args } = cmd;
  const has = (...flags: string[]) => args.some((a) => flags.includes(a) || flags.some((f) => f.startsWith("--") && a.startsWith(`${f}=`)));
  const shortFlag = (letter: string) => args.some((a) => /^-[A-Za-z]+$/.test(a) && a.includes(letter));
  const dashDash = args.indexOf("--");
  switch (name) {
    case "reset":
      return has("--hard", "--merge", "--keep") ? DISCARDS : NO_EFFECT;
    case "checkout": {
      if (has("-f", "--force", "--overlay", "--no-overlay", "-p", "--patch", "--ours", "--theirs", "-m", "--merge", "--pathspec-from-file") || shortFlag("f") || shortFlag("p")) return DISCARDS;
      if (dashDash >= 0 && dashDash < args.length - 1) return DISCARDS;
      // Words that are not options: a branch to switch to alone, or paths.
      const plain = args.filter((a, i) => !a.startsWith("-") && !(i > 0 && ["-b", "-B", "--orphan"].includes(args[i - 1]!)));
      if (has("-b", "-B", "--orphan", "--detach") || shortFlag("b") || shortFlag("B")) return plain.length > 1 ? DISCARDS : NO_EFFECT;
      if (plain.length === 1) return { ...DISCARDS, unlessCommit: plain[0]! };
      return plain.length === 0 ? NO_EFFECT : DISCARDS;
    }
    case "switch":
      return has("-f", "--force", "--discard-changes") || shortFlag("f") ? DISCARDS : NO_EFFECT;
    case "restore":
      // --staged alone leaves the files; the index's blobs are in the object store already.
      return has("--staged", "-S") && !has("--worktree", "-W") && !shortFlag("W") ? MARKS : DISCARDS;
    case "clean":
      return has("-n", "--dry-run") || shortFlag("n") ? NO_EFFECT : DISCARDS;
    case "stash": {
      const sub = args.find((a) => !a.startsWith("-"));
      return sub === undefined || sub === "push" || sub === "save" ? DISCARDS : NO_EFFECT;
    }
    case "rm":
      return { ...(has("-f", "--force") || shortFlag("f") ? DISCARDS : NO_EFFECT), alwaysList: [".gitmodules"] };
    case "mv":
      return { ...NO_EFFECT, alwaysList: [".gitmodules"] };
    case "read-tree":
      return has("-u") ? DISCARDS : NO_EFFECT;
    case "checkout-index":
      return has("-f", "--force") || shortFlag("f") ? DISCARDS : MARKS;
    case "merge":
    case "rebase":
    case "cherry-pick":
    case "revert":
    case "am":
      return has("--abort", "--skip") ? DISCARDS : NO_EFFECT;
    case "apply":
      return has("--cached", "--check", "--stat", "--numstat", "--summary") && !has("--index") ? NO_EFFECT : MARKS;
    case "prune": {
      if (has("-n", "--dry-run")) return NO_EFFECT;
      const expire = optionValue(args, "--expire");
      return expire === null || expire === "now" || expire === "all" ? { ...NO_EFFECT, prunes: true } : NO_EFFECT;
    }
    case "gc": {
      const prune = optionValue(args, "--prune");
      return prune === "now" || prune === "all" ? { ...NO_EFFECT, prunes: true } : NO_EFFECT;
    }
    default:
      return READ_ONLY_COMMANDS.has(name) ? READ_ONLY : NO_EFFECT;
  }
}

/** What `git undo init` did about the guard. */
export type GuardInstall =
  | { action: "create" | "update" | "unchanged" }
  /** undo.guard is false: not registered (an earlier registration is taken out). */
  | { action: "off" }
  /** undo.guard is unset, and the worker cannot watch this tree (why): not registered. */
  | { action: "unwatchable"; why: string }
  /** A bare repository: no working tree to guard. */
  | { action: "bare" }
  /** The user's own monitor stays: Git's daemon or a hook of theirs. */
  | { action: "kept"; monitor: "builtin" | "hook"; command: string };


/**
 * Whether init registers the guard: undo.guard when it is set; unset, where
 * the worker can watch the working tree (`unwatchable`, from
 * core/file-system.ts unwatchableTree, is null). Elsewhere every answer would
 * be "look at every file", and Git would then rewrite the index on every
 * status: there the guard is the user's choice.
 */
export const guardWanted = (config: Pick<Config, "guard">, unwatchable: string | null): boolean => config.guard ?? unwatchable === null;

/**
 * guardWanted for the working tree `workTree` on `platform`, and why the tree
 * cannot be watched when that is what decides (undo.guard unset); the file
 * system is looked at only then.
 */
export function guardChoice(config: Pick<Config, "guard">, workTree: string, platform: string): { wanted: boolean; unwatchable: string | null } {
  const unwatchable = config.guard === null ? unwatchableTree(workTree, platform) : null;
  return { wanted: guardWanted(config, unwatchable), unwatchable };
}

/**
 * Register the guard as core.fsmonitor in the repository's configuration,
 * unless the user has a monitor of their own (kept: Git runs one), or the
 * guard is not wanted (guardWanted).
 */
export async function installGuard(repo: Repo, root: string, bun: string, platform: string): Promise<GuardInstall> {
  if (repo.bare || repo.workTree === null) return { action: "bare" };
  const value = repo.settings.get("core.fsmonitor");
  const now = monitorSetting(value, gitBool);
  const { wanted, unwatchable } = guardChoice(repo.config, repo.workTree, platform);
  if (!wanted) {
    if (now.kind === "guard") await removeGuard(repo);
    return unwatchable === null ? { action: "off" } : { action: "unwatchable", why: unwatchable };
  }
  if (now.kind === "builtin" || now.kind === "hook") return { action: "kept", monitor: now.kind, command: value ?? "" };
  const command = guardCommand(root, bun);
  const version = repo.settings.get("core.fsmonitorhookversion");
  if (now.kind === "guard" && value === command && version === String(GUARD_PROTOCOL)) return { action: "unchanged" };
  if (now.kind === "none" && version !== undefined && !existsSync(savedVersionFile(repo))) {
    writeFileSync(savedVersionFile(repo), `${version ?? ""}\n`);
  }
  await repo.git.run(["config", "--local", "core.fsmonitor", command]);
  await repo.git.run(["config", "--local", "core.fsmonitorHookVersion", String(GUARD_PROTOCOL)]);
  return { action: now.kind === "guard" ? "update" : "create" };
}

/** Where init keeps the core.fsmonitorHookVersion it replaced (its value, or empty for none). */
const savedVersionFile = (repo: Pick<Repo, "commonDir">): string => undoFile(join(repo.commonDir, "undo"), "guardReplacedHookVersion");

/**
 * Take the guard out of the configuration (only when core.fsmonitor is
 * ours), put back the core.fsmonitorHookVersion it replaced, and drop the
 * monitor's extension from this worktree's index. False when it was not there.
 */
export async function removeGuard(repo: Repo): Promise<boolean> {
  const local = await repo.git.run(["config", "--local", "--get", "core.fsmonitor"], { okExit: [1] });
  if (parseGuardCommand(new TextDecoder().decode(local.stdout).replace(/\n$/, "")) === null) return false;
  await repo.git.run(["config", "--local", "--unset-all", "core.fsmonitor"], { okExit: [5] });
  const saved = savedVersionFile(repo);
  let before: string | null = null;
  try {
    before = readFileSync(saved, "utf8").replace(/\n$/, "");
  } catch {
    /* init set it where there was none */
  }
  if (before) await repo.git.run(["config", "--local", "core.fsmonitorHookVersion", before]);
  else await repo.git.run(["config", "--local", "--unset-all", "core.fsmonitorHookVersion"], { okExit: [5] });
  rmSync(saved, { force: true });
  // The index keeps the guard's token until told: without a monitor, Git drops it at its next write anyway.
  if (!repo.bare) await repo.git.run(["update-index", "--no-fsmonitor"], { okExit: [128] });
  return true;
}

/**
 * The worker reads the guard's requests again: the guards wait for it as long
 * as their bound allows once more (a guard that waited out its whole bound
 * with the worker alive left guard-unanswered, and those after it stopped
 * waiting).
 */
export function guardHeard(undoDir: string): void {
  try {
    unlinkSync(undoFile(undoDir, "guardUnanswered"));
  } catch {
    /* not there: the usual case */
  }
}

/** The worker a guard waited its whole bound for, alive, when no request has been read since; null when none. */
export function guardUnanswered(undoDir: string): number | null {
  try {
    const pid = readFileSync(undoFile(undoDir, "guardUnanswered"), "latin1").trim();
    return /^[1-9]\d{0,9}$/.test(pid) ? Number(pid) : null;
  } catch {
    return null;
  }
}

/** Say in <gitdir>/undo/watch-state whether the guard's answers come from a watch, and why not. */
export function writeWatchState(undoDir: string, state: string): void {
  try {
    replaceFile(undoFile(undoDir, "watchState"), `${state}\n`);
  } catch {
    /* doctor then says nothing of it */
  }
}

/** What watch-state says; null when no worker wrote it. */
export function readWatchState(undoDir: string): string | null {
  try {
    return readFileSync(undoFile(undoDir, "watchState"), "utf8").trim() || null;
  } catch {
    return null;
  }
}
