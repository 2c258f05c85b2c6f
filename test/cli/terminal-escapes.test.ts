// Issue #27.6: text from a snapshot reaches the terminal with every control
// character escaped: colour sequences (ESC[8m hides what follows), C1 controls
// (U+009B is a one-byte CSI), bidirectional overrides (U+202E reverses the
// line) and invisible format characters. One function escapes them for every
// reader; --json carries the exact strings.
import { afterEach, expect, test } from "bun:test";
import { baseOf, blob, commitSnapshot, victimAndAttacker, withEntry } from "../helpers/hostile.ts";
import type { TestRepo } from "../helpers/repo.ts";
import { hasTmux, Terminal } from "../helpers/tmux.ts";
import { escapeControls } from "../../core/text.ts";
import { fit, printable } from "../../cli/pick/text.ts";
import { fixedPalette, visibleSgr } from "../../cli/ui.ts";

const CONCEAL = "\x1b[8m";
const SUMMARY = `fix ${CONCEAL}hidden\x1b[0m \u009b2J \u202eevil\u202c \u200bzero end`;
const HEAD = "ma\x1b[31min\u2066x";
const REFLOG = `${"a".repeat(40)} commit: \x1b]0;title\x07 \u009b8m`;
const STASH = `stash \x1b[31mred\x1b[0m \u202egnirts`;
const REF = "refs/heads/\u202eevil\u2069";
const CONTENT = "+\x1b[2J\x1b[8msecret\n";

/** Anything a terminal would act on, but newlines, tabs and (when `sgr`) colour sequences that hide nothing. */
function raw(out: string, opts: { sgr?: boolean } = {}): string[] {
  const found: string[] = [];
  const rest = opts.sgr ? out.replace(/\x1b\[[0-9;]*m/g, (s) => (visibleSgr(s) ? "" : s)) : out;
  for (const m of rest.matchAll(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u202a-\u202e\u2066-\u2069\ufeff]/gu)) found.push(escapeControls(m[0]));
  return found;
}

/** The colour sequences that hide text. */
const concealed = (screen: string): string[] => [...screen.matchAll(/\x1b\[[0-9;:]*m/g)].map((m) => m[0]).filter((s) => !visibleSgr(s));

/** The victim with a fetched snapshot #3 whose summary, trailers, stash message, a ref name and a file are hostile. */
function hostileVictim(): TestRepo {
  const { v, x } = victimAndAttacker();
  const base = baseOf(x);
  const stash = x.git(["cat-file", "blob", `${base.tree}:stash`]).stdout;
  let tree = withEntry(x, base.tree, "stash", blob(x, `${stash.slice(0, stash.indexOf("\t"))}\t${STASH}\n`));
  const refs = x.git(["cat-file", "blob", `${base.tree}:refs`]).stdout;
  const lines = `${refs}${REF}\t${base.head}\tcommit\t\t\t\n`.split("\n").filter(Boolean).sort();
  tree = withEntry(x, tree, "refs", blob(x, `${lines.join("\n")}\n`));
  const wt = x.g("rev-parse", `${base.tree}:worktree`);
  tree = withEntry(x, tree, "worktree", withEntry(x, wt, "notes.txt", blob(x, CONTENT)), "40000");
  commitSnapshot(x, base, tree, { message: `${SUMMARY}\n\nUndo-Format: 1\nUndo-Kind: manual\nUndo-Head: ${HEAD}\nUndo-Reflog: ${REFLOG}\n` });
  v.git(["fetch", "-q", x.dir, "+refs/undo/*:refs/undo/*"]);
  return v;
}

const terminals: Terminal[] = [];
afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
});

test("list, show, restore --dry-run, restore and undo escape every hostile character; the plan stays visible", () => {
  const v = hostileVictim();
  const list = v.undo(["list"]);
  expect({ code: list.code, raw: raw(list.stdout + list.stderr) }).toEqual({ code: 0, raw: [] });
  expect(list.stdout).toContain(escapeControls(SUMMARY));
  expect(list.stdout).toContain("fix \\e[8mhidden\\e[0m \\x9b2J \\u{202e}evil\\u{202c} \\u{200b}zero end");
  expect(list.stdout).toContain(escapeControls(HEAD));

  const show = v.undo(["show", "3"]);
  expect({ code: show.code, raw: raw(show.stdout + show.stderr) }).toEqual({ code: 0, raw: [] });
  for (const s of [SUMMARY, STASH, HEAD, REFLOG, "\u202eevil\u2069"]) expect(show.stdout).toContain(escapeControls(s));

  const dry = v.undo(["restore", "--dry-run", "3"]);
  expect({ code: dry.code, raw: raw(dry.stdout + dry.stderr) }).toEqual({ code: 0, raw: [] });
  expect(dry.stdout).toContain(`Would restore #3 · ${escapeControls(SUMMARY)}`);
  expect(dry.stdout).toContain("\\u{202e}evil\\u{2069} created at");
  // The plan after the summary is there to read, and so is the end of the dry run.
  expect(dry.stdout).toContain("Nothing was changed (--dry-run).");

  const restored = v.undo(["restore", "3"]);
  expect({ code: restored.code, raw: raw(restored.stdout + restored.stderr) }).toEqual({ code: 0, raw: [] });
  expect(restored.stdout).toContain(`Restored #3 · ${escapeControls(SUMMARY)}`);
  // The ref is created under its real name.
  expect(v.git(["for-each-ref", "--format=%(refname)", REF]).stdout.trim()).toBe(REF);

  // git undo steps back over #3: its report names it, escaped.
  // Plain undo never goes to a fetched snapshot: it takes back the restore, to #2,
  // and the hostile ref it deletes is named escaped.
  const undo = v.undo([]);
  expect({ code: undo.code, raw: raw(undo.stdout + undo.stderr) }).toEqual({ code: 0, raw: [] });
  expect(undo.stdout).toContain("Restored #2 ·");
  expect(undo.stdout).toContain("\\u{202e}evil\\u{2069} deleted");
});

