// What git-undo's hooks cost Git, against the same commands with an `exit 0`
// hook and with no hook at all, measured in one run on a small repository
// (the hooks' cost does not depend on its size): update-ref, commit, a
// 40-commit rebase, and a fetch bringing 100 new tags. Target: at most 1.1x
// the `exit 0` hook. Then the background work a 40-commit rebase triggers,
// counted in recordings and Git processes.
//
// Then, on each fixture size, what the worker costs in CPU per recording
// (workerCpu below): target, medium, at most 40 ms.
//
//   bun bench/hooks.ts [--rounds N] [--size medium|large|both] [--worker]
//
// --rounds sets the rounds of both parts; --worker runs only the worker's part.
import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnCount } from "../core/git.ts";
import { record } from "../core/record.ts";
import { DEFAULT_CONFIG, openRepo } from "../core/repo.ts";
import { hasMark, hasTaken } from "../worker/protocol.ts";
import { idle, waitFor } from "../test/helpers/auto.ts";
import { makeRepo, tempDir, TestRepo } from "../test/helpers/repo.ts";
import {
  BunFloor,
  childCpuMs,
  Cli,
  cpuMs,
  Editor,
  gitOut,
  gitVersion,
  lineCount,
  loadAverage,
  median,
  printTable,
  progress,
  readWorkerTrace,
  stopWorker,
  timed,
  verdict,
  workerCpuTotal,
} from "./common.ts";
import { describeFixture, parseSizes, workingCopy, type FixtureSize } from "./fixture.ts";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    size: { type: "string" },
    worker: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("usage: bun bench/hooks.ts [--rounds N] [--size medium|large|both] [--worker]");
  process.exit(0);
}
const ROUNDS = Number(args.rounds);
type Setup = "none" | "exit0" | "ours";
const SETUPS: Setup[] = ["none", "exit0", "ours"];
const QUIET = { GIT_UNDO_INTERNAL: "1" };

function setUp(kind: Setup, upstream: TestRepo, hooksDirs: { empty: string; exit0: string }): TestRepo {
  const dir = join(tempDir(`bench-${kind}`), "repo");
  upstream.git(["clone", "-q", "--no-tags", upstream.dir, dir]);
  const r = new TestRepo(dir, upstream.home);
  // The test suite's cross-check of the kept index is not what a user runs.
  delete r.env.GIT_UNDO_VERIFY_KEPT;
  r.git(["config", "user.name", "Bench"]);
  r.git(["config", "user.email", "bench@example.com"]);
  if (kind === "none") r.git(["config", "core.hooksPath", hooksDirs.empty]);
  if (kind === "exit0") r.git(["config", "core.hooksPath", hooksDirs.exit0]);
  if (kind === "ours") {
    // The hooks alone: bench/guard measures them with the guard (the default on Linux).
    r.git(["config", "undo.guard", "false"]);
    const res = r.undo(["init"]);
    if (res.code !== 0) throw new Error(res.stderr);
  }
  // The topic branch a rebase replays: 40 commits on the second commit.
  r.git(["checkout", "-q", "-b", "topic", "HEAD~1"], { env: QUIET });
  for (let i = 0; i < 40; i++) {
    r.write(`t${i}.txt`, `${i}\n`);
    r.git(["add", `t${i}.txt`], { env: QUIET });
    r.git(["commit", "-q", "-m", `topic ${i}`], { env: QUIET });
  }
  r.git(["branch", "topic-start"], { env: QUIET });
  r.git(["checkout", "-q", "main"], { env: QUIET });
  return r;
}

/**
 * The hooks as they run while a worker lingers between commands, with no
 * recording competing with Git for the CPU while Git is timed: worker.pid
 * names this process and its lease (the file's time) is a day ahead, so every
 * hook appends its mark and finds a live worker, starting none. (A real
 * worker reads the state 40 ms after each command; that cost is the second
 * part's.)
 */
