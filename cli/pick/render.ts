// Drawing the picker, in @clack/prompts' style: a guide bar down the left, the
// list of snapshots, and the preview beside it (wide terminals) or below it.
// Every line is cut to the terminal's width and the frame to its height, so a
// 60-column terminal shows a smaller picker, never a broken one.
import { userSummary } from "../../core/describe.ts";
import { isReadable } from "../../core/format/index.ts";
import { relativeAge, type Palette } from "../ui.ts";
import type { Lazy } from "./lazy.ts";
import { details, rescueOutcome, title } from "../lost-words.ts";
import type { LostRow, PickModel, Row } from "./model.ts";
import { fit, printable, width } from "./text.ts";
import { fitHints, type Hint } from "../wrap.ts";
import { errorText } from "../refusal-words.ts";

export const SYMBOL = {
  active: "◆",
  submit: "◇",
  cancel: "■",
  bar: "│",
  end: "└",
  connect: "├",
  h: "─",
  on: "●",
  off: "○",
  restore: "↺",
} as const;

export type PreviewMode = "summary" | "diff";

/** What the confirmation asks about: the whole state, the highlighted change taken out, one file, or lost work brought back. */
export type PickAction = { kind: "restore" } | { kind: "revert" } | { kind: "file"; path: string } | { kind: "rescue"; id: string; what: string };
export type Phase = "active" | "confirm" | "submit" | "cancel";

export interface View {
  model: PickModel;
  /** The colours the picker is drawn in. */
  color: Palette;
  phase: Phase;
  mode: PreviewMode;
  /** First diff line shown. */
  diffTop: number;
  /** Whether the filter takes every key (after `/`, or once it has text). */
  typing: boolean;
  confirmYes: boolean;
  /** What Enter or y then does. */
  action: PickAction;
  /** A one-line note (why Enter did nothing, say). */
  note: string | null;
  /** The preview of a row in the current mode; starts computing it when unknown. */
  preview(row: Row): Lazy<string[]>;
  /** The one-line plan of restoring a row, for the confirmation; starts computing it when unknown. */
  gist(row: Row): Lazy<string>;
}

/** Side by side from this width; below it, the preview goes under the list. */
export const WIDE = 110;

/** "3m", "2h", "5d": ages that fit a narrow column. */
export function shortAge(unixSeconds: number, now = Date.now() / 1000): string {
  const d = Math.max(0, Math.round(now - unixSeconds));
  if (d < 60) return `${d}s`;
  if (d < 3600) return `${Math.floor(d / 60)}m`;
  if (d < 86400) return `${Math.floor(d / 3600)}h`;
  if (d < 14 * 86400) return `${Math.floor(d / 86400)}d`;
  if (d < 60 * 86400) return `${Math.floor(d / (7 * 86400))}w`;
  if (d < 365 * 86400) return `${Math.floor(d / (30 * 86400))}mo`;
  return `${Math.floor(d / (365 * 86400))}y`;
}

function rowLine(color: Palette, row: Row, highlighted: boolean, numWidth: number, branchWidth: number, cols: number): string {
  const e = row.entry;
  const pointer = highlighted ? color.cyan(SYMBOL.on) : color.dim(SYMBOL.off);
  const here = row.current ? color.green("*") : " ";
  const num = color.yellow(`#${row.number}`.padEnd(numWidth + 1));
  if (!isReadable(e)) return fit(color, `${pointer} ${here}${num} ${color.red("unreadable")} ${color.dim(printable(e.reason))}`, cols);
  const age = shortAge(e.date).padStart(3);
  const kind = e.trailers.kind === "restore" ? color.magenta(SYMBOL.restore) : " ";
  const branch = color.cyan(fit(color, printable(e.trailers.head), branchWidth, true));
  const summary = highlighted ? printable(userSummary(e.summary)) : color.dim(printable(userSummary(e.summary)));
  const line = fit(color, `${pointer} ${here}${num} ${color.dim(age)} ${kind} ${branch} ${summary}`, cols, highlighted);
  // The selected row stands out as a bar across the list, not only by its dot:
  // reverse video is no colour, so it stays under NO_COLOR too.
  return highlighted ? `\x1b[7m${line}\x1b[27m` : line;
}

