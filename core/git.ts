// The only place that spawns Git. Every call runs with GIT_UNDO_INTERNAL=1 and
// hooks off (core.hooksPath=/dev/null, and each hook the configuration defines
// disabled by name), so no hook (ours or the user's) observes git-undo's own
// work, and failures carry the command and Git's stderr.
import { appendFileSync } from "node:fs";
import { decodeBytes, encodeBytes, hasEscapedBytes } from "./bytes.ts";
import { checkRepositoryThere } from "./repository-gone.ts";
import { traceGit, traceOn } from "./trace.ts";

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number,
    readonly stderr: string,
  ) {
    const detail = stderr.trim().split("\n").filter(Boolean).pop() ?? "";
    super(`git ${args.join(" ")} exited with ${exitCode}${detail ? `: ${detail}` : ""}`);
    this.name = "GitError";
  }
}

export interface GitRunOptions {
  /** Bytes or text written to Git's stdin. */
  input?: string | Uint8Array;
  /** Extra environment; a value of undefined removes the variable. */
  env?: Record<string, string | undefined>;
  /** Exit codes other than 0 that are a normal answer rather than an error. */
  okExit?: readonly number[];
  cwd?: string;
  /** Stops the command (SIGTERM); it then fails like any other exit code not in okExit. */
  signal?: AbortSignal;
}

export interface GitResult {
  exitCode: number;
  stdout: Uint8Array;
  stderr: string;
}

/** Git's output as a core string: non-UTF-8 bytes kept (see core/format/index.ts). */
export const text = (bytes: Uint8Array): string => decodeBytes(bytes);

/**
 * Bun hands arguments to the OS as UTF-8, so one holding non-UTF-8 bytes (a
 * ref name, a stash message) would arrive mangled; then the shell's printf
 * rebuilds every argument from octal escapes and execs Git with the exact bytes.
 */
function withExactArgs(cmd: string[]): string[] {
  if (!cmd.some(hasEscapedBytes)) return cmd;
  const octal = (arg: string) => [...encodeBytes(arg)].map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("");
  // The trailing x keeps $(...) from dropping trailing newlines.
  const assign = cmd.map((arg, i) => `a${i}=$(printf '${octal(arg)}x'); a${i}=\${a${i}%x}`);
  return ["/bin/sh", "-c", `${assign.join("; ")}; exec ${cmd.map((_, i) => `"$a${i}"`).join(" ")}`];
}

/**
 * File hooks off: Git looks for <hooksPath>/<hook>, which never exists under
 * /dev/null (checked on Git 2.31, 2.39, 2.55). A folder in a shared temp dir
 * would not do: another local user could create it first, hooks included.
 */
const NO_HOOKS = "core.hooksPath=/dev/null";
/** An empty core.fsmonitor: off, on every Git (a path before 2.36, a boolean or a path since). */
const NO_MONITOR = "core.fsmonitor=";
/** The variable `--config-env` reads "false" from (a hook name may hold "=", which `-c` cannot carry). */
const FALSE_VAR = "GIT_UNDO_FALSE";

/**
 * The hooks the configuration defines (Git 2.54+: hook.<name>.command and
 * hook.<name>.event), by name as written, case kept. Filled from the
 * configuration listing openRepo reads anyway, so switching them off costs no
 * extra Git process; shared by a Git and the Git bound from it.
 */
interface ConfigHooks {
  names: string[];
}

/** The hook names in a `git config -z --list` output. */
export function configHookNames(listing: Uint8Array): string[] {
  const names = new Set<string>();
  for (const rec of decodeBytes(listing).split("\0")) {
    const nl = rec.indexOf("\n");
    const key = nl < 0 ? rec : rec.slice(0, nl);
    // Git prints the section and the last part in lower case, the name as written.
    const m = /^hook\.(.+)\.(command|event)$/s.exec(key);
    if (m) names.add(m[1]!);
  }
  return [...names];
}

