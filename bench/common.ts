// What the benchmarks share: timed commands, `git undo`
// run as a user runs it (through Git and the launcher) with its Git processes
// counted, cases with their samples and targets, and the tables they print.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { buildBundle } from "../build/bundle.ts";
import { processesFor, useProcesses } from "../core/git-data/proc/index.ts";
import type { WorkingCopy } from "./fixture.ts";

export const ROOT = join(import.meta.dir, "..");

// The benches that call the core in their own process are its entry point: they give it the process table, as cli/main.ts does.
useProcesses(processesFor(process.env.GIT_UNDO_PROCESS_TABLE, { pid: process.pid, signal: (pid) => process.kill(pid, 0) }));

// Every bench times git-undo as users run it: from the bundle, built now
// from the sources as they are (a stale one would run the sources).
await buildBundle(ROOT);

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export interface Timed {
  ms: number;
  stdout: string;
  stderr: string;
}

/** Run a command to its end, timed; any exit code outside `okExit` throws. */
export function timed(cmd: string[], cwd: string, env: Record<string, string>, okExit: readonly number[] = [0], input?: string): Timed {
  const t = performance.now();
  const r = Bun.spawnSync({ cmd, cwd, env, stdin: input === undefined ? "ignore" : Buffer.from(input), stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - t;
  if (!okExit.includes(r.exitCode ?? -1)) throw new Error(`${cmd.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
  return { ms, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** Plain Git in a repository; its output, trimmed. */
export const gitOut = (cwd: string, env: Record<string, string>, args: string[], input?: string): string =>
  timed(["git", ...args], cwd, env, [0], input).stdout.trim();

export function gitVersion(): string {
  return Bun.spawnSync({ cmd: ["git", "--version"], stdout: "pipe" }).stdout.toString().trim().replace(/^git version /, "");
}

/** "load average 1.20 0.90 0.70". */
export const loadAverage = (): string => `load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`;

/** The round counter on stderr. */
export function progress(round: number, rounds: number, warmup: number): void {
  process.stderr.write(`\rround ${round + 1}/${rounds}${round < warmup ? " (warm-up)" : ""}   `);
  if (round + 1 === rounds) process.stderr.write("\n");
}

/** CPU milliseconds of the processes this one has waited for (cutime + cstime, /proc). */
export function childCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "latin1");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[13]) + Number(f[14])) * 10;
}

/** CPU milliseconds of this process and the children it has waited for. */
export function cpuMs(): number {
  const own = process.cpuUsage();
  return (own.user + own.system) / 1000 + childCpuMs();
}

/**
 * Bun running an empty script: the floor under every `git undo` command and
 * worker start (Bun's own start), measured in the same run as the figures it
 * stands beside.
 */
export class BunFloor {
  private readonly script: string;
  readonly wallMs: number[] = [];
  readonly cpuMs: number[] = [];
  constructor(dir: string) {
    this.script = join(dir, "empty-bun-floor.ts");
    writeFileSync(this.script, "");
  }
  /** One run: its wall time and CPU (user + system, from /proc, in 10 ms ticks), kept for describe() when `keep`. */
  run(cwd: string, env: Record<string, string>, keep = true): { ms: number; cpuMs: number } {
    const c0 = childCpuMs();
    const { ms } = timed([process.execPath, this.script], cwd, env);
    const cpuMs = childCpuMs() - c0;
    if (keep) {
      this.wallMs.push(ms);
      this.cpuMs.push(cpuMs);
    }
    return { ms, cpuMs };
  }
  /** "empty Bun 9 ms wall, 10 ms CPU (median of 5)". */
  describe(): string {
    if (this.wallMs.length === 0) return "empty Bun: not measured";
    return `empty Bun (the floor: Bun ${Bun.version} running an empty script) ${median(this.wallMs).toFixed(1)} ms wall, ${median(this.cpuMs).toFixed(0)} ms CPU (median of ${this.wallMs.length})`;
  }
}

/** What GIT_UNDO_WORKER_TRACE says: `start <pid>`, `lost <pid>`, `stop <pid> <cpu ms>` lines. */
export interface WorkerTrace {
  /** Worker processes started (each pid once, whether it became the worker or lost the race). */
  pids: number[];
  /** Of them, those that became the worktree's worker. */
  started: number[];
  /**
   * CPU milliseconds each worker had used by its last stop (its own and its
   * Git processes'). A worker that stops and takes over again reports a
   * running total, so only its last stop counts.
   */
  cpuByPid: Map<number, number>;
}

export function readWorkerTrace(path: string): WorkerTrace {
  const pids = new Set<number>();
  const started = new Set<number>();
  const cpuByPid = new Map<number, number>();
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const [event, pidText, cpu] = line.split(" ");
    const pid = Number(pidText);
    if (!(pid > 0)) continue;
    if (event === "start" || event === "lost") pids.add(pid);
    if (event === "start") started.add(pid);
    if (event === "stop" && cpu !== undefined && cpu !== "") cpuByPid.set(pid, Number(cpu));
  }
  return { pids: [...pids], started: [...started], cpuByPid };
}

/** The CPU all the traced workers reported at their last stop. */
export const workerCpuTotal = (t: WorkerTrace): number => [...t.cpuByPid.values()].reduce((a, b) => a + b, 0);

/**
 * Stop the worker of `undoDir` (SIGTERM: it reports its CPU and leaves), when
 * worker.pid names one this bench's trace saw start: never a process the
 * bench did not start.
 */
export function stopWorker(trace: string, undoDir: string): void {
  const ours = new Set(readWorkerTrace(trace).started);
  let pid = 0;
  try {
    pid = Number(readFileSync(join(undoDir, "worker.pid"), "utf8").trim());
  } catch {
    return;
  }
  if (!ours.has(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    /* gone already */
  }
}

/** Lines in a trace file (GIT_UNDO_TRACE_SPAWNS: one per Git process); 0 when there is none. */
export function lineCount(path: string): number {
  try {
    return readFileSync(path, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}

/** CPU milliseconds a live process and the children it has waited for have used (/proc); null when it is gone. */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(f[i]), 0) * 10;
  } catch {
    return null;
  }
}

/** Edits that change content but look like ordinary work: a line appended to `n` tracked files. */
export class Editor {
  private originals = new Map<string, string>();
  private next = 0;
  constructor(
    private readonly wc: WorkingCopy,
    /** Steps between the files edited, so they spread over the tree. */
    private readonly stride = 7919,
  ) {}
  edit(n: number, round: number): void {
    for (let i = 0; i < n; i++) {
      // A different file each time.
      const rel = this.wc.tracked[(this.next++ * this.stride) % this.wc.tracked.length]!;
      const path = join(this.wc.repo, rel);
      if (!this.originals.has(path)) this.originals.set(path, readFileSync(path, "utf8"));
      appendFileSync(path, `// edited in round ${round}\n`);
    }
  }
  /** Put the edited files back, so every round starts from the clean checkout. */
  revert(): void {
    for (const [path, content] of this.originals) writeFileSync(path, content);
    this.originals.clear();
  }
}

export interface CliRun extends Timed {
  /** The Git commands it ran (GIT_UNDO_TRACE_SPAWNS), `-c` settings left out. */
  commands: string[];
}

/**
 * `git undo` as a user runs it: Git finds git-undo on PATH (a folder holding
 * the command install.sh writes), the launcher starts Bun. Every run counts its Git
 * processes through GIT_UNDO_TRACE_SPAWNS.
 */
export class Cli {
  readonly bin = mkdtempSync(join(tmpdir(), "git-undo-bench-bin-"));
  private readonly trace = join(this.bin, "spawns.txt");
  /** The environment of the repository's own Git, with git-undo on PATH. */
  readonly env: Record<string, string>;

  constructor(env: Record<string, string>) {
    // The command as install.sh writes it.
    Bun.spawnSync({ cmd: ["sh", join(ROOT, "cli", "write-command"), ROOT, join(this.bin, "git-undo")] });
    this.env = { ...env, PATH: `${this.bin}:${process.env.PATH ?? ""}`, GIT_UNDO_BUN: process.execPath };
  }

  /** `git undo <args>`; exit 1 is accepted only where `okExit` says so (`snapshot` with nothing new). */
  run(args: string[], cwd: string, okExit: readonly number[] = [0]): CliRun {
    writeFileSync(this.trace, "");
    const r = timed(["git", "undo", ...args], cwd, { ...this.env, GIT_UNDO_TRACE_SPAWNS: this.trace }, okExit);
    const commands = readFileSync(this.trace, "utf8").split("\n").filter(Boolean).map((a) => a.replace(/^(-c \S+ )+/, ""));
    return { ...r, commands };
  }

  remove(): void {
    rmSync(this.bin, { recursive: true, force: true });
  }
}

/** The first word of each Git command, for a one-line summary of what a command ran. */
export const commandNames = (commands: readonly string[]): string => commands.map((c) => c.split(" ")[0]).join(", ");

export interface Sample {
  ms: number;
  /** Git processes the run started; null where that is not counted (plain Git, Bun's start). */
  spawns: number | null;
}

/** A limit against the table's baseline: at most `ratio` times its median, and at most `spawns` Git processes. */
export interface Target {
  ratio: number;
  spawns?: number;
  /** The ratio is taken with the empty Bun's median (the floor case of the table) taken off this case's first. */
  aboveFloor?: boolean;
  /** The ratio is to this case's median rather than to the table's baseline. */
  against?: Case;
}

/** One row of a table: the samples of one case, after the warm-up rounds. */
export class Case {
  readonly samples: Sample[] = [];
  /** The Git commands of the last run, for the CLI cases. */
  commands: string[] = [];
  constructor(
    readonly name: string,
    private readonly warmup: number,
    readonly target: Target | null = null,
  ) {}
  add(round: number, s: Sample): void {
    if (round >= this.warmup) this.samples.push(s);
  }
  median(): number {
    return median(this.samples.map((s) => s.ms));
  }
  best(): number {
    return Math.min(...this.samples.map((s) => s.ms));
  }
  /** The distinct process counts seen, "10/11"; empty where none was counted. */
  spawns(): string {
    const counts = [...new Set(this.samples.flatMap((s) => (s.spawns === null ? [] : [s.spawns])))].sort((a, b) => a - b);
    return counts.join("/");
  }
  maxSpawns(): number {
    return Math.max(0, ...this.samples.map((s) => s.spawns ?? 0));
  }
  /** The ratio the target is about: to the baseline's median (or the target's own), the floor taken off first when it says so. */
  targetRatio(base: number, floor: number): number {
    const t = this.target;
    return (this.median() - (t?.aboveFloor ? floor : 0)) / (t?.against ? t.against.median() : base);
  }
  /** Whether the target holds; null without a target. */
  met(base: number, floor = 0): boolean | null {
    if (!this.target) return null;
    const spawnsOk = this.target.spawns === undefined || this.maxSpawns() <= this.target.spawns;
    return this.targetRatio(base, floor) <= this.target.ratio && spawnsOk;
  }
}

export const verdict = (met: boolean | null): string => (met === null ? "" : met ? "ok" : "MISSED");

/** Columns padded to their widest cell, the first left-aligned, the others right-aligned. */
export function printTable(rows: readonly string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  for (const r of rows) console.log(r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ").trimEnd());
}

/**
 * The usual table: every case's median and best time, its ratio to the
 * baseline case's median, its target and verdict, and its Git processes.
 * Returns how many targets were missed.
 */
export function printCases(cases: readonly Case[], base: Case, baseLabel: string, floor: Case | null = null): number {
  const b = base.median();
  const f = floor?.median() ?? 0;
  let missed = 0;
  const rows = [["case", "median ms", "best ms", `x ${baseLabel}`, "target", "git processes", ""]];
  for (const c of cases) {
    const met = c.met(b, f);
    if (met === false) missed++;
    const t = c.target;
    // A target with its own terms shows the ratio it is about beside it.
    const terms = t && (t.aboveFloor || t.against) ? ` ${t.aboveFloor ? "less empty Bun, " : ""}${t.against ? `x ${t.against.name}, ` : ""}now ${c.targetRatio(b, f).toFixed(2)}x` : "";
    rows.push([
      c.name,
      c.median().toFixed(0),
      c.best().toFixed(0),
      (c.median() / b).toFixed(2),
      t ? `<= ${t.ratio}x${terms}${t.spawns !== undefined ? `, <= ${t.spawns}` : ""}` : "",
      c.spawns(),
      verdict(met),
    ]);
  }
  printTable(rows);
  return missed;
}
