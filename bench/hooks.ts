// What git-undo's hooks cost Git, against the same commands with an `exit 0`
// hook and with no hook at all, measured in one run on a small repository
// (the hooks' cost does not depend on its size): update-ref, commit, a
// 40-commit rebase, and a fetch bringing 100 new tags. Then the background
// work a 40-commit rebase triggers, counted in recordings and Git processes.
//
// Then, on each fixture size, what the worker costs in CPU per recording
// (workerCpu below): target, medium, at most 40 ms.
//
//   bun bench/hooks.ts [--rounds N] [--size medium|large|both] [--worker]
//
// --rounds sets the rounds of both parts; --worker runs only the worker's part.
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { record } from "../core/record.ts";
import { openRepo } from "../core/repo.ts";
import { hasMark, hasTaken } from "../core/settle.ts";
import { idle, SETTLE_MS, waitFor } from "../test/helpers/auto.ts";
import { makeRepo, tempDir, TestRepo } from "../test/helpers/repo.ts";
import { childCpuMs, Cli, cpuMs, Editor, gitOut, gitVersion, loadAverage, median, printTable, progress, timed, useEnv, verdict } from "./common.ts";
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
    // A long settle keeps the worker alive and idle while Git is timed: the
    // hooks' cost is measured, not a recording competing for the CPU.
    r.git(["config", "undo.settle", "600000"]);
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

function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}
/** git-undo's hooks against an `exit 0` hook: at most this ratio. */
const HOOK_TARGET = 1.1;

/** The hooks' cost to Git, and the background work of a rebase, on a small repository. Returns whether the target was met. */
async function hooksBench(): Promise<boolean> {
  const emptyHooks = join(tempDir("bench-hooks"), "empty");
  mkdirSync(emptyHooks);
  const exit0Hooks = join(tempDir("bench-hooks"), "exit0");
  mkdirSync(exit0Hooks);
  for (const h of ["reference-transaction", "post-index-change"]) writeFileSync(join(exit0Hooks, h), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const upstream = makeRepo();
  upstream.commit("one", { "a.txt": "1\n" });
  upstream.commit("two", { "a.txt": "2\n" });
  for (let i = 0; i < 100; i++) upstream.git(["tag", `v${i}`]);
  const repos = Object.fromEntries(SETUPS.map((k) => [k, setUp(k, upstream, { empty: emptyHooks, exit0: exit0Hooks })])) as Record<Setup, TestRepo>;

  const results: Record<string, Record<Setup, number[]>> = {};
  const add = (name: string, kind: Setup, ms: number) => ((results[name] ??= { none: [], exit0: [], ours: [] })[kind].push(ms));

  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order each round so that drift on a busy machine spreads evenly.
    for (const kind of SETUPS.map((_, i) => SETUPS[(i + round) % SETUPS.length]!)) {
      const r = repos[kind];
      // update-ref and commit: per command, the median of 20.
      const u: number[] = [];
      const c: number[] = [];
      for (let i = 0; i < 20; i++) {
        n++;
        u.push(time(() => r.git(["update-ref", `refs/heads/bench-${n}`, "HEAD"])));
        c.push(time(() => r.git(["commit", "-q", "--allow-empty", "-m", `bench ${n}`])));
      }
      add("git update-ref", kind, median(u));
      add("git commit", kind, median(c));
      // A 40-commit rebase, reset to where it started afterwards (untimed).
      r.git(["checkout", "-q", "topic"], { env: QUIET });
      add("rebase of 40 commits", kind, time(() => r.git(["rebase", "-q", "main"])));
      r.git(["reset", "-q", "--hard", "topic-start"], { env: QUIET });
      r.git(["checkout", "-q", "main"], { env: QUIET });
      // A fetch that brings 100 new tags; deleted again (untimed) for the next round.
      const f: number[] = [];
      for (let i = 0; i < 3; i++) {
        f.push(time(() => r.git(["fetch", "-q", "--tags"])));
        const tags = r.g("tag", "-l").split("\n").filter(Boolean);
        r.git(["tag", "-d", ...tags], { env: QUIET });
      }
      add("fetch of 100 new tags", kind, median(f));
    }
  }

  const ms = (x: number) => `${x.toFixed(1)} ms`;
  console.log(`git-undo hooks against plain Git (${ROUNDS} rounds, medians; Git ${upstream.g("--version").replace("git version ", "")})\n`);
  console.log(`| command | no hook | exit 0 hook | git-undo hooks | vs exit 0 | vs no hook | target |`);
  console.log("|---|---|---|---|---|---|---|");
  let met = true;
  for (const [name, by] of Object.entries(results)) {
    const [none, exit0, ours] = [median(by.none), median(by.exit0), median(by.ours)];
    const ok = ours / exit0 <= HOOK_TARGET;
    if (!ok) met = false;
    console.log(`| ${name} | ${ms(none)} | ${ms(exit0)} | ${ms(ours)} | ${(ours / exit0).toFixed(2)}x | ${(ours / none).toFixed(2)}x | <= ${HOOK_TARGET}x exit 0: ${verdict(ok)} |`);
  }

  // The background work of one 40-commit rebase, with the default settle time.
  const r = repos.ours;
  const gitDir = r.gitDir();
  const undoDir = join(gitDir, "undo");
  r.git(["config", "--unset", "undo.settle"]);
  const pidFile = join(undoDir, "worker.pid");
  // Stop the idle worker the timed part left waiting out its long settle.
  if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, "utf8").trim()), "SIGTERM");
  while (existsSync(pidFile)) await Bun.sleep(20);
  try {
    unlinkSync(join(undoDir, "pending"));
  } catch {
    /* none */
  }
  r.undo(["snapshot"]); // exit 1 when the hooks recorded it all already
  const spawns = join(tempDir("bench-trace"), "spawns");
  writeFileSync(spawns, "");
  const before = r.snapshots().length;
  r.git(["checkout", "-q", "topic"], { env: QUIET });
  r.git(["rebase", "-q", "main"], { env: { GIT_UNDO_TRACE_SPAWNS: spawns } });
  const t = performance.now();
  while (!idle(undoDir)) await Bun.sleep(20);
  const settledMs = performance.now() - t;
  const after = r.snapshots();
  const workerSpawns = readFileSync(spawns, "utf8").split("\n").filter(Boolean).length;
  writeFileSync(spawns, "");
  r.undo(["snapshot", "-m", "one recording, for comparison"], { env: { GIT_UNDO_TRACE_SPAWNS: spawns } });
  r.git(["commit", "-q", "--allow-empty", "-m", "x"], { env: QUIET });
  writeFileSync(spawns, "");
  r.undo(["snapshot"], { env: { GIT_UNDO_TRACE_SPAWNS: spawns } });
  const oneRecording = readFileSync(spawns, "utf8").split("\n").filter(Boolean).length;
  console.log(
    `\n40-commit rebase in the background: ${after.length - before} snapshot (${after[0]!.summary}), ` +
      `${workerSpawns} Git processes (one recording: ${oneRecording}), done ${ms(settledMs)} after the rebase returned ` +
      `(undo.settle ${r.git(["config", "undo.settle"], { allowFail: true }).stdout.trim() || "700"} ms; tests use ${SETTLE_MS}).`,
  );
  return met;
}

