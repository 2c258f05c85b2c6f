// `git refs migrate` under a busy worker (issue #45): no snapshot is recorded
// from half of each ref format, nothing is written while the migration runs,
// and recording goes on in the new format, files to reftable and back.
import { expect, test } from "bun:test";
import { mkdirSync, renameSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { openRepo } from "../../core/repo.ts";
import { GitDirHold } from "../../worker/protocol.ts";
import { refFormatKept, refMigrationRunning } from "../../core/git-data/refs/migration.ts";
import { autoRepo, list, settled } from "../helpers/auto.ts";
import { gitAtLeast, makeRepo, refFormatOf } from "../helpers/repo.ts";

test("a migration in progress, or a ref format changed since the capture began, is told from files alone", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  const repo = await openRepo(r.at());
  expect(refFormatKept(repo)).toBe(true);
  const temp = join(repo.gitDir, "ref_migration.AbC123");
  mkdirSync(temp);
  expect(refMigrationRunning(repo.gitDir)).toBe(true);
  expect(refFormatKept(repo)).toBe(false);
  // HEAD moved away while the migration's folder is there: the worker keeps its hold (not a repository being deleted).
  mkdirSync(join(repo.gitDir, "undo"), { recursive: true });
  const hold = new GitDirHold(repo.gitDir, join(repo.gitDir, "undo"));
  renameSync(join(repo.gitDir, "HEAD"), join(temp, "HEAD"));
  expect(hold.held()).toBe(true);
  renameSync(join(temp, "HEAD"), join(repo.gitDir, "HEAD"));
  rmdirSync(temp);
  expect(refFormatKept(repo)).toBe(true);
  renameSync(join(repo.gitDir, "HEAD"), join(repo.gitDir, "HEAD.away"));
  expect(hold.held()).toBe(false);
  renameSync(join(repo.gitDir, "HEAD.away"), join(repo.gitDir, "HEAD"));
  expect(hold.held()).toBe(true);
  // The format as the repository was opened with, the other one now: not kept.
  const other = refFormatOf(r) === "files" ? "reftable" : "files";
  expect(refFormatKept({ ...repo, settings: new Map([...repo.settings, ["extensions.refstorage", other]]) })).toBe(false);
});

test("while a migration's folder is there the worker records nothing; once it is gone, it records", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  const before = list(r).length;
  const temp = join(gitDir, "ref_migration.XyZ789");
  mkdirSync(temp);
  r.git(["branch", "during-migration"]);
  await Bun.sleep(1500);
  expect(list(r).length).toBe(before);
  rmdirSync(temp);
  await settled(gitDir);
  expect(list(r).length).toBe(before + 1);
}, 60_000);

test.skipIf(!gitAtLeast(2, 46))("git refs migrate right after a commit, both ways: every snapshot readable, recording goes on in the new format", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  const start = refFormatOf(r);
  const other = start === "files" ? "reftable" : "files";
  for (const [i, format] of ([other, start] as const).entries()) {
    r.write("a.txt", `edit ${i}\n`);
    r.git(["add", "a.txt"], { env: { GIT_UNDO_INTERNAL: "1" } });
    r.git(["commit", "-q", "-m", `before migrating to ${format}`]);
    // At once: the worker is busy with the commit when the migration starts.
    r.git(["refs", "migrate", `--ref-format=${format}`]);
    expect(refFormatOf(r)).toBe(format);
    await settled(gitDir);
    const snaps = list(r);
    for (const s of snaps) expect({ n: s.number, head: s.head }).toEqual({ n: s.number, head: "main" });
    expect(snaps[0]!.summary).not.toMatch(/unreadable/);
    // The newest snapshot holds the commit made before the migration.
    expect(r.g("rev-parse", `${snaps[0]!.commit}:worktree/a.txt`)).toBe(r.g("rev-parse", "HEAD:a.txt"));
    // And the next command is recorded in the new format.
    const count = snaps.length;
    r.git(["branch", `after-${format}`]);
    await settled(gitDir);
    const after = list(r);
    expect(after.length).toBe(count + 1);
    expect(after[0]!.head).toBe("main");
  }
  expect(r.git(["fsck", "--no-dangling"]).stdout).toBe("");
}, 90_000);
