// A build step, not part of the toolkit's code: builds the bundle in dist/
// (core/bundle.ts says what it is and when it is used) from the sources.
//
//   bun build/bundle.ts    (install.sh, test/run and npm pack run it)
import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { BUNDLE_DIR, CLI_PARTS, ENTRIES, sealBundle, snapshotSources, toolkitRoot, unsealBundle } from "../core/bundle.ts";
import { processesFor, useProcesses } from "../core/git-data/proc/index.ts";

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
    const build = (entrypoints: string[], name: string, define: Record<string, string> = {}) =>
      Bun.build({
        entrypoints,
        root,
        outdir: staging,
        target: "bun",
        // Bytecode without a compiled executable needs CommonJS, which Bun does not split.
        format: "cjs",
        bytecode: true,
        minify: true,
        // core/bundled.ts: the code knows it runs from the bundle (and which part of it).
        define: { GIT_UNDO_BUNDLED: "true", ...define },
        naming: { entry: `[dir]/${name}.[ext]` },
      });
    const results = await Promise.all([
      build(ENTRIES.map((e) => join(root, e, "main.ts")), "[name]"),
      ...CLI_PARTS.map((part) => build([join(root, "cli", "main.ts")], part, { "globalThis.GIT_UNDO_PART": JSON.stringify(part) })),
    ]);
    const failed = results.find((r) => !r.success);
    if (failed) throw new AggregateError(failed.logs, "bun build failed");
    mkdirSync(out, { recursive: true });
    unsealBundle(root);
    const files = [...ENTRIES.map((e) => `${e}/main.js`), ...CLI_PARTS.map((p) => `cli/${p}.js`)];
    for (const file of files) {
      mkdirSync(join(out, file, ".."), { recursive: true });
      // The bytecode first: a main.js without its own bytecode beside it is only slower.
      for (const name of [`${file}.jsc`, file]) renameSync(join(staging, name), join(out, name));
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
  // The manifest is written as the core writes its files (core/lock.ts replaceFile), named by this process's pid.
  useProcesses(processesFor(process.env.GIT_UNDO_PROCESS_TABLE, { pid: process.pid, signal: (pid) => process.kill(pid, 0) }));
  const root = toolkitRoot();
  try {
    await buildBundle(root);
    console.log(`built ${relative(process.cwd(), join(root, BUNDLE_DIR)) || BUNDLE_DIR}/`);
  } catch (e) {
    console.error(`build/bundle.ts: ${(e as Error).message}`);
    process.exit(1);
  }
}
