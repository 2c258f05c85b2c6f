// The part of ProcessTable both backends share: what follows from one
// process's entry (alive, start time, zombie, parent, name), read through the
// backend's own `get`.
import { pidExists } from "./pid.ts";
import type { OwnProcess, ProcessInfo, ProcessTable, TableReader } from "./types.ts";

/** The whole table: what `reader` reads, and the one-process questions over it (kill(0) sent by `self`). */
export function completeTable(self: OwnProcess, reader: TableReader): ProcessTable {
  const lookUp = (pid: number): ProcessInfo | undefined => reader.get([pid]).get(pid);
  return {
    backend: reader.backend,
    resolutionMs: reader.resolutionMs,
    get: (pids) => reader.get(pids),
    ancestry: (pid, depth, last) => reader.ancestry(pid, depth, last),
    commandLine: (pid) => reader.commandLine(pid),
    // A taken pid the table does not show (another user's, hidden) may well hold what it holds.
    alive: (pid) => pidExists(self, pid) && !(lookUp(pid)?.zombie ?? false),
    startedAt: (pid) => lookUp(pid)?.startMs ?? null,
    isZombie: (pid) => lookUp(pid)?.zombie ?? false,
    parent: (pid) => lookUp(pid)?.ppid ?? null,
    name: (pid) => lookUp(pid)?.name ?? null,
  };
}
