#!/usr/bin/env bun
// bench/restore: `git undo` of a commit that changed 10 files, next to
// `git reset --hard HEAD~1` on the same repository (the fixture of bench/record:
// 100,000 tracked files, 1,000 untracked), in the same run. Two git-undo cases:
// right after the commit (the restore records the new state first, as when no
// hook has recorded it yet), and with the state already recorded. Rounds
// interleave the cases; medians are reported as ratios against plain Git.
//
//   bun bench/restore.ts [--runs N] [--warmup N]
import { appendFileSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { workingCopy } from "./fixture.ts";

const CLI = join(import.meta.dir, "..", "cli", "main.ts");
const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    warmup: { type: "string", default: "1" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("usage: bun bench/restore.ts [--runs N] [--warmup N]");
  process.exit(0);
}
const RUNS = Number(args.runs);
const WARMUP = Number(args.warmup);

const wc = await workingCopy({ label: "restore" });
const env = wc.env;

function run(cmd: string[]): number {
  const t = performance.now();
  const r = Bun.spawnSync({ cmd, cwd: wc.repo, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - t;
  // `git undo snapshot` exits 1 for "no change": nothing to do, not a failure.
  const nothingToDo = r.exitCode === 1 && cmd.includes("snapshot");
  if (r.exitCode !== 0 && !nothingToDo) throw new Error(`${cmd.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
  return ms;
}
const git = (...a: string[]) => run(["git", ...a]);
const undo = (...a: string[]) => run([process.execPath, CLI, ...a]);

// Ten tracked files spread over the tree; each round appends a different line to them.
const files = Array.from({ length: 10 }, (_, i) => wc.tracked[Math.floor(((i + 0.5) * wc.tracked.length) / 10)]!);
let edit = 0;
function commitTen(): void {
  edit++;
  for (const f of files) appendFileSync(join(wc.repo, f), `edit ${edit}\n`);
  git("commit", "-q", "-a", "-m", `change ten files (${edit})`);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const cases = {
  reset: [] as number[],
  undoRecordFirst: [] as number[],
  undoRecorded: [] as number[],
};

try {
  undo("snapshot");
  for (let round = 0; round < WARMUP + RUNS; round++) {
    const keep = round >= WARMUP;
    commitTen();
    const a = git("reset", "-q", "--hard", "HEAD~1");
    commitTen();
    const b = undo(); // saves the commit's state first, then undoes it
    commitTen();
    undo("snapshot");
    const c = undo(); // nothing to record first
    if (keep) {
      cases.reset.push(a);
      cases.undoRecordFirst.push(b);
      cases.undoRecorded.push(c);
    }
    // Every case ends where it started: the base commit, clean.
    for (const f of files) {
      const text = readFileSync(join(wc.repo, f), "utf8");
      if (/edit \d+\n$/.test(text)) throw new Error(`${f} was not restored`);
    }
  }
  const base = median(cases.reset);
  const line = (name: string, xs: number[]) =>
    `${name.padEnd(44)} ${median(xs).toFixed(0).padStart(6)} ms   ${(median(xs) / base).toFixed(2)}x`;
  const out = [
    `restore bench: ${wc.tracked.length} tracked files, ${wc.untracked.length} untracked; ${RUNS} runs (median), load ${loadavg()[0]!.toFixed(2)}`,
    line("git reset --hard HEAD~1 (plain Git)", cases.reset),
    line("git undo (records the commit first)", cases.undoRecordFirst),
    line("git undo (nothing to record first)", cases.undoRecorded),
    "target: at most 2x plain Git",
  ].join("\n");
  console.log(out);
} finally {
  wc.remove();
}
