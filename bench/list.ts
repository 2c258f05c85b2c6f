#!/usr/bin/env bun
// bench/list: reading the history. On a copy of each fixture with 500
// snapshots (bench/snapshots.ts: one real recording fanned out with Git
// plumbing into valid snapshot commits), in the same run, rounds
// interleaved: `git undo list` of all of them against `git for-each-ref
// refs/undo/` of them (target, medium: at most 3x), `git for-each-ref` with
// the fields list reads (for scale), and `git undo list -n 20` less the
// empty Bun's start against `git for-each-ref --count=20` with subjects
// (target, medium: at most 3x). Git processes are counted for each git-undo command.
//
// --history: what a long history costs the commands that should not depend
// on it. Two copies of the medium fixture, with 100 and 5,000 snapshots
// (`undo.limit` 10000); per round, in both, alternating which goes first: a
// recording after one edit, in-process (`record()`, as the worker runs it)
// and end to end (`git undo snapshot`), and `git undo list -n 20`. Targets:
// the recording in-process and `list -n 20` at 5,000 at most 1.2x the same at 100.
//
// The snapshot refs are loose files, as recordings leave them; --pack-refs
// packs them first (`git pack-refs --all`, as `git gc` would).
//
//   bun bench/list.ts [--size medium|large|both] [--snapshots N] [--runs N] [--warmup N] [--pack-refs]
//   bun bench/list.ts --history [--size medium|large|both] [--runs N] [--warmup N] [--pack-refs]
import { parseArgs } from "node:util";
import { spawnCount } from "../core/git.ts";
import { record } from "../core/record.ts";
import { openRepo, type Repo } from "../core/repo.ts";
import {
  BunFloor,
  Case,
  Cli,
  commandNames,
  Editor,
  gitOut,
  gitVersion,
  loadAverage,
  printCases,
  printTable,
  progress,
  timed,
  verdict,
  type CliRun,
} from "./common.ts";
import { describeFixture, parseSizes, workingCopy, type FixtureSize, type WorkingCopy } from "./fixture.ts";
import { buildHistory } from "./snapshots.ts";

