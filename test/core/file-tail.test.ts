// @pure: runs no Git, so one run of the suite covers it (test/run, GIT_UNDO_TEST_SKIP_PURE).
// Reading a growing file from its end (core/file-tail.ts), as the reflog and
// the kept snapshot commits are read: every piece starts at a whole line.
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fromFileEnd } from "../../core/file-tail.ts";
import { tempDir } from "../helpers/repo.ts";

test("pieces grow from the end, start at a whole line, and the whole file ends the reading", () => {
  const file = join(tempDir("tail"), "log");
  const long = "x".repeat(100);
  writeFileSync(file, `first\n${long}\nlast\n`);
  const seen: string[] = [];
  const all = fromFileEnd(file, 8, (piece, whole) => {
    seen.push(piece.toString());
    return whole ? piece.toString() : undefined;
  });
  expect(all).toBe(`first\n${long}\nlast\n`);
  // 8 bytes, then 32: the long line is cut, so "last" alone; then 128, the whole file of 112.
  expect(seen).toEqual(["last\n", "last\n", `first\n${long}\nlast\n`]);
  // A piece inside one long line holds no whole line yet.
  writeFileSync(file, `${long}${long}`);
  expect(fromFileEnd(file, 16, (piece, whole) => (whole ? undefined : piece.length))).toBe(0);
  expect(fromFileEnd(join(file, "missing"), 16, () => 1)).toBeNull();
});
