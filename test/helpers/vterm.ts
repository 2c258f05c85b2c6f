// A terminal for the picker's tests inside the test's own process: the
// command runs in-process (helpers/in-process.ts) with a keyboard stream and a
// screen that a headless terminal emulator (@xterm/headless) draws, so a test
// reads what a user would see without a tmux server or a process start. The
// API is helpers/tmux.ts's, whose real terminal the smoke tests keep.
import { PassThrough, Writable } from "node:stream";
import xterm from "@xterm/headless";
import { runWithIO } from "./in-process.ts";
import type { TestRepo } from "./repo.ts";

/** Keys by tmux name, as the bytes a terminal sends for them. */
const KEYS: Record<string, string> = {
  Up: "\x1b[A",
  Down: "\x1b[B",
  Right: "\x1b[C",
  Left: "\x1b[D",
  Home: "\x1b[H",
  End: "\x1b[F",
  PageUp: "\x1b[5~",
  PageDown: "\x1b[6~",
  Enter: "\r",
  Escape: "\x1b",
  Tab: "\t",
  BSpace: "\x7f",
};

/** The screen side: a stream with a size, as process.stdout is on a terminal. */
class Screen extends Writable {
  isTTY = true;
  constructor(
    public columns: number,
    public rows: number,
    private readonly draw: (text: string) => void,
  ) {
    super({ decodeStrings: false });
  }
  override _write(chunk: string | Uint8Array, _encoding: BufferEncoding, done: () => void): void {
    this.draw(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
    done();
  }
}

export class VirtualTerminal {
  private readonly term: InstanceType<typeof xterm.Terminal>;
  private readonly keyboard = new PassThrough();
  private readonly screenStream: Screen;
  /** Bytes drawn so far, and a promise that each write has reached the emulator. */
  private drawn = 0;
  private settled: Promise<void> = Promise.resolve();
  private ended: Promise<number> | null = null;

  constructor(
    readonly repo: TestRepo,
    readonly cols = 100,
    readonly rows = 30,
  ) {
    // A pty turns "\n" into "\r\n" (onlcr): so does the emulator here.
    this.term = new xterm.Terminal({ cols, rows, allowProposedApi: true, convertEol: true, scrollback: 0 });
    this.screenStream = new Screen(cols, rows, (text) => this.draw(text));
  }

  private draw(text: string): void {
    this.drawn += text.length;
    this.settled = new Promise((resolve) => this.term.write(text, resolve));
  }

  /** Start `git undo <args>` on this terminal; when it ends the screen shows `EXIT=<code>`. */
  start(args: string[], env: Record<string, string> = {}): void {
    const draw = (bytes: Uint8Array) => this.draw(Buffer.from(bytes).toString());
    this.ended = runWithIO(args, {
      cwd: this.repo.dir,
      env: { ...this.repo.env, TERM: "xterm-256color", ...env },
      stdout: draw,
      stderr: draw,
      terminal: () => ({ input: this.keyboard, output: this.screenStream }),
    }).then((code) => {
      this.draw(`EXIT=${code}\n`);
      return code;
    });
  }

  /** What the screen shows now, one string per row, trailing spaces removed. */
  screen(): string {
    const b = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < this.rows; i++) lines.push(b.getLine(b.viewportY + i)?.translateToString(true) ?? "");
    return lines.join("\n");
  }

  /** The same with reverse video marked as tmux's capture-pane -e marks it (\x1b[7m ... \x1b[27m). */
  screenWithEscapes(): string {
    const b = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < this.rows; i++) {
      const line = b.getLine(b.viewportY + i);
      let text = "";
      let inverse = false;
      for (let x = 0; line && x < this.cols; x++) {
        const cell = line.getCell(x);
        if (!cell || cell.getWidth() === 0) continue;
        const on = cell.isInverse() !== 0;
        if (on !== inverse) text += on ? "\x1b[7m" : "\x1b[27m";
        inverse = on;
        text += cell.getChars() || " ";
      }
      lines.push((inverse ? `${text}\x1b[27m` : text).replace(/ +$/, ""));
    }
    return lines.join("\n");
  }

  /** Keys by tmux name (Down, Enter, Escape, Tab, BSpace, C-<letter>), or a character. */
  keys(...keys: string[]): void {
    for (const k of keys) {
      const ctrl = /^C-([a-z])$/.exec(k);
      this.keyboard.write(ctrl ? String.fromCharCode(ctrl[1]!.charCodeAt(0) - 96) : (KEYS[k] ?? k));
    }
  }

  /** Literal text, typed. */
  type(text: string): void {
    this.keyboard.write(text);
  }

  /** The terminal resized: the screen redrawn by whoever listens for "resize". */
  resize(cols: number, rows: number): void {
    this.term.resize(cols, rows);
    Object.assign(this, { cols, rows });
    this.screenStream.columns = cols;
    this.screenStream.rows = rows;
    this.screenStream.emit("resize");
  }

  /** Read the screen until `ok` holds (bounded); fails with the last screen. Read again after each draw, and every 100 ms. */
  async waitFor(ok: (screen: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      const seen = this.drawn;
      await this.settled;
      last = this.screen();
      if (ok(last)) return last;
      const recheck = Math.min(deadline, Date.now() + 100);
      while (this.drawn === seen && Date.now() < recheck) await Bun.sleep(5);
    }
    throw new Error(`timed out waiting for ${what}; the screen was:\n${last}`);
  }

  /** Wait until the screen shows `text`. */
  waitForText(text: string | RegExp, timeoutMs?: number): Promise<string> {
    return this.waitFor((s) => (typeof text === "string" ? s.includes(text) : text.test(s)), String(text), timeoutMs);
  }

  /** The command's exit code, once it has ended (and the screen shows it). */
  async exitCode(): Promise<number> {
    if (!this.ended) throw new Error("VirtualTerminal: nothing started");
    const code = await this.ended;
    await this.settled;
    return code;
  }

  /** Leave a command still running (the picker) with Ctrl-C, and wait for it. */
  async kill(): Promise<void> {
    if (!this.ended) return;
    this.keyboard.write("\x03");
    await this.ended.catch(() => undefined);
  }
}
