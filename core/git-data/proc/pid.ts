// Whether a pid is taken, asked of the kernel without a process: shared by
// pidAlive (core/git-data/proc/index.ts) and the ps backend, which spares a `ps` for a
// pid no process has.

/** Whether a process has this pid (a zombie too; EPERM: someone else's): kill(0). */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
