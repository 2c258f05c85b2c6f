// undo.maxNewFileSize: an untracked file larger than it is left out of the
// worktree tree (and never hashed), named by snapshot and doctor, and never
// touched by a restore; a file the index has is recorded whatever its size.
import { describe, expect, test } from "bun:test";
import { createHash, randomFillSync } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { record } from "../../core/record.ts";
import { openRepo } from "../../core/repo.ts";
import { fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { expectRefusedIn } from "../helpers/restore.ts";
import { latest, snap, snapIn } from "../helpers/snap.ts";
import { seams } from "../../core/seams.ts";

const MiB = 1024 * 1024;
const bytes = (n: number): Uint8Array => randomFillSync(new Uint8Array(n));
const sha = (r: TestRepo, rel: string): string => createHash("sha256").update(readFileSync(r.path(rel))).digest("hex");
/** The blob id a file would get, computed without writing it. */
const blobOf = (r: TestRepo, rel: string): string => r.g("hash-object", "--", rel);
const hasObject = (r: TestRepo, oid: string): boolean => r.git(["cat-file", "-e", oid], { allowFail: true }).code === 0;
const worktreeOf = (r: TestRepo, tree = latest(r).tree): string => r.g("rev-parse", `${tree}:worktree`);
const worktreeFiles = (r: TestRepo, tree = latest(r).tree): string[] => r.g("ls-tree", "-r", "--name-only", "-z", worktreeOf(r, tree)).split("\0").filter(Boolean);

/**
 * Plain Git's answer: `add -A` and write-tree on a copy of the index, with the
 * named files removed from it afterwards. Writes their blobs: run it last.
 */
function plainTreeWithout(r: TestRepo, leftOut: string[]): string {
  const dir = mkdtempSync(join(r.dir, "..", "plain-"));
  const env = { GIT_INDEX_FILE: join(dir, "index") };
  copyFileSync(join(r.gitDir(), "index"), env.GIT_INDEX_FILE);
  r.git(["add", "-A"], { env });
  if (leftOut.length) r.git(["update-index", "-z", "--force-remove", "--stdin"], { env, input: leftOut.map((p) => `${p}\0`).join("") });
  return r.git(["write-tree"], { env }).stdout.trim();
}

/** A repository with undo.maxNewFileSize=1m, one commit and a first snapshot. */
function limited(): TestRepo {
  const r = makeRepo();
  r.git(["config", "undo.maxNewFileSize", "1m"]);
  r.commit("base", { "a.c": "a\n", "src/b.c": "b\n" });
  snap(r);
  return r;
}

/** Record in-process, without the suite's cross-check when asked, to see which path the recorder took. */
async function recordInProcess(r: TestRepo, verify: boolean) {
  const suite = seams.verifyKept;
  seams.verifyKept = verify;
  return (async () => record(await openRepo(r.at()), { kind: "manual" }))().finally(() => {
    seams.verifyKept = suite;
  });
}

describe("undo.maxNewFileSize", () => {
  test("a 2 MiB untracked file over 1m: left out of the tree, never hashed, named by snapshot and doctor", async () => {
    const r = limited();
    r.write("dump.bin", bytes(2 * MiB));
    r.write("notes.txt", "small and new\n");
    const blob = blobOf(r, "dump.bin");
    const res = await r.run(["snapshot"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^#2 /);
    expect(res.stderr).toContain("dump.bin (2 MiB)");
    expect(res.stderr).toContain("undo.maxNewFileSize (1 MiB");
    expect(worktreeFiles(r)).toEqual(["a.c", "notes.txt", "src/b.c"]);
    // Not even hashed: no object for it anywhere in .git.
    expect(hasObject(r, blob)).toBe(false);
    // Again, with nothing changed: still named, still not hashed.
    const again = await r.run(["snapshot"]); // its exit code is the snapshot command's business
    expect(again.stdout).toBe("no change since #2\n");
    expect(again.stderr).toContain("dump.bin");
    expect(hasObject(r, blob)).toBe(false);

    const doctor = await r.run(["doctor"]);
    expect(doctor.stdout).toMatch(/1 untracked file is larger than undo\.maxNewFileSize \(1 MiB\)/);
    expect(doctor.stdout).toMatch(/^ +dump\.bin \(2 MiB\)$/m);
    expect(doctor.stdout).toContain("git config undo.maxNewFileSize");
    expect(hasObject(r, blob)).toBe(false);

    // What plain Git's add -A gives, minus that file (this writes its blob, so it comes last).
    expect(worktreeOf(r)).toBe(plainTreeWithout(r, ["dump.bin"]));
  });

  test("it survives undo and restores of older and newer snapshots, untouched", async () => {
    const r = limited(); // #1: a.c, src/b.c
    r.write("dump.bin", bytes(2 * MiB));
    r.write("a.c", "edited\n");
    await snapIn(r); // #2
    r.write("a.c", "edited again\n");
    r.write("src/new.c", "new\n");
    await snapIn(r); // #3
    const before = sha(r, "dump.bin");
    await r.okIn(); // git undo: back to #2's state
    expect(r.read("a.c")).toBe("edited\n");
    expect(sha(r, "dump.bin")).toBe(before);
    await r.okIn("restore", "1");
    expect(r.read("a.c")).toBe("a\n");
    expect(sha(r, "dump.bin")).toBe(before);
    await r.okIn("restore", "3");
    expect(r.read("src/new.c")).toBe("new\n");
    expect(sha(r, "dump.bin")).toBe(before);
    // No snapshot ever held it.
    expect(hasObject(r, blobOf(r, "dump.bin"))).toBe(false);
  });

  test("where a restore would create a file at its path, the restore refuses and leaves it", async () => {
    const r = limited();
    r.write("out.bin", "small, recorded\n");
    await snapIn(r); // #2 holds out.bin
    r.remove("out.bin");
    await snapIn(r); // #3 without it
    r.write("out.bin", bytes(2 * MiB));
    const big = sha(r, "out.bin");
    const before = fingerprint(r);
    await expectRefusedIn(r, ["restore", "2"], /out\.bin/);
    expect(sha(r, "out.bin")).toBe(big);
    expect(fingerprint(r)).toBe(before);
  });

  test("once staged it is recorded; 0 means no limit", async () => {
    const r = limited();
    r.write("dump.bin", bytes(2 * MiB));
    expect(r.undo(["snapshot"]).stdout).toBe("no change since #1\n");
    expect(worktreeFiles(r)).not.toContain("dump.bin");
    r.git(["add", "dump.bin"]);
    const staged = await r.run(["snapshot"]);
    expect(staged.stderr).not.toContain("dump.bin");
    expect(worktreeFiles(r)).toContain("dump.bin");
    expect(r.g("ls-tree", "--name-only", r.g("rev-parse", `${latest(r).tree}:index`))).toContain("dump.bin");
    expect(hasObject(r, blobOf(r, "dump.bin"))).toBe(true);

    const unlimited = makeRepo();
    unlimited.git(["config", "undo.maxNewFileSize", "0"]);
    unlimited.commit("base", { "a.c": "a\n" });
    unlimited.write("dump.bin", bytes(2 * MiB));
    const res = await unlimited.run(["snapshot"]);
    expect(res.stderr).toBe("");
    expect(worktreeFiles(unlimited)).toEqual(["a.c", "dump.bin"]);
    expect(hasObject(unlimited, blobOf(unlimited, "dump.bin"))).toBe(true);
  });

  test("the default is 64m; suffixes k, m and g; a bad value is a warning naming the key, the default in force", async () => {
    const r = makeRepo();
    r.commit("base", { "a.c": "a\n" });
    r.write("dump.bin", bytes(2 * MiB));
    expect(r.undo(["snapshot"]).stderr).toBe("");
    expect(worktreeFiles(r)).toContain("dump.bin"); // 2 MiB is under the default 64 MiB
    r.git(["config", "undo.maxNewFileSize", "1500k"]);
    r.write("a.c", "b\n");
    expect(r.undo(["snapshot"]).stderr).toContain("undo.maxNewFileSize (1.5 MiB");
    for (const bad of ["lots", "-1", "1.5m", "2x"]) {
      r.git(["config", "undo.maxNewFileSize", bad]);
      const res = await r.run(["snapshot"]);
      expect(res.stderr).toStartWith(`warning: undo.maxNewFileSize is '${bad}', not a whole number of bytes`);
      // The default (64 MiB) applies: the 2 MiB file is recorded again.
      expect(worktreeFiles(r)).toContain("dump.bin");
    }
  });

  test("the kept index and a fresh copy agree: a big file appearing, in a new folder, and a small one growing", async () => {
    const r = limited();
    r.write("keep/small.txt", "small\n");
    await recordInProcess(r, false);
    // The second recording reuses the kept index, with big files appearing.
    r.write("dump.bin", bytes(2 * MiB));
    r.write("keep/big.bin", bytes(3 * MiB));
    r.write("fresh/only.bin", bytes(2 * MiB)); // a new folder holding nothing else
    r.write("fresh2/big.bin", bytes(2 * MiB));
    r.write("fresh2/small.txt", "s\n");
    r.write("grows.log", "small for now\n");
    const blobs = ["dump.bin", "keep/big.bin", "fresh/only.bin", "fresh2/big.bin"].map((p) => blobOf(r, p));
    const kept = await recordInProcess(r, false);
    expect(kept.capture.fromKept).toBe(true);
    const expected = ["dump.bin", "fresh/only.bin", "fresh2/big.bin", "keep/big.bin"];
    expect(kept.capture.leftOut?.map((f) => f.path)).toEqual(expected);
    expect(kept.capture.leftOut?.find((f) => f.path === "keep/big.bin")?.size).toBe(3 * MiB);
    for (const b of blobs) expect(hasObject(r, b)).toBe(false);
    // The suite's cross-check: the kept index against the spec's method, trees and left-out lists.
    r.write("a.c", "edited\n");
    const verified = await recordInProcess(r, true);
    expect(verified.capture.fromKept).toBe(true);
    expect(verified.capture.leftOut?.map((f) => f.path)).toEqual(expected);
    // A small untracked file the kept index holds grows past the limit: left out, by either path.
    r.write("grows.log", bytes(2 * MiB));
    const grown = await recordInProcess(r, true);
    expect(grown.capture.leftOut?.map((f) => f.path)).toEqual(["dump.bin", "fresh/only.bin", "fresh2/big.bin", "grows.log", "keep/big.bin"]);
    expect(worktreeFiles(r)).not.toContain("grows.log");
    const after = await recordInProcess(r, true);
    expect(after.capture.fromKept).toBe(true);
    // git add of another file (the real index moves, its cache tree invalid): still left out.
    r.write("src/b.c", "staged\n");
    r.git(["add", "src/b.c"]);
    const moved = await recordInProcess(r, true);
    expect(moved.capture.leftOut?.map((f) => f.path)).toContain("dump.bin");
    for (const b of blobs) expect(hasObject(r, b)).toBe(false);
    expect(worktreeOf(r)).toBe(plainTreeWithout(r, ["dump.bin", "fresh/only.bin", "fresh2/big.bin", "grows.log", "keep/big.bin"]));
  });
});
