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

/**
 * What only the running process knows or does itself, given by its entry
 * point (cli/main.ts, worker/main.ts): its pid, and kill(pid, 0), which throws
 * as kill(2) fails (ESRCH: no such process; EPERM: someone else's).
 */
export interface OwnProcess {
  readonly pid: number;
  signal(pid: number): void;
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
  /**
   * `pid` and its ancestors, nearest first, at most `depth` of them, and
   * none above the first that `last` accepts (the caller reads no further:
   * /proc is then not read for them).
   */
  ancestry(pid: number, depth: number, last?: (p: ProcessInfo) => boolean): ProcessInfo[];
  /** A process's command line, its arguments joined by spaces; null when it cannot be read. */
  commandLine(pid: number): string | null;
  /**
   * Whether a process with this pid is alive (EPERM: it exists but belongs to
   * someone else). A zombie is not: it has exited and only waits for its
   * parent to collect its status, so whatever it held it holds no more.
   */
  alive(pid: number): boolean;
  /** When the process with this pid started (ms since the epoch, to `resolutionMs`); null when the table shows none. */
  startedAt(pid: number): number | null;
  /** Whether the process with this pid has exited and waits to be reaped. */
  isZombie(pid: number): boolean;
  /** The pid of its parent; null when the table shows no such process. */
  parent(pid: number): number | null;
  /** Its program's name (ProcessInfo.name); null when the table shows no such process. */
  name(pid: number): string | null;
}

/** What a backend reads itself; the rest of ProcessTable follows from it (table.ts completeTable). */
export type TableReader = Pick<ProcessTable, "backend" | "resolutionMs" | "get" | "ancestry" | "commandLine">;

/**
 * The machine's processes as the entry point hands them down: its own pid,
 * and the table when one answers (null: GIT_UNDO_PROCESS_TABLE=none, or
 * neither /proc nor ps; then callers fall back to rules that need no process
 * information).
 */
export interface Processes {
  readonly selfPid: number;
  readonly table: ProcessTable | null;
  /** Whether a process with this pid is alive: the table's answer, or without one kill(0)'s. */
  alive(pid: number): boolean;
  /** When the process with this pid started; null where there is no table, or it shows none. */
  startedAt(pid: number): number | null;
}
