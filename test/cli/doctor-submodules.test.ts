// git undo doctor in a superproject (issue #42.7): each submodule is a
// repository of its own, which the superproject's hooks never see. doctor
// names every checked-out submodule, nested ones too, where init has not run,
// with the command that turns recording on there; one where it ran, or one
// not checked out, is no problem; and without .gitmodules no Git asks.
import { expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, ROOT, type TestRepo } from "../helpers/repo.ts";

// Newer Gits refuse local clones of submodules without this (CVE-2022-39253).
const ALLOW_FILE = ["-c", "protocol.file.allow=always"];

/** A superproject with `sub` and `odd name` (which has `inner` inside), each checked out, and `absent` not checked out; init ran in the superproject. */
function superproject(): TestRepo {
  const leaf = makeRepo();
  leaf.commit("leaf", { "l.txt": "l\n" });
  const middle = makeRepo();
  middle.commit("middle", { "m.txt": "m\n" });
  middle.git([...ALLOW_FILE, "submodule", "add", "-q", leaf.dir, "inner"]);
  middle.git(["commit", "-q", "-m", "inner"]);
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  r.git([...ALLOW_FILE, "submodule", "add", "-q", leaf.dir, "sub"]);
  r.git([...ALLOW_FILE, "submodule", "add", "-q", middle.dir, "odd name"]);
  r.git([...ALLOW_FILE, "submodule", "update", "-q", "--init", "--recursive"]);
  r.git([...ALLOW_FILE, "submodule", "add", "-q", leaf.dir, "absent"]);
  r.git(["commit", "-q", "-m", "submodules"]);
  r.git(["submodule", "deinit", "-q", "absent"]); // its folder stays, empty: nothing there to record
  return r;
}

const submoduleLines = (stdout: string): string[] => stdout.split("\n").filter((l) => /submodule/.test(l));

test("doctor names each checked-out submodule that records nothing, with the command for it, from where it runs", async () => {
  const r = superproject();
  await r.okIn("init");
  const doctor = await r.run(["doctor"]);
  expect(doctor.code).toBe(1);
  expect(submoduleLines(doctor.stdout)).toEqual([
    "problem  submodule odd name: recording is off there (init has not run in it), so nothing in it is recorded; turn it on with: git -C 'odd name' undo init",
    "problem  submodule odd name/inner: recording is off there (init has not run in it), so nothing in it is recorded; turn it on with: git -C 'odd name/inner' undo init",
    "problem  submodule sub: recording is off there (init has not run in it), so nothing in it is recorded; turn it on with: git -C sub undo init",
    "note     or turn it on in every submodule at once: git submodule foreach --recursive git undo init",
  ]);
  // From a folder below the top, the command's path is relative to that folder.
  mkdirSync(r.path("docs"));
  const below = await r.run(["doctor"], { cwd: r.path("docs") });
  expect(submoduleLines(below.stdout)[2]).toEndWith("turn it on with: git -C ../sub undo init");

  // The command doctor gave works: that submodule drops out of the list.
  expect((await r.run(["-C", "sub", "init"])).code).toBe(0);
  expect(submoduleLines((await r.run(["doctor"])).stdout).map((l) => l.replace(/:.*/, ""))).toEqual(["problem  submodule odd name", "problem  submodule odd name/inner", "note     or turn it on in every submodule at once"]);
  // So does the one for all of them, and then doctor says nothing of submodules.
  const bin = join(r.home, "bin");
  mkdirSync(bin);
  symlinkSync(join(ROOT, "cli", "git-undo"), join(bin, "git-undo"));
  r.git(["submodule", "foreach", "--quiet", "--recursive", "git undo init >/dev/null"], { env: { PATH: `${bin}:${r.env.PATH}`, GIT_UNDO_BUN: process.execPath } });
  const after = await r.run(["doctor"]);
  expect(submoduleLines(after.stdout)).toEqual([]);
}, 60_000);

test("without .gitmodules doctor runs no Git for submodules; one Git that cannot list them is a note", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  await r.okIn("init");
  // The trace (on the process's own stderr) names each Git process it ran.
  const traced = r.undo(["doctor"], { env: { GIT_UNDO_TRACE: "1", GIT_UNDO_BUN: process.execPath } });
  const gits = traced.stderr.split("\n").filter((l) => / ms {2}git /.test(l));
  expect(gits.length).toBeGreaterThan(3);
  expect(gits.filter((l) => /submodule/.test(l))).toEqual([]);
  expect(submoduleLines(traced.stdout)).toEqual([]);
  // With a .gitmodules, the one Git process that lists them.
  r.write(".gitmodules", "");
  const listed = r.undo(["doctor"], { env: { GIT_UNDO_TRACE: "1", GIT_UNDO_BUN: process.execPath } });
  expect(listed.stderr.split("\n").filter((l) => / ms {2}git submodule/.test(l)).length).toBe(1);

  // A repository added as a gitlink that .gitmodules does not name: Git cannot list the submodules. doctor says so and goes on.
  r.git(["init", "-q", r.path("inner")]);
  r.git(["-C", r.path("inner"), "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "inner"]);
  r.git(["add", "inner"], { allowFail: true });
  const unlisted = await r.run(["doctor"]);
  expect(unlisted.stdout).toMatch(/^note {5}Git cannot list the submodules \(.*inner.*\), so doctor cannot say which record; each records only once 'git undo init' ran in it$/m);
  expect(unlisted.stdout).toMatch(/^(everything looks right|\d+ problems? found)$/m);
}, 60_000);
