// Internal Git calls that nobody can hijack, and nothing written into $HOME:
// hooks planted where git-undo once pointed core.hooksPath run nothing; hooks
// defined in the configuration (Git 2.54+) run for the user's commands, never
// for git-undo's; a dotfiles repository (working tree = $HOME) gains no file.
import { expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { settled, SETTLE_MS } from "../helpers/auto.ts";
import { makeRepo, ROOT, tempDir, TestRepo, type RunResult } from "../helpers/repo.ts";
import { userFingerprint } from "../helpers/restore.ts";

const uid = typeof process.getuid === "function" ? process.getuid() : 0;

/** The Git on PATH, as [major, minor]. */
function gitVersion(): [number, number] {
  const out = Bun.spawnSync({ cmd: ["git", "version"], stdout: "pipe" }).stdout.toString();
  const m = /(\d+)\.(\d+)/.exec(out);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}
const [major, minor] = gitVersion();
const configHooks = major > 2 || (major === 2 && minor >= 54);

/** Two snapshots and a third state, so `git undo` has something to restore. */
function threeStates(r: TestRepo): void {
  r.commit("one", { "a.txt": "1\n" });
  r.ok("snapshot");
  r.commit("two", { "a.txt": "2\n" });
  r.ok("snapshot");
  r.write("a.txt", "3\n");
}

test("a hooks folder planted at the old predictable temp path runs nothing", () => {
  const tmp = tempDir("tmpdir");
  const planted = join(tmp, `git-undo-no-hooks-${uid}`);
  mkdirSync(planted);
  const ran = join(tmp, "ran");
  for (const hook of ["reference-transaction", "post-index-change", "pre-commit", "post-commit", "post-checkout"]) {
    writeFileSync(join(planted, hook), `#!/bin/sh\necho ${hook} >>'${ran}'\n`);
    chmodSync(join(planted, hook), 0o755);
  }
  const r = makeRepo();
  r.env = { ...r.env, TMPDIR: tmp };
  threeStates(r);
  const before = r.snapshots().length;
  r.ok(); // restores #2, recording the new state first
  r.ok("list");
  expect(r.read("a.txt")).toBe("2\n");
  expect(r.snapshots().length).toBe(before + 2);
  expect(existsSync(ran)).toBe(false);
});

test.skipIf(!configHooks)(
  `hooks defined in the configuration run for the user's commands, never for git-undo's${configHooks ? "" : ` (skipped: Git ${major}.${minor} has no config hooks; they came in 2.54)`}`,
  () => {
    const r = makeRepo();
    const log = join(r.home, "hooks.log");
    // Names as users write them: case kept, a dot, an "=" (which `-c` could not carry).
    r.git(["config", "hook.Ref.Watch.command", `echo ref "$1" >>'${log}'`]);
    r.git(["config", "hook.Ref.Watch.event", "reference-transaction"]);
    r.git(["config", "hook.idx=watch.command", `echo index >>'${log}'`]);
    r.git(["config", "hook.idx=watch.event", "post-index-change"]);
    expect(r.g("hook", "list", "reference-transaction")).toContain("Ref.Watch");

    // The user's own commands run them.
    r.commit("one", { "a.txt": "1\n" });
    const own = readFileSync(log, "utf8");
    expect(own).toContain("ref committed");
    expect(own).toContain("index");

    writeFileSync(log, "");
    r.ok("snapshot");
    r.commit("two", { "a.txt": "2\n" });
    writeFileSync(log, "");
    r.ok("snapshot");
    r.write("a.txt", "3\n");
    r.ok(); // records #3, restores #2: refs, index and working tree move
    r.ok("list");
    r.ok("restore", "3");
    expect(r.read("a.txt")).toBe("3\n");
    expect(readFileSync(log, "utf8")).toBe("");

    // And still after all that, for the user's next command.
    r.git(["add", "a.txt"]);
    expect(readFileSync(log, "utf8")).toContain("index");
  },
);

/** Every path under `dir`, `.git` left out. */
function listing(dir: string): Set<string> {
  const out = new Set<string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (p === join(dir, ".git")) continue;
      out.add(relative(dir, p));
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

test("a dotfiles repository (working tree = $HOME): hooks, worker and CLI through the launcher write nothing there", async () => {
  const home = join(tempDir("dotfiles"), "home");
  mkdirSync(home);
  const r = new TestRepo(home, home);
  // No XDG folder of its own: Bun would fall back to $HOME/.bun for its cache.
  const { XDG_CACHE_HOME: _cache, ...env } = r.env;
  r.env = { ...env, GIT_UNDO_BUN: process.execPath };
  r.git(["init", "-q", "-b", "main"]);
  r.git(["config", "user.name", "Test User"]);
  r.git(["config", "user.email", "test@example.com"]);
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.write(".bashrc", "alias ll='ls -l'\n");
  r.write(".vimrc", "set nu\n");
  r.write(".config/git/ignore", "*.swp\n");
  const launch = (...args: string[]): RunResult => {
    const p = Bun.spawnSync({ cmd: [join(ROOT, "cli", "git-undo"), ...args], cwd: home, env: r.env, stdout: "pipe", stderr: "pipe" });
    const res = { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
    if (res.code !== 0) throw new Error(`git-undo ${args.join(" ")} exited ${res.code}: ${res.stderr}`);
    return res;
  };
  const before = listing(home);

  launch("init");
  r.commit("dotfiles", {});
  await settled(r.gitDir());
  r.write(".bashrc", "alias ll='ls -la'\n");
  r.commit("ll shows all");
  await settled(r.gitDir());
  r.write(".vimrc", "set nu rnu\n");
  const saved = /#(\d+)/.exec(launch("snapshot").stdout)![1]!;
  const state = userFingerprint(r);
  launch(); // back to "ll shows all"
  expect(r.read(".vimrc")).toBe("set nu\n");
  await settled(r.gitDir());
  launch("list");
  launch("restore", saved);
  expect(userFingerprint(r)).toBe(state);
  await settled(r.gitDir());

  const added = [...listing(home)].filter((p) => !before.has(p));
  expect(added).toEqual([]);
  expect(existsSync(join(home, ".bun"))).toBe(false);
  const snaps = JSON.parse(launch("list", "--json").stdout) as { commit: string }[];
  expect(snaps.length).toBeGreaterThanOrEqual(4);
  for (const s of snaps) {
    const paths = r.g("ls-tree", "-r", "--name-only", `${s.commit}:worktree`).split("\n");
    expect(paths.filter((p) => p.split("/").includes(".bun"))).toEqual([]);
    expect(paths).toContain(".bashrc");
  }
});
