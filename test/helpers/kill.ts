// Processes killed halfway, and the files they leave: for the tests that prove
// the next run cleans up after them.
import { expect } from "bun:test";
import { existsSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { CLI, tempDir, type TestRepo } from "./repo.ts";

/** Run the CLI until the restore pauses after `step` (GIT_UNDO_TEST_PAUSE_AFTER), then SIGKILL it. */
export async function killAfter(r: TestRepo, step: string, args: string[]): Promise<void> {
  const pauseFile = join(tempDir("pause"), "paused");
  const proc = Bun.spawn({
    cmd: [process.execPath, CLI, ...args],
    cwd: r.dir,
    env: { ...r.env, GIT_UNDO_TEST_PAUSE_AFTER: step, GIT_UNDO_TEST_PAUSE_FILE: pauseFile },
    stdout: "pipe",
    stderr: "pipe",
  });
  const deadline = Date.now() + 30_000;
  while (!(existsSync(pauseFile) && readFileSync(pauseFile, "utf8").endsWith("\n"))) {
    if (proc.exitCode !== null) throw new Error(`git undo ${args.join(" ")} ended (${proc.exitCode}) before step ${step}: ${await new Response(proc.stderr).text()}`);
    if (Date.now() > deadline) throw new Error(`git undo never reached step ${step}`);
    await Bun.sleep(10);
  }
  expect(readFileSync(pauseFile, "utf8")).toBe(`${step}\n`);
  proc.kill("SIGKILL");
  await proc.exited;
}

/**
 * A ref transaction SIGKILLed between taking its locks and committing: what a
 * Git killed mid-commit leaves (`<ref>.lock`, `packed-refs.lock` for a
 * deletion; reftable's `tables.list.lock`). `lines` are update-ref --stdin
 * commands (`start` and `prepare` are added around them); it is killed once
 * every path in `locks` exists (Git 2.31 does not flush its "prepare: ok").
 */
export async function killMidTransaction(r: TestRepo, lines: string[], locks: string[]): Promise<void> {
  const proc = Bun.spawn({ cmd: ["git", "update-ref", "--stdin"], cwd: r.dir, env: r.env, stdin: "pipe", stdout: "ignore", stderr: "pipe" });
  proc.stdin.write(["start", ...lines, "prepare", ""].join("\n"));
  proc.stdin.flush();
  const deadline = Date.now() + 30_000;
  while (!locks.every((l) => existsSync(l))) {
    if (proc.exitCode !== null) throw new Error(`update-ref ended (${proc.exitCode}) before it took its locks: ${await new Response(proc.stderr).text()}`);
    if (Date.now() > deadline) throw new Error(`update-ref never took ${locks.join(", ")}`);
    await Bun.sleep(10);
  }
  proc.kill("SIGKILL");
  await proc.exited;
}

/** A pid that no process has now: one that just ended. */
export async function deadPid(): Promise<number> {
  const p = Bun.spawn({ cmd: ["true"] });
  await p.exited;
  return p.pid;
}

/** Set a file's mtime `seconds` into the past. */
export function backdate(path: string, seconds: number): void {
  const t = Date.now() / 1000 - seconds;
  utimesSync(path, t, t);
}
