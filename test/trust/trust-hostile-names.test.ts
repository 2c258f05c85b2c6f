// Hostile snapshots, part 3: ref names. Only a sequence's prefix and exactly
// ten digits is a snapshot; any other name there is skipped by every reader,
// listed by doctor, and can neither stop recording nor stand for another
// snapshot's number.
import { describe, expect, test } from "bun:test";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { checkCase, commitSnapshot, victim, type HostileCase } from "../helpers/hostile.ts";

const named = (name: string, ref: string): HostileCase => ({
  name,
  refusedBy: "not-a-snapshot",
  craft: (x, base) => commitSnapshot(x, base, base.tree, { ref }),
});

const CASES: HostileCase[] = [
  named("twenty digits (past exact integers)", "refs/undo/snapshots/99999999999999999999"),
  named("eleven digits shadowing #2", "refs/undo/snapshots/00000000002"),
  named("nine digits", "refs/undo/snapshots/000000003"),
  named("digits and a suffix", "refs/undo/snapshots/0000000003x"),
  named("a sign", "refs/undo/snapshots/+000000003"),
  named("a name beside the sequences", "refs/undo/other"),
  named("a worktree sequence with a deeper name", "refs/undo/worktrees/a/b/snapshots/0000000001"),
];

describe("refs under refs/undo/ that are not snapshots: skipped, listed by doctor, recording goes on", () => {
  for (const c of CASES) test(c.name, () => checkCase(c));
});

test("our own snapshot numbered 9999999999: recording refuses in one line, naming the ref", () => {
  const v = victim();
  v.git(["update-ref", "refs/undo/snapshots/9999999999", v.g("rev-parse", "refs/undo/snapshots/0000000002")]);
  // Recorded here (so the record says): the sequence is at its end. A fetched one is not (test/trust/trust-fetched-snapshots.test.ts).
  appendFileSync(join(v.gitDir(), "undo", "own-snapshots"), `${v.g("rev-parse", "refs/undo/snapshots/9999999999")} refs/undo/snapshots/9999999999\n`);
  v.write("notes.txt", "more\n");
  const r = v.undo(["snapshot"]);
  expect(r.code).not.toBe(0);
  expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(r.stderr).toContain("refs/undo/snapshots/9999999999");
});
