// init and uninstall with hooks the user already has: the user's hook keeps
// running with its arguments and stdin, init only ever touches its own marked
// block, and uninstall gives the file back byte for byte.
import { expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectRecorded, list, settled, SETTLE_MS } from "../helpers/auto.ts";
import { makeRepo, tempDir } from "../helpers/repo.ts";

test("a user's reference-transaction hook keeps its stdin and arguments before, during and after git-undo", async () => {
  const r = makeRepo();
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.commit("base", { "a.txt": "a\n" });
  const gitDir = r.gitDir();
  const log = join(tempDir("log"), "user-hook.log");
  // -eu: our block must survive the strictest shell options the user may run with.
  const userHook = `#!/bin/sh -eu\n# the user's own hook\nprintf 'state %s\\n' "$1" >>'${log}'\ncat >>'${log}'\nexit 0\n`;
  const hookPath = join(gitDir, "hooks", "reference-transaction");
  writeFileSync(hookPath, userHook, { mode: 0o750 });
  const head = r.g("rev-parse", "HEAD");
  const zero = "0".repeat(40);
  // Newer Gits (2.55 here; not 2.39 or 2.31) also run the hook in the "preparing" state, first.
  let states = ["prepared", "committed"];
  const expected = (branch: string) => states.map((s) => `state ${s}\n${zero} ${head} refs/heads/${branch}\n`).join("");

  r.git(["branch", "before"]);
  if (readFileSync(log, "utf8").startsWith("state preparing\n")) states = ["preparing", ...states];
  expect(readFileSync(log, "utf8")).toBe(expected("before"));

  const init = await r.run(["init", "--file-hooks"]);
  expect(init.code).toBe(0);
  expect(init.stdout).toContain(`added git-undo's block to your hook ${hookPath}`);
  const installed = readFileSync(hookPath, "utf8");
  expect(installed.startsWith("#!/bin/sh -eu\n# >>> git-undo >>>")).toBe(true);
  expect(installed.endsWith(userHook.slice("#!/bin/sh -eu\n".length))).toBe(true);
  expect(statSync(hookPath).mode & 0o777).toBe(0o750);
  // post-index-change did not exist: init wrote the whole file.
  expect(readFileSync(join(gitDir, "hooks", "post-index-change"), "utf8")).toContain("'git undo init' created this file");

  writeFileSync(log, "");
  let snaps = list(r);
  r.git(["branch", "during"]);
  expect(readFileSync(log, "utf8")).toBe(expected("during"));
  snaps = await expectRecorded(r, snaps, /^branch during created$/, { gitDir });

  // Running init again changes nothing; a changed block is replaced in place.
  expect(r.undo(["init", "--file-hooks"]).stdout).toContain(`already up to date: ${hookPath}`);
  writeFileSync(hookPath, installed.replace("git_undo_bun='", "git_undo_bun='/old"), { mode: 0o750 });
  expect(r.undo(["init", "--file-hooks"]).stdout).toContain(`updated git-undo's block in ${hookPath}`);
  expect(readFileSync(hookPath, "utf8")).toBe(installed);

  const un = await r.run(["uninstall"]);
  expect(un.code).toBe(0);
  expect(readFileSync(hookPath, "utf8")).toBe(userHook);
  expect(statSync(hookPath).mode & 0o777).toBe(0o750);
  expect(existsSync(join(gitDir, "hooks", "post-index-change"))).toBe(false);
  writeFileSync(log, "");
  r.git(["branch", "after"]);
  expect(readFileSync(log, "utf8")).toBe(expected("after"));
  // Snapshots stay; nothing new is recorded.
  await settled(gitDir);
  expect(list(r)).toHaveLength(snaps.length);
  expect(existsSync(join(gitDir, "undo", "pending"))).toBe(false);
}, 60_000);

test("init refuses, writing nothing, when a hook is not a shell script, not executable, or a link", async () => {
  const r = makeRepo();
  r.commit("base");
  const hooks = join(r.gitDir(), "hooks");
  const py = "#!/usr/bin/env python3\nprint('hi')\n";
  writeFileSync(join(hooks, "post-index-change"), py, { mode: 0o755 });
  let res = await r.run(["init", "--file-hooks"]);
  expect(res.code).toBe(1);
  expect(res.stderr).toContain("is not a shell script");
  expect(existsSync(join(hooks, "reference-transaction"))).toBe(false);
  expect(readFileSync(join(hooks, "post-index-change"), "utf8")).toBe(py);
  expect(existsSync(join(r.gitDir(), "undo"))).toBe(false);

  writeFileSync(join(hooks, "post-index-change"), "#!/bin/sh\necho off\n");
  chmodSync(join(hooks, "post-index-change"), 0o644);
  res = await r.run(["init", "--file-hooks"]);
  expect(res.code).toBe(1);
  expect(res.stderr).toContain("not executable");
  expect(existsSync(join(hooks, "reference-transaction"))).toBe(false);

  const shared = join(tempDir("shared"), "hook");
  writeFileSync(shared, "#!/bin/sh\n", { mode: 0o755 });
  chmodSync(join(hooks, "post-index-change"), 0o755);
  symlinkSync(shared, join(hooks, "reference-transaction"));
  res = await r.run(["init", "--file-hooks"]);
  expect(res.code).toBe(1);
  expect(res.stderr).toContain("is a symbolic link");
  expect(readFileSync(shared, "utf8")).toBe("#!/bin/sh\n");
});

test("the refusal for hooks that are not shell scripts reads as sentences on one line, and fits 80 columns", async () => {
  const r = makeRepo();
  r.commit("base");
  const hooks = join(r.gitDir(), "hooks");
  for (const name of ["reference-transaction", "post-index-change"]) writeFileSync(join(hooks, name), "#!/usr/bin/env python3\n", { mode: 0o755 });
  const whole = await r.run(["init", "--file-hooks"]);
  expect(whole.code).toBe(1);
  expect(whole.stderr.trimEnd().split("\n")).toHaveLength(1);
  // Each hook's clause ends before the next begins, and the last before the ways on.
  expect(whole.stderr).toContain("only to a shell hook; ");
  expect(whole.stderr).toContain("only to a shell hook. Either run 'git undo init --chain'");
  expect(whole.stderr).not.toMatch(/shell hook [A-Z]/);
  const fitted = await r.run(["init", "--file-hooks"], { env: { COLUMNS: "80" } });
  const lines = fitted.stderr.trimEnd().split("\n");
  expect(lines.length).toBeGreaterThan(1);
  // A word longer than the width (a path in the command to copy, as long as the toolkit's folder makes it) has a line of its own.
  for (const l of lines) if (Bun.stringWidth(l) > 79) expect(l.trim()).not.toContain(" ");
  expect(lines.join(" ").replace(/\s+/g, " ")).toBe(whole.stderr.trim().replace(/\s+/g, " "));
});
