// The CLI run inside the test's own process (cli/main.ts runCommand): the same
// code as `git undo`, without the ~50 ms of a Bun start and module load each
// call. For tests where the process is not what is tested; the working
// directory and environment are the repository's for the call, then put back.
import { runCommand } from "../../cli/main.ts";
import { seams } from "../../core/seams.ts";
import type { RunResult } from "./repo.ts";

let running = false;

/** Run `fn` with the process in `cwd` with exactly `env`; one at a time, then everything put back. */
export async function inRepoProcess<T>(cwd: string, env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  if (running) throw new Error("inRepoProcess: one at a time (the working directory and environment are the process's)");
  running = true;
  const savedCwd = process.cwd();
  const savedEnv = { ...process.env };
  const setEnv = (to: Record<string, string | undefined>) => {
    for (const k of Object.keys(process.env)) if (!(k in to)) delete process.env[k];
    for (const [k, v] of Object.entries(to)) if (v !== undefined) process.env[k] = v;
  };
  try {
    setEnv(env);
    process.chdir(cwd);
    return await fn();
  } finally {
    process.chdir(savedCwd);
    setEnv(savedEnv);
    running = false;
  }
}

/** `git undo <args>` in `cwd` with exactly `env`. */
export async function runInProcess(args: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  // The command sets the seams from its environment (core/seams.ts); the test's own come back after.
  const suite = { ...seams };
  const code = await inRepoProcess(cwd, env, () => runCommand(args, (fd, bytes) => (fd === 1 ? out : err).push(Uint8Array.from(bytes)))).finally(() =>
    Object.assign(seams, suite),
  );
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}
