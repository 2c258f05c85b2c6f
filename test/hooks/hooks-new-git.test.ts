// What newer Gits do differently around recording. Git 2.55 runs
// reference-transaction for symbolic-ref, switch and two AUTO_MERGE
// transactions per checkout: still one snapshot per command, and a
// symbolic-ref is recorded where Git reports it. A configuration value that
// makes `git add` die (color.ui on 2.55) is named with its fix by
// `git undo snapshot`, worker.log and doctor.
import { expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { autoRepo, expectRecorded, list, settled, waitFor } from "../helpers/auto.ts";
import { fingerprint, gitVersion, makeRepo, tempDir } from "../helpers/repo.ts";
import { badConfigIn } from "../../core/record.ts";

const version = gitVersion().join(".");

/** Whether this Git runs reference-transaction for `git symbolic-ref` (probed with a hook file). */
function symrefRunsHook(): boolean {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  const seen = join(tempDir("probe"), "seen");
  const hook = join(r.gitDir(), "hooks", "reference-transaction");
  writeFileSync(hook, `#!/bin/sh\necho "$1" >>'${seen}'\n`);
  chmodSync(hook, 0o755);
  r.git(["branch", "x"]);
  writeFileSync(seen, "");
  r.git(["symbolic-ref", "HEAD", "refs/heads/x"]);
  return readFileSync(seen, "utf8").includes("committed");
}

/** Whether `git add` dies on a bad color.ui with this Git (2.55 does; 2.39 and 2.31 do not). */
function addDiesOnColorUi(): boolean {
  const r = makeRepo();
  return r.git(["-c", "color.ui=bogus", "add", "--dry-run", "--ignore-missing", "--", "nothing"], { allowFail: true }).code !== 0;
}

test("git switch is one snapshot, however many reference-transaction calls Git makes", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  // The list before the command: read after it, it could already hold the command's snapshot.
  let snaps = list(r);
  r.git(["branch", "other"]);
  snaps = await expectRecorded(r, snaps, /^branch other created$/, { gitDir });
  r.git(["switch", "-q", "other"]);
  snaps = await expectRecorded(r, snaps, /other/, { gitDir });
  expect(snaps[0]!.head).toContain("other");
  // And back with a change carried along: still one.
  r.write("a.txt", "carried\n");
  r.git(["switch", "-q", "-"]);
  await expectRecorded(r, snaps, /./, { gitDir });
});

const symrefReported = symrefRunsHook();
test.skipIf(!symrefReported)(
  `git symbolic-ref HEAD refs/heads/x is recorded${symrefReported ? "" : ` (skipped: Git ${version} runs no reference-transaction hook for symbolic-ref; 2.55 does)`}`,
  async () => {
    const r = autoRepo();
    const gitDir = r.gitDir();
    let snaps = list(r);
    r.git(["branch", "x"]);
    snaps = await expectRecorded(r, snaps, /^branch x created$/, { gitDir });
    r.git(["symbolic-ref", "HEAD", "refs/heads/x"]);
    snaps = await expectRecorded(r, snaps, /./, { gitDir });
    expect(snaps[0]!.head).toContain("x");
    // Undoing it puts HEAD back on the first branch.
    const branch = snaps[1]!.head ?? "";
    expect(branch).not.toContain("refs/heads/x");
    r.ok();
    expect(r.g("symbolic-ref", "HEAD")).not.toBe("refs/heads/x");
  },
);

test("Git's bad-config errors are read for the key and value, from real Git output on every version", () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  // core.quotepath=x kills `git add` on every supported Git.
  const bad = r.git(["-c", "core.quotepath=notabool", "add", "a.txt"], { allowFail: true });
  expect(bad.code).not.toBe(0);
  expect(badConfigIn(bad.stderr)).toEqual({ key: "core.quotepath", value: "notabool", where: null });
  // Other failures are not taken for configuration problems.
  const other = r.git(["add", "no-such-file"], { allowFail: true });
  expect(other.code).not.toBe(0);
  expect(badConfigIn(other.stderr)).toBeNull();
  // A line Git cannot parse: no key, but the file and line.
  writeFileSync(join(r.gitDir(), "config"), `${readFileSync(join(r.gitDir(), "config"), "utf8")}[broken\n`);
  const broken = r.git(["add", "a.txt"], { allowFail: true });
  expect(broken.code).not.toBe(0);
  const parsed = badConfigIn(broken.stderr);
  expect(parsed?.key).toBeNull();
  expect(parsed?.where ?? "").toMatch(/config, line \d+$/);
});

const colorKillsAdd = addDiesOnColorUi();
test.skipIf(!colorKillsAdd)(
  `a bad color.ui is named with its fix by snapshot, worker.log and doctor${colorKillsAdd ? "" : ` (skipped: git add on Git ${version} ignores a bad color.ui; 2.55 dies on it)`}`,
  async () => {
    const r = autoRepo();
    const gitDir = r.gitDir();
    r.git(["config", "color.ui", "bogus"]);
    r.write("a.txt", "work\n");
    const snaps = list(r);

    const snap = r.undo(["snapshot"]);
    expect(snap.code).toBe(128);
    expect(snap.stderr).toMatch(/color\.ui=bogus/);
    expect(snap.stderr).toContain("git config --unset color.ui");

    // A Git command that still works starts the worker, whose recording fails the same way.
    r.git(["update-ref", "refs/heads/moved", "HEAD"]);
    const before = fingerprint(r);
    const logFile = join(gitDir, "undo", "worker.log");
    // The worker logs the refusal's facts; doctor words them, as the CLI words every refusal.
    await waitFor(() => existsSync(logFile) && /recording failed: config-value \{.*"key":"color\.ui","value":"bogus"/.test(readFileSync(logFile, "utf8")), "the worker to log the bad color.ui");

    const doctor = r.undo(["doctor"]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/problem\s+recording fails: .*color\.ui=bogus.*git config --unset color\.ui/);
    expect(doctor.stdout).toMatch(/\] recording failed: Git refuses the configuration value color\.ui=bogus.*git config --unset color\.ui/);
    expect(doctor.stdout).not.toContain('"kind"');
    expect(fingerprint(r)).toBe(before);

    // Fixed as told, recording works again.
    r.git(["config", "--unset", "color.ui"]);
    await settled(gitDir);
    r.git(["update-ref", "refs/heads/moved2", "HEAD"]);
    await settled(gitDir);
    expect(list(r).length).toBeGreaterThan(snaps.length);
    expect(r.undo(["snapshot"]).stdout).toMatch(/^no change since #\d+\n$/);
  },
);
