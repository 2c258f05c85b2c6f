// Output helpers shared by the commands: colours, relative dates, JSON.
import { fstatSync, writeSync } from "node:fs";
import type { Colors } from "picocolors/types";
import { usage } from "../core/errors.ts";
import { escapeControls } from "../core/validate.ts";
import { parseColorWhen, type ColorWhen } from "../core/repo.ts";

// picocolors' default export decides on its own at import time, by asking
// process.stdout whether it is a terminal: setting up that stream costs Bun
// about 10 ms. We decide per call, and load it only when a colour is wanted.
let pc: Colors | undefined;
const colors = (): Colors => (pc ??= (require("picocolors") as { createColors(on: boolean): Colors }).createColors(true));

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
  if (process.env.NO_COLOR || process.env.TERM === "dumb") return false;
  if (stream) return Boolean(stream.isTTY);
  // A terminal is a character device: anything else (a pipe, a file) needs no stream set up to tell.
  return isCharacterDevice(1) && Boolean(process.stdout.isTTY);
}

/** Whether `fd` is a terminal. node:tty is loaded only for a character device: it costs a command's start ~13 ms. */
export async function isTerminal(fd: number): Promise<boolean> {
  return isCharacterDevice(fd) && (await import("node:tty")).isatty(fd);
}

function isCharacterDevice(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return false;
  }
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
/**
 * Write to stdout (fd 1) or stderr (fd 2) directly, without setting up
 * process.stdout. A full non-blocking pipe hands the rest to the stream,
 * which waits; a reader that went away (`git undo list | head`) ends the
 * output quietly, as it ends Git's.
 */
export function write(fd: 1 | 2, text: string): void {
  if (closed && fd === 1) return;
  const bytes = Buffer.from(terminalSafe(text));
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
    if (code !== "EAGAIN") throw e;
    (fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(done));
  }
}

/**
 * What a terminal would act on, made visible: text read from snapshots
 * (summaries, ref names, stash messages, paths) may hold escape sequences
 * that move the cursor, retitle the window or rewrite what was printed. Every
 * write goes through here; only newlines, tabs and the colour sequences
 * (SGR, `ESC [ ... m`) pass. Newlines inside a value (a path) are escaped
 * where the value is put into a line (core/validate.ts escapeControls).
 */
export function terminalSafe(text: string): string {
  if (!UNSAFE.test(text)) return text;
  return text.replace(UNSAFE_ALL, (m) => (m.startsWith("\x1b[") && m.endsWith("m") && m.length > 2 ? m : escapeControls(m)));
}
// An SGR sequence is matched whole so that it can pass; every other control character is matched alone.
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_ALL = /\x1b\[[0-9;]*m|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

export function out(line = ""): void {
  write(1, `${line}\n`);
}

export function json(value: unknown): void {
  write(1, `${JSON.stringify(value, null, 2)}\n`);
}

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
