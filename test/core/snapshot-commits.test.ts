// The snapshot commits are read once and kept by id (core/git-data/refs/snapshot-commits.ts),
// and the refs outside refs/undo/ are listed without them (core/git-data/refs/index.ts). What
// the readers get must be what one for-each-ref of everything gave: the same
// tree, date and message for every snapshot, the same refs for the state.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodeNewest } from "../../core/snapshots/history.ts";
import { scanNewestUndoRefs, scanUndoRefs } from "../../core/git-data/refs/index.ts";
import { readRefState } from "../../core/git-data/refs/store.ts";
import { openRepo } from "../../core/repo.ts";
import { UNDO_FILES } from "../../core/undo-files.ts";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";

const FORMAT = ["%(refname)", "%(objectname)", "%(tree)", "%(committerdate:unix)", "%(contents)"].join("%00") + "%00%01%00";

/** What one for-each-ref says of the snapshot commits: the readers' input before the cache. */
function byForEachRef(r: TestRepo, prefix = "refs/undo/"): { ref: string; commit: string; tree: string; date: number; message: string }[] {
  return r
    .git(["for-each-ref", `--format=${FORMAT}`, prefix])
    .stdout.split("\0\x01\0\n")
    .filter(Boolean)
    .map((rec) => {
      const [ref = "", commit = "", tree = "", date = "", message = ""] = rec.split("\0");
      return { ref, commit, tree, date: Number(date), message };
    });
}

const cacheFile = (r: TestRepo) => join(r.gitDir(), "undo", UNDO_FILES.snapshotCommits);

function crafted(r: TestRepo, body: string): string {
  // Latin-1: each character one byte, so a body can hold bytes that are not UTF-8.
  return r.git(["hash-object", "-t", "commit", "-w", "--literally", "--stdin"], { input: Buffer.from(body, "latin1") }).stdout.trim();
}

describe("a snapshot commit is read as for-each-ref reads it", () => {
  test("leading empty lines, no message, a signature header, two committer lines, a bad date, non-UTF-8 bytes", () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    const tree = r.g("rev-parse", "HEAD^{tree}");
    const bodies = [
      `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000000 +0100\n\n\n\nsummary after empty lines\n\nUndo-Format: 1\n`,
      `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000001 -0230\n`,
      `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000002 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\nsigned\n`,
      `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000003 +0000\ncommitter D <d@e> 1800000000 +0000\n\ntwo committers\n`,
      `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> notadate\n\nbad date\n`,
      `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000004 +0000\nencoding ISO-8859-1\n\ncaf\xe9 \xff\n`,
    ];
    bodies.forEach((body, i) => {
      const id = crafted(r, body);
      r.git(["update-ref", `refs/undo/snapshots/${String(i + 1).padStart(10, "0")}`, id]);
    });
    return (async () => {
      const repo = await openRepo(r.at());
      // The readers' input as one for-each-ref gave it, bytes kept exactly (core/git.ts text).
      const plain = (await repo.git.text(["for-each-ref", `--format=${FORMAT}`, "refs/undo/"]))
        .split("\0\x01\0\n")
        .filter(Boolean)
        .map((rec) => {
          const [ref = "", commit = "", tree = "", date = "", message = ""] = rec.split("\0");
          return { ref, commit, tree, date: Number(date), message };
        });
      expect(plain).toHaveLength(bodies.length);
      const read = await scanUndoRefs(repo); // through cat-file
      expect(read).toEqual(plain);
      expect(await scanUndoRefs(repo)).toEqual(plain); // from the kept file
      expect(read.map((s) => s.message.slice(0, 9))).toEqual(["summary a", "", "signed\n", "two commi", "bad date\n", "caf\udce9 \udcff\n"]);
      expect(read.map((s) => s.date)).toEqual([1700000000, 1700000001, 1700000002, 1700000003, 0, 1700000004]);
    })();
  });
});

