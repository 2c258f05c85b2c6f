// Git's index file read directly (core/git-data/index/file.ts): every answer is checked
// against Git itself on index files Git wrote (versions 2, 3 and 4, split,
// with extended flags, a long path, SHA-256), and anything that does not parse
// answers null rather than a guess.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cacheTreeRoot, copyIndexFile, entriesDigest, indexVersion, RealIndex } from "../../core/git-data/index/file.ts";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";

const indexOf = (r: TestRepo) => join(r.gitDir(), "index");
const bytesOf = (r: TestRepo) => readFileSync(indexOf(r));
const paths = (...p: string[]) => p.map((x) => Buffer.from(x));

function threeFiles(): TestRepo {
  const r = makeRepo();
  r.commit("base", { "a.c": "a\n", "dir/b.c": "b\n", "dir/deep/c.c": "c\n" });
  return r;
}

describe("indexVersion", () => {
  test("the version Git wrote; null for a file that is not an index, or none", () => {
    const r = threeFiles();
    expect(indexVersion(indexOf(r))).toBe(2);
    for (const v of [4, 2]) {
      r.git(["update-index", `--index-version=${v}`]);
      expect(indexVersion(indexOf(r))).toBe(v);
    }
    // Git writes version 3 only when an entry needs its extended flags.
    r.git(["update-index", "--index-version=3"]);
    expect(indexVersion(indexOf(r))).toBe(2);
    r.write("intent.c", "later\n");
    r.git(["add", "-N", "intent.c"]);
    expect(indexVersion(indexOf(r))).toBe(3);
    writeFileSync(r.path("not-an-index"), "DIR");
    expect(indexVersion(r.path("not-an-index"))).toBeNull();
    writeFileSync(r.path("not-an-index"), "PACK\0\0\0\x02");
    expect(indexVersion(r.path("not-an-index"))).toBeNull();
    expect(indexVersion(r.path("missing"))).toBeNull();
  });
});

describe("RealIndex.has", () => {
  test("which paths have an entry, in versions 2 and 3 (extended flags shift the name); null for version 4", () => {
    const r = threeFiles();
    // Past 0xfff bytes the name length field saturates; no file system takes such a path, the index does.
    const long = `${"d/".repeat(1000)}${"n".repeat(2200)}.c`;
    const blob = r.git(["hash-object", "-w", "--stdin"], { input: "long\n" }).stdout.trim();
    r.git(["update-index", "--add", "--cacheinfo", `100644,${blob},${long}`]);
    expect(r.git(["ls-files", "--", long]).stdout).toBe(`${long}\n`);
    const ask = paths("a.c", "dir/b.c", "dir", "b.c", long, "intent.c", "dir/deep/c.c", "zzz");
    const has = () => RealIndex.open(indexOf(r), 20)!.has(ask);
    expect(indexVersion(indexOf(r))).toBe(2);
    expect(has()).toEqual([true, true, false, false, true, false, true, false]);
    r.write("intent.c", "later\n");
    r.git(["add", "-N", "intent.c"]); // intent-to-add: an extended flag, so Git writes version 3
    expect(indexVersion(indexOf(r))).toBe(3);
    expect(has()).toEqual([true, true, false, false, true, true, true, false]);
    r.git(["update-index", "--index-version=4"]);
    expect(has()).toBeNull();
  });

  test("a conflict's stages count as an entry; a missing index opens as null", () => {
    const r = makeRepo();
    r.commit("base", { "x.c": "base\n" });
    r.git(["checkout", "-q", "-b", "side"]);
    r.commit("side", { "x.c": "side\n" });
    r.git(["checkout", "-q", "-"]);
    r.commit("main", { "x.c": "main\n" });
    r.git(["merge", "-q", "side"], { allowFail: true });
    expect(RealIndex.open(indexOf(r), 20)!.has(paths("x.c", "y.c"))).toEqual([true, false]);
    expect(RealIndex.open(join(r.gitDir(), "no-index"), 20)).toBeNull();
  });
});

