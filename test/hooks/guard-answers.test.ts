// The guard's answers to Git (clarifications: "The guard": "/" or a true
// superset of the paths changed since the token). worker/tree-watch.ts keeps
// what changed with inotify; Git's results with the guard must equal Git's
// without a monitor, whatever happens to the files.
import { expect, test } from "bun:test";
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TreeWatch } from "../../worker/tree-watch.ts";
import { fileSystemRefusal } from "../../core/file-system.ts";
import { autoRepo, QUIET, waitFor, workerPid } from "../helpers/auto.ts";
import { tempDir } from "../helpers/repo.ts";

const linux = process.platform === "linux";

test.skipIf(!linux)("the watch lists each path changed since a token, and says '/' where it cannot tell", () => {
  const top = tempDir("watch");
  mkdirSync(join(top, "d/e"), { recursive: true });
  mkdirSync(join(top, ".git/objects"), { recursive: true });
  writeFileSync(join(top, "a.txt"), "a");
  writeFileSync(join(top, "d/e/f.txt"), "f");
  const w = TreeWatch.start(top)!;
  expect(w.broken).toBeNull();
  // A token of another watch, or none of ours: "/".
  const first = w.answer("1234567890");
  expect(first.paths).toBeNull();
  const names = (token: string) => w.answer(token).paths?.map((p) => p.toString()).sort() ?? null;
  let t = w.answer(first.token).token;
  expect(names(t)).toEqual([]);
  writeFileSync(join(top, "a.txt"), "edited");
  writeFileSync(join(top, "d/e/f.txt"), "edited");
  writeFileSync(join(top, "d/.hidden"), "dotfile");
  writeFileSync(join(top, ".git/objects/x"), "git's own: not listed");
  expect(names(t)).toEqual(["a.txt", "d/.hidden", "d/e/f.txt"]);
  t = w.answer(t).token;
  rmSync(join(top, "a.txt"));
  renameSync(join(top, "d/.hidden"), join(top, "d/shown"));
  chmodSync(join(top, "d/e/f.txt"), 0o755);
  expect(names(t)).toEqual(["a.txt", "d/.hidden", "d/e/f.txt", "d/shown"]);
  // Folders coming or going: what they held is in no event, so "/".
  for (const change of [() => mkdirSync(join(top, "new")), () => renameSync(join(top, "d/e"), join(top, "e2")), () => rmSync(join(top, "e2"), { recursive: true })]) {
    t = w.answer(t).token;
    change();
    expect(names(t)).toBeNull();
  }
  // A folder made after the watch began is watched too.
  t = w.answer(t).token;
  writeFileSync(join(top, "new/inside.txt"), "x");
  expect(names(t)).toEqual(["new/inside.txt"]);
  // Names that are not UTF-8 are given as the bytes they are.
  t = w.answer(t).token;
  const odd = Buffer.concat([Buffer.from(top + "/"), Buffer.from([0x66, 0xe9, 0x2e, 0x74])]);
  writeFileSync(odd, "x");
  expect(w.answer(t).paths).toEqual([Buffer.from([0x66, 0xe9, 0x2e, 0x74])]);
  // Nothing changed: nothing listed, and changedSince says so.
  const quiet = w.answer(w.answer(t).token).token;
  expect(names(quiet)).toEqual([]);
  expect(w.changedSince(Number(quiet.split(":")[2]))).toBe(false);
  writeFileSync(join(top, "b.txt"), "b");
  expect(w.changedSince(Number(quiet.split(":")[2]))).toBe(true);
  w.close();
});

test("the watch answers only on a file system whose every change this kernel sees", () => {
  for (const local of [0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630]) expect(fileSystemRefusal(local)).toBeNull();
  // A network file system, WSL's /mnt/c (9p), FUSE (sshfs): changed elsewhere, unseen here.
  expect(fileSystemRefusal(0x6969)).toMatch(/\(NFS\)/);
  expect(fileSystemRefusal(0x01021997)).toMatch(/\(9p\)/);
  expect(fileSystemRefusal(0x65735546)).toMatch(/\(FUSE\)/);
  // One not known either way counts as not local; statfs's f_type may come signed.
  expect(fileSystemRefusal(0x12345678)).toMatch(/type 0x12345678/);
  expect(fileSystemRefusal(0xff534d42 | 0)).toMatch(/\(CIFS\)/);
});

