#!/usr/bin/env bun
// bench/record: how long a recording takes next to `git status`, and how many
// Git processes it starts, on the medium fixture (5,000 tracked files, 300
// commits, 50 untracked) and the large one (100,000 tracked files, 1,000
// untracked), with the floor beside it: the spec's steps as plain Git run by
// sh (RECORD_STEPS). Every case runs once per round, rounds interleave the
// cases so that a busy machine slows them alike, and medians are reported.
//
//   bun bench/record.ts [--size medium|large|both] [--runs N] [--warmup N] [--keep] [--ref-format files|reftable|both]
//   bun bench/record.ts --tags [--runs N] [--warmup N]
//
// --tags runs only the keep-entry case: a small repository with 1,000
// annotated tags, recorded with the `keep` entry and, in an identical copy,
// without it. The seam noKeep (core/seams.ts) leaves the entry out; it
// exists for this benchmark only.
//
// The main cases run on a files copy of each fixture and then on a reftable
// copy (`git refs migrate`, Git 2.46+), one table each; --ref-format picks
// one. With a Git that cannot migrate, only the files tables are printed.
import { appendFileSync, copyFileSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnCount } from "../core/git.ts";
import { record } from "../core/record.ts";
import { openRepo, type Repo } from "../core/repo.ts";
import { BunFloor, Case, Cli, commandNames, Editor, gitOut, gitVersion, loadAverage, printCases, printTable, progress, timed, type Sample, type Target } from "./common.ts";
import { benchEnv, describeFixture, parseSizes, workingCopy, type FixtureSize, type WorkingCopy } from "./fixture.ts";
import { seams } from "../core/seams.ts";

