// The bundle: cli/main.ts and worker/main.ts built by Bun into dist/ (and
// parts of the CLI, CLI_PARTS), each one file with Bun's bytecode beside it, so that a command (and each
// worker the hooks start) loads one file it need not parse rather than
// thirty TypeScript files: 4 to 10 ms of every start. It is a cache of the
// sources and nothing else. The launcher and the hooks start
// dist/cli/main.js or dist/worker/main.js when that file exists; the bundle
// checks itself against the sources it was made from and, when any has
// changed since (a checkout being edited, a pull), runs the sources instead.
// This module owns the cache's freshness: the list of sources it was made
// from (its manifest), which nothing else reads or writes. The build itself
// is a build step, build/bundle.ts (`bun build/bundle.ts`; install.sh and
// test/run run it), which seals the bundle here.
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { BUNDLED } from "./bundled.ts";
import { replaceFile } from "./files.ts";

/** Where the bundle goes, under the toolkit. */
export const BUNDLE_DIR = "dist";
const OUT = BUNDLE_DIR;
/** Its list of sources: each with its size, mtime and content hash when built. */
const MANIFEST = "sources.json";
/**
 * What the bundle is made from, as the npm package ships it. The dependencies
 * it holds are not listed: install.sh and test/run build it again after
 * installing them.
 */
const SOURCE_DIRS = ["cli", "core", "worker"];
const EXTRA_SOURCES = ["package.json"];

/** The entry points built, each `<entry>/main.ts` into `dist/<entry>/main.js`. */
export const ENTRIES = ["cli", "worker"] as const;
export type Entry = (typeof ENTRIES)[number];

/**
 * The parts of the CLI built besides the whole of it, each into
 * `dist/cli/<part>.js` with only its own commands' code
 * (cli/commands/index.ts), so that a start loads less: the launcher picks one
 * by the command's name, and a part given another command hands it over to
 * the whole bundle (cli/main.ts).
 */
export const CLI_PARTS = ["restore", "snapshot", "list"] as const;

interface SourceFile {
  path: string;
  size: number;
  mtimeMs: number;
  /** Bun.hash of the content, as a decimal string. */
  hash: string;
}

interface Manifest {
  files: SourceFile[];
}

/**
 * The toolkit's folder: the nearest one holding hooks/ above the script Bun
 * runs (Bun.main: cli/main.ts or worker/main.ts in the sources,
 * dist/<entry>/main.js in the bundle, a test or bench script in a checkout),
 * else above this module. Not this module's own folder first: the CommonJS
 * bundle holds import.meta.dir as the folder it was built in.
 */
export function toolkitRoot(): string {
  for (const start of [dirname(Bun.main), import.meta.dir]) {
    let dir = start;
    for (let i = 0; i < 4; i++) {
      if (existsSync(join(dir, "hooks", "hook.sh"))) return dir;
      dir = dirname(dir);
    }
  }
  return dirname(import.meta.dir);
}

const contentHash = (path: string): string => String(Bun.hash(readFileSync(path)));

/** The sources the bundle is made from, relative to the toolkit. */
function sourcePaths(root: string): string[] {
  const paths: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const p = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".ts")) paths.push(p);
    }
  };
  for (const d of SOURCE_DIRS) walk(d);
  return [...paths.sort(), ...EXTRA_SOURCES.filter((p) => existsSync(join(root, p)))];
}

function sourceFile(root: string, path: string): SourceFile {
  const st = statSync(join(root, path));
  return { path, size: st.size, mtimeMs: st.mtimeMs, hash: contentHash(join(root, path)) };
}

/**
 * Whether the sources are still those the bundle was made from. Sizes and
 * mtimes first (a few hundred microseconds); a file whose mtime moved but
 * whose content hashes the same (an npm install sets every mtime to one date,
 * a checkout of the same content) still matches, and the manifest takes the
 * new mtimes when it can be written, so the next start compares stats again.
 */
export function bundleFresh(root: string): boolean {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(join(root, OUT, MANIFEST), "utf8")) as Manifest;
  } catch {
    return false;
  }
  if (!Array.isArray(manifest.files)) return false;
  let restamped = false;
  for (const f of manifest.files) {
    let st;
    try {
      st = statSync(join(root, f.path));
    } catch {
      return false;
    }
    if (st.size !== f.size) return false;
    if (st.mtimeMs === f.mtimeMs) continue;
    if (contentHash(join(root, f.path)) !== f.hash) return false;
    f.mtimeMs = st.mtimeMs;
    restamped = true;
  }
  // A new source only matters once a listed one imports it, which changes that one.
  if (restamped) {
    try {
      writeManifest(root, manifest);
    } catch {
      /* a read-only install: compare hashes again next time */
    }
  }
  return true;
}

function writeManifest(root: string, manifest: Manifest): void {
  replaceFile(join(root, OUT, MANIFEST), JSON.stringify(manifest));
}

/** Whether the toolkit at `root` has a bundle, and whether it matches the sources (doctor). */
export function bundleState(root: string): { state: "fresh" | "stale" | "absent"; dir: string } {
  const dir = join(root, OUT);
  if (!existsSync(join(dir, "cli", "main.js"))) return { state: "absent", dir };
  return { state: bundleFresh(root) ? "fresh" : "stale", dir };
}

/**
 * An entry point's start: `run` (the entry module's own), unless this process
 * runs from a bundle that no longer matches its sources; then the sources'
 * module of the same entry runs instead.
 */
export async function runEntry(entry: Entry, argv: string[], run: (argv: string[]) => Promise<never>): Promise<never> {
  if (BUNDLED) {
    const root = toolkitRoot();
    if (!bundleFresh(root)) return ((await import(join(root, entry, "main.ts"))) as { run: typeof run }).run(argv);
  }
  return run(argv);
}

/** The sources as they are now, for the manifest of a bundle about to be built from them. */
export interface SourceSnapshot {
  readonly files: readonly SourceFile[];
}

/** Read the sources before a build: a source edited during it leaves the bundle stale, never wrongly fresh. */
export const snapshotSources = (root: string): SourceSnapshot => ({ files: sourcePaths(root).map((p) => sourceFile(root, p)) });

/** Before a build writes into dist/: the bundle is not taken as matching any sources until sealed again. */
export function unsealBundle(root: string): void {
  rmSync(join(root, OUT, MANIFEST), { force: true });
}

/** After a build: the bundle matches `sources` (those read before it). */
export function sealBundle(root: string, sources: SourceSnapshot): void {
  writeManifest(root, { files: [...sources.files] });
}
