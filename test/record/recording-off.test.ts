// Issue #30.7: where `git undo init` has not run and nothing was ever
// recorded, every command says that recording is off and how to turn it on,
// and none writes into <gitdir>/undo until something is recorded.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fingerprint, makeRepo } from "../helpers/repo.ts";

const OFF = "recording is off here: run git undo init";

test("without init: undo, redo, restore, revert and list say recording is off, and write nothing", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  r.write("a.txt", "edited\n");
  const before = fingerprint(r);
  const undoDir = join(r.gitDir(), "undo");

  const cases: [string[], number, string][] = [
    [[], 1, `error: nothing to undo: ${OFF}`],
    [["undo"], 1, `error: nothing to undo: ${OFF}`],
    [["--dry-run"], 1, `error: nothing to undo: ${OFF}`],
    [["redo"], 1, `error: nothing to redo: ${OFF}`],
    [["restore", "3"], 128, `fatal: no snapshot #3: ${OFF}`],
    [["restore", "--dry-run", "1"], 128, `fatal: no snapshot #1: ${OFF}`],
    [["restore", "1", "--", "a.txt"], 128, `fatal: no snapshot #1: ${OFF}`],
    [["revert", "1"], 128, `fatal: no snapshot #1: ${OFF}`],
  ];
  for (const [args, code, line] of cases) {
    const res = await r.run(args);
    expect({ args, code: res.code, stderr: res.stderr, stdout: res.stdout }).toEqual({ args, code, stderr: `${line}\n`, stdout: "" });
    expect({ args, undoDir: existsSync(undoDir) }).toEqual({ args, undoDir: false });
  }
  const list = await r.run(["list"]);
  expect(list.stdout).toBe(`no snapshots yet: ${OFF} (git undo snapshot records one now)\n`);
  for (const args of [["list", "--json"], ["list", "-n", "2"], ["show", "1"], ["gc", "--dry-run"]]) {
    await r.run(args);
    expect({ args, undoDir: existsSync(undoDir) }).toEqual({ args, undoDir: false });
  }
  expect(fingerprint(r)).toBe(before);

  // Once something is recorded, git undo works as everywhere.
  await r.okIn("snapshot");
  r.write("a.txt", "edited again\n");
  const undo = await r.run([]);
  expect(undo.code).toBe(0);
  expect(r.read("a.txt")).toBe("edited\n");
});
