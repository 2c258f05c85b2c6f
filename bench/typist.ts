// A person typing Git commands: 30 commands on a copy of the medium fixture,
// 0.3 to 1.5 s apart (seeded random pauses), a mix of what people type (an
// edit then `git add`, commit, commit -a, checkout -b, switch, reset --hard,
// stash push and pop, branch, tag), with git-undo's hooks on and the worker
// lingering between commands as it does for a user. Once with each process
// backend (/proc, and `ps` as on macOS and the BSDs).
//
// Every command must be recorded on its own (commands 250 ms or more apart
// never share a snapshot): the number of new snapshots must equal the number
// of commands, and the n-th new snapshot must hold the state captured right
// after the n-th command (HEAD, the refs and the index's tree, read with
// GIT_UNDO_INTERNAL=1 so the hooks ignore those reads; the index's tree is
// written from a copy of the index taken then, so the real one is never
// written). A command whose state no snapshot holds is listed, with the
// fields that differ in the snapshot in its place. Exit 1 when a command was
// not recorded, or (medium) the worker's CPU per recording is above 60 ms.
//
// It reports the worker's CPU per recording (its own and its Git processes',
// from /proc after a warm-up recording and at its stop, which it also reports
// through GIT_UNDO_WORKER_TRACE), its Git processes per recording
// (GIT_UNDO_TRACE_SPAWNS), and the empty-Bun floor measured in the same run.
//
// --guard turns the guard on (undo.guard=true before init): a command waits
// for the previous one's recording when it ended 250 ms or more before.
// --load N runs N busy loops, N/2 loops writing and syncing 64 MB files and
// N/2 loops of `git status` on another copy beside the typist, all at the
// typist's priority, so that the worker (nice 5) falls behind.
//
//   bun bench/typist.ts [--commands N] [--seed N] [--backend proc|ps|both] [--size medium|large] [--guard] [--load N]
import { appendFileSync, copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { rng as seeded } from "../test/helpers/rng.ts";
import { hasMark, hasTaken } from "../worker/protocol.ts";
import { idle, waitFor } from "../test/helpers/auto.ts";
import {
  BunFloor,
  Cli,
  gitOut,
  gitVersion,
  lineCount,
  loadAverage,
  median,
  printTable,
  processCpuMs,
  readWorkerTrace,
  stopWorker,
  timed,
  verdict,
} from "./common.ts";
import { describeFixture, parseSizes, workingCopy, type FixtureSize, type WorkingCopy } from "./fixture.ts";

const { values: args } = parseArgs({
  options: {
    commands: { type: "string", default: "30" },
    seed: { type: "string", default: "1" },
    backend: { type: "string", default: "both" },
    size: { type: "string", default: "medium" },
    guard: { type: "boolean", default: false },
    load: { type: "string", default: "0" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("usage: bun bench/typist.ts [--commands N] [--seed N] [--backend proc|ps|both] [--size medium|large] [--guard] [--load N]   (defaults 30, 1, both, medium, no guard, no load)");
  process.exit(0);
}
const COMMANDS = Number(args.commands);
const SEED = Number(args.seed);
type Backend = "proc" | "ps";
const BACKENDS: Backend[] = args.backend === "both" ? ["proc", "ps"] : [args.backend as Backend];
if (!BACKENDS.every((b) => b === "proc" || b === "ps")) throw new Error(`--backend: proc, ps or both, not ${args.backend}`);
const SIZES_RUN = parseSizes(args.size, "medium");
/** The pauses between one command's end and the next one's start. */
const PAUSE_MIN_MS = 300;
const PAUSE_MAX_MS = 1500;

/** What the typist knows of the repository, so that every command it picks is valid and changes the state. */
interface Model {
  branch: string;
  branches: string[];
  /** Commits made here on each branch: reset --hard HEAD~1 takes back only those (the fixture's own history stays). */
  ours: Map<string, number>;
  staged: boolean;
  /** Edits not staged (after a stash pop). */
  dirty: boolean;
  stash: number;
}

interface Step {
  kind: string;
  args: string[];
}

/**
 * The commands a person types, with their weights. Each edit appends a line to
 * tracked files no other edit touches, so stash pop and switch never conflict.
 */
function typist(wc: WorkingCopy, rng: () => number) {
  const model: Model = { branch: "main", branches: ["main"], ours: new Map([["main", 0]]), staged: false, dirty: false, stash: 0 };
  let nextFile = 0;
  const edit = (n: number, i: number): string[] => {
    const files = Array.from({ length: n }, () => wc.tracked[(nextFile++ * 7919) % wc.tracked.length]!);
    for (const f of files) appendFileSync(join(wc.repo, f), `// typed edit ${i}\n`);
    return files;
  };
  const ourCommits = () => model.ours.get(model.branch) ?? 0;
  const committed = () => model.ours.set(model.branch, ourCommits() + 1);
  const actions: { kind: string; weight: number; valid: () => boolean; step: (i: number) => string[] }[] = [
    {
      kind: "edit + add",
      weight: 3,
      valid: () => true,
      step: (i) => {
        const files = edit(1 + Math.floor(rng() * 3), i);
        model.staged = true;
        return ["add", ...files];
      },
    },
    {
      kind: "commit",
      weight: 3,
      valid: () => model.staged,
      step: (i) => {
        model.staged = false;
        committed();
        return ["commit", "-q", "-m", `typed commit ${i}`];
      },
    },
    {
      kind: "edit + commit -a",
      weight: 1,
      valid: () => true,
      step: (i) => {
        edit(1, i);
        model.staged = model.dirty = false;
        committed();
        return ["commit", "-q", "-a", "-m", `typed commit -a ${i}`];
      },
    },
    {
      kind: "checkout -b",
      weight: 1,
      valid: () => true,
      step: (i) => {
        const name = `topic-${i}`;
        model.ours.set(name, ourCommits());
        model.branches.push(name);
        model.branch = name;
        return ["checkout", "-q", "-b", name];
      },
    },
    {
      kind: "switch",
      weight: 1,
      valid: () => model.branches.length > 1 && !model.staged && !model.dirty,
      step: () => {
        const others = model.branches.filter((b) => b !== model.branch);
        model.branch = others[Math.floor(rng() * others.length)]!;
        return ["switch", "-q", model.branch];
      },
    },
    {
      kind: "reset --hard",
      weight: 1,
      valid: () => model.staged || model.dirty || ourCommits() > 0,
      step: () => {
        if (model.staged || model.dirty) {
          model.staged = model.dirty = false;
          return ["reset", "-q", "--hard"];
        }
        model.ours.set(model.branch, ourCommits() - 1);
        return ["reset", "-q", "--hard", "HEAD~1"];
      },
    },
    {
      kind: "stash push",
      weight: 1,
      valid: () => model.staged || model.dirty,
      step: () => {
        model.staged = model.dirty = false;
        model.stash++;
        return ["stash", "push", "-q"];
      },
    },
    {
      kind: "stash pop",
      weight: 2,
      valid: () => model.stash > 0 && !model.staged && !model.dirty,
      step: () => {
        model.stash--;
        model.dirty = true;
        return ["stash", "pop", "-q"];
      },
    },
    {
      kind: "branch",
      weight: 1,
      valid: () => true,
      step: (i) => {
        const name = `b-${i}`;
        model.ours.set(name, ourCommits());
        model.branches.push(name);
        return ["branch", name];
      },
    },
    {
      kind: "tag",
      weight: 1,
      valid: () => true,
      step: (i) => (rng() < 0.5 ? ["tag", `v-typed-${i}`] : ["tag", "-a", "-m", `typed tag ${i}`, `v-typed-${i}`]),
    },
  ];
  /** The next command: its edits made (as a person saves, then types), its arguments returned. */
  return (i: number): Step => {
    const valid = actions.filter((a) => a.valid());
    let pick = rng() * valid.reduce((s, a) => s + a.weight, 0);
    const action = valid.find((a) => (pick -= a.weight) < 0) ?? valid.at(-1)!;
    return { kind: action.kind, args: action.step(i) };
  };
}

/** What a snapshot records of the state, as compared here: HEAD, the refs, the index's tree. */
interface State {
  head: string;
  /** `<refname>\t<object>` per ref outside refs/undo/, sorted. */
  refs: string;
  index: string;
}

const FIELDS: (keyof State)[] = ["head", "refs", "index"];

/**
 * The state right after a command, out of the hooks' sight
 * (GIT_UNDO_INTERNAL=1), kept light so that it hardly competes with the
 * worker reading the same state: HEAD and the refs (two small Git
 * processes), and a copy of the index file, written as a tree only once the
 * run is over (indexTrees). The working tree is not compared: reading it
 * (`git add -A` on a copy of the index over 5,000 files) right after every
 * command would load the machine as no typist does.
 */
function capture(wc: WorkingCopy, env: Record<string, string>, indexCopy: string): Omit<State, "index"> {
  const quiet = { ...env, GIT_UNDO_INTERNAL: "1" };
  const [commit, symbolic] = gitOut(wc.repo, quiet, ["rev-parse", "HEAD", "--symbolic-full-name", "HEAD"]).split("\n");
  const refs = gitOut(wc.repo, quiet, ["for-each-ref", "--format=%(refname)%09%(objectname)"])
    .split("\n")
    .filter((l) => l && !l.startsWith("refs/undo/"))
    .sort()
    .join("\n");
  copyFileSync(join(wc.repo, ".git", "index"), indexCopy);
  return { head: symbolic && symbolic !== "HEAD" ? `ref: ${symbolic}` : commit!, refs };
}

/** The trees of the copies of the index taken after each command, as a recording writes them (`git write-tree` on a copy). */
const indexTree = (wc: WorkingCopy, indexCopy: string): string => gitOut(wc.repo, { ...wc.env, GIT_UNDO_INTERNAL: "1", GIT_INDEX_FILE: indexCopy }, ["write-tree"]);

/** The snapshot commits under refs/undo/snapshots/, oldest first. */
const snapshotCommits = (wc: WorkingCopy): string[] =>
  gitOut(wc.repo, wc.env, ["for-each-ref", "--format=%(objectname)", "refs/undo/snapshots/"]).split("\n").filter(Boolean);

/** The states the snapshots hold: their HEAD and refs blobs, their index tree. */
function snapshotStates(wc: WorkingCopy, commits: readonly string[]): State[] {
  if (commits.length === 0) return [];
  const blobs = timed(["git", "cat-file", "--batch"], wc.repo, wc.env, [0], commits.flatMap((c) => [`${c}:HEAD`, `${c}:refs`]).join("\n") + "\n").stdout;
  const texts: string[] = [];
  let at = 0;
  const buf = Buffer.from(blobs, "utf8");
  while (at < buf.length) {
    const eol = buf.indexOf(10, at);
    const header = buf.subarray(at, eol).toString();
    const size = Number(header.split(" ")[2]);
    if (!/ blob \d+$/.test(header)) throw new Error(`a snapshot lacks its HEAD or refs: ${header}`);
    texts.push(buf.subarray(eol + 1, eol + 1 + size).toString());
    at = eol + 1 + size + 1;
  }
  const trees = gitOut(wc.repo, wc.env, ["rev-parse", ...commits.map((c) => `${c}:index`)]).split("\n");
  return commits.map((_, i) => ({
    head: texts[2 * i]!.trim(),
    refs: texts[2 * i + 1]!
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t").slice(0, 2).join("\t"))
      .sort()
      .join("\n"),
    index: trees[i]!,
  }));
}

const differences = (a: State, b: State): (keyof State)[] => FIELDS.filter((f) => a[f] !== b[f]);

interface Result {
  backend: Backend;
  size: FixtureSize;
  commands: number;
  snapshots: number;
  /** Commands whose state the snapshot at their place holds. */
  matched: number;
  problems: string[];
  kinds: Map<string, number>;
  gapsMs: number[];
  cpuPerRecording: number;
  gitPerRecording: number;
  workersStarted: number;
  workersLost: number;
  lastRecordingMs: number;
  floor: BunFloor;
}

/** The --load processes; stop() ends them. */
function startLoad(n: number, wc: WorkingCopy): { stop: () => void } {
  if (n <= 0) return { stop: () => {} };
  const procs: ReturnType<typeof Bun.spawn>[] = [];
  const scratch = join(wc.home, "load");
  for (let i = 0; i < n; i++) procs.push(Bun.spawn(["sh", "-c", "while :; do :; done"], { stdout: "ignore", stderr: "ignore" }));
  for (let i = 0; i < Math.max(1, n / 2); i++) {
    procs.push(Bun.spawn(["sh", "-c", `mkdir -p '${scratch}'; while :; do dd if=/dev/zero of='${scratch}/f${i}' bs=1M count=64 conv=fsync 2>/dev/null; done`], { stdout: "ignore", stderr: "ignore" }));
    procs.push(Bun.spawn(["sh", "-c", `cp -a '${wc.repo}' '${scratch}/copy${i}' && cd '${scratch}/copy${i}' && while :; do GIT_UNDO_INTERNAL=1 git status >/dev/null 2>&1; done`], { stdout: "ignore", stderr: "ignore", env: wc.env }));
  }
  return {
    stop: () => {
      for (const p of procs) p.kill("SIGKILL");
    },
  };
}

async function run(size: FixtureSize, backend: Backend): Promise<Result> {
  const load0 = loadAverage();
  const wc = await workingCopy({ size, label: `typist-${backend}` });
  const cli = new Cli(wc.env);
  const trace = join(cli.bin, "workers.txt");
  const spawns = join(cli.bin, "worker-spawns.txt");
  writeFileSync(trace, "");
  writeFileSync(spawns, "");
  const undoDir = join(wc.repo, ".git", "undo");
  // The worker's linger is left at its default (30 s): pauses of 1.5 s at most keep it alive.
  const env: Record<string, string> = { ...cli.env, GIT_UNDO_PROCESS_TABLE: backend, GIT_UNDO_WORKER_TRACE: trace, GIT_UNDO_TRACE_SPAWNS: spawns };
  // The worker's settling decisions, for a run being diagnosed (worker/main.ts).
  if (process.env.GIT_UNDO_DEBUG_SETTLE) env.GIT_UNDO_DEBUG_SETTLE = `${process.env.GIT_UNDO_DEBUG_SETTLE}.${backend}`;
  const floor = new BunFloor(cli.bin);
  const recorded = () => !hasMark(undoDir) && !hasTaken(undoDir);
  const load = startLoad(Number(args.load), wc);
  try {
    gitOut(wc.repo, wc.env, ["config", "undo.guard", String(args.guard)]); // said either way: unset, it is on where the tree can be watched
    cli.run(["init"], wc.repo);
    await waitFor(() => idle(undoDir) || (args.guard === true && recorded()), "the worker `git undo init` may have left", 120_000);
    // A worker started and lingering, as after the person's first command.
    const warmCount = snapshotCommits(wc).length;
    timed(["git", "update-ref", "refs/bench/warm", "HEAD"], wc.repo, env);
    await waitFor(() => recorded() && snapshotCommits(wc).length > warmCount, "the warm-up recording", 120_000);
    const warmWorker = readWorkerTrace(trace).started.at(-1);
    if (warmWorker === undefined) throw new Error("no worker started for the warm-up command");
    const warmCpu = processCpuMs(warmWorker);
    if (warmCpu === null) throw new Error("the worker left after the warm-up (is GIT_UNDO_WORKER_LINGER set?)");
    const warmSpawns = lineCount(spawns);
    const before = snapshotCommits(wc);

    const rng = seeded(SEED);
    const next = typist(wc, rng);
    const steps: Step[] = [];
    const captured: (Omit<State, "index"> & { indexCopy: string })[] = [];
    const gapsMs: number[] = [];
    let lastEnd = 0;
    for (let i = 0; i < COMMANDS; i++) {
      const step = next(i);
      const start = performance.now();
      if (i > 0) gapsMs.push(start - lastEnd);
      timed(["git", ...step.args], wc.repo, env);
      lastEnd = performance.now();
      steps.push(step);
      const indexCopy = join(cli.bin, `index.after-${i + 1}`);
      captured.push({ ...capture(wc, env, indexCopy), indexCopy });
      process.stderr.write(`\r${backend}: command ${i + 1}/${COMMANDS}   `);
      if (i + 1 < COMMANDS) {
        const pause = PAUSE_MIN_MS + rng() * (PAUSE_MAX_MS - PAUSE_MIN_MS);
        await Bun.sleep(Math.max(0, pause - (performance.now() - lastEnd)));
      }
    }
    process.stderr.write("\n");
    await waitFor(recorded, "the last command's recording", 120_000);
    const lastRecordingMs = performance.now() - lastEnd;
    const gitPerRecording = (lineCount(spawns) - warmSpawns) / COMMANDS;
    // CPU since the warm-up: the warm worker's at its stop less what it had used then, plus any worker started after it.
    stopWorker(trace, undoDir);
    await waitFor(() => idle(undoDir), "the worker to stop", 120_000);
    const t = readWorkerTrace(trace);
    const after = t.started.slice(t.started.indexOf(warmWorker));
    const cpu = after.reduce((sum, p) => sum + (t.cpuByPid.get(p) ?? 0), 0) - warmCpu;
    for (let i = 0; i < 5; i++) floor.run(wc.repo, env);

    const states: State[] = captured.map(({ indexCopy, ...rest }) => ({ ...rest, index: indexTree(wc, indexCopy) }));
    // The new snapshots, matched to the commands in order.
    const made = snapshotCommits(wc).slice(before.length);
    const held = snapshotStates(wc, made);
    const problems: string[] = [];
    let matched = 0;
    let s = 0;
    for (let i = 0; i < COMMANDS; i++) {
      const nextGap = gapsMs[i] === undefined ? "the last command" : `the next command ${(gapsMs[i]! / 1000).toFixed(2)} s after it`;
      const name = `command ${i + 1} (git ${steps[i]!.args.join(" ")}; ${nextGap})`;
      const here = held[s];
      if (here && differences(here, states[i]!).length === 0) {
        matched++;
        s++;
        continue;
      }
      // Recorded later in the list (a snapshot in between that no command explains), or not at all.
      const later = held.findIndex((h, j) => j > s && differences(h, states[i]!).length === 0);
      if (later > 0) {
        problems.push(`${name}: recorded as new snapshot ${later + 1}, after ${later - s} unexplained`);
        matched++;
        s = later + 1;
        continue;
      }
      problems.push(
        here
          ? `${name}: NOT RECORDED; the next new snapshot differs in ${differences(here, states[i]!).join(", ")}`
          : `${name}: NOT RECORDED; no new snapshot left`,
      );
    }
    if (s < held.length) problems.push(`${held.length - s} new snapshots after the last command's own`);
    const kinds = new Map<string, number>();
    for (const st of steps) kinds.set(st.kind, (kinds.get(st.kind) ?? 0) + 1);

    console.log(`\nbench/typist, ${size}, process backend ${backend}: ${describeFixture(wc)}; ${COMMANDS} commands, seed ${SEED}; git ${gitVersion()}, bun ${Bun.version}`);
    console.log(`${load0} before, ${loadAverage()} after; ${floor.describe()}`);
    console.log(`commands: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")}`);
    console.log(`pauses between a command's end and the next one's start: ${(Math.min(...gapsMs) / 1000).toFixed(2)} to ${(Math.max(...gapsMs) / 1000).toFixed(2)} s`);
    for (const p of problems) console.log(`  ${p}`);
    return {
      backend,
      size,
      commands: COMMANDS,
      snapshots: made.length,
      matched,
      problems,
      kinds,
      gapsMs,
      cpuPerRecording: cpu / COMMANDS,
      gitPerRecording,
      workersStarted: after.length,
      workersLost: t.pids.length - t.started.length,
      lastRecordingMs,
      floor,
    };
  } finally {
    load.stop();
    stopWorker(trace, undoDir); // one left by a failure above
    cli.remove();
    wc.remove();
  }
}

const results: Result[] = [];
for (const size of SIZES_RUN) for (const backend of BACKENDS) results.push(await run(size, backend));

/** The worker's CPU per recording at typing pace, its Git processes included: at most this (medium). */
const CPU_TARGET_MS: Record<FixtureSize, number | null> = { medium: 60, large: null };
const allRecorded = (r: Result) => r.snapshots === r.commands && r.matched === r.commands && r.problems.length === 0;
const cpuMet = (r: Result): boolean | null => (CPU_TARGET_MS[r.size] === null ? null : r.cpuPerRecording <= CPU_TARGET_MS[r.size]!);

console.log("");
printTable([
  ["size", "backend", "commands", "new snapshots", "state held", "worker CPU / recording", "CPU target", "git processes / recording", "workers (lost)", "last recorded after", "empty Bun CPU", ""],
  ...results.map((r) => [
    r.size,
    r.backend,
    String(r.commands),
    String(r.snapshots),
    `${r.matched}/${r.commands}`,
    `${r.cpuPerRecording.toFixed(0)} ms`,
    CPU_TARGET_MS[r.size] === null ? "" : `<= ${CPU_TARGET_MS[r.size]} ms ${verdict(cpuMet(r))}`,
    r.gitPerRecording.toFixed(1),
    `${r.workersStarted} (${r.workersLost})`,
    `${r.lastRecordingMs.toFixed(0)} ms`,
    `${median(r.floor.cpuMs).toFixed(0)} ms`,
    allRecorded(r) ? "ok" : "NOT RECORDED",
  ]),
]);
console.log("worker CPU: user + system from /proc (10 ms ticks), its Git processes included, from after a warm-up recording to its stop");
process.exitCode = results.every((r) => allRecorded(r) && cpuMet(r) !== false) ? 0 : 1;
