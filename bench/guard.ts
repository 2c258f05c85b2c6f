// What the guard (core.fsmonitor, core/guard.ts) costs Git, measured in one
// run on each fixture against the same copy with `exit 0` hooks and no
// monitor: ordinary commands (target at most 1.1x once a worker runs), a
// discarding command with nothing unseen (1.2x), a discarding command after
// an edit no command saw (its own time plus one `git undo snapshot` after one
// edit), and what the worker holds while it watches.
//
//   bun bench/guard.ts [--rounds N] [--size medium|large|both]
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gitVersion, loadAverage, median, printTable, timed, verdict } from "./common.ts";
import { describeFixture, parseSizes, workingCopy, type FixtureSize, type WorkingCopy } from "./fixture.ts";
import { CLI } from "../test/helpers/repo.ts";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "7" },
    size: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("usage: bun bench/guard.ts [--rounds N] [--size medium|large|both]");
  process.exit(0);
}
const ROUNDS = Number(args.rounds);
const QUIET = { GIT_UNDO_INTERNAL: "1" };

const git = (w: WorkingCopy, argv: string[], env: Record<string, string> = {}) => timed(["git", ...argv], w.repo, { ...w.env, ...env }, [0, 1]).ms;
const undo = (w: WorkingCopy, argv: string[]) => timed([process.execPath, CLI, ...argv], w.repo, w.env, [0, 1]).ms;

/** Nothing left for the worker: no mark, none being recorded, no guard waiting. */
async function quiet(w: WorkingCopy): Promise<void> {
  const u = join(w.repo, ".git", "undo");
  const deadline = Date.now() + 30_000;
  for (;;) {
    const busy = existsSync(join(u, "pending")) || existsSync(join(u, "pending.taken")) || readdirSync(u).some((f) => f.startsWith("guard."));
    if (!busy) return;
    if (Date.now() > deadline) throw new Error("the worker never settled");
    await Bun.sleep(20);
  }
}

