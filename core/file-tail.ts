// Reading a file that grows at its end (a reflog, the kept snapshot commits)
// from that end: what a reader wants is mostly in its last lines, and the
// whole file may be large.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/**
 * Reads the last `firstChunk` bytes of the file, then four times as many, and
 * so on, each piece starting at a line's start (a piece cut inside a line
 * begins after its first newline), until `take(piece, whole)` returns
 * something other than undefined or the whole file was read. Null when the
 * file cannot be opened, is not a regular file, or `take` gave nothing for the whole file.
 */
export function fromFileEnd<T>(
  path: string,
  firstChunk: number,
  take: (piece: Buffer, whole: boolean) => T | undefined,
  opts: { noFollow?: boolean } = {},
): T | null {
  let fd: number;
  try {
    // Never waits for a FIFO's writer; with noFollow (git-undo's own files) never reads through a link.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (opts.noFollow ? constants.O_NOFOLLOW : 0));
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const size = st.size;
    for (let chunk = Math.max(1, firstChunk); ; chunk *= 4) {
      const start = Math.max(0, size - chunk);
      const bytes = Buffer.alloc(size - start);
      let got = 0;
      while (got < bytes.length) {
        const n = readSync(fd, bytes, got, bytes.length - got, start + got);
        if (n === 0) break;
        got += n;
      }
      // No newline at all: the piece is one cut line, nothing whole yet.
      const newline = start > 0 ? bytes.subarray(0, got).indexOf(0x0a) : -1;
      const piece = start === 0 ? bytes.subarray(0, got) : bytes.subarray(newline < 0 ? got : newline + 1, got);
      const taken = take(piece, start === 0);
      if (taken !== undefined) return taken;
      if (start === 0) return null;
    }
  } finally {
    closeSync(fd);
  }
}