/** The CPU milliseconds each worker reported when it stopped (GIT_UNDO_WORKER_TRACE: `stop <pid> <cpu>`). */
const workerStops = (trace: string): number[] =>
  readFileSync(trace, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("stop "))
    .map((l) => Number(l.split(" ")[2]));

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
 * stopped: its CPU over the recordings, its start shared among them.
 * Returns whether the target was met.
 */
async function workerCpu(size: FixtureSize): Promise<boolean> {
  const load0 = loadAverage();
  const wc = await workingCopy({ size, label: `hooks-${size}` });
  const cli = new Cli(wc.env);
  const trace = join(cli.bin, "workers.txt");
  writeFileSync(trace, "");
  const undoDir = join(wc.repo, ".git", "undo");
  const env = { ...cli.env, GIT_UNDO_WORKER_TRACE: trace };
  // GIT_UNDO_INTERNAL makes the hooks do nothing: the commits the other cases record themselves.
  const quiet = { ...env, GIT_UNDO_INTERNAL: "1" };
  const editor = new Editor(wc);
  const snapshots = () => gitOut(wc.repo, wc.env, ["for-each-ref", "--format=x", "refs/undo/"]).split("\n").filter(Boolean).length;
  let commits = 0;
  const commitOne = (commitEnv: Record<string, string>) => {
    editor.edit(1, ++commits);
    timed(["git", "commit", "-q", "-a", "-m", `edit ${commits}`], wc.repo, commitEnv);
  };
  const emptyScript = join(cli.bin, "empty.ts");
  writeFileSync(emptyScript, "");
  const rows = { perStart: [] as number[], cli: [] as number[], core: [] as number[], bun: [] as number[] };
  try {
    // Shorter than the default 700 ms only to keep the run short: waiting costs no CPU.
    gitOut(wc.repo, wc.env, ["config", "undo.settle", "200"]);
    cli.run(["init"], wc.repo); // the hooks, and a first recording of the whole tree
    useEnv(wc.env);
    const repo = await openRepo(wc.repo);
    const WARMUP = 1;
    const rounds = WARMUP + ROUNDS;
    for (let round = 0; round < rounds; round++) {
      progress(round, rounds, WARMUP);
      const keep = round >= WARMUP;
      const before = snapshots();
      const stopped = workerStops(trace).length;
      commitOne({ ...env, GIT_UNDO_WORKER_LINGER: "0" });
      await waitFor(() => idle(undoDir), "the worker to record and exit", 120_000);
      const cpu = workerStops(trace).slice(stopped);
      if (cpu.length !== 1 || snapshots() !== before + 1) throw new Error(`expected one worker and one snapshot, got ${cpu.length} workers and ${snapshots() - before} snapshots`);
      if (keep) rows.perStart.push(cpu[0]!);

      commitOne(quiet);
      let c0 = childCpuMs();
      if (!/^#\d+ /.test(cli.run(["snapshot"], wc.repo).stdout)) throw new Error("git undo snapshot after a commit made no snapshot");
      if (keep) rows.cli.push(childCpuMs() - c0);

      commitOne(quiet);
      useEnv(wc.env);
      c0 = cpuMs();
      if (!(await record(repo, { kind: "change" })).created) throw new Error("record() after a commit made no snapshot");
      if (keep) rows.core.push(cpuMs() - c0);

      c0 = childCpuMs();
      timed([process.execPath, emptyScript], wc.repo, env);
      if (keep) rows.bun.push(childCpuMs() - c0);
    }

    // One worker for a series of commits, each recorded before the next.
    const before = snapshots();
    const stopped = workerStops(trace).length;
    const lingerEnv = { ...env, GIT_UNDO_WORKER_LINGER: "600000" };
    for (let i = 0; i < ROUNDS; i++) {
      commitOne(lingerEnv);
      await waitFor(() => !hasMark(undoDir) && !hasTaken(undoDir), "the worker to record", 120_000);
    }
    process.kill(Number(readFileSync(join(undoDir, "worker.pid"), "utf8").trim()), "SIGTERM");
    await waitFor(() => idle(undoDir), "the worker to stop", 120_000);
    const lingering = workerStops(trace).slice(stopped);
    if (lingering.length !== 1 || snapshots() !== before + ROUNDS) {
      throw new Error(`expected one worker and ${ROUNDS} snapshots, got ${lingering.length} workers and ${snapshots() - before} snapshots`);
    }

    const target = WORKER_CPU_TARGET[size];
    const met = target === null ? null : median(rows.perStart) <= target;
    console.log(`\nworker CPU per recording, ${size}: ${describeFixture(wc)}; a commit of 1 edited file each; ${ROUNDS} runs after ${WARMUP} warm-up, medians; git ${gitVersion()}, bun ${Bun.version}`);
    console.log(`${load0} before, ${loadAverage()} after; CPU is user + system from /proc, in 10 ms ticks`);
    const line = (name: string, xs: number[], t: number | null = null, ok: boolean | null = null) => [
      name,
      median(xs).toFixed(0),
      Math.min(...xs).toFixed(0),
      t === null ? "" : `<= ${t} ms`,
      verdict(ok),
    ];
    printTable([
      ["case", "CPU ms", "least", "target", ""],
      line("worker started for one recording (start + recording)", rows.perStart, target, met),
      line(`worker recording ${ROUNDS} commits in a row (per recording)`, [lingering[0]! / ROUNDS]),
      line("git undo snapshot (git, launcher, Bun, its Git processes)", rows.cli),
      line("record() in-process (own + its Git processes)", rows.core),
      line("bun startup (empty script)", rows.bun),
    ]);
    return met !== false;
  } finally {
    const pidFile = join(undoDir, "worker.pid");
    // A worker left by a failure above: ours, stopped by its pid.
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, "utf8").trim());
      if (pid > 0) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          /* gone already */
        }
      }
    }
    cli.remove();
    wc.remove();
  }
}

let allMet = true;
if (!args.worker && !(await hooksBench())) allMet = false;
for (const size of parseSizes(args.size)) if (!(await workerCpu(size))) allMet = false;
process.exitCode = allMet ? 0 : 1;