describe("the digest of the entries", () => {
  test("null where the kept index is never reused: version 3 or 4, split, assume-unchanged, cut short", () => {
    const r = threeFiles();
    const digest = entriesDigest(bytesOf(r), 20);
    expect(digest).not.toBeNull();
    expect(entriesDigest(bytesOf(r).subarray(0, 60), 20)).toBeNull();
    r.git(["update-index", "--index-version=4"]);
    expect(entriesDigest(bytesOf(r), 20)).toBeNull();
    r.git(["update-index", "--index-version=2"]);
    expect(entriesDigest(bytesOf(r), 20)).toBe(digest);
    r.git(["update-index", "--assume-unchanged", "a.c"]);
    expect(entriesDigest(bytesOf(r), 20)).toBeNull();
    r.git(["update-index", "--no-assume-unchanged", "a.c"]);
    expect(entriesDigest(bytesOf(r), 20)).toBe(digest);
    r.git(["update-index", "--split-index"]);
    expect(entriesDigest(bytesOf(r), 20)).toBeNull();
    r.git(["update-index", "--no-split-index"]);
    expect(entriesDigest(bytesOf(r), 20)).toBe(digest);
    r.write("intent.c", "later\n");
    r.git(["add", "-N", "intent.c"]); // version 3
    expect(entriesDigest(bytesOf(r), 20)).toBeNull();
  });

  test("RealIndex reads the same digest and cache tree as the functions on its bytes", () => {
    const r = threeFiles();
    const real = RealIndex.open(indexOf(r), 20)!;
    expect(real.entries).toBe(entriesDigest(bytesOf(r), 20));
    expect(real.cacheTree).toBe(r.git(["write-tree"]).stdout.trim());
  });
});

describe("copyIndexFile", () => {
  test("the copy keeps the index's time in whole seconds, never later; content as given", () => {
    const r = threeFiles();
    const dir = mkdtempSync(join(r.dir, "..", "copies-"));
    utimesSync(indexOf(r), 1_700_000_000.75, 1_700_000_000.75);
    const copy = copyIndexFile(indexOf(r), join(dir, "a"));
    expect(readFileSync(copy).equals(bytesOf(r))).toBe(true);
    expect(statSync(copy).mtimeMs).toBe(1_700_000_000_000);
    // With the content and time read earlier: those, whatever the file holds now.
    const copy2 = copyIndexFile(indexOf(r), join(dir, "b"), { bytes: Buffer.from("earlier"), mtimeMs: 1_600_000_000_999 });
    expect(readFileSync(copy2, "utf8")).toBe("earlier");
    expect(statSync(copy2).mtimeMs).toBe(1_600_000_000_000);
    // No index yet (a fresh repository): no copy, so Git starts an empty one.
    expect(existsSync(copyIndexFile(join(dir, "none"), join(dir, "c")))).toBe(false);
    // Git reads the copy as the index it is.
    expect(r.git(["ls-files"], { env: { GIT_INDEX_FILE: copy } }).stdout).toBe("a.c\ndir/b.c\ndir/deep/c.c\n");
  });
});

describe("cacheTreeRoot", () => {
  test("the tree write-tree gives, when the cache tree is whole; null after git add", () => {
    const r = makeRepo();
    r.commit("base", { "a.c": "a\n", "dir/b.c": "b\n", "dir/deep/c.c": "c\n" });
    const index = () => readFileSync(join(r.gitDir(), "index"));
    expect(cacheTreeRoot(index(), 20)).toBe(r.git(["write-tree"]).stdout.trim());
    r.write("dir/deep/c.c", "changed\n");
    r.git(["add", "dir/deep/c.c"]);
    expect(cacheTreeRoot(index(), 20)).toBeNull();
    r.git(["commit", "-q", "-m", "two"]);
    const root = cacheTreeRoot(index(), 20);
    expect(root).toBe(r.git(["rev-parse", "HEAD^{tree}"]).stdout.trim());
    expect(cacheTreeRoot(index().subarray(0, 40), 20)).toBeNull();
  });
});

describe("entriesDigest", () => {
  test("ignores stat data, sees modes, ids and flags, and leaves the bytes it reads alone", () => {
    const r = makeRepo();
    r.commit("base", { "a.c": "a\n", "b.c": "b\n" });
    const path = join(r.gitDir(), "index");
    const before = readFileSync(path);
    const copy = Buffer.from(before);
    const digest = entriesDigest(copy, 20);
    expect(digest).not.toBeNull();
    expect(copy.equals(before)).toBe(true);
    utimesSync(r.path("a.c"), 1_000_000_000, 1_000_000_000);
    r.git(["update-index", "--refresh"]);
    const refreshed = readFileSync(path);
    expect(refreshed.equals(before)).toBe(false);
    expect(entriesDigest(refreshed, 20)).toBe(digest);
    r.git(["update-index", "--chmod=+x", "a.c"]);
    expect(entriesDigest(readFileSync(path), 20)).not.toBe(digest);
  });
});
