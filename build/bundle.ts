// A build step, not part of the toolkit's code: builds the bundle in dist/
// (core/bundle.ts says what it is and when it is used) from the sources.
//
//   bun build/bundle.ts    (install.sh, test/run and npm pack run it)
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { BUNDLE_DIR, ENTRIES, sealBundle, snapshotSources, toolkitRoot, unsealBundle, type Entry } from "../core/bundle.ts";

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
      splitting: true,
      minify: true,
      naming: { entry: "[dir]/[name].[ext]", chunk: "[name]-[hash].[ext]" },
    });
    if (!result.success) throw new AggregateError(result.logs, "bun build failed");
    mkdirSync(out, { recursive: true });
    unsealBundle(root);
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