/** What goes before every internal Git command: file hooks off, each configured hook disabled. */
function hooksOff(hooks: ConfigHooks, args: readonly string[]): string[] {
  const pre = ["-c", NO_HOOKS];
  // `git config` runs no hook, and its listing stays the user's (its digest keys the kept index).
  if (args[0] === "config") return pre;
  // No monitor either: the guard (core/guard.ts) is not asked about git-undo's own reads, and every file is looked at.
  pre.push("-c", NO_MONITOR);
  for (const name of hooks.names) pre.push(`--config-env=hook.${name}.enabled=${FALSE_VAR}`);
  return pre;
}

/**
 * What goes before every command on an index of git-undo's own (the caller
 * sets GIT_INDEX_FILE): never a split index. A split index keeps most of its
 * entries in <gitdir>/sharedindex.<id>, named by content, so two indexes with
 * the same entries share one file; and every write of a new one deletes the
 * others older than splitIndex.sharedIndexExpire ("now" in Git's own tests).
 * A private split index could thus take the user's shared index away, or lose
 * its own. Not split, a copy of a split index reads the shared index once and
 * is written whole, and no write of it deletes a shared index.
 * GIT_TEST_SPLIT_INDEX (Git's test suite) would split it all the same.
 */
const OWN_INDEX = ["-c", "core.splitIndex=false", "-c", "splitIndex.sharedIndexExpire=never"];

/** Variables that would point Git somewhere other than the repository we bound to. */
const LOCATION_VARS = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_COMMON_DIR",
  "GIT_PREFIX",
  "GIT_NAMESPACE",
];

let spawned = 0;
/** How many Git processes this process has started (the bench reports it). */
export const spawnCount = (): number => spawned;

/** An environment as a process is given it: the caller's, never read from this process's own. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * A way of running Git in one place: a working directory and a base environment.
 * `Git.here(cwd, env)` runs like the user's shell would (for discovery); `bind` pins the
 * repository so that later calls never depend on the caller's environment.
 */
export class Git {
  private constructor(
    readonly cwd: string,
    private readonly baseEnv: Record<string, string>,
    /** The caller's locale, for the Git a user reads (runInteractive). */
    private readonly locale: Env,
    private readonly hooks: ConfigHooks = { names: [] },
  ) {}

  /** Git as the caller's shell would run it, in `cwd` with `env`; `overrides` replace some variables (a repository named by someone else: the worker's). */
  static here(cwd: string, env: Env, overrides: Record<string, string> = {}): Git {
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (v !== undefined) base[k] = v;
    return new Git(cwd, Git.internalEnv({ ...base, ...overrides }), { LC_ALL: env.LC_ALL, LANGUAGE: env.LANGUAGE });
  }

  private static internalEnv(env: Record<string, string>): Record<string, string> {
    env.GIT_UNDO_INTERNAL = "1";
    env[FALSE_VAR] = "false";
    env.GIT_TERMINAL_PROMPT = "0";
    // No optional locks: `add -A` runs `git status` in each checked-out
    // submodule, on the submodule's own index (Git drops GIT_INDEX_FILE for
    // it), and that status would take its index.lock to write its refresh
    // back, failing the user's command there that needs the lock. A Git
    // inherits this; the kept index's status asks for them (kept.ts).
    env.GIT_OPTIONAL_LOCKS = "0";
    // Git's messages are parsed in a few places (unmerged paths, existing refs).
    env.LC_ALL = "C";
    delete env.LANGUAGE;
    // Pathspecs given here mean what the code says (":(literal)x", a plain
    // name), whatever the user's GIT_*_PATHSPECS would make of them.
    for (const k of ["GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"]) delete env[k];
    return env;
  }

  /** A Git bound to one repository: GIT_DIR (and GIT_WORK_TREE) set, stray location variables removed. */
  bind(gitDir: string, workTree: string | null): Git {
    const env = { ...this.baseEnv };
    for (const k of LOCATION_VARS) delete env[k];
    env.GIT_DIR = gitDir;
    if (workTree !== null) env.GIT_WORK_TREE = workTree;
    return new Git(workTree ?? gitDir, env, this.locale, this.hooks);
  }

  /** This Git with some variables set besides (a recording's object quarantine, core/git-data/quarantine.ts). */
  withEnv(extra: Record<string, string>): Git {
    return new Git(this.cwd, { ...this.baseEnv, ...extra }, this.locale, this.hooks);
  }