/** A row of lost work: its kind, id, age and what it is. */
function lostRowLine(color: Palette, row: LostRow, highlighted: boolean, cols: number): string {
  const pointer = highlighted ? color.cyan(SYMBOL.on) : color.dim(SYMBOL.off);
  const l = row.lost;
  const age = (l.date === null ? "?" : shortAge(l.date)).padStart(3);
  const what = highlighted ? printable(title(l)) : color.dim(printable(title(l)));
  const line = fit(color, `${pointer}  ${color.yellow(row.shortId)} ${color.dim(age)} ${color.magenta(l.kind.padEnd(6))} ${what}`, cols, highlighted);
  return highlighted ? `\x1b[7m${line}\x1b[27m` : line;
}

/** The line that opens the lost work's section. */
const LOST_HEADER = "lost work (no ref or snapshot holds it; Enter rescues)";

function listLines(v: View, height: number, cols: number): string[] {
  const { color } = v;
  const m = v.model;
  if (!m.length) return [color.dim(m.rows.length ? "no snapshot matches the filter" : "no snapshots yet")];
  // The lost work's section takes a line for its title.
  const rowsHigh = m.visibleLost.length ? Math.max(1, height - 1) : height;
  const top = m.scroll(rowsHigh);
  const numWidth = String(m.rows[0]?.number ?? 0).length + 1;
  const shown = m.visible.slice(top, top + rowsHigh);
  // Branch names line up, but never take more than a quarter of the line.
  const longest = Math.max(4, ...shown.map((r) => (isReadable(r.entry) ? width(printable(r.entry.trailers.head)) : 0)));
  const branchWidth = Math.min(longest, 16, Math.max(6, Math.floor(cols / 4)));
  const lines = shown.map((r, i) => rowLine(v.color, r, top + i === m.cursor, numWidth, branchWidth, cols));
  for (let i = Math.max(top, m.visible.length); i < top + rowsHigh && i < m.length; i++) {
    if (i === m.visible.length) lines.push(fit(color, color.dim(`${SYMBOL.h.repeat(2)} ${LOST_HEADER} ${SYMBOL.h.repeat(2)}`), cols));
    lines.push(lostRowLine(v.color, m.visibleLost[i - m.visible.length]!, i === m.cursor, cols));
  }
  return lines;
}

/** The preview of lost work: what it is, what it holds, and what rescuing it does. */
function lostPreview(color: Palette, row: LostRow, height: number): string[] {
  const l = row.lost;
  const out = rescueOutcome(l, row.shortId.length);
  const lines = [
    `${color.bold(`${l.kind} ${row.shortId}`)} ${color.dim(`· ${l.date === null ? "time unknown" : relativeAge(l.date)}`)}`,
    `  ${printable(title(l))}`,
    ...details(color, l).map((d) => `  ${printable(d)}`),
    "",
    ...(out.can
      ? [`Enter: ${out.text}`, color.dim(`  as git undo rescue ${row.shortId} does; plain git undo takes it back`)]
      : [color.yellow("no tree named it; to write it to a new file:"), `  git undo rescue ${row.shortId} -- <path>`]),
  ];
  return lines.slice(0, Math.max(1, height));
}

