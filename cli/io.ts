// What a command is given by whoever runs it: the folder, the environment and
// the two output streams. cli/main.ts takes them from the process for `git
// undo`, and a test passes its own to run a command in its own process; below
// main nothing asks the process where it is or what its environment holds.
import type { Readable, Writable } from "node:stream";
import type { Env } from "../core/git.ts";
import type { ProcessGuard } from "../core/restore/index.ts";

/** Where output goes instead of a file descriptor: each write's bytes, whole. */
export type Sink = (bytes: Uint8Array) => void;

/** A terminal a command takes over (the picker): its keyboard and its screen. */
export interface TerminalStreams {
  input: Readable;
  /** With the terminal's `columns` and `rows`, emitting "resize" when they change. */
  output: Writable;
}

/** What only a real process on a real terminal has (cli/host.ts processHost). */
export interface ProcessHost {
  /** Whether `fd` is a terminal (fdIsTerminal). */
  isTerminal(fd: 0 | 1 | 2): Promise<boolean>;
  /** The same for stdout, synchronously (the colours' question, asked at every write). */
  stdoutIsTerminal(): boolean;
  /** The terminal's columns at `fd`; null when it is no terminal. */
  columns(fd: 1 | 2): number | null;
  /** Hand the rest of a write that a full non-blocking pipe refused to the stream, which waits. */
  writeRest(fd: 1 | 2, bytes: Uint8Array): void;
  readonly stdin: NodeJS.ReadStream;
  readonly stderr: NodeJS.WriteStream;
  /** picocolors, loaded without its own look at the terminal (cli/host.ts loadPicocolors). */
  picocolors(): typeof import("picocolors");
  /** Run `fn` on Ctrl-C or SIGTERM instead of ending (watch stops cleanly), until the returned function is called. */
  onInterrupt(fn: () => void): () => void;
  /** Run `fn` when the process exits (the picker leaves the alternate screen), until the returned function is called. */
  atExit(fn: () => void): () => void;
  exit(code: number): never;
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
