// Errors the CLI turns into one line and an exit code, the way Git does:
// 1 refused or nothing to do, 128 fatal, 129 usage.

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