function previewLines(v: View, height: number): { title: string; lines: string[] } {
  const { color } = v;
  const lost = v.model.highlightedLost();
  if (lost) return { title: "what rescuing it does", lines: lostPreview(v.color, lost, height) };
  const row = v.model.highlighted();
  const title = v.mode === "diff" ? `diff: now -> #${row?.number ?? "?"}` : "what restoring it does";
  if (!row) return { title, lines: [] };
  if (!isReadable(row.entry)) return { title, lines: [color.red(`#${row.number} cannot be read: ${printable(row.entry.reason)}`)] };
  const p = v.preview(row);
  if (p.state === "pending") return { title, lines: [color.dim("computing…")] };
  if (p.state === "failed") return { title, lines: [color.red(printable(errorText(p.error)))] };
  if (v.mode === "summary") {
    // The header is drawn here, so that its age goes on as the list's do.
    const e = row.entry;
    const header = [`${color.bold(`Restoring #${row.number}`)} ${color.dim(`· ${relativeAge(e.date)} · ${e.trailers.kind}`)}`, `  ${printable(userSummary(e.summary))}`];
    const all = [...header, ...p.value];
    // Beside the whole restore, the revert of just this change, when there is room to say so.
    const revert = color.dim(`or ^R: revert only the change #${row.number} made, keeping everything since`);
    if (all.length + 2 <= height) return { title, lines: [...all, "", revert] };
    if (all.length <= height) return { title, lines: all };
    const shown = Math.max(0, height - 1);
    return { title, lines: [...all.slice(0, shown), color.dim(`… ${all.length - shown} more (Tab: Git's diff; git undo restore --dry-run ${row.number}: all of it)`)] };
  }
  const top = Math.max(0, Math.min(v.diffTop, p.value.length - height));
  v.diffTop = top;
  const more = p.value.length > height ? ` ${top + 1}-${Math.min(top + height, p.value.length)}/${p.value.length}` : "";
  return { title: title + more, lines: p.value.slice(top, top + height) };
}

/** `Restore #12`, `Revert #12`, `Restore src/a.c from #12`, `Rescue stash 4c0f716`. */
export function actionQuestion(action: PickAction, number: number): string {
  if (action.kind === "rescue") return `Rescue ${action.what} ${action.id}`;
  if (action.kind === "revert") return `Revert #${number}`;
  if (action.kind === "file") return `Restore ${printable(action.path)} from #${number}`;
  return `Restore #${number}`;
}

/** `restoring #12`, `reverting #12`, `restoring src/a.c from #12`: the line left as the picker closes. */
export function actionDoing(action: PickAction, number: number): string {
  if (action.kind === "rescue") return `rescuing ${action.what} ${action.id}`;
  if (action.kind === "revert") return `reverting #${number}`;
  if (action.kind === "file") return `restoring ${printable(action.path)} from #${number}`;
  return `restoring #${number}`;
}

/** What a revert or a one-file restore does, for the confirmation (a whole restore shows its plan). */
function actionGist(action: PickAction, number: number): string | null {
  if (action.kind === "rescue") return "recorded first and checked like every restore; plain git undo takes it back";
  if (action.kind === "revert") return `take out only what #${number} changed, keeping everything done since (checked before anything changes)`;
  if (action.kind === "file") return `only this file and its index entry as #${number} had them; everything else stays`;
  return null;
}

function footer(v: View, cols: number): string {
  const { color } = v;
  if (v.phase === "confirm") {
    const row = v.model.highlighted();
    const yes = `${v.confirmYes ? color.green(SYMBOL.on) : color.dim(SYMBOL.off)} Yes`;
    const no = `${v.confirmYes ? color.dim(SYMBOL.off) : color.green(SYMBOL.on)} No`;
    return `${color.bold(`${actionQuestion(v.action, row?.number ?? 0)}?`)}  ${yes} / ${no}  ${color.dim("y/n · Esc back")}`;
  }
  if (v.note) return color.yellow(v.note);
  if (v.model.highlightedLost()) return color.dim(fitHints([{ text: "↑↓ move", rank: 2 }, { text: "type to filter", rank: 0 }, { text: "Enter rescue", rank: 6 }, { text: "Esc quit", rank: 7 }], cols - FOOTER_LEAD));
  // Whole hints, in this order; where they do not all fit, the lowest ranks go first.
  const diff = v.mode === "diff";
  const wide = cols >= 90;
  const hints: Hint[] = [
    { text: "↑↓ move", rank: 2 },
    ...(wide ? [{ text: "type to filter (?text: in files)", rank: 0 }] : []),
    { text: `Tab ${diff ? "summary" : "diff"}`, rank: 4 },
    ...(diff ? [{ text: wide ? "PgUp/PgDn scroll" : "PgDn", rank: 1 }] : []),
    { text: "Enter restore", rank: 6 },
    { text: "^R revert", rank: 3 },
    ...(diff ? [{ text: "^F this file", rank: 5 }] : []),
    { text: "Esc quit", rank: 7 },
  ];
  return color.dim(fitHints(hints, cols - FOOTER_LEAD));
}

/** The columns before the footer's hints: `└  `. */
const FOOTER_LEAD = 3;

/** The whole frame for a terminal of `columns` x `rows`. */
export function renderFrame(v: View, columns: number, rows: number): string {
  const { color } = v;
  const cols = Math.max(20, columns - 1);
  const m = v.model;
  const row = m.highlighted();
  if (v.phase === "submit" || v.phase === "cancel") {
    const done = v.phase === "submit" ? `${color.green(SYMBOL.submit)}  ${actionDoing(v.action, row?.number ?? 0)}` : `${color.red(SYMBOL.cancel)}  git undo pick: nothing changed`;
    return fit(color, done, cols);
  }
  const bar = color.cyan(SYMBOL.bar);
  const count = m.filter ? `${m.visible.length} of ${m.rows.length}` : `${m.rows.length}`;
  const searching = m.pendingSearch() !== null ? " · searching files…" : "";
  const lost = m.lostRows.length ? ` · ${m.filter ? `${m.visibleLost.length} of ` : ""}${m.lostRows.length} lost` : "";
  const head = fit(color, `${color.cyan(SYMBOL.active)}  ${color.bold("Pick a state to restore")}  ${color.dim(`${count} snapshots${lost}${searching}`)}`, cols);
  const filter =
    m.filter || v.typing
      ? `filter: ${printable(m.filter)}${color.cyan("█")}`
      : color.dim(cols < 90 ? "filter: number, summary, branch, file; ?text in files" : "filter: type a number, summary, branch or file; ?text searches the files (/ first for j or k)");
  const lines: string[] = [head, fit(color, `${bar}  ${filter}`, cols)];
  // Everything must fit: rows minus the two lines above, the footer and one spare
  // (and, while confirming, the line that says what the restore would do).
  const confirming = v.phase === "confirm";
  const body = Math.max(4, Math.min(rows, 60) - 4 - (confirming ? 1 : 0));
  const inner = cols - 3;
  if (columns >= WIDE) {
    const left = Math.min(72, Math.floor(inner * 0.5));
    const right = inner - left - 3;
    const list = listLines(v, body - 1, left);
    const pv = previewLines(v, body - 1);
    lines.push(fit(color, `${bar}  ${" ".repeat(left)} ${color.dim(SYMBOL.connect + SYMBOL.h)} ${color.dim(pv.title)}`, cols));
    for (let i = 0; i < body - 1; i++) {
      const l = fit(color, list[i] ?? "", left, true);
      const r = pv.lines[i] ?? "";
      lines.push(fit(color, `${bar}  ${l} ${color.dim(SYMBOL.bar)} ${fit(color, r, right)}`, cols));
    }
  } else {
    const listHeight = Math.max(2, Math.min(m.length + (m.visibleLost.length ? 1 : 0) || 1, Math.floor((body - 1) * 0.45)));
    const pvHeight = body - 1 - listHeight;
    for (const l of listLines(v, listHeight, inner)) lines.push(fit(color, `${bar}  ${l}`, cols));
    for (let i = lines.length - 2; i < listHeight; i++) lines.push(bar);
    const pv = previewLines(v, pvHeight);
    const title = ` ${pv.title} `;
    lines.push(fit(color, `${color.cyan(SYMBOL.connect)}${color.dim(SYMBOL.h.repeat(2) + title + SYMBOL.h.repeat(Math.max(0, cols - 3 - width(title))))}`, cols));
    for (let i = 0; i < pvHeight; i++) lines.push(fit(color, `${bar}  ${pv.lines[i] ?? ""}`, cols));
  }
  const lostRow = m.highlightedLost();
  if (confirming && lostRow) {
    lines.push(fit(color, `${color.cyan(SYMBOL.connect)}  ${color.bold(`${lostRow.shortId}:`)} ${rescueOutcome(lostRow.lost, lostRow.shortId.length).text}; ${actionGist(v.action, 0)}`, cols));
  } else if (confirming && row) {
    const gist = v.gist(row);
    const own = actionGist(v.action, row.number);
    const plan = own ?? (gist.state === "ready" ? printable(gist.value) : gist.state === "pending" ? color.dim("…") : color.red(printable(errorText(gist.error))));
    lines.push(fit(color, `${color.cyan(SYMBOL.connect)}  ${color.bold(`#${row.number}:`)} ${plan}`, cols));
  }
  lines.push(fit(color, `${color.cyan(SYMBOL.end)}  ${footer(v, cols)}`, cols));
  return lines.join("\n");
}