/** The lingering worker stopped, and gone: the next command starts one. */
async function stopWorker(w: WorkingCopy): Promise<void> {
  let pid = 0;
  try {
    pid = Number(readFileSync(join(w.repo, ".git", "undo", "worker.pid"), "utf8").trim());
  } catch {
    return;
  }
  if (!(pid > 0)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const deadline = Date.now() + 10_000;
  while (existsSync(`/proc/${pid}`) && Date.now() < deadline) await Bun.sleep(10);
}

function workerRssKb(w: WorkingCopy): number | null {
  try {
    const pid = readFileSync(join(w.repo, ".git", "undo", "worker.pid"), "utf8").trim();
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

async function run(size: FixtureSize): Promise<boolean> {
  const plain = await workingCopy({ size, label: "guard-plain" });
  const guarded = await workingCopy({ size, label: "guard-on" });
  try {
    const exit0 = join(plain.home, "exit0-hooks");
    mkdirSync(exit0, { recursive: true });
    for (const h of ["reference-transaction", "post-index-change"]) writeFileSync(join(exit0, h), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    git(plain, ["config", "core.hooksPath", exit0]);
    git(guarded, ["config", "undo.guard", "true"]);
    undo(guarded, ["init"]);
    const file = plain.tracked[Math.floor(plain.tracked.length / 2)]!;
    for (const w of [plain, guarded]) {
      // The large fixture is one commit: one more, so that `other` differs from HEAD.
      if (Bun.spawnSync({ cmd: ["git", "rev-parse", "-q", "--verify", "HEAD~1"], cwd: w.repo, env: w.env }).exitCode !== 0) {
        writeFileSync(join(w.repo, file), "second commit\n");
        git(w, ["commit", "-q", "-a", "-m", "second"], QUIET);
      }
      git(w, ["branch", "-f", "other", "HEAD~1"], QUIET);
    }
    // A first command starts the worker and its watch; then everything is measured warm.
    git(guarded, ["status"]);
    await quiet(guarded);
    git(guarded, ["status"]);
    await quiet(guarded);

    const cases: Array<{ name: string; target: number | null; step: (w: WorkingCopy) => Promise<number> }> = [
      { name: "status", target: 1.1, step: async (w) => git(w, ["status", "--porcelain"]) },
      { name: "diff", target: 1.1, step: async (w) => git(w, ["diff", "--quiet"]) },
      {
        name: "add (1 edit)",
        target: 1.1,
        step: async (w) => {
          writeFileSync(join(w.repo, file), `edit ${Math.random()}\n`);
          git(w, ["status", "--porcelain"]); // seen by a command: not the add's unseen edit
          if (w === guarded) await quiet(w);
          return git(w, ["add", file]);
        },
      },
      { name: "commit", target: 1.1, step: async (w) => git(w, ["commit", "-q", "-m", "bench"]) },
      {
        name: "checkout other, back",
        target: 1.1,
        step: async (w) => git(w, ["checkout", "-q", "other"]) + git(w, ["checkout", "-q", "-"]),
      },
      { name: "reset --hard, nothing unseen", target: 1.2, step: async (w) => git(w, ["reset", "-q", "--hard"]) },
      {
        name: "reset --hard after an unseen edit",
        target: null,
        step: async (w) => {
          writeFileSync(join(w.repo, file), `unseen ${Math.random()}\n`);
          return git(w, ["reset", "-q", "--hard"]);
        },
      },
    ];
    const times = new Map<string, { plain: number[]; guarded: number[] }>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of cases) {
        const t = times.get(c.name) ?? { plain: [], guarded: [] };
        times.set(c.name, t);
        for (const w of round % 2 ? [plain, guarded] : [guarded, plain]) {
          const ms = await c.step(w);
          (w === plain ? t.plain : t.guarded).push(ms);
          if (w === guarded) await quiet(w);
        }
      }
    }
    // One `git undo snapshot` after one edit, for the last case's target.
    const snap: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      writeFileSync(join(plain.repo, file), `snap ${i}\n`);
      snap.push(undo(plain, ["snapshot"]));
    }
    // The first command after the worker has left (undo.linger, 10 minutes idle): it waits for one to start. A report, no target.
    const cold = { plain: [] as number[], guarded: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      await stopWorker(guarded);
      cold.guarded.push(git(guarded, ["status", "--porcelain"]));
      cold.plain.push(git(plain, ["status", "--porcelain"]));
      await quiet(guarded);
    }
    let met = true;
    const rows = [["command", "exit 0, no monitor", "guard", "ratio", "target", ""]];
    for (const c of cases) {
      const t = times.get(c.name)!;
      const p = median(t.plain);
      const g = median(t.guarded);
      const limit = c.target === null ? p + median(snap) : p * c.target;
      const ok = g <= limit;
      met &&= ok;
      rows.push([c.name, `${p.toFixed(1)} ms`, `${g.toFixed(1)} ms`, `${(g / p).toFixed(2)}x`, c.target === null ? `<= ${limit.toFixed(0)} ms` : `<= ${c.target}x`, verdict(ok)]);
    }
    const coldRatio = median(cold.guarded) / median(cold.plain);
    rows.push(["status, the worker gone", `${median(cold.plain).toFixed(1)} ms`, `${median(cold.guarded).toFixed(1)} ms`, `${coldRatio.toFixed(2)}x`, "report", ""]);
    console.log(`\n${size}: ${describeFixture(plain)}; Git ${gitVersion()}; ${ROUNDS} rounds; ${loadAverage()}`);
    printTable(rows);
    console.log(`git undo snapshot after 1 edit: ${median(snap).toFixed(1)} ms`);
    const watch = readFileSync(join(guarded.repo, ".git", "undo", "watch-state"), "utf8").trim();
    const rss = workerRssKb(guarded);
    console.log(`worker while it watches: ${rss === null ? "?" : `${(rss / 1024).toFixed(0)} MB resident`}; ${watch}; it stays 10 minutes after the last command (undo.linger)`);
    return met;
  } finally {
    try {
      const pid = Number(readFileSync(join(guarded.repo, ".git", "undo", "worker.pid"), "utf8").trim());
      if (pid > 0) process.kill(pid, "SIGTERM");
    } catch {
      /* gone */
    }
    plain.remove();
    guarded.remove();
  }
}

let all = true;
for (const size of parseSizes(args.size, "medium")) all = (await run(size)) && all;
process.exit(all ? 0 : 1);