const { values: args } = parseArgs({
  options: {
    size: { type: "string" },
    snapshots: { type: "string", default: "500" },
    history: { type: "boolean", default: false },
    "pack-refs": { type: "boolean", default: false },
    runs: { type: "string", default: "7" },
    warmup: { type: "string", default: "1" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log(
    "usage: bun bench/list.ts [--size medium|large|both] [--snapshots N] [--runs N] [--warmup N] [--pack-refs]\n" +
      "   or: bun bench/list.ts --history [--size medium|large|both] [--runs N] [--warmup N] [--pack-refs]",
  );
  process.exit(0);
}
const RUNS = Number(args.runs);
const WARMUP = Number(args.warmup);
const SNAPSHOTS = Number(args.snapshots);
/** The history sizes --history compares. */
const SHORT = 100;
const LONG = 5_000;
/**
 * Medium: `git undo list` of all the snapshots at most 3x `git for-each-ref`
 * of them; `git undo list -n 20`, less the empty Bun's start, at most 3x
 * `git for-each-ref --count=20` of them with their subjects.
 */
const LIST_TARGET: Record<FixtureSize, { all: number; top: number } | null> = { medium: { all: 3, top: 3 }, large: null };
/** At 5,000 snapshots against 100. */
const HISTORY_TARGET = 1.2;
const thousands = (n: number) => n.toLocaleString("en-US");
const REFS = args["pack-refs"] ? "packed refs" : "loose refs";

/** A copy with a history of `n` snapshots, its refs packed when asked; returns the seconds it took. */
function withHistory(wc: WorkingCopy, cli: Cli, n: number): number {
  const seconds = buildHistory(wc, cli, n);
  if (!args["pack-refs"]) return seconds;
  const t = performance.now();
  gitOut(wc.repo, wc.env, ["pack-refs", "--all"]);
  return seconds + (performance.now() - t) / 1000;
}

/** `git undo list` printed `expected` snapshots, none of them unreadable. */
function checkList(r: CliRun, expected: number, what: string): void {
  const rows = r.stdout.split("\n").filter((l) => /^[* ] #\d+ /.test(l));
  if (rows.length !== expected) throw new Error(`${what} showed ${rows.length} snapshots, expected ${expected}`);
  if (rows.some((l) => / unreadable /.test(l))) throw new Error(`${what} showed unreadable snapshots:\n${rows.filter((l) => / unreadable /.test(l)).join("\n")}`);
}

/** Returns whether every target was met. */
async function listBench(size: FixtureSize): Promise<boolean> {
  const load0 = loadAverage();
  const wc = await workingCopy({ size, label: `list-${size}` });
  const cli = new Cli(wc.env);
  try {
    const buildS = withHistory(wc, cli, SNAPSHOTS);
    const target = LIST_TARGET[size];
    const forEachRef = new Case("git for-each-ref refs/undo/", WARMUP);
    const withMessages = new Case("git for-each-ref refs/undo/ with tree, date, message", WARMUP);
    const listAll = new Case(`git undo list (all ${thousands(SNAPSHOTS)})`, WARMUP, target === null ? null : { ratio: target.all });
    const topRefs = new Case("git for-each-ref --count=20 with subjects", WARMUP);
    const listTop = new Case("git undo list -n 20", WARMUP, target === null ? null : { ratio: target.top, aboveFloor: true, against: topRefs });
    const floor = new BunFloor(cli.bin);
    const bunStart = new Case("bun startup (empty script)", WARMUP);
    const cliCase = (c: Case, cmd: string[], expected: number) => (round: number) => {
      const r = cli.run(cmd, wc.repo);
      checkList(r, expected, `git undo ${cmd.join(" ")}`);
      c.commands = r.commands;
      c.add(round, { ms: r.ms, spawns: r.commands.length });
    };
    const gitCase = (c: Case, cmd: string[]) => (round: number) => c.add(round, { ms: timed(["git", ...cmd], wc.repo, wc.env).ms, spawns: 1 });
    const steps = [
      gitCase(forEachRef, ["for-each-ref", "refs/undo/"]),
      gitCase(withMessages, ["for-each-ref", "--format=%(refname)%00%(tree)%00%(committerdate:unix)%00%(contents)", "refs/undo/"]),
      gitCase(topRefs, ["for-each-ref", "--count=20", "--format=%(refname) %(objectname) %(subject)", "refs/undo/snapshots/"]),
      cliCase(listAll, ["list"], SNAPSHOTS),
      cliCase(listTop, ["list", "-n", "20"], 20),
      (round: number) => bunStart.add(round, { ms: floor.run(wc.repo, cli.env).ms, spawns: null }),
    ];
    const rounds = WARMUP + RUNS;
    for (let round = 0; round < rounds; round++) {
      progress(round, rounds, WARMUP);
      // A different case first each round, so none always runs on the warmest cache.
      for (let i = 0; i < steps.length; i++) steps[(i + round) % steps.length]!(round);
    }
    console.log(
      `bench/list, ${size}: ${describeFixture(wc)}, ${thousands(SNAPSHOTS)} snapshots, ${REFS} (built in ${buildS.toFixed(1)} s); ` +
        `${RUNS} runs after ${WARMUP} warm-up, medians; git ${gitVersion()}, bun ${Bun.version}`,
    );
    console.log(`${load0} before, ${loadAverage()} after`);
    const missed = printCases([forEachRef, withMessages, topRefs, listAll, listTop, bunStart], forEachRef, "for-each-ref", bunStart);
    for (const c of [listAll, listTop]) console.log(`${c.name}: ${commandNames(c.commands)}`);
    return missed === 0;
  } finally {
    cli.remove();
    wc.remove();
  }
}

/** One history: a copy with `count` snapshots, its repository open in-process, and its cases. */
interface History {
  count: number;
  wc: WorkingCopy;
  cli: Cli;
  repo: Repo;
  editor: Editor;
  buildS: number;
  cases: { core: Case; cli: Case; listTop: Case };
}

async function openHistory(size: FixtureSize, count: number): Promise<History> {
  const wc = await workingCopy({ size, label: `history-${count}` });
  const cli = new Cli(wc.env);
  // Beyond the default 1,000 the first recording would delete most of them.
  gitOut(wc.repo, wc.env, ["config", "undo.limit", "10000"]);
  const buildS = withHistory(wc, cli, count);
  const repo = await openRepo({ cwd: wc.repo, env: wc.env });
  return {
    count,
    wc,
    cli,
    repo,
    editor: new Editor(wc),
    buildS,
    cases: {
      core: new Case("record(), 1 edit", WARMUP),
      cli: new Case("git undo snapshot, 1 edit", WARMUP),
      listTop: new Case("git undo list -n 20", WARMUP),
    },
  };
}

/** A round in one history: each case once, the edits reverted and recorded so the next round starts clean. */
async function historyRound(h: History, round: number): Promise<void> {
  h.editor.edit(1, round);
  const before = spawnCount();
  const t = performance.now();
  const out = await record(h.repo, { kind: "manual" });
  h.cases.core.add(round, { ms: performance.now() - t, spawns: spawnCount() - before });
  if (!out.created) throw new Error("record() after an edit made no snapshot");
  h.editor.revert();
  await record(h.repo, { kind: "manual" });

  h.editor.edit(1, round);
  const r = h.cli.run(["snapshot"], h.wc.repo);
  if (!/^#\d+ /.test(r.stdout)) throw new Error(`git undo snapshot after an edit: ${r.stdout}`);
  h.cases.cli.add(round, { ms: r.ms, spawns: r.commands.length });
  h.editor.revert();
  await record(h.repo, { kind: "manual" });

  const l = h.cli.run(["list", "-n", "20"], h.wc.repo);
  checkList(l, 20, "git undo list -n 20");
  h.cases.listTop.add(round, { ms: l.ms, spawns: l.commands.length });
}

/** Returns whether every target was met. */
async function historyBench(size: FixtureSize): Promise<boolean> {
  const load0 = loadAverage();
  const short = await openHistory(size, SHORT);
  const floor = new BunFloor(short.cli.bin);
  let long: History | null = null;
  try {
    long = await openHistory(size, LONG);
    const rounds = WARMUP + RUNS;
    for (let round = 0; round < rounds; round++) {
      progress(round, rounds, WARMUP);
      for (const h of round % 2 ? [long, short] : [short, long]) await historyRound(h, round);
      floor.run(short.wc.repo, short.cli.env, round >= WARMUP);
    }
    console.log(
      `bench/list --history, ${size}: ${describeFixture(short.wc)}; ${thousands(SHORT)} snapshots (built in ${short.buildS.toFixed(1)} s) ` +
        `and ${thousands(LONG)} (built in ${long.buildS.toFixed(1)} s), ${REFS}; ${RUNS} runs after ${WARMUP} warm-up, medians; git ${gitVersion()}, bun ${Bun.version}`,
    );
    console.log(`${load0} before, ${loadAverage()} after; ${floor.describe()}`);
    let missed = 0;
    const rows = [["case", `${thousands(SHORT)} snapshots ms`, `${thousands(LONG)} ms`, `x ${thousands(SHORT)}`, "target", "git processes", ""]];
    for (const key of ["core", "cli", "listTop"] as const) {
      const [a, b] = [short.cases[key], long.cases[key]];
      const ratio = b.median() / a.median();
      const targeted = key !== "cli";
      const met = targeted ? ratio <= HISTORY_TARGET : null;
      if (met === false) missed++;
      rows.push([a.name, a.median().toFixed(0), b.median().toFixed(0), ratio.toFixed(2), targeted ? `<= ${HISTORY_TARGET}x` : "", `${a.spawns()} / ${b.spawns()}`, verdict(met)]);
    }
    printTable(rows);
    return missed === 0;
  } finally {
    for (const h of [short, long]) {
      h?.cli.remove();
      h?.wc.remove();
    }
  }
}

let allMet = true;
for (const [i, size] of parseSizes(args.size, args.history ? "medium" : "both").entries()) {
  if (i > 0) console.log("");
  if (!(await (args.history ? historyBench(size) : listBench(size)))) allMet = false;
}
process.exitCode = allMet ? 0 : 1;
