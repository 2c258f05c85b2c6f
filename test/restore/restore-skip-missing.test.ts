// `git undo restore <n> --skip-missing`: objects a snapshot needs are gone (as
// when git gc pruned them after the snapshots holding them were deleted; here
// their loose files are removed, which is what pruning does). Without the
// flag the restore is refused and names what is affected; with it everything
// else is restored and what could not be is listed.
import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, fingerprint, type TestRepo } from "../helpers/repo.ts";
import { snap, snapIn } from "../helpers/snap.ts";

/** Remove a loose object's file: the object is gone, as after a prune. */
function dropObject(r: TestRepo, id: string): void {
  rmSync(join(r.gitDir(), "objects", id.slice(0, 2), id.slice(2)));
  expect(r.git(["cat-file", "-e", id], { allowFail: true }).code).not.toBe(0);
}

interface Fixture {
  r: TestRepo;
  number: number;
  c2: string;
  lost: string;
}

/** Snapshot N: main at c2, branch b at a commit only b has, a stash entry. Then main moves on, b and the stash go, their objects too. */
function setup(): Fixture {
  const r = makeRepo();
  r.commit("one", { "a.c": "1\n" });
  const c2 = r.commit("two", { "a.c": "2\n" });
  r.git(["checkout", "-q", "-b", "b"]);
  const lost = r.commit("only on b", { "b.c": "b\n" });
  r.git(["checkout", "-q", "main"]);
  r.write("a.c", "stashed\n");
  r.git(["stash", "push", "-q", "-m", "work in progress"]);
  const stashed = r.g("rev-parse", "refs/stash");
  const s = snap(r);
  const number = Number(s.ref.slice(-10));
  r.commit("three", { "a.c": "3\n" });
  r.git(["branch", "-q", "-D", "b"]);
  r.git(["stash", "drop", "-q"]);
  dropObject(r, lost);
  dropObject(r, stashed);
  return { r, number, c2, lost };
}

describe("restore --skip-missing", () => {
  test("without the flag: refused, naming refs/heads/b, the stash entry and the flag; nothing changes", async () => {
    const { r, number } = setup();
    const before = fingerprint(r);
    const res = await r.run(["restore", String(number)]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("refs/heads/b");
    expect(res.stderr).toContain("work in progress");
    expect(res.stderr).toContain(`git undo restore ${number} --skip-missing`);
    expect(fingerprint(r)).toBe(before);
  });

  test("with it: main, the files and the index come back; b and the stash entry are listed as not restored; exit 0 with a warning", async () => {
    const { r, number, c2, lost } = setup();
    const res = await r.run(["restore", String(number), "--skip-missing"]);
    expect(res.code).toBe(0);
    expect(r.g("rev-parse", "main")).toBe(c2);
    expect(r.read("a.c")).toBe("2\n");
    expect(r.g("status", "--porcelain")).toBe("");
    expect(r.git(["rev-parse", "-q", "--verify", "refs/heads/b"], { allowFail: true }).code).not.toBe(0);
    expect(r.g("stash", "list")).toBe("");
    expect(res.stdout).toContain(`not restored: b (${lost.slice(0, 7)})`);
    expect(res.stdout).toContain("not restored: stash entry 'On main: work in progress'");
    expect(res.stdout).toMatch(/^warning: 2 parts of #\d+ could not be restored/m);
    // The restore is recorded, and can itself be undone.
    expect((await r.snapshotsIn())[0]!.kind).toBe("restore");
  });

  test("a dry run with the flag lists what it would leave, and changes nothing", async () => {
    const { r, number } = setup();
    const before = fingerprint(r);
    const res = await r.run(["restore", String(number), "--skip-missing", "--dry-run"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("would not restore: b (");
    expect(res.stdout).not.toContain("would refuse");
    expect(fingerprint(r)).toBe(before);
  });

  test("HEAD on the branch whose commit is gone stays where it is, and is listed", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "1\n" });
    r.git(["checkout", "-q", "-b", "b"]);
    const lost = r.commit("only on b", { "b.c": "b\n" });
    const s = await snapIn(r);
    r.git(["checkout", "-q", "main"]);
    r.git(["branch", "-q", "-D", "b"]);
    dropObject(r, lost);
    const res = await r.run(["restore", s.ref.slice(-10).replace(/^0+/, ""), "--skip-missing"]);
    expect(res.code).toBe(0);
    expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/main");
    expect(res.stdout).toContain("not restored: HEAD (b in the snapshot)");
  });

  test("restore -h documents the flag and its exit code", async () => {
    const r = makeRepo();
    const help = await r.run(["restore", "-h"]);
    expect(help.stdout + help.stderr).toContain("--skip-missing");
    expect(help.stdout + help.stderr).toContain("exits 0 with a warning");
  });
});
