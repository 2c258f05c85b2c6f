// A restore that runs out of disk space, at whatever step, leaves refs, HEAD,
// index, files, stash and snapshots as they were and says so in one line
// (clarifications: "Restoring", all or nothing). The repository lives on a
// small tmpfs; a filler file outside it leaves a chosen amount of space free,
// and a test walks that amount up until the restore goes through, so the
// space runs out at every point on the way, in the working-tree merge with
// some files written among them; others fill the disk to the last block just
// before a later step (the index, the stash, the restore snapshot).
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fingerprint, makeRepo, tempDir, TestRepo } from "../helpers/repo.ts";
import { snapshotRefs } from "../helpers/snap.ts";
import { stoodBefore, untouched } from "../../core/restore/backup.ts";

const mounts: string[] = [];

function mount(dir: string, kib: number): string | null {
  const r = Bun.spawnSync({ cmd: ["mount", "-t", "tmpfs", "-o", `size=${kib}k`, "tmpfs", dir], stderr: "pipe" });
  if (r.exitCode !== 0) return r.stderr.toString().trim() || `mount exited with ${r.exitCode}`;
  mounts.push(dir);
  return null;
}

function unmountAll(): void {
  for (const d of mounts.splice(0)) {
    Bun.spawnSync({ cmd: ["umount", d], stderr: "ignore" });
    rmSync(d, { recursive: true, force: true });
  }
}
afterAll(unmountAll);
process.prependListener("exit", unmountAll);

/** Why tmpfs cannot be mounted here (not root, no mount in a container), or null. */
const cannotMount = (() => {
  const d = mkdtempSync(join(tmpdir(), "git-undo-enospc-probe-"));
  const why = mount(d, 64);
  unmountAll();
  rmSync(d, { recursive: true, force: true });
  return why;
})();
if (cannotMount) console.log(`restore-enospc: skipped, tmpfs cannot be mounted here: ${cannotMount}`);

/** A repository (and its HOME) on a tmpfs of `kib` KiB of its own. */
function repoOnTmpfs(kib: number): { r: TestRepo; root: string } {
  const root = mkdtempSync(join(tmpdir(), "git-undo-enospc-"));
  const why = mount(root, kib);
  if (why) throw new Error(`mount failed: ${why}`);
  const home = join(root, "home");
  mkdirSync(home);
  const dir = join(root, "repo");
  const r = new TestRepo(dir, home);
  r.git(["init", "-q", "-b", "main", dir], { cwd: root });
  r.git(["config", "user.name", "Test User"]);
  r.git(["config", "user.email", "test@example.com"]);
  return { r, root };
}

/** Incompressible text, so that objects and files take what they say. */
const noise = (chars: number) => randomBytes(Math.ceil((chars * 3) / 4)).toString("base64").slice(0, chars);

const FILE = 24_000;
const BIG = Array.from({ length: 8 }, (_, i) => `big/f${i}`);

interface Outcome {
  freeKib: number;
  message: string;
}

/**
 * `git undo restore 1` with `freeKib` free, stepping up by `step` until it goes
 * through. Every failure: one line, the fingerprint (snapshots included) as
 * before, no scratch directory, no index.lock. Returns the failures.
 */
async function restoreUntilItFits(r: TestRepo, root: string, fromKib: number, step: number): Promise<Outcome[]> {
  const filler = join(root, "filler");
  const undoDir = join(r.dir, ".git", "undo");
  const failures: Outcome[] = [];
  // Every failed step leaves these as they were (checked below), so the next one starts from them too.
  const before = fingerprint(r);
  const snapshots = snapshotRefs(r);
  for (let freeKib = fromKib; ; freeKib += step) {
    expect(freeKib).toBeLessThan(2048); // it must go through before that
    rmSync(filler, { force: true });
    const s = statfsSync(root);
    const fill = s.bavail * s.bsize - freeKib * 1024;
    if (fill > 0) writeFileSync(filler, Buffer.alloc(fill, 1));
    const res = await r.run(["restore", "1"]);
    rmSync(filler, { force: true });
    if (res.code === 0) return failures;
    const message = res.stderr.trim();
    expect({ freeKib, lines: message.split("\n") }).toEqual({ freeKib, lines: [message] });
    expect(res.code).toBe(128);
    expect(message).not.toContain("rolling it back failed");
    expect(fingerprint(r)).toBe(before);
    expect(snapshotRefs(r)).toEqual(snapshots);
    expect(readdirSync(undoDir).filter((n) => n.startsWith("tmp-"))).toEqual([]);
    expect(existsSync(join(r.dir, ".git", "index.lock"))).toBe(false);
    failures.push({ freeKib, message });
  }
}

