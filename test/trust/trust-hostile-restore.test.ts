// Hostile snapshots whose state reads well but that no restore can write:
// a .gitmodules Git refuses to read, a tree nested deeper than a path can go.
// The dry run says so, the restore refuses in one line with the real cause
// (no Git message passed through), and nothing changes.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { baseOf, blob, commitSnapshot, expectOneLineRefusal, observe, victimAndAttacker, withEntry, type Base } from "../helpers/hostile.ts";
import { tempDir, type TestRepo } from "../helpers/repo.ts";

/** A snapshot (#3) whose files add `.gitmodules` with `modules` and a gitlink `s` beside it, fetched by the victim. */
function withGitmodules(modules: string): TestRepo {
  const { v, x } = victimAndAttacker();
  const base: Base = baseOf(x);
  const wt = x.g("rev-parse", `${base.tree}:worktree`);
  let files = withEntry(x, wt, ".gitmodules", blob(x, modules));
  files = withEntry(x, files, "s", base.head, "160000");
  commitSnapshot(x, base, withEntry(x, base.tree, "worktree", files, "40000"));
  v.git(["fetch", "-q", x.dir, "+refs/undo/*:refs/undo/*"]);
  return v;
}

test("a .gitmodules with 'update = !command' beside a gitlink: the dry run refuses, the restore refuses in one line, nothing changed", async () => {
  const marker = join(tempDir("marker"), "ran");
  const v = withGitmodules(`[submodule "s"]\n\tpath = s\n\turl = ./s\n\tupdate = !touch ${marker}\n`);
  const before = observe(v);
  const words = `snapshot #3 has a .gitmodules Git refuses to read (submodule.s.update = !touch ${marker}: Git runs update commands only from .git/config`;

  const dry = await v.run(["restore", "--dry-run", "3"]);
  expect(dry.code).toBe(1);
  expect(dry.stdout).toContain(`would refuse: ${words}`);
  const restored = await v.run(["restore", "3"]);
  expectOneLineRefusal(restored, "restore");
  expect(restored.code).toBe(1);
  expect(restored.stderr).toStartWith(`error: ${words}`);
  expect(restored.stderr).not.toContain("diff-tree");
  expect(observe(v)).toEqual(before);
  expect(existsSync(marker)).toBe(false);
});

test("a .gitmodules Git dies on in other ways is refused too; one it reads is not", async () => {
  const refusedFor = async (modules: string) => {
    const v = withGitmodules(modules);
    const dry = await v.run(["restore", "--dry-run", "3"]);
    return dry.code === 1 ? (/would refuse: (.*)/.exec(dry.stdout)?.[1] ?? dry.stdout) : null;
  };
  expect(await refusedFor(`[submodule "s"]\n\tpath = s\n\turl = ./s\n\tupdate = rebse\n`)).toContain("(submodule.s.update = rebse: Git updates a submodule only by checkout, rebase, merge or none)");
  expect(await refusedFor(`[submodule "s"]\n\tpath = s\n\turl = ./s\n\tfetchRecurseSubmodules = sometimes\n`)).toContain("(submodule.s.fetchrecursesubmodules = sometimes: neither true, false nor on-demand)");
  expect(await refusedFor(`[submodule "s"\n\tpath = s\n`)).toContain("(it is not a configuration file Git can parse)");
  expect(await refusedFor(`[submodule "s"]\n\tpath = s\n\turl = ./s\n\tupdate = rebase\n\tfetchRecurseSubmodules = on-demand\n`)).toBeNull();
});

/**
 * A snapshot (#3) whose files add `path` (a tree thousands of folders deep):
 * written through an index of the attacker's, so that Git builds every level
 * in one write-tree.
 */
function withDeepPath(path: string): TestRepo {
  const { v, x } = victimAndAttacker();
  const base: Base = baseOf(x);
  const index = { GIT_INDEX_FILE: join(tempDir("index"), "index") };
  x.git(["read-tree", `${base.tree}:worktree`], { env: index });
  x.git(["update-index", "--add", "--index-info"], { input: `100644 ${blob(x, "deep\n")}\t${path}\n`, env: index });
  const files = x.git(["write-tree"], { env: index }).stdout.trim();
  commitSnapshot(x, base, withEntry(x, base.tree, "worktree", files, "40000"));
  // Git 2.44+ sends and takes no tree deeper than core.maxTreeDepth; older Gits (and copied objects) have no such limit.
  x.git(["config", "core.maxTreeDepth", "4096"]);
  v.git(["-c", "core.maxTreeDepth=4096", "fetch", "-q", x.dir, "+refs/undo/*:refs/undo/*"]);
  return v;
}

test("a tree 3,000 folders deep: refused by name, in one line, before anything is written; nothing changed", async () => {
  const v = withDeepPath(`deep/${"d/".repeat(3000)}f`);
  const before = observe(v);
  const words = /snapshot #3's files are nested too deep to restore: deep\/d\/d\/.*\.\.\. \(6006 bytes\) is 3001 folders deep \(a path here holds at most \d+ bytes\)/;
  const dry = await v.run(["restore", "--dry-run", "3"]);
  expect(dry.code).toBe(1);
  expect(dry.stdout).toMatch(words);
  const restored = await v.run(["restore", "3"]);
  expectOneLineRefusal(restored, "restore");
  expect(restored.stderr).toMatch(words);
  expect(restored.stderr.length).toBeLessThan(400);
  expect(restored.stderr).not.toContain("differs");
  expect(observe(v)).toEqual(before);
}, 60_000);

test("a file name longer than the system takes is refused by name too", async () => {
  const v = withDeepPath(`dir/${"n".repeat(300)}`);
  const dry = await v.run(["restore", "--dry-run", "3"]);
  expect(dry.code).toBe(1);
  expect(dry.stdout).toMatch(/snapshot #3 has a file name too long to restore: dir\/nnn.*\(a name of 300 bytes; a name here holds at most 255\)/);
});
