// git undo init on Git 2.54 and newer: git-undo's hooks registered in the
// repository's configuration (hook.git-undo.*), not as files in the hooks
// folder; --file-hooks for the old way; uninstall gives .git/config back byte
// for byte; doctor reads both ways, hook.git-undo.enabled=false, and a user's
// own config hooks, which keep running with their arguments and stdin.
import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectRecorded, list, settled, SETTLE_MS } from "../helpers/auto.ts";
import { gitAtLeast, gitVersion, makeRepo, tempDir, type TestRepo } from "../helpers/repo.ts";

const configHooks = gitAtLeast(2, 54);
const skipped = configHooks ? "" : ` (skipped: Git ${gitVersion().join(".")} has no config hooks; they came in 2.54)`;

function repoWithBase(): TestRepo {
  const r = makeRepo();
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.commit("base", { "a.txt": "a\n" });
  return r;
}

/** The hook names Git lists for an event ("" when none: `git hook list` then exits 1). */
const hookList = (r: TestRepo, event: string): string => r.git(["hook", "list", event], { allowFail: true }).stdout;

const localConfig = (r: TestRepo): string => readFileSync(join(r.gitDir(), "config"), "utf8");

test.skipIf(!configHooks)(`init registers hook.git-undo in .git/config; it records; doctor sees it; uninstall gives the file back${skipped}`, async () => {
  const r = repoWithBase();
  const gitDir = r.gitDir();
  // A hook manager's file of the same name, which file hooks could not touch: config hooks leave it alone.
  const theirs = "#!/usr/bin/env python3\nimport sys\nsys.exit(0)\n";
  writeFileSync(join(gitDir, "hooks", "reference-transaction"), theirs, { mode: 0o755 });
  const configBefore = localConfig(r);

  const init = await r.run(["init"]);
  expect(init.code).toBe(0);
  expect(init.stdout).toContain(`registered git-undo's hooks in ${join(gitDir, "config")}`);
  expect(r.git(["config", "--local", "--get-all", "hook.git-undo.event"]).stdout.split("\n").filter(Boolean).sort()).toEqual(["post-index-change", "reference-transaction"]);
  for (const event of ["reference-transaction", "post-index-change"]) expect(hookList(r, event)).toContain("git-undo");
  expect(readFileSync(join(gitDir, "hooks", "reference-transaction"), "utf8")).toBe(theirs);
  expect(existsSync(join(gitDir, "hooks", "post-index-change"))).toBe(false);
  expect(r.undo(["init"]).stdout).toContain("git-undo's hooks are already registered in");

  // The config hook starts the worker: one snapshot per command, for refs and for the index.
  let snaps = list(r);
  r.git(["branch", "feature"]);
  snaps = await expectRecorded(r, snaps, /^branch feature created$/, { gitDir });
  r.write("a.txt", "changed\n");
  r.git(["add", "a.txt"]);
  snaps = await expectRecorded(r, snaps, /./, { gitDir });

  const doctor = await r.run(["doctor"]);
  expect(doctor.stdout).toMatch(/ok\s+hooks: hook\.git-undo in .*config runs .*hooks\/ on reference-transaction and post-index-change/);
  expect(doctor.stdout).not.toMatch(/problem.*(hook\.git-undo|reference-transaction|post-index-change)/);

  const un = await r.run(["uninstall"]);
  expect(un.code).toBe(0);
  expect(un.stdout).toContain(`removed hook.git-undo from ${join(gitDir, "config")}`);
  expect(localConfig(r)).toBe(configBefore);
  expect(hookList(r, "reference-transaction")).not.toContain("git-undo");
  expect(readFileSync(join(gitDir, "hooks", "reference-transaction"), "utf8")).toBe(theirs);
  r.git(["branch", "after"]);
  await settled(gitDir);
  expect(list(r).length).toBe(snaps.length);
  expect(r.undo(["doctor"]).stdout).toMatch(/problem.*run 'git undo init'/);
});

test(`--file-hooks installs files${configHooks ? "; init and init --file-hooks switch between the two ways" : " (as plain init does on this Git)"}`, async () => {
  const r = repoWithBase();
  const gitDir = r.gitDir();
  const configBefore = localConfig(r);
  const hookFile = join(gitDir, "hooks", "reference-transaction");
  const hasConfigHook = () => r.git(["config", "--local", "--get", "hook.git-undo.command"], { allowFail: true }).code === 0;

  expect(r.undo(["init", "--file-hooks"]).code).toBe(0);
  expect(readFileSync(hookFile, "utf8")).toContain("# >>> git-undo >>>");
  expect(hasConfigHook()).toBe(false);
  let snaps = list(r);
  r.git(["branch", "one"]);
  snaps = await expectRecorded(r, snaps, /^branch one created$/, { gitDir });

  if (configHooks) {
    const toConfig = await r.run(["init"]);
    expect(toConfig.stdout).toContain(`removed ${hookFile}`);
    expect(existsSync(hookFile)).toBe(false);
    expect(hasConfigHook()).toBe(true);
    r.git(["branch", "two"]);
    snaps = await expectRecorded(r, snaps, /^branch two created$/, { gitDir });
    const toFiles = await r.run(["init", "--file-hooks"]);
    expect(toFiles.stdout).toContain("removed hook.git-undo from");
    expect(hasConfigHook()).toBe(false);
    // What is left of init is the decoration setting it added (test/hooks/init-decoration.test.ts), and the guard (core.fsmonitor).
    expect(localConfig(r).replace(/^\tfsmonitor(?:HookVersion)? = .*\n/gm, "")).toBe(`${configBefore}[log]\n\texcludeDecoration = refs/undo/\n`);
    expect(readFileSync(hookFile, "utf8")).toContain("# >>> git-undo >>>");
  } else {
    // On this Git plain init means files too.
    expect(r.undo(["init"]).stdout).toContain(`already up to date: ${hookFile}`);
    expect(hasConfigHook()).toBe(false);
  }
  const doctor = await r.run(["doctor"]);
  expect(doctor.stdout).toMatch(/ok\s+reference-transaction: installed and executable/);
  expect(r.undo(["uninstall"]).code).toBe(0);
  expect(existsSync(hookFile)).toBe(false);
  expect(localConfig(r)).toBe(configBefore);
});

