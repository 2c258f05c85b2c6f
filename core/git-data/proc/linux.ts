// The process table read from Linux's /proc: one small file per process.
import { readFileSync } from "node:fs";
import { completeTable } from "./table.ts";
import type { OwnProcess, ProcessInfo, ProcessTable } from "./types.ts";

/** Clock ticks per second in /proc/<pid>/stat (USER_HZ: 100 on every architecture Bun runs on). */
const USER_HZ = 100;

/** When the machine booted (ms since the epoch), from /proc/uptime (hundredths of a second). */
function bootMs(): number | null {
  try {
    const up = Number(readFileSync("/proc/uptime", "latin1").split(" ")[0]);
    return Number.isFinite(up) ? Date.now() - up * 1000 : null;
  } catch {
    return null;
  }
}

let boot: number | null | undefined;
/** One process from /proc (the boot time read once per process); null without /proc or without that pid. */
function procStat(pid: number): ProcessInfo | null {
  boot ??= bootMs();
  if (boot === null || !Number.isInteger(pid) || pid <= 0) return null;
  try {
    return parseStat(pid, readFileSync(`/proc/${pid}/stat`, "latin1"), boot);
  } catch {
    return null;
  }
}

/** "pid (comm) state ppid ... starttime ...": comm may hold spaces and parentheses, so fields follow the last ")". */
function parseStat(pid: number, line: string, boot: number): ProcessInfo | null {
  const open = line.indexOf("(");
  const close = line.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const f = line.slice(close + 2).split(" ");
  const ppid = Number(f[1]);
  const ticks = Number(f[19]);
  if (!Number.isInteger(ppid) || !Number.isFinite(ticks)) return null;
  return { pid, ppid, name: line.slice(open + 1, close), startMs: boot + (ticks * 1000) / USER_HZ, zombie: f[0] === "Z" || f[0] === "X" };
}

/** The table from /proc (kill(0) sent by `self`); null without /proc. */
export function procBackend(self: OwnProcess): ProcessTable | null {
  if (bootMs() === null) return null;
  return completeTable(self, {
    backend: "proc",
    // A tick, and the boot time read from a clock that may have moved a little since.
    resolutionMs: 1000,
    get(pids) {
      const found = new Map<number, ProcessInfo>();
      for (const pid of pids) {
        const p = procStat(pid);
        if (p) found.set(pid, p);
      }
      return found;
    },
    ancestry(pid, depth, last) {
      const chain: ProcessInfo[] = [];
      for (let p = procStat(pid); p && chain.length < depth; p = p.ppid > 1 && !last?.(p) ? procStat(p.ppid) : null) chain.push(p);
      return chain;
    },
    commandLine(pid) {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0+$/, "").replaceAll("\0", " ");
      } catch {
        return null;
      }
    },
  });
}

/**
 * The CPU this process and the children it has waited for have used, in ms
 * (utime, stime, cutime, cstime of /proc/self/stat); null without /proc.
 * For the worker's trace (tests, benches).
 */
export function selfCpuMs(): number | null {
  try {
    const stat = readFileSync("/proc/self/stat", "latin1");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(f[i]), 0) * (1000 / USER_HZ);
  } catch {
    return null;
  }
}
