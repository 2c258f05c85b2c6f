// Temporary repositories driven by real Git, isolated from the machine's
// configuration (own HOME, GIT_CONFIG_NOSYSTEM), and the git-undo CLI run in them.
import { createHash } from "node:crypto";
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join } from "node:path";
import type { Place } from "../../core/repo.ts";
import type { OwnProcess } from "../../core/git-data/proc/index.ts";

export const ROOT = join(import.meta.dir, "..", "..");
/** What the launcher starts: the bundle when built (test/run builds it; core/bundle.ts), else the sources. */
export const CLI = existsSync(join(ROOT, "dist", "cli", "main.js")) ? join(ROOT, "dist", "cli", "main.js") : join(ROOT, "cli", "main.ts");

/** A copy of the toolkit (sources only, no bundle; dependencies linked) that a test may break. */
export function copyToolkit(): string {
  const dir = join(tempDir("toolkit"), "git-undo");
  for (const part of ["core", "cli", "worker", "hooks", "build", "package.json"]) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

const created: string[] = [];
/** Delete every directory tempDir made so far (test/setup.ts runs this after the tests; KEEP_TEST_REPOS keeps them). */
export function removeTempDirs(): void {
  if (process.env.KEEP_TEST_REPOS) return;
  for (const d of created.splice(0)) rmSync(d, { recursive: true, force: true });
}
// Parallel test workers may end without an exit event: test/setup.ts is the main cleanup.
process.on("exit", removeTempDirs);

/** A fresh directory under the system temp dir, removed when the test process exits. */
export function tempDir(label = "t"): string {
  const d = mkdtempSync(join(tmpdir(), `git-undo-${label}-`));
  created.push(d);
  return d;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RepoOptions {
  bare?: boolean;
  objectFormat?: "sha1" | "sha256";
  /** Configure user.name/user.email locally (default true). */
  identity?: boolean;
  branch?: string;
  /** The ref storage; "files" also works on Gits older than 2.45, which know no other. */
  refFormat?: "files" | "reftable";
}

/**
 * GIT_UNDO_TEST_REF_FORMAT=reftable (not a GIT_ name: isolatedEnv drops those)
 * runs the suite with reftable as every test HOME's default ref format (Git 2.45+).
 */
export const TEST_REF_FORMAT: "files" | "reftable" | null =
  process.env.GIT_UNDO_TEST_REF_FORMAT === "reftable" ? "reftable" : process.env.GIT_UNDO_TEST_REF_FORMAT === "files" ? "files" : null;

/** The ref format new test repositories get: the switch above, else Git's default (files). */
export const defaultRefFormat = (): "files" | "reftable" => TEST_REF_FORMAT ?? "files";

/**
 * The global configuration of a test HOME: with the switch set, the XDG file
 * (which `git config --global` and tests writing ~/.gitconfig leave alone) names the ref format.
 */
function prepareHome(home: string): void {
  if (TEST_REF_FORMAT === null) return;
  const dir = join(home, ".config", "git");
  if (existsSync(join(dir, "config"))) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config"), `[init]\n\tdefaultRefFormat = ${TEST_REF_FORMAT}\n`);
}

/** Git's version as numbers: [2, 45, 0]. */
export const gitVersion: () => number[] = (() => {
  let cached: number[] | undefined;
  return () => {
    if (cached) return cached;
    const out = Bun.spawnSync({ cmd: ["git", "version"], stdout: "pipe" }).stdout.toString();
    cached = (/(\d+)\.(\d+)(?:\.(\d+))?/.exec(out) ?? []).slice(1).map((n) => Number(n ?? 0));
    return cached;
  };
})();

/** Whether the Git on PATH is at least major.minor. */
export function gitAtLeast(major: number, minor: number): boolean {
  const [a = 0, b = 0] = gitVersion();
  return a > major || (a === major && b >= minor);
}

/**
 * The immediate target of a symbolic ref (not the end of a chain), or "" for
 * none: `symbolic-ref --no-recurse` from Git 2.40; older Gits have only the
 * files ref storage, where the ref's own file says it.
 */
export function immediateSymref(repo: TestRepo, name: string, cwd = repo.dir): string {
  if (gitAtLeast(2, 40)) {
    const r = repo.git(["symbolic-ref", "-q", "--no-recurse", name], { cwd, allowFail: true });
    return r.code === 0 ? r.stdout.trim() : "";
  }
  const file = repo.git(["rev-parse", "--git-path", name], { cwd }).stdout.trim();
  let content: string;
  try {
    content = readFileSync(isAbsolute(file) ? file : join(cwd, file), "utf8");
  } catch {
    return ""; // packed, or no such ref: never symbolic
  }
  return content.startsWith("ref: ") ? content.slice(5).trim() : "";
}

/** The ref storage of a test repository (extensions.refstorage, read the same way by every Git). */
export function refFormatOf(repo: TestRepo): "files" | "reftable" {
  const r = repo.git(["config", "extensions.refstorage"], { allowFail: true });
  return r.code === 0 && r.stdout.trim() === "reftable" ? "reftable" : "files";
}

/** The folder of the Git on PATH: tests that build a minimal PATH keep the Git under test. */
export const gitBinDir = (): string => dirname(Bun.which("git") ?? "/usr/bin/git");

/**
 * GIT_UNDO_TEST_VERIFY_KEPT=0 turns off the check of every kept-index reuse
 * (it doubles each recording's work): .ci/run keeps it for one Git's run only.
 */
export const VERIFY_KEPT = process.env.GIT_UNDO_TEST_VERIFY_KEPT !== "0";

export type ProcessBackend = "proc" | "ps";
/**
 * The process-table backends a test that loops over them covers: both, or
 * only the one GIT_UNDO_PROCESS_TABLE forces (.ci/run's extra run with ps).
 */
export const PROCESS_BACKENDS: readonly ProcessBackend[] =
  process.env.GIT_UNDO_PROCESS_TABLE === "ps" || process.env.GIT_UNDO_PROCESS_TABLE === "proc" ? [process.env.GIT_UNDO_PROCESS_TABLE] : ["proc", "ps"];

/** The test process as the core is given it (the entry points give theirs): its pid, and kill(pid, 0) sent from it. */
export const OWN_PROCESS: OwnProcess = { pid: process.pid, signal: (pid) => process.kill(pid, 0) };

/** The environment every test process runs in: no user or system configuration. */
export function isolatedEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  prepareHome(home);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    // CI=true (set where CI runs the suite) changes what @clack/prompts draws on a terminal.
    if (v === undefined || k.startsWith("GIT_") || k === "CI") continue;
    env[k] = v;
  }
  // The backend a run forces (core/proc) reaches the hooks and the worker.
  const processTable = process.env.GIT_UNDO_PROCESS_TABLE;
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    GIT_CONFIG_NOSYSTEM: "1",
    ...(processTable ? { GIT_UNDO_PROCESS_TABLE: processTable } : {}),
    // The worker's settling decisions, logged when the run asks (worker/main.ts debug).
    ...(process.env.GIT_UNDO_DEBUG_SETTLE ? { GIT_UNDO_DEBUG_SETTLE: process.env.GIT_UNDO_DEBUG_SETTLE } : {}),
    // Every reuse of the kept worktree index is checked against a fresh copy (core/git-data/index/trees.ts).
    ...(VERIFY_KEPT ? { GIT_UNDO_VERIFY_KEPT: "1" } : {}),
    // A worker exits as soon as it has nothing to record, so that "settled" means no worker left.
    GIT_UNDO_WORKER_LINGER: "0",
    LC_ALL: "C",
    NO_COLOR: "1",
    ...extra,
  };
}

