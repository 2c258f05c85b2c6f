// The process table from `ps`, for systems without /proc (macOS, the BSDs).
// Only options POSIX gives ps are used: -A, -p and -o with pid, ppid, etime,
// stat (state on some systems) and comm, with `=` for no header.
import { pidExists } from "./pid.ts";
import { completeTable } from "./table.ts";
import type { OwnProcess, ProcessInfo, ProcessTable } from "./types.ts";

/** `[[dd-]hh:]mm:ss` in seconds; NaN when it is not that. */
export function parseElapsed(text: string): number {
  const m = /^(?:(?:(\d+)-)?(\d+):)?(\d+):(\d+)$/.exec(text.trim());
  if (!m) return NaN;
  return Number(m[1] ?? 0) * 86400 + Number(m[2] ?? 0) * 3600 + Number(m[3]) * 60 + Number(m[4]);
}

/** Longer than any machine has been up (about 30 years): a start time not to be believed. */
const MAX_ELAPSED_S = 1e9;

/** One `ps` output line: pid, ppid, elapsed, state, then the name (which may hold spaces). */
export function parsePsLine(line: string, nowMs: number): ProcessInfo | null {
  const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(.*)$/.exec(line);
  if (!m) return null;
  const elapsed = parseElapsed(m[3]!);
  if (!Number.isFinite(elapsed)) return null;
  const name = m[5]!.trim();
  return {
    pid: Number(m[1]),
    ppid: Number(m[2]),
    // macOS gives comm as a path.
    name: name.slice(name.lastIndexOf("/") + 1),
    // procps can print an absurd etime for a process caught in its first
    // instant (seen: hundreds of millions of days): it has only just started.
    startMs: nowMs - (elapsed > MAX_ELAPSED_S ? 0 : elapsed) * 1000,
    zombie: m[4]!.startsWith("Z"),
  };
}

function run(ps: string, args: string[]): string | null {
  try {
    const r = Bun.spawnSync([ps, ...args], { stdin: "ignore", stdout: "pipe", stderr: "ignore", env: { LC_ALL: "C" } });
    // ps exits 1 when no pid of -p exists; its output is then empty, which is the answer.
    return r.stdout.toString();
  } catch {
    return null;
  }
}

const FIELDS = ["-o", "pid=", "-o", "ppid=", "-o", "etime=", "-o", "stat=", "-o", "comm="];

function table(ps: string, args: string[]): Map<number, ProcessInfo> {
  const now = Date.now();
  const found = new Map<number, ProcessInfo>();
  for (const line of (run(ps, [...args, ...FIELDS]) ?? "").split("\n")) {
    const p = parsePsLine(line, now);
    if (p) found.set(p.pid, p);
  }
  return found;
}

/**
 * How long what ps said about a process stands while its pid is still taken
 * (kill(0)): the worker looks at a running command every 20 ms, and a `ps`
 * costs some 3 ms of CPU (more on macOS), so it asks ps about the command at
 * most this often. A process that ends is still seen at once (its pid is
 * free); one that becomes a zombie is seen within this time. That the pid
 * went to another process meanwhile would need the first to end and the
 * system to come round to its pid again, in less time than this.
 */
export const PS_KNOWN_FOR_MS = 100;

/**
 * The table from `ps` (found on PATH, unless given), kill(0) sent by `self`;
 * null when it does not answer in the form read here. What ps said stands for
 * `knownForMs`.
 */
export function psBackend(self: OwnProcess, ps: string | null = Bun.which("ps"), knownForMs = PS_KNOWN_FOR_MS): ProcessTable | null {
  // Does ps answer here, in the form we read? Ask about ourselves once.
  if (!ps || !table(ps, ["-p", String(self.pid)]).has(self.pid)) return null;
  /** What ps said last about each process, and when it said it. */
  const known = new Map<number, { info: ProcessInfo; at: number }>();
  const read = (args: string[]): Map<number, ProcessInfo> => {
    const found = table(ps, args);
    const at = Date.now();
    for (const [pid, info] of found) known.set(pid, { info, at });
    return found;
  };
  return completeTable(self, {
    backend: "ps",
    // etime is whole seconds, measured a moment before Date.now().
    resolutionMs: 2000,
    get(pids) {
      // No ps for pids no process has: the worker asks about a command that has ended on every recording.
      const wanted = pids.filter((p) => Number.isInteger(p) && p > 0 && pidExists(self, p));
      if (wanted.length === 0) return new Map();
      const now = Date.now();
      for (const [pid, k] of known) if (now - k.at >= knownForMs) known.delete(pid);
      if (wanted.every((p) => known.has(p))) return new Map(wanted.map((p) => [p, known.get(p)!.info]));
      return read(["-p", wanted.join(",")]);
    },
    ancestry(pid, depth, last) {
      // A hook's Git has often ended by the time the worker looks: then there is no chain to read.
      if (!(Number.isInteger(pid) && pid > 0 && pidExists(self, pid))) return [];
      const all = read(["-A"]);
      const chain: ProcessInfo[] = [];
      for (let p = all.get(pid); p && chain.length < depth; p = p.ppid > 1 && !last?.(p) ? all.get(p.ppid) : undefined) chain.push(p);
      return chain;
    },
    commandLine(pid) {
      const out = run(ps, ["-p", String(pid), "-o", "args="]);
      return out ? out.trim() || null : null;
    },
  });
}