test.skipIf(!linux)("Git sees the same with the guard's answers as without a monitor, through edits, new folders, renames and its own commands", async () => {
  const r = autoRepo({ files: { "a.txt": "a\n", "b.txt": "b\n", "d/c.txt": "c\n", "d/e/f.txt": "f\n" }, guard: true });
  // A worker that stays, so that the answers come from its watch.
  const env = { GIT_UNDO_WORKER_LINGER: "60000" };
  const status = ["status", "--porcelain=v2", "--untracked-files=all", "--ignored=matching"];
  const compare = (step: string) => {
    const guarded = r.git(status, { env });
    const plain = r.git(["-c", "core.fsmonitor=", ...status], { env: { ...QUIET, GIT_OPTIONAL_LOCKS: "0" } });
    expect([step, guarded.stdout]).toEqual([step, plain.stdout]);
    const diff = r.git(["diff", "--name-status"], { env });
    expect([step, diff.stdout]).toEqual([step, r.git(["-c", "core.fsmonitor=", "diff", "--name-status"], { env: { ...QUIET, GIT_OPTIONAL_LOCKS: "0" } }).stdout]);
  };
  r.write(".gitignore", "*.log\n");
  r.git(["add", ".gitignore"], { env });
  compare("start");
  compare("again");
  let nonTrivial = 0;
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const files = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "d/new.txt", "g/h/i.txt", "x.log"];
  for (let i = 0; i < 40; i++) {
    const f = files[rand(files.length)]!;
    switch (rand(8)) {
      case 0:
      case 1:
        mkdirSync(join(r.dir, f, ".."), { recursive: true });
        writeFileSync(join(r.dir, f), `edit ${i}\n`);
        break;
      case 2:
        rmSync(join(r.dir, f), { force: true });
        break;
      case 3:
        r.git(["add", "-A"], { env });
        break;
      case 4:
        r.git(["checkout", "-q", "--", "."], { env, allowFail: true });
        break;
      case 5:
        r.git(["commit", "-q", "-a", "-m", `c${i}`], { env, allowFail: true });
        break;
      case 6:
        try {
          renameSync(join(r.dir, "d"), join(r.dir, "d2"));
          renameSync(join(r.dir, "d2"), join(r.dir, "d"));
        } catch {
          /* no d now */
        }
        break;
      case 7:
        chmodSync(join(r.dir, "a.txt"), rand(2) ? 0o755 : 0o644);
        break;
    }
    const trace = tempDir("trace");
    const traced = r.git(["status", "--porcelain"], { env: { ...env, GIT_TRACE2_EVENT: join(trace, "t") } });
    expect(traced.code).toBe(0);
    if (!Bun.file(join(trace, "t")).size || !(await Bun.file(join(trace, "t")).text()).includes("trivial-response")) nonTrivial++;
    compare(`step ${i}`);
  }
  // The answers were lists, not "/", most of the time.
  expect(nonTrivial).toBeGreaterThan(10);
  const pid = workerPid(join(r.gitDir(), "undo"));
  if (pid !== null) process.kill(pid, "SIGTERM");
}, 120_000);

test.skipIf(!linux)("a command on another work tree gets no answer from the watch of this one, nor the reverse", async () => {
  const r = autoRepo({ files: { "a.txt": "a\n", "b.txt": "b\n" }, guard: true });
  const env = { GIT_UNDO_WORKER_LINGER: "60000" };
  const undo = join(r.gitDir(), "undo");
  const old = workerPid(undo);
  if (old !== null) process.kill(old, "SIGTERM");
  await waitFor(() => workerPid(undo) === null, "no worker");
  // The worker starts for a command on another tree, and watches that one.
  const other = tempDir("other-tree");
  writeFileSync(join(other, "a.txt"), "a\n");
  writeFileSync(join(other, "b.txt"), "b\n");
  const elsewhere = () => r.git([`--work-tree=${other}`, "status", "--porcelain"], { env }).stdout;
  expect(elsewhere()).toBe("");
  const here = () => r.git(["status", "--porcelain"], { env }).stdout;
  for (let i = 0; i < 3; i++) expect(here()).toBe("");
  writeFileSync(join(r.dir, "a.txt"), "edited here\n");
  expect(here()).toBe(" M a.txt\n");
  writeFileSync(join(other, "b.txt"), "edited there\n");
  expect(elsewhere()).toBe(" M b.txt\n");
  const pid = workerPid(undo);
  if (pid !== null) process.kill(pid, "SIGTERM");
}, 60_000);

test.skipIf(!linux)("git rm and git mv of a submodule stage the .gitmodules they edit, as without a monitor", async () => {
  const sub = autoRepo({ files: { "s.txt": "s\n" } });
  const r = autoRepo({ files: { "a.txt": "a\n" }, guard: true });
  const env = { GIT_UNDO_WORKER_LINGER: "60000" };
  r.git(["-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.dir, "one"], { env: QUIET });
  r.git(["-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.dir, "two"], { env: QUIET });
  r.git(["commit", "-q", "-m", "subs"], { env: QUIET });
  for (let i = 0; i < 2; i++) r.git(["status", "--porcelain"], { env });
  r.git(["mv", "one", "uno"], { env });
  r.git(["rm", "-q", "two"], { env });
  const st = r.git(["status", "--porcelain"], { env }).stdout;
  expect(st).toContain("M  .gitmodules");
  expect(st).not.toContain(" M .gitmodules");
  const pid = workerPid(join(r.gitDir(), "undo"));
  if (pid !== null) process.kill(pid, "SIGTERM");
}, 60_000);
