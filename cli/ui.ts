// Output helpers shared by the commands: colours, relative dates, JSON.
import { writeSync } from "node:fs";
import type { Colors } from "picocolors/types";
import { usage } from "../core/errors.ts";
import { escapeControls, TERMINAL_UNSAFE } from "../core/text.ts";
import { parseColorWhen, type ColorWhen } from "../core/repo.ts";
import { commandEnv, commandIO } from "./io.ts";
import { loadPicocolors } from "./host.ts";

// picocolors is loaded only when a colour is wanted, without its own look at
// the terminal (cli/host.ts); whether to colour is decided per call, below.
let pc: Colors | undefined;
const colors = (): Colors => (pc ??= loadPicocolors().createColors(true));

// Whether to colour, decided as Git decides: the command line (--color[=<when>],
// --no-color) first, then color.undo / color.ui, then "auto": only when stdout
// is a terminal that is not dumb, and NO_COLOR is not set.
let forced: boolean | null = null;
let fromFlag: ColorWhen | null = null;
let fromConfig: ColorWhen | null = null;

/** Force colours on or off, whatever the flags and configuration say. */
export function setColor(on: boolean): void {
  forced = on;
}

/** The `--color=<when>` given on the command line (null: none given). */
export function setColorFlag(when: ColorWhen | null): void {
  fromFlag = when;
}

/** color.undo / color.ui of the repository the command opened. */
export function setColorConfig(when: ColorWhen | null): void {
  fromConfig = when;
}

/** Whether the command line (or setColor) decided, rather than the configuration. */
export const colorFlagGiven = (): boolean => forced !== null || fromFlag !== null;

/** The `<when>` in force: what `git undo` passes on to a Git command it runs for display. */
export function colorWhen(): ColorWhen {
  if (forced !== null) return forced ? "always" : "never";
  return fromFlag ?? fromConfig ?? "auto";
}

export function colorEnabled(stream?: { isTTY?: boolean }): boolean {
  const when = colorWhen();
  if (when !== "auto") return when === "always";
  if (commandEnv("NO_COLOR") || commandEnv("TERM") === "dumb") return false;
  if (stream) return Boolean(stream.isTTY);
  const io = commandIO();
  return io.stdout === null && Boolean(io.host?.stdoutIsTerminal());
}

/** Whether the command's `fd` is a terminal (a sink given instead is not). */
export async function isTerminal(fd: 0 | 1 | 2): Promise<boolean> {
  const io = commandIO();
  if ((fd === 1 && io.stdout) || (fd === 2 && io.stderr) || !io.host) return false;
  return io.host.isTerminal(fd);
}

type Paint = (s: string) => string;
type ColorName = "bold" | "dim" | "red" | "green" | "yellow" | "cyan" | "magenta";
const wrap = (name: ColorName): Paint => (s) => (colorEnabled() ? colors()[name](s) : s);
export const color = {
  bold: wrap("bold"),
  dim: wrap("dim"),
  red: wrap("red"),
  green: wrap("green"),
  yellow: wrap("yellow"),
  cyan: wrap("cyan"),
  magenta: wrap("magenta"),
};

let closed = false;
/** Where stdout goes instead of fd 1 while a pager runs (cli/pager.ts). */
let stdoutSink: ((bytes: Uint8Array) => void) | null = null;
export function setStdoutSink(sink: ((bytes: Uint8Array) => void) | null): void {
  stdoutSink = sink;
}
/** A new command's output state: colours decided again, stdout open, no pager. */
export function resetOutput(): void {
  forced = fromFlag = fromConfig = null;
  closed = false;
  stdoutSink = null;
}
/**
 * Write to stdout (fd 1) or stderr (fd 2) directly, without setting up
 * process.stdout. A full non-blocking pipe hands the rest to the stream,
 * which waits; a reader that went away (`git undo list | head`) ends the
 * output quietly, as it ends Git's.
 */
export function write(fd: 1 | 2, text: string): void {
  writeBytes(fd, Buffer.from(terminalSafe(text, fd)));
}

/** Bytes written as they are, past the last guard: only for what Git itself would print so (a file's lines in a diff). */
export function writeBytes(fd: 1 | 2, bytes: Uint8Array): void {
  if (closed && fd === 1) return;
  const given = fd === 1 ? commandIO().stdout : commandIO().stderr;
  if (given) return given(bytes);
  if (fd === 1 && stdoutSink) return stdoutSink(bytes);
  let done = 0;
  try {
    while (done < bytes.length) done += writeSync(fd, bytes, done);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EPIPE") {
      if (fd === 1) closed = true;
      return;
    }
    const host = commandIO().host;
    if (code !== "EAGAIN" || !host) throw e;
    host.writeRest(fd, bytes.subarray(done));
  }
}

