#!/usr/bin/env bun
// bench/record: how long a recording takes next to `git status`, on the
// fixture repository (100,000 tracked files, 1,000 untracked), and how many Git
// processes it starts. Every case runs once per round, rounds interleave the
// cases so that a busy machine slows them alike, and medians are reported.
//
//   bun bench/record.ts [--runs N] [--warmup N] [--keep] [--ref-format files|reftable|both]
//   bun bench/record.ts --tags [--runs N] [--warmup N]
//
// --tags runs only the keep-entry case: a small repository with 1,000
// annotated tags, recorded with the `keep` entry and, in an identical copy,
// without it. GIT_UNDO_BENCH_NO_KEEP=1 (read by core/keep.ts) is the switch
// that leaves the entry out; it exists for this benchmark only.
//
// The main cases run on a files copy of the fixture and then on a reftable copy
// (`git refs migrate`, Git 2.46+), one table each; --ref-format picks one. With
// a Git that cannot migrate, only the files table is printed.
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnCount } from "../core/git.ts";
import { record } from "../core/record.ts";
import { openRepo, type Repo } from "../core/repo.ts";
import { benchEnv, workingCopy, type WorkingCopy } from "./fixture.ts";

const ROOT = join(import.meta.dir, "..");

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "11" },
    warmup: { type: "string", default: "2" },
    keep: { type: "boolean", default: false },
    tags: { type: "boolean", default: false },
    "ref-format": { type: "string", default: "both" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("usage: bun bench/record.ts [--runs N] [--warmup N] [--keep] [--tags] [--ref-format files|reftable|both]");
  process.exit(0);
}
const RUNS = Number(args.runs);
const WARMUP = Number(args.warmup);

interface Sample {
  ms: number;
  spawns: number;
}

class Case {
  readonly samples: Sample[] = [];
  /** The Git commands of the last run, for the CLI cases. */
  commands: string[] = [];
  constructor(
    readonly name: string,
    /** What the target compares it with: 1.3 (unchanged), 1.5 (edits), or none. */
    readonly limit: number | null,
  ) {}
  add(round: number, s: Sample): void {
    if (round >= WARMUP) this.samples.push(s);
  }
  median(): number {
    const xs = this.samples.map((s) => s.ms).sort((a, b) => a - b);
    const mid = xs.length >> 1;
    return xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
  }
  best(): number {
    return Math.min(...this.samples.map((s) => s.ms));
  }
  spawns(): string {
    const counts = [...new Set(this.samples.map((s) => s.spawns))].sort((a, b) => a - b);
    return counts.length ? counts.join("/") : "-";
  }
  maxSpawns(): number {
    return Math.max(0, ...this.samples.map((s) => s.spawns));
  }
}

