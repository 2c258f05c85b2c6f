// The CLI's manners, as Git's: colours decided the way Git decides them, exit
// codes, the man page that `git undo --help` opens, and `show -p`.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { CLI, gitBinDir, makeRepo, ROOT, tempDir, type TestRepo } from "../helpers/repo.ts";

const ESC = "\x1b[";
const MAN = join(ROOT, "docs", "git-undo.1");

function twoSnapshots(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  r.ok("snapshot");
  r.write("a.txt", "one\ntwo\n");
  r.write("new.txt", "new\n");
  r.ok("snapshot");
  return r;
}

// NO_COLOR is set by the test helpers; an empty value counts as unset.
const colourEnv = { NO_COLOR: "" };

test("colours: --color/--color=always give escapes even into a pipe; the default into a pipe gives none", async () => {
  const r = twoSnapshots();
  expect(r.undo(["list"], { env: colourEnv }).stdout).not.toContain(ESC);
  expect(r.undo(["list", "--color=always"], { env: colourEnv }).stdout).toContain(ESC);
  expect(r.undo(["--color", "list"], { env: colourEnv }).stdout).toContain(ESC);
  expect(r.undo(["list", "--color=auto"], { env: colourEnv }).stdout).not.toContain(ESC);
  // The last option wins, as in Git.
  expect(r.undo(["list", "--color", "--no-color"], { env: colourEnv }).stdout).not.toContain(ESC);
  expect(r.undo(["list", "--no-color", "--color=always"], { env: colourEnv }).stdout).toContain(ESC);
});

test("colours: color.undo wins over color.ui; the command line wins over both; NO_COLOR only stops auto", async () => {
  const r = twoSnapshots();
  r.git(["config", "color.ui", "always"]);
  expect(r.undo(["list"], { env: colourEnv }).stdout).toContain(ESC);
  r.git(["config", "color.undo", "false"]);
  expect(r.undo(["list"], { env: colourEnv }).stdout).not.toContain(ESC);
  r.git(["config", "color.undo", "always"]);
  expect(r.undo(["list"], { env: colourEnv }).stdout).toContain(ESC);
  expect(r.undo(["list", "--no-color"], { env: colourEnv }).stdout).not.toContain(ESC);
  // Configuration that says always is a choice the user made; NO_COLOR governs the default.
  expect(r.undo(["list"], { env: { NO_COLOR: "1" } }).stdout).toContain(ESC);
  r.git(["config", "color.undo", "auto"]);
  expect(r.undo(["list", "--color=always"], { env: { NO_COLOR: "1" } }).stdout).toContain(ESC);
  expect(r.undo(["list"], { env: { NO_COLOR: "1" } }).stdout).not.toContain(ESC);
});

test("colours: a bad --color value is a usage error; a bad color.ui never stops the CLI", async () => {
  const r = twoSnapshots();
  const bad = await r.run(["list", "--color=sometimes"]);
  expect(bad.code).toBe(129);
  expect(bad.stderr).toContain("--color");
  r.git(["config", "color.ui", "sometimes"]);
  expect(r.undo(["list"]).code).toBe(0);
  // Git 2.55's own `git add` dies on such a value (2.39's and 2.31's do not),
  // and the working tree is recorded with add: there only Git's error stops it.
  const gitAdds = r.git(["add", "-A", "--dry-run"], { allowFail: true }).code === 0;
  r.write("new.txt", "something to record\n"); // else snapshot has nothing to do (exit 1)
  const res = await r.run(["snapshot"]);
  expect(res.code).toBe(gitAdds ? 0 : 128);
  if (!gitAdds) expect(res.stderr).toContain("color.ui");
  // Without the working tree no add runs: every Git records.
  r.git(["config", "undo.worktree", "false"]);
  expect(r.undo(["snapshot"]).code).toBe(0);
});

