// Snapshots whose objects are gone (a disk fault, a pack deleted by hand):
// Git's gc, repack and fsck fail on their refs. doctor names them, `git undo
// gc` deletes them and keeps the others, and Git's maintenance works again.
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { userFingerprint } from "../helpers/restore.ts";
import { snapshotRefs } from "../helpers/snap.ts";

const numbers = (r: TestRepo) => snapshotRefs(r).map((s) => Number(s.ref.slice(-10)));

/** Delete the loose object `id` (git-undo writes its blobs loose). */
function loseObject(r: TestRepo, id: string): void {
  const path = join(r.g("rev-parse", "--git-path", "objects"), id.slice(0, 2), id.slice(2));
  rmSync(path.startsWith("/") ? path : join(r.dir, path));
  expect(r.git(["cat-file", "-e", id], { allowFail: true }).code).not.toBe(0);
}

const gitGcWorks = (r: TestRepo) => r.git(["gc", "-q"], { allowFail: true }).code === 0;

test("a blob only an old snapshot holds is lost: doctor names it, git undo gc deletes it alone, git gc and fsck work again", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "1\n" });
  r.write("draft.txt", "only #1 holds this\n");
  await r.okIn("snapshot"); // #1
  const lost = r.git(["hash-object", "--stdin"], { input: "only #1 holds this\n" }).stdout.trim();
  r.write("draft.txt", "second draft\n");
  await r.okIn("snapshot"); // #2
  const second = userFingerprint(r);
  r.write("draft.txt", "third draft\n");
  await r.okIn("snapshot"); // #3
  loseObject(r, lost);
  expect(gitGcWorks(r)).toBe(false);

  const doctor = await r.run(["doctor"]);
  expect(doctor.stdout).toContain(`1 object the snapshots hold is missing from the repository (${lost}); snapshot #1 needs it`);
  expect(doctor.stdout).toContain("'git undo gc' deletes it");

  const dry = await r.run(["gc", "--dry-run", "--expire=never"]);
  expect(dry.code).toBe(0);
  expect(dry.stdout).toContain(`would delete 1 snapshot that needs an object missing from the repository (${lost}), on which Git's gc and fsck fail: #1`);
  expect(numbers(r)).toEqual([1, 2, 3]);

  const gc = await r.run(["gc", "--expire=never"]);
  expect(gc.stderr).toBe("");
  expect(gc.code).toBe(0);
  expect(gc.stdout).toContain("deleted 1 snapshot that needs an object missing");
  expect(numbers(r)).toEqual([2, 3]);
  expect(gitGcWorks(r)).toBe(true);
  expect(r.git(["fsck", "--no-progress"], { allowFail: true }).code).toBe(0);
  expect((await r.run(["doctor"])).stdout).not.toContain("missing from the repository");

  // The others restore; recording goes on.
  expect((await r.run(["restore", "2"])).code).toBe(0);
  expect(userFingerprint(r)).toBe(second);
  r.commit("two", { "a.txt": "2\n" });
  expect(await r.okIn("snapshot")).toMatch(/^#5 /);
});

test("the newest snapshot is damaged: the current state is recorded first, then it goes; numbers keep growing", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "1\n" });
  await r.okIn("snapshot"); // #1
  r.write("draft.txt", "only #2 holds this\n");
  await r.okIn("snapshot"); // #2
  const lost = r.git(["hash-object", "--stdin"], { input: "only #2 holds this\n" }).stdout.trim();
  r.remove("draft.txt");
  loseObject(r, lost);
  expect(gitGcWorks(r)).toBe(false);

  const dry = await r.run(["gc", "--dry-run", "--expire=never"]);
  expect(dry.stdout).toContain("the newest is among them: the current state would be recorded first");
  expect(numbers(r)).toEqual([1, 2]);

  const gc = await r.run(["gc", "--expire=never"]);
  expect(gc.stderr).toBe("");
  expect(gc.code).toBe(0);
  expect(gc.stdout).toContain("the newest was among them: the current state was recorded first as #3");
  expect(numbers(r)).toEqual([1, 3]);
  expect(gitGcWorks(r)).toBe(true);
  expect(r.git(["fsck", "--no-progress"], { allowFail: true }).code).toBe(0);
  r.write("a.txt", "edited\n");
  expect(await r.okIn("snapshot")).toMatch(/^#4 /);
  expect((await r.run([])).code).toBe(0);
  expect(r.read("a.txt")).toBe("1\n");
});