const { values: args } = parseArgs({
  options: {
    size: { type: "string" },
    runs: { type: "string", default: "11" },
    warmup: { type: "string", default: "2" },
    keep: { type: "boolean", default: false },
    tags: { type: "boolean", default: false },
    "ref-format": { type: "string", default: "both" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("usage: bun bench/record.ts [--size medium|large|both] [--runs N] [--warmup N] [--keep] [--tags] [--ref-format files|reftable|both]");
  process.exit(0);
}
const RUNS = Number(args.runs);
const WARMUP = Number(args.warmup);

/**
 * The targets, against `git status` in the same run. Large: a recording at
 * most 1.3x with nothing changed and 1.5x after edits, record() after 10
 * edits (what the worker runs) at most 1.2x, at most 13 Git processes each
 * (the refs and the snapshot refs are listed by two for-each-ref, so that no
 * recording reads every snapshot commit).
 * Medium, where Bun's start weighs more: `git undo snapshot` less the empty
 * Bun's start at most 2x with nothing changed and 2.5x after one edit.
 */
const TARGETS: Record<FixtureSize, Record<"coreSame" | "cliSame" | "core1" | "cli1" | "core10" | "cli10", Target | null>> = {
  large: {
    coreSame: { ratio: 1.3, spawns: 13 },
    cliSame: { ratio: 1.3, spawns: 13 },
    core1: { ratio: 1.5, spawns: 13 },
    cli1: { ratio: 1.5, spawns: 13 },
    core10: { ratio: 1.2, spawns: 13 },
    cli10: { ratio: 1.5, spawns: 13 },
  },
  medium: { coreSame: null, cliSame: { ratio: 2, aboveFloor: true }, core1: null, cli1: { ratio: 2.5, aboveFloor: true }, core10: null, cli10: null },
};

/**
 * A floor under the recording after 1 edit: the spec's steps as plain Git
 * commands run back to back by sh, with the overlap the recorder has (the
 * configuration beside the repository's paths, the refs beside the worktree
 * tree), and fewer of them than the spec asks for: the worktree tree by its
 * method (add -A and write-tree on a copy of the index), a state tree of that
 * one entry, the summary's diff against the state tree the steps wrote the
 * round before, the commit and its ref (one of the bench's own, deleted after
 * the round, so that no recording sees it). No index tree, no blobs, no
 * parents; the index's path is given. A target below this row's ratio is below
 * what the format's Git steps cost.
 */
const RECORD_STEPS = `set -e
git config -z --list >/dev/null & git rev-parse --git-dir --show-toplevel >/dev/null; wait
git for-each-ref >/dev/null & { cp "$REAL_INDEX" "$BENCH_INDEX"; GIT_INDEX_FILE="$BENCH_INDEX" git add -A --ignore-errors; }; wait
worktree=$(GIT_INDEX_FILE="$BENCH_INDEX" git write-tree)
tree=$(printf '040000 tree %s\tworktree\n' "$worktree" | git mktree)
read -r prev <"$BENCH_PREV"
echo "$prev $tree" | git diff-tree --stdin -r >/dev/null
echo "$tree" >"$BENCH_PREV"
git update-ref refs/bench/record "$(echo record | git commit-tree "$tree")"
`;

type RefFormat = "files" | "reftable";

/** Tables whose targets were missed, over every size and ref format run. */
let missedTables = 0;

async function main(size: FixtureSize, refFormat: RefFormat): Promise<void> {
  const load0 = loadAverage();
  const wc = await workingCopy({ size, label: `record-${size}-${refFormat}` });
  if (refFormat === "reftable") {
    const m = Bun.spawnSync({ cmd: ["git", "refs", "migrate", "--ref-format=reftable"], cwd: wc.repo, env: wc.env, stdout: "pipe", stderr: "pipe" });
    if (m.exitCode !== 0) throw new Error(`git refs migrate failed: ${m.stderr.toString()}`);
  }
  const cli = new Cli(wc.env);
  const scratch = mkdtempSync(join(tmpdir(), "git-undo-bench-record-"));
  try {
    const env = cli.env;
    const repo = await openRepo({ cwd: wc.repo, env: wc.env });
    const first = await record(repo, { kind: "manual" });
    if (!first.created) throw new Error("the first recording should create a snapshot");

    const targets = TARGETS[size];
    const status = new Case("git status", WARMUP);
    const bunStart = new Case("bun startup (empty script)", WARMUP);
    // The spec's own method with plain Git, nothing of ours around it: the floor of a recording.
    const floor = new Case("plain git: add -A + write-tree on a copy", WARMUP);
    const floorIndex = join(scratch, "index");
    const floorEnv = { ...env, GIT_INDEX_FILE: floorIndex };
    // The spec's steps after 1 edit as plain Git, back to back (RECORD_STEPS).
    const steps = new Case("plain git: a recording's steps after 1 edit (sh)", WARMUP);
    const stepsPrev = join(scratch, "steps-prev");
    writeFileSync(stepsPrev, `${gitOut(wc.repo, env, ["rev-parse", "HEAD^{tree}"])}\n`);
    const stepsEnv = { ...env, REAL_INDEX: repo.indexFile, BENCH_INDEX: join(scratch, "steps-index"), BENCH_PREV: stepsPrev };
    const emptyScript = join(scratch, "empty.ts");
    writeFileSync(emptyScript, "");
    const coreSame = new Case("record(), nothing changed", WARMUP, targets.coreSame);
    const cliSame = new Case("git undo snapshot, nothing changed", WARMUP, targets.cliSame);
    const core1 = new Case("record(), 1 edit", WARMUP, targets.core1);
    const cli1 = new Case("git undo snapshot, 1 edit", WARMUP, targets.cli1);
    const core10 = new Case("record(), 10 edits", WARMUP, targets.core10);
    const cli10 = new Case("git undo snapshot, 10 edits", WARMUP, targets.cli10);
    const editor = new Editor(wc);

    const inProcess = async (c: Case, round: number, expectCreated: boolean, r: Repo) => {
      const before = spawnCount();
      const t = performance.now();
      const out = await record(r, { kind: "manual" });
      const ms = performance.now() - t;
      if (out.created !== expectCreated) throw new Error(`${c.name}: created=${out.created}, expected ${expectCreated}`);
      c.add(round, { ms, spawns: spawnCount() - before });
    };
    const viaCli = (c: Case, round: number, expect: RegExp) => {
      // `git undo snapshot` exits 1 for "no change" (nothing to do), as the README says.
      const r = cli.run(["snapshot"], wc.repo, [0, 1]);
      if (!expect.test(r.stdout)) throw new Error(`${c.name}: unexpected output ${JSON.stringify(r.stdout)}`);
      c.commands = r.commands;
      c.add(round, { ms: r.ms, spawns: r.commands.length });
    };

    const rounds = WARMUP + RUNS;
    for (let round = 0; round < rounds; round++) {
      progress(round, rounds, WARMUP);
      status.add(round, { ms: timed(["git", "status"], wc.repo, env).ms, spawns: 1 });
      bunStart.add(round, { ms: timed([process.execPath, emptyScript], wc.repo, env).ms, spawns: null });
      copyFileSync(repo.indexFile, floorIndex);
      const seconds = Math.floor(statSync(repo.indexFile).mtimeMs / 1000);
      utimesSync(floorIndex, seconds, seconds);
      const add = timed(["git", "add", "-A", "--ignore-errors"], wc.repo, floorEnv).ms;
      floor.add(round, { ms: add + timed(["git", "write-tree"], wc.repo, floorEnv).ms, spawns: 2 });
      await inProcess(coreSame, round, false, repo);
      viaCli(cliSame, round, /^no change since #\d+\n$/);
      for (const [n, core, cliCase] of [
        [1, core1, cli1],
        [10, core10, cli10],
      ] as const) {
        editor.edit(n, round);
        await inProcess(core, round, true, repo);
        editor.revert();
        editor.edit(n, round);
        viaCli(cliCase, round, /^#\d+ /);
        editor.revert();
        if (n !== 1) continue;
        editor.edit(n, round);
        steps.add(round, { ms: timed(["sh", "-c", RECORD_STEPS], wc.repo, stepsEnv).ms, spawns: 9 });
        editor.revert();
        gitOut(wc.repo, env, ["update-ref", "-d", "refs/bench/record"]);
      }
      // Record the reverted state, so the next round's "nothing changed" is the clean checkout.
      await record(repo, { kind: "manual" });
    }

    // The recorder's worktree tree must be what `git add -A` on a copy of the index gives.
    const check = await verifyWorktreeTree(repo, wc);

    console.log(
      `bench/record, ${size}: ${describeFixture(wc)}; ` +
        `${RUNS} runs after ${WARMUP} warm-up, medians; ref format ${refFormat}; git ${gitVersion()}, bun ${Bun.version}`,
    );
    console.log(`${load0} before, ${loadAverage()} after`);
    let failed = printCases([status, bunStart, floor, coreSame, cliSame, steps, core1, cli1, core10, cli10], status, "git status", bunStart);
    for (const c of [cliSame, cli10]) console.log(`${c.name}: ${commandNames(c.commands)}`);
    console.log(`worktree tree matches git add -A on a copy of the index: ${check ? "yes" : "NO"}`);
    if (!check) failed++;
    if (failed) missedTables++;
    process.exitCode = missedTables ? 1 : 0;
  } finally {
    cli.remove();
    rmSync(scratch, { recursive: true, force: true });
    if (args.keep) console.log(`kept ${wc.repo}`);
    else wc.remove();
  }
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
    const run = (cwd: string, a: string[], input?: string) => gitOut(cwd, env, a, input);
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

    const repos = { keep: await openRepo({ cwd: withKeep, env }), none: await openRepo({ cwd: without, env }) };
    const recordIn = async (which: "keep" | "none"): Promise<Sample> => {
      seams.noKeep = which === "none";
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
    const floor = new BunFloor(root);
    const cases = {
      editKeep: new Case("1 edit, with keep (cached)", WARMUP),
      editNone: new Case("1 edit, without keep", WARMUP),
      tagKeep: new Case("new tag, with keep (rebuilt)", WARMUP),
      tagNone: new Case("new tag, without keep", WARMUP),
    };
    const rounds = WARMUP + RUNS;
    for (let round = 0; round < rounds; round++) {
      progress(round, rounds, WARMUP);
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
      floor.run(root, env, round >= WARMUP);
    }
    seams.noKeep = false;
    console.log(`bench/record --tags: 200 files, 1,000 annotated tags; ${RUNS} runs after ${WARMUP} warm-up, medians; git ${gitVersion()}, bun ${Bun.version}`);
    console.log(`in-process recordings (no Bun start in them); for scale, ${floor.describe()}`);
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
    printTable(rows);
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
  let first = true;
  for (const size of parseSizes(args.size)) {
    for (const f of formats) {
      if (!first) console.log("");
      first = false;
      if (f === "reftable" && !canMigrate()) {
        console.log(`${size}, reftable: skipped (git ${gitVersion()} has no 'git refs migrate'; it came in 2.46)`);
        continue;
      }
      await main(size, f);
    }
  }
}