export class TestRepo {
  readonly home: string;
  env: Record<string, string>;

  constructor(
    readonly dir: string,
    home: string,
  ) {
    this.home = home;
    this.env = isolatedEnv(home);
  }

  /** Where a command runs for core calls in the test's process (openRepo): this repository (or `cwd`) with its environment. */
  at(cwd: string = this.dir): Place {
    return { cwd, env: this.env };
  }

  /** Run git; throws with stderr on a non-zero exit unless `allowFail`. */
  git(args: string[], opts: { input?: string | Uint8Array; allowFail?: boolean; cwd?: string; env?: Record<string, string> } = {}): RunResult {
    const r = Bun.spawnSync({
      cmd: ["git", ...args],
      cwd: opts.cwd ?? this.dir,
      env: { ...this.env, ...opts.env },
      stdin: opts.input === undefined ? "ignore" : typeof opts.input === "string" ? Buffer.from(opts.input) : opts.input,
      stdout: "pipe",
      stderr: "pipe",
    });
    const res = { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
    if (res.code !== 0 && !opts.allowFail) throw new Error(`git ${args.join(" ")} failed (${res.code}): ${res.stderr}`);
    return res;
  }

  /** git's stdout, trailing newline removed. */
  g(...args: string[]): string {
    return this.git(args).stdout.replace(/\n$/, "");
  }

  /** Run the git-undo CLI in this repository (or `cwd`). */
  undo(args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}): RunResult {
    const r = Bun.spawnSync({
      cmd: [process.execPath, CLI, ...args],
      cwd: opts.cwd ?? this.dir,
      env: { ...this.env, ...opts.env },
      stdin: opts.input === undefined ? "ignore" : Buffer.from(opts.input),
      stdout: "pipe",
      stderr: "pipe",
    });
    return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  }