describe("the kept snapshot commits", () => {
  test("the readers see what for-each-ref of every snapshot gives, before and after the file is written, and after snapshots go", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    for (let i = 0; i < 5; i++) {
      r.write("a.txt", `edit ${i}\n`);
      r.ok("snapshot", "-m", `edit ${i} ü`);
    }
    await (async () => {
      const repo = await openRepo(r.at());
      const plain = byForEachRef(r);
      expect(await scanUndoRefs(repo)).toEqual(plain);
      expect(existsSync(cacheFile(r))).toBe(true);
      expect(await scanUndoRefs(repo)).toEqual(plain);
      // undo.limit deletes the oldest: it leaves the readers' view.
      r.git(["update-ref", "-d", "refs/undo/snapshots/0000000001"]);
      const fewer = byForEachRef(r);
      expect(await scanUndoRefs(repo)).toEqual(fewer);
      // A damaged or foreign file is ignored, never trusted for its shape; a torn last line is skipped.
      writeFileSync(cacheFile(r), '{"x": [1, 2], "y": "z"\n[1,2,3,4,5]\n' + JSON.stringify([fewer[0]!.commit, fewer[0]!.ref, "x", 1, "forged"]).slice(0, -3));
      expect(await scanUndoRefs(repo)).toEqual(fewer);
      writeFileSync(cacheFile(r), `${JSON.stringify([fewer[0]!.commit, fewer[0]!.ref, "x", "1", "forged"])}\n`);
      expect(await scanUndoRefs(repo)).toEqual(fewer);
    })();
  });

  test("a non-commit or symbolic ref under refs/undo/ is no snapshot; a huge message is read each time, not kept", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.ok("snapshot");
    const blob = r.git(["hash-object", "-w", "--stdin"], { input: "not a commit\n" }).stdout.trim();
    r.git(["update-ref", "refs/undo/snapshots/0000000002", blob]);
    r.git(["symbolic-ref", "refs/undo/snapshots/0000000003", "refs/undo/snapshots/0000000001"]);
    const tree = r.g("rev-parse", "HEAD^{tree}");
    const big = crafted(r, `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\n${"x".repeat(20_000)}\n`);
    r.git(["update-ref", "refs/undo/snapshots/0000000004", big]);
    await (async () => {
      const repo = await openRepo(r.at());
      const seen = await scanUndoRefs(repo);
      expect(seen.map((s) => s.ref)).toEqual(["refs/undo/snapshots/0000000001", "refs/undo/snapshots/0000000004"]);
      expect(seen[1]!.message).toHaveLength(20_001);
      expect(readFileSync(cacheFile(r), "utf8")).not.toContain(big);
      expect(await scanUndoRefs(repo)).toEqual(seen);
    })();
  });
});

test("a new commit is appended; once most lines name snapshots that are gone, the file is written anew with the others", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  const tree = r.g("rev-parse", "HEAD^{tree}");
  const bodies = Array.from({ length: 80 }, (_, i) => `tree ${tree}\nauthor A <a@b> ${i} +0000\ncommitter C <c@d> ${1700000000 + i} +0000\n\nsnapshot ${i}\n`);
  const ids = bodies.map((b) => crafted(r, b));
  const ref = (i: number) => `refs/undo/snapshots/${String(i + 1).padStart(10, "0")}`;
  r.git(["update-ref", "--stdin"], { input: ids.map((id, i) => `create ${ref(i)} ${id}\n`).join("") });
  const lines = () => readFileSync(cacheFile(r), "utf8").trimEnd().split("\n");
  await (async () => {
    const repo = await openRepo(r.at());
    await scanUndoRefs(repo);
    expect(lines()).toHaveLength(80);
    const extra = crafted(r, `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1800000000 +0000\n\nlater\n`);
    r.git(["update-ref", ref(80), extra]);
    await scanUndoRefs(repo);
    expect(lines()).toHaveLength(81);
    expect(JSON.parse(lines()[80]!)).toEqual([extra, ref(80), tree, 1800000000, "later\n"]);
    // 75 of 81 gone: more stale lines than live ones (and 64 more), so the file is rewritten.
    r.git(["update-ref", "--stdin"], { input: ids.slice(0, 75).map((id, i) => `delete ${ref(i)} ${id}\n`).join("") });
    const left = await scanUndoRefs(repo);
    expect(left.map((s) => s.commit)).toEqual([...ids.slice(75), extra]);
    expect(lines().map((l) => JSON.parse(l)[0])).toEqual([...ids.slice(75), extra]);
    expect(await scanUndoRefs(repo)).toEqual(left);
  })();
});

