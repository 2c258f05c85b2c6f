// git undo completion install (issue #42.8): shell completion set up after
// the install, as the installer would have (npm may skip the package's
// postinstall: --ignore-scripts, and by default from npm 11.19). From a
// checkout, links in the user's own folders where bash, zsh and fish look
// (install.sh's); from an npm install, the self-deleting copies under npm's
// prefix (cli/npm-postinstall's). A second run changes nothing, and doctor
// suggests the command while the files are missing.
import { expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyToolkit, makeRepo, ROOT, tempDir } from "../helpers/repo.ts";

/** A PATH on which bash, zsh and fish are all "installed" (zsh and fish stand-ins when missing): command -v finds each. */
function shellsPath(): string {
  const bin = tempDir("shells");
  for (const shell of ["zsh", "fish"]) {
    if (Bun.which(shell)) continue;
    writeFileSync(join(bin, shell), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  }
  return `${bin}:${process.env.PATH ?? ""}`;
}

/** The environment of a user with this HOME and the XDG defaults. */
function userEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("XDG_") && !k.startsWith("GIT_") && k !== "ZDOTDIR") env[k] = v;
  return { ...env, HOME: home, PATH: shellsPath(), GIT_CONFIG_NOSYSTEM: "1", LC_ALL: "C", NO_COLOR: "1", GIT_UNDO_WORKER_LINGER: "0" };
}

const definesGitUndo = (file: string): string => {
  const p = Bun.spawnSync({ cmd: ["bash", "--norc", "--noprofile", "-c", `. "$1" && declare -F _git_undo`, "bash", file], stdout: "pipe", stderr: "pipe" });
  return p.stdout.toString() + p.stderr.toString();
};

/** Every file or link under `dir`, relative. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();

test("from a checkout: links where each shell looks in HOME, the same again on a second run; doctor suggests it until then; --help", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  const home = tempDir("home");
  const env = userEnv(home);
  r.env = env; // in place of the repository's, which sets XDG_CONFIG_HOME
  const doctorNote = async () => (await r.run(["doctor"], { env })).stdout.split("\n").filter((l) => /completion/.test(l));
  expect(await doctorNote()).toEqual(["note     shell completion is not set up for bash, zsh, fish; 'git undo completion install' sets it up"]);

  const places = {
    bash: [join(home, ".local", "share", "bash-completion", "completions", "git-undo"), "git-undo.bash"],
    zsh: [join(home, ".zsh", "completions", "_git-undo"), "_git-undo"],
    fish: [join(home, ".config", "fish", "completions", "git-undo.fish"), "git-undo.fish"],
  } as const;
  const expected = [
    `Linked ${places.bash[0]} (completion)`,
    `Linked ${places.zsh[0]} (completion)`,
    `Note: for zsh, add this folder to fpath in ${home}/.zshrc, before compinit:`,
    "    fpath=(~/.zsh/completions $fpath); autoload -Uz compinit && compinit",
    `Linked ${places.fish[0]} (completion)`,
    "",
  ].join("\n");
  for (const run of ["first", "second"]) {
    const done = await r.run(["completion", "install"], { env });
    expect([run, done.code, done.stderr, done.stdout]).toEqual([run, 0, "", expected]);
    for (const [path, source] of Object.values(places)) expect(readlinkSync(path)).toBe(join(ROOT, "completion", source));
  }
  expect(filesUnder(home).filter((f) => !f.startsWith(".config/git"))).toEqual([".config/fish/completions/git-undo.fish", ".local/share/bash-completion/completions/git-undo", ".zsh/completions/_git-undo"]);
  expect(definesGitUndo(places.bash[0])).toBe("_git_undo\n");
  expect(await doctorNote()).toEqual([]);
  // XDG_DATA_HOME and XDG_CONFIG_HOME move bash's and fish's folders, as those shells look there.
  const xdg = tempDir("xdg");
  const moved = await r.run(["completion", "install"], { env: { ...env, XDG_DATA_HOME: join(xdg, "data"), XDG_CONFIG_HOME: join(xdg, "config") } });
  expect(moved.stdout).toContain(`Linked ${join(xdg, "data", "bash-completion", "completions", "git-undo")} (completion)`);
  expect(moved.stdout).toContain(`Linked ${join(xdg, "config", "fish", "completions", "git-undo.fish")} (completion)`);

  const help = await r.run(["completion", "-h"], { env });
  expect(help.code).toBe(0);
  expect(help.stdout).toStartWith("usage: git undo completion install\n");
  const bad = await r.run(["completion"], { env });
  expect([bad.code, bad.stdout]).toEqual([129, ""]);
  expect(bad.stderr).toContain("git undo completion install");
}, 60_000);

test("from an npm install that ran no install script: the copies npm's postinstall makes under its prefix, and nothing in HOME", () => {
  // npm's layout: <prefix>/lib/node_modules/git-undo, and <prefix>/bin/git-undo linked to its launcher.
  const prefix = join(tempDir("prefix"), "npm prefix");
  const toolkit = join(prefix, "lib", "node_modules", "git-undo");
  cpSync(copyToolkit(), toolkit, { recursive: true });
  cpSync(join(ROOT, "completion"), join(toolkit, "completion"), { recursive: true });
  mkdirSync(join(prefix, "bin"));
  symlinkSync("../lib/node_modules/git-undo/cli/git-undo", join(prefix, "bin", "git-undo"));
  const home = tempDir("home");
  const env = { ...userEnv(home), GIT_UNDO_BUN: process.execPath };
  const check = () => Bun.spawnSync({ cmd: ["sh", join(toolkit, "cli", "install-completion"), "--check"], env, stdout: "pipe" });
  const missing = check();
  expect(missing.exitCode).toBe(1);
  expect(missing.stdout.toString()).toContain(`bash ${prefix}/share/bash-completion/completions/git-undo\n`);

  const files = ["share/bash-completion/completions/git-undo", "share/zsh/site-functions/_git-undo", "share/fish/vendor_completions.d/git-undo.fish"];
  let first = "";
  for (const run of ["first", "second"]) {
    const p = Bun.spawnSync({ cmd: [join(prefix, "bin", "git-undo"), "completion", "install"], cwd: home, env, stdout: "pipe", stderr: "pipe" });
    const out = p.stdout.toString();
    expect([run, p.exitCode, p.stderr.toString()]).toEqual([run, 0, ""]);
    for (const f of files) expect(out).toContain(`Wrote ${join(prefix, f)} (completion)\n`);
    const contents = files.map((f) => readFileSync(join(prefix, f), "utf8")).join("\0");
    if (run === "second") expect(contents).toBe(first);
    first = contents;
  }
  // The copies are npm-postinstall's: each checks that the package is there before anything else.
  expect(readFileSync(join(prefix, files[0]!), "utf8").split("\n").slice(0, 2).join("\n")).toContain(`if [ ! -f '${toolkit}/cli/git-undo' ]`);
  expect(definesGitUndo(join(prefix, files[0]!))).toBe("_git_undo\n");
  expect(filesUnder(home)).toEqual([]);
  expect(existsSync(join(prefix, "share", "man"))).toBe(false); // npm's own business
  expect({ code: check().exitCode, out: check().stdout.toString() }).toEqual({ code: 0, out: "" });
}, 60_000);
