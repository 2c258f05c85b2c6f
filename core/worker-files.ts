// The worker's files that core writes too: worker.log (the store logs there
// what it could not do), the recording-problem note the next git-undo command
// warns of once (the CLI takes it), and a hook's reservation of worker.pid
// left empty for good, which every recording clears. The rest of the worker's
// protocol (the mark, the pid file's lease and claim) is worker/protocol.ts.
import { renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { errorMessage, Refused, refusalFacts, type Refusal } from "./errors.ts";
import { appendToFile, readUndoFile, replaceFile } from "./files.ts";
import { processes } from "./git-data/proc/index.ts";
import { undoFile } from "./undo-files.ts";

/** worker.log is cut back to its newest half past this size. */
export const LOG_LIMIT = 64 * 1024;

/**
 * An empty pid file is a hook's reservation being written (hooks/*), which
 * the hooks leave alone; one left empty for good (the hook killed between
 * creating and writing it, a full disk) would keep every hook from starting a
 * worker, so every recording clears one older than a few seconds.
 */
export function clearStaleReservation(undoDir: string): void {
  const path = undoFile(undoDir, "workerPid");
  try {
    if (readUndoFile(path)?.toString("latin1").trim() === "" && Date.now() - safeMtime(path) >= 5000) unlinkSync(path);
  } catch {
    /* none, or not ours to remove */
  }
}

/** A file's modification time, 0 when there is none (worker.pid's time is the worker's lease). */
export function safeMtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** Append a line to worker.log, keeping the file under LOG_LIMIT. */
export function logLine(undoDir: string, message: string): void {
  const path = undoFile(undoDir, "workerLog");
  try {
    const line = `${new Date().toISOString()} [${processes().selfPid}] ${message.replace(/\n+$/, "").replace(/\n/g, "\n    ")}\n`;
    // A plain file or nothing: a FIFO planted there would hang the worker.
    appendToFile(path, line);
    if (statSync(path).size > LOG_LIMIT) {
      const body = readUndoFile(path)?.toString("utf8") ?? "";
      const tail = body.slice(body.length - LOG_LIMIT / 2);
      writeFileSync(path, tail.slice(tail.indexOf("\n") + 1));
    }
  } catch {
    /* a log that cannot be written must not stop the recording */
  }
}

/**
 * A recording failed, or the worker stopped on an error (`what` happened,
 * `e` why): logged, and kept for the next git-undo command to warn of once
 * (takeRecordingProblem), so that recording never stops without a word. A
 * refusal is kept as its facts, for the CLI to word.
 */
export function noteRecordingProblem(undoDir: string, what: string, e: unknown): void {
  const message = errorMessage(e);
  logLine(undoDir, `${what}: ${message}`);
  const facts = e instanceof Refused ? `${refusalFacts(e.refusal)}\n` : "";
  try {
    replaceFile(undoFile(undoDir, "recordingProblem"), `${new Date().toISOString()} ${what}: ${message.split("\n")[0]}\n${facts}`);
  } catch {
    /* the log has it */
  }
}

/** A problem the worker noted: when, what happened, the error's message, and a refusal's facts when it was one. */
export interface RecordingProblem {
  when: string;
  what: string;
  message: string;
  refusal: Refusal | null;
}

/** A recording went through: a problem noted earlier is over. */
export function clearRecordingProblem(undoDir: string): void {
  for (const name of ["recordingProblem", "recordingProblemShown"] as const) {
    try {
      unlinkSync(undoFile(undoDir, name));
    } catch {
      /* none */
    }
  }
}

/** The problem the worker noted and no command has warned of yet, now marked as warned of; null for none. */
export function takeRecordingProblem(undoDir: string): RecordingProblem | null {
  const path = undoFile(undoDir, "recordingProblem");
  const text = readUndoFile(path)?.toString("utf8").trim() ?? null;
  if (text === null) return null;
  try {
    renameSync(path, undoFile(undoDir, "recordingProblemShown"));
  } catch {
    return null; // another command took it
  }
  if (!text) return null;
  const [first = "", facts] = text.split("\n");
  // "<ISO date> <what happened>: <message>"; an older worker's line may have no colon.
  const [, when = "", what = first, message = ""] = /^(\S+) (.*?)(?:: (.*))?$/.exec(first) ?? [];
  let refusal: Refusal | null = null;
  try {
    // Written by a worker of ours, maybe an older one: facts that do not parse are left out.
    const parsed: unknown = facts ? JSON.parse(facts) : null;
    if (parsed !== null && typeof parsed === "object" && typeof (parsed as { kind?: unknown }).kind === "string") refusal = parsed as Refusal;
  } catch {
    /* the message says it */
  }
  return { when, what, message, refusal };
}

/** The last `n` lines of worker.log. */
export function lastLogLines(undoDir: string, n: number): string[] {
  try {
    return (readUndoFile(undoFile(undoDir, "workerLog"))?.toString("utf8") ?? "").split("\n").filter(Boolean).slice(-n);
  } catch {
    return [];
  }
}
