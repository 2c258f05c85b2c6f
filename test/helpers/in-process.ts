// The CLI run inside the test's own process (cli/main.ts runCommand): the same
// code as `git undo`, without the ~50 ms of a Bun start and module load each
// call. For tests where the process is not what is tested: the command gets
// the repository's folder and environment and its own streams, as a spawned
// one would; the test process's own stay as they are.
import { runCommand } from "../../cli/main.ts";
import type { CommandIO } from "../../cli/io.ts";
import { seams } from "../../core/seams.ts";
import type { RunResult } from "./repo.ts";

let running = false;

/** `git undo <args>` with `io`; one at a time (the seams and the process table, core/seams.ts and core/git-data/proc/, are per process). */
export async function runWithIO(args: string[], io: Omit<CommandIO, "runtime" | "guard" | "host">): Promise<number> {
  if (running) throw new Error("runWithIO: one command at a time");
  running = true;
  // The command sets the seams from its environment (core/seams.ts); the test's own come back after.
  const suite = { ...seams };
  try {
    // No process guard: a signal meant for the test runner is never held by a restore in it.
    return await runCommand(args, { runtime: process.execPath, guard: null, host: null, ...io });
  } finally {
    Object.assign(seams, suite);
    running = false;
  }
}

/** `git undo <args>` in `cwd` with exactly `env`, its output collected; no terminal. */
export async function runInProcess(args: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const code = await runWithIO(args, {
    cwd,
    env,
    stdout: (bytes) => out.push(Uint8Array.from(bytes)),
    stderr: (bytes) => err.push(Uint8Array.from(bytes)),
    terminal: () => null,
  });
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}
