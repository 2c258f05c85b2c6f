// git-undo's own folder, damaged: a zombie owning capture.lock, folders,
// links and FIFOs at the names of its files, a folder it cannot write. Nothing
// of that wedges recording or hangs a reader, nothing is written through a
// link, and doctor names each, as it names unreadable snapshots and objects
// the snapshots hold that the repository has lost.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { makeRepo, tempDir, type TestRepo } from "../helpers/repo.ts";
import { userFingerprint } from "../helpers/restore.ts";
import { snapshotRefs } from "../helpers/snap.ts";

const WAIT = { GIT_UNDO_LOCK_WAIT_MS: "300" };

/** Two snapshots, an annotated tag (so the keep cache is written), a third edit on disk. */
function history(): { r: TestRepo; undo: string } {
  const r = makeRepo();
  r.commit("one", { "a.txt": "1\n" });
  r.git(["tag", "-a", "-m", "v1", "v1"]);
  r.ok("snapshot");
  r.write("a.txt", "2\n");
  r.ok("snapshot");
  r.write("a.txt", "3\n");
  return { r, undo: join(r.gitDir(), "undo") };
}

/** A recording, a list and an undo all work, and the undo lands where it should. */
function everythingWorks(r: TestRepo): void {
  const snap = r.undo(["snapshot"], { env: WAIT });
  // All three at once, so that a failure shows how the command ended (-1: a signal).
  expect({ code: snap.code, stderr: snap.stderr, recorded: /^#3 /.test(snap.stdout) }).toEqual({ code: 0, stderr: "", recorded: true });
  expect(r.undo(["list"]).code).toBe(0);
  const undo = r.undo([], { env: WAIT });
  expect(undo.stderr).toBe("");
  expect(r.read("a.txt")).toBe("2\n");
}

const doctorOut = (r: TestRepo) => r.undo(["doctor"]).stdout;

test("a zombie owning capture.lock is gone: its lock is taken over", async () => {
  const { r, undo } = history();
  // The child ends after its parent has exec'd into `sleep 30`, which never reaps it: a zombie.
  const parent = Bun.spawn({ cmd: ["sh", "-c", "sleep 0.3 & echo $!; exec sleep 30"], stdout: "pipe" });
  try {
    const reader = parent.stdout.getReader();
    const zombie = Number(new TextDecoder().decode((await reader.read()).value).trim());
    for (let i = 0; i < 300 && !/\) Z /.test(readFileSync(`/proc/${zombie}/stat`, "utf8")); i++) await Bun.sleep(10);
    expect(readFileSync(`/proc/${zombie}/stat`, "utf8")).toMatch(/\) Z /);
    writeFileSync(join(undo, "capture.lock"), `${zombie} ${hostname()}\n`);
    expect(doctorOut(r)).toMatch(/capture\.lock was left by a process that is gone/);
    everythingWorks(r);
    expect(existsSync(join(undo, "capture.lock"))).toBe(false);
  } finally {
    parent.kill();
  }
});

const CACHES = ["snapshot-commits", "valid-trees", "worktree-index", "worktree-index.json", "committer.json", "state-blobs.json", "keep-tree.json"];

test("folders at the caches' names: every command works without them, doctor names each; empty ones are removed", async () => {
  const { r, undo } = history();
  for (const name of CACHES) {
    rmSync(join(undo, name), { recursive: true, force: true });
    mkdirSync(join(undo, name, "inside"), { recursive: true });
  }
  const doctor = doctorOut(r);
  for (const name of CACHES) expect(doctor).toMatch(new RegExp(`note .*undo/${name.replace(".", "\\.")} is a folder, not git-undo's cache: .*rm -r '`));
  everythingWorks(r);
  // What was in them is still there: git-undo never empties a folder it did not make.
  for (const name of CACHES) expect(existsSync(join(undo, name, "inside"))).toBe(true);
  // Empty, they are git-undo's to remove: the next recording does, and writes its caches again.
  for (const name of CACHES) rmSync(join(undo, name, "inside"), { recursive: true });
  r.write("a.txt", "4\n");
  expect(r.undo(["snapshot"]).code).toBe(0);
  for (const name of CACHES) expect(existsSync(join(undo, name)) ? statSync(join(undo, name)).isFile() : true).toBe(true);
  expect(statSync(join(undo, "snapshot-commits")).isFile()).toBe(true);
});

