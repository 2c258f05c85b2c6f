// Two helpers of the working-tree restore that used node:crypto and now use
// Bun's own: the blob id of a symbolic link's target (core/git-data/objects.ts: which
// file a failed merge wrote), and the room held for a rollback (random bytes,
// real blocks).
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { blobId } from "../../core/git-data/objects.ts";
import { reserveSpace } from "../../core/restore/backup.ts";
import { makeRepo, tempDir } from "../helpers/repo.ts";

for (const objectFormat of ["sha1", "sha256"] as const) {
  test(`a link target's blob id is Git's (${objectFormat})`, () => {
    const r = makeRepo({ objectFormat });
    for (const target of ["a.txt", "../up/ünï", ""]) {
      const bytes = Buffer.from(target);
      const git = r.git(["hash-object", "--stdin"], { input: bytes }).stdout.trim();
      expect(blobId(bytes, objectFormat)).toBe(git);
    }
  });
}

test("the room held for a rollback: a file of that many random bytes, gone once freed", () => {
  const dir = tempDir("reserve");
  const size = 3 * 65536 + 123; // more than one call of crypto.getRandomValues gives
  const held = reserveSpace(dir, size);
  const file = join(dir, "rollback-space");
  const bytes = readFileSync(file);
  expect(bytes.length).toBe(size);
  // Random, not zeros a file system could compress away: no 64 KiB block, nor the tail, is all zeros.
  for (let at = 0; at < size; at += 65536) expect(bytes.subarray(at, Math.min(size, at + 65536)).some((b) => b !== 0)).toBe(true);
  held.free();
  expect(existsSync(file)).toBe(false);
  held.free();
  expect(reserveSpace(dir, 0)).toBeDefined();
  expect(existsSync(file)).toBe(false);
});
