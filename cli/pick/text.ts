// Terminal text for the picker: every line it draws is cut to the terminal's
// width (ANSI colours kept, tabs expanded, control characters made visible),
// so nothing ever wraps and breaks the frame.

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/y;
const RESET = "\x1b[0m";

/** The columns a string takes on screen, colours ignored. */
export const width = (s: string): number => Bun.stringWidth(s);

/** Data from Git (paths, summaries) with control characters shown as `?`. */
export const printable = (s: string): string => s.replace(/[\x00-\x1f\x7f]/g, "?");

/**
 * At most `cols` columns of `s`: escapes kept, tabs expanded to the next
 * multiple of 8, other control characters shown as `?`, a cut marked with `…`.
 * With `pad`, the result is filled with spaces to exactly `cols`.
 */
export function fit(s: string, cols: number, pad = false): string {
  if (cols <= 0) return "";
  let out = "";
  let col = 0;
  let styled = false;
  let cut = false;
  // Leave room for the ellipsis only if the line turns out to be too long.
  const full = expand(s);
  const fits = width(full) <= cols;
  const limit = fits ? cols : cols - 1;
  for (let i = 0; i < full.length; ) {
    ANSI.lastIndex = i;
    const m = ANSI.exec(full);
    if (m) {
      out += m[0];
      styled = true;
      i += m[0].length;
      continue;
    }
    const ch = String.fromCodePoint(full.codePointAt(i)!);
    const w = width(ch);
    if (col + w > limit) {
      cut = true;
      break;
    }
    out += ch;
    col += w;
    i += ch.length;
  }
  if (cut) {
    out += "…";
    col += 1;
  }
  if (styled) out += RESET;
  return pad && col < cols ? out + " ".repeat(cols - col) : out;
}

/** Tabs to spaces (stops every 8 columns) and other control bytes to `?`, escapes untouched. */
function expand(s: string): string {
  if (!/[\x00-\x1a\x1c-\x1f\x7f]/.test(s)) return s;
  let out = "";
  let col = 0;
  for (let i = 0; i < s.length; ) {
    ANSI.lastIndex = i;
    const m = ANSI.exec(s);
    if (m) {
      out += m[0];
      i += m[0].length;
      continue;
    }
    const ch = String.fromCodePoint(s.codePointAt(i)!);
    i += ch.length;
    if (ch === "\t") {
      const n = 8 - (col % 8);
      out += " ".repeat(n);
      col += n;
    } else if (/[\x00-\x1f\x7f]/.test(ch)) {
      out += "?";
      col += 1;
    } else {
      out += ch;
      col += width(ch);
    }
  }
  return out;
}