test("a folder at capture.lock or index-lock.owner: a refusal naming it and how to remove it, never 'another git-undo is running'", async () => {
  const { r, undo } = history();
  mkdirSync(join(undo, "capture.lock", "x"), { recursive: true });
  const before = userFingerprint(r);
  for (const args of [["snapshot"], []]) {
    const res = await r.run(args, { env: WAIT });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("capture.lock is a folder, not git-undo's lock");
    expect(res.stderr).toContain("rm -r '");
    expect(res.stderr).not.toContain("another git-undo");
  }
  expect(userFingerprint(r)).toBe(before);
  expect(doctorOut(r)).toMatch(/problem .*capture\.lock is a folder, not git-undo's file: nothing is recorded or restored while it is there/);
  rmSync(join(undo, "capture.lock"), { recursive: true });
  mkdirSync(join(undo, "index-lock.owner", "x"), { recursive: true });
  const res = await r.run([], { env: WAIT });
  expect(res.code).toBe(1);
  expect(res.stderr).toContain("index-lock.owner is a folder");
  expect(r.read("a.txt")).toBe("3\n");
});

test("links and FIFOs at snapshot-commits, valid-trees and tag-peels: nothing hangs, nothing is written through, the next recording replaces them", async () => {
  const { r, undo } = history();
  r.git(["tag", "-a", "-m", "a tag to peel", "t1"]);
  const outside = join(tempDir("outside"), "precious.txt");
  writeFileSync(outside, "precious\n");
  const caches = ["snapshot-commits", "valid-trees", "tag-peels"];
  for (const name of caches) {
    rmSync(join(undo, name), { force: true });
    symlinkSync(outside, join(undo, name));
  }
  // Readers first (no lock taken): they neither follow nor append through the links.
  expect(r.undo(["list"]).code).toBe(0);
  expect(r.undo(["show", "2"]).code).toBe(0);
  expect(readFileSync(outside, "utf8")).toBe("precious\n");
  everythingWorks(r);
  expect(readFileSync(outside, "utf8")).toBe("precious\n");
  expect(statSync(join(undo, "snapshot-commits")).isFile()).toBe(true);
  expect(statSync(join(undo, "tag-peels")).isFile()).toBe(true);

  for (const name of caches) {
    rmSync(join(undo, name), { force: true });
    expect(Bun.spawnSync({ cmd: ["mkfifo", join(undo, name)] }).exitCode).toBe(0);
  }
  const listed = await r.run(["list"]);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toMatch(/#4 /);
  r.write("a.txt", "5\n");
  expect(r.undo(["snapshot"]).code).toBe(0);
  // The FIFOs are gone; the caches are plain files again (valid-trees once a reader checks a state).
  expect(r.undo(["list"]).code).toBe(0);
  for (const name of caches) expect(statSync(join(undo, name)).isFile()).toBe(true);
});

test("doctor names a folder it cannot write, unreadable snapshots, a snapshot whose commit is gone and objects snapshots hold that are gone", async () => {
  const { r, undo } = history();
  r.write("only-in-a-snapshot.txt", "held by snapshot #3 alone\n");
  await r.okIn("snapshot");
  const blob = r.git(["hash-object", "--stdin"], { input: "held by snapshot #3 alone\n" }).stdout.trim();
  r.remove("only-in-a-snapshot.txt");
  // Unreadable: a snapshot of a format this version does not know.
  const newest = snapshotRefs(r).at(-1)!;
  const future = r.git(["commit-tree", newest.tree], { input: "future\n\nUndo-Format: 2\nUndo-Kind: change\nUndo-Head: main\n" }).stdout.trim();
  r.git(["update-ref", "refs/undo/snapshots/0000000010", future]);
  // A snapshot ref whose commit is gone, and a blob only a snapshot held, gone (loose objects: no gc ran).
  const lost = r.git(["commit-tree", newest.tree], { input: "lost\n\nUndo-Format: 1\nUndo-Kind: change\nUndo-Head: main\n" }).stdout.trim();
  r.git(["update-ref", "refs/undo/snapshots/0000000011", lost]);
  const objectPath = (id: string) => join(r.gitDir(), "objects", id.slice(0, 2), id.slice(2));
  unlinkSync(objectPath(lost));
  unlinkSync(objectPath(blob));
  const doctor = await r.run(["doctor"]);
  expect(doctor.code).toBe(1);
  expect(doctor.stdout).toMatch(/note .*1 snapshot cannot be read; undo and redo pass over it/);
  expect(doctor.stdout).toMatch(/#10: .*format 2/);
  expect(doctor.stdout).toMatch(/problem .*refs\/undo\/snapshots\/0000000011 names an object that is missing from the repository: that snapshot is lost/);
  expect(doctor.stdout).toMatch(new RegExp(`problem .*1 object the snapshots hold is missing from the repository \\(${blob}\\)`));
  // Recording goes on past all of it.
  r.write("a.txt", "4\n");
  expect(r.undo(["snapshot"]).code).toBe(0);

  // undo/ made a plain file: nothing can be written there, and doctor says so.
  rmSync(undo, { recursive: true });
  writeFileSync(undo, "not a folder\n");
  expect(doctorOut(r)).toMatch(/problem .*git-undo cannot write in .*undo \(EEXIST\): nothing is recorded or restored/);
});
