// The bundle: cli/main.ts and worker/main.ts built by Bun into dist/, every
// module of each command in a few files, so that a command (and each worker
// the hooks start) loads one chunk rather than thirty TypeScript files: about
// 10 ms of every start. It is a cache of the sources and nothing else. The
// launcher and the hooks start dist/cli/main.js or dist/worker/main.js when
// that file exists; the bundle checks itself against the sources it was made
// from and, when any has changed since (a checkout being edited, a pull),
// runs the sources instead. Nothing outside this module knows the manifest.
//
//   bun core/bundle.ts    build it (install.sh and test/run do)
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** Where the bundle goes, under the toolkit. */
const OUT = "dist";
/** Its list of sources: each with its size, mtime and content hash when built. */
const MANIFEST = "sources.json";
/**
 * What the bundle is made from, as the npm package ships it. The dependencies
 * it holds are not listed: install.sh and test/run build it again after
 * installing them.
 */
const SOURCE_DIRS = ["cli", "core", "worker"];
const EXTRA_SOURCES = ["package.json"];

const ENTRIES = ["cli", "worker"] as const;
export type Entry = (typeof ENTRIES)[number];

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
 * The toolkit's folder: the nearest one above this module that holds hooks/
 * (core/ in the sources; dist/ or dist/cli in the bundle).
 */
export function toolkitRoot(): string {
  let dir = import.meta.dir;
  for (let i = 0; i < 4; i++) {
    if (existsSync(join(dir, "hooks", "hook.sh"))) return dir;
    dir = dirname(dir);
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
  const path = join(root, OUT, MANIFEST);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(manifest));
  renameSync(tmp, path);
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
export async function runEntry(entry: Entry, modulePath: string, run: (argv: string[]) => Promise<never>): Promise<never> {
  const argv = process.argv.slice(2);
  if (modulePath.endsWith(".js")) {
    const root = toolkitRoot();
    if (!bundleFresh(root)) return ((await import(join(root, entry, "main.ts"))) as { run: typeof run }).run(argv);
  }
  return run(argv);
}

/** How long a chunk no build uses any more stays, for a process started before the rebuild that has yet to load it. */
const OLD_CHUNK_MS = 24 * 60 * 60 * 1000;

/**
 * Build dist/ from the sources. A process started from the previous bundle
 * may still load a command's chunk after this build: chunks are named by
 * their content, so the new ones go in beside the old, and old ones go only
 * a day later. The manifest goes first and comes back last, so a half-updated
 * bundle is never taken as matching; it describes the sources as read before
 * the build, so one edited during it leaves the bundle stale, never wrongly fresh.
 */
export async function buildBundle(root: string): Promise<void> {
  const files = sourcePaths(root).map((p) => sourceFile(root, p));
  const out = join(root, OUT);
  const staging = join(root, `${OUT}.${process.pid}.tmp`);
  rmSync(staging, { recursive: true, force: true });
  try {
    const result = await Bun.build({
      entrypoints: ENTRIES.map((e) => join(root, e, "main.ts")),
      root,
      outdir: staging,
      target: "bun",
      splitting: true,
      minify: true,
      naming: { entry: "[dir]/[name].[ext]", chunk: "[name]-[hash].[ext]" },
    });
    if (!result.success) throw new AggregateError(result.logs, "bun build failed");
    mkdirSync(out, { recursive: true });
    rmSync(join(out, MANIFEST), { force: true });
    const built = new Set<string>();
    for (const name of readdirSync(staging)) {
      if (ENTRIES.includes(name as Entry)) continue;
      built.add(name);
      if (!existsSync(join(out, name))) renameSync(join(staging, name), join(out, name));
    }
    for (const e of ENTRIES) {
      mkdirSync(join(out, e), { recursive: true });
      renameSync(join(staging, e, "main.js"), join(out, e, "main.js"));
    }
    for (const name of readdirSync(out)) {
      const path = join(out, name);
      if (!built.has(name) && name.endsWith(".js") && Date.now() - statSync(path).mtimeMs > OLD_CHUNK_MS) rmSync(path, { force: true });
    }
    writeManifest(root, { files });
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

// Only as `bun core/bundle.ts`: never from a bundle that holds this module.
if (import.meta.main && import.meta.path.endsWith(".ts")) {
  const root = toolkitRoot();
  try {
    await buildBundle(root);
    console.log(`built ${relative(process.cwd(), join(root, OUT)) || OUT}/`);
  } catch (e) {
    console.error(`core/bundle.ts: ${(e as Error).message}`);
    process.exit(1);
  }
}
