// What automatic recording costs a script that runs Git without pauses: 20
// small repositories, 500 Git commands across them (commit, branch, checkout,
// tag, stash, update-ref; each repository's next command comes after one in
// each of the others), in interleaved rounds with no hooks, with `exit 0`
// hooks and with git-undo's hooks. Per setup: the script's wall time and CPU
// (its Git processes and their hooks), the workers' CPU (their own and their
// Git processes', which they report on exit), worker starts, snapshots the
// script made (not counting the one `git undo init` records),
// how long after the script the last recording ended and the last worker
// exited, and whether every repository's final state was recorded.
//
//   bun bench/scripted.ts [--rounds N]
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hasMark, hasTaken } from "../core/settle.ts";
import { idle } from "../test/helpers/auto.ts";
import { makeRepo, tempDir, type TestRepo } from "../test/helpers/repo.ts";
import { childCpuMs, median } from "./common.ts";

const roundsArg = process.argv.indexOf("--rounds");
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 5;
const REPOS = 20;
const STEPS = 25; // per repository: 500 commands in all
type Setup = "none" | "exit0" | "ours";
const SETUPS: Setup[] = ["none", "exit0", "ours"];

const hooksDir = (kind: string, body: string | null): string => {
  const dir = join(tempDir(`bench-scripted-${kind}`), "hooks");
  mkdirSync(dir);
  if (body !== null) for (const h of ["reference-transaction", "post-index-change"]) writeFileSync(join(dir, h), body, { mode: 0o755 });
  return dir;
};
const emptyHooks = hooksDir("none", null);
const exit0Hooks = hooksDir("exit0", "#!/bin/sh\nexit 0\n");

function setUp(kind: Setup, trace: string): TestRepo[] {
  return Array.from({ length: REPOS }, () => {
    const r = makeRepo();
    // What a user runs: the suite's cross-check of the kept index and its no-linger switch are not.
    delete r.env.GIT_UNDO_VERIFY_KEPT;
    delete r.env.GIT_UNDO_WORKER_LINGER;
    r.env.GIT_UNDO_WORKER_TRACE = trace;
    r.commit("base", { "a.txt": "0\n", "b.txt": "0\n" });
    if (kind === "none") r.git(["config", "core.hooksPath", emptyHooks]);
    if (kind === "exit0") r.git(["config", "core.hooksPath", exit0Hooks]);
    if (kind === "ours") {
      const res = r.undo(["init"]);
      if (res.code !== 0) throw new Error(res.stderr);
    }
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
  snapshots: number;
  lastRecordingMs: number;
  lastExitMs: number;
  finalRecorded: number;
}

async function round(kind: Setup): Promise<Round> {
  const trace = join(tempDir("bench-scripted-trace"), "workers");
  writeFileSync(trace, "");
  const repos = setUp(kind, trace);
  // `git undo init` records each repository once; the script's snapshots are those after it.
  const countSnapshots = (r: TestRepo) => r.g("for-each-ref", "--format=x", "refs/undo/snapshots/").split("\n").filter(Boolean).length;
  const initial = kind === "ours" ? repos.reduce((sum, r) => sum + countSnapshots(r), 0) : 0;
  const cpu0 = childCpuMs();
  const t0 = performance.now();
  for (let k = 0; k < STEPS; k++) {
    for (const r of repos) {
      const args = step(r, k);
      const p = Bun.spawnSync({ cmd: ["git", ...args], cwd: r.dir, env: r.env, stdout: "ignore", stderr: "pipe" });
      if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${p.stderr.toString()}`);
    }
  }
  const wallMs = performance.now() - t0;
  const cpuMs = childCpuMs() - cpu0;
  const undoDirs = repos.map((r) => join(r.dir, ".git", "undo"));
  let lastRecordingMs = 0;
  let lastExitMs = 0;
  if (kind === "ours") {
    const recorded = () => undoDirs.every((d) => !hasMark(d) && !hasTaken(d));
    while (!recorded()) await Bun.sleep(20);
    lastRecordingMs = performance.now() - t0 - wallMs;
    while (!undoDirs.every(idle)) await Bun.sleep(50);
    lastExitMs = performance.now() - t0 - wallMs;
  }
  const events = readFileSync(trace, "utf8").split("\n");
  const workerCpuMs = events.filter((e) => e.startsWith("stop ")).reduce((sum, e) => sum + Number(e.split(" ")[2] || 0), 0);
  const workerStarts = events.filter((e) => /^(start|lost) /.test(e)).length;
  let snapshots = -initial;
  let finalRecorded = 0;
  if (kind === "ours") {
    for (const r of repos) {
      snapshots += countSnapshots(r);
      if (r.undo(["snapshot"]).stdout.startsWith("no change since")) finalRecorded++;
    }
  }
  return { wallMs, cpuMs, workerCpuMs, workerStarts, snapshots, lastRecordingMs, lastExitMs, finalRecorded };
}

const results: Record<Setup, Round[]> = { none: [], exit0: [], ours: [] };
for (let i = 0; i < ROUNDS; i++) {
  // Interleaved, each round in a rotated order, so drift in the machine's load touches every setup alike.
  const order = SETUPS.map((_, j) => SETUPS[(i + j) % SETUPS.length]!);
  for (const kind of order) results[kind].push(await round(kind));
}

const m = (kind: Setup, key: keyof Round) => median(results[kind].map((r) => r[key]));
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(`bench/scripted: ${REPOS} repositories, ${REPOS * STEPS} Git commands, medians of ${ROUNDS} interleaved rounds\n`);
console.log("| setup | wall | × exit 0 | script CPU | worker CPU | worker starts | snapshots | last recording after | last worker exit after | final state recorded |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const kind of SETUPS) {
  const ours = kind === "ours";
  console.log(
    `| ${kind === "none" ? "no hooks" : kind === "exit0" ? "`exit 0` hooks" : "git-undo"} | ${fmt(m(kind, "wallMs"))} | ${(m(kind, "wallMs") / m("exit0", "wallMs")).toFixed(2)}× | ${fmt(m(kind, "cpuMs"))} | ${ours ? fmt(m(kind, "workerCpuMs")) : "–"} | ${ours ? m(kind, "workerStarts") : "–"} | ${ours ? m(kind, "snapshots") : "–"} | ${ours ? fmt(m(kind, "lastRecordingMs")) : "–"} | ${ours ? fmt(m(kind, "lastExitMs")) : "–"} | ${ours ? `${m(kind, "finalRecorded")}/${REPOS}` : "–"} |`,
  );
}
const wallRatio = m("ours", "wallMs") / m("exit0", "wallMs");
const cpuRatio = m("ours", "workerCpuMs") / m("ours", "cpuMs");
console.log(`\ntargets: wall ≤ 1.15× exit 0: ${wallRatio.toFixed(2)}× ${wallRatio <= 1.15 ? "met" : "MISSED"}; worker CPU ≤ half the script's: ${cpuRatio.toFixed(2)} ${cpuRatio <= 0.5 ? "met" : "MISSED"}; every final state recorded: ${results.ours.every((r) => r.finalRecorded === REPOS) ? "met" : "MISSED"}`);
