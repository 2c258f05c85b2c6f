// Terminal text for the picker: every line it draws is cut to the terminal's
// width (colours kept, tabs expanded, control characters made visible),
// so nothing ever wraps and breaks the frame.
import { escapeControls, TERMINAL_UNSAFE } from "../../core/text.ts";
import { visibleSgr, type Palette } from "../ui.ts";

// Colour sequences (SGR) are drawn when colours are on and they hide nothing
// (cli/ui.ts visibleSgr): the picker's own, and Git's in its diff, whose lines
// hold the snapshot's file content. Everything else is escaped.
const ANSI = /\x1b\[[0-9;:]*m/y;
const RESET = "\x1b[0m";
const SGR_ALL = /\x1b\[[0-9;:]*m/g;
/** What is drawn with colours off: reverse video on and off, and the reset. */
const NO_COLOUR_SGR = /^\x1b\[(?:0|7|27)?m$/;

/** The columns a string takes on screen, colours ignored. */
export const width = (s: string): number => Bun.stringWidth(s);

/** Data from a snapshot or from Git (paths, summaries, messages) with every control and invisible format character escaped. */
export const printable = escapeControls;

/**
 * At most `cols` columns of `s`: escapes kept, tabs expanded to the next
 * multiple of 8, other control characters escaped, a cut marked with `…`.
 * With `pad`, the result is filled with spaces to exactly `cols`. Colour
 * sequences are drawn only while `color` is on.
 */
export function fit(color: Palette, s: string, cols: number, pad = false): string {
  if (cols <= 0) return "";
  let out = "";
  let col = 0;
  let styled = false;
  let cut = false;
  // Leave room for the ellipsis only if the line turns out to be too long.
  const full = expand(s, color.on());
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

/** Tabs to spaces (stops every 8 columns) and other unsafe characters escaped, colour sequences that may be drawn untouched. */
function expand(s: string, colours: boolean): string {
  // Reverse video is no colour: the highlighted row stays marked under NO_COLOR.
  const drawn = (sgr: string) => visibleSgr(sgr) && (colours || NO_COLOUR_SGR.test(sgr));
  if (!TERMINAL_UNSAFE.test(s.replace(SGR_ALL, (sgr) => (drawn(sgr) ? "" : sgr)))) return s;
  let out = "";
  let col = 0;
  for (let i = 0; i < s.length; ) {
    ANSI.lastIndex = i;
    const m = ANSI.exec(s);
    if (m && drawn(m[0])) {
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
    } else if (TERMINAL_UNSAFE.test(ch)) {
      const shown = escapeControls(ch);
      out += shown;
      col += shown.length;
    } else {
      out += ch;
      col += width(ch);
    }
  }
  return out;
}
