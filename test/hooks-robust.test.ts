// The hooks never break Git (project rule: hooks always exit 0, never print,
// never wait): Git keeps working when Bun or the toolkit is gone, and twenty
// Git processes at once still make one worker per worktree at a time.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectRecorded, list, settled, SETTLE_MS } from "./helpers/auto.ts";
import { copyToolkit, gitBinDir, makeRepo, refFormatOf, tempDir } from "./helpers/repo.ts";

test("Git keeps working, silently, when Bun is missing and when the toolkit folder is gone", async () => {
  const toolkit = copyToolkit();
  const bin = tempDir("bin");
  const bun = join(bin, "bun");
  writeFileSync(bun, `#!/bin/sh\nexec '${process.execPath}' "$@"\n`, { mode: 0o755 });
  const r = makeRepo();
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.commit("base", { "a.txt": "a\n" });
  const init = Bun.spawnSync({ cmd: [bun, join(toolkit, "cli", "main.ts"), "init", "--file-hooks"], cwd: r.dir, env: { ...r.env, GIT_UNDO_BUN: bun } });
  expect(init.exitCode).toBe(0);
  expect(readFileSync(join(r.gitDir(), "hooks", "reference-transaction"), "utf8")).toContain(`git_undo_root='${toolkit}'`);
  const gitDir = r.gitDir();
  const undoDir = join(gitDir, "undo");
  // The Git under test first (its folder has no Bun), then the system's.
  const noBunPath = `${gitBinDir()}:/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin`.split(":").filter((d) => !existsSync(join(d, "bun"))).join(":");
  const git = (args: string[]) => r.git(args, { env: { PATH: noBunPath } });

  // The copy works while its Bun exists.
  let snaps = list(r);
  r.git(["commit", "-q", "--allow-empty", "-m", "with bun"]);
  snaps = await expectRecorded(r, snaps, /^commit: with bun$/, { gitDir });

  // No Bun anywhere the hook looks: Git works, nothing is printed, the mark waits.
  unlinkSync(bun);
  let res = git(["commit", "-q", "--allow-empty", "-m", "without bun"]);
  expect(res.stdout + res.stderr).toBe("");
  expect(r.g("log", "-1", "--format=%s")).toBe("without bun");
  expect(existsSync(join(undoDir, "pending"))).toBe(true);
  await Bun.sleep(SETTLE_MS * 3);
  expect(existsSync(join(undoDir, "worker.pid"))).toBe(false);
  expect(list(r)).toHaveLength(snaps.length);

  // The toolkit folder removed: the hook does not even mark.
  rmSync(join(toolkit, ".."), { recursive: true, force: true });
  unlinkSync(join(undoDir, "pending"));
  res = r.git(["commit", "-q", "--allow-empty", "-m", "without the toolkit"]);
  expect(res.stdout + res.stderr).toBe("");
  res = r.git(["checkout", "-q", "-b", "still-fine"]);
  expect(res.stdout + res.stderr).toBe("");
  expect(r.g("log", "-1", "--format=%s")).toBe("without the toolkit");
  expect(existsSync(join(undoDir, "pending"))).toBe(false);
}, 60_000);

test("20 Git processes at once: never two workers in a worktree, and the final state is recorded", async () => {
  const r = makeRepo();
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.commit("base", { "a.txt": "a\n" });
  // reftable locks the whole ref stack and waits for it only reftable.lockTimeout
  // (100 ms by default): too short for 20 writers on a busy machine, in plain Git too.
  if (refFormatOf(r) === "reftable") r.git(["config", "reftable.lockTimeout", "20000"]);
  expect(r.undo(["init", "--file-hooks"]).code).toBe(0);
  const gitDir = r.gitDir();
  const trace = join(tempDir("trace"), "workers");
  writeFileSync(trace, "");
  const env = { ...r.env, GIT_UNDO_WORKER_TRACE: trace };
  const procs = Array.from({ length: 20 }, (_, i) =>
    Bun.spawn({
      cmd: ["sh", "-c", `git branch b${i} && git tag t${i} && git update-ref refs/heads/u${i} HEAD && git status --short >/dev/null`],
      cwd: r.dir,
      env,
      stdout: "pipe",
      stderr: "pipe",
    }),
  );
  const outputs = await Promise.all(procs.map(async (p) => [await p.exited, await new Response(p.stdout).text(), await new Response(p.stderr).text()]));
  for (const o of outputs) expect(o).toEqual([0, "", ""]);
  await settled(gitDir);

  // Every start is followed by its own stop before any other worker starts,
  // and no worker was started only to find another one there: the hook that
  // starts a worker reserves the pid file first (the start race is closed).
  const events = readFileSync(trace, "utf8").trim().split("\n");
  expect(events.length).toBeGreaterThanOrEqual(2);
  expect(events.filter((e) => e.startsWith("lost "))).toEqual([]);
  for (let i = 0; i < events.length; i += 2) {
    const [start, pid] = events[i]!.split(" ");
    expect(start).toBe("start");
    expect(events[i + 1]).toMatch(new RegExp(`^stop ${pid} \\d+$`));
  }
  // The state they ended in is the latest snapshot.
  const latest = list(r)[0]!;
  expect(r.undo(["snapshot"]).stdout).toBe(`no change since #${latest.number}\n`);
  const refs = r.g("cat-file", "-p", `${latest.commit}:refs`);
  for (let i = 0; i < 20; i++) for (const ref of [`refs/heads/b${i}`, `refs/tags/t${i}`, `refs/heads/u${i}`]) expect(refs).toContain(`${ref}\t`);
}, 60_000);

