// `list` and `show` page through Git's pager on a terminal, as `git log` does:
// the pager Git would use (`git var GIT_PAGER`: GIT_PAGER, core.pager, PAGER,
// else less), unless pager.undo says otherwise (false: none; a command: that
// one) or `--no-pager` was given. Output to a pipe or a file is never paged,
// and neither is output Git already pages (pager.undo set for `git undo`
// makes Git start the pager itself: our stdout is then its pipe).
import type { Subprocess } from "bun";
import { gitBool, type Repo } from "../core/repo.ts";
import type { Output } from "./ui.ts";

/** `git undo --no-pager <command>`, taken from anywhere before `--`, as the colour options are: the rest, and whether it was given. */
export function takePagerOptions(argv: readonly string[]): { argv: string[]; noPager: boolean } {
  const end = argv.indexOf("--");
  const head = end === -1 ? argv : argv.slice(0, end);
  const tail = end === -1 ? [] : argv.slice(end);
  const kept = head.filter((a) => a !== "--no-pager");
  return { argv: [...kept, ...tail], noPager: kept.length !== head.length };
}

/** The pager pager.undo names: false for none, true for Git's own, or a command. */
function pagerSetting(repo: Repo): boolean | string | undefined {
  if (!repo.settings.has("pager.undo")) return undefined;
  const v = repo.settings.get("pager.undo");
  if (v === undefined) return true;
  return gitBool(v) ?? v!;
}

/** A command's pager: none until a command that pages starts it (cli/context.ts makes one per command). */
export class Pager {
  private running: Subprocess<"pipe", "inherit", "inherit"> | null = null;

  /** `disabled`: --no-pager was given. */
  constructor(
    private readonly output: Output,
    private readonly disabled: boolean,
  ) {}

  /** Start the pager when stdout is a terminal and nothing turns it off; from then on stdout goes to it. */
  async start(repo: Repo): Promise<void> {
    if (this.disabled || this.running || !(await this.output.isTerminal(1))) return;
    const setting = pagerSetting(repo);
    if (setting === false) return;
    const command = typeof setting === "string" ? setting : (await repo.git.line(["var", "GIT_PAGER"])).trim();
    if (command === "" || command === "cat") return;
    const io = this.output.io;
    // Git's defaults for less and lv: quit when it fits, keep colours, leave the screen as it was.
    const env: Record<string, string | undefined> = { ...io.env, GIT_PAGER_IN_USE: "true" };
    env.LESS ??= "FRX";
    env.LV ??= "-c";
    let pager: Subprocess<"pipe", "inherit", "inherit">;
    try {
      pager = Bun.spawn(["sh", "-c", command], { cwd: io.cwd, stdin: "pipe", stdout: "inherit", stderr: "inherit", env });
    } catch {
      return; // no shell: print as if there were no pager
    }
    this.running = pager;
    const sink = pager.stdin;
    // Ctrl-C is for the pager (less stops a search with it); we end when it does.
    io.host?.onInterrupt(() => {});
    this.output.setStdoutSink((bytes) => {
      try {
        sink.write(bytes);
      } catch {
        /* the pager was quit early: the rest goes nowhere, as Git's does */
      }
    });
  }

  /** Close the pager's input and wait for the user to leave it. */
  async end(): Promise<void> {
    if (!this.running) return;
    const p = this.running;
    this.running = null;
    this.output.setStdoutSink(null);
    try {
      await p.stdin.end();
    } catch {
      /* quit early */
    }
    await p.exited;
  }
}
