// A burst of Git activity is one snapshot (spec: Automatic recording: "a rebase
// of forty commits is therefore one snapshot"), hooks stay silent, and Git
// never waits for the worker.
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { autoRepo, expectRecorded, fortyCommitTopic, list, settled, waitFor } from "../helpers/auto.ts";

test("a 40-commit rebase makes exactly one snapshot, and the hooks print nothing", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  const before = await fortyCommitTopic(r);

  const res = r.git(["rebase", "-q", "main"]);
  expect(res.stdout).toBe("");
  expect(res.stderr).toBe("");
  await expectRecorded(r, before, /^rebase \(finish\): returning to refs\/heads\/topic$/, { gitDir });
  expect(r.g("log", "--format=%s", "-1")).toBe("topic 39");
}, 120_000);

test("out=$(git commit ...) returns while the worker is still settling", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  r.git(["config", "undo.settle", "4000"]);
  const before = list(r);
  const sh = Bun.spawnSync({
    cmd: ["sh", "-c", 'out=$(git commit -q --allow-empty -m captured 2>&1); printf "[%s]" "$out"'],
    cwd: r.dir,
    env: r.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(sh.stdout.toString()).toBe("[]");
  expect(sh.stderr.toString()).toBe("");
  // The substitution has returned; the worker it started is alive and has recorded nothing yet.
  const pidFile = join(gitDir, "undo", "worker.pid");
  await waitFor(() => existsSync(pidFile), "the worker to start");
  expect(() => process.kill(Number(readFileSync(pidFile, "utf8").trim()), 0)).not.toThrow();
  expect(list(r)).toHaveLength(before.length);
  await expectRecorded(r, before, /^commit: captured$/, { gitDir });
}, 60_000);

test("the hooks run alone print nothing and exit 0, whatever they are given", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  r.ok("init", "--file-hooks"); // the hook files themselves (Git 2.54+ would register config hooks)
  for (const [hook, args] of [
    ["reference-transaction", ["prepared"]],
    ["reference-transaction", ["committed"]],
    ["reference-transaction", ["aborted"]],
    ["reference-transaction", []],
    ["post-index-change", ["1", "0"]],
  ] as const) {
    for (const env of [{}, { GIT_UNDO_INTERNAL: "1" }, { GIT_DIR: "/nonexistent" }, { GIT_DIR: "." }]) {
      const p = Bun.spawnSync({
        cmd: [join(gitDir, "hooks", hook), ...args],
        cwd: r.dir,
        env: { ...r.env, ...env },
        stdin: Buffer.from("0000 1111 refs/heads/main\n"),
        stdout: "pipe",
        stderr: "pipe",
      });
      expect({ hook, args, env, code: p.exitCode, out: p.stdout.toString() + p.stderr.toString() }).toEqual({ hook, args, env, code: 0, out: "" });
    }
  }
  await settled(gitDir);
}, 60_000);