/**
 * The last guard before the terminal: whatever reaches a write with a
 * character a terminal would act on (core/format/validate.ts TERMINAL_UNSAFE) has it
 * escaped. Text from snapshots is escaped where it is put into a line
 * (escapeControls), so this only catches what was missed; it lets through
 * newlines, tabs and, on stdout with colours on, colour sequences (SGR)
 * that hide nothing: never one that conceals text.
 */
function terminalSafe(text: string, fd: 1 | 2): string {
  if (!UNSAFE_BUT_LINES.test(text)) return text;
  const colours = fd === 1 && colorEnabled();
  return text.replace(UNSAFE_ALL, (m) => (colours && m.startsWith("\x1b[") && visibleSgr(m) ? m : escapeControls(m)));
}
const UNSAFE_BUT_LINES = new RegExp(`(?![\\n\\t])${TERMINAL_UNSAFE.source}`, "u");
// An SGR sequence is matched whole so that it can pass; every other unsafe character alone.
const UNSAFE_ALL = new RegExp(`\x1b\\[[0-9;:]*m|${UNSAFE_BUT_LINES.source}`, "gu");

/**
 * Whether a colour sequence (`ESC [ <params> m`) only colours or styles what
 * follows: it sets no "concealed" attribute (8), which would hide the text
 * after it. Extended colours (38/48/58;5;n and ;2;r;g;b) are read whole.
 */
export function visibleSgr(sequence: string): boolean {
  const params = sequence.slice(2, -1).split(/[;:]/);
  for (let i = 0; i < params.length; i++) {
    const p = Number(params[i] || "0");
    if (p === 38 || p === 48 || p === 58) i += params[i + 1] === "5" ? 2 : params[i + 1] === "2" ? 4 : 1;
    else if (p === 8) return false;
  }
  return true;
}

export function out(line = ""): void {
  write(1, `${line}\n`);
}

/**
 * JSON carries every string exactly; the characters a terminal would act on
 * that JSON.stringify leaves raw (C1 controls, format characters, the
 * separators) are written as \u escapes, so the output is safe on a
 * terminal and still parses to the same strings.
 */
export function json(value: unknown): void {
  write(1, `${jsonText(value)}\n`);
}

export const jsonText = (value: unknown): string =>
  JSON.stringify(value, null, 2).replace(JSON_UNSAFE, (c) => c.split("").map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""));
// Per UTF-16 unit so that a tag character (astral) becomes its two escaped halves;
// JSON.stringify escapes every C0 control inside a string, so a raw newline is layout.
const JSON_UNSAFE = new RegExp(UNSAFE_BUT_LINES.source, "gu");
/** "3 minutes ago", in the steps Git's relative dates use. */
export function relativeAge(unixSeconds: number, now = Date.now() / 1000): string {
  const d = Math.max(0, Math.round(now - unixSeconds));
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"} ago`;
  if (d < 90) return plural(d, "second");
  const m = Math.round(d / 60);
  if (m < 90) return plural(m, "minute");
  const h = Math.round(d / 3600);
  if (h < 36) return plural(h, "hour");
  const days = Math.round(d / 86400);
  if (days < 14) return plural(days, "day");
  if (days < 70) return plural(Math.round(days / 7), "week");
  if (days < 365) return plural(Math.round(days / 30), "month");
  return plural(Math.round(days / 365), "year");
}

export const isoDate = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

export const short = (oid: string): string => oid.slice(0, 7);

/** Said where nothing is recorded because init has not run here (doctor says more). */
export const RECORDING_OFF = "recording is off here: run git undo init";

/** A size as people read it: 2.0 MiB, 512 KiB, 300 bytes. */
export function sizeText(bytes: number): string {
  const units = ["KiB", "MiB", "GiB", "TiB"];
  if (bytes < 1024) return `${bytes} bytes`;
  let n = bytes;
  let unit = "bytes";
  for (const u of units) {
    if (n < 1024) break;
    n /= 1024;
    unit = u;
  }
  return `${Number.isInteger(n) ? n : n.toFixed(1)} ${unit}`;
}

/**
 * Take `--color[=<when>]` and `--no-color` out of argv (anywhere before `--`),
 * as every Git command accepts them; the last one wins. Returns the rest.
 */
export function takeColorOptions(argv: readonly string[]): string[] {
  const rest: string[] = [];
  let ended = false;
  for (const arg of argv) {
    if (ended || (arg !== "--color" && arg !== "--no-color" && !arg.startsWith("--color="))) {
      if (arg === "--") ended = true;
      rest.push(arg);
      continue;
    }
    if (arg === "--no-color") setColorFlag("never");
    else if (arg === "--color") setColorFlag("always");
    else {
      const value = arg.slice("--color=".length);
      const when = parseColorWhen(value);
      if (when === null) throw usage(`option '--color' expects "always", "auto", or "never", not '${value}'`);
      // A boolean on the command line means always, as `git log --color=true` does.
      setColorFlag(["true", "yes", "on", "1"].includes(value.toLowerCase()) ? "always" : when);
    }
  }
  return rest;
}
