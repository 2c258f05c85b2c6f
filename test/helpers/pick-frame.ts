// What every picker frame must be, whatever the terminal: whole rows, none wider than it.
import { expect } from "bun:test";

/** The picker's last row: its closing guide. */
const LAST_ROW = /^└ {2}/;

/** Every row of the picker starts with a guide symbol: a wrapped line would not. */
export function expectWholeFrame(screen: string, cols: number): void {
  const rows = screen.replace(/\n+$/, "").split("\n");
  expect(rows[0]).toMatch(/^◆ {2}Pick a state/);
  expect(rows[rows.length - 1]).toMatch(LAST_ROW);
  for (const row of rows) {
    expect(row).toMatch(/^[◆│├└]/);
    expect(Bun.stringWidth(row)).toBeLessThanOrEqual(cols);
  }
}

/**
 * Whether a real terminal's screen holds a frame drawn to its last row: tmux
 * shows a frame while it is still being written, its first rows before the rest.
 */
export function frameDrawn(screen: string): boolean {
  return LAST_ROW.test(screen.replace(/\n+$/, "").split("\n").at(-1) ?? "");
}
