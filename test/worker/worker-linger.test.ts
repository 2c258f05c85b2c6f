// A worker that has recorded stays a while for the next mark (issue 12: far
// fewer worker starts than Git commands), runs at the lowest CPU and I/O
// priority, and leaves at once when automatic recording is switched off.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { autoRepo, expectRecorded, list, waitFor, workerPid } from "../helpers/auto.ts";
import { tempDir } from "../helpers/repo.ts";

/** Whether every recording asked for is done (the worker may stay). */
const recorded = (undoDir: string) => !existsSync(join(undoDir, "pending")) && !existsSync(join(undoDir, "pending.taken"));

test("one worker records a burst with pauses, at a lower priority, and exits once nothing comes", async () => {
  const r = autoRepo();
  const undoDir = join(r.gitDir(), "undo");
  const trace = join(tempDir("trace"), "workers");
  writeFileSync(trace, "");
  r.env.GIT_UNDO_WORKER_LINGER = "3000";
  r.env.GIT_UNDO_WORKER_TRACE = trace;
  let snaps = list(r);

  r.git(["branch", "one"]);
  await waitFor(() => recorded(undoDir) && list(r).length === snaps.length + 1, "the first recording");
  const pid = workerPid(undoDir);
  expect(pid).not.toBeNull();
  // Below what the user runs (nice 5) and the lowest best-effort I/O priority (where ionice exists), from /proc.
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  expect(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]).toBe("5");
  if (Bun.which("ionice")) expect(Bun.spawnSync(["ionice", "-p", String(pid)]).stdout.toString()).toMatch(/^best-effort: prio 7/);
  snaps = list(r);

  // A pause longer than undo.settle, then the next command: the same worker records it.
  await Bun.sleep(600);
  r.git(["tag", "two"]);
  await waitFor(() => recorded(undoDir) && list(r).length === snaps.length + 1, "the second recording");
  expect(workerPid(undoDir)).toBe(pid);
  expect(r.undo(["snapshot"]).stdout).toBe(`no change since #${list(r)[0]!.number}\n`);

  // Nothing more: it leaves, removing its pid file.
  await waitFor(() => workerPid(undoDir) === null, "the worker to exit", 15_000);
  expect(existsSync(join(undoDir, "worker.pid"))).toBe(false);
  const starts = readFileSync(trace, "utf8").split("\n").filter((l) => /^(start|lost) /.test(l));
  expect(starts).toEqual([`start ${pid}`]);
}, 60_000);

test("uninstall does not wait out a lingering worker, and a recording after the linger still happens", async () => {
  const r = autoRepo();
  const undoDir = join(r.gitDir(), "undo");
  r.env.GIT_UNDO_WORKER_LINGER = "30000";
  let snaps = list(r);
  r.git(["branch", "one"]);
  await waitFor(() => recorded(undoDir) && list(r).length === snaps.length + 1, "the recording");
  const pid = workerPid(undoDir);
  expect(pid).not.toBeNull();
  const t = Date.now();
  expect(r.undo(["uninstall"]).code).toBe(0);
  await waitFor(() => workerPid(undoDir) === null, "the worker to leave", 5_000);
  expect(Date.now() - t).toBeLessThan(5_000);
  // Switched on again, a new command is recorded by a new worker.
  expect(r.undo(["init"]).code).toBe(0);
  r.env.GIT_UNDO_WORKER_LINGER = "0";
  snaps = list(r);
  r.git(["branch", "two"]);
  await expectRecorded(r, snaps, /two/);
}, 60_000);

test("a mark whose hook has not written its line yet is waited for, not taken; one left empty (a killed hook's) is recorded after a while", async () => {
  const r = autoRepo();
  const undoDir = join(r.gitDir(), "undo");
  r.env.GIT_UNDO_WORKER_LINGER = "30000";
  const snaps = list(r);
  r.git(["branch", "one"]);
  await waitFor(() => recorded(undoDir) && list(r).length === snaps.length + 1, "the recording");
  expect(workerPid(undoDir)).not.toBeNull();
  // The hook's shell has opened the mark (created it) and not written yet; the files changed meanwhile.
  r.write("loose.txt", "no command saw this yet\n");
  writeFileSync(join(undoDir, "pending"), "");
  await Bun.sleep(800);
  expect(existsSync(join(undoDir, "pending"))).toBe(true);
  expect(list(r)).toHaveLength(snaps.length + 1);
  // Never written: past its wait, it counts as a change, and the state is recorded.
  await waitFor(() => recorded(undoDir) && list(r).length === snaps.length + 2, "the empty mark's recording", 15_000);
  expect(list(r)[0]!.summary).toMatch(/loose\.txt/);
}, 60_000);

test("without the guard a worker watches no folder of the work tree: one watch, on its undo folder, and no watch-state", async () => {
  const r = autoRepo({ files: { "a.txt": "a\n", "d/b.txt": "b\n", "d/e/c.txt": "c\n" }, guard: false });
  const undoDir = join(r.gitDir(), "undo");
  r.env.GIT_UNDO_WORKER_LINGER = "30000";
  const snaps = list(r);
  r.git(["branch", "one"]);
  await waitFor(() => recorded(undoDir) && list(r).length === snaps.length + 1, "the recording");
  const pid = workerPid(undoDir)!;
  expect(pid).not.toBeNull();
  try {
    expect(existsSync(join(undoDir, "watch-state"))).toBe(false);
    if (existsSync(`/proc/${pid}/fd`)) {
      const inotify = readdirSync(`/proc/${pid}/fd`).filter((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === "anon_inode:inotify";
        } catch {
          return false;
        }
      });
      expect(inotify).toHaveLength(1);
    }
  } finally {
    process.kill(pid, "SIGTERM");
  }
}, 60_000);
