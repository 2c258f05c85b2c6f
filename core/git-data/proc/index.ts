// The process table: which processes exist, their parent, name and start
// time. The worker asks it which Git command a hook ran under and whether
// that command still runs; locks ask it whether their owner is alive, and
// when it started, and name this process by its pid. Two backends behind one
// interface: Linux's /proc, and `ps` for macOS and the BSDs, which have no
// /proc. The entry points (cli/main.ts, worker/main.ts) pick one from
// GIT_UNDO_PROCESS_TABLE=ps|proc|none (the suite runs the process-dependent
// tests with each), give it their own process (OwnProcess) and hand the
// result down (useProcesses), as they set the seams: nothing below them reads
// the environment or `process`.
import { procBackend } from "./linux.ts";

export { selfCpuMs } from "./linux.ts";
import { pidExists } from "./pid.ts";
import { psBackend } from "./ps.ts";
import type { OwnProcess, ProcessInfo, Processes, ProcessTable } from "./types.ts";

export type { OwnProcess, ProcessInfo, Processes, ProcessTable } from "./types.ts";

/** The tables built, per process given and per choice: finding whether ps answers costs a `ps`. */
const cache = new WeakMap<OwnProcess, Map<string, ProcessTable | null>>();

/**
 * The process table of this machine as `choice` (GIT_UNDO_PROCESS_TABLE)
 * picks it: /proc where it exists, else `ps`; null when neither answers (then
 * callers fall back to rules that need no process information).
 */
export function processTable(choice: string | undefined, self: OwnProcess): ProcessTable | null {
  const wanted = choice ?? "";
  let tables = cache.get(self);
  if (!tables) cache.set(self, (tables = new Map()));
  if (!tables.has(wanted)) tables.set(wanted, choose(wanted, self));
  return tables.get(wanted)!;
}

function choose(wanted: string, self: OwnProcess): ProcessTable | null {
  if (wanted === "none") return null;
  if (wanted !== "ps") {
    const proc = procBackend(self);
    if (proc || wanted === "proc") return proc;
  }
  return psBackend(self);
}

/**
 * The processes as `choice` (GIT_UNDO_PROCESS_TABLE) shows them to `self`.
 * The table is built when first asked for, not here: a command that never
 * asks runs no `ps`.
 */
export function processesFor(choice: string | undefined, self: OwnProcess): Processes {
  return {
    selfPid: self.pid,
    get table() {
      return processTable(choice, self);
    },
    // kill(0) first: a pid no process has needs no table. Without a table a zombie passes for alive.
    alive: (pid) => pidExists(self, pid) && (processTable(choice, self)?.alive(pid) ?? true),
    startedAt: (pid) => processTable(choice, self)?.startedAt(pid) ?? null,
  };
}

/** Whether `p` is still the process that was alive at `knownAtMs`: not a zombie, not a later process given the same pid. */
export function sameProcess(table: ProcessTable, p: ProcessInfo | undefined, knownAtMs: number): p is ProcessInfo {
  return p !== undefined && !p.zombie && p.startMs <= knownAtMs + table.resolutionMs;
}

let given: Processes | null = null;

/** The processes the running command sees, set by its entry point (and by the tests' setup for the core they call in their own process). */
export function useProcesses(processes: Processes): void {
  given = processes;
}

/** The processes the entry point gave (useProcesses): what locks, owner files and the worker's pid file ask. */
export function processes(): Processes {
  if (!given) throw new Error("git-undo: no process table was given (the entry point sets it with useProcesses)");
  return given;
}
