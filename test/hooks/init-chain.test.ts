// Hooks init cannot add its block to (not a shell script, a symbolic link):
// init says both ways on; --chain keeps the user's hook as <hook>.local and
// runs it from git-undo's with the same arguments, stdin and exit status
// (a failing reference-transaction hook still aborts the command); a hook
// that calls git-undo's hook.sh itself is recognised; doctor says what to do
// in each state; uninstall puts the user's hook back byte for byte. On a
// terminal init asks before chaining; elsewhere it never asks.
import { expect, test } from "bun:test";
import { existsSync, lstatSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectRecorded, list, settled, SETTLE_MS } from "../helpers/auto.ts";
import { gitAtLeast, makeRepo, ROOT, tempDir, type TestRepo } from "../helpers/repo.ts";
import { hasTmux, Terminal } from "../helpers/tmux.ts";

/** Git runs config hooks from 2.54 on: doctor then points at plain init rather than --chain. */
const configHooks = gitAtLeast(2, 54);

function repoWithBase(): TestRepo {
  const r = makeRepo();
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.commit("base", { "a.txt": "a\n" });
  return r;
}

/** A Perl hook (not a shell script): logs its name, arguments and stdin; fails in "prepared" while `fail` exists. */
const perlHook = (name: string, log: string, fail: string): string =>
  [
    "#!/usr/bin/perl",
    "# the user's own hook",
    `open(my $l, '>>', '${log}') or die;`,
    `print $l "${name} @ARGV\\n";`,
    `if ('${name}' eq 'reference-transaction') { print $l $_ while <STDIN>; }`,
    "close $l;",
    `exit(1) if -e '${fail}' && $ARGV[0] eq 'prepared';`,
    "exit 0;",
    "",
  ].join("\n");

/** The same commands each time: a branch (reference-transaction, with stdin) and an add (post-index-change). */
function drive(r: TestRepo, log: string, branch: string): string {
  writeFileSync(log, "");
  r.git(["branch", branch]);
  r.write("a.txt", `${branch}\n`);
  r.git(["add", "a.txt"]);
  return readFileSync(log, "utf8").replaceAll(branch, "<branch>");
}

