// Output shared by the commands: a command's Output (its streams, its colours), relative dates, JSON.
import { writeSync } from "node:fs";
import type { Colors } from "picocolors/types";
import { usage } from "../core/errors.ts";
import { escapeControls, TERMINAL_UNSAFE } from "../core/text.ts";
import { parseColorWhen, type ColorWhen } from "../core/repo.ts";
import type { CommandIO, Sink } from "./io.ts";

type Paint = (s: string) => string;
type ColorName = "bold" | "dim" | "red" | "green" | "yellow" | "cyan" | "magenta";
const COLOR_NAMES: readonly ColorName[] = ["bold", "dim", "red", "green", "yellow", "cyan", "magenta"];

/** The colours words are painted in; each paints only while `on()` says colours are on. */
export type Palette = Record<ColorName, Paint> & { readonly on: () => boolean };

function palette(on: () => boolean, colors: () => Colors): Palette {
  const paint = (name: ColorName): Paint => (s) => (on() ? colors()[name](s) : s);
  return Object.assign(Object.fromEntries(COLOR_NAMES.map((name) => [name, paint(name)])) as Record<ColorName, Paint>, { on });
}

/** picocolors as it loads in a process that has no host to load it (a test's own). */
const plainPicocolors = (): typeof import("picocolors") => require("picocolors") as typeof import("picocolors");

/** A palette that always (or never) paints: for what is drawn outside a command (a test's frames and previews). */
export function fixedPalette(on: boolean): Palette {
  let pc: Colors | undefined;
  return palette(
    () => on,
    () => (pc ??= plainPicocolors().createColors(true)),
  );
}

/**
 * A command's output: its io's two streams, written through the last guard
 * (terminalSafe), and the state they have while the command runs: whether to
 * colour, whether stdout's reader went away, and the pager that takes stdout.
 * cli/main.ts makes one per command (cli/context.ts).
 */
export class Output {
  // picocolors is loaded only when a colour is wanted, without its own look at
  // the terminal (cli/host.ts); whether to colour is decided per call, below.
  private pc: Colors | undefined;
  // Whether to colour, decided as Git decides: the command line (--color[=<when>],
  // --no-color) first, then color.undo / color.ui, then "auto": only when stdout
  // is a terminal that is not dumb, and NO_COLOR is not set.
  private fromConfig: ColorWhen | null = null;
  private closed = false;
  /** Where stdout goes instead of fd 1 while a pager runs (cli/pager.ts). */
  private stdoutSink: Sink | null = null;
  /** Colours that paint only when colours are on for stdout. */
  readonly color: Palette;

  /** `fromFlag`: the `--color=<when>` given on the command line (null: none given). */
  constructor(
    readonly io: CommandIO,
    private readonly fromFlag: ColorWhen | null = null,
  ) {
    this.color = palette(
      () => this.colorEnabled(),
      () => (this.pc ??= (io.host?.picocolors() ?? plainPicocolors()).createColors(true)),
    );
  }

  /** color.undo / color.ui of the repository the command opened. */
  setColorConfig(when: ColorWhen | null): void {
    this.fromConfig = when;
  }

  /** Whether the command line decided, rather than the configuration. */
  colorFlagGiven(): boolean {
    return this.fromFlag !== null;
  }

  /** The `<when>` in force: what `git undo` passes on to a Git command it runs for display. */
  colorWhen(): ColorWhen {
    return this.fromFlag ?? this.fromConfig ?? "auto";
  }

  colorEnabled(stream?: { isTTY?: boolean }): boolean {
    const when = this.colorWhen();
    if (when !== "auto") return when === "always";
    const env = this.io.env;
    if (env.NO_COLOR || env.TERM === "dumb") return false;
    if (stream) return Boolean(stream.isTTY);
    return this.io.stdout === null && Boolean(this.io.host?.stdoutIsTerminal());
  }

