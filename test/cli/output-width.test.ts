// Issue #30.17: output at 80 columns. A line longer than the terminal is
// broken at spaces (the terminal broke the restore report and the
// did-you-mean line mid-word); the picker's footer drops whole hints instead
// of ending in `E…`. Pipes, where the width is unknown, get whole lines.
import { afterEach, expect, test } from "bun:test";
import { fitHints, wrapWords } from "../../cli/wrap.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, tempDir, type TestRepo } from "../helpers/repo.ts";
import { hasTmux, Terminal } from "../helpers/tmux.ts";
import { VirtualTerminal } from "../helpers/vterm.ts";

// Ages go on between two runs: left out of what is compared.
const words = (lines: string) => lines.replace(/\d+\s+(second|minute)s?\s+ago/g, "").split(/\s+/).filter(Boolean);
const longest = (out: string) => Math.max(...out.trimEnd().split("\n").map((l) => Bun.stringWidth(l)));

test("wrapWords breaks at spaces only, indents what follows, keeps a word longer than the width whole", () => {
  const line = "  only the state left has these files: a.txt, b.txt; to get them back: git undo redo or git undo restore 4";
  const lines = wrapWords(line, 40);
  expect(lines.length).toBeGreaterThan(2);
  for (const l of lines) expect(Bun.stringWidth(l)).toBeLessThanOrEqual(40);
  expect(lines[0]).toStartWith("  only");
  for (const l of lines.slice(1)) expect(l).toMatch(/^ {4}\S/);
  expect(words(lines.join("\n"))).toEqual(words(line));
  expect(wrapWords("short", 40)).toEqual(["short"]);
  const path = `x${"/dir".repeat(20)}`;
  expect(wrapWords(`error: ${path} is in the way`, 30)).toEqual(["error:", `  ${path}`, "  is in the way"]);
  // Colours take no columns.
  expect(wrapWords("\x1b[1mbold\x1b[22m words", 10)).toEqual(["\x1b[1mbold\x1b[22m words"]);
});

test("fitHints drops whole hints, the lowest ranks first, and keeps their order", () => {
  const hints = [
    { text: "a move", rank: 1 },
    { text: "b restore", rank: 3 },
    { text: "c file", rank: 2 },
    { text: "d quit", rank: 4 },
  ];
  expect(fitHints(hints, 100)).toBe("a move · b restore · c file · d quit");
  expect(fitHints(hints, 30)).toBe("b restore · c file · d quit");
  expect(fitHints(hints, 20)).toBe("b restore · d quit");
});

/** #1 with a long summary, #2 the current state. */
function longSummary(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  r.ok("snapshot", "-m", "rewrote the configuration loader so that every value is checked before use");
  r.commit("two", { "a.txt": "two\n", "b.txt": "new\n" });
  r.ok("snapshot");
  return r;
}

test("COLUMNS=80: the restore report and the dry run break at spaces, within 79 columns; a pipe gets whole lines", () => {
  const r = longSummary();
  const whole = r.undo(["restore", "--dry-run", "1"]);
  expect(longest(whole.stdout)).toBeGreaterThan(80);
  const fitted = r.undo(["restore", "--dry-run", "1"], { env: { COLUMNS: "80" } });
  expect(fitted.code).toBe(whole.code);
  expect(longest(fitted.stdout)).toBeLessThanOrEqual(79);
  expect(words(fitted.stdout)).toEqual(words(whole.stdout));

  const restored = r.undo(["restore", "1"], { env: { COLUMNS: "80" } });
  expect(restored.code).toBe(0);
  expect(longest(restored.stdout)).toBeLessThanOrEqual(79);
  expect(restored.stdout).toMatch(/^Restored #1 · rewrote the configuration loader so that every value is checked\n {2}before use · /m);
});

test("COLUMNS=80: did-you-mean and error lines break at spaces; without a width each is one line", () => {
  const r = longSummary();
  const typed = "restore-the-snapshot-from-yesterday-morning";
  const fitted = r.undo([typed], { env: { COLUMNS: "80" } });
  expect(fitted.code).toBe(1);
  expect(longest(fitted.stderr)).toBeLessThanOrEqual(79);
  expect(fitted.stderr.split("\n")[1]).toBe("  command. See 'git undo --help'.");
  const whole = r.undo([typed]);
  expect(words(fitted.stderr)).toEqual(words(whole.stderr));
  expect(whole.stderr.split("\n")[0]).toBe(`git undo: '${typed}' is not a git undo command. See 'git undo --help'.`);

  const option = r.undo(["restore", "--skip-mising", "1"], { env: { COLUMNS: "60" } });
  expect(option.code).toBe(129);
  expect(longest(option.stderr)).toBeLessThanOrEqual(59);
  expect(words(option.stderr)).toEqual(words(r.undo(["restore", "--skip-mising", "1"]).stderr));
  expect(option.stderr).toContain("'--skip-missing'");
});

const terminals: VirtualTerminal[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) await t.kill();
});

test("80 columns: the picker's footer shows whole hints, Esc quit and ^F this file among them", async () => {
  const r = longSummary();
  const t = new VirtualTerminal(r, 80, 24);
  terminals.push(t);
  t.start(["pick"]);
  await t.waitForText("Restoring #1");
  const footer = (s: string) => s.split("\n").find((l) => l.startsWith("└")) ?? "";
  expect(footer(t.screen())).toBe("└  ↑↓ move · Tab diff · Enter restore · ^R revert · Esc quit");
  t.keys("Tab");
  const s = await t.waitForText("diff: now -> #1");
  const line = footer(s);
  expect(line).not.toContain("…");
  expect(line).toContain("^F this file");
  expect(line).toEndWith("Esc quit");
  expect(Bun.stringWidth(line)).toBeLessThanOrEqual(79);
  t.keys("Escape");
  expect(await t.exitCode()).toBe(1);
});

test.skipIf(!hasTmux())("on a real terminal of 64 columns, COLUMNS unset: the error line breaks at spaces within the terminal's width", async () => {
  const r = longSummary();
  const typed = "restore-the-snapshot-from-yesterday-morning";
  const t = new Terminal(r, 64, 20);
  try {
    t.start([typed], { COLUMNS: "" });
    expect(await t.exitCode()).toBe(1);
    // One column short of the terminal, as at 80 (the cursor's column at the end).
    const expected = wrapWords(`git undo: '${typed}' is not a git undo command. See 'git undo --help'.`, 63);
    expect(expected.length).toBe(2);
    expect(t.screen().split("\n").slice(0, 2)).toEqual(expected);
  } finally {
    t.kill();
  }
  // The width is stty's (cheaper than Node's streams): one that says 50 columns is believed.
  const bin = tempDir("stty");
  writeFileSync(join(bin, "stty"), '#!/bin/sh\n[ "$1" = size ] && [ -t 0 ] && echo "20 50"\n', { mode: 0o755 });
  const narrow = new Terminal(r, 64, 20);
  try {
    narrow.start([typed], { COLUMNS: "", PATH: `${bin}:${r.env.PATH}` });
    expect(await narrow.exitCode()).toBe(1);
    const expected = wrapWords(`git undo: '${typed}' is not a git undo command. See 'git undo --help'.`, 49);
    expect(narrow.screen().split("\n").slice(0, expected.length)).toEqual(expected);
  } finally {
    narrow.kill();
  }
});