test("a Perl hook: init says both ways on; --chain keeps it as .local and it runs with its arguments, stdin and exit status; uninstall puts it back", async () => {
  const r = repoWithBase();
  const gitDir = r.gitDir();
  const hooks = join(gitDir, "hooks");
  const dir = tempDir("log");
  const log = join(dir, "user-hook.log");
  const fail = join(dir, "fail");
  const theirs = { "reference-transaction": perlHook("reference-transaction", log, fail), "post-index-change": perlHook("post-index-change", log, fail) };
  for (const [name, text] of Object.entries(theirs)) writeFileSync(join(hooks, name), text, { mode: 0o750 });

  const before = drive(r, log, "before");
  expect(before).toContain("reference-transaction prepared\n");
  expect(before).toMatch(/^[0-9a-f]{40,} [0-9a-f]{40,} refs\/heads\/<branch>$/m);
  expect(before).toMatch(/^post-index-change [01] [01]$/m);
  // Their exit status matters: failing in "prepared" aborts the command.
  writeFileSync(fail, "");
  expect(r.git(["branch", "blocked"], { allowFail: true }).code).not.toBe(0);
  rmSync(fail);

  const refused = await r.run(["init", "--file-hooks"]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`${join(hooks, "reference-transaction")} is not a shell script (#!/usr/bin/perl)`);
  expect(refused.stderr).toContain("'git undo init --chain'");
  expect(refused.stderr).toContain(`sh '${join(ROOT, "hooks", "hook.sh")}' <arguments>`);
  expect(refused.stderr.includes("drop --file-hooks")).toBe(configHooks);
  for (const [name, text] of Object.entries(theirs)) expect(readFileSync(join(hooks, name), "utf8")).toBe(text);
  expect(existsSync(join(gitDir, "undo"))).toBe(false);
  const doctorBefore = r.undo(["doctor"]).stdout;
  if (configHooks) expect(doctorBefore).toMatch(/problem\s+reference-transaction: .* is not a shell script.*run 'git undo init'/);
  else expect(doctorBefore).toMatch(/problem\s+reference-transaction: .* is not a shell script.*'git undo init --chain' keeps it as .*reference-transaction\.local/);

  const init = await r.run(["init", "--file-hooks", "--chain"]);
  expect(init.code).toBe(0);
  for (const [name, text] of Object.entries(theirs)) {
    const path = join(hooks, name);
    expect(init.stdout).toContain(`installed git-undo's hook at ${path}; yours is kept as ${path}.local and runs after it`);
    expect(readFileSync(`${path}.local`, "utf8")).toBe(text);
    expect(statSync(`${path}.local`).mode & 0o777).toBe(0o750);
    expect(readFileSync(path, "utf8")).toContain("# >>> git-undo >>>");
  }

  // Their hooks see exactly what they saw before, and every command is recorded.
  let snaps = list(r);
  expect(drive(r, log, "during")).toBe(before);
  snaps = await expectRecorded(r, snaps, /./, { gitDir });
  writeFileSync(fail, "");
  const blocked = r.git(["branch", "blocked"], { allowFail: true });
  expect(blocked.code).not.toBe(0);
  expect(r.git(["rev-parse", "-q", "--verify", "refs/heads/blocked"], { allowFail: true }).code).not.toBe(0);
  rmSync(fail);
  await settled(gitDir);

  const doctor = r.undo(["doctor"]).stdout;
  expect(doctor).toContain(`ok       reference-transaction: installed and executable; it runs your hook ${join(hooks, "reference-transaction")}.local after it`);
  expect(doctor).not.toMatch(/problem.*(reference-transaction|post-index-change)/);
  const again = await r.run(["init", "--file-hooks"]);
  expect(again.code).toBe(0);
  expect(again.stdout).toContain(`already up to date: ${join(hooks, "reference-transaction")}`);

  // Their hook gone: ours runs alone and Git goes on as with no hook.
  rmSync(join(hooks, "post-index-change.local"));
  r.write("a.txt", "gone\n");
  r.git(["add", "a.txt"]);
  expect(r.undo(["doctor"]).stdout).toMatch(/note\s+post-index-change: your hook .*post-index-change\.local is gone/);
  // Recorded before uninstall: its removal of undo/hooks-enabled stops a worker mid-recording, the mark left taken.
  await settled(gitDir);

  const un = await r.run(["uninstall"]);
  expect(un.code).toBe(0);
  expect(un.stdout).toContain(`put your hook back at ${join(hooks, "reference-transaction")}`);
  expect(un.stdout).toContain(`removed ${join(hooks, "post-index-change")}`);
  expect(readFileSync(join(hooks, "reference-transaction"), "utf8")).toBe(theirs["reference-transaction"]);
  expect(statSync(join(hooks, "reference-transaction")).mode & 0o777).toBe(0o750);
  expect(existsSync(join(hooks, "reference-transaction.local"))).toBe(false);
  expect(existsSync(join(hooks, "post-index-change"))).toBe(false);
  await settled(gitDir);
}, 90_000);