  /** Whether the command's `fd` is a terminal (a sink given instead is not). */
  async isTerminal(fd: 0 | 1 | 2): Promise<boolean> {
    const io = this.io;
    if ((fd === 1 && io.stdout) || (fd === 2 && io.stderr) || !io.host) return false;
    return io.host.isTerminal(fd);
  }

  setStdoutSink(sink: Sink | null): void {
    this.stdoutSink = sink;
  }

  /**
   * Write to stdout (fd 1) or stderr (fd 2) directly, without setting up
   * process.stdout. A full non-blocking pipe hands the rest to the stream,
   * which waits; a reader that went away (`git undo list | head`) ends the
   * output quietly, as it ends Git's.
   */
  readonly write = (fd: 1 | 2, text: string): void => {
    this.writeBytes(fd, Buffer.from(this.terminalSafe(text, fd)));
  };

  /** Bytes written as they are, past the last guard: only for what Git itself would print so (a file's lines in a diff). */
  readonly writeBytes = (fd: 1 | 2, bytes: Uint8Array): void => {
    if (this.closed && fd === 1) return;
    const given = fd === 1 ? this.io.stdout : this.io.stderr;
    if (given) return given(bytes);
    if (fd === 1 && this.stdoutSink) return this.stdoutSink(bytes);
    let done = 0;
    try {
      while (done < bytes.length) done += writeSync(fd, bytes, done);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EPIPE") {
        if (fd === 1) this.closed = true;
        return;
      }
      const host = this.io.host;
      if (code !== "EAGAIN" || !host) throw e;
      host.writeRest(fd, bytes.subarray(done));
    }
  };

  /** A line on stdout. */
  readonly out = (line = ""): void => {
    this.write(1, `${line}\n`);
  };

  /**
   * JSON carries every string exactly; the characters a terminal would act on
   * that JSON.stringify leaves raw (C1 controls, format characters, the
   * separators) are written as \u escapes, so the output is safe on a
   * terminal and still parses to the same strings.
   */
  readonly json = (value: unknown): void => {
    this.write(1, `${jsonText(value)}\n`);
  };

  /**
   * The last guard before the terminal: whatever reaches a write with a
   * character a terminal would act on (core/format/validate.ts TERMINAL_UNSAFE) has it
   * escaped. Text from snapshots is escaped where it is put into a line
   * (escapeControls), so this only catches what was missed; it lets through
   * newlines, tabs and, on stdout with colours on, colour sequences (SGR)
   * that hide nothing: never one that conceals text.
   */
  private terminalSafe(text: string, fd: 1 | 2): string {
    if (!UNSAFE_BUT_LINES.test(text)) return text;
    const colours = fd === 1 && this.colorEnabled();
    return text.replace(UNSAFE_ALL, (m) => (colours && m.startsWith("\x1b[") && visibleSgr(m) ? m : escapeControls(m)));
  }
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
 * as every Git command accepts them; the last one wins. Returns the rest, and
 * the `<when>` given (null: none).
 */
export function takeColorOptions(argv: readonly string[]): { argv: string[]; when: ColorWhen | null } {
  const rest: string[] = [];
  let given: ColorWhen | null = null;
  let ended = false;
  for (const arg of argv) {
    if (ended || (arg !== "--color" && arg !== "--no-color" && !arg.startsWith("--color="))) {
      if (arg === "--") ended = true;
      rest.push(arg);
      continue;
    }
    if (arg === "--no-color") given = "never";
    else if (arg === "--color") given = "always";
    else {
      const value = arg.slice("--color=".length);
      const when = parseColorWhen(value);
      if (when === null) throw usage(`option '--color' expects "always", "auto", or "never", not '${value}'`);
      // A boolean on the command line means always, as `git log --color=true` does.
      given = ["true", "yes", "on", "1"].includes(value.toLowerCase()) ? "always" : when;
    }
  }
  return { argv: rest, when: given };
}