/** A git on PATH that runs `script` before the real git, once, when its arguments hold `command`. */
function gitShim(command: string, script: string): { path: string; ran: string } {
  const dir = tempDir("enospc-shim");
  const ran = join(dir, "ran");
  writeFileSync(
    join(dir, "git"),
    `#!/bin/sh\ncase " $* " in *" ${command} "*) [ -e '${ran}' ] || { ${script}; : > '${ran}'; } ;; esac\nexec '${Bun.which("git")}' "$@"\n`,
    { mode: 0o755 },
  );
  return { path: `${dir}:${process.env.PATH}`, ran };
}

/**
 * The repository the later-step tests start from, on a tmpfs of 2048 KiB of
 * its own: built once per file (on a tmpfs it keeps), then copied (cp -a, its
 * HOME too) onto a fresh tmpfs of the same size for each test.
 */
async function laterStepRepo(): Promise<{ r: TestRepo; root: string; one: Record<string, string> }> {
  if (!laterTemplate) {
    const { r, root } = repoOnTmpfs(2048);
    // S's files are the big ones, more than the room set aside for the refs:
    // putting them back by writing them would not fit.
    const one: Record<string, string> = { "a.txt": "1\n", "gone/x.txt": "only in #1\n" };
    for (const f of BIG) one[f] = `small in #1: ${f}\n`;
    r.commit("one", one);
    r.git(["branch", "old"]);
    r.write("a.txt", "stashed in #1\n");
    r.git(["stash", "-q"]);
    await r.okIn("snapshot"); // #1
    r.remove("gone");
    const two: Record<string, string> = { "a.txt": "2\n", gone: "a file where #1 has a directory\n" };
    for (const f of BIG) two[f] = noise(FILE);
    r.git(["checkout", "-q", "-b", "topic"]);
    r.commit("two", two);
    r.git(["branch", "-f", "main", "topic"]);
    r.git(["branch", "-D", "old"]);
    r.write("a.txt", "stashed in #2\n");
    r.git(["stash", "-q", "-m", "second"]);
    r.write("untracked.txt", "untracked in #2\n");
    await r.okIn("snapshot"); // #2, the state left: refs, HEAD, files, index and stash all differ
    laterTemplate = { r, root, one };
  }
  const root = mkdtempSync(join(tmpdir(), "git-undo-enospc-"));
  const why = mount(root, 2048);
  if (why) throw new Error(`mount failed: ${why}`);
  const cp = Bun.spawnSync({ cmd: ["cp", "-a", `${join(laterTemplate.root, "repo")}`, `${join(laterTemplate.root, "home")}`, root], stdout: "ignore", stderr: "pipe" });
  if (cp.exitCode !== 0) throw new Error(`cp -a failed: ${cp.stderr.toString()}`);
  const r = new TestRepo(join(root, "repo"), join(root, "home"));
  // The copied files are new to the file system: the index's stat data refreshed, as copyRepo does.
  r.git(["update-index", "-q", "--refresh"], { env: { GIT_UNDO_INTERNAL: "1" }, allowFail: true });
  return { r, root, one: laterTemplate.one };
}
let laterTemplate: { r: TestRepo; root: string; one: Record<string, string> } | undefined;

const mergeFailed = (o: Outcome) => /working-tree merge failed/.test(o.message);

