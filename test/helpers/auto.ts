// Helpers for the automatic-recording tests: a repository with git-undo's hooks
// installed, and waiting (with a deadline, never a fixed sleep) for the worker.
import { expect } from "bun:test";
import { readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fromTemplate, makeRepo, type RepoOptions, type SnapshotJson, type TestRepo } from "./repo.ts";
import { hasMark, hasTaken, LEASE_MS, LEASE_RENEW_MS } from "../../worker/protocol.ts";

/** Short settle times keep the suite fast; settleMax bounds waits on conflicts. */
export const SETTLE_MS = 150;

export interface AutoRepoOptions extends RepoOptions {
  settleMaxMs?: number;
  /** Files of the first commit (default a.txt). */
  files?: Record<string, string>;
  /** undo.guard before init (unset by default: on where the tree can be watched, core/guard.ts guardWanted). */
  guard?: boolean;
}

/**
 * A repository with one commit and `git undo init` run in it: a copy of one
 * made once per test file for the same options (test/helpers/repo.ts fromTemplate).
 */
export function autoRepo(opts: AutoRepoOptions = {}): TestRepo {
  return fromTemplate(`autoRepo ${JSON.stringify(opts)}`, () => {
    const r = makeRepo(opts);
    r.git(["config", "undo.settle", String(SETTLE_MS)]);
    if (opts.settleMaxMs !== undefined) r.git(["config", "undo.settleMax", String(opts.settleMaxMs)]);
    if (opts.guard !== undefined) r.git(["config", "undo.guard", String(opts.guard)]);
    r.commit("base", opts.files ?? { "a.txt": "a\n" });
    const init = r.undo(["init"]);
    if (init.code !== 0) throw new Error(`git undo init failed: ${init.stderr}`);
    // Copied only once nothing is left running in it.
    const undoDir = join(r.gitDir(), "undo");
    const deadline = Date.now() + 20_000;
    while (!idle(undoDir)) {
      if (Date.now() > deadline) throw new Error(`the worker in ${undoDir} never finished`);
      Bun.sleepSync(25);
    }
    return r;
  });
}

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The worker's pid while worker.pid names a live process, else null. */
export function workerPid(undoDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(undoDir, "worker.pid"), "utf8").trim());
    return pid > 0 && pidAlive(pid) ? pid : null;
  } catch {
    return null;
  }
}

/** Whether the worktree's worker has nothing left to do: no mark, no mark being recorded, no live worker. */
export function idle(undoDir: string): boolean {
  if (hasMark(undoDir) || hasTaken(undoDir)) return false;
  try {
    const pid = Number(readFileSync(join(undoDir, "worker.pid"), "utf8").trim());
    return !(pid > 0 && pidAlive(pid));
  } catch {
    return true;
  }
}

