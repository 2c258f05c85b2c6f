#!/usr/bin/env node
// Install git-undo the way users will, from a `npm pack` of the checkout,
// into temporary prefixes with a fresh HOME and no Bun on PATH (Bun must come
// in as the package's dependency):
//   1. npm install -g: --version, the man page and shell completion under the
//      prefix, the bundle in use, then init, a commit and `git undo` in a new
//      repository;
//   2. npm install -g --ignore-scripts (no postinstall runs, Bun's neither):
//      the launcher finds Bun's platform package; the same repository steps;
//   3. npm uninstall -g of the first: no link left dangling under the prefix,
//      and the completion files delete themselves when their shell loads
//      them, after which nothing of git-undo's is left;
//   4. npm pack in a fresh clone of the checkout's HEAD: refused in one line
//      before npm install, and with the bundle once npm install brought Bun.
// Prints "npm install: ok" or what failed; exits 0 only when everything held.
// A zx script (zx is a devDependency): each step is a command line.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { $, which } from "zx";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tmp = mkdtempSync(join(tmpdir(), "git-undo-npm-"));
process.on("exit", () => rmSync(tmp, { recursive: true, force: true }));
const fail = (why) => {
  console.log(`npm install: FAILED: ${why}`);
  process.exit(1);
};
$.quiet = true;
$.nothrow = true;

const home = join(tmp, "home");
for (const d of [home, join(tmp, "pack")]) mkdirSync(d, { recursive: true });
const packed = await $({ cwd: root })`npm pack --silent --pack-destination ${join(tmp, "pack")}`;
const tarball = join(tmp, "pack", packed.stdout.trim().split("\n").pop() ?? "");
if (packed.exitCode !== 0 || !existsSync(tarball)) fail(`npm pack: ${packed.stderr.trim()}`);
// The licence package.json names, and the bundle (packed where Bun was found).
const listing = (await $`tar tzf ${tarball}`).stdout.split("\n");
for (const f of ["package/LICENSE", "package/dist/cli/main.js"]) if (!listing.includes(f)) fail(`the tarball has no ${f}`);

// Node and npm stay reachable; Bun is nowhere on PATH.
const cleanPath = [dirname(await which("node")), dirname(await which("git")), "/usr/bin", "/bin"];
for (const d of cleanPath) if (existsSync(join(d, "bun"))) fail(`a Bun is on the clean PATH (${d}/bun)`);
// What reaches the registry on this machine (certificates, proxies, npm's
// global settings, which a --prefix of its own would not read) is kept.
const globalconfig = (await $`npm config get globalconfig`).stdout.trim();
const kept = {};
for (const v of ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"]) {
  if (process.env[v]) kept[v] = process.env[v];
}
/** Commands with that prefix's bin folder first, and nothing else of this machine's. */
const at = (prefix, opts = {}) =>
  $({
    env: {
      HOME: home,
      PATH: [join(prefix, "bin"), ...cleanPath].join(":"),
      GIT_CONFIG_NOSYSTEM: "1",
      LC_ALL: "C",
      // Node's pipes are sockets: a bash at level 1 would take itself for an ssh session and read ~/.bashrc.
      SHLVL: "1",
      ...(globalconfig ? { npm_config_globalconfig: globalconfig } : {}),
      ...kept,
    },
    ...opts,
  });

async function install(prefix, flags) {
  const r = await at(prefix)`npm install -g --prefix ${prefix} ${flags} --no-audit --no-fund --loglevel=error ${tarball}`;
  if (r.exitCode !== 0) fail(`npm install -g ${flags.join(" ")}: ${r.stdout}${r.stderr}`);
}

/** init, a commit and `git undo` in a new repository, with this prefix's git-undo. */
async function useInstalled(prefix, label) {
  const repo = join(tmp, `repo-${label}`);
  const git = (opts = {}) => at(prefix, { cwd: repo, ...opts });
  const step = async (what, run) => {
    const r = await run;
    if (r.exitCode !== 0) fail(`${label}: ${what}: ${r.stderr.trim() || r.stdout.trim()}`);
    return r.stdout.trim();
  };
  await step("git init", at(prefix)`git init -q -b main ${repo}`);
  await step("git config", git()`git config user.name CI && git config user.email ci@example.com`);
  await step("first commit", git()`echo one >a.txt && git add a.txt && git commit -q -m one`);
  await step("git undo init", git()`git undo init`);
  const first = await step("rev-parse", git()`git rev-parse HEAD`);
  await step("second commit", git()`echo two >a.txt && git commit -q -am two`);
  // The worker the hooks started records the commit; `git undo` records first anyway.
  await step("git undo", git()`git undo`);
  if ((await step("rev-parse", git()`git rev-parse HEAD`)) !== first) fail(`${label}: git undo left HEAD elsewhere`);
  if ((await step("cat", git()`cat a.txt`)) !== "one") fail(`${label}: git undo left a.txt changed`);
  await step("git undo list", git()`git undo list`);
}

const COMPLETION = {
  bash: "share/bash-completion/completions/git-undo",
  zsh: "share/zsh/site-functions/_git-undo",
  fish: "share/fish/vendor_completions.d/git-undo.fish",
};

