// The benchmarks' repositories, in two sizes: "large", a clean checkout of
// 100,000 files in a realistic tree (paths 4 to 6 deep, a few large
// directories, packed objects, a valid cache-tree, one commit) plus 1,000
// untracked files; and "medium", where most people work: 5,000 files of the
// same kind of tree with a history of 300 commits, plus 50 untracked files.
// Both have an ignored build folder.
//
// Each is built once per set of parameters and cached under
// <tmpdir>/git-undo-bench/<key>/; the cached copy is never modified. A
// benchmark that changes the repository takes a `workingCopy()` of it.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { $ } from "zx";
import { rng } from "../test/helpers/rng.ts";

export type FixtureSize = "medium" | "large";
export const FIXTURE_SIZES: readonly FixtureSize[] = ["medium", "large"];

/** What the generator builds; the cache key is made of these. */
export interface FixtureParams {
  /** Tracked files. */
  files: number;
  /** Untracked, non-ignored files. */
  untracked: number;
  /** Commits on main: 1 imports the tree in one commit; more make a history ending in that tree. */
  commits: number;
  /** Seed of the generator: same seed, same repository. */
  seed: number;
}

/** The two sizes every benchmark runs on. */
export const SIZES: Record<FixtureSize, FixtureParams> = {
  medium: { files: 5_000, untracked: 50, commits: 300, seed: 1 },
  large: { files: 100_000, untracked: 1_000, commits: 1, seed: 1 },
};

/** `--size medium|large|both` as a list of sizes; `fallback` when the option is absent. */
export function parseSizes(value: string | undefined, fallback: FixtureSize | "both" = "both"): FixtureSize[] {
  const v = value ?? fallback;
  if (v === "both") return [...FIXTURE_SIZES];
  if ((FIXTURE_SIZES as readonly string[]).includes(v)) return [v as FixtureSize];
  throw new Error(`--size: medium, large or both, not ${v}`);
}

/** A size (default "large"), and any of its parameters overridden. */
export interface FixtureOptions extends Partial<FixtureParams> {
  size?: FixtureSize;
}

export interface Fixture {
  /** The cache key: generator version and parameters. */
  key: string;
  /** The parameters it was built from. */
  params: FixtureParams;
  /** The repository's working tree. */
  repo: string;
  /** An empty HOME for every process run in it. */
  home: string;
  /** The environment to run Git (and git-undo) in: no user or system configuration. */
  env: Record<string, string>;
  /** Tracked paths, in generation order. */
  tracked: string[];
  /** Untracked paths. */
  untracked: string[];
}

export interface WorkingCopy extends Fixture {
  /** Delete the copy. */
  remove(): void;
}

/** Bump when the generated repository changes, so old caches are not reused. */
const GENERATOR = 3;

export const CACHE_ROOT = join(tmpdir(), "git-undo-bench");

/** The environment of every benchmark process: isolated from the machine's configuration. */
export function benchEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("GIT_")) continue;
    env[k] = v;
  }
  return { ...env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), GIT_CONFIG_NOSYSTEM: "1", LC_ALL: "C", NO_COLOR: "1" };
}

/** The one-commit repositories keep the key they had before histories existed, so their caches stay valid. */
function keyOf(p: FixtureParams): string {
  return `v${GENERATOR}-${p.files}f-${p.untracked}u-s${p.seed}${p.commits > 1 ? `-${p.commits}c` : ""}`;
}

function paramsOf(opts: FixtureOptions): FixtureParams {
  const preset = SIZES[opts.size ?? "large"];
  return {
    files: opts.files ?? preset.files,
    untracked: opts.untracked ?? preset.untracked,
    commits: opts.commits ?? preset.commits,
    seed: opts.seed ?? preset.seed,
  };
}

function loadFixture(key: string, root: string, params: FixtureParams): Fixture {
  const manifest = JSON.parse(readFileSync(join(root, "manifest.json"), "utf8")) as { tracked: string[]; untracked: string[] };
  const home = join(root, "home");
  return { key, params, repo: join(root, "repo"), home, env: benchEnv(home), ...manifest };
}

