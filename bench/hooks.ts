// What git-undo's hooks cost Git, against the same commands with an `exit 0`
// hook and with no hook at all, measured in one run: update-ref, commit, a
// 40-commit rebase, and a fetch bringing 100 new tags. Then the background
// work a 40-commit rebase triggers, counted in recordings and Git processes.
//
//   bun bench/hooks.ts [--rounds N]
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { idle, SETTLE_MS } from "../test/helpers/auto.ts";
import { makeRepo, tempDir, TestRepo } from "../test/helpers/repo.ts";

const roundsArg = process.argv.indexOf("--rounds");
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 5;
type Setup = "none" | "exit0" | "ours";
const SETUPS: Setup[] = ["none", "exit0", "ours"];
const QUIET = { GIT_UNDO_INTERNAL: "1" };

const emptyHooks = join(tempDir("bench-hooks"), "empty");
mkdirSync(emptyHooks);
const exit0Hooks = join(tempDir("bench-hooks"), "exit0");
mkdirSync(exit0Hooks);
for (const h of ["reference-transaction", "post-index-change"]) writeFileSync(join(exit0Hooks, h), "#!/bin/sh\nexit 0\n", { mode: 0o755 });

function setUp(kind: Setup, upstream: TestRepo): TestRepo {
  const dir = join(tempDir(`bench-${kind}`), "repo");
  upstream.git(["clone", "-q", "--no-tags", upstream.dir, dir]);
  const r = new TestRepo(dir, upstream.home);
  // The test suite's cross-check of the kept index is not what a user runs.
  delete r.env.GIT_UNDO_VERIFY_KEPT;
  r.git(["config", "user.name", "Bench"]);
  r.git(["config", "user.email", "bench@example.com"]);
  if (kind === "none") r.git(["config", "core.hooksPath", emptyHooks]);
  if (kind === "exit0") r.git(["config", "core.hooksPath", exit0Hooks]);
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
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const upstream = makeRepo();
upstream.commit("one", { "a.txt": "1\n" });
upstream.commit("two", { "a.txt": "2\n" });
for (let i = 0; i < 100; i++) upstream.git(["tag", `v${i}`]);
const repos = Object.fromEntries(SETUPS.map((k) => [k, setUp(k, upstream)])) as Record<Setup, TestRepo>;

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
console.log("| command | no hook | exit 0 hook | git-undo hooks | vs exit 0 | vs no hook |");
console.log("|---|---|---|---|---|---|");
for (const [name, by] of Object.entries(results)) {
  const [none, exit0, ours] = [median(by.none), median(by.exit0), median(by.ours)];
  console.log(`| ${name} | ${ms(none)} | ${ms(exit0)} | ${ms(ours)} | ${(ours / exit0).toFixed(2)}x | ${(ours / none).toFixed(2)}x |`);
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
