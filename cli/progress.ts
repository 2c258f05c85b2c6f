// A spinner on stderr while work that can take a while runs (grep over every
// snapshot, gc, init's first recording of a large tree): @clack/prompts'
// spinner, on a terminal only, shown once the work has run for SHOW_AFTER_MS
// and cleared when it ends, so that what the command prints is the same with
// or without it. Not where CI=true: @clack/prompts then prints a line per
// change and leaves the last one behind, which a build log does not need.
//
// The spinner as @clack/prompts starts it reads the keyboard raw, which would
// swallow what the user types ahead for the shell, and ends the process with
// 0 on Ctrl-C or Esc. A Git command does neither: the keyboard is handed back
// as it was the moment the spinner starts, so Ctrl-C stays the terminal's
// interrupt, and the interrupt ends the command with 130, as the shell counts it.
import type { SpinnerResult } from "@clack/prompts";
import { seams } from "../core/seams.ts";
import type { Output } from "./ui.ts";
import type { ProcessHost } from "./io.ts";

/** Work done sooner shows nothing. */
const SHOW_AFTER_MS = 400;
/** 128 + SIGINT, the status a shell gives a command ended by Ctrl-C. */
const INTERRUPTED = 130;

/** Run `work` with a spinner saying `label` on the command's stderr when that is a terminal and the work takes a while. */
export async function withSpinner<T>(output: Output, label: string, work: () => Promise<T>): Promise<T> {
  const slow = seams.slowWorkMs;
  const run = slow ? () => Bun.sleep(slow).then(work) : work;
  const io = output.io;
  const host = io.host;
  if (!host || io.env.CI === "true" || !(await output.isTerminal(2))) return run();
  let ended = false;
  let spin: SpinnerResult | null = null;
  const timer = setTimeout(() => {
    void import("@clack/prompts").then(({ spinner }) => {
      if (ended) return;
      spin = spinner({ output: host.stderr, withGuide: false, cancelMessage: "interrupted", onCancel: () => host.exit(INTERRUPTED) });
      keyboardLeftAlone(host, () => spin!.start(label));
    });
  }, SHOW_AFTER_MS);
  try {
    return await run();
  } finally {
    ended = true;
    clearTimeout(timer);
    (spin as SpinnerResult | null)?.clear();
  }
}

/** Run `start`, then undo what it did to stdin: raw mode off, its key listeners gone, nothing read. */
function keyboardLeftAlone(host: ProcessHost, start: () => void): void {
  const stdin = host.stdin;
  const before = new Set(stdin.listeners("keypress"));
  const wasRaw = stdin.isTTY ? stdin.isRaw : false;
  start();
  for (const listener of stdin.listeners("keypress")) if (!before.has(listener)) stdin.off("keypress", listener as (...args: unknown[]) => void);
  if (stdin.isTTY && stdin.isRaw !== wasRaw) stdin.setRawMode(wasRaw);
  stdin.pause();
}
