// The hooks never break Git (project rule: hooks always exit 0, never print,
// never wait): Git keeps working when Bun or the toolkit is gone, and twenty
// Git processes at once still make one worker per worktree at a time.
import { expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectRecorded, list, settled, SETTLE_MS } from "../helpers/auto.ts";
import { copyToolkit, gitBinDir, makeRepo, PROCESS_BACKENDS, refFormatOf, tempDir } from "../helpers/repo.ts";

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

  // No Bun anywhere the hook looks (cli/find-bun.sh: the one init named, the
  // toolkit's .tools/ and node_modules/, PATH, ~/.bun): Git works, nothing is
  // printed, the mark waits.
  unlinkSync(bun);
  unlinkSync(join(toolkit, "node_modules"));
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

  // Every start is followed by its own stop before any other worker starts.
  // Few workers were started only to find another one there: the hook that
  // starts a worker reserves the pid file first; a hook in the instant between
  // that and the probe beside it may start one more, which leaves at once
  // (of the 80 hooks here, 4 at most on a quiet machine; 7 once in CI, under load).
  const events = readFileSync(trace, "utf8").trim().split("\n").filter((e) => !e.startsWith("lost "));
  expect(events.length).toBeGreaterThanOrEqual(2);
  expect(readFileSync(trace, "utf8").split("\n").filter((e) => e.startsWith("lost ")).length).toBeLessThanOrEqual(10);
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

// A worker.pid that names no worker of ours never stops recording: after a
// crash or a reboot the pid may be dead, given to another program, a zombie,
// or the file may hold no pid at all. The worker's lease (worker.pid's time,
// kept ahead of the clock) runs out, the next hook starts a worker, and that
// worker checks the pid (worker/protocol.ts claimWorker) and takes over.
for (const backend of PROCESS_BACKENDS) {
  test(`a worker.pid that names no worker of ours is taken over by the next Git command (${backend})`, async () => {
    const r = makeRepo();
    r.env.GIT_UNDO_PROCESS_TABLE = backend;
    r.git(["config", "undo.settle", String(SETTLE_MS)]);
    r.commit("base", { "a.txt": "a\n" });
    expect(r.undo(["init"]).code).toBe(0);
    const gitDir = r.gitDir();
    const pidFile = join(gitDir, "undo", "worker.pid");
    await settled(gitDir);
    let snaps = list(r);
    const stranger = Bun.spawn({ cmd: ["sleep", "60"], stdout: "ignore" });
    try {
      for (const [i, content] of [`${stranger.pid}\n`, "", "-1\n", "0\n", "999999999\n", "not a pid\n"].entries()) {
        writeFileSync(pidFile, content);
        const old = new Date(Date.now() - 60_000);
        utimesSync(pidFile, old, old);
        rmSync(join(gitDir, "undo", "probe"), { force: true });
        r.git(["branch", `b${i}`]);
        snaps = await expectRecorded(r, snaps, new RegExp(`b${i}`), { gitDir });
        // The unrelated program was left alone.
        expect(stranger.exitCode).toBeNull();
      }
      // A FIFO planted at worker.pid: neither a hook nor a worker blocks on it.
      rmSync(pidFile, { force: true });
      expect(Bun.spawnSync(["mkfifo", pidFile]).exitCode).toBe(0);
      r.git(["branch", "after-fifo"]);
      snaps = await expectRecorded(r, snaps, /after-fifo/, { gitDir });
    } finally {
      stranger.kill();
    }
  }, 60_000);
}
