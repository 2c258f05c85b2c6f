// Snapshots in other tools: git undo init adds log.excludeDecoration=refs/undo/
// to the repository's configuration once, so `git log --all --decorate` labels
// no commit with a snapshot ref; uninstall takes out that value only, never one
// the user set (before or after init), and leaves the file as it found it.
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";

function repoWithSnapshot(): TestRepo {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  r.ok("snapshot", "-m", "before init");
  return r;
}

const localConfig = (r: TestRepo): string => readFileSync(join(r.gitDir(), "config"), "utf8");
const localValues = (r: TestRepo): string[] =>
  r.git(["config", "--local", "--get-all", "log.excludeDecoration"], { allowFail: true }).stdout.split("\n").filter(Boolean);

/**
 * Every decoration `git log --all` prints, in full. Git 2.39 and newer label
 * only branches, remotes, tags and HEAD by default; log.initialDecorationSet=all
 * (ignored by older Git) lets through every ref, as gitk and older Git do.
 */
const decorations = (r: TestRepo): string =>
  r.g("-c", "log.initialDecorationSet=all", "log", "--all", "--decorate=full", "--format=%D");

test("init hides snapshot refs from git log --decorate once; uninstall gives .git/config back", async () => {
  const r = repoWithSnapshot();
  const before = localConfig(r);
  expect(decorations(r)).toContain("refs/undo/snapshots/");

  const init = await r.run(["init"]);
  expect(init.code).toBe(0);
  expect(init.stdout).toContain("added log.excludeDecoration=refs/undo/");
  expect(localValues(r)).toEqual(["refs/undo/"]);
  expect(decorations(r)).not.toContain("refs/undo/");
  expect(decorations(r)).toContain("refs/heads/");
  // Snapshots are still there for whoever asks: only the labels are hidden.
  expect(r.g("for-each-ref", "refs/undo/snapshots/")).toContain("refs/undo/snapshots/0000000001");

  const again = await r.run(["init"]);
  expect(again.code).toBe(0);
  expect(again.stdout).not.toContain("log.excludeDecoration");
  expect(localValues(r)).toEqual(["refs/undo/"]);

  const files = fingerprint(r);
  const un = await r.run(["uninstall"]);
  expect(un.code).toBe(0);
  expect(un.stdout).toContain("removed log.excludeDecoration=refs/undo/");
  expect(localValues(r)).toEqual([]);
  expect(localConfig(r)).toBe(before);
  expect(existsSync(join(r.gitDir(), "undo", "excluded-decoration"))).toBe(false);
  expect(decorations(r)).toContain("refs/undo/snapshots/");
  expect(fingerprint(r)).toBe(files);
});

test("the user's own log.excludeDecoration values stay, before and after init", async () => {
  const r = repoWithSnapshot();
  r.git(["config", "--local", "log.showSignature", "false"]);
  r.git(["config", "--local", "--add", "log.excludeDecoration", "refs/remotes/"]);
  await r.okIn("init");
  expect(localValues(r)).toEqual(["refs/remotes/", "refs/undo/"]);
  // Added after init, the same value as git-undo's: one copy stays the user's.
  r.git(["config", "--local", "--add", "log.excludeDecoration", "refs/undo/"]);
  r.git(["config", "--local", "--add", "log.excludeDecoration", "refs/notes/"]);

  const un = await r.run(["uninstall"]);
  expect(un.code).toBe(0);
  expect(localValues(r).sort()).toEqual(["refs/notes/", "refs/remotes/", "refs/undo/"]);
  expect(r.g("config", "--local", "log.showSignature")).toBe("false");
});

test("a value the user set that already hides snapshots: init adds none, uninstall removes none", async () => {
  for (const theirs of ["refs/undo/", "refs/undo/*", "undo"]) {
    const r = repoWithSnapshot();
    r.git(["config", "--local", "--add", "log.excludeDecoration", theirs]);
    const before = localConfig(r);
    const init = await r.run(["init"]);
    expect(init.code).toBe(0);
    expect(init.stdout).not.toContain("log.excludeDecoration");
    expect(localValues(r)).toEqual([theirs]);
    expect(decorations(r)).not.toContain("refs/undo/");

    const un = await r.run(["uninstall"]);
    expect(un.code).toBe(0);
    expect(un.stdout).not.toContain("log.excludeDecoration");
    expect(localValues(r)).toEqual([theirs]);
    expect(localConfig(r)).toBe(before);
  }
});

test("a value in the global configuration that hides snapshots counts too", async () => {
  const r = repoWithSnapshot();
  r.git(["config", "--global", "--add", "log.excludeDecoration", "refs/undo/"]);
  const before = localConfig(r);
  await r.okIn("init");
  expect(localValues(r)).toEqual([]);
  expect(decorations(r)).not.toContain("refs/undo/");
  await r.okIn("uninstall");
  expect(localConfig(r)).toBe(before);
  expect(r.g("config", "--global", "log.excludeDecoration")).toBe("refs/undo/");
});
