// cli/find-bun.sh, which the launcher, install.sh and test/run share: where
// npm put Bun (the `bun` package with its postinstall run, or only its
// platform package after `npm install --ignore-scripts`), found without Bun
// on PATH, and the launcher runs git-undo with it. The real npm install
// (npm pack, npm install -g --ignore-scripts) is in .ci/npm-install.
import { expect, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gitBinDir, isolatedEnv, ROOT, tempDir } from "../helpers/repo.ts";

/** Bun's placeholder for bin/bun.exe until its postinstall runs (a script that says so and fails). */
const PLACEHOLDER = `echo "Error: Bun's postinstall script was not run." >&2\nexit 1\n`;
const REAL_BUN = process.execPath;

/** A PATH with Git and the system's tools, and no Bun. */
function cleanEnv(): Record<string, string> {
  const home = tempDir("home");
  const env = isolatedEnv(home, { PATH: `${gitBinDir()}:/usr/bin:/bin` });
  delete env.GIT_UNDO_BUN;
  expect(Bun.spawnSync({ cmd: ["sh", "-c", "command -v bun"], env, stdout: "pipe" }).exitCode).not.toBe(0);
  return env;
}

/** What find-bun.sh sets $bun to for a toolkit at `root`. */
function foundBun(root: string, env: Record<string, string>): string {
  const r = Bun.spawnSync({ cmd: ["sh", "-c", `root=$1; . "$root/cli/find-bun.sh"; printf %s "$bun"`, "sh", root], env, stdout: "pipe", stderr: "pipe" });
  expect(r.stderr.toString()).toBe("");
  return r.stdout.toString();
}

/**
 * A toolkit as npm lays it out: the package's files, its dependencies (linked
 * from the checkout's node_modules) and a `bun` package whose bin/bun.exe is
 * `exe`, with the given platform packages.
 */
function npmLayout(opts: { exe: "placeholder" | "binary"; platforms: Record<string, "binary" | "broken">; at?: string }): string {
  const root = opts.at ?? join(tempDir("npm"), "git-undo");
  for (const part of ["cli", "core", "worker", "hooks", "package.json", "bunfig.toml"]) cpSync(join(ROOT, part), join(root, part), { recursive: true });
  const mods = join(root, "node_modules");
  mkdirSync(join(mods, "bun", "bin"), { recursive: true });
  for (const dep of readdirSync(join(ROOT, "node_modules"))) if (dep !== "bun" && dep !== "@oven" && !dep.startsWith(".")) symlinkSync(join(ROOT, "node_modules", dep), join(mods, dep));
  if (opts.exe === "placeholder") writeFileSync(join(mods, "bun", "bin", "bun.exe"), PLACEHOLDER, { mode: 0o755 });
  else symlinkSync(REAL_BUN, join(mods, "bun", "bin", "bun.exe"));
  for (const [name, kind] of Object.entries(opts.platforms)) {
    const bin = join(mods, "@oven", name, "bin");
    mkdirSync(bin, { recursive: true });
    if (kind === "binary") symlinkSync(REAL_BUN, join(bin, "bun"));
    else writeFileSync(join(bin, "bun"), "#!/bin/sh\nexit 126\n", { mode: 0o755 });
  }
  return root;
}

test("--ignore-scripts: the platform package's binary is found and the launcher runs with it", () => {
  const env = cleanEnv();
  const root = npmLayout({ exe: "placeholder", platforms: { "bun-linux-x64": "binary" } });
  expect(foundBun(root, env)).toBe(join(root, "node_modules", "@oven", "bun-linux-x64", "bin", "bun"));
  const r = Bun.spawnSync({ cmd: [join(root, "cli", "git-undo"), "--version"], env, stdout: "pipe", stderr: "pipe" });
  expect(r.stderr.toString()).toBe("");
  expect(r.exitCode).toBe(0);
  expect(r.stdout.toString()).toMatch(/^git-undo \d+\.\d+/);
});

test("two platform packages: the one that runs here; with Bun's postinstall run, bin/bun.exe", () => {
  const env = cleanEnv();
  // Sorted first, and cannot run here (as a musl build on glibc, or another CPU's).
  const two = npmLayout({ exe: "placeholder", platforms: { "bun-linux-aarch64": "broken", "bun-linux-x64": "binary" } });
  expect(foundBun(two, env)).toBe(join(two, "node_modules", "@oven", "bun-linux-x64", "bin", "bun"));
  const ran = npmLayout({ exe: "binary", platforms: {} });
  expect(foundBun(ran, env)).toBe(join(ran, "node_modules", "bun", "bin", "bun.exe"));
});

test("as another package's dependency, Bun hoisted beside git-undo is found; with no Bun at all the launcher says to reinstall", () => {
  const env = cleanEnv();
  const project = tempDir("project");
  const root = npmLayout({ exe: "placeholder", platforms: {}, at: join(project, "node_modules", "git-undo") });
  const hoisted = join(project, "node_modules", "@oven", "bun-linux-x64", "bin");
  mkdirSync(hoisted, { recursive: true });
  symlinkSync(REAL_BUN, join(hoisted, "bun"));
  expect(foundBun(root, env)).toBe(join(hoisted, "bun"));

  const none = npmLayout({ exe: "placeholder", platforms: {} });
  expect(foundBun(none, env)).toBe("");
  const r = Bun.spawnSync({ cmd: [join(none, "cli", "git-undo"), "--version"], env, stdout: "pipe", stderr: "pipe" });
  expect(r.exitCode).toBe(128);
  expect(r.stderr.toString()).toContain("git-undo needs Bun, which came with it and is gone");
});
