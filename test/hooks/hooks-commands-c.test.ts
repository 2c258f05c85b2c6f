// Automatic recording with other repositories and worktrees involved (spec:
// Automatic recording; Where snapshots live): fetch, pull, a linked worktree
// recording into its own sequence, sparse checkout, and a submodule whose .git
// is a file.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { autoRepo, expectRecorded, idle, list, settled, SETTLE_MS, waitFor } from "../helpers/auto.ts";
import { makeRepo, TestRepo } from "../helpers/repo.ts";

function cloneWithUndo(up: TestRepo, name: string): TestRepo {
  const dir = join(up.dir, "..", name);
  up.git(["clone", "-q", up.dir, dir]);
  const r = new TestRepo(dir, up.home);
  r.git(["config", "user.name", "Test User"]);
  r.git(["config", "user.email", "test@example.com"]);
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  expect(r.undo(["init"]).code).toBe(0);
  return r;
}

test("fetch and pull are recorded", async () => {
  const up = makeRepo();
  up.commit("one", { "a.txt": "1\n" });
  const r = cloneWithUndo(up, "down");
  const gitDir = r.gitDir();
  let snaps = list(r);
  expect(snaps).toHaveLength(1);

  up.commit("two", { "a.txt": "2\n" });
  r.git(["fetch", "-q"]);
  snaps = await expectRecorded(r, snaps, /origin\/main/, { gitDir });

  // A pull is one command, fetch and merge: one snapshot. Its worker lingers
  // from the fetch before it, as a user's does (the suite's others leave at
  // once). A worker only starting may read the fetch's mark after the fetch
  // has exited, and then cannot tell it from a command of its own: it records
  // it alone, a state Git saw, and the merge after it (README, "What git-undo
  // cannot bring back" has the limit).
  r.env.GIT_UNDO_WORKER_LINGER = "4000";
  r.git(["update-ref", "refs/warm", "HEAD"]);
  await waitFor(() => !existsSync(join(gitDir, "undo", "pending")) && !existsSync(join(gitDir, "undo", "pending.taken")) && list(r).length > snaps.length, "the warm-up's snapshot");
  snaps = list(r);
  expect(idle(join(gitDir, "undo"))).toBe(false); // the worker lingers
  up.commit("three", { "a.txt": "3\n" });
  r.git(["pull", "-q", "--ff-only"]);
  snaps = await expectRecorded(r, snaps, /^pull -q --ff-only: Fast-forward$/, { gitDir });
  expect(r.read("a.txt")).toBe("3\n");
}, 60_000);

test("a linked worktree records into its own sequence; sparse-checkout set is recorded", async () => {
  const r = autoRepo({ files: { "a.txt": "a\n", "docs/d.txt": "d\n", "src/s.txt": "s\n" } });
  const gitDir = r.gitDir();
  const wt = join(r.dir, "..", "linked");
  r.git(["worktree", "add", "-q", "-b", "side", wt]);
  await settled(gitDir);
  const wtGitDir = join(gitDir, "worktrees", "linked");
  await settled(wtGitDir);
  let linked = list(r, wt);
  expect(linked.length).toBeGreaterThanOrEqual(1);
  const mainCount = list(r).length;

  r.write("../linked/w.txt", "w\n");
  r.git(["add", "w.txt"], { cwd: wt });
  r.git(["commit", "-q", "-m", "in the linked worktree"], { cwd: wt });
  // Typed back to back, the add and the commit may share a snapshot (the guard then counts both).
  linked = await expectRecorded(r, linked, /^commit: in the linked worktree( \(2 commands\))?$/, { cwd: wt, gitDir: wtGitDir });
  expect(r.g("for-each-ref", "--format=%(refname)", `refs/undo/worktrees/linked/snapshots/`).split("\n")).toHaveLength(linked.length);
  await settled(gitDir);
  expect(list(r)).toHaveLength(mainCount); // the main worktree's sequence is its own

  // sparse-checkout set only sets skip-worktree bits, which a snapshot does not hold
  // (spec: Known limits); its hook still records what is new: the branch the
  // linked worktree moved.
  const snaps = list(r);
  r.git(["sparse-checkout", "set", "docs"]);
  await expectRecorded(r, snaps, /^branch side moved$/, { gitDir });
  expect(r.git(["ls-files", "-t", "src/s.txt"]).stdout).toBe("S src/s.txt\n");
}, 60_000);

test("a submodule, whose .git is a file, records into its own sequence", async () => {
  const lib = makeRepo();
  lib.commit("lib", { "l.txt": "l\n" });
  const r = autoRepo();
  r.git(["-c", "protocol.file.allow=always", "submodule", "add", "-q", lib.dir, "lib"]);
  r.git(["commit", "-q", "-m", "add lib"]);
  await settled(r.gitDir());
  const sub = r.path("lib");
  expect(r.undo(["init"], { cwd: sub }).code).toBe(0);
  const subGitDir = r.g("-C", sub, "rev-parse", "--absolute-git-dir");
  expect(subGitDir).toBe(join(r.gitDir(), "modules", "lib"));
  let snaps = list(r, sub);
  r.write("lib/m.txt", "m\n");
  r.git(["add", "m.txt"], { cwd: sub });
  snaps = await expectRecorded(r, snaps, /^staged: m\.txt$/, { cwd: sub, gitDir: subGitDir });
  r.git(["-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "in the submodule"], { cwd: sub });
  await expectRecorded(r, snaps, /^commit: in the submodule$/, { cwd: sub, gitDir: subGitDir });
}, 60_000);
