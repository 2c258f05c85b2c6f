// Submodules and the working-tree merge (issue #27.1). Git's two-tree merge
// checks nothing inside a gitlink it replaces by a file or symlink: it deletes
// the folder, the submodule's uncommitted and untracked work with it. A restore
// must refuse that (a typed blocker, shown by --dry-run and the picker's
// preview too), and a submodule the target does not have at all stays on disk
// with its files, said so. Nothing the user had is lost either way.
import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { previewOf } from "../helpers/hostile.ts";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { expectRefusedIn } from "../helpers/restore.ts";

const ALLOW_FILE = ["-c", "protocol.file.allow=always"];

/** What `sub` had before: `before` (a symlink to vendor, a file, nothing), then a submodule. */
function submoduleOver(before: "symlink" | "file" | "nothing" | "folder"): { r: TestRepo; upstream: TestRepo } {
  const upstream = makeRepo();
  upstream.commit("s", { "s.txt": "s\n" });
  const r = makeRepo();
  r.write("a.txt", "a\n");
  r.write("vendor/v.txt", "v\n");
  if (before === "symlink") r.symlink("vendor", "sub");
  if (before === "file") r.write("sub", "i am a file\n");
  if (before === "folder") r.write("sub/x.txt", "x\n");
  r.commit(`sub is a ${before}`);
  r.ok("snapshot"); // #1
  if (before !== "nothing") r.git(["rm", "-rq", "sub"]);
  r.git([...ALLOW_FILE, "submodule", "add", "-q", upstream.dir, "sub"]);
  r.git(["commit", "-q", "-m", "now a submodule"]);
  r.ok("snapshot"); // #2
  return { r, upstream };
}

/** Uncommitted work in the submodule: an edit of a tracked file and a file it has never seen. */
function dirty(r: TestRepo): void {
  r.write("sub/s.txt", "s\nPRECIOUS edit\n");
  r.write("sub/notes.txt", "PRECIOUS notes\n");
}

/** Every file in the submodule's folder (its .git file included), with its content. */
function folder(r: TestRepo, rel = "sub"): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(r.path(dir))) {
      const p = `${dir}/${name}`;
      if (lstatSync(r.path(p)).isDirectory()) walk(p);
      else out[p] = readFileSync(r.path(p), "utf8");
    }
  };
  walk(rel);
  return out;
}