/** One line for a benchmark's header: what the repository holds. */
export function describeFixture(f: Fixture): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const history = f.params.commits > 1 ? `${n(f.params.commits)} commits` : "1 commit";
  return `${n(f.tracked.length)} tracked files, ${n(f.untracked.length)} untracked, ${history}`;
}

/** The cached fixture, built first if needed. Treat it as read-only. */
export async function fixture(options: FixtureOptions = {}): Promise<Fixture> {
  const opts = paramsOf(options);
  const key = keyOf(opts);
  const root = join(CACHE_ROOT, key);
  if (!existsSync(join(root, "manifest.json"))) {
    mkdirSync(CACHE_ROOT, { recursive: true });
    const staging = mkdtempSync(join(CACHE_ROOT, `building-${key}-`));
    try {
      await build(staging, opts);
      try {
        // Atomic: a concurrent builder that finished first keeps its copy.
        renameSync(staging, root);
      } catch {
        if (!existsSync(join(root, "manifest.json"))) throw new Error(`could not move the fixture into ${root}`);
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return loadFixture(key, root, opts);
}

/**
 * A private copy of the fixture (cp -a) that a benchmark may change, with its
 * index refreshed so that it starts as clean as the cached one.
 */
export async function workingCopy(options: FixtureOptions & { label?: string } = {}): Promise<WorkingCopy> {
  const cached = await fixture(options);
  const base = mkdtempSync(join(tmpdir(), `git-undo-bench-${options.label ?? "copy"}-`));
  await $({ quiet: true })`cp -a ${join(dirname(cached.repo), "repo")} ${join(dirname(cached.repo), "home")} ${base}`;
  const home = join(base, "home");
  const copy: WorkingCopy = {
    ...cached,
    repo: join(base, "repo"),
    home,
    env: benchEnv(home),
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
  // The copy has new inodes and ctimes; refresh once so Git sees a clean index.
  await settleIndex(copy.repo, copy.env);
  return copy;
}

// --- generation -------------------------------------------------------------


const WORDS = (
  "core util net io ui model view api db auth cache config parser render store http cli internal common impl " +
  "platform linux darwin win32 codec crypto events fs graph image layout locale math media proto query runtime " +
  "schema server shell sync task text theme time trace worker widgets plugins adapters drivers handlers services"
).split(" ");

interface TopDir {
  name: string;
  ext: string[];
  /** Relative share of the ordinary files. */
  weight: number;
}

const TOP: TopDir[] = [
  { name: "src", ext: ["ts", "tsx", "js"], weight: 30 },
  { name: "lib", ext: ["c", "h"], weight: 20 },
  { name: "packages", ext: ["ts", "json", "md"], weight: 20 },
  { name: "test", ext: ["ts", "snap"], weight: 12 },
  { name: "docs", ext: ["md", "png"], weight: 6 },
  { name: "tools", ext: ["py", "sh"], weight: 4 },
  { name: "vendor", ext: ["go", "c", "h"], weight: 8 },
];

/** A few large flat directories, as generated code, icons and test data tend to be. */
const LARGE = [
  { dir: "assets/icons/svg/generated", ext: "svg", share: 0.06 },
  { dir: "vendor/unicode/data/tables/v15", ext: "txt", share: 0.035 },
  { dir: "test/fixtures/parser/cases", ext: "json", share: 0.045 },
];

interface Generated {
  tracked: { path: string; content: string; mode: "100644" | "100755" }[];
  untracked: { path: string; content: string }[];
  ignored: { path: string; content: string }[];
}

function generate(opts: FixtureParams): Generated {
  const rand = rng(opts.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  // A corpus of source-looking text; each file is a unique header plus a slice of it.
  const corpusWords = [...WORDS, "return", "const", "if", "else", "for", "(", ")", "{", "}", ";", "=", "+", "x", "i", "0", "1"];
  let corpus = "";
  while (corpus.length < 96 * 1024) {
    let line = "  ".repeat(Math.floor(rand() * 4));
    const n = 3 + Math.floor(rand() * 9);
    for (let i = 0; i < n; i++) line += `${pick(corpusWords)} `;
    corpus += `${line.trimEnd()}\n`;
  }
  // Sizes mostly 150 B to 4 KiB (mean about 2.4 KiB), a tail to 11 KiB.
  const size = () => Math.floor(120 * Math.exp(rand() * 4.5));
  const content = (path: string) => {
    const len = Math.min(size(), corpus.length - 1);
    const at = Math.floor(rand() * (corpus.length - len));
    return `// ${path}\n${corpus.slice(at, at + len)}`;
  };

  const tracked: Generated["tracked"] = [];
  const seen = new Set<string>();
  const add = (path: string, mode: "100644" | "100755" = "100644") => {
    if (seen.has(path)) return false;
    seen.add(path);
    tracked.push({ path, content: content(path), mode });
    return true;
  };
  add(".gitignore");
  tracked[0]!.content = "build/\n*.log\n";
  add("README.md");
  add("package.json");
  // Valid JSON: Bun reads the package.json of the directory it starts in.
  tracked[2]!.content = `${JSON.stringify({ name: "bench-fixture", private: true, workspaces: ["packages/*"] }, null, 2)}\n`;

  for (const large of LARGE) {
    const n = Math.floor(opts.files * large.share);
    for (let i = 0; i < n; i++) add(`${large.dir}/item-${String(i).padStart(5, "0")}.${large.ext}`);
  }

  const totalWeight = TOP.reduce((s, t) => s + t.weight, 0);
  const pickTop = () => {
    let r = rand() * totalWeight;
    for (const t of TOP) if ((r -= t.weight) < 0) return t;
    return TOP[0]!;
  };
  while (tracked.length < opts.files) {
    // A leaf directory 3 to 5 levels deep (files 4 to 6 components long),
    // names drawn from a small vocabulary per level so directories share prefixes.
    const top = pickTop();
    const depth = 3 + Math.floor(rand() * 3);
    const parts = [top.name];
    for (let d = 1; d < depth; d++) parts.push(WORDS[Math.floor(rand() * rand() * 14) + d * 3]!);
    const dir = parts.join("/");
    // The parent directories get an index file or two, as real trees do.
    for (let d = 2; d < parts.length; d++) add(`${parts.slice(0, d).join("/")}/index.${top.ext[0]}`);
    const n = 4 + Math.floor(rand() * rand() * 90);
    for (let i = 0; i < n && tracked.length < opts.files; i++) {
      const script = top.name === "tools" && rand() < 0.3;
      add(`${dir}/${pick(WORDS)}-${i}.${pick(top.ext)}`, script ? "100755" : "100644");
    }
  }
  tracked.length = opts.files;

  // Untracked files: most next to tracked ones, some in new directories.
  const untracked: Generated["untracked"] = [];
  const untrackedSeen = new Set<string>();
  const newDirs = Array.from({ length: 20 }, (_, i) => `${pick(TOP).name}/${pick(WORDS)}/wip-${i}`);
  while (untracked.length < opts.untracked) {
    const nextTo = rand() < 0.6;
    const dir = nextTo ? dirname(tracked[Math.floor(rand() * tracked.length)]!.path) : pick(newDirs);
    const path = `${dir}/untracked-${untracked.length}.txt`;
    if (seen.has(path) || untrackedSeen.has(path)) continue;
    untrackedSeen.add(path);
    untracked.push({ path, content: content(path) });
  }

  // An ignored build folder and a few ignored logs: skipped by status and add -A alike.
  const ignored: Generated["ignored"] = [];
  for (let i = 0; i < 300; i++) ignored.push({ path: `build/out/${pick(WORDS)}-${i}.o`, content: content(`build-${i}`) });
  for (let i = 0; i < 20; i++) ignored.push({ path: `src/${pick(WORDS)}-${i}.log`, content: "log\n" });
  return { tracked, untracked, ignored };
}

// --- building ---------------------------------------------------------------

/** Git for building a fixture (zx: a script that shells out; the timed commands go through Bun.spawn, bench/common.ts). */
async function git(cwd: string, env: Record<string, string>, args: string[], input?: Uint8Array): Promise<string> {
  const r = await $({ cwd, env, quiet: true, ...(input ? { input: Buffer.from(input) } : {}) })`git ${args}`;
  return r.stdout;
}

function writeFiles(repo: string, files: readonly { path: string; content: string }[]): void {
  const made = new Set<string>();
  for (const f of files) {
    const p = join(repo, f.path);
    const d = dirname(p);
    if (!made.has(d)) {
      mkdirSync(d, { recursive: true });
      made.add(d);
    }
    writeFileSync(p, f.content);
  }
}

/** A git fast-import stream: every blob, one commit on main, a few branches and tags. */
function importStream(files: Generated["tracked"]): Uint8Array {
  const enc = new TextEncoder();
  const chunks: string[] = [];
  files.forEach((f, i) => {
    chunks.push(`blob\nmark :${i + 1}\ndata ${Buffer.byteLength(f.content)}\n${f.content}\n`);
  });
  const who = "Bench <bench@example.com> 1700000000 +0000";
  const msg = "Import the benchmark tree\n";
  chunks.push(`commit refs/heads/main\nmark :${files.length + 1}\nauthor ${who}\ncommitter ${who}\ndata ${msg.length}\n${msg}`);
  files.forEach((f, i) => chunks.push(`M ${f.mode} :${i + 1} ${f.path}\n`));
  chunks.push("\n");
  const c = `:${files.length + 1}`;
  for (const b of ["feature/parser", "feature/ui", "fix/cache", "release/1.x"]) chunks.push(`reset refs/heads/${b}\nfrom ${c}\n\n`);
  for (const t of ["v1.0.0", "v1.1.0", "v1.2.0"]) chunks.push(`reset refs/tags/${t}\nfrom ${c}\n\n`);
  return enc.encode(chunks.join(""));
}

/**
 * A git fast-import stream of a history of `commits` commits on main: the
 * first holds all but the files added later; each next one appends a line to
 * 1 to 4 files, and every tenth adds one of the files held back, so the last
 * commit has every file. Branches and tags point into the history. The
 * files' contents are updated to the last commit's, for the checkout.
 */
function historyStream(files: Generated["tracked"], commits: number, seed: number): Uint8Array {
  // Its own sequence, so the tree generated from `seed` is the one-commit fixture's.
  const rand = rng(seed + 0x9e3779b9);
  // Commits 10, 20, ... each add one.
  const added = Math.min(Math.floor((commits - 1) / 10), files.length - 1);
  let present = files.length - added;
  const chunks: string[] = [];
  let mark = 0;
  const blob = (content: string): number => {
    chunks.push(`blob\nmark :${++mark}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
    return mark;
  };
  const commitMarks: number[] = [];
  const commit = (i: number, message: string, changed: { file: Generated["tracked"][number]; blob: number }[]) => {
    const who = `Bench <bench@example.com> ${1_700_000_000 + i * 3600} +0000`;
    const msg = `${message}\n`;
    chunks.push(`commit refs/heads/main\nmark :${++mark}\nauthor ${who}\ncommitter ${who}\ndata ${Buffer.byteLength(msg)}\n${msg}`);
    for (const c of changed) chunks.push(`M ${c.file.mode} :${c.blob} ${c.file.path}\n`);
    chunks.push("\n");
    commitMarks.push(mark);
  };
  const first = files.slice(0, present).map((file) => ({ file, blob: blob(file.content) }));
  commit(0, "Import the benchmark tree", first);
  for (let i = 1; i < commits; i++) {
    const changed: { file: Generated["tracked"][number]; blob: number }[] = [];
    if (i % 10 === 0 && present < files.length) {
      const file = files[present++]!;
      changed.push({ file, blob: blob(file.content) });
    }
    const edits = 1 + Math.floor(rand() * 4);
    for (let e = 0; e < edits; e++) {
      const file = files[Math.floor(rand() * present)]!;
      if (changed.some((c) => c.file === file)) continue;
      file.content += `${file.content.endsWith("\n") ? "" : "\n"}// change ${i}: ${WORDS[Math.floor(rand() * WORDS.length)]}\n`;
      changed.push({ file, blob: blob(file.content) });
    }
    const name = changed[changed.length - 1]!.file.path.split("/").pop();
    commit(i, `${changed.length > 1 ? "Update" : "Fix"} ${name}${changed.length > 1 ? ` and ${changed.length - 1} more` : ""} (${i})`, changed);
  }
  // Branches and tags at points of the history, as a project has them.
  const at = (back: number) => `:${commitMarks[Math.max(0, commitMarks.length - 1 - back)]!}`;
  const points: [string, number][] = [
    ["refs/heads/feature/parser", 20],
    ["refs/heads/feature/ui", 50],
    ["refs/heads/fix/cache", 5],
    ["refs/heads/release/1.x", 100],
    ["refs/tags/v1.0.0", 200],
    ["refs/tags/v1.1.0", 100],
    ["refs/tags/v1.2.0", 10],
  ];
  for (const [ref, back] of points) chunks.push(`reset ${ref}\nfrom ${at(back)}\n\n`);
  return new TextEncoder().encode(chunks.join(""));
}

/** Refresh the index after the clock has moved past every file's mtime, so no entry is racily clean. */
async function settleIndex(repo: string, env: Record<string, string>): Promise<void> {
  await Bun.sleep(1100);
  await git(repo, env, ["update-index", "-q", "--refresh"]);
  // Rewrite the index once more with a later timestamp in case the refresh had nothing to write.
  await git(repo, env, ["status", "--porcelain", "-uno"]);
}

async function build(root: string, opts: FixtureParams): Promise<void> {
  const started = performance.now();
  const home = join(root, "home");
  const repo = join(root, "repo");
  mkdirSync(home);
  const env = benchEnv(home);
  await git(root, env, ["init", "-q", "-b", "main", repo]);
  await git(repo, env, ["config", "user.name", "Bench User"]);
  await git(repo, env, ["config", "user.email", "bench@example.com"]);
  const gen = generate(opts);
  process.stderr.write(`fixture: generating ${gen.tracked.length} tracked and ${gen.untracked.length} untracked files, ${opts.commits} commits, in ${root}\n`);
  // Objects go into one pack; the files are written by us, and the index is
  // read from the last commit (a primed cache-tree, as after a real commit) then refreshed.
  const stream = opts.commits > 1 ? historyStream(gen.tracked, opts.commits, opts.seed) : importStream(gen.tracked);
  await git(repo, env, ["fast-import", "--quiet"], stream);
  writeFiles(repo, gen.tracked);
  for (const f of gen.tracked) if (f.mode === "100755") chmodSync(join(repo, f.path), 0o755);
  writeFiles(repo, gen.untracked);
  writeFiles(repo, gen.ignored);
  await git(repo, env, ["read-tree", "HEAD"]);
  await settleIndex(repo, env);
  const dirty = await git(repo, env, ["status", "--porcelain", "-uno"]);
  if (dirty.trim()) throw new Error(`fixture: the checkout is not clean:\n${dirty.slice(0, 500)}`);
  writeFileSync(
    join(root, "manifest.json"),
    JSON.stringify({ tracked: gen.tracked.map((f) => f.path), untracked: gen.untracked.map((f) => f.path) }),
  );
  process.stderr.write(`fixture: built in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

if (import.meta.main) {
  // bun bench/fixture.ts [--size medium|large|both]: build (or find) the fixtures.
  const { values } = parseArgs({ options: { size: { type: "string" } } });
  for (const size of parseSizes(values.size)) {
    const f = await fixture({ size });
    console.log(`${size}: ${f.repo} (${describeFixture(f)})`);
  }
}
