// The picker as an @clack/core prompt: clack owns raw mode, keypress events,
// resize and redrawing; this class turns keys into moves on the model and
// answers with the chosen snapshot and action (or clack's cancel symbol).
import { Prompt, getColumns, getRows } from "@clack/core";
import type { Key } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { isReadable, type Snapshot } from "../../core/format/index.ts";
import { LazyCache } from "./lazy.ts";
import type { PickModel, Row } from "./model.ts";
import type { PreviewSource } from "./preview.ts";
import { rescueOutcome } from "../lost-words.ts";
import { renderFrame, type Phase, type PickAction, type PreviewMode, type View } from "./render.ts";
import type { Palette } from "../ui.ts";

/** The picker's answer: a snapshot and what to do with it. */
export interface PickChoice {
  number: number;
  action: PickAction;
}

export interface PickOptions {
  model: PickModel;
  /** The colours it is drawn in. */
  color: Palette;
  previews: PreviewSource;
  /** The numbers of the snapshots whose files hold a text (the "?" filter). */
  search: (text: string) => Promise<ReadonlySet<number>>;
  input?: Readable;
  output?: Writable;
  /** Run a function when the process exits (the alternate screen is left then); none in a test's own process. */
  atExit?: (fn: () => void) => () => void;
}

export class PickPrompt extends Prompt<PickChoice> {
  readonly view: View;
  private readonly summaries: LazyCache<Snapshot, string[]>;
  private readonly diffs: LazyCache<Snapshot, string[]>;
  private readonly gists: LazyCache<Snapshot, string>;
  private readonly search: (text: string) => Promise<ReadonlySet<number>>;
  /** The "?" text waiting for typing to pause, and the timer that will search it. */
  private searchTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly searched = new Set<string>();
  private readonly atExit: (fn: () => void) => () => void;

  constructor(opts: PickOptions) {
    super(
      {
        input: opts.input,
        output: opts.output,
        render(this: Omit<PickPrompt, "prompt">) {
          const out = (this as PickPrompt).output;
          return renderFrame((this as PickPrompt).view, getColumns(out), getRows(out));
        },
      },
      // The filter is ours: clack does not track typed text.
      false,
    );
    const redraw = () => this.redraw();
    this.summaries = new LazyCache((s) => opts.previews.summary(s), redraw);
    this.diffs = new LazyCache((s) => opts.previews.diff(s), redraw);
    this.gists = new LazyCache((s) => opts.previews.gist(s), redraw);
    const view: View = {
      model: opts.model,
      color: opts.color,
      phase: "active",
      mode: "summary",
      diffTop: 0,
      typing: false,
      confirmYes: true,
      action: { kind: "restore" },
      note: null,
      preview: (row: Row) => {
        const cache = view.mode === "diff" ? this.diffs : this.summaries;
        return isReadable(row.entry) ? cache.get(row.entry) : { state: "failed", error: new Error("unreadable") };
      },
      gist: (row: Row) => (isReadable(row.entry) ? this.gists.get(row.entry) : { state: "failed", error: new Error("unreadable") }),
    };
    this.view = view;
    this.search = opts.search;
    this.atExit = opts.atExit ?? (() => () => {});
    // Esc first clears a filter being typed (and leaves the confirmation); only
    // an Esc with nothing to clear reaches clack, which cancels the picker.
    const self = this as unknown as { onKeypress: (char: string | undefined, key: Key) => unknown };
    const clackKeypress = self.onKeypress;
    self.onKeypress = (char, key) => {
      if (key?.name === "escape" && !key.ctrl && this.escapeClears()) {
        this.scheduleSearch();
        this.redraw();
        return;
      }
      return clackKeypress(char, key);
    };
    this.on("key", (char, key) => {
      this.onKey(char, key);
      this.scheduleSearch();
    });
    this.on("finalize", () => {
      view.phase = this.state === "submit" ? "submit" : "cancel";
    });
  }