// 1. As most users install.
const full = join(tmp, "prefix");
await install(full, []);
const version = (await at(full)`git-undo --version`).stdout.trim();
if (!/\d\.\d/.test(version)) fail(`git-undo --version printed '${version}'`);
for (const f of [...Object.values(COMPLETION), "share/man/man1/git-undo.1"]) {
  if (!existsSync(join(full, f))) fail(`npm install -g left no ${f}`);
}
const bashDefines = await at(full)`bash -c ${`. '${join(full, COMPLETION.bash)}' && declare -F _git_undo`}`;
if (bashDefines.stdout.trim() !== "_git_undo") fail("the bash completion defines no _git_undo");
// The package ships the bundle, and it matches the sources installed beside it.
const traced = await at(full)`env GIT_UNDO_TRACE=1 git-undo --version`;
// `bundle` or `bundle: <part>` (the part of the CLI the launcher picked for the command).
if (!/phase start \(Bun and modules, bundle(: \w+)?\)/.test(traced.stderr)) fail(`the installed git-undo does not start from its bundle: ${traced.stderr}`);
await useInstalled(full, "npm");

// 2. --ignore-scripts, as locked-down setups install.
const bare = join(tmp, "bare");
await install(bare, ["--ignore-scripts"]);
const bareVersion = await at(bare)`git-undo --version`;
if (bareVersion.stdout.trim() !== version) fail(`--ignore-scripts: git-undo --version: ${bareVersion.stdout}${bareVersion.stderr}`);
// It ran with no postinstall: Bun's bin/bun.exe is still its placeholder, not the binary.
const placeholder = join(bare, "lib/node_modules/git-undo/node_modules/bun/bin/bun.exe");
if (!existsSync(placeholder) || statSync(placeholder).size > 4096) fail("--ignore-scripts: Bun's postinstall ran (or npm put Bun elsewhere)");
await useInstalled(bare, "ignore-scripts");

// 3. npm uninstall -g: npm removes the package, the command and the man page.
const removed = await at(full)`npm uninstall -g --prefix ${full} --loglevel=error git-undo`;
if (removed.exitCode !== 0) fail(`npm uninstall -g: ${removed.stderr}`);
/** Every path under `dir`, links included (not followed). */
const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => [join(dir, e.name), ...(e.isDirectory() ? walk(join(dir, e.name)) : [])]);
const dangling = walk(full).filter((p) => lstatSync(p).isSymbolicLink() && !existsSync(p));
if (dangling.length) fail(`npm uninstall -g left links to nothing: ${dangling.join(", ")}`);
// Each completion file, loaded by its shell, does nothing and goes; a shell not installed here is skipped.
const load = {
  bash: (f) => at(full)`bash -c ${`. '${f}'; declare -F _git_undo || true`}`,
  zsh: (f) => at(full)`zsh -fc ${`fpath=('${dirname(f)}' $fpath); autoload -Uz _git-undo; _git-undo || true`}`,
  fish: (f) => at(full)`fish --no-config -c ${`source '${f}'`}`,
};
const skipped = [];
for (const [shell, rel] of Object.entries(COMPLETION)) {
  const file = join(full, rel);
  if (!(await which(shell, { nothrow: true }))) {
    skipped.push(rel);
    continue;
  }
  const r = await load[shell](file);
  if (r.exitCode !== 0 || r.stdout.trim() !== "") fail(`${rel} after npm uninstall: exit ${r.exitCode}, printed ${r.stdout}${r.stderr}`);
  if (existsSync(file)) fail(`${rel} did not delete itself after npm uninstall`);
}
const left = walk(full).filter((p) => /git-undo/.test(p.slice(full.length)) && !skipped.some((s) => p === join(full, s)));
if (left.length) fail(`npm uninstall -g left ${left.join(", ")}`);

// 4. npm pack where a user packs: a fresh clone, no Bun on PATH. Without the
// dependencies prepack has no Bun to build the bundle with, and says so.
const clone = join(tmp, "clone");
const cloned = await at(clone)`git clone -q ${root} ${clone}`;
if (cloned.exitCode !== 0) fail(`git clone of the checkout: ${cloned.stderr}`);
const packIn = (dir) => at(clone, { cwd: clone })`npm pack --silent --pack-destination ${dir}`;
mkdirSync(join(tmp, "pack-clone"));
const refused = await packIn(join(tmp, "pack-clone"));
if (refused.exitCode === 0 || readdirSync(join(tmp, "pack-clone")).length) fail("npm pack in a fresh clone with no Bun made a package");
if (!refused.stderr.split("\n").includes("npm pack: no Bun in node_modules/ to build the bundle (dist/) with; run npm install first, which brings it")) {
  fail(`npm pack in a fresh clone with no Bun: ${refused.stderr}`);
}
const deps = await at(clone, { cwd: clone })`npm install --no-audit --no-fund --loglevel=error`;
if (deps.exitCode !== 0) fail(`npm install in a fresh clone: ${deps.stderr}`);
const repacked = await packIn(join(tmp, "pack-clone"));
const cloneTarball = join(tmp, "pack-clone", repacked.stdout.trim().split("\n").pop() ?? "");
if (repacked.exitCode !== 0 || !existsSync(cloneTarball)) fail(`npm pack in a fresh clone after npm install: ${repacked.stderr}`);
if (!(await $`tar tzf ${cloneTarball}`).stdout.split("\n").includes("package/dist/cli/main.js")) fail("npm pack in a fresh clone after npm install made no bundle");

console.log(`npm install: ok (${tarball.split("/").pop()}, ${version}${skipped.length ? `; not checked after uninstall, for want of the shell: ${skipped.join(", ")}` : ""})`);
