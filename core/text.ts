// Text made safe to show, and the format's decimal numbers: used by the format,
// its checks and every display. A module of its own, importing nothing.

/**
 * What a terminal acts on or does not show: control characters (C0, DEL, C1),
 * the line and paragraph separators, and the invisible format characters
 * (bidirectional embeddings, overrides and isolates, marks, zero-width spaces,
 * the byte-order mark, tag characters), all but the zero-width joiner and
 * non-joiner that emoji and several scripts need.
 */
export const TERMINAL_UNSAFE = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\u2028\u2029]/u;
const TERMINAL_UNSAFE_ALL = new RegExp(TERMINAL_UNSAFE.source, "gu");

/**
 * Text read from a snapshot (or any data) made safe to show: every character
 * TERMINAL_UNSAFE names as a visible escape, so that it cannot move the cursor,
 * recolour or hide what follows, retitle the terminal or reorder the line:
 * `\n`, `\t`, `\r`, `\e`, else `\xNN` or `\u{NNNN}`. The one function every
 * reader uses before text reaches a terminal; JSON carries the exact string.
 */
export function escapeControls(s: string): string {
  if (!TERMINAL_UNSAFE.test(s)) return s;
  return s.replace(TERMINAL_UNSAFE_ALL, (c) => {
    const code = c.codePointAt(0)!;
    if (c === "\n") return "\\n";
    if (c === "\t") return "\\t";
    if (c === "\r") return "\\r";
    if (code === 0x1b) return "\\e";
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}

/** A decimal number as the format writes one: no sign, no leading zero, at most ten digits (a sequence number). */
export const DECIMAL = /^(0|[1-9][0-9]{0,9})$/;

/** A list for a message: `a, b and 3 more`, each name with its control characters escaped (names come from snapshots). */
export function nameList(names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).map(escapeControls).join(", ");
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}