  /**
   * Run the prompt on the terminal's alternate screen, as less and vim do: the
   * picker fills the terminal, and leaving it puts back exactly what was there.
   */
  async run(): Promise<PickChoice | symbol | undefined> {
    const out = this.output;
    let inside = true;
    const leave = () => {
      if (inside) out.write("\x1b[?1049l");
      inside = false;
    };
    // A resized terminal is redrawn from a clean screen (clack's line-diffing
    // assumes the old lines kept their width); this listener runs before clack's.
    const resized = () => {
      out.write("\x1b[H\x1b[2J");
      (this as unknown as { _prevFrame: string })._prevFrame = "";
    };
    out.write("\x1b[?1049h\x1b[H");
    out.on("resize", resized);
    const forget = this.atExit(leave);
    // Ages ("19s", "2 minutes ago") go on while the picker is open; clack redraws only what changed.
    const ticking = setInterval(() => this.redraw(), 1000);
    try {
      return await this.prompt();
    } finally {
      clearInterval(ticking);
      out.off("resize", resized);
      forget();
      leave();
    }
  }

  /** What Esc undoes before it leaves: the confirmation, the filter, the filter prompt. */
  private escapeClears(): boolean {
    const v = this.view;
    v.note = null;
    if (v.phase === "confirm") {
      v.phase = "active";
      return true;
    }
    if (v.model.filter) {
      const before = v.model.cursor;
      v.typing = false;
      v.model.setFilter("");
      if (v.model.cursor !== before) v.diffTop = 0;
      return true;
    }
    if (v.typing) {
      v.typing = false;
      return true;
    }
    return false;
  }

  /** Redraw when something arrives from outside a keypress (a preview, the file paths). */
  redraw(): void {
    if (this.state === "submit" || this.state === "cancel") return;
    // clack draws only from its own events; its render() is private but bound, and safe to call.
    (this as unknown as { render(): void }).render();
  }

  /**
   * Search the files for a "?" filter once typing pauses, in the background:
   * keys keep moving the cursor meanwhile, and the answer redraws the list if
   * that text is still the filter. Each text is searched once per session.
   */
  private scheduleSearch(): void {
    if (this.searchTimer) clearTimeout(this.searchTimer);
    this.searchTimer = null;
    const text = this.view.model.pendingSearch();
    if (text === null || this.searched.has(text)) return;
    this.searchTimer = setTimeout(() => {
      this.searchTimer = null;
      this.searched.add(text);
      this.search(text)
        .catch(() => new Set<number>())
        .then((found) => {
          this.view.model.setFound(text, found);
          this.redraw();
        });
    }, 250);
  }

  /** Never submit on Enter directly: Enter opens the confirmation, which submits itself. */
  /** Ask before doing `action` with the highlighted snapshot. */
  private confirm(action: PickAction): void {
    const v = this.view;
    const lost = v.model.highlightedLost();
    if (lost) {
      // Lost work is rescued, not restored or reverted.
      const outcome = rescueOutcome(lost.lost, lost.shortId.length);
      if (action.kind !== "restore") v.note = "on lost work, Enter rescues it";
      else if (!outcome.can) v.note = outcome.text;
      else {
        v.action = { kind: "rescue", id: lost.shortId, what: lost.lost.kind };
        v.confirmYes = true;
        this.setPhase("confirm");
      }
      return;
    }
    const row = v.model.highlighted();
    if (!row) return;
    if (!isReadable(row.entry)) {
      v.note = `#${row.number} cannot be read by this version of git-undo`;
      return;
    }
    v.action = action;
    v.confirmYes = true;
    this.setPhase("confirm");
  }

