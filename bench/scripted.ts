// What automatic recording costs a script that runs Git without pauses: 20
// small repositories, 500 Git commands across them (commit, branch, checkout,
// tag, stash, update-ref), in interleaved rounds with no hooks, with `exit 0`
// hooks and with git-undo's hooks (and the guard, with --guard). The script
// has the shape of one (--shape sequential, the default): each repository's
// commands back to back, one repository after another. --shape round-robin
// runs each repository's next command after one in each of the others, a
// second or so apart, so that every command is a person's and is recorded:
// it reports the workers' CPU per recording, with no target. Commands closer than 250 ms may share a
// snapshot, so a script costs few recordings; what must hold is that each
// repository's end state is recorded.
//
// Per setup: the script's wall time and CPU (its Git processes and their
// hooks), the workers' CPU (their own and their Git processes', which each
// reports when it stops), workers started (and those that lost the claim to
// another), snapshots the script made (not the one `git undo init` records)
// and the workers' Git processes per snapshot, how long after the script
// the last recording ended, and whether every repository's end state was
// recorded. Once all is recorded the lingering workers are stopped (SIGTERM;
// they report their CPU) rather than waited for. Empty Bun, for scale.
//
// Targets: wall at most 1.15x the `exit 0` hooks'; the workers' CPU at most
// half the script's; every end state recorded. Exit 1 when one is missed.
//
// (Targets below: the sequential shape.)
//
//   bun bench/scripted.ts [--rounds N] [--repos N] [--steps N] [--shape sequential|round-robin] [--guard]
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { hasMark, hasTaken } from "../worker/protocol.ts";
import { idle, waitFor } from "../test/helpers/auto.ts";
import { makeRepo, tempDir, type TestRepo } from "../test/helpers/repo.ts";
import { BunFloor, childCpuMs, gitVersion, lineCount, loadAverage, median, progress, readWorkerTrace, stopWorker, workerCpuTotal } from "./common.ts";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    repos: { type: "string", default: "20" },
    steps: { type: "string", default: "25" },
    shape: { type: "string", default: "sequential" },
    guard: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("usage: bun bench/scripted.ts [--rounds N] [--repos N] [--steps N] [--shape sequential|round-robin] [--guard]   (defaults 5 rounds, 20 repositories, 25 commands each, sequential)");
  process.exit(0);
}
const ROUNDS = Number(args.rounds);
const REPOS = Number(args.repos);
const STEPS = Number(args.steps); // per repository
const SEQUENTIAL = args.shape === "sequential";
if (!SEQUENTIAL && args.shape !== "round-robin") throw new Error(`--shape: sequential or round-robin, not ${args.shape}`);
type Setup = "none" | "exit0" | "ours";
const SETUPS: Setup[] = ["none", "exit0", "ours"];
const WALL_TARGET = 1.15;
const CPU_TARGET = 0.5;

const scratch = tempDir("bench-scripted");
const hooksDir = (kind: string, body: string | null): string => {
  const dir = join(scratch, `hooks-${kind}`);
  mkdirSync(dir);
  if (body !== null) for (const h of ["reference-transaction", "post-index-change"]) writeFileSync(join(dir, h), body, { mode: 0o755 });
  return dir;
};
const emptyHooks = hooksDir("none", null);
const exit0Hooks = hooksDir("exit0", "#!/bin/sh\nexit 0\n");
const floor = new BunFloor(scratch);

