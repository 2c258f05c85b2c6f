// Whether a pid is taken, asked of the kernel without a process: shared by
// the tables' `alive` (table.ts), the ps backend, which spares a `ps` for a
// pid no process has, and Processes.alive without a table (index.ts).
import type { OwnProcess } from "./types.ts";

/** Whether a process has this pid (a zombie too; EPERM: someone else's): kill(0), sent by the entry point's process. */
export function pidExists(self: OwnProcess, pid: number): boolean {
  try {
    self.signal(pid);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
