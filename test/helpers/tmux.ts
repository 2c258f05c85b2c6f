// A real terminal for the picker's tests: a private tmux server (its own
// socket, no configuration) running the CLI in a pane of a given size, driven
// with send-keys and read with capture-pane.
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CLI, tempDir, type TestRepo } from "./repo.ts";

let serial = 0;
const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export const hasTmux = (): boolean => Bun.spawnSync({ cmd: ["sh", "-c", "command -v tmux"], stdout: "ignore" }).exitCode === 0;

export class Terminal {
  readonly socket = `gu-test-${process.pid}-${++serial}`;

  constructor(
    readonly repo: TestRepo,
    readonly cols = 100,
    readonly rows = 30,
  ) {}

  private tmux(args: string[]): { code: number; out: string } {
    const r = Bun.spawnSync({ cmd: ["tmux", "-L", this.socket, "-f", "/dev/null", ...args], stdout: "pipe", stderr: "pipe", env: this.repo.env });
    return { code: r.exitCode ?? -1, out: r.stdout.toString() };
  }

  /** Start `git undo <args>` in the pane; when it ends the pane prints `EXIT=<code>`, runs `then` (a shell line) and stays. */
  start(args: string[], env: Record<string, string> = {}, then = ""): void {
    const script = join(tempDir("tmux"), "run.sh");
    const vars = Object.entries({ ...this.repo.env, TERM: "xterm-256color", ...env })
      .map(([k, v]) => `export ${k}=${shq(v)}`)
      .join("\n");
    writeFileSync(
      script,
      // The pane's shell outlives a Ctrl-C the command gets, as an interactive one does, to print its status.
      `${vars}\ntrap : INT\ncd ${shq(this.repo.dir)}\n${shq(process.execPath)} ${shq(CLI)} ${args.map(shq).join(" ")}\necho "EXIT=$?"\n${then}\nsleep 120\n`,
    );
    const r = this.tmux(["new-session", "-d", "-x", String(this.cols), "-y", String(this.rows), `sh ${shq(script)}`]);
    if (r.code !== 0) throw new Error("tmux new-session failed");
    // A copy of everything the pane prints: waits read the screen again when it grows.
    this.output = join(dirname(script), "output");
    writeFileSync(this.output, "");
    this.tmux(["pipe-pane", "-t", "0", `cat >> ${shq(this.output)}`]);
  }

  /** The file pipe-pane copies the pane's output to (none before start). */
  private output: string | null = null;

  /** Bytes the pane has printed so far (as far as pipe-pane has copied them). */
  private printed(): number {
    try {
      return this.output ? statSync(this.output).size : 0;
    } catch {
      return 0;
    }
  }

  /** Everything the pane has printed so far, escape sequences and all. */
  printedText(): string {
    return this.output ? readFileSync(this.output, "utf8") : "";
  }

  /** What the pane shows now, one string per row, trailing spaces removed. */
  screen(): string {
    return this.tmux(["capture-pane", "-p", "-t", "0"]).out;
  }

  /** The same with the terminal's attributes as escape sequences (reverse video, colours). */
  screenWithEscapes(): string {
    return this.tmux(["capture-pane", "-p", "-e", "-t", "0"]).out;
  }

  /** Keys by tmux name (Down, Enter, Escape, Tab, C-c, BSpace). */
  keys(...keys: string[]): void {
    this.tmux(["send-keys", "-t", "0", ...keys]);
  }

  /** Literal text, typed. */
  type(text: string): void {
    this.tmux(["send-keys", "-t", "0", "-l", text]);
  }

  /**
   * Read the screen until `ok` holds (bounded); fails with the last screen.
   * It is read again as soon as the pane prints more (tmux updates the screen
   * before it copies the output), and at least every 250 ms whatever pipe-pane does.
   */
  async waitFor(ok: (screen: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      const seen = this.printed();
      last = this.screen();
      if (ok(last)) return last;
      const recheck = Math.min(deadline, Date.now() + 250);
      while (this.printed() === seen && Date.now() < recheck) await Bun.sleep(5);
    }
    throw new Error(`timed out waiting for ${what}; the screen was:\n${last}`);
  }

  /** Wait until the screen shows `text`. */
  waitForText(text: string | RegExp, timeoutMs?: number): Promise<string> {
    return this.waitFor((s) => (typeof text === "string" ? s.includes(text) : text.test(s)), String(text), timeoutMs);
  }

  /** The exit code the pane printed once the command ended. */
  async exitCode(): Promise<number> {
    const s = await this.waitForText(/EXIT=\d+/);
    return Number(/EXIT=(\d+)/.exec(s)![1]);
  }

  /** Stop the server and remove its socket (tmux leaves the file behind). */
  kill(): void {
    this.tmux(["kill-server"]);
    const uid = typeof process.getuid === "function" ? process.getuid() : 0;
    rmSync(join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${uid}`, this.socket), { force: true });
  }
}
