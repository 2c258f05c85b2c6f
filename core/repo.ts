// Repository discovery and git-undo's configuration.
import { readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fatal, refused } from "./errors.ts";
import { Git, GitError, type Env } from "./git.ts";
import { phase } from "./trace.ts";

export type ObjectFormat = "sha1" | "sha256";

export interface Config {
  /** undo.worktree: record the working tree. */
  worktree: boolean;
  /** undo.limit: snapshots kept per worktree. */
  limit: number;
  /** undo.expire: seconds after which gc forgets a snapshot; null for never. */
  expireSeconds: number | null;
  /** undo.settle: milliseconds of quiet before the worker records. */
  settleMs: number;
  /** undo.settleMax: milliseconds after which the worker records even during an operation. */
  settleMaxMs: number;
  /** color.undo, else color.ui: when the CLI colours its output; null when neither is set. */
  color: ColorWhen | null;
  /** undo.maxNewFileSize: bytes above which an untracked file is left out of `worktree`; 0 for no limit. */
  maxNewFileSize: number;
  /**
   * undo.guard: true, init registers the guard (core/guard.ts), which records
   * before commands that could throw work away; false, init takes it out and
   * the worker lets every guard's command go at once; null (unset), as true
   * where the worker can watch the tree (guardWanted), and a guard registered
   * by hand (or GIT_TEST_FSMONITOR) works everywhere.
   */
  guard: boolean | null;
  /** undo.guardTimeout: how long, in ms, a Git command may wait for the guard. */
  guardTimeoutMs: number;
  /** undo.linger: how long, in ms, the worker stays after its last command; null for its default (worker/protocol.ts). */
  lingerMs: number | null;
  /** Values set for git-undo's keys that cannot be used: each key's fallback is in force instead. */
  problems: ConfigProblem[];
}

/** git-undo's own configuration keys, as the user spells them. */
export type ConfigKey = "undo.worktree" | "undo.limit" | "undo.expire" | "undo.settle" | "undo.settleMax" | "undo.maxNewFileSize" | "undo.guard" | "undo.guardTimeout" | "undo.linger";

/** What a good value of a key is. */
export type ConfigExpectation =
  | { kind: "boolean" }
  | { kind: "age" }
  | { kind: "number"; unit: "milliseconds" | "bytes" | "snapshots"; min: number; max: number | null };

/**
 * A value git-undo cannot use (not of the key's kind, or out of its range).
 * Reading the configuration never fails on one: the key's fallback is in force
 * (its default; for undo.limit, no limit, so that no snapshot is deleted by a
 * number nobody chose), commands that would act on the value refuse, and the
 * CLI says which.
 */
export interface ConfigProblem {
  key: ConfigKey;
  /** As Git gives it; null for a key written without `=`. */
  value: string | null;
  expected: ConfigExpectation;
}

/** undo.settle's range: longer than ten seconds would make the worker look stuck. */
export const SETTLE_MAX_MS = 10_000;
/** undo.settleMax's range: an hour at most, so that a worker never sleeps for good. */
export const SETTLE_MAX_MAX_MS = 3600_000;
/** undo.guardTimeout's range: a minute at most, so that no Git command waits longer for the guard. */
export const GUARD_TIMEOUT_MAX_MS = 60_000;
/** undo.linger's range: an hour at most. */
export const LINGER_MAX_MS = 3600_000;

/** Git's three answers to "colour?": `--color=<when>`, color.ui, color.<command>. */
export type ColorWhen = "always" | "never" | "auto";

export const DEFAULT_CONFIG: Config = {
  worktree: true,
  limit: 1000,
  expireSeconds: 90 * 86400,
  settleMs: 150,
  settleMaxMs: 10 * 60 * 1000,
  color: null,
  maxNewFileSize: 64 * 1024 ** 2,
  // Opt-in for now: every command waits for a worker's round trip (a Bun start when none runs).
  guard: null,
  guardTimeoutMs: 5000,
  lingerMs: null,
  problems: [],
};

export interface Repo {
  /** Git bound to this repository (GIT_DIR/GIT_WORK_TREE set). */
  git: Git;
  /** This worktree's own git directory (absolute). */
  gitDir: string;
  /** The directory shared by all worktrees (absolute). */
  commonDir: string;
  /** Top of the working tree, or null in a bare repository. */
  workTree: string | null;
  bare: boolean;
  /** The linked worktree's name under <commonDir>/worktrees/, or null for the main worktree. */
  worktreeName: string | null;
  objectFormat: ObjectFormat;
  /** The real index file of this worktree. */
  indexFile: string;
  /** Where this worktree's snapshot refs live, ending in a slash. */
  snapshotPrefix: string;
  /** <gitDir>/undo: locks, the pending mark, the worker's files. */
  undoDir: string;
  config: Config;
  /**
   * Everything `git config --list` printed when the config was read, last
   * value per key (keys lowercased); extensions.refstorage among them, which
   * core/git-data/refs/store.ts refStoreOf reads the ref storage from.
   */
  settings: ReadonlyMap<string, string | null>;
  /** A digest of that listing: two equal digests mean Git ran with the same configuration. */
  configDigest: string;
  /** Whether no capture has used this configuration since it was read (core/capture.ts useFreshConfig). */
  configFresh: boolean;
  /** The folder the command runs in (pathspecs and the user's folder are relative to it). */
  cwd: string;
  /** The caller's environment: the variables Git reads besides its configuration. */
  env: Env;
}

