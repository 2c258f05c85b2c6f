// Shared by the restore tests: snapshot trailers, fingerprints without git-undo's own refs.
import { expect } from "bun:test";
import { checkStates, listSnapshots } from "../../core/snapshots/history.ts";
import { isReadable } from "../../core/format/index.ts";
import { openRepo } from "../../core/repo.ts";
import { fingerprint, type RunResult, type TestRepo } from "./repo.ts";

/** The fingerprint minus refs/undo/ lines: what the user sees, whatever git-undo recorded. */
export function userFingerprint(r: TestRepo): string {
  return fingerprint(r)
    .split("\n")
    .filter((l) => !l.startsWith("refs/undo/"))
    .join("\n");
}

/** The Undo-* trailers of snapshot n (main worktree unless a prefix is given). */
export function trailersOf(r: TestRepo, n: number, prefix = "refs/undo/snapshots/"): Record<string, string> {
  const msg = r.g("log", "-1", "--format=%B", prefix + String(n).padStart(10, "0"));
  const out: Record<string, string> = {};
  for (const line of msg.split("\n")) {
    const m = /^(Undo-[A-Za-z]+): (.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** Numbers of the snapshots, oldest first. */
export const numbers = (r: TestRepo): number[] => r.snapshots().map((s) => s.number).reverse();

/** The position the list marks. */
export const positionOf = (r: TestRepo): number | undefined => r.snapshots().find((s) => s.current)?.number;

/** A refused restore: non-zero exit, the reason on stderr, nothing changed. */
export function expectRefused(r: TestRepo, args: string[], reason: RegExp, opts: { env?: Record<string, string> } = {}): RunResult {
  const before = fingerprint(r);
  const res = r.undo(args, opts);
  expect(res.code).not.toBe(0);
  expect(res.stderr).toMatch(reason);
  expect(fingerprint(r)).toBe(before);
  return res;
}

/** Every snapshot passes the checks the tool applies to snapshots it reads (core/format/validate.ts through loadState). */
export async function expectWellFormed(r: TestRepo): Promise<void> {
  const repo = await openRepo(r.at());
  const checked = await checkStates(repo, await listSnapshots(repo));
  expect(checked.filter((s) => !isReadable(s))).toEqual([]);
}

/** numbers, in-process. */
export const numbersIn = async (r: TestRepo): Promise<number[]> => (await r.snapshotsIn()).map((s) => s.number).reverse();

/** positionOf, in-process. */
export const positionIn = async (r: TestRepo): Promise<number | undefined> => (await r.snapshotsIn()).find((s) => s.current)?.number;

/** expectRefused, the command run in-process. */
export async function expectRefusedIn(r: TestRepo, args: string[], reason: RegExp, opts: { env?: Record<string, string> } = {}): Promise<RunResult> {
  const before = fingerprint(r);
  const res = await r.run(args, opts);
  expect(res.code).not.toBe(0);
  expect(res.stderr).toMatch(reason);
  expect(fingerprint(r)).toBe(before);
  return res;
}

/**
 * Two snapshots: #1 tracks debug.log (which .gitignore's `*.log` ignores), #2
 * no longer does and has no such file. Restoring #1 creates debug.log, so an
 * ignored file put there since blocks it.
 */
export async function untrackedLogHistory(r: TestRepo): Promise<void> {
  r.write(".gitignore", "*.log\n");
  r.write("debug.log", "tracked once\n");
  r.git(["add", "-f", ".gitignore", "debug.log"]);
  r.git(["commit", "-q", "-m", "one"]);
  await r.okIn("snapshot");
  r.git(["rm", "-q", "--cached", "debug.log"]);
  r.remove("debug.log");
  r.commit("two");
  await r.okIn("snapshot");
}
