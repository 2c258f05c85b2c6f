// The picker's state, apart from the terminal: the rows newest first, the
// filter, the highlighted row and the scroll offset. Pure, so it can be tested
// and reasoned about without a terminal.
import type { LostItem } from "../../core/find/lost.ts";
import { isReadable, type SnapshotEntry } from "../../core/format/index.ts";

export interface Row {
  entry: SnapshotEntry;
  number: number;
  /** Whether this is the repository's position (the state you are in). */
  current: boolean;
  /** Lowercased number, summary and branch, for the filter. */
  haystack: string;
  /** Paths the snapshot changed (from its predecessor), once known. */
  paths?: readonly string[];
}

export function rowsOf(snaps: readonly SnapshotEntry[], position: number | null): Row[] {
  return [...snaps].reverse().map((entry) => ({
    entry,
    number: entry.number,
    current: entry.number === position,
    haystack: isReadable(entry)
      ? `#${entry.number}\n${entry.summary}\n${entry.trailers.head}\n${entry.trailers.kind}`.toLowerCase()
      : `#${entry.number}\nunreadable`,
  }));
}

/** Lost work (core/find/lost.ts), listed in a section of its own after the snapshots. */
export interface LostRow {
  lost: LostItem;
  /** The id as `git undo rescue` lists it. */
  shortId: string;
  /** Lowercased kind, id, message or subject, branch and path, for the filter. */
  haystack: string;
}

export function lostRowsOf(items: readonly LostItem[], abbrev: number): LostRow[] {
  return items.map((lost) => {
    const what = lost.kind === "stash" ? lost.message : lost.kind === "commit" ? `${lost.subject}\n${lost.branch ?? ""}` : (lost.path ?? "");
    return { lost, shortId: lost.id.slice(0, abbrev), haystack: `${lost.kind}\n${lost.id}\n${what}`.toLowerCase() };
  });
}

/** Whether a lost row matches every word of the filter; `#<n>` names a snapshot, never lost work. */
function lostMatches(row: LostRow, filter: string): boolean {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  return words.every((w) => !/^#[0-9]+$/.test(w) && row.haystack.includes(w));
}

/**
 * Whether a row matches every word of the filter (number, summary, branch or a
 * path it changed). `#<n>` is snapshot n itself: not #42 whose summary says
 * "restore #40", nor #400.
 */
export function matches(row: Row, filter: string): boolean {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  return words.every((w) => {
    const number = /^#([0-9]+)$/.exec(w);
    if (number) return row.number === Number(number[1]);
    return row.haystack.includes(w) || (row.paths?.some((p) => p.toLowerCase().includes(w)) ?? false);
  });
}

/**
 * A filter starting with "?" searches what the snapshots' files hold instead
 * (the text after it, ignoring case); null for an ordinary filter, "" for a
 * lone "?" (every row).
 */
export function contentQuery(filter: string): string | null {
  return filter.startsWith("?") ? filter.slice(1).trim() : null;
}

export class PickModel {
  filter = "";
  /** For each text searched with "?": the numbers of the snapshots whose files hold it. */
  private readonly found = new Map<string, ReadonlySet<number>>();
  visible: Row[];
  /** Lost work, once found: listed after the snapshots. */
  lostRows: LostRow[] = [];
  /** The lost rows the filter keeps (none while a "?" search filters). */
  visibleLost: LostRow[] = [];
  /** Index of the highlighted row in `visible`, then `visibleLost`. */
  cursor = 0;
  /** Index of the first visible row on screen. */
  top = 0;

  constructor(readonly rows: Row[]) {
    this.visible = rows;
    // Start on the state `git undo` would restore: the row just older than the position.
    const at = rows.findIndex((r) => r.current);
    this.cursor = at < 0 ? 0 : Math.min(at + 1, rows.length - 1);
  }

  /** The highlighted snapshot (undefined on a lost row). */
  highlighted(): Row | undefined {
    return this.visible[this.cursor];
  }

  /** The highlighted lost row (undefined on a snapshot). */
  highlightedLost(): LostRow | undefined {
    return this.cursor >= this.visible.length ? this.visibleLost[this.cursor - this.visible.length] : undefined;
  }

  /** Rows shown: the snapshots, then the lost work. */
  get length(): number {
    return this.visible.length + this.visibleLost.length;
  }

  setFilter(filter: string): void {
    const keep = this.highlighted() ?? this.highlightedLost();
    this.filter = filter;
    this.refilter(keep);
  }

  /** The lost work has been found: its section appears. */
  setLost(rows: LostRow[]): void {
    const keep = this.highlighted() ?? this.highlightedLost();
    this.lostRows = rows;
    this.refilter(keep);
  }

  /** The "?" text whose search has not answered yet, or null. */
  pendingSearch(): string | null {
    const q = contentQuery(this.filter);
    return q && !this.found.has(q) ? q : null;
  }

  /** A content search answered: the rows it found show once it is the filter's. */
  setFound(query: string, numbers: ReadonlySet<number>): void {
    this.found.set(query, numbers);
    if (contentQuery(this.filter) === query) this.refilter();
  }

  /**
   * Apply the filter again (paths or a search's answer may have arrived),
   * keeping the highlighted row when it still matches. While a content search
   * runs the rows shown stay as they were, so the cursor never waits for it.
   */
  refilter(keep: Row | LostRow | undefined = this.highlighted() ?? this.highlightedLost()): void {
    const q = contentQuery(this.filter);
    if (q) {
      const found = this.found.get(q);
      if (found) this.visible = this.rows.filter((r) => found.has(r.number));
      this.visibleLost = [];
    } else {
      const filtering = q === null && this.filter.trim() !== "";
      this.visible = filtering ? this.rows.filter((r) => matches(r, this.filter)) : this.rows;
      this.visibleLost = filtering ? this.lostRows.filter((r) => lostMatches(r, this.filter)) : this.lostRows;
    }
    const at = keep === undefined ? -1 : "lost" in keep ? this.visibleLost.indexOf(keep) : this.visible.indexOf(keep);
    this.cursor = at < 0 ? 0 : keep !== undefined && "lost" in keep ? this.visible.length + at : at;
  }

  move(delta: number): void {
    if (!this.length) return;
    this.cursor = Math.max(0, Math.min(this.length - 1, this.cursor + delta));
  }

  home(): void {
    this.cursor = 0;
  }

  end(): void {
    this.cursor = Math.max(0, this.length - 1);
  }

  /** Keep the cursor on screen in a list of `height` rows (snapshots and lost work); returns the first row to draw. */
  scroll(height: number): number {
    if (this.cursor < this.top) this.top = this.cursor;
    if (this.cursor >= this.top + height) this.top = this.cursor - height + 1;
    this.top = Math.max(0, Math.min(this.top, Math.max(0, this.length - height)));
    return this.top;
  }
}