/** Where a command runs: its folder and its environment, as its caller gave them. */
export interface Place {
  cwd: string;
  env: Env;
}

/** The snapshot ref prefix of a worktree (main: null). */
export function snapshotPrefixFor(worktreeName: string | null): string {
  return worktreeName === null ? "refs/undo/snapshots/" : `refs/undo/worktrees/${worktreeName}/snapshots/`;
}

/** The undo folder of a worktree (main: null), from any worktree of the repository: <its git dir>/undo. */
export function undoDirFor(commonDir: string, worktreeName: string | null): string {
  return worktreeName === null ? join(commonDir, "undo") : join(commonDir, "worktrees", worktreeName, "undo");
}

/** Bytes in one of the repository's object ids. */
export const hashLengthOf = (repo: Repo): number => (repo.objectFormat === "sha256" ? 32 : 20);

/** The empty tree's id in the repository's hash. */
export const emptyTreeOf = (repo: Repo): string =>
  repo.objectFormat === "sha256" ? "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321" : "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** Find the repository that contains `at.cwd`, as Git itself would with `at.env`. */
export function openRepo(at: Place): Promise<Repo> {
  return phase("open repository", () => discover(at));
}

/**
 * The repository a hook fired in, as the Git command that ran the hook saw
 * it: `gitDir` and the folder the hook ran in. Git runs hooks at the top of
 * the command's work tree when it has one, and in the git directory when it
 * has none. So a folder other than the git directory is the work tree, also
 * for a repository with core.bare=true used with --work-tree (a dotfiles
 * repository: `git --git-dir=~/.cfg --work-tree=~`), where GIT_DIR alone would
 * make it bare; the git directory itself means no work tree (a push into a
 * repository), where GIT_DIR alone would make Git take the git directory for
 * the work tree. The worker records what the user's own `git undo` would.
 */
export function openHookRepo(gitDir: string, at: Place): Promise<Repo> {
  if (at.cwd === "") return phase("open repository", () => discover(...placeOfGitDir(gitDir, at.env)));
  const inGitDir = resolve(at.cwd) === resolve(gitDir);
  const overrides: Record<string, string> = inGitDir ? { GIT_DIR: gitDir, GIT_CONFIG_PARAMETERS: "'core.bare'='true'" } : { GIT_DIR: gitDir, GIT_WORK_TREE: at.cwd };
  return phase("open repository", () => discover(at, overrides));
}

/**
 * The repository of a hook that ran outside any work tree (no GIT_PREFIX: a
 * clone, run from the folder above the new repository), as the git directory
 * alone says it: a linked worktree's own top, the folder holding `.git`, or
 * core.worktree; otherwise none. Never the folder the hook ran in.
 */
function placeOfGitDir(gitDir: string, env: Env): [Place, Record<string, string>] {
  let top: string | null = null;
  try {
    // A linked worktree's git dir names its `<top>/.git`.
    top = dirname(resolve(gitDir, readFileSync(join(gitDir, "gitdir"), "utf8").trim()));
  } catch {
    if (basename(gitDir) === ".git") top = dirname(gitDir);
  }
  if (top !== null) return [{ cwd: top, env }, { GIT_DIR: gitDir, GIT_WORK_TREE: top }];
  // Git itself applies core.worktree; without it the git dir as the current folder makes the repository bare.
  return [{ cwd: gitDir, env }, { GIT_DIR: gitDir }];
}