function spawnTimed(cmd: string[], cwd: string, env: Record<string, string>, okExit: readonly number[] = [0]): { ms: number; stdout: string } {
  const t = performance.now();
  const r = Bun.spawnSync({ cmd, cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - t;
  if (!okExit.includes(r.exitCode ?? -1)) throw new Error(`${cmd.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}`);
  return { ms, stdout: r.stdout.toString() };
}

/** Edits that change content but look like ordinary work: a line appended to `n` tracked files. */
class Editor {
  private originals = new Map<string, string>();
  private next = 0;
  constructor(
    private readonly wc: WorkingCopy,
    private readonly stride: number,
  ) {}
  edit(n: number, round: number): void {
    for (let i = 0; i < n; i++) {
      // Spread the edits over the tree, a different file each time.
      const rel = this.wc.tracked[(this.next++ * this.stride) % this.wc.tracked.length]!;
      const path = join(this.wc.repo, rel);
      const before = readFileSync(path, "utf8");
      this.originals.set(path, before);
      appendFileSync(path, `// edited in round ${round}\n`);
    }
  }
  /** Put the edited files back, so every round starts from the clean checkout. */
  revert(): void {
    for (const [path, content] of this.originals) writeFileSync(path, content);
    this.originals.clear();
  }
}

type RefFormat = "files" | "reftable";

/** Tables whose targets were missed, over every ref format run. */
let missedTables = 0;

async function main(refFormat: RefFormat): Promise<void> {
  const load0 = loadavg();
  const wc = await workingCopy({ label: `record-${refFormat}` });
  if (refFormat === "reftable") {
    const m = Bun.spawnSync({ cmd: ["git", "refs", "migrate", "--ref-format=reftable"], cwd: wc.repo, env: wc.env, stdout: "pipe", stderr: "pipe" });
    if (m.exitCode !== 0) throw new Error(`git refs migrate failed: ${m.stderr.toString()}`);
  }
  const bin = mkdtempSync(join(tmpdir(), "git-undo-bench-bin-"));
  const trace = join(bin, "spawns.txt");
  try {
    // `git undo` as a user runs it: git finds git-undo on PATH.
    symlinkSync(join(ROOT, "cli", "git-undo"), join(bin, "git-undo"));
    const env = { ...wc.env, PATH: `${bin}:${process.env.PATH ?? ""}`, GIT_UNDO_BUN: process.execPath };
    const cliEnv = { ...env, GIT_UNDO_TRACE_SPAWNS: trace };
    // The in-process recorder reads the environment through Git.here().
    for (const k of Object.keys(process.env)) if (k.startsWith("GIT_")) delete process.env[k];
    Object.assign(process.env, wc.env);
    const repo = await openRepo(wc.repo);
    const first = await record(repo, { kind: "manual" });
    if (!first.created) throw new Error("the first recording should create a snapshot");

    const status = new Case("git status", null);
    const bunStart = new Case("bun startup (empty script)", null);
    // The spec's own method with plain Git, nothing of ours around it: the floor of a recording.
    const floor = new Case("plain git: add -A + write-tree on a copy", null);
    const floorIndex = join(bin, "index");
    const floorEnv = { ...env, GIT_INDEX_FILE: floorIndex };
    const emptyScript = join(bin, "empty.ts");
    writeFileSync(emptyScript, "");
    const coreSame = new Case("record(), nothing changed", 1.3);
    const cliSame = new Case("git undo snapshot, nothing changed", 1.3);
    const core1 = new Case("record(), 1 edit", 1.5);
    const cli1 = new Case("git undo snapshot, 1 edit", 1.5);
    const core10 = new Case("record(), 10 edits", 1.5);
    const cli10 = new Case("git undo snapshot, 10 edits", 1.5);
    const editor = new Editor(wc, 7919);

    const inProcess = async (c: Case, round: number, expectCreated: boolean, r: Repo) => {
      const before = spawnCount();
      const t = performance.now();
      const out = await record(r, { kind: "manual" });
      const ms = performance.now() - t;
      if (out.created !== expectCreated) throw new Error(`${c.name}: created=${out.created}, expected ${expectCreated}`);
      c.add(round, { ms, spawns: spawnCount() - before });
    };
    const cli = (c: Case, round: number, expect: RegExp) => {
      writeFileSync(trace, "");
      // `git undo snapshot` exits 1 for "no change" (nothing to do), as the README says.
      const r = spawnTimed(["git", "undo", "snapshot"], wc.repo, cliEnv, [0, 1]);
      if (!expect.test(r.stdout)) throw new Error(`${c.name}: unexpected output ${JSON.stringify(r.stdout)}`);
      c.commands = readFileSync(trace, "utf8").split("\n").filter(Boolean);
      c.add(round, { ms: r.ms, spawns: c.commands.length });
    };

    const rounds = WARMUP + RUNS;
    for (let round = 0; round < rounds; round++) {
      process.stderr.write(`\rround ${round + 1}/${rounds}${round < WARMUP ? " (warm-up)" : ""}   `);
      status.add(round, { ms: spawnTimed(["git", "status"], wc.repo, env).ms, spawns: 1 });
      bunStart.add(round, { ms: spawnTimed([process.execPath, emptyScript], wc.repo, env).ms, spawns: 0 });
      copyFileSync(repo.indexFile, floorIndex);
      const seconds = Math.floor(statSync(repo.indexFile).mtimeMs / 1000);
      utimesSync(floorIndex, seconds, seconds);
      const add = spawnTimed(["git", "add", "-A", "--ignore-errors"], wc.repo, floorEnv).ms;
      floor.add(round, { ms: add + spawnTimed(["git", "write-tree"], wc.repo, floorEnv).ms, spawns: 2 });
      await inProcess(coreSame, round, false, repo);
      cli(cliSame, round, /^no change since #\d+\n$/);
      for (const [n, core, viaCli] of [
        [1, core1, cli1],
        [10, core10, cli10],
      ] as const) {
        editor.edit(n, round);
        await inProcess(core, round, true, repo);
        editor.revert();
        editor.edit(n, round);
        cli(viaCli, round, /^#\d+ /);
        editor.revert();
      }
      // Record the reverted state, so the next round's "nothing changed" is the clean checkout.
      await record(repo, { kind: "manual" });
    }
    process.stderr.write("\n");

    // The recorder's worktree tree must be what `git add -A` on a copy of the index gives.
    const check = await verifyWorktreeTree(repo, wc);

    const base = status.median();
    const rows: string[][] = [["case", "median ms", "best ms", "x git status", "target", "git processes", ""]];
    let failed = 0;
    for (const c of [status, bunStart, floor, coreSame, cliSame, core1, cli1, core10, cli10]) {
      const ratio = c.median() / base;
      const spawnOk = c.limit === null || c.maxSpawns() <= 12;
      const timeOk = c.limit === null || ratio <= c.limit;
      const verdict = c.limit === null ? "" : timeOk && spawnOk ? "ok" : "MISSED";
      if (verdict === "MISSED") failed++;
      rows.push([
        c.name,
        c.median().toFixed(0),
        c.best().toFixed(0),
        c === status ? "1.00" : ratio.toFixed(2),
        c.limit === null ? "" : `<= ${c.limit}x, <= 12`,
        c.limit === null && c !== status && c !== floor ? "" : c.spawns(),
        verdict,
      ]);
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    const line = (r: string[]) =>
      r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ").trimEnd();
    const load1 = loadavg();
    console.log(
      `bench/record: ${wc.tracked.length} tracked files, ${wc.untracked.length} untracked; ` +
        `${RUNS} runs after ${WARMUP} warm-up, medians; ref format ${refFormat}; git ${gitVersion()}, bun ${Bun.version}`,
    );
    console.log(`load average ${load0.map((l) => l.toFixed(2)).join(" ")} before, ${load1.map((l) => l.toFixed(2)).join(" ")} after`);
    console.log(line(rows[0]!));
    for (const r of rows.slice(1)) console.log(line(r));
    for (const c of [cliSame, cli10]) {
      console.log(`${c.name}: ${c.commands.map((a) => a.replace(/^(-c \S+ )+/, "").split(" ")[0]).join(", ")}`);
    }
    console.log(`worktree tree matches git add -A on a copy of the index: ${check ? "yes" : "NO"}`);
    if (!check) failed++;
    if (failed) missedTables++;
    process.exitCode = missedTables ? 1 : 0;
  } finally {
    rmSync(bin, { recursive: true, force: true });
    if (args.keep) console.log(`kept ${wc.repo}`);
    else wc.remove();
  }
}

function gitVersion(): string {
  return Bun.spawnSync({ cmd: ["git", "--version"], stdout: "pipe" }).stdout.toString().trim().replace(/^git version /, "");
}

/** Plain Git's answer for the worktree tree, next to the latest snapshot's. */
async function verifyWorktreeTree(repo: Repo, wc: WorkingCopy): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), "git-undo-bench-check-"));
  try {
    const index = join(dir, "index");
    const env = { ...wc.env, GIT_INDEX_FILE: index };
    Bun.spawnSync({ cmd: ["cp", "-p", repo.indexFile, index] });
    const run = (a: string[]) => Bun.spawnSync({ cmd: ["git", ...a], cwd: wc.repo, env, stdout: "pipe" }).stdout.toString().trim();
    run(["add", "-A", "--ignore-errors"]);
    const expected = run(["write-tree"]);
    const latest = run(["for-each-ref", "--sort=-refname", "--count=1", "--format=%(objectname)", "refs/undo/snapshots/"]);
    return expected !== "" && run(["rev-parse", `${latest}:worktree`]) === expected;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The keep entry's cost: two identical small repositories with 1,000 annotated
 * tags, one recorded with the keep entry and one without (each keeps its own
 * cache, so switching does not defeat it). Per round, in both: a recording
 * after one edit (the keep tree reused from the cache) and after a new tag
 * (the keep tree rebuilt: 1,001 tags read, one new blob, one mktree).
 */
async function tagsBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "git-undo-bench-tags-"));
  try {
    const home = join(root, "home");
    Bun.spawnSync({ cmd: ["mkdir", "-p", home] });
    const env = benchEnv(home);
    const run = (cwd: string, a: string[], input?: string) => {
      const r = Bun.spawnSync({ cmd: ["git", ...a], cwd, env, stdin: input === undefined ? "ignore" : Buffer.from(input), stdout: "pipe", stderr: "pipe" });
      if (r.exitCode !== 0) throw new Error(`git ${a.join(" ")}: ${r.stderr.toString()}`);
      return r.stdout.toString().trim();
    };
    const withKeep = join(root, "keep");
    run(root, ["init", "-q", "-b", "main", withKeep]);
    run(withKeep, ["config", "user.name", "Bench User"]);
    run(withKeep, ["config", "user.email", "bench@example.com"]);
    for (let i = 0; i < 200; i++) writeFileSync(join(withKeep, `f${i}.txt`), `file ${i}\n`);
    run(withKeep, ["add", "-A"]);
    run(withKeep, ["commit", "-q", "-m", "files"]);
    const head = run(withKeep, ["rev-parse", "HEAD"]);
    let stream = "";
    for (let i = 0; i < 1000; i++) {
      const msg = `release ${i}\n`;
      stream += `tag v${String(i).padStart(4, "0")}\nfrom ${head}\ntagger T <t@x> ${1600000000 + i} +0000\ndata ${msg.length}\n${msg}\n`;
    }
    run(withKeep, ["fast-import", "--quiet"], stream);
    const without = join(root, "nokeep");
    Bun.spawnSync({ cmd: ["cp", "-a", withKeep, without] });

    for (const k of Object.keys(process.env)) if (k.startsWith("GIT_")) delete process.env[k];
    Object.assign(process.env, env);
    const repos = { keep: await openRepo(withKeep), none: await openRepo(without) };
    const recordIn = async (which: "keep" | "none"): Promise<Sample> => {
      if (which === "none") process.env.GIT_UNDO_BENCH_NO_KEEP = "1";
      else delete process.env.GIT_UNDO_BENCH_NO_KEEP;
      const before = spawnCount();
      const t = performance.now();
      const out = await record(repos[which], { kind: "manual" });
      const ms = performance.now() - t;
      if (!out.created) throw new Error("the recording should create a snapshot");
      const hasKeep = run(which === "keep" ? withKeep : without, ["ls-tree", out.snapshot.tree, "keep"]) !== "";
      if (hasKeep !== (which === "keep")) throw new Error(`keep entry ${hasKeep ? "present" : "absent"} in the ${which} repository`);
      return { ms, spawns: spawnCount() - before };
    };
    await recordIn("keep");
    await recordIn("none");
    const cases = {
      editKeep: new Case("1 edit, with keep (cached)", null),
      editNone: new Case("1 edit, without keep", null),
      tagKeep: new Case("new tag, with keep (rebuilt)", null),
      tagNone: new Case("new tag, without keep", null),
    };
    const rounds = WARMUP + RUNS;
    for (let round = 0; round < rounds; round++) {
      process.stderr.write(`\rround ${round + 1}/${rounds}${round < WARMUP ? " (warm-up)" : ""}   `);
      // Alternate which goes first, so neither always runs on a warmer cache.
      const order: ("keep" | "none")[] = round % 2 ? ["none", "keep"] : ["keep", "none"];
      for (const which of order) {
        appendFileSync(join(which === "keep" ? withKeep : without, "f7.txt"), `edit ${round}\n`);
        (which === "keep" ? cases.editKeep : cases.editNone).add(round, await recordIn(which));
      }
      for (const which of order) {
        run(which === "keep" ? withKeep : without, ["tag", "-a", `new${round}`, "-m", `round ${round}`]);
        (which === "keep" ? cases.tagKeep : cases.tagNone).add(round, await recordIn(which));
      }
    }
    delete process.env.GIT_UNDO_BENCH_NO_KEEP;
    process.stderr.write("\n");
    console.log(`bench/record --tags: 200 files, 1,000 annotated tags; ${RUNS} runs after ${WARMUP} warm-up, medians; git ${gitVersion()}, bun ${Bun.version}`);
    const rows = [
      ["case", "median ms", "best ms", "git processes", "with / without"],
      ...[
        [cases.editKeep, cases.editNone],
        [cases.tagKeep, cases.tagNone],
      ].flatMap(([k, n]) => [
        [k!.name, k!.median().toFixed(1), k!.best().toFixed(1), k!.spawns(), `${(k!.median() / n!.median()).toFixed(2)}x`],
        [n!.name, n!.median().toFixed(1), n!.best().toFixed(1), n!.spawns(), ""],
      ]),
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows) console.log(r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ").trimEnd());
    const ratio = cases.editKeep.median() / cases.editNone.median();
    console.log(`target: 1 edit with keep at most 1.1x without: ${ratio <= 1.1 ? "ok" : "MISSED"}`);
    process.exitCode = ratio <= 1.1 ? 0 : 1;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Whether this Git can turn a copy into a reftable repository (`git refs migrate`, 2.46+). */
function canMigrate(): boolean {
  const m = /(\d+)\.(\d+)/.exec(gitVersion());
  return m !== null && (Number(m[1]) > 2 || (Number(m[1]) === 2 && Number(m[2]) >= 46));
}

if (args.tags) await tagsBench();
else {
  const wanted = args["ref-format"];
  if (!["files", "reftable", "both"].includes(wanted ?? "")) throw new Error(`--ref-format: files, reftable or both, not ${wanted}`);
  const formats: RefFormat[] = wanted === "both" ? ["files", "reftable"] : [wanted as RefFormat];
  for (const f of formats) {
    if (f === "reftable" && !canMigrate()) {
      console.log(`reftable: skipped (git ${gitVersion()} has no 'git refs migrate'; it came in 2.46)`);
      continue;
    }
    await main(f);
    if (f !== formats[formats.length - 1]) console.log("");
  }
}
