#!/usr/bin/env bun
// bench/restore: `git undo` of a commit that changed 10 files, next to
// `git reset --hard HEAD~1` on the same repository, in the same run, on the
// medium fixture (5,000 tracked files, 300 commits) and the large one (100,000
// tracked files). Two git-undo cases: right after the commit (the restore
// records the new state first, as when no hook has recorded it yet), and with
// the state already recorded. `git undo` runs as a user runs it, through Git
// and the launcher, and its Git processes are counted. Beside them, the floor:
// the same restores as plain Git steps run by sh (RESTORE_STEPS). Rounds
// interleave the cases; medians are reported as ratios against plain Git.
//
//   bun bench/restore.ts [--size medium|large|both] [--runs N] [--warmup N]
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BunFloor, Case, Cli, commandNames, gitOut, gitVersion, loadAverage, printCases, progress, timed, type Target } from "./common.ts";
import { describeFixture, parseSizes, workingCopy, type FixtureSize } from "./fixture.ts";

const { values: args } = parseArgs({
  options: {
    size: { type: "string" },
    runs: { type: "string", default: "7" },
    warmup: { type: "string", default: "1" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("usage: bun bench/restore.ts [--size medium|large|both] [--runs N] [--warmup N]");
  process.exit(0);
}
const RUNS = Number(args.runs);
const WARMUP = Number(args.warmup);

/**
 * Against `git reset --hard HEAD~1`. With the commit recorded already (as the
 * hooks leave it), medium: at most 3x. Recording it first as well costs a
 * recording more: 4x. Large: 2x either way.
 */
const TARGET: Record<FixtureSize, { recorded: Target; recordFirst: Target }> = {
  medium: { recorded: { ratio: 3 }, recordFirst: { ratio: 4 } },
  large: { recorded: { ratio: 2 }, recordFirst: { ratio: 2 } },
};

/**
 * A floor under `git undo`: undoing the last commit as plain Git commands run
 * back to back by sh, fewer and cheaper than the spec's steps. git status
 * stands in for the check that the state is recorded, one rev-parse for
 * reading the target, one two-tree merge of the whole index for both the
 * working tree and the index; no object check, no refresh, no backup, no
 * report; the index's path and the branch are given. The restore snapshot is
 * committed under a ref of the bench's own, deleted after the round so that
 * no recording sees it. Recording first adds a recording's steps (RECORD). A
 * target below these rows' ratios (with Bun's start on top) is below what the
 * format's Git steps cost.
 */
const OPEN_AND_CHECK = `set -e
git config -z --list >/dev/null & git rev-parse --git-dir --show-toplevel >/dev/null; wait
git for-each-ref >/dev/null & git status --porcelain -z >/dev/null; wait
`;
const RESTORE = `target=$(git rev-parse HEAD~1^{tree})
cp "$REAL_INDEX" "$BENCH_INDEX"
GIT_INDEX_FILE="$BENCH_INDEX" git read-tree -m -u HEAD "$target"
git update-ref -m "bench: restore" "$BRANCH" HEAD~1
mv "$BENCH_INDEX" "$REAL_INDEX"
tree=$(printf '040000 tree %s\tworktree\n' "$target" | git mktree)
git update-ref refs/bench/restore "$(echo restore | git commit-tree "$tree")"
echo "$tree" >"$BENCH_PREV"
`;
/**
 * Recording the commit first: the worktree tree by the spec's method, its
 * state tree, the summary's diff against the state tree RESTORE wrote last
 * (the base's), the commit and its ref.
 */
const RECORD = `cp "$REAL_INDEX" "$BENCH_INDEX"
worktree=$(GIT_INDEX_FILE="$BENCH_INDEX" git add -A --ignore-errors && GIT_INDEX_FILE="$BENCH_INDEX" git write-tree)
tree=$(printf '040000 tree %s\tworktree\n' "$worktree" | git mktree)
read -r prev <"$BENCH_PREV"
echo "$prev $tree" | git diff-tree --stdin -r >/dev/null
git update-ref refs/bench/recorded "$(echo recorded | git commit-tree "$tree")"
`;
const RESTORE_STEPS = OPEN_AND_CHECK + RESTORE;
const RECORD_FIRST_STEPS = OPEN_AND_CHECK + RECORD + RESTORE;

/** Returns whether every target was met. */
async function bench(size: FixtureSize): Promise<boolean> {
  const load0 = loadAverage();
  const wc = await workingCopy({ size, label: `restore-${size}` });
  const cli = new Cli(wc.env);
  const git = (...a: string[]) => timed(["git", ...a], wc.repo, cli.env).ms;
  try {
    // Ten tracked files spread over the tree; each round appends a different line to them.
    const files = Array.from({ length: 10 }, (_, i) => wc.tracked[Math.floor(((i + 0.5) * wc.tracked.length) / 10)]!);
    let edit = 0;
    const commitTen = () => {
      edit++;
      for (const f of files) appendFileSync(join(wc.repo, f), `edit ${edit}\n`);
      git("commit", "-q", "-a", "-m", `change ten files (${edit})`);
    };
    const reset = new Case("git reset --hard HEAD~1 (plain Git)", WARMUP);
    const recordFirst = new Case("git undo (records the commit first)", WARMUP, TARGET[size].recordFirst);
    const recorded = new Case("git undo (nothing to record first)", WARMUP, TARGET[size].recorded);
    const floor = new BunFloor(cli.bin);
    const bunStart = new Case("bun startup (empty script)", WARMUP);
    // The same steps as plain Git, back to back (RESTORE_STEPS, RECORD_FIRST_STEPS); they leave the base commit, clean.
    const steps = new Case("plain git: a restore's steps back to back (sh)", WARMUP);
    const stepsFirst = new Case("plain git: the same, recording first (sh)", WARMUP);
    const gitDir = gitOut(wc.repo, cli.env, ["rev-parse", "--absolute-git-dir"]);
    const stepsEnv = { ...cli.env, REAL_INDEX: join(gitDir, "index"), BENCH_INDEX: join(gitDir, "bench-index"), BENCH_PREV: join(gitDir, "bench-prev"), BRANCH: gitOut(wc.repo, cli.env, ["symbolic-ref", "HEAD"]) };
    const undo = (c: Case, round: number) => {
      const r = cli.run([], wc.repo);
      c.commands = r.commands;
      c.add(round, { ms: r.ms, spawns: r.commands.length });
    };

    cli.run(["snapshot"], wc.repo, [0, 1]);
    const rounds = WARMUP + RUNS;
    for (let round = 0; round < rounds; round++) {
      progress(round, rounds, WARMUP);
      commitTen();
      reset.add(round, { ms: git("reset", "-q", "--hard", "HEAD~1"), spawns: 1 });
      commitTen();
      undo(recordFirst, round); // saves the commit's state first, then undoes it
      commitTen();
      cli.run(["snapshot"], wc.repo);
      undo(recorded, round); // nothing to record first
      commitTen();
      steps.add(round, { ms: timed(["sh", "-c", RESTORE_STEPS], wc.repo, stepsEnv).ms, spawns: 10 });
      commitTen();
      stepsFirst.add(round, { ms: timed(["sh", "-c", RECORD_FIRST_STEPS], wc.repo, stepsEnv).ms, spawns: 16 });
      git("update-ref", "-d", "refs/bench/restore");
      git("update-ref", "-d", "refs/bench/recorded");
      bunStart.add(round, { ms: floor.run(wc.repo, cli.env).ms, spawns: null });
      // Every case ends where it started: the base commit, clean.
      for (const f of files) {
        const text = readFileSync(join(wc.repo, f), "utf8");
        if (/edit \d+\n$/.test(text)) throw new Error(`${f} was not restored`);
      }
    }
    console.log(`bench/restore, ${size}: ${describeFixture(wc)}; ${RUNS} runs after ${WARMUP} warm-up, medians; git ${gitVersion()}, bun ${Bun.version}`);
    console.log(`${load0} before, ${loadAverage()} after`);
    const missed = printCases([reset, steps, stepsFirst, recordFirst, recorded, bunStart], reset, "reset");
    for (const c of [recordFirst, recorded]) console.log(`${c.name}: ${commandNames(c.commands)}`);
    return missed === 0;
  } finally {
    cli.remove();
    wc.remove();
  }
}

let allMet = true;
for (const [i, size] of parseSizes(args.size).entries()) {
  if (i > 0) console.log("");
  if (!(await bench(size))) allMet = false;
}
process.exitCode = allMet ? 0 : 1;