async function discover(at: Place, overrides: Record<string, string> = {}): Promise<Repo> {
  const here = Git.here(at.cwd, at.env, overrides);
  // The configuration is read at the same time, from the same folder: Git
  // finds the same repository for both. rev-parse's failure is the one reported.
  const configRead = readConfig(here);
  configRead.catch(() => {});
  let out: string;
  try {
    // --show-toplevel comes last: in a bare repository it fails after printing the rest.
    const r = await here.run(
      [
        "rev-parse",
        "--path-format=absolute",
        "--git-dir",
        "--git-common-dir",
        "--is-bare-repository",
        "--is-inside-work-tree",
        "--show-object-format",
        "--git-path",
        "index",
        "--show-toplevel",
      ],
      { okExit: [128] },
    );
    out = new TextDecoder().decode(r.stdout);
    if (r.exitCode !== 0 && out.split("\n").length < 7) throw new GitError(["rev-parse"], r.exitCode, r.stderr);
  } catch (e) {
    if (e instanceof GitError) {
      const msg = e.stderr.trim().split("\n").pop() ?? "";
      throw fatal(msg.replace(/^fatal: /, "") || "not a git repository");
    }
    throw e;
  }
  const [gitDir, commonDir, bareText, insideText, format, indexFile, top] = out.split("\n");
  if (!gitDir || !commonDir || !format || !indexFile) throw fatal("could not read the repository's layout from git rev-parse");
  // GIT_DIR set and the git directory as the current folder (a hook of a push into this
  // repository): Git takes the git directory for the work tree. It is none: no file there is the user's.
  const bare = bareText === "true" || (top !== undefined && top !== "" && resolve(top) === resolve(gitDir));
  if (!bare && insideText !== "true") throw fatal("this operation must be run in a work tree");
  const workTree = bare ? null : top || null;
  if (!bare && workTree === null) throw fatal("this operation must be run in a work tree");
  if (format !== "sha1" && format !== "sha256") throw fatal(`unsupported object format ${format}`);
  const worktreeName = gitDir === commonDir ? null : basename(gitDir);
  const git = here.bind(gitDir, workTree);
  const { config, settings, configDigest } = await configRead;
  const repo: Repo = {
    git,
    gitDir,
    commonDir,
    workTree,
    bare,
    worktreeName,
    objectFormat: format,
    indexFile,
    snapshotPrefix: snapshotPrefixFor(worktreeName),
    undoDir: join(gitDir, "undo"),
    config,
    settings,
    configDigest,
    configFresh: true,
    cwd: at.cwd,
    env: at.env,
  };
  return repo;
}

/** What one `git config --list` gives: git-undo's settings, every key, and a digest of them all. */
export interface ConfigRead {
  config: Config;
  settings: Map<string, string | null>;
  configDigest: string;
}

/**
 * Read the whole configuration in one spawn: git-undo's own keys, the colour
 * keys, and the core settings the recorder checks before it reuses its kept
 * worktree index (core/git-data/index/kept.ts), whose digest tells it whether anything changed.
 */
export async function readConfig(git: Git): Promise<ConfigRead> {
  const r = await git.run(["config", "-z", "--list"], { okExit: [1] });
  const settings = new Map<string, string | null>();
  for (const rec of new TextDecoder().decode(r.stdout).split("\0")) {
    if (!rec) continue;
    const nl = rec.indexOf("\n");
    // A key with no value ("[undo] worktree") prints no newline: Git reads it as true.
    if (nl < 0) settings.set(rec.toLowerCase(), null);
    else settings.set(rec.slice(0, nl).toLowerCase(), rec.slice(nl + 1));
  }
  return { config: parseConfig(settings), settings, configDigest: configDigest(r.stdout) };
}

/** The digest of a `git config -z --list` output. */
export const configDigest = (listing: Uint8Array): string => `${listing.length}:${Bun.hash(listing).toString(16)}`;

/** Read the configuration again (a long-running worker or watch, before each recording). */
export async function rereadConfig(repo: Repo): Promise<void> {
  const fresh = await readConfig(repo.git);
  repo.config = fresh.config;
  repo.settings = fresh.settings;
  repo.configDigest = fresh.configDigest;
  repo.configFresh = true;
}

/**
 * Turn raw undo.* values (last one wins, as Git reads them) into a Config.
 * Never fails: a value that cannot be used is a problem in `problems`, and the
 * key's fallback applies.
 */
