// The process a command runs in, as cli/main.ts gives it to the command
// (cli/io.ts): its terminal for the picker (io.terminal), what keeps a restore
// whole (io.guard), and what only a real process on a real terminal has
// (io.host): its standard streams as streams (the pager, the spinner and
// init's question draw on them), their widths, its signals and its exit. A
// command run in a test's own process gets none of these, and goes without.
// Below cli/main.ts, this is the one module that touches `process`.
import { fstatSync } from "node:fs";
import type { ProcessGuard } from "../core/restore/index.ts";
import type { TerminalStreams } from "./io.ts";

export interface ProcessHost {
  /** Whether `fd` is a terminal (node:tty is loaded only for a character device: it costs a start ~13 ms). */
  isTerminal(fd: 0 | 1 | 2): Promise<boolean>;
  /** The same for stdout, without loading node:tty (the colours' question, asked at every write). */
  stdoutIsTerminal(): boolean;
  /** The terminal's columns at `fd`; null when it is no terminal. */
  columns(fd: 1 | 2): number | null;
  /** Hand the rest of a write that a full non-blocking pipe refused to the stream, which waits. */
  writeRest(fd: 1 | 2, bytes: Uint8Array): void;
  readonly stdin: NodeJS.ReadStream;
  readonly stderr: NodeJS.WriteStream;
  /** Run `fn` on Ctrl-C or SIGTERM instead of ending (watch stops cleanly), until the returned function is called. */
  onInterrupt(fn: () => void): () => void;
  /** Run `fn` when the process exits (the picker leaves the alternate screen), until the returned function is called. */
  atExit(fn: () => void): () => void;
  exit(code: number): never;
}

/** `fn` runs on each of `signals` instead of the default (ending the process), until the returned function is called. */
function onSignals(signals: readonly NodeJS.Signals[], fn: () => void): () => void {
  for (const s of signals) process.on(s, fn);
  return () => {
    for (const s of signals) process.off(s, fn);
  };
}

function isCharacterDevice(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return false;
  }
}

export const processHost: ProcessHost = {
  async isTerminal(fd) {
    return isCharacterDevice(fd) && (await import("node:tty")).isatty(fd);
  },
  stdoutIsTerminal() {
    // A terminal is a character device: anything else (a pipe, a file) needs no stream set up to tell.
    return isCharacterDevice(1) && Boolean(process.stdout.isTTY);
  },
  columns(fd) {
    if (!isCharacterDevice(fd)) return null;
    const columns = (fd === 1 ? process.stdout : process.stderr).columns;
    return typeof columns === "number" && columns > 0 ? columns : null;
  },
  writeRest(fd, bytes) {
    (fd === 1 ? process.stdout : process.stderr).write(bytes);
  },
  get stdin() {
    return process.stdin;
  },
  get stderr() {
    return process.stderr;
  },
  onInterrupt: (fn) => onSignals(["SIGINT", "SIGTERM"], fn),
  atExit(fn) {
    process.once("exit", fn);
    return () => process.off("exit", fn);
  },
  exit(code) {
    process.exit(code);
  },
};

/** The process's own terminal, when stdin and stdout are one (node:tty is loaded only when asked: it costs a start ~13 ms). */
export function processTerminal(): TerminalStreams | null {
  const { isatty } = require("node:tty") as typeof import("node:tty");
  return isatty(0) && isatty(1) ? { input: process.stdin, output: process.stdout } : null;
}

/** This process keeps a restore whole: Ctrl-C, SIGTERM and a closing terminal wait for it, index.lock goes at exit. */
export const processGuard: ProcessGuard = {
  holdInterruptions: () => onSignals(["SIGINT", "SIGTERM", "SIGHUP"], () => {}),
  atExit: processHost.atExit,
};
