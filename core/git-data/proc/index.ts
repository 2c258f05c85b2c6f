// The process table: which processes exist, their parent, name and start
// time. The worker asks it which Git command a hook ran under and whether
// that command still runs; locks ask it whether their owner is alive, and
// when it started (pidAlive, processStartMs, through the table the entry
// point chose), and name this one (selfPid). Two
// backends behind one interface: Linux's /proc, and `ps` for macOS and the
// BSDs, which have no /proc. GIT_UNDO_PROCESS_TABLE=ps|proc|none picks one
// (the suite runs the process-dependent tests with each).
import { procBackend } from "./linux.ts";

export { selfCpuMs } from "./linux.ts";
import { pidExists } from "./pid.ts";
import { psBackend } from "./ps.ts";
import type { ProcessInfo, ProcessTable } from "./types.ts";

export type { ProcessInfo, ProcessTable } from "./types.ts";

const cache = new Map<string, ProcessTable | null>();

/**
 * The process table of this machine: /proc where it exists, else `ps`; null
 * when neither answers (then callers fall back to rules that need no process
 * information).
 */
export function processTable(env: Readonly<Record<string, string | undefined>>): ProcessTable | null {
  const wanted = env.GIT_UNDO_PROCESS_TABLE ?? "";
  if (!cache.has(wanted)) cache.set(wanted, choose(wanted));
  return cache.get(wanted)!;
}

function choose(wanted: string): ProcessTable | null {
  if (wanted === "none") return null;
  if (wanted !== "ps") {
    const proc = procBackend();
    if (proc || wanted === "proc") return proc;
  }
  return psBackend();
}

/** Whether `p` is still the process that was alive at `knownAtMs`: not a zombie, not a later process given the same pid. */
export function sameProcess(table: ProcessTable, p: ProcessInfo | undefined, knownAtMs: number): p is ProcessInfo {
  return p !== undefined && !p.zombie && p.startMs <= knownAtMs + table.resolutionMs;
}

/** This process's pid: what git-undo writes into its lock and owner files. */
export const selfPid: number = process.pid;

/** GIT_UNDO_PROCESS_TABLE as the running command was given it (cli/main.ts, the worker set it, as they set the seams). */
let chosen: string | undefined;

/** The table pidAlive and processStartMs read: the one `env` picks. */
export function useProcessTable(env: Readonly<Record<string, string | undefined>>): void {
  chosen = env.GIT_UNDO_PROCESS_TABLE;
}

/** The process with this pid as the chosen table sees it; undefined when it shows none, or there is no table. */
const lookUp = (pid: number): ProcessInfo | undefined => processTable({ GIT_UNDO_PROCESS_TABLE: chosen })?.get([pid]).get(pid);

/**
 * Whether a process with this pid is alive (EPERM: it exists but belongs to
 * someone else). A zombie is not: it has exited and only waits for its parent
 * to collect its status, so whatever it held it holds no more (the table
 * tells; without one only kill(0) can).
 */
export function pidAlive(pid: number): boolean {
  // A taken pid the table does not show (another user's, hidden) may well hold what it holds.
  return pidExists(pid) && !(lookUp(pid)?.zombie ?? false);
}

/** When the process with this pid started (ms since the epoch, to the table's resolution); null where the table cannot tell. */
export const processStartMs = (pid: number): number | null => lookUp(pid)?.startMs ?? null;
