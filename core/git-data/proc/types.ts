// What the process table tells about a process, and the interface both backends implement.

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** The program's name as the system keeps it (`git`, `sh`, `make`): no path, maybe cut short. */
  name: string;
  /** When it started, in ms since the epoch (to the table's `resolutionMs`). */
  startMs: number;
  /** Exited, but not yet reaped by its parent: not running. */
  zombie: boolean;
}

export interface ProcessTable {
  readonly backend: "proc" | "ps";
  /** How coarse `startMs` is: a process may seem to have started up to this much later than it did. */
  readonly resolutionMs: number;
  /**
   * The processes among `pids` that exist (zombies included, flagged). The ps
   * backend may answer from what ps said in the last PS_KNOWN_FOR_MS, for a
   * pid that is still taken: a zombie is flagged within that time.
   */
  get(pids: readonly number[]): Map<number, ProcessInfo>;
  /** `pid` and its ancestors, nearest first, at most `depth` of them. */
  ancestry(pid: number, depth: number): ProcessInfo[];
  /** A process's command line, its arguments joined by spaces; null when it cannot be read. */
  commandLine(pid: number): string | null;
}