/** Poll until `pred` holds; fail after the deadline. */
export async function waitFor(pred: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

/**
 * Wait until the worker of the worktree whose git dir is `gitDir` is done.
 * Past the deadline the error says what the worker was doing then, and
 * whether it finished within 30 s more (a slow machine) or not (stuck).
 */
export async function settled(gitDir: string, timeoutMs = 20_000): Promise<void> {
  const undoDir = join(gitDir, "undo");
  const done = (ms: number): Promise<boolean> => waitFor(() => idle(undoDir), undoDir, ms).then(() => true, () => false);
  if (await done(timeoutMs)) return;
  const then = workerState(undoDir);
  const late = Date.now();
  const after = (await done(30_000)) ? `it finished ${Date.now() - late} ms later` : "it was still not done 30 s later";
  throw new Error(`timed out waiting for the worker in ${gitDir} to finish (${timeoutMs} ms); ${after}. At the deadline:\n${then}`);
}

/**
 * Wait until every command marked in the worktree whose git dir is `gitDir`
 * is recorded: no mark, and none taken for a recording under way. Unlike
 * `settled`, a worker may stay on, lingering as it does for a user.
 */
export async function recorded(gitDir: string, timeoutMs = 20_000): Promise<void> {
  const undoDir = join(gitDir, "undo");
  await waitFor(() => !hasMark(undoDir) && !hasTaken(undoDir), `the marks in ${undoDir} to be recorded`, timeoutMs);
}

/** What a worker's folder and process show: for a test that timed out waiting for it. */
function workerState(undoDir: string): string {
  const read = (name: string): string => {
    try {
      return readFileSync(join(undoDir, name), "utf8");
    } catch {
      return "(none)";
    }
  };
  const pid = workerPid(undoDir);
  let proc = "no live worker";
  if (pid !== null) {
    try {
      proc = `worker ${pid}: ${readFileSync(`/proc/${pid}/stat`, "utf8").trim()}`;
    } catch {
      proc = `worker ${pid} alive`;
    }
  }
  const tail = read("worker.log").trimEnd().split("\n").slice(-8).join("\n");
  return [`pending: ${JSON.stringify(read("pending"))}`, `pending.taken: ${JSON.stringify(read("pending.taken"))}`, proc, `worker.log (end):\n${tail}`].join("\n");
}

/**
 * After a Git command: wait for the worker, then check that exactly one new
 * snapshot appeared, that its summary matches, and that it holds the live
 * state (recording again finds nothing new).
 */
export async function expectRecorded(
  r: TestRepo,
  before: SnapshotJson[],
  summary: RegExp,
  opts: { cwd?: string; gitDir?: string } = {},
): Promise<SnapshotJson[]> {
  await settled(opts.gitDir ?? r.gitDir());
  // The checks run in-process (TestRepo.run): what is tested is the worker's recording.
  const listed = await r.run(["list", "--json"], opts.cwd ? { cwd: opts.cwd } : {});
  if (listed.code !== 0) throw new Error(`git undo list failed: ${listed.stderr}`);
  const after = JSON.parse(listed.stdout) as SnapshotJson[];
  expect(after.length).toBe(before.length + 1);
  const latest = after[0]!;
  expect(latest.kind).toBe("change");
  expect(latest.summary ?? "").toMatch(summary);
  const again = await r.run(["snapshot"], opts.cwd ? { cwd: opts.cwd } : {});
  expect(again.stdout).toBe(`no change since #${latest.number}\n`);
  return after;
}

export function list(r: TestRepo, cwd?: string): SnapshotJson[] {
  const res = r.undo(["list", "--json"], cwd ? { cwd } : {});
  if (res.code !== 0) throw new Error(`git undo list failed: ${res.stderr}`);
  return JSON.parse(res.stdout) as SnapshotJson[];
}

/** Set-up commands the hooks must not see. */
export const QUIET = { GIT_UNDO_INTERNAL: "1" };

/**
 * A topic branch of 40 commits and main moved on, made out of the hooks'
 * sight, with topic checked out and the worker settled: `git rebase main`
 * then replays 40 commits. Returns the snapshots before the rebase.
 */
export async function fortyCommitTopic(r: TestRepo): Promise<SnapshotJson[]> {
  // One fast-import rather than eighty Git commands: topic's commit i adds t<i>.txt holding "<i>\n".
  const when = `${Math.floor(Date.now() / 1000)} +0000`;
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  let stream = "";
  for (let i = 0; i < 40; i++) {
    stream += `commit refs/heads/topic\ncommitter Test User <test@example.com> ${when}\n${data(`topic ${i}\n`)}`;
    if (i === 0) stream += `from ${r.g("rev-parse", "HEAD")}\n`;
    stream += `M 100644 inline t${i}.txt\n${data(`${i}\n`)}\n`;
  }
  r.git(["fast-import", "--quiet"], { input: stream, env: QUIET });
  r.commit("main moves on", { "m.txt": "m\n" });
  r.git(["checkout", "-q", "topic"], { env: QUIET });
  await settled(r.gitDir());
  // The hooks recorded it all already: no change (exit 1), or a snapshot (0).
  expect([0, 1]).toContain(r.undo(["snapshot"]).code);
  return list(r);
}

/**
 * A repository whose hooks mark while a stand-in worker (a live process whose
 * command line names worker/main and this git dir, holding the lease) keeps
 * real workers away: the mark stays for the test to read. `release` ends the
 * stand-in.
 */
export function markingRepo(files: Record<string, string> = { "a.txt": "a\n" }): { r: TestRepo; undo: string; release: () => void } {
  const r = makeRepo();
  r.commit("base", files);
  // No guard: the stand-in never answers one, and each command would wait undo.guardTimeout for it.
  r.git(["config", "undo.guard", "false"]);
  if (r.undo(["init", "--file-hooks"]).code !== 0) throw new Error("git undo init failed");
  const undo = join(r.gitDir(), "undo");
  const standIn = Bun.spawn({ cmd: ["sh", "-c", "sleep 60", "worker/main.ts", r.gitDir()], stdout: "ignore", stderr: "ignore" });
  writeFileSync(join(undo, "worker.pid"), `${standIn.pid}\n`);
  // Its lease renewed as a worker renews it (worker/protocol.ts): one set far
  // ahead would be cleared by the next git-undo command, and a real worker started.
  const renew = () => {
    const lease = new Date(Date.now() + LEASE_MS);
    try {
      utimesSync(join(undo, "worker.pid"), lease, lease);
    } catch {
      /* removed by the test */
    }
  };
  renew();
  const timer = setInterval(renew, LEASE_RENEW_MS);
  rmSync(join(undo, "pending"), { force: true });
  return {
    r,
    undo,
    release: () => {
      clearInterval(timer);
      standIn.kill();
    },
  };
}