test("with colours on, git-undo's colours are drawn and the snapshot's are escaped", () => {
  const v = hostileVictim();
  for (const args of [["list"], ["show", "3"], ["restore", "--dry-run", "3"]]) {
    const r = v.undo(["--color=always", ...args]);
    expect({ args, code: r.code, raw: raw(r.stdout + r.stderr, { sgr: true }) }).toEqual({ args, code: 0, raw: [] });
    expect({ args, conceal: r.stdout.includes(CONCEAL) }).toEqual({ args, conceal: false });
    expect({ args, coloured: /\x1b\[[0-9;]+m/.test(r.stdout) }).toEqual({ args, coloured: true });
    expect(r.stdout).toContain(escapeControls(SUMMARY));
  }
});

test("--json carries the exact strings, and nothing in it acts on a terminal", () => {
  const v = hostileVictim();
  const list = v.undo(["list", "--json"]);
  expect({ code: list.code, raw: raw(list.stdout) }).toEqual({ code: 0, raw: [] });
  const rows = JSON.parse(list.stdout) as { number: number; summary: string; head: string }[];
  expect(rows.find((r) => r.number === 3)).toMatchObject({ summary: SUMMARY, head: HEAD });

  const show = v.undo(["show", "3", "--json"]);
  expect({ code: show.code, raw: raw(show.stdout) }).toEqual({ code: 0, raw: [] });
  const shown = JSON.parse(show.stdout) as { summary: string; trailers: { head: string; reflog: string }; stash: { message: string }[]; refs: { name: string }[] };
  expect(shown.summary).toBe(SUMMARY);
  expect(shown.trailers).toMatchObject({ head: HEAD, reflog: REFLOG });
  expect(shown.stash.map((s) => s.message)).toContain(STASH);
  expect(shown.refs.map((r) => r.name)).toContain(REF);
});

test("the picker's text: printable escapes C1 and bidi characters; fit draws only visible colours, and only with colours on", () => {
  expect(printable(`a\u009bb\u202ec\x1b[8md`)).toBe("a\\x9bb\\u{202e}c\\e[8md");
  // A line as Git's coloured diff gives it, holding the snapshot's file content.
  const line = `\x1b[32m+\x1b[2J\x1b[8msecret\u202e\x1b[m`;
  const drawn = fit(fixedPalette(true), line, 60);
  expect(drawn).toContain("\x1b[32m+");
  expect(drawn).not.toContain(CONCEAL);
  expect(drawn).not.toContain("\x1b[2J");
  expect(drawn).toContain("\\e[2J\\e[8msecret\\u{202e}");
  // With colours off only reverse video and the reset are drawn (the picker's highlighted row).
  expect(fit(fixedPalette(false), line, 60)).toBe("\\e[32m+\\e[2J\\e[8msecret\\u{202e}\x1b[m\x1b[0m");
  expect(fit(fixedPalette(false), "\x1b[7mrow\x1b[27m", 60)).toBe("\x1b[7mrow\x1b[27m\x1b[0m");
});

test.skipIf(!hasTmux())("the picker shows a hostile snapshot's summary, branch, plan and diff escaped", async () => {
  const v = hostileVictim();
  const t = new Terminal(v, 160, 40);
  terminals.push(t);
  t.start(["pick"], { NO_COLOR: "", COLORTERM: "truecolor" });
  // The fetched #3 is not the position (#2 is): the cursor starts on what undo
  // would restore (#1), two rows below it, once the list is drawn.
  await t.waitForText("Restoring #1");
  t.keys("Up");
  await t.waitForText("Restoring #2");
  t.keys("Up");
  let s = await t.waitForText("Restoring #3");
  expect(s).toContain("fix \\e[8mhidden");
  expect(s).toContain("\\u{202e}evil");
  expect(s).toContain("\\e[31m");
  // No concealed text anywhere on the screen.
  expect(concealed(t.screenWithEscapes())).toEqual([]);
  t.keys("Tab");
  s = await t.waitForText("secret");
  expect(s).toContain("\\e[2J\\e[8msecret");
  expect(concealed(t.screenWithEscapes())).toEqual([]);
  t.keys("Escape");
  expect(await t.exitCode()).toBe(1);
});