test("list -n reads only the newest commits, from the end of the file, and never drops the lines of the others", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  const tree = r.g("rev-parse", "HEAD^{tree}");
  // Long messages: the kept file outgrows the first piece read from its end (64 KiB).
  const pad = "x".repeat(1000);
  const ids = Array.from({ length: 200 }, (_, i) => crafted(r, `tree ${tree}\nauthor A <a@b> ${i} +0000\ncommitter C <c@d> ${1700000000 + i} +0000\n\nsnapshot ${i} ${pad}\n`));
  const ref = (i: number) => `refs/undo/snapshots/${String(i + 1).padStart(10, "0")}`;
  r.git(["update-ref", "--stdin"], { input: ids.map((id, i) => `create ${ref(i)} ${id}\n`).join("") });
  const lines = () => readFileSync(cacheFile(r), "utf8").trimEnd().split("\n");
  const newestOf = <T,>(all: T[], n: number): T[] => all.slice(-n);
  await (async () => {
    const repo = await openRepo(r.at());
    const prefix = "refs/undo/snapshots/";
    const all = await scanUndoRefs(repo, prefix);
    expect(all).toEqual(byForEachRef(r, prefix));
    expect(lines()).toHaveLength(200);
    expect(await scanNewestUndoRefs(repo, prefix, 20)).toEqual(newestOf(all, 20));
    // All 200 from a file of about 200 KiB: read from its end in growing pieces.
    expect(await scanNewestUndoRefs(repo, prefix, 200)).toEqual(all);
    expect(await scanNewestUndoRefs(repo, prefix, 500)).toEqual(all);
    // The oldest commits' lines were not parsed, and are still there.
    expect(lines()).toHaveLength(200);
    // Only with every ref listed do the lines of deleted snapshots go.
    r.git(["update-ref", "--stdin"], { input: ids.slice(0, 150).map((id, i) => `delete ${ref(i)} ${id}\n`).join("") });
    expect(await scanNewestUndoRefs(repo, prefix, 5)).toEqual(newestOf(all, 5));
    expect(lines()).toHaveLength(200);
    await scanUndoRefs(repo, prefix);
    expect(lines()).toHaveLength(50);
    // A newer name that is no snapshot (a stray, a tag) takes no place among the newest.
    // (Every commit is read then, and list -n takes the newest snapshots among them.)
    r.git(["update-ref", `${prefix}zz-stray`, "HEAD"]);
    r.git(["tag", "-a", "-m", "t", "t1"]);
    r.git(["update-ref", ref(200), r.g("rev-parse", "t1")]);
    const newest = decodeNewest(await scanNewestUndoRefs(repo, prefix, 5), prefix, 5);
    expect(newest.map((s) => s.ref)).toEqual(newestOf(all, 5).map((s) => s.ref));
  })();
});

describe("refs outside refs/undo/", () => {
  test("every ref whose first component is not undo is listed for the state, snapshots never", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.ok("snapshot");
    const names = ["refs/u", "refs/un/x", "refs/und", "refs/undox/y/z", "refs/undo-x", "refs/uxyz/q", "refs/Undo/x", "refs/notes/n", "refs/heads/deep/er/x", "refs/x"];
    for (const n of names) r.git(["update-ref", n, "HEAD"]);
    await (async () => {
      const repo = await openRepo(r.at());
      const listed = (await readRefState(repo)).refs.map((l) => l.name);
      const all = r.g("for-each-ref", "--format=%(refname)").split("\n").filter((n) => !n.startsWith("refs/undo/"));
      expect(listed).toEqual(all);
      for (const n of names) expect(listed).toContain(n);
      expect(listed.some((n) => n.startsWith("refs/undo/"))).toBe(false);
    })();
  });
});
