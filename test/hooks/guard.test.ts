// The guard (clarifications: "The guard"): git-undo's core.fsmonitor hook
// records what a command could throw away before Git goes on, marks commands
// that fire no hook, and never changes what Git does.
import { expect, test } from "bun:test";
import { appendFileSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { autoRepo, list, QUIET, recorded, settled, waitFor, workerPid } from "../helpers/auto.ts";
import { copyToolkit, makeRepo, tempDir, type SnapshotJson, type TestRepo } from "../helpers/repo.ts";
import { commandEffect, guardWanted } from "../../core/guard.ts";
import { unwatchableTree } from "../../core/file-system.ts";

const FILES = { "a.txt": "a\n", "sub/b.txt": "b\n" };

/** The snapshots whose recorded working tree holds `content` at `path`. */
function holding(r: TestRepo, snaps: SnapshotJson[], path: string, content: string): SnapshotJson[] {
  return snaps.filter((s) => {
    const res = r.git(["cat-file", "blob", `${s.commit}^{tree}:worktree/${path}`], { allowFail: true });
    return res.code === 0 && res.stdout === content;
  });
}

/** Let a worker a test stopped go on, and end it. */
function resumeAndEnd(pid: number): void {
  try {
    process.kill(pid, "SIGCONT");
    process.kill(pid, "SIGTERM");
  } catch {
    /* gone */
  }
}

/** A guarded repository whose worker lingers, has recorded once, and has written the guard's bound (undo.guardTimeout, ms) down. */
async function warmGuarded(timeoutMs: number) {
  const r = autoRepo({ files: FILES, guard: true });
  r.git(["config", "undo.guardTimeout", String(timeoutMs)]);
  const env = { GIT_UNDO_WORKER_LINGER: "60000" };
  r.git(["tag", "warm"], { env }); // recorded: the worker has read the bound
  const undo = join(r.gitDir(), "undo");
  await waitFor(() => workerPid(undo) !== null && !existsSync(join(undo, "pending")) && existsSync(join(undo, "guard-ticks")), "a warm worker");
  return { r, env, undo, pid: workerPid(undo)! };
}

interface Case {
  name: string;
  /** The edit no Git command sees: [path, content]. */
  edit: [string, string];
  /** Before the edit, out of the hooks' sight. */
  prepare?: (r: TestRepo) => void;
  discard: (r: TestRepo) => void;
}

const CASES: Case[] = [
  { name: "reset --hard", edit: ["a.txt", "edited\n"], discard: (r) => r.git(["reset", "-q", "--hard"]) },
  { name: "checkout -- <path>", edit: ["sub/b.txt", "edited in a folder\n"], discard: (r) => r.git(["checkout", "--", "sub/b.txt"]) },
  { name: "restore <path>", edit: ["a.txt", "restored away\n"], discard: (r) => r.git(["restore", "a.txt"]) },
  { name: "checkout <path> (no --)", edit: ["a.txt", "checked out away\n"], discard: (r) => r.git(["checkout", "a.txt"]) },
  { name: "clean -fd", edit: ["sub/new.txt", "untracked\n"], discard: (r) => r.git(["clean", "-q", "-f", "-d"]) },
  {
    name: "checkout -f other, staged then edited",
    edit: ["a.txt", "staged, then edited\n"],
    prepare: (r) => {
      r.write("a.txt", "staged\n");
      r.git(["add", "a.txt"], { env: QUIET });
    },
    discard: (r) => r.git(["checkout", "-q", "-f", "other"]),
  },
  {
    name: "stash, then drop at once",
    edit: ["a.txt", "stashed and dropped\n"],
    discard: (r) => {
      r.git(["stash", "-q"]);
      r.git(["stash", "drop", "-q"]);
    },
  },
];

for (const c of CASES) {
  test(`an edit no command saw is recorded before ${c.name}, and git undo restore brings it back`, async () => {
    const r = autoRepo({ files: FILES, guard: true });
    r.git(["branch", "other"], { env: QUIET });
    c.prepare?.(r);
    const [path, content] = c.edit;
    r.write(path, content);
    c.discard(r);
    expect(existsSync(join(r.dir, path)) ? r.read(path) : null).not.toBe(content);
    await settled(r.gitDir());
    const snaps = list(r);
    const found = holding(r, snaps, path, content);
    expect(found).toHaveLength(1);
    // It is an ordinary change snapshot, older than the discard's own.
    expect(found[0]!.kind).toBe("change");
    expect(found[0]!.number).toBeLessThan(snaps[0]!.number);
    const res = r.undo(["restore", String(found[0]!.number)]);
    expect(res.code).toBe(0);
    expect(r.read(path)).toBe(content);
  }, 60_000);
}

test("with the worker killed just before, and a second command started at once after, the edit is still recorded", async () => {
  const r = autoRepo({ files: FILES, guard: true });
  const undo = join(r.gitDir(), "undo");
  // A lingering worker killed (a crash, the OOM killer): worker.pid still names it.
  const env = { GIT_UNDO_WORKER_LINGER: "60000" };
  r.git(["tag", "warm"], { env });
  await waitFor(() => workerPid(undo) !== null && !existsSync(join(undo, "pending")), "a warm worker");
  const pid = workerPid(undo)!;
  process.kill(pid, "SIGKILL");
  await waitFor(() => !existsSync(`/proc/${pid}`), "the worker gone");
  expect(readFileSync(join(undo, "worker.pid"), "utf8").trim()).toBe(String(pid));
  r.write("a.txt", "before a killed worker\n");
  r.git(["reset", "-q", "--hard"]);
  r.write("sub/b.txt", "the next one\n");
  r.git(["checkout", "--", "sub/b.txt"]);
  await settled(r.gitDir());
  const snaps = list(r);
  expect(holding(r, snaps, "a.txt", "before a killed worker\n")).toHaveLength(1);
  expect(holding(r, snaps, "sub/b.txt", "the next one\n")).toHaveLength(1);
}, 60_000);

test("on a network file system the watch stays off: Git is told to look at every file, and an unseen edit is still recorded before reset --hard", async () => {
  const r = autoRepo({ files: FILES, guard: true });
  const undo = join(r.gitDir(), "undo");
  const pid = workerPid(undo);
  if (pid !== null) process.kill(pid, "SIGKILL");
  // The worker takes the tree for one on NFS (statfs's type, core/seams.ts), and stays to be asked.
  r.env.GIT_UNDO_TEST_FS_TYPE = String(0x6969);
  r.env.GIT_UNDO_WORKER_LINGER = "5000";
  r.git(["status"]);
  await waitFor(() => existsSync(join(undo, "watch-state")), "the watch's state");
  expect(readFileSync(join(undo, "watch-state"), "utf8")).toMatch(/\(NFS\)/);
  // No answer from a watch: Git gets the guard's "/" (its own token, "git-undo"), and sees the edit.
  r.write("a.txt", "edited on a network file system\n");
  const trace = join(r.home, "fsmonitor.trace");
  expect(r.git(["status", "--porcelain"], { env: { GIT_TRACE_FSMONITOR: trace } }).stdout).toContain(" M a.txt");
  expect(readFileSync(trace, "utf8")).toMatch(/git-undo(?!:)/);
  r.git(["reset", "-q", "--hard"]);
  await recorded(r.gitDir());
  expect(holding(r, list(r), "a.txt", "edited on a network file system\n")).toHaveLength(1);
  expect(r.undo(["doctor"]).stdout).toMatch(/look at every file.*\(NFS\).*undo\.guard false/);
  const left = workerPid(undo);
  if (left !== null) process.kill(left, "SIGTERM");
}, 60_000);

test("git checkout <branch>: Git is asked whether the word names a commit only when work is unseen; a switch that keeps the edit is not recorded before", async () => {
  const r = autoRepo({ files: FILES, guard: true });
  const main = r.g("branch", "--show-current");
  r.git(["branch", "other"], { env: QUIET });
  const spawns = join(tempDir("spawns"), "worker-git");
  writeFileSync(spawns, "");
  // A worker that stays, its watch running since a recording: as a user's is.
  Object.assign(r.env, { GIT_UNDO_TRACE_SPAWNS: spawns, GIT_UNDO_WORKER_LINGER: "5000" });
  r.git(["branch", "warm"]);
  await recorded(r.gitDir());
  const asked = () => readFileSync(spawns, "utf8").includes("rev-parse -q --verify");
  // Nothing unseen: the switch goes on without a Git of the worker's in its way.
  r.git(["checkout", "-q", "other"]);
  await recorded(r.gitDir());
  expect(asked()).toBe(false);
  // An edit no command saw, which the switch keeps: Git is asked, and only the switch is recorded.
  const before = list(r);
  r.write("a.txt", "carried over\n");
  r.git(["checkout", "-q", main]);
  await recorded(r.gitDir());
  expect(asked()).toBe(true);
  expect(r.read("a.txt")).toBe("carried over\n");
  const after = list(r);
  const made = after.slice(0, after.length - before.length);
  expect(made).toHaveLength(1);
  expect(holding(r, made, "a.txt", "carried over\n")).toHaveLength(1);
}, 60_000);

test("clean, restore and checkout -- <path> get a snapshot of their own; status and diff record nothing", async () => {
  const r = autoRepo({ files: FILES, guard: true });
  await settled(r.gitDir());
  r.write("new.txt", "new\n");
  r.ok("snapshot");
  const before = list(r);
  r.git(["clean", "-q", "-f"]);
  await settled(r.gitDir());
  const afterClean = list(r);
  expect(afterClean).toHaveLength(before.length + 1);
  expect(afterClean[0]!.summary).toMatch(/removed untracked: new\.txt/);
  // Read-only commands: the guard lets them go, and their index refresh is no change.
  r.write("a.txt", "unseen\n");
  for (let i = 0; i < 3; i++) {
    const st = r.git(["status", "--porcelain"]);
    expect(st.stdout).toBe(" M a.txt\n");
    r.git(["diff", "--quiet"], { allowFail: true });
  }
  await settled(r.gitDir());
  expect(list(r).map((s) => s.summary)).toEqual(afterClean.map((s) => s.summary));
  // restore: the edit first, then the restore's own snapshot.
  r.git(["restore", "a.txt"]);
  await settled(r.gitDir());
  const afterRestore = list(r);
  expect(afterRestore).toHaveLength(afterClean.length + 2);
  expect(afterRestore[0]!.summary).toMatch(/a\.txt/);
}, 60_000);

test("a commit, then reset --hard after an edit: the commit, the edit and the reset are three snapshots", async () => {
  const r = autoRepo({ files: FILES, guard: true });
  const before = list(r);
  r.write("a.txt", "committed\n");
  r.git(["commit", "-q", "-am", "two"]);
  await settled(r.gitDir());
  r.write("a.txt", "edited after the commit\n");
  r.git(["reset", "-q", "--hard"]);
  await settled(r.gitDir());
  const after = list(r);
  expect(after.slice(0, after.length - before.length).map((s) => s.summary)).toEqual([expect.stringMatching(/^reset/), expect.stringMatching(/a\.txt/), "commit: two"]);
  expect(holding(r, after, "a.txt", "edited after the commit\n")).toHaveLength(1);
}, 60_000);

test("Git's output is the same with the guard as without a monitor, and it prints nothing of its own", () => {
  const r = autoRepo({ files: FILES, guard: true });
  r.write("a.txt", "changed\n");
  r.write("sub/c.txt", "untracked\n");
  const guarded = r.git(["status", "--porcelain=v2", "--untracked-files=all"]);
  const plain = r.git(["-c", "core.fsmonitor=", "status", "--porcelain=v2", "--untracked-files=all"]);
  expect(guarded.stdout).toBe(plain.stdout);
  expect(guarded.stderr).toBe("");
  const diff = r.git(["diff", "--stat"]);
  expect(diff.stdout).toBe(r.git(["-c", "core.fsmonitor=", "diff", "--stat"]).stdout);
  expect(diff.stderr).toBe("");
});

test("a toolkit gone: Git stays silent, works, and waits for nothing", () => {
  const toolkit = copyToolkit();
  const r = makeRepo();
  r.commit("base", FILES);
  r.git(["config", "undo.guard", "true"]);
  const init = Bun.spawnSync({ cmd: [process.execPath, join(toolkit, "cli", "main.ts"), "init"], cwd: r.dir, env: { ...r.env, GIT_UNDO_BUN: process.execPath }, stdout: "pipe", stderr: "pipe" });
  expect([init.exitCode, init.stderr.toString()]).toEqual([0, ""]);
  expect(r.git(["config", "core.fsmonitor"]).stdout).toContain(join(toolkit, "hooks", "hook.sh"));
  rmSync(toolkit, { recursive: true, force: true });
  r.write("a.txt", "after the toolkit went\n");
  const started = Date.now();
  const st = r.git(["status", "--porcelain"]);
  expect(st.stdout).toBe(" M a.txt\n");
  expect(st.stderr).toBe("");
  const reset = r.git(["reset", "-q", "--hard"]);
  expect(reset.stdout + reset.stderr).toBe("");
  expect(r.read("a.txt")).toBe("a\n");
  expect(Date.now() - started).toBeLessThan(4000);
});

test("the guard is on unless undo.guard=false (unset, where the tree can be watched); uninstall puts back what was there and drops the index's monitor data", () => {
  // Unset: on where the worker can watch the tree (Linux, a local file system), the user's choice elsewhere.
  expect(guardWanted({ guard: null }, null)).toBe(true);
  expect(guardWanted({ guard: null }, "no inotify on this system")).toBe(false);
  expect(guardWanted({ guard: true }, "no inotify on this system")).toBe(true);
  expect(guardWanted({ guard: false }, null)).toBe(false);
  expect(unwatchableTree(tempDir("watchable"), "darwin")).toBe("no inotify on this system");
  if (process.platform === "linux") expect(unwatchableTree(tempDir("watchable"), "linux")).toBeNull();

  const off = makeRepo();
  off.commit("base", FILES);
  off.git(["config", "undo.guard", "false"]);
  expect(off.undo(["init"]).stdout).not.toMatch(/guard|fsmonitor/);
  expect(off.git(["config", "core.fsmonitor"], { allowFail: true }).code).toBe(1);

  const r = makeRepo();
  r.commit("base", FILES);
  r.git(["config", "core.fsmonitorHookVersion", "1"]);
  if (process.platform !== "linux") r.git(["config", "undo.guard", "true"]);
  const init = r.undo(["init"]);
  expect(init.code).toBe(0);
  expect(init.stdout).toMatch(/registered the guard as core\.fsmonitor/);
  expect(r.git(["config", "core.fsmonitorHookVersion"]).stdout).toBe("2\n");
  r.git(["status"]);
  // The index now carries the monitor's extension (FSMN).
  const index = () => readFileSync(join(r.gitDir(), "index"));
  expect(index().includes(Buffer.from("FSMN"))).toBe(true);
  const un = r.undo(["uninstall"]);
  expect(un.code).toBe(0);
  expect(un.stdout).toMatch(/removed the guard/);
  expect(r.git(["config", "core.fsmonitor"], { allowFail: true }).code).toBe(1);
  expect(r.git(["config", "core.fsmonitorHookVersion"]).stdout).toBe("1\n");
  expect(index().includes(Buffer.from("FSMN"))).toBe(false);
});

test("where the tree cannot be watched (a network file system), init leaves the guard out unless undo.guard is true, and says so", () => {
  const r = makeRepo();
  r.commit("base", FILES);
  r.env.GIT_UNDO_TEST_FS_TYPE = String(0x6969);
  const init = r.undo(["init"]);
  expect(init.code).toBe(0);
  expect(init.stdout).toMatch(/note: the guard is off here \(the working tree is on a file system \(NFS\)[^\n]*\n.*\n'git config undo\.guard true', then 'git undo init', turns it on/);
  expect(r.git(["config", "core.fsmonitor"], { allowFail: true }).code).toBe(1);
  // Not wanted here, so doctor does not send the user to init for it.
  expect(r.undo(["doctor"]).stdout).not.toMatch(/guard/);
  r.git(["config", "undo.guard", "true"]);
  expect(r.undo(["init"]).stdout).toMatch(/registered the guard as core\.fsmonitor/);
  expect(r.git(["config", "core.fsmonitor"]).stdout).toMatch(/git_undo_guard/);
  r.undo(["uninstall"]);
});

test("doctor says whether the guard is registered where it is wanted", () => {
  const r = makeRepo();
  r.commit("base", FILES);
  r.git(["config", "undo.guard", "true"]);
  expect(r.undo(["init"]).code).toBe(0);
  expect(r.undo(["doctor"]).stdout).toMatch(/the guard: core\.fsmonitor records before/);
  // Taken out by hand (or a repository set up by a git-undo before the guard was on by default).
  r.git(["config", "--unset", "core.fsmonitor"]);
  expect(r.undo(["doctor"]).stdout).toMatch(/the guard is not registered \(undo\.guard is true\).*run 'git undo init'/);
  expect(r.undo(["init"]).code).toBe(0);
  r.git(["config", "undo.guard", "false"]);
  expect(r.undo(["doctor"]).stdout).toMatch(/registered as core\.fsmonitor but undo\.guard is false/);
  expect(r.undo(["init"]).code).toBe(0);
  expect(r.git(["config", "core.fsmonitor"], { allowFail: true }).code).toBe(1);
  expect(r.undo(["doctor"]).stdout).not.toMatch(/guard/);
});

test("a monitor of the user's own stays, and init says what is off", () => {
  const r = makeRepo();
  r.commit("base", FILES);
  r.git(["config", "undo.guard", "true"]);
  r.git(["config", "core.fsmonitor", "/nowhere/their-watchman-hook"]);
  const init = r.undo(["init"]);
  expect(init.code).toBe(0);
  expect(init.stdout).toMatch(/core\.fsmonitor is yours/);
  expect(r.git(["config", "core.fsmonitor"]).stdout).toBe("/nowhere/their-watchman-hook\n");
  r.undo(["uninstall"]);
  expect(r.git(["config", "core.fsmonitor"]).stdout).toBe("/nowhere/their-watchman-hook\n");
});

test("which commands may discard work, from their command lines", () => {
  const d = (line: string) => commandEffect(line).discards;
  for (const line of ["git reset --hard", "git reset -q --merge HEAD", "/usr/bin/git checkout -- a", "git checkout -f main", "git switch --discard-changes x", "git restore a", "git clean -fd", "git stash", "git stash push -u", "git rm -f a", "git read-tree -u --reset HEAD", "git merge --abort", "git -C /x -c a=b reset --hard", "git-checkout-index -f -a", "git checkout HEAD~1 a.txt"]) {
    expect([line, d(line)]).toEqual([line, true]);
  }
  for (const line of ["git status", "git diff", "git add a", "git commit -m x", "git reset --soft HEAD~1", "git stash drop", "git stash pop", "git clean -n", "git switch main", "git checkout -b topic", "git rm --cached a", "git restore --staged a"]) {
    expect([line, d(line)]).toEqual([line, false]);
  }
  // `git checkout x`: a branch or a file; the worker asks Git which.
  expect(commandEffect("git checkout main").unlessCommit).toBe("main");
  // Commands that write files without firing a hook are marked.
  for (const line of ["git clean -f", "git restore a", "git restore --staged a", "git apply p.diff", "git checkout -- a"]) expect([line, commandEffect(line).marks]).toEqual([line, true]);
  for (const line of ["git status", "git apply --check p.diff", "git log"]) expect([line, commandEffect(line).marks]).toEqual([line, false]);
  // Only known readers have their index writes taken for refreshes; a commit or an add never.
  for (const line of ["git status", "git diff --quiet", "git log -1"]) expect([line, commandEffect(line).readOnly]).toEqual([line, true]);
  for (const line of ["git commit -m x", "git add a", "git merge x", "git frobnicate"]) expect([line, commandEffect(line).readOnly ?? false]).toEqual([line, false]);
  // What deletes unreachable objects however new waits for what is still to be recorded; an expiry in the past (gc's, gc --auto's) never.
  for (const line of ["git prune", "git prune --expire=now", "git prune --expire now", "git gc --prune=now", "git gc --prune=all"]) expect([line, commandEffect(line).prunes ?? false]).toEqual([line, true]);
  for (const line of ["git prune --expire 2.weeks.ago", "git gc", "git gc --auto", "git prune -n", "git commit -m x"]) expect([line, commandEffect(line).prunes ?? false]).toEqual([line, false]);
});

test("a command typed after the previous one ended waits for its recording: a stopped worker still records them apart", async () => {
  const r = autoRepo({ files: FILES, guard: true });
  const env = { GIT_UNDO_WORKER_LINGER: "60000" };
  r.git(["status"], { env });
  const undo = join(r.gitDir(), "undo");
  await waitFor(() => workerPid(undo) !== null && !existsSync(join(undo, "pending")), "a warm worker");
  const pid = workerPid(undo)!;
  const before = list(r).length;
  try {
    // The worker falls behind (stopped): the commit is marked, not recorded.
    process.kill(pid, "SIGSTOP");
    r.write("a.txt", "committed\n");
    // (Without its own guard, which would wait for the stopped worker up to undo.guardTimeout.)
    r.git(["-c", "core.fsmonitor=", "commit", "-q", "-am", "behind"], { env });
    await Bun.sleep(400);
    // A command typed 0.4 s later: its guard waits for the worker.
    r.write("sub/b.txt", "staged after\n");
    const add = Bun.spawn({ cmd: ["git", "add", "sub/b.txt"], cwd: r.dir, env: { ...r.env, ...env }, stdout: "pipe", stderr: "pipe" });
    await Bun.sleep(300);
    expect(add.exitCode).toBeNull(); // still waiting for the guard
    process.kill(pid, "SIGCONT");
    expect(await add.exited).toBe(0);
    await waitFor(() => !existsSync(join(undo, "pending")) && !existsSync(join(undo, "pending.taken")), "both recorded", 30_000);
    const after = list(r);
    const made = after.slice(0, after.length - before);
    // Two snapshots: the commit alone (b.txt not staged yet), then the add.
    expect(made.map((s) => s.summary)).toEqual([expect.stringMatching(/b\.txt/), "commit: behind"]);
    expect(r.git(["cat-file", "blob", `${made[1]!.commit}^{tree}:index/sub/b.txt`]).stdout).toBe("b\n");
    expect(r.git(["cat-file", "blob", `${made[0]!.commit}^{tree}:index/sub/b.txt`]).stdout).toBe("staged after\n");
  } finally {
    resumeAndEnd(pid);
  }
}, 60_000);

test("a worker alive but not answering costs one command the bound, not every command; woken, it is waited for again", async () => {
  const { r, env, undo, pid } = await warmGuarded(3000);
  const marker = join(undo, "guard-unanswered");
  expect(readFileSync(join(undo, "guard-ticks"), "utf8").trim()).toBe("300");
  const before = list(r).length;
  const timedStatus = () => {
    const started = Date.now();
    const st = r.git(["status", "--porcelain"], { env });
    return { out: st.stdout + st.stderr, ms: Date.now() - started };
  };
  try {
    process.kill(pid, "SIGSTOP");
    r.write("a.txt", "edited while the worker is stopped\n");
    // The first command waits the whole bound for the stopped worker, then goes on as without a monitor.
    const first = timedStatus();
    expect(first.out).toBe(" M a.txt\n");
    expect(first.ms).toBeGreaterThanOrEqual(2900);
    expect(existsSync(marker)).toBe(true);
    // The next ones do not wait for it (a few ms of quick looks instead of 3 s).
    const second = timedStatus();
    expect(second.out).toBe(" M a.txt\n");
    expect(second.ms).toBeLessThan(1500);
    // Asked once the stopped worker's lease has run out (5 s: it renews nothing), doctor still names it.
    await Bun.sleep(2500);
    const doctor = r.undo(["doctor"]);
    expect(doctor.stdout + doctor.stderr).toContain(`waited undo.guardTimeout for the worker (pid ${pid}), alive but not answering`);
    // Woken, the worker reads the requests again, and the guard waits for it as before:
    // an edit no command saw is recorded before reset --hard throws it away.
    process.kill(pid, "SIGCONT");
    await waitFor(() => !existsSync(marker), "the worker reading requests again", 10_000);
    r.write("a.txt", "edited once the worker woke\n");
    r.git(["reset", "-q", "--hard"], { env });
    await waitFor(() => !existsSync(join(undo, "pending")) && !existsSync(join(undo, "pending.taken")), "recorded", 30_000);
    const made = list(r).slice(0, list(r).length - before);
    expect(holding(r, made, "a.txt", "edited once the worker woke\n")).toHaveLength(1);
    expect(r.read("a.txt")).toBe("a\n");
    expect(existsSync(marker)).toBe(false);

    // Deaf again, then ended as doctor advises: the worker the next command starts is waited for,
    // and the edit is recorded before the reset throws it away.
    process.kill(pid, "SIGSTOP");
    expect(timedStatus().ms).toBeGreaterThanOrEqual(2900);
    expect(readFileSync(marker, "utf8").trim()).toBe(String(pid));
    process.kill(pid, "SIGKILL");
    await waitFor(() => !existsSync(`/proc/${pid}`), "the worker gone");
    const beforeKill = list(r).length;
    r.write("sub/b.txt", "edited after the deaf worker was ended\n");
    r.git(["reset", "-q", "--hard"], { env });
    await waitFor(() => workerPid(undo) !== pid && !existsSync(join(undo, "pending")) && !existsSync(join(undo, "pending.taken")), "recorded by a new worker", 30_000);
    const afterKill = list(r);
    expect(holding(r, afterKill.slice(0, afterKill.length - beforeKill), "sub/b.txt", "edited after the deaf worker was ended\n")).toHaveLength(1);
    expect(r.read("sub/b.txt")).toBe("b\n");
  } finally {
    resumeAndEnd(pid);
  }
}, 60_000);

test("a link or FIFO at guard-unanswered or worker.pid: the guard writes nothing through it and never hangs", async () => {
  const { r, env, undo, pid } = await warmGuarded(300);
  const marker = join(undo, "guard-unanswered");
  const outside = join(tempDir("outside"), "precious.txt");
  writeFileSync(outside, "precious\n");
  const status = () => {
    const res = Bun.spawnSync({ cmd: ["git", "status", "--porcelain"], cwd: r.dir, env: { ...r.env, ...env }, stdout: "pipe", stderr: "pipe", timeout: 30_000 });
    expect(res.signalCode ?? null).toBeNull();
    expect(res.stdout.toString() + res.stderr.toString()).toBe("");
  };
  try {
    process.kill(pid, "SIGSTOP"); // every guard waits out its bound, and would then write the marker
    symlinkSync(outside, marker);
    status();
    expect(readFileSync(outside, "utf8")).toBe("precious\n");
    rmSync(marker);
    expect(Bun.spawnSync({ cmd: ["mkfifo", marker] }).exitCode).toBe(0);
    status();
    rmSync(marker);
    writeFileSync(marker, `${pid}\n`);
    const pidFile = join(undo, "worker.pid");
    rmSync(pidFile);
    expect(Bun.spawnSync({ cmd: ["mkfifo", pidFile] }).exitCode).toBe(0);
    status();
  } finally {
    resumeAndEnd(pid);
  }
}, 120_000);

test("a request whose line comes late is answered as it comes, and the worker waits for it without spinning", async () => {
  const r = autoRepo({ files: FILES, guard: true });
  const env = { GIT_UNDO_WORKER_LINGER: "60000" };
  r.git(["status"], { env });
  const undo = join(r.gitDir(), "undo");
  await waitFor(() => workerPid(undo) !== null && !existsSync(join(undo, "pending")), "a warm worker");
  const worker = workerPid(undo)!;
  // A guard's shell and its Git, stood in for by two processes that live on.
  const shell = Bun.spawn(["sleep", "30"]);
  const git = Bun.spawn(["sleep", "30"]);
  const cpuMs = () => {
    const fields = readFileSync(`/proc/${worker}/stat`, "latin1").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  };
  try {
    const request = join(undo, `guard.${shell.pid}`);
    writeFileSync(request, ""); // opened by the guard's shell; its line not written yet
    const cpu = cpuMs();
    await Bun.sleep(1000);
    expect(cpuMs() - cpu).toBeLessThan(500); // a spinning worker takes the whole second
    expect(existsSync(request)).toBe(true);
    appendFileSync(request, `${git.pid}\ngit-undo:0:0\n${r.dir}\n`);
    await waitFor(() => !existsSync(request), "the answer", 5_000);
    expect(readFileSync(join(undo, `answer.${shell.pid}`), "utf8").split("\n")[0]).toBe(String(git.pid));
  } finally {
    shell.kill();
    git.kill();
    try {
      process.kill(worker, "SIGTERM");
    } catch {
      /* gone */
    }
  }
}, 60_000);