export function parseConfig(values: ReadonlyMap<string, string | null>): Config {
  const config: Config = { ...DEFAULT_CONFIG, problems: [] };
  const problem = (key: ConfigKey, value: string | null, expected: ConfigExpectation) => config.problems.push({ key, value, expected });
  /** The value of `key` when it is set and good; a problem, and undefined, when it is set and bad. */
  const read = <T>(key: ConfigKey, expected: ConfigExpectation, parse: (value: string | null) => T | undefined): T | undefined => {
    if (!values.has(key.toLowerCase())) return undefined;
    const value = values.get(key.toLowerCase())!;
    const parsed = parse(value);
    if (parsed === undefined) problem(key, value, expected);
    return parsed;
  };
  const number = (key: ConfigKey, unit: "milliseconds" | "bytes" | "snapshots", min: number, max: number | null) =>
    read(key, { kind: "number", unit, min, max }, (v) => {
      const n = gitInteger(v);
      return n !== null && n >= min && (max === null || n <= max) ? n : undefined;
    });

  config.worktree = read("undo.worktree", { kind: "boolean" }, (v) => gitBool(v) ?? undefined) ?? config.worktree;
  const limit = number("undo.limit", "snapshots", 1, null);
  // A limit nobody chose deletes nothing: the snapshots stay until the value is fixed.
  config.limit = limit ?? (config.problems.some((p) => p.key === "undo.limit") ? Number.POSITIVE_INFINITY : config.limit);
  const expire = read("undo.expire", { kind: "age" }, (v) => ageSeconds(v ?? ""));
  if (expire !== undefined) config.expireSeconds = expire;
  config.settleMs = number("undo.settle", "milliseconds", 0, SETTLE_MAX_MS) ?? config.settleMs;
  config.settleMaxMs = number("undo.settleMax", "milliseconds", 0, SETTLE_MAX_MAX_MS) ?? config.settleMaxMs;
  config.maxNewFileSize = number("undo.maxNewFileSize", "bytes", 0, null) ?? config.maxNewFileSize;
  config.guard = read<boolean | null>("undo.guard", { kind: "boolean" }, (v) => gitBool(v) ?? undefined) ?? config.guard;
  config.guardTimeoutMs = number("undo.guardTimeout", "milliseconds", 0, GUARD_TIMEOUT_MAX_MS) ?? config.guardTimeoutMs;
  config.lingerMs = number("undo.linger", "milliseconds", 0, LINGER_MAX_MS) ?? config.lingerMs;
  // color.undo wins over color.ui, as color.diff does for git diff.
  for (const key of ["color.ui", "color.undo"]) {
    const v = values.get(key);
    if (v !== undefined) config.color = parseColorWhen(v) ?? config.color;
  }
  return config;
}

/**
 * A boolean as Git reads one (git_parse_maybe_bool): no value, true, yes, on
 * or a non-zero integer (with Git's k, m, g units) is true; false, no, off,
 * an empty value or zero is false. Null for anything else, which Git would
 * reject as a boolean; callers choose what that means for them.
 */
export function gitBool(value: string | null): boolean | null {
  if (value === null) return true;
  const v = value.trim().toLowerCase();
  if (v === "true" || v === "yes" || v === "on") return true;
  if (v === "false" || v === "no" || v === "off" || v === "") return false;
  if (/^[-+]?\d+[kmg]?$/.test(v)) return !/^[-+]?0+[kmg]?$/.test(v);
  return null;
}

/**
 * A colour setting as Git reads one: always/never/auto, or a boolean where true
 * means auto. A value Git would reject is ignored rather than fatal: a typo in
 * color.ui must never stop the recorder.
 */
export function parseColorWhen(value: string | null): ColorWhen | null {
  const v = (value ?? "true").trim().toLowerCase();
  if (v === "always" || v === "never" || v === "auto") return v;
  const b = gitBool(value);
  return b === null ? null : b ? "auto" : "never";
}

/** A whole number with Git's k, m, g units; null for anything else, or one too large to hold exactly. */
function gitInteger(value: string | null): number | null {
  const m = /^(\d+)([kmg]?)$/i.exec((value ?? "").trim());
  if (!m) return null;
  const n = Number(m[1]) * { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as "" | "k" | "m" | "g"];
  return Number.isSafeInteger(n) ? n : null;
}

const UNIT_SECONDS: [RegExp, number][] = [
  [/^(s|secs?|seconds?)$/, 1],
  [/^(mi|mins?|minutes?)$/, 60],
  [/^(h|hrs?|hours?)$/, 3600],
  [/^(d|days?)$/, 86400],
  [/^(w|weeks?)$/, 7 * 86400],
  [/^(m|mo|months?)$/, 30 * 86400],
  [/^(y|years?)$/, 365 * 86400],
];

/**
 * An age in the forms Git's expiry settings accept: `90d`, `2.weeks`, `3 months ago`,
 * `never`/`false` (null: never expire), `now`/`all` (0: everything). Returns seconds;
 * undefined for anything else.
 */
export function ageSeconds(value: string): number | null | undefined {
  const v = value.trim().toLowerCase();
  if (v === "never" || v === "false") return null;
  if (v === "now" || v === "all") return 0;
  const m = /^(\d+)[.\s]*([a-z]+?)(?:[.\s]+ago)?$/.exec(v);
  const unit = m ? UNIT_SECONDS.find(([re]) => re.test(m[2]!)) : undefined;
  if (!m || !unit) return undefined;
  const seconds = Number(m[1]) * unit[1];
  return Number.isSafeInteger(seconds) ? seconds : undefined;
}

/** An age given on the command line (`gc --expire`): as ageSeconds, refused with the forms it takes. */
export function parseAge(key: string, value: string): number | null {
  const seconds = ageSeconds(value);
  if (seconds === undefined) throw refused({ kind: "bad-age", key, value }, "usage");
  return seconds;
}
