// What a command is given by whoever runs it: the folder, the environment and
// the two output streams. cli/main.ts takes them from the process for `git
// undo`, and a test passes its own to run a command in its own process; below
// main nothing asks the process where it is or what its environment holds.
import type { Readable, Writable } from "node:stream";
import type { Env } from "../core/git.ts";
import type { ProcessGuard } from "../core/restore/index.ts";
import type { ProcessHost } from "./host.ts";

/** Where output goes instead of a file descriptor: each write's bytes, whole. */
export type Sink = (bytes: Uint8Array) => void;

/** A terminal a command takes over (the picker): its keyboard and its screen. */
export interface TerminalStreams {
  input: Readable;
  /** With the terminal's `columns` and `rows`, emitting "resize" when they change. */
  output: Writable;
}

export interface CommandIO {
  /** The folder the command runs in (after any -C). */
  cwd: string;
  env: Env;
  /** null: file descriptor 1 (a terminal, a pipe, a file). */
  stdout: Sink | null;
  /** null: file descriptor 2. */
  stderr: Sink | null;
  /** The Bun running the command (what init writes into the hooks unless GIT_UNDO_BUN names another). */
  runtime: string;
  /** The terminal the command runs in, asked for only by a command that takes it over; null when there is none. */
  terminal: () => TerminalStreams | null;
  /** What the process does to keep a restore whole (signals held, index.lock released at exit); null in a test's own process. */
  guard: ProcessGuard | null;
  /** The process itself, for a real terminal's streams, widths, signals and exit (cli/host.ts); null in a test's own process. */
  host: ProcessHost | null;
}

/** Before any command (a test drawing the picker's frames): no folder, no variables, the file descriptors. */
const NO_COMMAND: CommandIO = { cwd: "", env: {}, stdout: null, stderr: null, runtime: "", terminal: () => null, guard: null, host: null };
let current: CommandIO = NO_COMMAND;

/** The command now running gets `io`: its variables, folder and streams (cli/main.ts, once per command). */
export function useIO(io: CommandIO): void {
  current = io;
}

/** The running command's folder, environment and streams. */
export const commandIO = (): CommandIO => current;

/** One of the running command's environment variables. */
export const commandEnv = (name: string): string | undefined => commandIO().env[name];
