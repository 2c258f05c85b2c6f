// The folder the user is in (issue #30.15). A restore that takes every file out
// of it keeps the folder, empty, as Git does (the same folder: a shell in it
// goes on working), and says so; a target with a file where that folder is
// refuses. A command started in a folder that is gone fails in one line.
import { describe, expect, test } from "bun:test";
import { lstatSync, mkdirSync, readdirSync } from "node:fs";
import { CLI, makeRepo, type TestRepo } from "../helpers/repo.ts";

/** A repository whose #2 stages new files in `folder` only (nothing of it committed). */
function stagedOnlyIn(folder: string): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  r.ok("snapshot"); // #1
  r.write(`${folder}/new.txt`, "staged\n");
  r.write(`${folder}/more.txt`, "staged too\n");
  r.git(["add", "-A"]);
  r.ok("snapshot"); // #2
  return r;
}

describe("the folder the user is in, emptied by a restore", () => {
  for (const folder of ["sub", "sub/deep"]) {
    test(`${folder}: kept (the same folder), said so, and the next command works in it`, async () => {
      const r = stagedOnlyIn(folder);
      const cwd = r.path(folder);
      const inode = lstatSync(cwd).ino;
      const out = await r.run(["undo"], { cwd });
      expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: "" });
      expect(out.stdout).toContain(`the folder you are in stays, now empty: ${folder} (Git never removes the current directory)`);
      expect(lstatSync(cwd).ino).toBe(inode);
      expect(readdirSync(cwd)).toEqual([]); // nothing of git-undo's left in it either
      expect(r.g("ls-files")).toBe("a.txt");
      // The shell is still somewhere: Git and git-undo run there.
      expect(r.git(["status", "--porcelain"], { cwd }).code).toBe(0);
      const redo = await r.run(["redo"], { cwd });
      expect(redo.code).toBe(0);
      expect(r.read(`${folder}/new.txt`)).toBe("staged\n");
      expect(r.g("ls-files")).toBe(`a.txt\n${folder}/more.txt\n${folder}/new.txt`);
    });
  }

  test("from the top, an emptied folder goes as Git removes it, and no note is printed", async () => {
    const r = stagedOnlyIn("sub");
    const out = await r.okIn("undo");
    expect(out).not.toContain("folder you are in");
    expect(() => lstatSync(r.path("sub"))).toThrow();
  });

  test("a folder not emptied (an ignored file stays) gets no note", async () => {
    const r = stagedOnlyIn("sub");
    r.write(".git/info/exclude", "*.log\n");
    r.write("sub/build.log", "ignored\n");
    const out = await r.run(["undo"], { cwd: r.path("sub") });
    expect(out.code).toBe(0);
    expect(out.stdout).not.toContain("folder you are in");
    expect(readdirSync(r.path("sub"))).toEqual(["build.log"]);
  });
});

test("a target with a file where the folder the user is in is: refused, by the dry run too", async () => {
  const r = makeRepo();
  r.commit("d is a file", { d: "file\n" });
  await r.okIn("snapshot"); // #1
  r.git(["rm", "-q", "d"]);
  r.commit("d is a folder", { "d/x.txt": "x\n" });
  await r.okIn("snapshot"); // #2
  mkdirSync(r.path("d/inner"));
  const cwd = r.path("d/inner");
  const dry = await r.run(["restore", "1", "--dry-run"], { cwd });
  expect(dry.code).toBe(1);
  expect(dry.stdout).toContain("would refuse: snapshot #1 has a file where the folder you are in is: d; cd out of it first");
  const before = lstatSync(cwd).ino;
  const res = await r.run(["restore", "1"], { cwd });
  expect(res.code).toBe(1);
  expect(res.stderr).toContain("snapshot #1 has a file where the folder you are in is: d");
  expect(lstatSync(cwd).ino).toBe(before);
  expect(r.read("d/x.txt")).toBe("x\n");
  // From elsewhere it goes through.
  expect(await r.okIn("restore", "1")).toMatch(/Restored #1/);
  expect(r.read("d")).toBe("file\n");
});

describe("a command started in a folder that is gone", () => {
  for (const args of [["list"], ["undo"], [], ["restore", "1", "--dry-run"]]) {
    test(`git undo ${args.join(" ")}: one line, exit 128`, async () => {
      const r = stagedOnlyIn("sub");
      mkdirSync(r.path("gone"));
      // A shell in the folder when it is removed, then git-undo started there.
      const script = `cd gone && rmdir ../gone && exec "$0" "$@"`;
      const p = Bun.spawnSync({ cmd: ["sh", "-c", script, process.execPath, CLI, ...args], cwd: r.dir, env: r.env, stdout: "pipe", stderr: "pipe" });
      expect(p.exitCode).toBe(128);
      expect(p.stderr.toString()).toBe("fatal: the current directory no longer exists (it was removed); cd into the repository again\n");
    });
  }
});