test("an empty worker.pid left for good (a hook killed while reserving it) is cleared by the next recording", async () => {
  const r = makeRepo();
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.commit("base", { "a.txt": "a\n" });
  expect(r.undo(["init"]).code).toBe(0);
  const gitDir = r.gitDir();
  const pidFile = join(gitDir, "undo", "worker.pid");
  writeFileSync(pidFile, "");
  const old = new Date(Date.now() - 60_000);
  utimesSync(pidFile, old, old);
  // The hooks take an empty file for a reservation being written: no worker.
  r.git(["branch", "while-wedged"]);
  await Bun.sleep(SETTLE_MS * 3);
  expect(readFileSync(pidFile, "utf8")).toBe("");
  // Any recording clears it; the hooks then start workers again.
  r.ok("snapshot");
  const snaps = list(r);
  expect(existsSync(pidFile)).toBe(false);
  r.git(["branch", "after"]);
  await expectRecorded(r, snaps, /after/, { gitDir });
}, 60_000);

test("the mark names the Git processes above the hook by pid, and nothing else; outside an operation the walk ends at the first program that is neither Git nor sh", () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  expect(r.undo(["init", "--file-hooks"]).code).toBe(0);
  const undoDir = join(r.gitDir(), "undo");
  // A live process holds worker.pid: the hook starts no worker, the mark stays to be read.
  const holder = Bun.spawn({ cmd: ["sleep", "30"] });
  try {
    writeFileSync(join(undoDir, "worker.pid"), `${holder.pid}\n`);
    // Two Git processes above the hook (an alias running Git), a shell between them.
    const res = r.git(["-c", "alias.chain=!sh -c 'git update-ref refs/heads/marked HEAD; :'", "chain"]);
    expect(res.stdout + res.stderr).toBe("");
    const mark = readFileSync(join(undoDir, "pending"), "latin1").trim().split(" ");
    expect(mark).toHaveLength(2);
    for (const p of mark) expect(p).toMatch(/^[1-9]\d*$/);
    expect(new Set(mark).size).toBe(2);
    // A program that is neither Git nor sh between two Gits ends the walk: no Git above it matters...
    const timed = (ref: string) => r.git(["-c", `alias.timed=!timeout 30 git update-ref refs/heads/${ref} HEAD`, "timed"]);
    expect(timed("timed").code).toBe(0);
    const short = readFileSync(join(undoDir, "pending"), "latin1").trim().split(" ");
    expect(short).toHaveLength(1);
    // ...unless an operation runs: a rebase's exec line may run Git under make or a test runner.
    mkdirSync(join(r.gitDir(), "rebase-merge"));
    expect(timed("timed-in-rebase").code).toBe(0);
    rmSync(join(r.gitDir(), "rebase-merge"), { recursive: true });
    const deep = readFileSync(join(undoDir, "pending"), "latin1").trim().split(" ");
    expect(deep).toHaveLength(2);
    expect(deep[0]).not.toBe(short[0]);
    // Run by something that is not Git (here, the test): an empty mark.
    const hook = join(r.gitDir(), "hooks", "post-index-change");
    const direct = Bun.spawnSync({ cmd: ["sh", hook, "1", "0"], cwd: r.dir, env: { ...r.env, GIT_DIR: r.gitDir() } });
    expect(direct.exitCode).toBe(0);
    expect(direct.stdout.toString() + direct.stderr.toString()).toBe("");
    expect(readFileSync(join(undoDir, "pending"), "latin1")).toBe("");
    // A second hook of the same Git process (its parent named first in the mark) keeps the mark as it is;
    // a mark another process left is walked again.
    const again = (first: string) =>
      Bun.spawnSync({ cmd: ["sh", "-c", `printf '%s 99\n' "${first}" >"$1/pending"; sh "$2" 1 0`, "sh", undoDir, hook], cwd: r.dir, env: { ...r.env, GIT_DIR: r.gitDir() } });
    expect(again("$$").exitCode).toBe(0);
    expect(readFileSync(join(undoDir, "pending"), "latin1")).toMatch(/^[1-9]\d* 99\n$/);
    expect(again("1").exitCode).toBe(0);
    expect(readFileSync(join(undoDir, "pending"), "latin1")).toBe("");
  } finally {
    holder.kill();
  }
});