function holdLease(undoDir: string): void {
  const pidFile = join(undoDir, "worker.pid");
  writeFileSync(pidFile, `${process.pid}\n`);
  const ahead = new Date(Date.now() + 86_400_000);
  utimesSync(pidFile, ahead, ahead);
}

/** The mark as a worker leaves it after taking it: none, so the next hook creates it. */
const takeMark = (undoDir: string) => rmSync(join(undoDir, "pending"), { force: true });

function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}
/** git-undo's hooks against an `exit 0` hook: at most this ratio. */
const HOOK_TARGET = 1.1;

/** The hooks' cost to Git, and the background work of a rebase, on a small repository. Returns whether the target was met. */
async function hooksBench(): Promise<boolean> {
  const scratch = tempDir("bench-hooks");
  const emptyHooks = join(scratch, "empty");
  mkdirSync(emptyHooks);
  const exit0Hooks = join(scratch, "exit0");
  mkdirSync(exit0Hooks);
  for (const h of ["reference-transaction", "post-index-change"]) writeFileSync(join(exit0Hooks, h), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const load0 = loadAverage();
  const upstream = makeRepo();
  upstream.commit("one", { "a.txt": "1\n" });
  upstream.commit("two", { "a.txt": "2\n" });
  for (let i = 0; i < 100; i++) upstream.git(["tag", `v${i}`]);
  const repos = Object.fromEntries(SETUPS.map((k) => [k, setUp(k, upstream, { empty: emptyHooks, exit0: exit0Hooks })])) as Record<Setup, TestRepo>;
  const r = repos.ours;
  const undoDir = join(r.gitDir(), "undo");
  // Any worker start while Git is timed would be a bench error: the lease below rules it out.
  const workerTrace = join(scratch, "workers");
  writeFileSync(workerTrace, "");
  r.env.GIT_UNDO_WORKER_TRACE = workerTrace;
  await waitFor(() => idle(undoDir), "the worker `git undo init` may have left");
  holdLease(undoDir);
  const floor = new BunFloor(scratch);

  const results: Record<string, Record<Setup, number[]>> = {};
  const add = (name: string, kind: Setup, ms: number) => ((results[name] ??= { none: [], exit0: [], ours: [] })[kind].push(ms));

  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    progress(round, ROUNDS, 0);
    // Rotate the order each round so that drift on a busy machine spreads evenly.
    for (const kind of SETUPS.map((_, i) => SETUPS[(i + round) % SETUPS.length]!)) {
      const repo = repos[kind];
      const fresh = kind === "ours" ? () => takeMark(undoDir) : () => {};
      // update-ref and commit: per command, the median of 20.
      const u: number[] = [];
      const c: number[] = [];
      for (let i = 0; i < 20; i++) {
        n++;
        fresh();
        u.push(time(() => repo.git(["update-ref", `refs/heads/bench-${n}`, "HEAD"])));
        fresh();
        c.push(time(() => repo.git(["commit", "-q", "--allow-empty", "-m", `bench ${n}`])));
      }
      add("git update-ref", kind, median(u));
      add("git commit", kind, median(c));
      // A 40-commit rebase, reset to where it started afterwards (untimed).
      repo.git(["checkout", "-q", "topic"], { env: QUIET });
      fresh();
      add("rebase of 40 commits", kind, time(() => repo.git(["rebase", "-q", "main"])));
      repo.git(["reset", "-q", "--hard", "topic-start"], { env: QUIET });
      repo.git(["checkout", "-q", "main"], { env: QUIET });
      // A fetch that brings 100 new tags; deleted again (untimed) for the next round.
      const f: number[] = [];
      for (let i = 0; i < 3; i++) {
        fresh();
        f.push(time(() => repo.git(["fetch", "-q", "--tags"])));
        const tags = repo.g("tag", "-l").split("\n").filter(Boolean);
        repo.git(["tag", "-d", ...tags], { env: QUIET });
      }
      add("fetch of 100 new tags", kind, median(f));
    }
    floor.run(r.dir, r.env);
  }
  // The hooks did mark (each line `<pid> <first argument>`), and started no worker.
  const mark = readFileSync(join(undoDir, "pending"), "utf8");
  if (!/^[1-9]\d* (committed|[01])$/m.test(mark)) throw new Error(`the hooks left no mark in the expected format: ${JSON.stringify(mark.slice(0, 200))}`);
  if (readWorkerTrace(workerTrace).pids.length > 0) throw new Error("a worker started while the hooks were timed");

  const ms = (x: number) => `${x.toFixed(1)} ms`;
  console.log(`git-undo hooks against plain Git (${ROUNDS} rounds, medians; Git ${upstream.g("--version").replace("git version ", "")}, bun ${Bun.version})`);
  console.log(`${load0} before, ${loadAverage()} after; ${floor.describe()}`);
  console.log("the git-undo hooks run as while a worker lingers (a lease held by the bench): each appends its mark, starts nothing\n");
  console.log(`| command | no hook | exit 0 hook | git-undo hooks | vs exit 0 | vs no hook | target |`);
  console.log("|---|---|---|---|---|---|---|");
  let met = true;
  for (const [name, by] of Object.entries(results)) {
    const [none, exit0, ours] = [median(by.none), median(by.exit0), median(by.ours)];
    const ok = ours / exit0 <= HOOK_TARGET;
    if (!ok) met = false;
    console.log(`| ${name} | ${ms(none)} | ${ms(exit0)} | ${ms(ours)} | ${(ours / exit0).toFixed(2)}x | ${(ours / none).toFixed(2)}x | <= ${HOOK_TARGET}x exit 0: ${verdict(ok)} |`);
  }

  // The background work of one 40-commit rebase: the lease given up, a real worker started by the hooks.
  rmSync(join(undoDir, "worker.pid"), { force: true });
  takeMark(undoDir);
  r.undo(["snapshot"]); // exit 1 when the state is recorded already
  const spawns = join(scratch, "spawns");
  writeFileSync(spawns, "");
  const before = r.snapshots().length;
  r.git(["checkout", "-q", "topic"], { env: QUIET });
  r.git(["rebase", "-q", "main"], { env: { GIT_UNDO_TRACE_SPAWNS: spawns } });
  const t = performance.now();
  await waitFor(() => idle(undoDir), "the worker to record the rebase", 120_000);
  const settledMs = performance.now() - t;
  const after = r.snapshots();
  const workerSpawns = lineCount(spawns);
  r.git(["commit", "-q", "--allow-empty", "-m", "x"], { env: QUIET });
  writeFileSync(spawns, "");
  r.undo(["snapshot"], { env: { GIT_UNDO_TRACE_SPAWNS: spawns } });
  const oneRecording = lineCount(spawns);
  const settle = r.git(["config", "undo.settle"], { allowFail: true }).stdout.trim() || `${DEFAULT_CONFIG.settleMs} (default)`;
  console.log(
    `\n40-commit rebase in the background: ${after.length - before} snapshot (${after[0]!.summary}), ` +
      `${workerSpawns} Git processes in the worker (git undo snapshot of one commit: ${oneRecording}), done ${ms(settledMs)} after the rebase returned ` +
      `(undo.settle ${settle} ms).`,
  );
  if (after.length - before !== 1) {
    console.log(`MISSED: a 40-commit rebase should be one snapshot, got ${after.length - before}`);
    met = false;
  }
  return met;
}

