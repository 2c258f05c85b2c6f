// A dotfiles repository: a bare repository in $HOME/.cfg used with
// --work-tree=$HOME and status.showUntrackedFiles=no. Snapshots hold the
// tracked files only (never $HOME's untracked secrets), and a recording opened
// from a hook (core/repo.ts openHookRepo, what the worker records with) sees
// the same work tree as the user's own `git undo`, so their snapshots agree.
import { expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { record } from "../../core/record.ts";
import { openHookRepo, openRepo, type Place } from "../../core/repo.ts";
import { isolatedEnv, makeRepo, tempDir, TestRepo } from "../helpers/repo.ts";
import { entries, snapshotRefs, treeFiles } from "../helpers/snap.ts";

/** Where core runs in-process as the worker would: in `cwd` with `env` less the command's GIT_DIR and GIT_WORK_TREE (the worker drops them), plus `extra`. */
function asWorker(cwd: string, env: Record<string, string>, extra: Record<string, string> = {}): Place {
  const { GIT_DIR: _dir, GIT_WORK_TREE: _tree, ...rest } = env;
  return { cwd, env: { ...rest, ...extra } };
}

const SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot really\n";

/** $HOME with a bare repository in .cfg, as `alias config='git --git-dir=$HOME/.cfg --work-tree=$HOME'` uses it. */
function dotfiles(opts: { showUntracked?: string } = {}): { r: TestRepo; cfg: string } {
  const home = join(tempDir("dotfiles"), "home");
  mkdirSync(home);
  const cfg = join(home, ".cfg");
  const r = new TestRepo(home, home);
  r.git(["init", "-q", "--bare", "-b", "main", cfg]);
  r.env = isolatedEnv(home, { GIT_DIR: cfg, GIT_WORK_TREE: home });
  r.git(["config", "user.name", "Test User"]);
  r.git(["config", "user.email", "test@example.com"]);
  r.git(["config", "status.showUntrackedFiles", opts.showUntracked ?? "no"]);
  r.write(".ssh/id_ed25519", SECRET);
  r.write("notes.txt", "untracked\n");
  r.write(".bashrc", "alias ll='ls -l'\n");
  r.git(["add", ".bashrc"], { env: { GIT_UNDO_INTERNAL: "1" } });
  r.git(["commit", "-q", "-m", "bashrc"]);
  return { r, cfg };
}

/** Whether an object with this content is in the repository. */
const stored = (r: TestRepo, content: string): boolean => {
  const id = r.git(["hash-object", "--stdin"], { input: content }).stdout.trim();
  return r.git(["cat-file", "-e", id], { allowFail: true }).code === 0;
};

test("status.showUntrackedFiles=no: only tracked files are recorded, no untracked file's content enters the repository", async () => {
  const { r } = dotfiles();
  r.write(".bashrc", "alias ll='ls -la'\n");
  expect(r.undo(["snapshot"]).code).toBe(0);
  const [one] = snapshotRefs(r);
  expect([...treeFiles(r, `${one!.tree}:worktree`).keys()]).toEqual([".bashrc"]);
  expect(stored(r, SECRET)).toBe(false);
  expect(stored(r, "untracked\n")).toBe(false);
  // Undo and redo move the tracked file; the untracked ones are never touched.
  r.git(["commit", "-q", "-am", "ll -la"]);
  expect(r.undo([]).code).toBe(0);
  expect(r.read(".bashrc")).toBe("alias ll='ls -la'\n");
  expect(r.g("log", "-1", "--format=%s")).toBe("bashrc");
  expect(r.read(".ssh/id_ed25519")).toBe(SECRET);
  expect(r.read("notes.txt")).toBe("untracked\n");
  expect(stored(r, SECRET)).toBe(false);
  // Nothing large is left out either: there is nothing untracked to look at.
  expect(r.undo(["doctor"]).stdout).not.toContain("undo.maxNewFileSize");
});

test("any other value of status.showUntrackedFiles records untracked files, as the format says", async () => {
  const { r } = dotfiles({ showUntracked: "normal" });
  // As the dotfiles guides say: else the repository's own folder is an untracked file too.
  r.write(".gitignore", ".cfg/\n");
  expect(r.undo(["snapshot"]).code).toBe(0);
  const files = [...treeFiles(r, `${snapshotRefs(r)[0]!.tree}:worktree`).keys()];
  expect(files).toContain(".ssh/id_ed25519");
  expect(files).toContain("notes.txt");
});

test("a recording opened from a hook sees the work tree the command had: the same snapshot as the user's git undo", async () => {
  const { r, cfg } = dotfiles();
  expect(r.undo(["snapshot"]).code).toBe(0);
  const [cli] = snapshotRefs(r);
  expect(Object.keys(entries(r, cli!.tree))).toContain("worktree");
  // Git runs the hooks of `git --work-tree=$HOME` in $HOME.
  const repo = await openHookRepo(cfg, asWorker(r.dir, r.env));
  expect(repo.bare).toBe(false);
  expect(repo.workTree).toBe(r.dir);
  const same = await record(repo, { kind: "change" });
  expect(same.created).toBe(false); // the very state the CLI recorded
  r.write(".bashrc", "edited by hand\n");
  const changed = await record(repo, { kind: "change" });
  expect(changed.created).toBe(true);
  const tree = snapshotRefs(r).at(-1)!.tree;
  expect(r.g("cat-file", "blob", `${tree}:worktree/.bashrc`)).toBe("edited by hand");
  expect(stored(r, SECRET)).toBe(false);
  // What the worker opened before: GIT_DIR alone makes Git call it bare, and records no files.
  expect((await openRepo(asWorker(r.dir, r.env, { GIT_DIR: cfg }))).bare).toBe(true);
});

test("a snapshot recorded without a work tree is named so by undo, not blamed on undo.worktree", async () => {
  const { r, cfg } = dotfiles();
  const bare = await openRepo(asWorker(r.dir, r.env, { GIT_DIR: cfg }));
  expect((await record(bare, { kind: "change" })).created).toBe(true);
  r.write(".bashrc", "later\n");
  expect(r.undo(["snapshot"]).code).toBe(0);
  const res = await r.run(["restore", "1"]);
  expect(res.code).toBe(0);
  expect(res.stdout + res.stderr).toContain("recorded without a work tree");
  expect(res.stdout + res.stderr).not.toContain("undo.worktree");
  expect(r.read(".bashrc")).toBe("later\n"); // no record of the files: they stay
});

test("core.worktree on a bare-made repository, and a hook run in the git directory (a push): each opened as Git would, never .git as the work tree", async () => {
  const { r, cfg } = dotfiles();
  r.git(["config", "core.bare", "false"]);
  r.git(["config", "core.worktree", r.dir]);
  const viaConfig = new TestRepo(r.dir, r.home);
  viaConfig.env = isolatedEnv(r.home, { GIT_DIR: cfg });
  expect(viaConfig.undo(["snapshot"]).code).toBe(0);
  expect(Object.keys(entries(r, snapshotRefs(r)[0]!.tree))).toContain("worktree");
  expect((await openHookRepo(cfg, asWorker(r.dir, r.env))).workTree).toBe(r.dir);

  // A non-bare repository whose hook ran in its git directory: no work tree, and not .git for one.
  const plain = makeRepo();
  plain.commit("one", { "a.txt": "1\n" });
  const hooked = await openHookRepo(plain.gitDir(), asWorker(plain.gitDir(), plain.env));
  expect(hooked.workTree).toBeNull();
  const guessed = await openRepo(asWorker(plain.gitDir(), plain.env, { GIT_DIR: plain.gitDir() }));
  expect(guessed.workTree).toBeNull();
});