  /**
   * The file whose diff is at the top of the diff view (or the first one
   * below it): the path of its `diff --git a/<path> b/<path>` header. Null for
   * none, or a name Git quoted (restore those by name).
   */
  private fileAtDiffTop(): string | null {
    const row = this.view.model.highlighted();
    if (!row || !isReadable(row.entry)) return null;
    const diff = this.diffs.get(row.entry);
    if (diff.state !== "ready") return null;
    const plain = diff.value.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));
    const header = (l: string) => /^diff --git a\/(.*) b\/\1$/.exec(l)?.[1] ?? null;
    for (let i = Math.min(this.view.diffTop, plain.length - 1); i >= 0; i--) {
      if (plain[i]!.startsWith("diff --git ")) return header(plain[i]!);
    }
    const below = plain.find((l) => l.startsWith("diff --git "));
    return below ? header(below) : null;
  }

  protected override _shouldSubmit(): boolean {
    return false;
  }

  private setPhase(phase: Phase): void {
    this.view.phase = phase;
  }

  private onKey(char: string | undefined, key: Key): void {
    const v = this.view;
    const m = v.model;
    v.note = null;
    const name = key?.name;
    if (name === "escape" || (key?.ctrl && name === "c")) return; // clack cancels
    if (v.phase === "confirm") {
      const row = m.highlighted();
      if (char === "y" || char === "Y" || (name === "return" && v.confirmYes)) {
        if (v.action.kind === "rescue" ? m.highlightedLost() : row && isReadable(row.entry)) {
          this.value = { number: row?.number ?? 0, action: v.action };
          this.state = "submit";
        }
      } else if (char === "n" || char === "N" || name === "return") {
        this.setPhase("active");
      } else if (name === "left" || name === "right" || name === "tab" || char === "h" || char === "l") {
        v.confirmYes = !v.confirmYes;
      }
      return;
    }
    const page = Math.max(1, getRows(this.output) - 8);
    const scrollDiff = (by: number) => {
      v.diffTop = Math.max(0, v.diffTop + by);
    };
    const move = (f: () => void) => {
      const before = m.highlighted() ?? m.highlightedLost();
      f();
      if ((m.highlighted() ?? m.highlightedLost()) !== before) v.diffTop = 0;
    };
    switch (name) {
      case "up":
        if (key.shift) return scrollDiff(-1);
        return move(() => m.move(-1));
      case "down":
        if (key.shift) return scrollDiff(1);
        return move(() => m.move(1));
      case "pageup":
        if (v.mode === "diff") return scrollDiff(-page);
        return move(() => m.move(-page));
      case "pagedown":
        if (v.mode === "diff") return scrollDiff(page);
        return move(() => m.move(page));
      case "home":
        return move(() => m.home());
      case "end":
        return move(() => m.end());
      case "tab":
        v.mode = v.mode === "summary" ? "diff" : "summary";
        v.diffTop = 0;
        return;
      case "return":
        return this.confirm({ kind: "restore" });
      case "backspace":
        if (!m.filter) v.typing = false;
        return move(() => m.setFilter(m.filter.slice(0, -1)));
    }
    if (key?.ctrl && name === "u") return move(() => m.setFilter(""));
    if (key?.ctrl && name === "r") return this.confirm({ kind: "revert" });
    if (key?.ctrl && name === "f") {
      if (v.mode !== "diff") {
        v.note = "^F restores the file shown in the diff: Tab to Git's diff first";
        return;
      }
      const path = this.fileAtDiffTop();
      if (path === null) {
        v.note = "no file in view to restore (or its name needs quoting: use git undo restore <n> -- <path>)";
        return;
      }
      return this.confirm({ kind: "file", path });
    }
    if (!char || key?.ctrl || key?.meta || !/^[^\x00-\x1f\x7f]$/u.test(char)) return;
    if (!v.typing && !m.filter) {
      if (char === "j") return move(() => m.move(1));
      if (char === "k") return move(() => m.move(-1));
      if (char === "/") {
        v.typing = true;
        return;
      }
    }
    v.typing = true;
    move(() => m.setFilter(m.filter + char));
  }
}

export type { PreviewMode };
