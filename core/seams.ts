// Fault injection and cross-checks, for the test suite and the benches only.
// The core reads them here and never from the environment: the entry points
// (cli/main.ts for each command, worker/main.ts) set them from the
// GIT_UNDO_TEST_* variables a spawned test process is given (seamsFromEnv),
// and a test calling the core in its own process sets them directly.

export interface Seams {
  /** A restore fails right after this step (GIT_UNDO_TEST_FAIL_AFTER): its rollback is what is tested. */
  failAfter: string | null;
  /** A restore stops after this step (GIT_UNDO_TEST_PAUSE_AFTER), so that a test can kill it there. */
  pauseAfter: string | null;
  /** Where the paused restore writes the step's name (GIT_UNDO_TEST_PAUSE_FILE). */
  pauseFile: string | null;
  /** How the process stops there, given by the entry point (cli/main.ts: SIGSTOP to itself, which a test's SIGKILL ends); null: it cannot. */
  stopProcess: (() => void) | null;
  /** Every reuse of the kept worktree index is checked against a fresh copy (GIT_UNDO_VERIFY_KEPT). */
  verifyKept: boolean;
  /** Snapshots leave their keep entry out (GIT_UNDO_BENCH_NO_KEEP=1): bench/record.ts measures what it costs. */
  noKeep: boolean;
  /** How long to wait for a live owner of capture.lock (GIT_UNDO_LOCK_WAIT_MS); null: the default. */
  lockWaitMs: number | null;
  /** Work shown with a spinner waits this long first (GIT_UNDO_TEST_SLOW_WORK_MS), so that a test sees the spinner and can interrupt it. */
  slowWorkMs: number;
  /** The working tree's file system type as statfs would give it (GIT_UNDO_TEST_FS_TYPE, a number): a test's network file system. */
  fileSystemType: number | null;
}

export const seams: Seams = { failAfter: null, pauseAfter: null, pauseFile: null, stopProcess: null, verifyKept: false, noKeep: false, lockWaitMs: null, slowWorkMs: 0, fileSystemType: null };

/** The seams as these variables set them (unset: off). */
export function seamsFromEnv(env: Readonly<Record<string, string | undefined>>): void {
  const wait = env.GIT_UNDO_LOCK_WAIT_MS;
  seams.failAfter = env.GIT_UNDO_TEST_FAIL_AFTER || null;
  seams.pauseAfter = env.GIT_UNDO_TEST_PAUSE_AFTER || null;
  seams.pauseFile = env.GIT_UNDO_TEST_PAUSE_FILE || null;
  seams.verifyKept = Boolean(env.GIT_UNDO_VERIFY_KEPT);
  seams.noKeep = env.GIT_UNDO_BENCH_NO_KEEP === "1";
  seams.lockWaitMs = wait !== undefined && /^\d+$/.test(wait) ? Number(wait) : null;
  const slow = env.GIT_UNDO_TEST_SLOW_WORK_MS;
  seams.slowWorkMs = slow !== undefined && /^\d+$/.test(slow) ? Number(slow) : 0;
  const fsType = env.GIT_UNDO_TEST_FS_TYPE;
  seams.fileSystemType = fsType !== undefined && /^(0x[0-9a-f]+|\d+)$/i.test(fsType) ? Number(fsType) : null;
}