test("a hook that calls hooks/hook.sh itself is left alone, records, and doctor says so", async () => {
  const r = repoWithBase();
  const gitDir = r.gitDir();
  const hooks = join(gitDir, "hooks");
  const log = join(tempDir("log"), "user-hook.log");
  const script = join(ROOT, "hooks", "hook.sh");
  const perl = [
    "#!/usr/bin/perl",
    `open(my $l, '>>', '${log}') or die; print $l "ran @ARGV\\n"; close $l;`,
    `$ENV{GIT_UNDO_HOOK_BUN} = '${process.execPath}';`,
    `system('sh', '${script}', @ARGV);`,
    "exit 0;",
    "",
  ].join("\n");
  writeFileSync(join(hooks, "reference-transaction"), perl, { mode: 0o755 });

  const init = await r.run(["init", "--file-hooks"]);
  expect(init.code).toBe(0);
  expect(init.stdout).toContain(`your hook calls git-undo's hook itself: ${join(hooks, "reference-transaction")}`);
  expect(readFileSync(join(hooks, "reference-transaction"), "utf8")).toBe(perl);
  expect(existsSync(join(hooks, "reference-transaction.local"))).toBe(false);

  let snaps = list(r);
  r.git(["branch", "feature"]);
  snaps = await expectRecorded(r, snaps, /^branch feature created$/, { gitDir });
  expect(readFileSync(log, "utf8")).toContain("ran committed");
  const doctor = r.undo(["doctor"]).stdout;
  expect(doctor).toContain(`ok       reference-transaction: ${join(hooks, "reference-transaction")} calls git-undo's hook itself (${ROOT})`);
  expect(doctor).not.toMatch(/problem.*reference-transaction/);

  // A call of a toolkit that is gone counts for nothing: doctor says what to call instead.
  writeFileSync(join(hooks, "reference-transaction"), perl.replace(script, "/nonexistent/git-undo/hooks/hook.sh"), { mode: 0o755 });
  expect(r.undo(["doctor"]).stdout).toMatch(/problem\s+reference-transaction: .* calls git-undo's hook in \/nonexistent\/git-undo, which is gone; have it run GIT_UNDO_HOOK_BUN=/);

  writeFileSync(join(hooks, "reference-transaction"), perl, { mode: 0o755 });
  expect(r.undo(["uninstall"]).code).toBe(0);
  expect(readFileSync(join(hooks, "reference-transaction"), "utf8")).toBe(perl);
  await settled(gitDir);
}, 60_000);

test("a hook that is a symbolic link: --chain keeps the link as .local, the shared file untouched; uninstall puts the link back", async () => {
  const r = repoWithBase();
  const gitDir = r.gitDir();
  const hooks = join(gitDir, "hooks");
  const log = join(tempDir("log"), "shared.log");
  const shared = join(tempDir("shared"), "reference-transaction");
  const sharedText = `#!/bin/sh\necho "shared $1" >>'${log}'\n`;
  writeFileSync(shared, sharedText, { mode: 0o755 });
  symlinkSync(shared, join(hooks, "reference-transaction"));

  const refused = await r.run(["init", "--file-hooks"]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`is a symbolic link (to ${shared})`);
  // Something in the way of the chain: refused, nothing written.
  writeFileSync(join(hooks, "reference-transaction.local"), "mine\n");
  const blocked = await r.run(["init", "--file-hooks", "--chain"]);
  expect(blocked.code).toBe(1);
  expect(blocked.stderr).toContain("reference-transaction.local exists already");
  expect(readlinkSync(join(hooks, "reference-transaction"))).toBe(shared);
  expect(existsSync(join(hooks, "post-index-change"))).toBe(false);
  rmSync(join(hooks, "reference-transaction.local"));

  expect(r.undo(["init", "--file-hooks", "--chain"]).code).toBe(0);
  expect(lstatSync(join(hooks, "reference-transaction")).isSymbolicLink()).toBe(false);
  expect(readlinkSync(join(hooks, "reference-transaction.local"))).toBe(shared);
  expect(readFileSync(shared, "utf8")).toBe(sharedText);
  let snaps = list(r);
  r.git(["branch", "feature"]);
  snaps = await expectRecorded(r, snaps, /^branch feature created$/, { gitDir });
  expect(readFileSync(log, "utf8")).toContain("shared committed\n");

  expect(r.undo(["uninstall"]).code).toBe(0);
  expect(readlinkSync(join(hooks, "reference-transaction"))).toBe(shared);
  expect(existsSync(join(hooks, "reference-transaction.local"))).toBe(false);
  expect(readFileSync(shared, "utf8")).toBe(sharedText);
  await settled(gitDir);
}, 60_000);

test.skipIf(!hasTmux())("on a terminal init asks before chaining (@clack/prompts): yes chains, no refuses and writes nothing", async () => {
  const r = repoWithBase();
  const hooks = join(r.gitDir(), "hooks");
  const log = join(tempDir("log"), "user-hook.log");
  const perl = perlHook("post-index-change", log, join(tempDir("fail"), "none"));
  writeFileSync(join(hooks, "post-index-change"), perl, { mode: 0o755 });

  const no = new Terminal(r, 140, 30);
  try {
    no.start(["init", "--file-hooks"]);
    await no.waitForText("Keep it as <hook>.local and put git-undo's hook in its place?");
    expect(no.screen()).toContain(`${join(hooks, "post-index-change")} is not a shell script (#!/usr/bin/perl)`);
    no.keys("Right", "Enter"); // "No"
    expect(await no.exitCode()).toBe(1);
    expect(no.screen()).toContain("'git undo init --chain'");
  } finally {
    no.kill();
  }
  expect(readFileSync(join(hooks, "post-index-change"), "utf8")).toBe(perl);
  expect(existsSync(join(hooks, "post-index-change.local"))).toBe(false);
  expect(existsSync(join(hooks, "reference-transaction"))).toBe(false);

  const yes = new Terminal(r, 140, 30);
  try {
    yes.start(["init", "--file-hooks"]);
    await yes.waitForText("Keep it as <hook>.local");
    yes.keys("Enter"); // "Yes, chain" is the first choice
    expect(await yes.exitCode()).toBe(0);
    expect(yes.screen().replace(/\n/g, "")).toContain(`yours is kept as ${join(hooks, "post-index-change")}.local and runs after it`);
  } finally {
    yes.kill();
  }
  expect(readFileSync(join(hooks, "post-index-change.local"), "utf8")).toBe(perl);
  writeFileSync(log, "");
  r.write("a.txt", "changed\n");
  r.git(["add", "a.txt"]);
  expect(readFileSync(log, "utf8")).toMatch(/^post-index-change [01] [01]\n$/);
  await settled(r.gitDir());
}, 60_000);
