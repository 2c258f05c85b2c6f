// @pure: runs no Git, so one run of the suite covers it (test/run, GIT_UNDO_TEST_SKIP_PURE).
// The hooks and the shell scripts: POSIX sh that dash parses, and shellcheck-clean
// (the brief: every expansion quoted). .ci/run installs shellcheck.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT } from "../helpers/repo.ts";

const SCRIPTS = ["hooks/hook.sh", "hooks/reference-transaction", "hooks/post-index-change", "install.sh", "cli/git-undo", "cli/find-bun.sh", "cli/start-worker", "cli/npm-postinstall", "cli/install-completion", "build/prepack", "test/run"];

const run = (cmd: string[]) => {
  const r = Bun.spawnSync({ cmd, cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
};

test.each(SCRIPTS)("%s parses as POSIX sh (dash -n)", (file) => {
  const sh = Bun.which("dash") ?? "sh";
  const r = run([sh, "-n", join(ROOT, file)]);
  expect(r.out).toBe("");
  expect(r.code).toBe(0);
});

test.skipIf(!Bun.which("shellcheck"))("hooks and scripts are shellcheck-clean", () => {
  const r = run(["shellcheck", "--shell=sh", ...SCRIPTS.map((f) => join(ROOT, f))]);
  expect(r.out).toBe("");
  expect(r.code).toBe(0);
});
