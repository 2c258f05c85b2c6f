// Fitting output to the terminal's width in words: a long line is broken at
// spaces (the terminal would break it mid-word), and a row of key hints drops
// whole items rather than being cut inside one.
import type { CommandIO } from "./io.ts";

/** Lines no longer than this are never measured against the terminal: asking its width starts a process (stty, cli/host.ts). */
const NARROWEST = 60;

const SGR = /\x1b\[[0-9;:]*m/g;
/** The columns a string takes on screen, colour sequences ignored. */
const widthOf = (s: string): number => Bun.stringWidth(s.replace(SGR, ""));

/**
 * The columns output to `io`'s `fd` has: COLUMNS when it is a positive number (as Git
 * reads it), else the terminal's; null for a pipe or a file, whose lines stay whole.
 */
export function outputColumns(io: CommandIO, fd: 1 | 2): number | null {
  const env = io.env.COLUMNS;
  if (env !== undefined && /^[1-9][0-9]*$/.test(env.trim())) return Number(env.trim());
  if ((fd === 1 ? io.stdout : io.stderr) !== null || !io.host) return null;
  return io.host.columns(fd);
}

/**
 * `line` broken at spaces into lines of at most `width` columns (colours take
 * none); each line after the first indented two columns more than the line
 * was. A word longer than the width (a path, a command) stays whole.
 */
export function wrapWords(line: string, width: number): string[] {
  if (widthOf(line) <= width) return [line];
  const indent = " ".repeat((/^ */.exec(line)?.[0].length ?? 0) + 2);
  const words = line.trimStart().split(" "); // runs of spaces stay (empty words)
  const lead = line.slice(0, line.length - line.trimStart().length);
  const out: string[] = [];
  let current = lead;
  let bare = true; // nothing but the indent on the current line yet
  for (const word of words) {
    const next = bare ? current + word : `${current} ${word}`;
    if (!bare && widthOf(next) > width) {
      out.push(current);
      current = indent + word;
    } else current = next;
    bare = false;
  }
  out.push(current);
  return out;
}

/** Lines for `io`'s `fd`, each fitted to its width in words; as they are where the width is unknown. */
export function fitToOutput(io: CommandIO, lines: readonly string[], fd: 1 | 2): string[] {
  if (!lines.some((l) => widthOf(l) > NARROWEST)) return [...lines];
  const columns = outputColumns(io, fd);
  // The last column stays free: a terminal that has just filled a line may wrap before the newline.
  return columns === null ? [...lines] : lines.flatMap((l) => wrapWords(l, Math.max(20, columns - 1)));
}

export interface Hint {
  text: string;
  /** Items with a lower rank are dropped first when they do not all fit. */
  rank: number;
}

/** Hints joined by `separator`, in their order, without those of the lowest ranks that do not fit in `width`. */
export function fitHints(hints: readonly Hint[], width: number, separator = " · "): string {
  const kept = [...hints];
  const joined = () => kept.map((h) => h.text).join(separator);
  while (kept.length > 1 && widthOf(joined()) > width) {
    const lowest = kept.reduce((low, h) => (h.rank < low.rank ? h : low));
    kept.splice(kept.indexOf(lowest), 1);
  }
  return joined();
}
