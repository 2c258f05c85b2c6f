// The process a command runs in, as cli/main.ts gives it to the command
// (cli/io.ts): its terminal for the picker (io.terminal), what keeps a restore
// whole (io.guard), and what only a real process on a real terminal has
// (io.host): its standard streams as streams (the pager, the spinner and
// init's question draw on them), their widths, its signals and its exit. A
// command run in a test's own process gets none of these, and goes without.
// Below cli/main.ts, this is the one module that touches `process`.
import { closeSync, fstatSync, openSync, readlinkSync, statSync } from "node:fs";
import type { ProcessGuard } from "../core/restore/index.ts";
import type { ProcessHost, TerminalStreams } from "./io.ts";

/** `fn` runs on each of `signals` instead of the default (ending the process), until the returned function is called. */
function onSignals(signals: readonly NodeJS.Signals[], fn: () => void): () => void {
  for (const s of signals) process.on(s, fn);
  return () => {
    for (const s of signals) process.off(s, fn);
  };
}

/** Terminal devices by the name Linux's /proc/self/fd gives them: pseudo-terminals, consoles, serial lines. */
const TERMINAL_DEVICE = /^\/dev\/(pts\/\d+|tty\w*|console)$/;

/**
 * Whether `fd` is a terminal, asking node:tty only when nothing cheaper can
 * tell: loading it sets up Node's streams, about 8 ms of a start. Anything
 * but a character device is none; /dev/null (scripts, `>/dev/null`) is none;
 * on Linux a device named as a terminal is one.
 */
function fdIsTerminal(fd: number): boolean {
  let st;
  try {
    st = fstatSync(fd);
  } catch {
    return false;
  }
  if (!st.isCharacterDevice()) return false;
  try {
    if (st.rdev === statSync("/dev/null").rdev) return false;
  } catch {
    /* no /dev/null: node:tty below */
  }
  try {
    if (TERMINAL_DEVICE.test(readlinkSync(`/proc/self/fd/${fd}`))) return true;
  } catch {
    /* no /proc (macOS, the BSDs): node:tty below */
  }
  return (require("node:tty") as typeof import("node:tty")).isatty(fd);
}

/**
 * The width of the terminal at `fd` as `stty size` reads it (about 1.5 ms),
 * not through the stream's columns (setting up Node's streams, about 6 ms).
 * stty reads its stdin: the terminal opened again through /dev/fd. Null when
 * that fails; the stream answers then.
 */
function sttyColumns(fd: number): number | null {
  let tty: number;
  try {
    tty = openSync(`/dev/fd/${fd}`, "r");
  } catch {
    return null;
  }
  try {
    const r = Bun.spawnSync({ cmd: ["stty", "size"], stdin: tty, stdout: "pipe", stderr: "ignore" });
    const m = /^\d+ (\d+)$/.exec(r.stdout.toString().trim());
    return r.exitCode === 0 && m ? Number(m[1]) : null;
  } catch {
    return null;
  } finally {
    closeSync(tty);
  }
}

/** Waits for the process's exit, until the returned function is called. */
function atExit(fn: () => void): () => void {
  process.once("exit", fn);
  return () => process.off("exit", fn);
}

/** The process's own host; `processEnv` is the process's environment (picocolors reads it as it loads). */
export const processHost = (processEnv: NodeJS.ProcessEnv): ProcessHost => ({
  async isTerminal(fd) {
    return fdIsTerminal(fd);
  },
  stdoutIsTerminal() {
    return fdIsTerminal(1);
  },
  columns(fd) {
    if (!fdIsTerminal(fd)) return null;
    const columns = sttyColumns(fd) ?? (fd === 1 ? process.stdout : process.stderr).columns;
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
  picocolors: () => loadPicocolors(processEnv),
  onInterrupt: (fn) => onSignals(["SIGINT", "SIGTERM"], fn),
  atExit,
  exit(code) {
    process.exit(code);
  },
});

/**
 * picocolors, loaded without its own look at the terminal: as it loads it
 * asks process.stdout whether it is one, which sets up Node's streams (about
 * 8 ms of a start). FORCE_COLOR, set while it loads, answers first; git-undo
 * decides on colour itself (cli/ui.ts) and uses only createColors. `env` is
 * the process's own (cli/main.ts passes it in): the one picocolors reads.
 */
export function loadPicocolors(env: NodeJS.ProcessEnv): typeof import("picocolors") {
  const before = env.FORCE_COLOR;
  env.FORCE_COLOR = "1";
  try {
    return require("picocolors") as typeof import("picocolors");
  } finally {
    if (before === undefined) delete env.FORCE_COLOR;
    else env.FORCE_COLOR = before;
  }
}

/** The process's own terminal, when stdin and stdout are one. */
export function processTerminal(): TerminalStreams | null {
  return fdIsTerminal(0) && fdIsTerminal(1) ? { input: process.stdin, output: process.stdout } : null;
}

/** This process keeps a restore whole: Ctrl-C, SIGTERM and a closing terminal wait for it, index.lock goes at exit. */
export const processGuard: ProcessGuard = {
  holdInterruptions: () => onSignals(["SIGINT", "SIGTERM", "SIGHUP"], () => {}),
  atExit,
};
