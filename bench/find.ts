#!/usr/bin/env bun
// bench/find: finding lost work in a long history. On a copy of the fixture,
// <snapshots> snapshots of small edits (one line appended to one tracked file
// each; one snapshot adds a unique line that the next removes), and a chain of
// as many commits with the same changes. Measured in the same run, rounds
// interleaved: `git undo log -S` against `git log -S` over the chain (target
// at most 1.5x), `git undo grep --all` for the line only one snapshot holds
// (under 2 s), and resolving `@{<date>}` to a snapshot (under 100 ms).
// With --rescue, instead: on a copy of the medium fixture with some lost work
// (dropped stash entries, amended commits, a deleted branch, contents staged
// and reset away) and 50 snapshots, `git undo rescue` against
// `git fsck --unreachable --no-reflogs` (target at most 2x).
//
//   bun bench/find.ts [--files N] [--snapshots N] [--runs N] [--warmup N]
//   bun bench/find.ts --rescue [--runs N] [--warmup N]
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { listSnapshots, resolveSnapshotArg } from "../core/snapshots/history.ts";
import { record } from "../core/record.ts";
import { openRepo } from "../core/repo.ts";
import { BunFloor, median, timed, type Timed } from "./common.ts";
import { workingCopy } from "./fixture.ts";

