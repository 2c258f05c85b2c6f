// GIT_UNDO_TRACE=1 (issue 14): where a command's time goes, on stderr, without
// changing its output; nothing when it is unset.
import { expect, test } from "bun:test";
import { makeRepo } from "../helpers/repo.ts";

test("GIT_UNDO_TRACE=1 lists each Git process and each phase with its time and ends with the total; stdout is unchanged", () => {
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
  for (const l of lines.slice(0, -1)) expect(l).toMatch(/^git-undo trace: @\d+\.\d \d+\.\d ms {2}(git|phase) \S+/);
  expect(lines.some((l) => / git for-each-ref /.test(l))).toBe(true);
  // The phases: Bun's start first (from the process's start), then the command's own.
  expect(lines[0]).toMatch(/^git-undo trace: @0\.0 \d+\.\d ms {2}phase start \(Bun and modules, (bundle|sources)\)$/);
  for (const name of ["load list", "open repository", "read snapshots"]) expect(lines.some((l) => l.endsWith(`  phase ${name}`))).toBe(true);
  const gitLines = lines.filter((l) => / ms {2}git /.test(l)).length;
  expect(lines.at(-1)).toMatch(new RegExp(`^git-undo trace: \\d+\\.\\d ms in all, ${gitLines} Git processes, \\d+\\.\\d ms CPU in this process$`));
  expect(r.undo(["list"], { env: { GIT_UNDO_TRACE: "0" } }).stderr).toBe("");
});

test("GIT_UNDO_TRACE=1 on a recording and a restore names their phases", () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  r.ok("snapshot");
  r.write("a.txt", "b\n");
  const recorded = r.undo(["snapshot"], { env: { GIT_UNDO_TRACE: "1" } });
  expect(recorded.code).toBe(0);
  for (const name of ["load snapshot", "capture", "commit snapshot"]) expect(recorded.stderr).toContain(`  phase ${name}\n`);
  const undone = r.undo([], { env: { GIT_UNDO_TRACE: "1" } });
  expect(undone.code).toBe(0);
  for (const name of ["capture", "plan", "apply", "capture after restore", "commit snapshot"]) expect(undone.stderr).toContain(`  phase ${name}\n`);
  expect(r.read("a.txt")).toBe("a\n");
});