describe("a submodule where the target has a file or symlink", () => {
  for (const before of ["symlink", "file"] as const) {
    test(`with uncommitted work, replaced by a ${before}: refused, by the dry run and the preview too; nothing changes`, async () => {
      const { r } = submoduleOver(before);
      dirty(r);
      const had = folder(r);
      expect(had["sub/notes.txt"]).toBe("PRECIOUS notes\n");

      const dry = await r.run(["restore", "1", "--dry-run"]);
      expect(dry.code).toBe(1);
      expect(dry.stdout).toMatch(/would refuse: a submodule's folder holds files where snapshot #1 has a file: sub;/);
      expect(folder(r)).toEqual(had);

      const preview = previewOf(r, 1);
      expect(preview.code).toBe(0);
      expect(preview.stdout).toMatch(/refused: a submodule's folder holds files where snapshot #1 has a file: sub;/);

      await expectRefusedIn(r, ["restore", "1"], /a submodule's folder holds files where snapshot #1 has a file: sub; git-undo never deletes/);
      await expectRefusedIn(r, ["undo"], /submodule's folder holds files/);
      expect(lstatSync(r.path("sub")).isDirectory()).toBe(true);
      expect(folder(r)).toEqual(had);
    });
  }

  test("a clean submodule is refused too: its folder holds files (the user moves it away, then the restore goes through)", async () => {
    const { r } = submoduleOver("symlink");
    const had = folder(r);
    await expectRefusedIn(r, ["restore", "1"], /submodule's folder holds files where snapshot #1 has a file: sub/);
    expect(folder(r)).toEqual(had);
    // What the message tells the user to do works: the folder moved aside, the restore goes through.
    r.git(["rm", "-q", "--cached", "sub"]); // as `mv` would leave it: the capture records it gone
    Bun.spawnSync({ cmd: ["mv", r.path("sub"), r.path("sub.kept")] });
    await r.okIn("restore", "1");
    expect(lstatSync(r.path("sub")).isSymbolicLink()).toBe(true);
    expect(folder(r, "sub.kept")["sub.kept/s.txt"]).toBe("s\n");
  });

  test("a submodule never checked out (an empty folder) holds nothing to lose: the restore goes through", async () => {
    const { r } = submoduleOver("file");
    r.git(["submodule", "deinit", "-q", "sub"]); // empties the folder, keeps the gitlink
    expect(readdirSync(r.path("sub"))).toEqual([]);
    const out = await r.okIn("restore", "1");
    expect(out).not.toMatch(/submodule/);
    expect(r.read("sub")).toBe("i am a file\n");
  });
});

describe("a submodule the target does not have", () => {
  for (const state of ["clean", "dirty"] as const) {
    test(`${state}: its folder stays on disk with every file, and the dry run and the report say so`, async () => {
      const { r } = submoduleOver("nothing");
      if (state === "dirty") dirty(r);
      const had = folder(r);
      const dry = await r.okIn("restore", "1", "--dry-run");
      expect(dry).toMatch(/a submodule's folder stays on disk with its files: sub \(git-undo never deletes them\)/);
      expect(previewOf(r, 1).stdout).toMatch(/a submodule's folder stays on disk with its files: sub/);
      const out = await r.okIn("restore", "1");
      expect(out).toMatch(/a submodule's folder stays on disk with its files: sub/);
      expect(folder(r)).toEqual(had);
      expect(r.g("ls-files")).toBe("a.txt\nvendor/v.txt");
      // And back: the submodule's gitlink returns, its files untouched.
      await r.okIn("redo");
      expect(r.g("ls-files", "-s", "sub")).toMatch(/^160000 /);
      expect(folder(r)).toEqual(had);
    });
  }

  test("replaced by a folder of files: the target's files are written beside the submodule's, none overwritten", async () => {
    const { r } = submoduleOver("folder");
    dirty(r);
    const had = folder(r);
    const out = await r.okIn("restore", "1");
    expect(out).toMatch(/a submodule's folder stays on disk with its files: sub/);
    expect(folder(r)).toEqual({ ...had, "sub/x.txt": "x\n" });
  });

  test("a file of the submodule where the target creates one: refused, the file kept", async () => {
    const { r } = submoduleOver("folder");
    r.write("sub/x.txt", "PRECIOUS, the submodule's own\n");
    const had = folder(r);
    await expectRefusedIn(r, ["restore", "1"], /sub\/x\.txt/);
    expect(folder(r)).toEqual(had);
  });
});

test("a folder holding an ignored file, where the target has a file: refused, the folder kept", async () => {
  const r = makeRepo();
  r.commit("d is a file", { "d": "file\n", ".gitignore": "*.log\n" });
  await r.okIn("snapshot"); // #1
  r.git(["rm", "-q", "d"]);
  r.commit("d is a folder", { "d/a.txt": "a\n" });
  r.write("d/build.log", "PRECIOUS, ignored\n");
  await r.okIn("snapshot"); // #2
  const dry = await r.run(["restore", "1", "--dry-run"]);
  expect(dry.code).toBe(1);
  expect(dry.stdout).toMatch(/would refuse: .*d\/build\.log/);
  await expectRefusedIn(r, ["restore", "1"], /d\/build\.log/);
  expect(r.read("d/build.log")).toBe("PRECIOUS, ignored\n");
  expect(existsSync(join(r.dir, "d", "a.txt"))).toBe(true);
});

describe("a submodule at another commit (issue #30.11)", () => {
  test("no file is said to change: the report, the dry run and the preview name the submodule once", async () => {
    const upstream = makeRepo();
    const one = upstream.commit("one", { "s.txt": "1\n" });
    upstream.commit("two", { "s.txt": "2\n" });
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.git([...ALLOW_FILE, "submodule", "add", "-q", upstream.dir, "sub"]);
    r.git(["-C", "sub", "checkout", "-q", one]);
    r.git(["add", "sub"]);
    r.git(["commit", "-q", "-m", "sub at one"]);
    await r.okIn("snapshot"); // #1
    r.git(["-C", "sub", "checkout", "-q", "main"]);
    r.git(["add", "sub"]);
    r.git(["commit", "-q", "-m", "sub at two"]);
    await r.okIn("snapshot"); // #2
    const said = `submodule sub: #1 records ${one.slice(0, 7)}, its files stay as they are (git submodule update checks it out)`;
    const preview = previewOf(r, 1).stdout;
    for (const out of [await r.okIn("undo", "--dry-run"), preview.slice(0, preview.indexOf("diff --git")), await r.okIn("undo")]) {
      expect(out).toContain(said);
      expect(out).not.toMatch(/files:|^files |\+1 -1|note: worktree/m);
    }
    expect(r.read("sub/s.txt")).toBe("2\n");
  });
});