test("exit codes: 0 done, 1 refused or nothing to do, 128 fatal, 129 usage", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  await r.okIn("snapshot");
  expect(r.undo(["list"]).code).toBe(0);
  expect(r.undo(["--help"]).code).toBe(0);
  expect(r.undo(["list", "-h"]).code).toBe(0);
  expect(r.undo(["list", "--help"]).stdout).toMatch(/^usage: git undo list/);

  const nothing = await r.run(["redo"]);
  expect(nothing.code).toBe(1);
  expect(nothing.stderr).toMatch(/nothing to redo/);
  const undo = await r.run([]);
  expect(undo.code).toBe(1);
  expect(undo.stderr).toMatch(/nothing to undo/);

  const outside = tempDir("not-a-repo");
  const notRepo = await r.run(["list"], { cwd: outside });
  expect(notRepo.code).toBe(128);
  expect(notRepo.stderr).toMatch(/^fatal: not a git repository/);
  expect(notRepo.stderr.trim().split("\n")).toHaveLength(1);
  expect(r.undo(["show", "99"]).code).toBe(128);

  // An unknown command is 1, as in Git; other bad arguments are usage errors.
  const unknown = await r.run(["frobnicate"]);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toMatch(/'frobnicate' is not a git undo command/);
  for (const args of [["list", "--bogus"], ["show"], ["show", "abc"], ["list", "-n", "zero"], ["show", "1", "--against", "x"]]) {
    const res = await r.run(args);
    expect({ args, code: res.code }).toEqual({ args, code: 129 });
    expect(res.stderr).not.toContain("    at "); // a line, not a stack trace
  }
});

test("exit codes: a corrupt snapshot is fatal (128) with one line naming it", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  await r.okIn("snapshot");
  // A snapshot whose tree is not a git-undo state: no HEAD or refs entry.
  const tree = r.g("rev-parse", "HEAD^{tree}");
  const msg = "broken\n\nUndo-Format: 1\nUndo-Kind: manual\nUndo-Head: main\n";
  const commit = r.git(["commit-tree", tree], { input: msg }).stdout.trim();
  r.git(["update-ref", "refs/undo/snapshots/0000000002", commit]);
  const res = await r.run(["show", "2"]);
  expect(res.code).toBe(128);
  expect(res.stderr).toMatch(/^fatal: snapshot #2 is not a valid snapshot: .*no HEAD or refs entry\n$/);
  expect(res.stderr.trim().split("\n")).toHaveLength(1);
  // A snapshot written by a newer format cannot be shown either.
  const newer = r.git(["commit-tree", tree], { input: "future\n\nUndo-Format: 9\nUndo-Kind: manual\nUndo-Head: main\n" }).stdout.trim();
  r.git(["update-ref", "refs/undo/snapshots/0000000003", newer]);
  const future = await r.run(["show", "3"]);
  expect(future.code).toBe(128);
  expect(future.stderr).toMatch(/^fatal: .*#3/);
});

test("show -p: Git's diff from the current state to the snapshot, or from --against", async () => {
  const r = twoSnapshots();
  r.write("a.txt", "changed since\n");
  const env = { GIT_PAGER: "cat", PAGER: "cat" };
  // + lines are what restoring #1 would bring back.
  const p = r.undo(["show", "1", "-p"], { env });
  expect(p.code).toBe(0);
  expect(p.stdout).toContain("diff --git a/a.txt b/a.txt");
  expect(p.stdout).toContain("-changed since");
  expect(p.stdout).toContain("+one");
  expect(p.stdout).toContain("deleted file mode");
  expect(p.stdout).toContain("-new");
  expect(p.stdout).not.toContain(ESC);
  const against = r.undo(["show", "2", "--patch", "--against", "1"], { env });
  expect(against.code).toBe(0);
  expect(against.stdout).toContain("+two");
  expect(against.stdout).toContain("new file mode");
  expect(against.stdout).not.toContain("changed since");
  // Coloured as git diff colours when asked.
  expect(r.undo(["show", "1", "-p", "--color=always"], { env }).stdout).toContain(ESC);
  // Showing changes nothing.
  expect(r.read("a.txt")).toBe("changed since\n");
  expect((await r.snapshotsIn())).toHaveLength(2);
});

test("man page: well-formed roff that names every command, the options, configuration and exit codes", async () => {
  expect(existsSync(MAN)).toBe(true);
  const src = await Bun.file(MAN).text();
  for (const section of ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "CONFIGURATION", "EXIT STATUS", "FILES"]) {
    expect(src).toContain(`.SH ${section}`);
  }
  if (existsSync("/usr/bin/groff")) {
    // -ww: every warning; the page must produce none.
    const groff = Bun.spawnSync({ cmd: ["groff", "-man", "-ww", "-z", MAN], stdout: "pipe", stderr: "pipe" });
    expect(groff.stderr.toString()).toBe("");
    expect(groff.exitCode).toBe(0);
  }
  if (!existsSync("/usr/bin/man")) return;
  const render = Bun.spawnSync({ cmd: ["man", "-l", "-P", "cat", MAN], env: { ...process.env, MANWIDTH: "100", LC_ALL: "C" }, stdout: "pipe", stderr: "pipe" });
  expect(render.exitCode).toBe(0);
  const page = render.stdout.toString().replace(/.\x08/g, "");
  for (const c of ["undo redo", "undo restore", "undo pick", "undo list", "undo show", "undo snapshot", "undo init", "undo uninstall", "undo doctor", "undo watch", "undo gc"]) {
    expect(page).toContain(`git ${c}`);
  }
  for (const k of ["undo.worktree", "undo.limit", "undo.expire", "undo.settle", "color.undo", "--color", "--no-color", "NO_COLOR", "128", "129"]) {
    expect(page).toContain(k);
  }
});