function setUp(kind: Setup, trace: string, spawns: string): TestRepo[] {
  return Array.from({ length: REPOS }, () => {
    const r = makeRepo();
    // What a user runs: the suite's cross-check of the kept index and its no-linger switch are not.
    delete r.env.GIT_UNDO_VERIFY_KEPT;
    delete r.env.GIT_UNDO_WORKER_LINGER;
    r.commit("base", { "a.txt": "0\n", "b.txt": "0\n" });
    if (kind === "none") r.git(["config", "core.hooksPath", emptyHooks]);
    if (kind === "exit0") r.git(["config", "core.hooksPath", exit0Hooks]);
    if (kind === "ours") {
      r.git(["config", "undo.guard", String(args.guard)]); // said either way: unset, it is on where the tree can be watched
      const res = r.undo(["init"]);
      if (res.code !== 0) throw new Error(res.stderr);
    }
    // From here on: the workers the hooks start trace their starts, stops and Git processes.
    r.env.GIT_UNDO_WORKER_TRACE = trace;
    r.env.GIT_UNDO_TRACE_SPAWNS = spawns;
    return r;
  });
}

/** The k-th command of a repository's script: a cycle of eight that leaves each step valid. */
function step(r: TestRepo, k: number): string[] {
  switch (k % 8) {
    case 0:
      r.write("a.txt", `edit ${k}\n`);
      return ["commit", "-q", "-am", `edit ${k}`];
    case 1:
      return ["branch", `b${k}`];
    case 2:
      return ["tag", `t${k}`];
    case 3:
      return ["checkout", "-q", `b${k - 2}`];
    case 4:
      r.write("b.txt", `${k}\n`);
      return ["stash", "push", "-q"];
    case 5:
      return ["checkout", "-q", "main"];
    case 6:
      return ["stash", "pop", "-q"];
    default:
      return ["update-ref", `refs/heads/u${k}`, "HEAD"];
  }
}

interface Round {
  wallMs: number;
  cpuMs: number;
  workerCpuMs: number;
  workerStarts: number;
  lostStarts: number;
  snapshots: number;
  workerGitProcesses: number;
  lastRecordingMs: number;
  finalRecorded: number;
}