test.skipIf(!configHooks)(`hook.git-undo.enabled=false: nothing recorded, and doctor says so${skipped}`, async () => {
  const r = repoWithBase();
  const gitDir = r.gitDir();
  expect(r.undo(["init"]).code).toBe(0);
  r.git(["config", "hook.git-undo.enabled", "false"]);
  expect(hookList(r, "reference-transaction")).toMatch(/disabled\s+git-undo/);
  const before = list(r).length;
  r.git(["branch", "quiet"]);
  await settled(gitDir);
  expect(list(r).length).toBe(before);

  const doctor = await r.run(["doctor"]);
  expect(doctor.code).toBe(1);
  expect(doctor.stdout).toMatch(/problem\s+hook\.git-undo\.enabled=false \(in .*config\): .*nothing is recorded; git config --unset hook\.git-undo\.enabled/);
  // init leaves the user's choice alone, and says what it means.
  expect(r.undo(["init"]).stdout).toContain("note: hook.git-undo.enabled is false");
  expect(r.g("config", "hook.git-undo.enabled")).toBe("false");

  r.git(["config", "--unset", "hook.git-undo.enabled"]);
  const listed = list(r);
  r.git(["branch", "loud"]);
  await expectRecorded(r, listed, /^branch loud created$/, { gitDir });
  // uninstall takes out what init added; a key the user set by hand would stay.
  r.git(["config", "hook.git-undo.enabled", "true"]);
  expect(r.undo(["uninstall"]).code).toBe(0);
  expect(r.git(["config", "--local", "--get-regexp", "^hook\\."]).stdout).toBe("hook.git-undo.enabled true\n");
});

test.skipIf(!configHooks)(`a user's own config hooks for the same events keep running, arguments and stdin intact${skipped}`, async () => {
  const r = repoWithBase();
  const gitDir = r.gitDir();
  const dir = tempDir("log");
  const log = join(dir, "user-hook.log");
  // Scripts, as users write them (Git appends the hook's arguments to the command).
  const refScript = join(dir, "ref-hook");
  writeFileSync(refScript, `#!/bin/sh\nprintf 'ref %s\\n' "$1" >>'${log}'\ncat >>'${log}'\n`, { mode: 0o755 });
  const indexScript = join(dir, "index-hook");
  writeFileSync(indexScript, `#!/bin/sh\nprintf 'index %s %s\\n' "$1" "$2" >>'${log}'\n`, { mode: 0o755 });
  r.git(["config", "hook.mine.command", refScript]);
  r.git(["config", "hook.mine.event", "reference-transaction"]);
  r.git(["config", "hook.mine-index.command", indexScript]);
  r.git(["config", "hook.mine-index.event", "post-index-change"]);
  const head = r.g("rev-parse", "HEAD");
  const zero = "0".repeat(40);
  /** What the user's reference-transaction hook saw, call by call, the branch name replaced. */
  const refLog = (branch: string) =>
    readFileSync(log, "utf8")
      .split(/(?=^ref )/m)
      .filter((chunk) => chunk.startsWith("ref "))
      .map((chunk) => chunk.replaceAll(branch, "BRANCH"));

  r.git(["branch", "before"]);
  const expected = refLog("before");
  expect(expected.some((c) => c === `ref committed\n${zero} ${head} refs/heads/BRANCH\n`)).toBe(true);

  expect(r.undo(["init"]).code).toBe(0);
  writeFileSync(log, "");
  let snaps = list(r);
  r.git(["branch", "during"]);
  expect(refLog("during")).toEqual(expected);
  snaps = await expectRecorded(r, snaps, /^branch during created$/, { gitDir });

  writeFileSync(log, "");
  r.write("b.txt", "b\n");
  r.git(["add", "b.txt"]);
  expect(readFileSync(log, "utf8")).toMatch(/^index [01] [01]\n/m);
  await expectRecorded(r, snaps, /./, { gitDir });

  const doctor = r.undo(["doctor"]).stdout;
  expect(doctor).toMatch(/note\s+your config hook mine \(reference-transaction, from .*config\) runs next to git-undo's/);
  expect(doctor).toMatch(/note\s+your config hook mine-index \(post-index-change, from .*config\)/);

  expect(r.undo(["uninstall"]).code).toBe(0);
  writeFileSync(log, "");
  r.git(["branch", "after"]);
  expect(refLog("after")).toEqual(expected);
  expect(r.g("config", "hook.mine.event")).toBe("reference-transaction");
});
