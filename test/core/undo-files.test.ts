// <gitdir>/undo/ holds only files core/undo-files.ts names (and scratch
// folders while a command runs): nothing else in the code or the hooks invents
// a name there, and uninstall drops every cache it lists.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isGuardFile, UNDO_FILES } from "../../core/undo-files.ts";
import { settled } from "../helpers/auto.ts";
import { makeRepo } from "../helpers/repo.ts";

const NAMES = new Set<string>(Object.values(UNDO_FILES));
const CACHES = [UNDO_FILES.committer, UNDO_FILES.stateBlobs, UNDO_FILES.keepTree, UNDO_FILES.snapshotCommits, UNDO_FILES.validTrees, UNDO_FILES.keptIndex, UNDO_FILES.keptIndexInfo];

test("the hook template spells the names of the marker, the mark, the worker's pid file and the probe as the core does", async () => {
  const text = readFileSync(join(import.meta.dir, "..", "..", "hooks", "hook.sh"), "utf8");
  // The template keeps the folder in git_undo_u: each name follows it.
  for (const name of [UNDO_FILES.hooksEnabled, UNDO_FILES.pending, UNDO_FILES.workerPid, UNDO_FILES.probe]) expect(text).toContain(`$git_undo_u/${name}`);
});

test("after recording, listing, a restore and an undo, every file in undo/ is a named one; uninstall drops the caches", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n", "src/b.c": "b\n" });
  expect(r.undo(["init", "--file-hooks"]).code).toBe(0);
  r.write("new.txt", "untracked\n");
  await r.run(["snapshot"]); // the hooks' worker may have recorded it already
  r.commit("two", { "a.txt": "two\n" });
  r.git(["stash", "push", "-q", "--include-untracked"]);
  await r.run(["snapshot"]); // the hooks' worker may have recorded it already
  r.write("src/b.c", "edited\n");
  await r.run(["snapshot"]); // the hooks' worker may have recorded it already
  await r.okIn("list");
  expect(r.undo(["restore", "2"]).code).toBe(0);
  await r.okIn("undo");
  // The hooks' worker may still be recording the Git commands above, in a scratch folder of its own.
  await settled(r.gitDir());
  const undoDir = join(r.gitDir(), "undo");
  const strangers = readdirSync(undoDir).filter((f) => !NAMES.has(f) && !isGuardFile(f));
  expect(strangers).toEqual([]);
  // The recorder's caches were written, so dropping them is tested for real.
  const present = CACHES.filter((f) => existsSync(join(undoDir, f)));
  expect(present.length).toBeGreaterThanOrEqual(4);
  expect(r.undo(["uninstall"]).code).toBe(0);
  expect(CACHES.filter((f) => existsSync(join(undoDir, f)))).toEqual([]);
  expect(readdirSync(r.gitDir()).filter((f) => f.startsWith("sharedindex."))).toEqual([]);
  // The snapshots stay: uninstall without --purge keeps them.
  expect(r.git(["for-each-ref", "refs/undo/"]).stdout).not.toBe("");
});
