// Hostile snapshots whose state reads well but that no restore can write:
// a .gitmodules Git refuses to read, a tree nested deeper than a path can go.
// The dry run says so, the restore refuses in one line with the real cause
// (no Git message passed through), and nothing changes.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { baseOf, blob, commitSnapshot, expectOneLineRefusal, observe, victimAndAttacker, withEntry, type Base } from "./helpers/hostile.ts";
import { tempDir, type TestRepo } from "./helpers/repo.ts";

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
