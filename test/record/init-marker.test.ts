// The hooks act only where `git undo init` ran (issue 4: a hook fired where
// init never ran does nothing). init writes <gitdir>/undo/hooks-enabled; a
// snapshot taken by hand creates <gitdir>/undo/ too, and with one hooks folder
// shared by every repository that directory alone must not turn recording on.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { expectRecorded, list, settled, SETTLE_MS } from "../helpers/auto.ts";
import { makeRepo, tempDir, type TestRepo } from "../helpers/repo.ts";
import { undoFile, UNDO_FILES } from "../../core/undo-files.ts";

function repo(): TestRepo {
  const r = makeRepo();
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.commit("base", { "a.txt": "a\n" });
  return r;
}

test("a shared hooks folder records where init ran, and not where only 'git undo snapshot' did", async () => {
  const r = repo();
  const other = repo();
  other.env = r.env; // one HOME: the same global core.hooksPath
  const shared = join(tempDir("global"), "hooks");
  mkdirSync(shared);
  writeFileSync(join(r.home, ".gitconfig"), `[core]\n\thooksPath = ${shared}\n`);

  expect(r.undo(["init", "--file-hooks", "--global-hooks"]).code).toBe(0);
  expect(existsSync(join(r.gitDir(), "undo", UNDO_FILES.hooksEnabled))).toBe(true);
  for (const h of ["reference-transaction", "post-index-change"]) {
    expect(readFileSync(join(shared, h), "utf8")).toContain(`/undo/${UNDO_FILES.hooksEnabled}" ]`);
  }

  // A snapshot by hand makes other's undo/ (its lock lives there), not its marker.
  const manual = await other.run(["snapshot"]);
  expect(manual.code).toBe(0);
  expect(existsSync(join(other.gitDir(), "undo"))).toBe(true);
  expect(existsSync(join(other.gitDir(), "undo", UNDO_FILES.hooksEnabled))).toBe(false);
  let otherSnaps = list(other);
  expect(otherSnaps).toHaveLength(1);

  // The hooks run inside the commit, so had they acted, the mark would be there when it returns.
  let res = other.git(["commit", "-q", "--allow-empty", "-m", "not recorded"]);
  expect(res.stdout + res.stderr).toBe("");
  expect(existsSync(join(other.gitDir(), "undo", "pending"))).toBe(false);
  expect(existsSync(join(other.gitDir(), "undo", "worker.pid"))).toBe(false);

  let snaps = list(r);
  r.commit("recorded", { "b.txt": "b\n" });
  snaps = await expectRecorded(r, snaps, /^commit: recorded$/);
  // Long after r's worker settled, other still has only its manual snapshot.
  await Bun.sleep(SETTLE_MS * 2);
  expect(list(other)).toHaveLength(1);

  const doc = await other.run(["doctor"]);
  expect(doc.code).toBe(1);
  expect(doc.stdout).toContain(`recording is off here: init has not run here (no ${join(other.gitDir(), "undo", UNDO_FILES.hooksEnabled)})`);
  expect(r.undo(["doctor"]).stdout).toContain(`ok       recording is on here`);

  // A linked worktree of other stays off too; one of r gets its own marker from the hooks.
  const otherWt = join(other.dir, "..", "other-linked");
  other.git(["worktree", "add", "-q", "-b", "other-side", otherWt]);
  expect(existsSync(join(other.gitDir(), "worktrees", "other-linked", "undo"))).toBe(false);
  expect(existsSync(join(other.gitDir(), "undo", "pending"))).toBe(false);
  otherSnaps = list(other);
  expect(otherSnaps).toHaveLength(1);

  const wt = join(r.dir, "..", "r-linked");
  r.git(["worktree", "add", "-q", "-b", "side", wt]);
  const wtGitDir = join(r.gitDir(), "worktrees", "r-linked");
  expect(existsSync(join(wtGitDir, "undo", UNDO_FILES.hooksEnabled))).toBe(true);
  await settled(wtGitDir);
  await settled(r.gitDir());
  let linked = list(r, wt);
  expect(linked.length).toBeGreaterThanOrEqual(1);
  r.git(["commit", "-q", "--allow-empty", "-m", "in the linked worktree"], { cwd: wt });
  linked = await expectRecorded(r, linked, /^commit: in the linked worktree$/, { cwd: wt, gitDir: wtGitDir });

  // Once other runs init, the same hooks record there.
  expect(other.undo(["init", "--file-hooks", "--global-hooks"]).code).toBe(0);
  otherSnaps = list(other);
  other.commit("now recorded", { "c.txt": "c\n" });
  await expectRecorded(other, otherSnaps, /^commit: now recorded$/);

  // uninstall takes every worktree's marker away, leaving the snapshots.
  await settled(r.gitDir());
  const kept = list(r);
  expect(kept.length).toBeGreaterThan(snaps.length);
  expect(existsSync(join(r.gitDir(), "undo", "worktree-index"))).toBe(true);
  expect(existsSync(join(r.gitDir(), "undo", "valid-trees"))).toBe(true); // the list's checked states
  expect(r.undo(["uninstall", "--global-hooks"]).code).toBe(0);
  expect(existsSync(join(r.gitDir(), "undo", UNDO_FILES.hooksEnabled))).toBe(false);
  // The recorder's caches (the kept index, the committer answer) go with it.
  for (const f of ["worktree-index", "worktree-index.json", "committer.json", "state-blobs.json", "valid-trees"]) expect(existsSync(join(r.gitDir(), "undo", f))).toBe(false);
  // The kept indexes are never split: no shared index of git-undo's in either worktree's git dir.
  const sharedIndexes = (d: string) => readdirSync(d).filter((f) => f.startsWith("sharedindex."));
  for (const d of [r.gitDir(), wtGitDir]) expect(sharedIndexes(d)).toEqual([]);
  expect(existsSync(join(wtGitDir, "undo", UNDO_FILES.hooksEnabled))).toBe(false);
  expect(list(r)).toEqual(kept);
  expect(list(r, wt)).toEqual(linked);
  res = await r.run(["uninstall", "--purge"]);
  expect(res.code).toBe(0);
  expect(existsSync(join(r.gitDir(), "undo"))).toBe(false);
  expect(existsSync(join(wtGitDir, "undo"))).toBe(false);
}, 90_000);

test("uninstall in a repository with its own hooks folder removes the marker; the hooks then stay quiet", async () => {
  const r = repo();
  expect(r.undo(["init", "--file-hooks"]).code).toBe(0);
  const undoDir = join(r.gitDir(), "undo");
  expect(existsSync(undoFile(undoDir, "hooksEnabled"))).toBe(true);
  await settled(r.gitDir());
  expect(r.undo(["uninstall"]).code).toBe(0);
  expect(existsSync(undoFile(undoDir, "hooksEnabled"))).toBe(false);
  expect(existsSync(undoDir)).toBe(true); // snapshots and their lock stay
  // Hooks left behind (a copy the user kept) do nothing without the marker.
  expect(r.undo(["init", "--file-hooks"]).code).toBe(0);
  const before = list(r);
  const hook = readFileSync(join(r.gitDir(), "hooks", "reference-transaction"), "utf8");
  expect(r.undo(["uninstall"]).code).toBe(0);
  writeFileSync(join(r.gitDir(), "hooks", "reference-transaction"), hook, { mode: 0o755 });
  const res = r.git(["commit", "-q", "--allow-empty", "-m", "not recorded"]);
  expect(res.stdout + res.stderr).toBe("");
  expect(existsSync(join(undoDir, "pending"))).toBe(false);
  expect(list(r)).toHaveLength(before.length);
}, 60_000);
