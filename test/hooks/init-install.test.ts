// install.sh sets up the repository it is given or the one the shell is in;
// uninstall --purge removes the snapshots too; doctor reports what it finds.
import { expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectRecorded, list, settled, SETTLE_MS } from "../helpers/auto.ts";
import { makeRepo, ROOT, tempDir } from "../helpers/repo.ts";

function install(args: string[], cwd: string, env: Record<string, string>) {
  const p = Bun.spawnSync({ cmd: ["sh", join(ROOT, "install.sh"), ...args], cwd, env: { ...env, GIT_UNDO_BUN: process.execPath }, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

test("install.sh runs init in the repository it is given, and in the one the shell is in", async () => {
  const prefix = join(tempDir("prefix"), "bin");
  const a = makeRepo();
  a.git(["config", "undo.settle", String(SETTLE_MS)]);
  a.commit("base", { "a.txt": "a\n" });
  let res = install(["--prefix", prefix, a.dir], tempDir("elsewhere"), a.env);
  expect(res.code).toBe(0);
  expect(res.stdout).toContain(`Setting up ${a.dir}`);
  // Hook files, or on Git 2.54+ hook.git-undo in the configuration.
  const viaConfig = a.git(["config", "--get", "hook.git-undo.command"], { allowFail: true }).code === 0;
  expect(viaConfig || existsSync(join(a.gitDir(), "hooks", "reference-transaction"))).toBe(true);
  expect(existsSync(join(prefix, "git-undo"))).toBe(true);
  const snaps = list(a);
  expect(snaps).toHaveLength(1);
  a.commit("after install", { "b.txt": "b\n" });
  await expectRecorded(a, snaps, /^commit: after install$/);

  const b = makeRepo();
  b.commit("base");
  mkdirSync(b.path("sub"));
  res = install(["--prefix", prefix], b.path("sub"), b.env);
  expect(res.code).toBe(0);
  expect(b.git(["config", "--get", "hook.git-undo.command"], { allowFail: true }).code === 0 || existsSync(join(b.gitDir(), "hooks", "post-index-change"))).toBe(true);
  expect(list(b)).toHaveLength(1);
}, 60_000);

test("uninstall --purge deletes every snapshot and git-undo's files; doctor reports the set-up", async () => {
  const r = makeRepo();
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.commit("base", { "a.txt": "a\n" });
  let doc = await r.run(["doctor"]);
  expect(doc.code).toBe(1);
  expect(doc.stdout).toContain("recording is off here");
  expect(doc.stdout).toContain("reference-transaction: ");

  expect(r.undo(["init", "--file-hooks"]).code).toBe(0);
  r.commit("two", { "b.txt": "b\n" });
  await settled(r.gitDir());
  // A git-undo of someone else's on PATH (git-extras ships one) shadows this one.
  const bin = tempDir("bin");
  writeFileSync(join(bin, "git-undo"), "#!/bin/sh\necho extras\n", { mode: 0o755 });
  doc = await r.run(["doctor"], { env: { PATH: `${bin}:${process.env.PATH ?? ""}` } });
  expect(doc.stdout).toContain("ok       reference-transaction: installed and executable");
  expect(doc.stdout).toContain("ok       post-index-change: installed and executable");
  expect(doc.stdout).toContain("ok       the worker starts");
  expect(doc.stdout).toContain(`'git undo' runs ${join(bin, "git-undo")}, not this toolkit`);
  expect(doc.code).toBe(1);
  writeFileSync(join(r.gitDir(), "undo", "worker.log"), "2024-01-01T00:00:00.000Z [1] recording failed: boom\n");
  doc = await r.run(["doctor"]);
  expect(doc.stdout).toContain("recording failed: boom");

  expect(list(r).length).toBeGreaterThanOrEqual(2);
  const res = await r.run(["uninstall", "--purge"]);
  expect(res.code).toBe(0);
  expect(r.g("for-each-ref", "refs/undo/")).toBe("");
  expect(existsSync(join(r.gitDir(), "undo"))).toBe(false);
  expect(existsSync(join(r.gitDir(), "hooks", "reference-transaction"))).toBe(false);
  expect(r.g("log", "-1", "--format=%s")).toBe("two");
}, 60_000);

test("install.sh --prefix says every file it writes outside the checkout, one line each; --help says where --prefix puts what", async () => {
  const home = tempDir("home");
  const r = makeRepo();
  const env = { ...r.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local", "share") };
  const prefix = join(home, "opt", "bin");
  mkdirSync(join(home, "elsewhere"));
  const res = install(["--prefix", prefix], join(home, "elsewhere"), env);
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  // Everything under HOME (where --prefix points too) that install.sh made: each named on a line of its own.
  const made = readdirSync(home, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => join(e.parentPath, e.name));
  expect(made).toContain(join(prefix, "git-undo"));
  expect(made).toContain(join(home, "opt", "share", "man", "man1", "git-undo.1"));
  const lines = res.stdout.split("\n");
  for (const path of made) expect([path, lines.filter((l) => l.startsWith(`Linked ${path} (`) || l.startsWith(`Wrote ${path} (`)).length]).toEqual([path, 1]);
  expect(res.stdout).toContain(`Linked ${join(home, "opt", "share", "man", "man1", "git-undo.1")} (the man page, for git undo --help)`);
  expect(readlinkSync(join(home, "opt", "share", "man", "man1", "git-undo.1"))).toBe(join(ROOT, "docs", "git-undo.1"));
  // Inside the checkout: the dependencies and the bundle.
  expect(res.stdout).toContain(`Installed the locked dependencies into ${ROOT}/node_modules/`);
  expect(res.stdout).toMatch(/^(Built the bundle into .*\/dist\/|Note: could not build the bundle.*)$/m);

  const help = install(["--help"], home, env);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("--prefix <dir>");
  expect(help.stdout).toContain("<dir>/../share/man/man1");
}, 60_000);

test("install.sh writes the command as a script naming the checkout, quotes and all: it runs from anywhere, replaces an older symlink, and says so when the checkout is gone", () => {
  const home = tempDir("cmd");
  // The checkout reached through a path with a quote and a space in it.
  const odd = join(home, "it's here");
  symlinkSync(ROOT, odd);
  const prefix = join(home, "bin");
  mkdirSync(prefix);
  symlinkSync(join(ROOT, "cli", "git-undo"), join(prefix, "git-undo")); // as install.sh used to leave it
  const env = { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_CONFIG_NOSYSTEM: "1" };
  const p = Bun.spawnSync({ cmd: ["sh", join(odd, "install.sh"), "--prefix", prefix], cwd: home, env: { ...env, GIT_UNDO_BUN: process.execPath }, stdout: "pipe", stderr: "pipe" });
  expect({ code: p.exitCode, stderr: p.stderr.toString() }).toEqual({ code: 0, stderr: "" });
  const command = join(prefix, "git-undo");
  expect(lstatSync(command).isSymbolicLink()).toBe(false);
  expect(readFileSync(command, "utf8")).toContain(`git_undo_root='${odd.replace(/'/g, `'\\''`)}'`);
  const run = (file: string) => Bun.spawnSync({ cmd: [file, "--version"], cwd: home, env: { ...env, GIT_UNDO_BUN: process.execPath }, stdout: "pipe", stderr: "pipe" });
  const ok = run(command);
  expect({ code: ok.exitCode, out: ok.stdout.toString() }).toEqual({ code: 0, out: expect.stringMatching(/^git-undo \d/) });
  // doctor takes the command for this toolkit's.
  const repo = makeRepo();
  const doc = Bun.spawnSync({ cmd: ["git", "undo", "doctor"], cwd: repo.dir, env: { ...repo.env, PATH: `${prefix}:${repo.env.PATH ?? process.env.PATH ?? ""}`, GIT_UNDO_BUN: process.execPath }, stdout: "pipe", stderr: "pipe" });
  expect(doc.stdout.toString()).toContain(`'git undo' runs this toolkit (${command})`);
  // The checkout moved away: a clear error, not the shell's.
  const moved = join(home, "moved");
  writeFileSync(moved, readFileSync(command, "utf8").replace(/^git_undo_root=.*$/m, `git_undo_root='${join(home, "gone")}'`), { mode: 0o755 });
  const gone = run(moved);
  expect({ code: gone.exitCode, err: gone.stderr.toString() }).toEqual({ code: 128, err: `fatal: git-undo is no longer in ${join(home, "gone")}; run install.sh where it is now\n` });
}, 60_000);