  /** A variable as this Git's processes get it. */
  envValue(name: string): string | undefined {
    return this.baseEnv[name];
  }

  /** The hooks the configuration defines, switched off from now on (a fresh listing replaces the names). */
  private noticeConfig(args: readonly string[], stdout: Uint8Array): void {
    if (args[0] === "config" && args.includes("--list") && args.includes("-z") && args.length === 3) this.hooks.names = configHookNames(stdout);
  }

  async run(args: readonly string[], opts: GitRunOptions = {}): Promise<GitResult> {
    const env = { ...this.baseEnv };
    if (opts.env) {
      for (const [k, v] of Object.entries(opts.env)) {
        if (v === undefined) delete env[k];
        else env[k] = v;
      }
    }
    const ownIndex = opts.env?.GIT_INDEX_FILE !== undefined;
    if (ownIndex) delete env.GIT_TEST_SPLIT_INDEX;
    const cmd = ["git", ...hooksOff(this.hooks, args), ...(ownIndex ? OWN_INDEX : []), ...args];
    checkRepositoryThere();
    spawned++;
    this.traceSpawn(args);
    const input = typeof opts.input === "string" ? encodeBytes(opts.input) : opts.input;
    const proc = Bun.spawn({
      cmd: withExactArgs(cmd),
      cwd: opts.cwd ?? this.cwd,
      env,
      ...(opts.signal ? { signal: opts.signal } : {}),
      stdin: input ?? "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const started = traceOn() ? performance.now() : 0;
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(proc.stdout).bytes(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    if (started) traceGit(args, started);
    if (exitCode !== 0 && !(opts.okExit ?? []).includes(exitCode)) {
      throw new GitError(args, exitCode, stderr);
    }
    this.noticeConfig(args, stdout);
    return { exitCode, stdout, stderr };
  }

  /**
   * Run Git for the user to see (git diff for `show -p`): stdin, stdout and
   * stderr inherited, so Git colours and pages as it would in the user's shell,
   * in the user's own locale. Returns Git's exit code; never throws on it.
   */
  async runInteractive(args: readonly string[]): Promise<number> {
    const env = { ...this.baseEnv };
    for (const k of ["LC_ALL", "LANGUAGE"]) {
      const v = this.locale[k];
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    spawned++;
    this.traceSpawn(args);
    const proc = Bun.spawn({
      cmd: withExactArgs(["git", ...hooksOff(this.hooks, args), ...args]),
      cwd: this.cwd,
      env,
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    });
    return proc.exited;
  }

  /** GIT_UNDO_TRACE_SPAWNS=<file>: each Git command line appended to the file (the bench counts them). */
  private traceSpawn(args: readonly string[]): void {
    const file = this.baseEnv.GIT_UNDO_TRACE_SPAWNS;
    if (file) appendFileSync(file, `${args.join(" ")}\n`);
  }

  /** stdout as text; throws GitError on failure. */
  async text(args: readonly string[], opts: GitRunOptions = {}): Promise<string> {
    return text((await this.run(args, opts)).stdout);
  }

  /** stdout as text with the trailing newline removed. */
  async line(args: readonly string[], opts: GitRunOptions = {}): Promise<string> {
    return (await this.text(args, opts)).replace(/\n$/, "");
  }

  /** NUL-separated records of stdout (the empty tail dropped). */
  async records(args: readonly string[], opts: GitRunOptions = {}): Promise<string[]> {
    const out = await this.text(args, opts);
    const parts = out.split("\0");
    if (parts[parts.length - 1] === "") parts.pop();
    return parts;
  }

  /** Whether Git exits 0, for questions Git answers with its exit code. */
  async succeeds(args: readonly string[], opts: GitRunOptions = {}): Promise<boolean> {
    const r = await this.run(args, { ...opts, okExit: [1, 128, 129] });
    return r.exitCode === 0;
  }
}

/** The Git on PATH as [major, minor, patch]. */
export async function gitVersion(git: Git): Promise<[number, number, number]> {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(await git.line(["version"]));
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : [0, 0, 0];
}

export const versionAtLeast = (v: readonly number[], want: readonly [number, number]): boolean =>
  v[0]! > want[0] || (v[0] === want[0] && v[1]! >= want[1]);
