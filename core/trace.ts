// GIT_UNDO_TRACE=1: where a command's time goes, on stderr. One line per Git
// process and one per phase of the command (Bun's start and module loading,
// opening the repository, the capture, the plan...), each with the time it
// began (ms since the process started) and how long it took, then the total
// with the process's own CPU.
// Serial waits show as gaps between lines. Nothing is written when it is off.

import { writeSync } from "node:fs";
import { BUNDLE_PART, BUNDLED } from "./bundled.ts";

let enabled = false;
let gitProcesses = 0;
let lines = 0;
/** The CPU this process has used so far (ms): the entry point's clock, given to traceStart. */
let cpuMs: () => number = () => 0;

export const traceOn = (): boolean => enabled;

function emit(startedAt: number, line: string): void {
  lines++;
  writeSync(2, `git-undo trace: @${startedAt.toFixed(1)} ${(performance.now() - startedAt).toFixed(1)} ms  ${line}\n`);
}

/** A Git process that began at `startedAt` (performance.now()) has ended. */
export function traceGit(args: readonly string[], startedAt: number): void {
  gitProcesses++;
  emit(startedAt, `git ${args.join(" ").slice(0, 160)}`);
}

/**
 * A command begins, traced when its environment has GIT_UNDO_TRACE on: the
 * first line is Bun's start and the loading of the modules the command needed
 * so far, from the process's start to now, from the bundle (core/bundle.ts) or the sources.
 * `cpu` reads this process's own CPU (ms) for the last line: the entry point
 * gives it, for the core reads nothing of the process.
 */
export function traceStart(env: Readonly<Record<string, string | undefined>>, cpu: () => number): void {
  cpuMs = cpu;
  const v = env.GIT_UNDO_TRACE;
  enabled = v !== undefined && v !== "" && v !== "0" && v !== "false";
  gitProcesses = lines = 0;
  if (enabled) emit(0, `phase start (Bun and modules, ${BUNDLED ? `bundle${BUNDLE_PART ? `: ${BUNDLE_PART}` : ""}` : "sources"})`);
}

/** The command has ended: the total time, the Git processes and this process's CPU, when traced. */
export function traceEnd(): void {
  if (enabled && lines > 0) {
    // This process's own CPU beside its Git processes': on 2 cores both are the restore's time.
    const ms = cpuMs();
    writeSync(2, `git-undo trace: ${performance.now().toFixed(1)} ms in all, ${gitProcesses} Git processes, ${ms.toFixed(1)} ms CPU in this process\n`);
  }
  enabled = false;
}

/** Runs `work` as a named phase of the command, timed when tracing. */
export async function phase<T>(name: string, work: () => Promise<T>): Promise<T> {
  if (!traceOn()) return work();
  const startedAt = performance.now();
  try {
    return await work();
  } finally {
    emit(startedAt, `phase ${name}`);
  }
}
