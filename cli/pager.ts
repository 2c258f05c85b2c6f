// `list` and `show` page through Git's pager on a terminal, as `git log` does:
// the pager Git would use (`git var GIT_PAGER`: GIT_PAGER, core.pager, PAGER,
// else less), unless pager.undo says otherwise (false: none; a command: that
// one) or `--no-pager` was given. Output to a pipe or a file is never paged,
// and neither is output Git already pages (pager.undo set for `git undo`
// makes Git start the pager itself: our stdout is then its pipe).
import type { Subprocess } from "bun";
import { gitBool, type Repo } from "../core/repo.ts";
import { isTerminal, setStdoutSink } from "./ui.ts";
import { commandIO } from "./io.ts";

let disabled = false;
let pager: Subprocess<"pipe", "inherit", "inherit"> | null = null;

/** A new command: paged unless it says otherwise. */
export function resetPager(): void {
  disabled = false;
}

/** `git undo --no-pager <command>`, taken from anywhere before `--`, as the colour options are. */
export function takePagerOptions(argv: readonly string[]): string[] {
  const end = argv.indexOf("--");
  const head = end === -1 ? argv : argv.slice(0, end);
  const tail = end === -1 ? [] : argv.slice(end);
  const kept = head.filter((a) => a !== "--no-pager");
  if (kept.length !== head.length) disabled = true;
  return [...kept, ...tail];
}

/** The pager pager.undo names: false for none, true for Git's own, or a command. */
function pagerSetting(repo: Repo): boolean | string | undefined {
  if (!repo.settings.has("pager.undo")) return undefined;
  const v = repo.settings.get("pager.undo");
  if (v === undefined) return true;
  return gitBool(v) ?? v!;
}

/** Start the pager when stdout is a terminal and nothing turns it off; from then on stdout goes to it. */
export async function startPager(repo: Repo): Promise<void> {
  if (disabled || pager || !(await isTerminal(1))) return;
  const setting = pagerSetting(repo);
  if (setting === false) return;
  const command = typeof setting === "string" ? setting : (await repo.git.line(["var", "GIT_PAGER"])).trim();
  if (command === "" || command === "cat") return;
  // Git's defaults for less and lv: quit when it fits, keep colours, leave the screen as it was.
  const env: Record<string, string | undefined> = { ...commandIO().env, GIT_PAGER_IN_USE: "true" };
  env.LESS ??= "FRX";
  env.LV ??= "-c";
  try {
    pager = Bun.spawn(["sh", "-c", command], { cwd: commandIO().cwd, stdin: "pipe", stdout: "inherit", stderr: "inherit", env });
  } catch {
    return; // no shell: print as if there were no pager
  }
  const sink = pager.stdin;
  // Ctrl-C is for the pager (less stops a search with it); we end when it does.
  commandIO().host?.onInterrupt(() => {});
  setStdoutSink((bytes) => {
    try {
      sink.write(bytes);
    } catch {
      /* the pager was quit early: the rest goes nowhere, as Git's does */
    }
  });
}

/** Close the pager's input and wait for the user to leave it. */
export async function endPager(): Promise<void> {
  if (!pager) return;
  const p = pager;
  pager = null;
  setStdoutSink(null);
  try {
    await p.stdin.end();
  } catch {
    /* quit early */
  }
  await p.exited;
}
