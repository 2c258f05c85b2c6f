// GIT_UNDO_TRACE=1: where a command's time goes, on stderr. One line per Git
// process and one per phase of the command (Bun's start and module loading,
// opening the repository, the capture, the plan...), each with the time it
// began (ms since the process started) and how long it took, then the total.
// Serial waits show as gaps between lines. Nothing is written when it is off.

let enabled: boolean | undefined;
let gitProcesses = 0;
let lines = 0;

export function traceOn(): boolean {
  if (enabled === undefined) {
    const v = process.env.GIT_UNDO_TRACE;
    enabled = v !== undefined && v !== "" && v !== "0" && v !== "false";
  }
  return enabled;
}

function emit(startedAt: number, line: string): void {
  if (lines++ === 0) {
    process.once("exit", () =>
      process.stderr.write(`git-undo trace: ${performance.now().toFixed(1)} ms in all, ${gitProcesses} Git processes\n`),
    );
  }
  process.stderr.write(`git-undo trace: @${startedAt.toFixed(1)} ${(performance.now() - startedAt).toFixed(1)} ms  ${line}\n`);
}

/** A Git process that began at `startedAt` (performance.now()) has ended. */
export function traceGit(args: readonly string[], startedAt: number): void {
  gitProcesses++;
  emit(startedAt, `git ${args.join(" ").slice(0, 160)}`);
}

/**
 * Bun's start and the loading of the modules the command needed so far: from
 * the process's start to now, from the bundle (.js, core/bundle.ts) or the sources.
 */
export function traceStart(): void {
  if (traceOn()) emit(0, `phase start (Bun and modules, ${import.meta.path.endsWith(".js") ? "bundle" : "sources"})`);
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
