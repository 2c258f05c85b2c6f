// Where init installs (clarifications: Locks and markers — hooks live where
// `git rev-parse --git-path hooks` says): core.hooksPath inside the repository,
// one outside it (only with --global-hooks, and inert where init never ran),
// set through includeIf, /dev/null or missing, and a husky layout.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectRecorded, list, settled, SETTLE_MS } from "../helpers/auto.ts";
import { makeRepo, tempDir, type TestRepo } from "../helpers/repo.ts";

function repo(): TestRepo {
  const r = makeRepo();
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.commit("base", { "a.txt": "a\n" });
  return r;
}

test("core.hooksPath in a tracked folder: new hooks are excluded locally, tracked ones are never touched", async () => {
  const r = repo();
  r.write(".githooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755);
  r.commit("hooks");
  r.git(["config", "core.hooksPath", ".githooks"]);
  const res = await r.run(["init", "--file-hooks"]);
  expect(res.code).toBe(0);
  expect(existsSync(r.path(".githooks/reference-transaction"))).toBe(true);
  expect(r.g("status", "--porcelain")).toBe("");
  // status may refresh the index, which fires the hook: the baseline is what that worker leaves.
  await settled(r.gitDir());
  let snaps = list(r);
  r.commit("recorded", { "b.txt": "b\n" });
  snaps = await expectRecorded(r, snaps, /^commit: recorded$/);
  expect(r.undo(["uninstall"]).code).toBe(0);
  expect(existsSync(r.path(".githooks/reference-transaction"))).toBe(false);
  expect(readFileSync(join(r.gitDir(), "info", "exclude"), "utf8")).not.toContain("git-undo");
  expect(r.g("status", "--porcelain")).toBe("");

  // A tracked file of the same name is the project's, not ours.
  r.write(".githooks/post-index-change", "#!/bin/sh\nexit 0\n", 0o755);
  r.commit("tracked hook");
  await settled(r.gitDir());
  const refused = await r.run(["init", "--file-hooks"]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(".githooks/post-index-change is tracked");
  expect(r.read(".githooks/post-index-change")).toBe("#!/bin/sh\nexit 0\n");
  expect(existsSync(r.path(".githooks/reference-transaction"))).toBe(false);
}, 60_000);

test("a hooks folder outside the repository, set through includeIf: explicit flag only, inert where init never ran", async () => {
  const r = repo();
  const other = repo();
  other.env = r.env; // one HOME: the same global configuration
  const shared = join(tempDir("global"), "hooks");
  mkdirSync(shared);
  writeFileSync(join(r.home, "hooks.cfg"), `[core]\n\thooksPath = ${shared}\n`);
  writeFileSync(join(r.home, ".gitconfig"), `[includeIf "gitdir:/"]\n\tpath = ${join(r.home, "hooks.cfg")}\n`);

  const refused = await r.run(["init", "--file-hooks"]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`core.hooksPath points at ${shared}, outside this repository`);
  expect(refused.stderr).toContain("--global-hooks");
  expect(existsSync(join(shared, "reference-transaction"))).toBe(false);

  expect(r.undo(["init", "--file-hooks", "--global-hooks"]).code).toBe(0);
  expect(existsSync(join(shared, "reference-transaction"))).toBe(true);
  let snaps = list(r);
  r.commit("recorded", { "b.txt": "b\n" });
  snaps = await expectRecorded(r, snaps, /^commit: recorded$/);

  // The other repository runs the same hooks but never ran init: nothing happens there.
  other.commit("not recorded", { "c.txt": "c\n" });
  expect(existsSync(join(other.gitDir(), "undo"))).toBe(false);
  expect(other.g("for-each-ref", "refs/undo/")).toBe("");

  // Without --global-hooks, uninstall turns recording off in this repository only.
  const here = await r.run(["uninstall"]);
  expect(here.code).toBe(0);
  expect(here.stdout).toContain("automatic recording is off in this repository");
  expect(existsSync(join(shared, "reference-transaction"))).toBe(true);
  expect(existsSync(join(r.gitDir(), "undo", "hooks-enabled"))).toBe(false);
  const before = r.g("for-each-ref", "refs/undo/");
  r.commit("not recorded either", { "d.txt": "d\n" });
  await Bun.sleep(SETTLE_MS * 3);
  expect(r.g("for-each-ref", "refs/undo/")).toBe(before);
  expect(existsSync(join(r.gitDir(), "undo", "pending"))).toBe(false);
  expect(r.undo(["uninstall", "--global-hooks"]).code).toBe(0);
  expect(existsSync(join(shared, "reference-transaction"))).toBe(false);
}, 60_000);

test("core.hooksPath=/dev/null or a missing folder: init explains and stops", async () => {
  const r = repo();
  r.git(["config", "core.hooksPath", "/dev/null"]);
  let res = await r.run(["init", "--file-hooks"]);
  expect(res.code).toBe(1);
  expect(res.stderr).toContain("core.hooksPath is /dev/null");
  expect(existsSync(join(r.gitDir(), "undo"))).toBe(false);
  r.git(["config", "core.hooksPath", "no-such-folder"]);
  res = await r.run(["init", "--file-hooks"]);
  expect(res.code).toBe(1);
  expect(res.stderr).toContain(`core.hooksPath names ${r.path("no-such-folder")}, which does not exist`);
  expect(existsSync(r.path("no-such-folder"))).toBe(false);
});

test("husky: installs beside husky's generated hooks in .husky/_, never into tracked .husky files", async () => {
  const r = repo();
  r.write(".husky/pre-commit", "npm test\n");
  r.commit("husky");
  // What `husky` (v9) generates: an ignored folder of hooks that source `h`.
  r.write(".husky/_/.gitignore", "*");
  r.write(".husky/_/h", "#!/usr/bin/env sh\n[ -f \"$(dirname \"$0\")/../$(basename \"$0\")\" ] || exit 0\n", 0o755);
  r.write(".husky/_/pre-commit", '#!/usr/bin/env sh\n. "${0%/*}/h"\n', 0o755);
  r.git(["config", "core.hooksPath", ".husky/_"]);
  await settled(r.gitDir());
  expect(r.undo(["init", "--file-hooks"]).code).toBe(0);
  expect(existsSync(r.path(".husky/_/reference-transaction"))).toBe(true);
  expect(existsSync(r.path(".husky/_/post-index-change"))).toBe(true);
  expect(r.read(".husky/pre-commit")).toBe("npm test\n");
  expect(r.read(".husky/_/pre-commit")).toBe('#!/usr/bin/env sh\n. "${0%/*}/h"\n');
  expect(r.g("status", "--porcelain")).toBe("");
  expect(readFileSync(join(r.gitDir(), "info", "exclude"), "utf8")).not.toContain("git-undo");
  await settled(r.gitDir());
  const snaps = list(r);
  r.commit("with husky", { "b.txt": "b\n" });
  await expectRecorded(r, snaps, /^commit: with husky$/);
}, 60_000);