  /**
   * The CLI run in this test's process (test/helpers/in-process.ts): the same
   * code and results as `undo`, without a Bun start. Not for what depends on
   * the process itself (stdin, signals, exit, the pid).
   */
  async run(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<RunResult> {
    const { runInProcess } = await import("./in-process.ts");
    return runInProcess(args, opts.cwd ?? this.dir, { ...this.env, ...opts.env });
  }

  /** `run`, expecting success; returns stdout. */
  async okIn(...args: string[]): Promise<string> {
    const r = await this.run(args);
    if (r.code !== 0) throw new Error(`git undo ${args.join(" ")} exited ${r.code}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** The snapshot list as JSON, newest first, run in-process. */
  async snapshotsIn(): Promise<SnapshotJson[]> {
    return JSON.parse(await this.okIn("list", "--json")) as SnapshotJson[];
  }

  /** The CLI, expecting success; returns stdout. */
  ok(...args: string[]): string {
    const r = this.undo(args);
    if (r.code !== 0) throw new Error(`git undo ${args.join(" ")} exited ${r.code}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  path(rel: string): string {
    return join(this.dir, rel);
  }

  write(rel: string, content: string | Uint8Array, mode?: number): void {
    const p = this.path(rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
    if (mode !== undefined) chmodSync(p, mode);
  }

  read(rel: string): string {
    return readFileSync(this.path(rel), "utf8");
  }

  symlink(target: string, rel: string): void {
    const p = this.path(rel);
    mkdirSync(dirname(p), { recursive: true });
    symlinkSync(target, p);
  }

  remove(rel: string): void {
    rmSync(this.path(rel), { recursive: true, force: true });
  }

  /**
   * Stage everything and commit. The staging is hidden from git-undo's hooks
   * (as its own calls are): the commit is the one user command, so a busy
   * machine's pause between the two cannot split it into two snapshots.
   */
  commit(message: string, files: Record<string, string> = {}): string {
    for (const [p, c] of Object.entries(files)) this.write(p, c);
    this.git(["add", "-A"], { env: { GIT_UNDO_INTERNAL: "1" } });
    this.git(["commit", "-q", "--allow-empty", "-m", message]);
    return this.g("rev-parse", "HEAD");
  }

  /** The snapshot list as JSON, newest first. */
  snapshots(): SnapshotJson[] {
    return JSON.parse(this.ok("list", "--json")) as SnapshotJson[];
  }

  /** The git dir of this worktree. */
  gitDir(): string {
    return this.g("rev-parse", "--absolute-git-dir");
  }
}

/** The shared index `indexFile` (the real index when not given) links to, as its name in the git dir; null when it is not split. */
export function sharedIndexOf(repo: TestRepo, indexFile?: string): string | null {
  const path = repo.git(["rev-parse", "--shared-index-path"], indexFile ? { env: { GIT_INDEX_FILE: indexFile } } : {}).stdout.trim();
  // With core.splitIndex=true an index that is not split yet has a null id.
  return path && !/^sharedindex\.0+$/.test(basename(path)) ? basename(path) : null;
}

export interface SnapshotJson {
  number: number;
  kind: string | null;
  date: string;
  head: string | null;
  summary: string | null;
  restored: number | null;
  from: number | null;
  commit: string;
  tree: string;
  format: number | null;
  current: boolean;
  unreadable?: string;
}

/** A new repository (git init) in a temp dir, with a local identity unless told not to. */
export function makeRepo(opts: RepoOptions = {}): TestRepo {
  const base = tempDir("repo");
  const home = join(base, "home");
  mkdirSync(home);
  const dir = join(base, opts.bare ? "repo.git" : "repo");
  const repo = new TestRepo(dir, home);
  const args = ["init", "-q", "-b", opts.branch ?? "main"];
  if (opts.bare) args.push("--bare");
  if (opts.objectFormat) args.push(`--object-format=${opts.objectFormat}`);
  if (opts.refFormat === "reftable" || (opts.refFormat === "files" && gitAtLeast(2, 45))) args.push(`--ref-format=${opts.refFormat}`);
  args.push(dir);
  repo.git(args, { cwd: base });
  if (opts.identity !== false) {
    repo.git(["config", "user.name", "Test User"]);
    repo.git(["config", "user.email", "test@example.com"]);
  }
  return repo;
}

/**
 * A copy of a repository makeRepo made, with its HOME (`cp -a` of the folder
 * holding both): for a test that needs a repository in some state but not the
 * making of it, copying one built earlier is far cheaper than running Git
 * again. The copy's environment is fresh (isolatedEnv), not the original's.
 * The index's stat data is refreshed, as the copied files are new to the
 * file system, so that the copy's files count as unchanged as the original's did.
 */
export function copyRepo(original: TestRepo): TestRepo {
  const from = dirname(original.dir);
  if (original.home !== join(from, "home")) throw new Error(`copyRepo: ${original.dir} was not made by makeRepo`);
  const base = tempDir("repo");
  const cp = Bun.spawnSync({ cmd: ["cp", "-a", `${from}/.`, base], stdout: "ignore", stderr: "pipe" });
  if (cp.exitCode !== 0) throw new Error(`cp -a ${from} failed: ${cp.stderr.toString()}`);
  const repo = new TestRepo(join(base, basename(original.dir)), join(base, "home"));
  if (existsSync(join(repo.dir, ".git"))) repo.git(["update-index", "-q", "--refresh"], { env: { GIT_UNDO_INTERNAL: "1" }, allowFail: true });
  return repo;
}

const templates = new Map<string, TestRepo>();
/**
 * A copy of the repository `build` makes, built once per test file (per `key`)
 * and copied for every call: for tests that depend on the state, not on how it was made.
 */
export function fromTemplate(key: string, build: () => TestRepo): TestRepo {
  let template = templates.get(key);
  // The temporary folders go when a file's tests are done (test/setup.ts); a later file builds again.
  if (!template || !existsSync(template.dir)) {
    template = build();
    templates.set(key, template);
  }
  return copyRepo(template);
}

const sha = (b: Uint8Array | string) => createHash("sha1").update(b).digest("hex");

/**
 * Everything the user can see, as one string: refs (symbolic ones included),
 * HEAD, every index stage, every non-ignored file with its mode and content,
 * and the stash list. Two equal fingerprints mean nothing was lost or changed.
 *
 * Three or four Git commands: one ls-files gives both the index entries and
 * the untracked files, and the stash list is read as `git stash list` reads it
 * (`git log -g --first-parent refs/stash`, only when refs/stash exists), without
 * the stash command starting that log as a second process.
 */
export function fingerprint(repo: TestRepo): string {
  const parts: string[] = [];
  // Through Git, not .git/HEAD: with reftable that file is a placeholder.
  const symbolic = immediateSymref(repo, "HEAD");
  parts.push(`HEAD ${symbolic ? `ref: ${symbolic}` : repo.g("rev-parse", "HEAD")}`);
  const refs = repo.g("for-each-ref", "--format=%(refname) %(objectname) %(symref)");
  parts.push(refs);
  // ls-files prints the untracked names first, then the index entries ("<mode> <id> <stage>\t<path>").
  const listed = repo.git(["ls-files", "-z", "--stage", "--others", "--exclude-standard"]).stdout.split("\0");
  listed.pop(); // after the last NUL
  const isEntry = (rec: string) => /^[0-7]{6} [0-9a-f]{40}(?:[0-9a-f]{24})? [0-3]\t/.test(rec);
  const firstEntry = listed.findIndex(isEntry);
  const others = firstEntry < 0 ? listed : listed.slice(0, firstEntry);
  const entries = firstEntry < 0 ? [] : listed.slice(firstEntry);
  if (!entries.every(isEntry)) throw new Error(`fingerprint: cannot tell index entries from untracked names in ${repo.dir}`);
  parts.push(entries.map((e) => `${e}\n`).join(""));
  parts.push(refs.split("\n").some((l) => l.startsWith("refs/stash ")) ? repo.git(["log", "-g", "--first-parent", "--format=%H %gs", "refs/stash", "--"]).stdout : "");
  const files = [...others, ...entries.map((e) => e.slice(e.indexOf("\t") + 1))];
  for (const f of [...new Set(files)].sort()) {
    const p = repo.path(f);
    let st;
    try {
      st = lstatSync(p);
    } catch {
      parts.push(`${f} (missing)`);
      continue;
    }
    if (st.isSymbolicLink()) parts.push(`${f} link ${readlinkSync(p)}`);
    else if (st.isFile()) parts.push(`${f} ${(st.mode & 0o777).toString(8)} ${sha(readFileSync(p))}`);
    else parts.push(`${f} ${st.isDirectory() ? "dir" : "other"}`);
  }
  return parts.join("\n");
}
