// A build step, not part of the toolkit's code: builds the bundle in dist/
// (core/bundle.ts says what it is and when it is used) from the sources.
//
//   bun build/bundle.ts    (install.sh, test/run and npm pack run it)
import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { BUNDLE_DIR, ENTRIES, sealBundle, snapshotSources, toolkitRoot, unsealBundle } from "../core/bundle.ts";

/** How long a chunk of an older build (one split into chunks) stays, for a process started before the rebuild that has yet to load it. */
const OLD_CHUNK_MS = 24 * 60 * 60 * 1000;

/**
 * Build dist/ from the sources: each entry one CommonJS file with Bun's
 * bytecode beside it (main.js.jsc), so that a start neither parses nor
 * compiles the code up front (about 5 ms of `git undo --version`, 9 of
 * `list`, against the same code split into ES module chunks). Bun uses the
 * bytecode only when it was made by the same Bun from the same main.js, and
 * parses main.js otherwise, so a pair caught half-replaced or run by another
 * Bun is slower, never wrong. The manifest goes first and comes back last,
 * so a half-updated bundle is never taken as matching; it describes the
 * sources as read before the build, so one edited during it leaves the
 * bundle stale, never wrongly fresh.
 */
export async function buildBundle(root: string): Promise<void> {
  const sources = snapshotSources(root);
  const out = join(root, BUNDLE_DIR);
  const staging = join(root, `${BUNDLE_DIR}.${process.pid}.tmp`);
  rmSync(staging, { recursive: true, force: true });
  try {
    const result = await Bun.build({
      entrypoints: ENTRIES.map((e) => join(root, e, "main.ts")),
      root,
      outdir: staging,
      target: "bun",
      // Bytecode without a compiled executable needs CommonJS, which Bun does not split.
      format: "cjs",
      bytecode: true,
      minify: true,
      // core/bundled.ts: the code knows it runs from the bundle.
      define: { GIT_UNDO_BUNDLED: "true" },
      naming: { entry: "[dir]/[name].[ext]" },
    });
    if (!result.success) throw new AggregateError(result.logs, "bun build failed");
    mkdirSync(out, { recursive: true });
    unsealBundle(root);
    for (const e of ENTRIES) {
      mkdirSync(join(out, e), { recursive: true });
      for (const name of ["main.js.jsc", "main.js"]) renameSync(join(staging, e, name), join(out, e, name));
    }
    // Chunks left by a build from before bytecode, once no process can still want them.
    for (const name of readdirSync(out)) {
      const path = join(out, name);
      if (name.endsWith(".js") && Date.now() - statSync(path).mtimeMs > OLD_CHUNK_MS) rmSync(path, { force: true });
    }
    sealBundle(root, sources);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const root = toolkitRoot();
  try {
    await buildBundle(root);
    console.log(`built ${relative(process.cwd(), join(root, BUNDLE_DIR)) || BUNDLE_DIR}/`);
  } catch (e) {
    console.error(`build/bundle.ts: ${(e as Error).message}`);
    process.exit(1);
  }
}