describe.skipIf(cannotMount !== null)("out of disk space during a restore: nothing changes", () => {
  test("in the working-tree merge, with some files already written", async () => {
    const { r, root } = repoOnTmpfs(4096);
    const one: Record<string, string> = { "a.txt": "1\n", "gone/x.txt": "only in #1\n" };
    for (const f of BIG) one[f] = noise(FILE);
    r.commit("one", one);
    await r.okIn("snapshot"); // #1
    r.remove("gone");
    const two: Record<string, string> = { "a.txt": "2\n", gone: "a file where #1 has a directory\n", "new/y.txt": "only in #2\n" };
    for (const f of BIG) two[f] = "small in #2\n";
    r.commit("two", two);
    r.write("untracked.txt", "untracked in #2\n");
    await r.okIn("snapshot"); // #2, the state left

    const failures = await restoreUntilItFits(r, root, 8, 8);
    const merge = failures.filter(mergeFailed);
    expect(merge.length).toBeGreaterThan(0);
    for (const o of merge) expect(o.message).toMatch(/^fatal: restore of #1 failed and was rolled back, nothing changed: .*the files it had changed are back: /);
    // Merge failures over a range of free space wider than three of the files:
    // in the last ones the merge had written whole files before it ran out.
    const kibs = merge.map((o) => o.freeKib);
    expect(Math.max(...kibs) - Math.min(...kibs)).toBeGreaterThan((3 * FILE) / 1024);

    // Then it fitted: #1 is back.
    expect(r.read("big/f3")).toBe(one["big/f3"]!);
    expect(r.read("gone/x.txt")).toBe("only in #1\n");
    expect(existsSync(r.path("new"))).toBe(false);
    expect(existsSync(r.path("untracked.txt"))).toBe(false);
  });

  // The disk fills up completely just before one of the later steps (a git on
  // PATH fills it, then runs the real one): the rollback then has no space but
  // what the restore set aside before it changed anything.
  const later: [step: string, command: string][] = [
    ["index", "add --refresh"],
    ["stash", "stash store"],
    ["restore snapshot", "commit-tree"],
  ];
  for (const [step, command] of later) {
    test(`at the ${step} step, after the merge, with the disk full to the last block`, async () => {
      const { r, root, one } = await laterStepRepo();
      // Fill the disk, then note the blocks left free (none).
      const free = join(tempDir("enospc-free"), "free");
      const shim = gitShim(command, `cat /dev/zero > '${join(root, "filler")}' 2>/dev/null; stat -f -c %a '${root}' > '${free}'`);
      const before = fingerprint(r);
      const snapshots = snapshotRefs(r);
      const res = await r.run(["restore", "1"], { env: { PATH: shim.path } });
      expect(readFileSync(free, "utf8")).toBe("0\n");
      rmSync(join(root, "filler"), { force: true });
      const message = res.stderr.trim();
      expect(message.split("\n")).toEqual([message]);
      expect(message).toMatch(/^fatal: restore of #1 failed and was rolled back, nothing changed: /);
      expect(res.code).toBe(128);
      expect(fingerprint(r)).toBe(before);
      expect(snapshotRefs(r)).toEqual(snapshots);
      expect(readdirSync(join(r.dir, ".git", "undo")).filter((n) => n.startsWith("tmp-"))).toEqual([]);
      expect(existsSync(join(r.dir, ".git", "index.lock"))).toBe(false);
      // With room again, the same restore goes through.
      await r.okIn("restore", "1");
      expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/main");
      expect(r.read("big/f0")).toBe(one["big/f0"]!);
      expect(r.read("gone/x.txt")).toBe("only in #1\n");
      expect(r.g("stash", "list", "--format=%gs")).toMatch(/^WIP on main: /);
      expect(r.g("rev-parse", "old")).toBe(r.g("rev-parse", "main"));
    });
  }

  test("a git dir on another file system: no links, the rollback goes by Git's merge", async () => {
    const { r, root } = repoOnTmpfs(1024);
    const gitDir = mkdtempSync(join(tmpdir(), "git-undo-enospc-gitdir-"));
    try {
      rmSync(r.dir, { recursive: true, force: true });
      r.git(["init", "-q", "-b", "main", "--separate-git-dir", join(gitDir, "g"), r.dir], { cwd: root });
      r.git(["config", "user.name", "Test User"]);
      r.git(["config", "user.email", "test@example.com"]);
      r.commit("one", { "a.txt": "1\n", "d/x.txt": "x\n" });
      await r.okIn("snapshot");
      r.remove("d");
      r.commit("two", { "a.txt": "2\n", d: "a file\n" });
      await r.okIn("snapshot");
      const before = fingerprint(r);
      const inode = lstatSync(r.path("a.txt")).ino;
      const res = await r.run(["restore", "1"], { env: { GIT_UNDO_TEST_FAIL_AFTER: "worktree" } });
      expect(res.code).toBe(128);
      expect(res.stderr).toContain("rolled back, nothing changed");
      expect(fingerprint(r)).toBe(before);
      expect(lstatSync(r.path("a.txt")).ino).not.toBe(inode); // written again by Git, not renamed back
      await r.okIn("restore", "1");
      expect(r.read("d/x.txt")).toBe("x\n");
    } finally {
      rmSync(gitDir, { recursive: true, force: true });
    }
  });
});

describe("the working tree's rollback by hard links", () => {
  const ino = (r: TestRepo, rel: string) => lstatSync(r.path(rel)).ino;

  test("every kind of change goes back, S's files as the very same files", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n", "run.sh": "echo\n", "d/x.txt": "x\n", f: "f is a file\n", "sub/deep/s.txt": "s\n" });
    r.symlink("a.txt", "link");
    r.git(["add", "link"]);
    r.git(["commit", "-q", "-m", "link"]);
    await r.okIn("snapshot"); // #1
    r.remove("d");
    r.remove("f");
    r.remove("sub");
    r.remove("link");
    r.symlink("run.sh", "link");
    r.write("run.sh", "echo\n", 0o755);
    r.commit("two", { "a.txt": "2\n", d: "d is a file\n", "f/y.txt": "y\n", "new/z.txt": "z\n" });
    r.write("untracked.txt", "untracked in #2\n");
    await r.okIn("snapshot"); // #2
    const before = fingerprint(r);
    const inodes = ["a.txt", "run.sh", "d", "f/y.txt", "link", "untracked.txt"].map((p) => ino(r, p));
    const res = await r.run(["restore", "1"], { env: { GIT_UNDO_TEST_FAIL_AFTER: "worktree" } });
    expect(res.code).toBe(128);
    expect(res.stderr).toContain("rolled back, nothing changed");
    expect(fingerprint(r)).toBe(before);
    // Renamed back, not written again.
    expect(["a.txt", "run.sh", "d", "f/y.txt", "link", "untracked.txt"].map((p) => ino(r, p))).toEqual(inodes);
    expect(existsSync(r.path("sub"))).toBe(false); // made by the merge, removed again
    expect(r.read("new/z.txt")).toBe("z\n"); // removed by the merge, with its directory
    await r.okIn("restore", "1");
    expect(r.read("d/x.txt")).toBe("x\n");
    expect(r.read("sub/deep/s.txt")).toBe("s\n");
    expect(readlinkSync(r.path("link"))).toBe("a.txt");
  });

  test("a file the merge wrote where a directory stood is the merge's, even with the directory's freed inode number", () => {
    // ext4 hands a freed inode number out again, and under load a rollback took such a file
    // for the directory that stood there (f/y.txt above, 1 run in 36): it left it, and could
    // not put the directory back.
    const dir = join(tempDir("kinds"), "f");
    mkdirSync(dir);
    const st = lstatSync(dir);
    const was = stoodBefore(st);
    expect(untouched(st, was)).toBe(true);
    // The same device and inode number, now a file.
    const file = Object.assign(Object.create(Object.getPrototypeOf(st)), st, { mode: 0o100644 }) as typeof st;
    expect(untouched(file, was)).toBe(false);
    expect(untouched(st, null)).toBe(false);
  });

  test("a file changed after the merge wrote it stays as changed, the rest goes back", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n", "b.txt": "b1\n" });
    await r.okIn("snapshot"); // #1
    r.commit("two", { "a.txt": "2\n", "b.txt": "b2\n", "c.txt": "only in #2\n" });
    await r.okIn("snapshot"); // #2
    // Just before the index step, after the merge: someone edits a file it wrote.
    const shim = gitShim("add --refresh", `printf 'edited during the restore\\n' > '${r.path("a.txt")}'`);
    const res = await r.run(["restore", "1"], { env: { GIT_UNDO_TEST_FAIL_AFTER: "index", PATH: shim.path } });
    expect(existsSync(shim.ran)).toBe(true);
    expect(res.code).toBe(128);
    expect(res.stderr).toMatch(/rolling it back failed too \(worktree: files changed since the restore wrote them are left as they are: a\.txt\)/);
    expect(r.read("a.txt")).toBe("edited during the restore\n");
    expect(r.read("b.txt")).toBe("b2\n");
    expect(r.read("c.txt")).toBe("only in #2\n");
    expect(r.g("rev-parse", "HEAD")).toBe(r.g("rev-parse", "main"));
    expect(r.g("log", "-1", "--format=%s")).toBe("two");
  });
});