test.skipIf(!existsSync("/usr/bin/man"))("git undo --help opens the man page from the prefix install.sh links it into", async () => {
  // install.sh's layout: <prefix>/git-undo and <prefix>/../share/man/man1/git-undo.1;
  // man finds the page from PATH alone (no MANPATH), as in a fresh shell.
  const base = tempDir("prefix");
  const bin = join(base, "bin");
  const man1 = join(base, "share", "man", "man1");
  mkdirSync(bin, { recursive: true });
  mkdirSync(man1, { recursive: true });
  symlinkSync(join(ROOT, "cli", "git-undo"), join(bin, "git-undo"));
  symlinkSync(MAN, join(man1, "git-undo.1"));
  const r = makeRepo();
  const env: Record<string, string> = { ...r.env, PATH: `${bin}:${gitBinDir()}:/usr/bin:/bin`, MANPAGER: "cat", PAGER: "cat", MANWIDTH: "80" };
  delete env.MANPATH;
  const res = Bun.spawnSync({ cmd: ["git", "undo", "--help"], cwd: r.dir, env, stdout: "pipe", stderr: "pipe" });
  expect(res.stderr.toString()).toBe("");
  expect(res.exitCode).toBe(0);
  expect(res.stdout.toString().replace(/.\x08/g, "")).toContain("git-undo - undo any Git command");
});

test("output into a pipe whose reader has gone (git undo list | true) ends quietly", async () => {
  const r = makeRepo();
  r.commit("one");
  for (let i = 0; i < 5; i++) {
    r.write("a.c", `${i}\n`);
    await r.okIn("snapshot");
  }
  // `true` exits before git-undo has asked Git anything, so its writes meet a closed pipe.
  const script = `"${process.execPath}" "${CLI}" list --json | true; echo "status=\${PIPESTATUS[0]}" >&2`;
  const res = Bun.spawnSync({ cmd: ["bash", "-c", script], cwd: r.dir, env: r.env, stdout: "pipe", stderr: "pipe" });
  const stderr = res.stderr.toString();
  expect(stderr).toMatch(/status=0\n$/);
  expect(stderr.replace(/status=0\n$/, "")).toBe("");
});