async function round(kind: Setup): Promise<Round> {
  const dir = tempDir("bench-scripted-trace");
  const trace = join(dir, "workers");
  const spawns = join(dir, "spawns");
  writeFileSync(trace, "");
  writeFileSync(spawns, "");
  const repos = setUp(kind, trace, spawns);
  const undoDirs = repos.map((r) => join(r.dir, ".git", "undo"));
  // `git undo init` records each repository once; the script's snapshots are those after it.
  const countSnapshots = (r: TestRepo) => r.g("for-each-ref", "--format=x", "refs/undo/snapshots/").split("\n").filter(Boolean).length;
  if (kind === "ours") await waitFor(() => undoDirs.every(idle), "workers `git undo init` may have left", 120_000);
  const initial = kind === "ours" ? repos.reduce((sum, r) => sum + countSnapshots(r), 0) : 0;
  const cpu0 = childCpuMs();
  const t0 = performance.now();
  const run = (r: TestRepo, k: number) => {
    const args = step(r, k);
    const p = Bun.spawnSync({ cmd: ["git", ...args], cwd: r.dir, env: r.env, stdout: "ignore", stderr: "pipe" });
    if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${p.stderr.toString()}`);
  };
  if (SEQUENTIAL) for (const r of repos) for (let k = 0; k < STEPS; k++) run(r, k);
  else for (let k = 0; k < STEPS; k++) for (const r of repos) run(r, k);
  const wallMs = performance.now() - t0;
  const cpuMs = childCpuMs() - cpu0;
  let lastRecordingMs = 0;
  if (kind === "ours") {
    await waitFor(() => undoDirs.every((d) => !hasMark(d) && !hasTaken(d)), "every repository to be recorded", 600_000);
    lastRecordingMs = performance.now() - t0 - wallMs;
    // Recorded: the lingering workers would only wait out their linger; stopped, they report their CPU.
    for (const d of undoDirs) stopWorker(trace, d);
    await waitFor(() => undoDirs.every(idle), "the workers to stop", 120_000);
  }
  const t = readWorkerTrace(trace);
  let snapshots = -initial;
  let finalRecorded = 0;
  const workerGitProcesses = lineCount(spawns);
  if (kind === "ours") {
    for (const r of repos) {
      snapshots += countSnapshots(r);
      // Not traced: this Git belongs to the check, not to the workers.
      if (r.undo(["snapshot"], { env: { GIT_UNDO_TRACE_SPAWNS: "" } }).stdout.startsWith("no change since")) finalRecorded++;
    }
  }
  return {
    wallMs,
    cpuMs,
    workerCpuMs: workerCpuTotal(t),
    workerStarts: t.started.length,
    lostStarts: t.pids.length - t.started.length,
    snapshots,
    workerGitProcesses,
    lastRecordingMs,
    finalRecorded,
  };
}

const load0 = loadAverage();
const results: Record<Setup, Round[]> = { none: [], exit0: [], ours: [] };
for (let i = 0; i < ROUNDS; i++) {
  progress(i, ROUNDS, 0);
  // Interleaved, each round in a rotated order, so drift in the machine's load touches every setup alike.
  const order = SETUPS.map((_, j) => SETUPS[(i + j) % SETUPS.length]!);
  for (const kind of order) results[kind].push(await round(kind));
  floor.run(scratch, process.env as Record<string, string>);
}

const m = (kind: Setup, key: keyof Round) => median(results[kind].map((r) => r[key]));
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(`bench/scripted (${SEQUENTIAL ? "sequential" : "round-robin"}${args.guard ? ", guard" : ""}): ${REPOS} repositories, ${REPOS * STEPS} Git commands, medians of ${ROUNDS} interleaved rounds; git ${gitVersion()}, bun ${Bun.version}`);
console.log(`${load0} before, ${loadAverage()} after; ${floor.describe()}\n`);
console.log("| setup | wall | × exit 0 | script CPU | worker CPU | workers started (lost the claim) | snapshots | worker Git processes per snapshot | last recording after | end state recorded |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const kind of SETUPS) {
  const ours = kind === "ours";
  const cells = ours
    ? [
        fmt(m(kind, "workerCpuMs")),
        `${m(kind, "workerStarts")} (${m(kind, "lostStarts")})`,
        String(m(kind, "snapshots")),
        (m(kind, "workerGitProcesses") / Math.max(1, m(kind, "snapshots"))).toFixed(1),
        fmt(m(kind, "lastRecordingMs")),
        `${m(kind, "finalRecorded")}/${REPOS}`,
      ]
    : ["–", "–", "–", "–", "–", "–"];
  const name = kind === "none" ? "no hooks" : kind === "exit0" ? "`exit 0` hooks" : "git-undo";
  console.log(`| ${name} | ${fmt(m(kind, "wallMs"))} | ${(m(kind, "wallMs") / m("exit0", "wallMs")).toFixed(2)}× | ${fmt(m(kind, "cpuMs"))} | ${cells.join(" | ")} |`);
}
const wallRatio = m("ours", "wallMs") / m("exit0", "wallMs");
const cpuRatio = m("ours", "workerCpuMs") / m("ours", "cpuMs");
const allRecorded = results.ours.every((r) => r.finalRecorded === REPOS);
const ok = (met: boolean) => (met ? "ok" : "MISSED");
if (!SEQUENTIAL) {
  console.log(`\nworker CPU per recording: ${(m("ours", "workerCpuMs") / Math.max(1, m("ours", "snapshots"))).toFixed(0)} ms (no target in this shape); every end state recorded: ${ok(allRecorded)}`);
  process.exit(allRecorded ? 0 : 1);
}
console.log(
  `\ntargets: wall ≤ ${WALL_TARGET}× exit 0: ${wallRatio.toFixed(2)}× ${ok(wallRatio <= WALL_TARGET)}; ` +
    `worker CPU ≤ ${CPU_TARGET}× the script's: ${cpuRatio.toFixed(2)}× ${ok(cpuRatio <= CPU_TARGET)}; every end state recorded: ${ok(allRecorded)}`,
);
process.exitCode = wallRatio <= WALL_TARGET && cpuRatio <= CPU_TARGET && allRecorded ? 0 : 1;
