// Errors the CLI turns into one line and an exit code, the way Git does:
// 1 refused or nothing to do, 128 fatal, 129 usage.
import type { Blocker } from "./plan.ts";

export type ErrorKind = "refused" | "fatal" | "usage";

export const EXIT_CODE: Record<ErrorKind, number> = { refused: 1, fatal: 128, usage: 129 };

export class UndoError extends Error {
  constructor(
    message: string,
    readonly kind: ErrorKind = "fatal",
  ) {
    super(message);
    this.name = "UndoError";
  }
  get exitCode(): number {
    return EXIT_CODE[this.kind];
  }
}

export const refuse = (message: string): UndoError => new UndoError(message, "refused");
export const fatal = (message: string): UndoError => new UndoError(message, "fatal");
export const usage = (message: string): UndoError => new UndoError(message, "usage");

/**
 * A restore refused before anything changed, with every reason as data: the
 * CLI words them (cli/plan-words.ts). The message is only a fallback.
 */
export class RestoreRefused extends UndoError {
  constructor(readonly blockers: readonly Blocker[]) {
    super(`restore refused: ${blockers.map((b) => `${b.kind} (${b.names.join(", ")})`).join("; ")}`, "refused");
    this.name = "RestoreRefused";
  }
}

