// GIT_UNDO_TRACE=1 (issue 14): where a command's time goes, on stderr, without
// changing its output; nothing when it is unset.
import { expect, test } from "bun:test";
import { makeRepo } from "./helpers/repo.ts";

test("GIT_UNDO_TRACE=1 lists each Git process with its time and ends with the total; stdout is unchanged", () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  r.ok("snapshot");
  const plain = r.undo(["list"]);
  expect(plain.stderr).toBe("");
  const traced = r.undo(["list"], { env: { GIT_UNDO_TRACE: "1" } });
  expect(traced.code).toBe(0);
  expect(traced.stdout.replace(/\d+ seconds? ago/, "")).toBe(plain.stdout.replace(/\d+ seconds? ago/, ""));
  const lines = traced.stderr.trimEnd().split("\n");
  expect(lines.length).toBeGreaterThanOrEqual(3);
  for (const l of lines.slice(0, -1)) expect(l).toMatch(/^git-undo trace: @\d+\.\d \d+\.\d ms {2}git \S+/);
  expect(lines.some((l) => / git for-each-ref /.test(l))).toBe(true);
  expect(lines.at(-1)).toMatch(new RegExp(`^git-undo trace: \\d+\\.\\d ms in all, ${lines.length - 1} Git processes$`));
  expect(r.undo(["list"], { env: { GIT_UNDO_TRACE: "0" } }).stderr).toBe("");
});
