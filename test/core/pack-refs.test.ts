// Packing the snapshot refs (core/git-data/refs/store.ts packSnapshotRefs, every hundredth
// recording): loose, each is a file every listing of refs opens. Git 2.42+
// packs them by `--include`; an older Git refuses that option and packs every
// ref with `--all`, as `git gc` does. Either way no ref moves or goes; and
// where gc.packRefs tells git gc not to pack refs, nothing is packed.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { packSnapshotRefs } from "../../core/git-data/refs/store.ts";
import { openRepo } from "../../core/repo.ts";
import { makeRepo, refFormatOf } from "../helpers/repo.ts";

/** The files under a folder, recursively (loose refs). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

test("the snapshot refs end up packed, and every ref (branches, tags, snapshots) still names what it did", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "1\n" });
  r.git(["branch", "feature"]);
  r.git(["tag", "-a", "-m", "v1", "v1"]);
  for (let i = 2; i <= 4; i++) {
    r.write("a.txt", `${i}\n`);
    await r.okIn("snapshot");
  }
  const refsBefore = r.git(["for-each-ref", "--format=%(refname) %(objectname)"]).stdout;
  expect(refsBefore).toContain("refs/undo/");
  const files = refFormatOf(r) === "files";
  if (files) expect(filesUnder(join(r.gitDir(), "refs", "undo")).length).toBeGreaterThan(0);

  await packSnapshotRefs(await openRepo(r.at()));

  expect(r.git(["for-each-ref", "--format=%(refname) %(objectname)"]).stdout).toBe(refsBefore);
  if (files) {
    expect(filesUnder(join(r.gitDir(), "refs", "undo"))).toEqual([]);
    expect(r.git(["cat-file", "-p", "main:a.txt"]).stdout).toBe("1\n");
  }
  // The history reads as before, and the next recording follows it.
  expect((await r.snapshotsIn()).map((s) => s.number)).toEqual([3, 2, 1]);
  r.write("a.txt", "5\n");
  await r.okIn("snapshot");
  expect((await r.snapshotsIn()).map((s) => s.number)).toEqual([4, 3, 2, 1]);
});

test("gc.packRefs=false: nothing is packed, the snapshot refs stay loose files", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "1\n" });
  r.git(["config", "gc.packRefs", "false"]);
  for (let i = 2; i <= 3; i++) {
    r.write("a.txt", `${i}\n`);
    await r.okIn("snapshot");
  }
  if (refFormatOf(r) !== "files") return; // reftable has no loose refs
  const before = filesUnder(join(r.gitDir(), "refs", "undo"));
  expect(before.length).toBe(2);
  await packSnapshotRefs(await openRepo(r.at()));
  expect(filesUnder(join(r.gitDir(), "refs", "undo"))).toEqual(before);
  expect(existsSync(join(r.gitDir(), "packed-refs")) ? readFileSync(join(r.gitDir(), "packed-refs"), "utf8") : "").not.toContain("refs/undo/");
});