const CLI = join(import.meta.dir, "..", "cli", "main.ts");
const { values: args } = parseArgs({
  options: {
    files: { type: "string", default: "100000" },
    snapshots: { type: "string", default: "1000" },
    runs: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    rescue: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("usage: bun bench/find.ts [--files N] [--snapshots N] [--runs N] [--warmup N]\n   or: bun bench/find.ts --rescue [--runs N] [--warmup N]");
  process.exit(0);
}
const FILES = Number(args.files);
const SNAPSHOTS = Number(args.snapshots);
const RUNS = Number(args.runs);
const WARMUP = Number(args.warmup);
const NEEDLE = "a line only one snapshot ever held";
const scratch = mkdtempSync(join(tmpdir(), "git-undo-bench-find-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));
const floor = new BunFloor(scratch);
const spawnTrace = join(scratch, "spawns");

/**
 * `git undo <args>` straight through Bun (cli/main.ts), its Git processes
 * counted (GIT_UNDO_TRACE_SPAWNS) and, with FIND_BENCH_TRACE set, appended there.
 */
function undoCounted(cwd: string, env: Record<string, string>, args: string[]): Timed & { spawns: number } {
  writeFileSync(spawnTrace, "");
  const r = timed([process.execPath, CLI, ...args], cwd, { ...env, GIT_UNDO_TRACE_SPAWNS: spawnTrace });
  const lines = readFileSync(spawnTrace, "utf8");
  if (process.env.FIND_BENCH_TRACE) appendFileSync(process.env.FIND_BENCH_TRACE, lines);
  return { ...r, spawns: lines.split("\n").filter(Boolean).length };
}
/** The distinct counts seen, "10/11". */
const counts = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b).join("/");
if (args.rescue) {
  process.exit((await rescueBench()) ? 0 : 1);
}

const wc = await workingCopy({ files: FILES, label: "find" });
const env: Record<string, string> = { ...wc.env, GIT_UNDO_INTERNAL: "1" };

const run = (cmd: string[], input?: string) => timed(cmd, wc.repo, env, [0], input);
const git = (...a: string[]) => run(["git", ...a]);
const spawns = { undoLogS: [] as number[], undoLogG: [] as number[], grepAll: [] as number[], dateCli: [] as number[] };
const undo = (...a: string[]) => undoCounted(wc.repo, env, a);

try {
  git("config", "undo.limit", String(SNAPSHOTS + 10));
  const repo = await openRepo({ cwd: wc.repo, env: wc.env });
  const base = git("rev-parse", "HEAD").stdout.trim();
  const build = performance.now();
  // The same changes twice: recorded as snapshots, and as a chain of commits (fast-import, one process).
  const content = new Map<string, string>();
  const stream: string[] = [];
  const needleAt = Math.floor(SNAPSHOTS / 2);
  for (let i = 0; i < SNAPSHOTS; i++) {
    // The snapshot after the needle's edits the same file, taking the line out.
    const path = wc.tracked[((i === needleAt + 1 ? i - 1 : i) * 7919) % wc.tracked.length]!;
    const before = content.get(path) ?? readFileSync(join(wc.repo, path), "utf8");
    // Snapshot needleAt adds the unique line; the next one takes it out again.
    const after = i === needleAt ? `${before}${NEEDLE}\n` : i === needleAt + 1 ? before.replace(`${NEEDLE}\n`, "") + `edit ${i}\n` : `${before}edit ${i}\n`;
    content.set(path, after);
    writeFileSync(join(wc.repo, path), after);
    const out = await record(repo, { kind: "manual" });
    if (!out.created) throw new Error(`snapshot ${i} was not recorded`);
    const data = Buffer.from(after);
    const message = `change ${i}\n`;
    stream.push(
      `commit refs/heads/chain\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\ndata ${message.length}\n${message}`,
      i === 0 ? `from ${base}\n` : "",
      `M 100644 inline ${path}\ndata ${data.length}\n`,
      after,
      "\n",
    );
  }
  run(["git", "fast-import", "--quiet"], stream.join(""));
  const buildS = (performance.now() - build) / 1000;
  const snaps = await listSnapshots(repo);

  const cases = { gitLogS: [] as number[], undoLogS: [] as number[], undoLogG: [] as number[], grepAll: [] as number[], dateInProcess: [] as number[], dateCli: [] as number[] };
  for (let round = 0; round < WARMUP + RUNS; round++) {
    const keep = round >= WARMUP;
    // The whole chain, its root too: the first snapshot is compared with nothing, as a root commit is.
    const a = git("log", "-S", NEEDLE, "--format=%H", "chain");
    const b = undo("log", "-S", NEEDLE, "--json");
    const c = undo("log", "-G", NEEDLE, "--json");
    const d = undo("grep", "--all", "-F", NEEDLE);
    const t = performance.now();
    const n = await resolveSnapshotArg(repo, "@{now}", snaps);
    const e = performance.now() - t;
    const f = undo("show", "@{now}");
    floor.run(wc.repo, env, keep);
    // What each found: the two changes, and the one snapshot holding the line.
    const found = (JSON.parse(b.stdout) as { number: number }[]).map((s) => s.number);
    if (a.stdout.trim().split("\n").length !== 2 || found.length !== 2) throw new Error(`log -S found ${found.join(", ")}; git log -S found ${a.stdout}`);
    if (d.stdout.trim().split("\n").length !== 1 || !d.stdout.startsWith(`#${found[1]} `)) throw new Error(`grep --all found ${d.stdout}`);
    if (n !== snaps[snaps.length - 1]!.number) throw new Error(`@{now} gave #${n}`);
    if (keep) {
      cases.gitLogS.push(a.ms);
      cases.undoLogS.push(b.ms);
      cases.undoLogG.push(c.ms);
      cases.grepAll.push(d.ms);
      cases.dateInProcess.push(e);
      cases.dateCli.push(f.ms);
      spawns.undoLogS.push(b.spawns);
      spawns.undoLogG.push(c.spawns);
      spawns.grepAll.push(d.spawns);
      spawns.dateCli.push(f.spawns);
    }
  }
  const plain = median(cases.gitLogS);
  const line = (name: string, xs: number[], target: string, vsPlain = false, gitProcesses: number[] = []) =>
    `| ${name} | ${median(xs).toFixed(0)} ms | ${vsPlain ? `${(median(xs) / plain).toFixed(2)}x` : ""} | ${target} | ${counts(gitProcesses)} |`;
  console.log(
    [
      `find bench: ${wc.tracked.length} tracked files, ${SNAPSHOTS} snapshots and a chain of ${SNAPSHOTS} commits (built in ${buildS.toFixed(0)} s); ${RUNS} runs (median), load ${loadavg()[0]!.toFixed(2)}; ${git("--version").stdout.trim()}`,
      floor.describe(),
      "",
      "| case | median | vs git log -S | target | Git processes |",
      "|---|---|---|---|---|",
      line("git log -S over the chain and its root (plain Git)", cases.gitLogS, "", false, [1]),
      line("git undo log -S", cases.undoLogS, "at most 1.5x", true, spawns.undoLogS),
      line("git undo log -G", cases.undoLogG, "", true, spawns.undoLogG),
      line("git undo grep --all (a line one snapshot holds)", cases.grepAll, "under 2 s", false, spawns.grepAll),
      line("@{now} resolved (in-process)", cases.dateInProcess, "under 100 ms"),
      line("git undo show @{now} (end to end)", cases.dateCli, "", false, spawns.dateCli),
    ].join("\n"),
  );
  const met = median(cases.undoLogS) / plain <= 1.5 && median(cases.grepAll) < 2000 && median(cases.dateInProcess) < 100;
  console.log(`targets: ${met ? "ok" : "MISSED"}`);
  process.exitCode = met ? 0 : 1;
} finally {
  wc.remove();
}

/** `git undo rescue` against `git fsck --unreachable --no-reflogs` on the medium fixture with some lost work. */
async function rescueBench(): Promise<boolean> {
  const wc = await workingCopy({ size: "medium", label: "rescue" });
  const env: Record<string, string> = { ...wc.env, GIT_UNDO_INTERNAL: "1" };
  const run = (cmd: string[]) => timed(cmd, wc.repo, env, [0]);
  const git = (...a: string[]) => run(["git", ...a]);
  try {
    const repo = await openRepo({ cwd: wc.repo, env: wc.env });
    const file = (i: number) => join(wc.repo, wc.tracked[(i * 7919) % wc.tracked.length]!);
    const append = (i: number, text: string) => writeFileSync(file(i), `${readFileSync(file(i), "utf8")}${text}\n`);
    let n = 0;
    // Snapshots of small edits, so that refs/undo/ holds some history too.
    for (let i = 0; i < 50; i++) {
      append(n++, `edit ${i}`);
      await record(repo, { kind: "manual" });
    }
    git("add", "-A");
    git("commit", "-q", "-m", "edits");
    // Lost work: 5 dropped stash entries, 5 amended commits, a deleted branch of 10 commits, 20 contents staged and reset away.
    for (let i = 0; i < 5; i++) {
      append(n++, `stashed ${i}`);
      git("stash", "-q");
      git("stash", "drop", "-q");
    }
    for (let i = 0; i < 5; i++) {
      append(n++, `amended ${i}`);
      git("commit", "-q", "-a", "-m", `to amend ${i}`);
      git("commit", "-q", "--amend", "-m", `amended ${i}`);
    }
    git("checkout", "-q", "-b", "doomed");
    for (let i = 0; i < 10; i++) {
      append(n++, `on the branch ${i}`);
      git("commit", "-q", "-a", "-m", `doomed ${i}`);
    }
    git("checkout", "-q", "main");
    git("branch", "-q", "-D", "doomed");
    for (let i = 0; i < 20; i++) {
      append(n++, `staged ${i}`);
      git("add", "-A");
      git("reset", "-q", "--hard");
    }
    const fsck: number[] = [];
    const rescue: number[] = [];
    const rescueSpawns: number[] = [];
    let listed = 0;
    for (let round = 0; round < WARMUP + RUNS; round++) {
      const a = git("fsck", "--unreachable", "--no-reflogs");
      const b = undoCounted(wc.repo, env, ["rescue", "--json"]);
      floor.run(wc.repo, env, round >= WARMUP);
      listed = (JSON.parse(b.stdout) as unknown[]).length;
      // 5 stash entries, 5 amended commits, the branch's tip, 20 contents.
      if (listed !== 31) throw new Error(`git undo rescue listed ${listed} items, not 31`);
      if (round >= WARMUP) {
        fsck.push(a.ms);
        rescue.push(b.ms);
        rescueSpawns.push(b.spawns);
      }
    }
    const ratio = median(rescue) / median(fsck);
    console.log(
      [
        `rescue bench: medium fixture (${wc.tracked.length} tracked files), 50 snapshots, ${listed} lost items; ${RUNS} runs (median), load ${loadavg()[0]!.toFixed(2)}; ${git("--version").stdout.trim()}`,
        floor.describe(),
        "",
        "| case | median | vs git fsck | target | Git processes |",
        "|---|---|---|---|---|",
        `| git fsck --unreachable --no-reflogs (plain Git) | ${median(fsck).toFixed(0)} ms | | | 1 |`,
        `| git undo rescue --json | ${median(rescue).toFixed(0)} ms | ${ratio.toFixed(2)}x | at most 2x: ${ratio <= 2 ? "met" : "MISSED"} | ${counts(rescueSpawns)} |`,
      ].join("\n"),
    );
    return ratio <= 2;
  } finally {
    wc.remove();
  }
}