/** The worker's CPU per recording on the medium fixture: at most this many milliseconds. */
const WORKER_CPU_TARGET: Record<FixtureSize, number | null> = { medium: 40, large: null };

/**
 * What a recording costs in CPU (user + system, the Git processes included)
 * on a copy of a fixture with `git undo init`, after a commit of one edited
 * file. Per round: a commit recorded by a worker that exits when done
 * (GIT_UNDO_WORKER_LINGER=0: Bun's start, loading the recorder, one
 * recording; the CPU it reports when it stops); `git undo snapshot` after a
 * commit made with the hooks quiet (git, the launcher, Bun and its Git
 * processes); record() in-process after one (its own CPU and its Git
 * processes'); and Bun running an empty script, for scale. Then one worker
 * that stays (a long linger) records `rounds` commits in a row and is
 * stopped: its CPU over the recordings, its start shared among them. Each
 * row also counts its Git processes per recording.
 * Returns whether the target was met.
 */
async function workerCpu(size: FixtureSize): Promise<boolean> {
  const load0 = loadAverage();
  const wc = await workingCopy({ size, label: `hooks-${size}` });
  const cli = new Cli(wc.env);
  const trace = join(cli.bin, "workers.txt");
  writeFileSync(trace, "");
  const spawns = join(cli.bin, "worker-spawns.txt");
  const undoDir = join(wc.repo, ".git", "undo");
  const env = { ...cli.env, GIT_UNDO_WORKER_TRACE: trace, GIT_UNDO_TRACE_SPAWNS: spawns };
  // GIT_UNDO_INTERNAL makes the hooks do nothing: the commits the other cases record themselves.
  const quiet = { ...env, GIT_UNDO_INTERNAL: "1" };
  const editor = new Editor(wc);
  const snapshots = () => gitOut(wc.repo, wc.env, ["for-each-ref", "--format=x", "refs/undo/"]).split("\n").filter(Boolean).length;
  let commits = 0;
  const commitOne = (commitEnv: Record<string, string>) => {
    editor.edit(1, ++commits);
    timed(["git", "commit", "-q", "-a", "-m", `edit ${commits}`], wc.repo, commitEnv);
  };
  const floor = new BunFloor(cli.bin);
  type Row = { cpu: number[]; spawns: number[] };
  const rows = { perStart: { cpu: [], spawns: [] } as Row, cli: { cpu: [], spawns: [] } as Row, core: { cpu: [], spawns: [] } as Row };
  try {
    gitOut(wc.repo, wc.env, ["config", "undo.guard", "false"]); // a recording's own cost, without the guard's answers
    cli.run(["init"], wc.repo); // the hooks, and a first recording of the whole tree
    await waitFor(() => idle(undoDir), "the worker `git undo init` may have left", 120_000);
    const repo = await openRepo({ cwd: wc.repo, env: wc.env });
    const WARMUP = 1;
    const rounds = WARMUP + ROUNDS;
    let lost = 0;
    for (let round = 0; round < rounds; round++) {
      progress(round, rounds, WARMUP);
      const keep = round >= WARMUP;
      const before = snapshots();
      const known = new Set(readWorkerTrace(trace).pids);
      writeFileSync(spawns, "");
      commitOne({ ...env, GIT_UNDO_WORKER_LINGER: "0" });
      await waitFor(() => idle(undoDir), "the worker to record and exit", 120_000);
      const t = readWorkerTrace(trace);
      // Two hooks of one command may both start a worker; one of them loses the claim and leaves at once.
      const fresh = t.started.filter((p) => !known.has(p));
      if (fresh.length !== 1 || snapshots() !== before + 1) {
        throw new Error(`expected one worker and one snapshot, got ${fresh.length} workers and ${snapshots() - before} snapshots`);
      }
      if (keep) {
        lost += t.pids.filter((p) => !known.has(p)).length - 1;
        rows.perStart.cpu.push(t.cpuByPid.get(fresh[0]!) ?? 0);
        rows.perStart.spawns.push(lineCount(spawns));
      }

      commitOne(quiet);
      const c0 = childCpuMs();
      const run = cli.run(["snapshot"], wc.repo);
      if (!/^#\d+ /.test(run.stdout)) throw new Error("git undo snapshot after a commit made no snapshot");
      if (keep) {
        rows.cli.cpu.push(childCpuMs() - c0);
        rows.cli.spawns.push(run.commands.length);
      }

      commitOne(quiet);
      const c1 = cpuMs();
      const s0 = spawnCount();
      if (!(await record(repo, { kind: "change" })).created) throw new Error("record() after a commit made no snapshot");
      if (keep) {
        rows.core.cpu.push(cpuMs() - c1);
        rows.core.spawns.push(spawnCount() - s0);
      }

      floor.run(wc.repo, env, keep);
    }

    // One worker for a series of commits, each recorded before the next.
    const before = snapshots();
    const known = new Set(readWorkerTrace(trace).pids);
    writeFileSync(spawns, "");
    const lingerEnv = { ...env, GIT_UNDO_WORKER_LINGER: "600000" };
    for (let i = 0; i < ROUNDS; i++) {
      commitOne(lingerEnv);
      await waitFor(() => !hasMark(undoDir) && !hasTaken(undoDir), "the worker to record", 120_000);
    }
    stopWorker(trace, undoDir);
    await waitFor(() => idle(undoDir), "the worker to stop", 120_000);
    const t = readWorkerTrace(trace);
    const lingering = t.started.filter((p) => !known.has(p));
    if (lingering.length !== 1 || snapshots() !== before + ROUNDS) {
      throw new Error(`expected one worker and ${ROUNDS} snapshots, got ${lingering.length} workers and ${snapshots() - before} snapshots`);
    }
    const lingeringCpu = workerCpuTotal({ ...t, cpuByPid: new Map(lingering.map((p) => [p, t.cpuByPid.get(p) ?? 0])) });

    const target = WORKER_CPU_TARGET[size];
    const met = target === null ? null : median(rows.perStart.cpu) <= target;
    console.log(`\nworker CPU per recording, ${size}: ${describeFixture(wc)}; a commit of 1 edited file each; ${ROUNDS} runs after ${WARMUP} warm-up, medians; git ${gitVersion()}, bun ${Bun.version}`);
    console.log(`${load0} before, ${loadAverage()} after; CPU is user + system from /proc, in 10 ms ticks; ${floor.describe()}`);
    const line = (name: string, cpu: number[], gitProcesses: string, t: number | null = null, ok: boolean | null = null) => [
      name,
      median(cpu).toFixed(0),
      Math.min(...cpu).toFixed(0),
      gitProcesses,
      t === null ? "" : `<= ${t} ms`,
      verdict(ok),
    ];
    const counts = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b).join("/");
    printTable([
      ["case", "CPU ms", "least", "git processes", "target", ""],
      line("worker started for one recording (start + recording)", rows.perStart.cpu, counts(rows.perStart.spawns), target, met),
      line(`worker recording ${ROUNDS} commits in a row (per recording)`, [lingeringCpu / ROUNDS], (lineCount(spawns) / ROUNDS).toFixed(1)),
      line("git undo snapshot (git, launcher, Bun, its Git processes)", rows.cli.cpu, counts(rows.cli.spawns)),
      line("record() in-process (own + its Git processes)", rows.core.cpu, counts(rows.core.spawns)),
      line("bun startup (empty script)", floor.cpuMs, ""),
    ]);
    // Not in the figures above: a worker that loses the claim exits before it can report its CPU (about Bun's start).
    console.log(`workers started that lost the claim to the one recording: ${lost} in ${ROUNDS} commits`);
    return met !== false;
  } finally {
    stopWorker(trace, undoDir); // one left by a failure above
    cli.remove();
    wc.remove();
  }
}

let allMet = true;
if (!args.worker && !(await hooksBench())) allMet = false;
for (const size of parseSizes(args.size)) if (!(await workerCpu(size))) allMet = false;
process.exitCode = allMet ? 0 : 1;
