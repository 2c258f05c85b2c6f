// The space snapshots hold: git undo gc (and --dry-run) and doctor say how much
// of .git only snapshots keep, and what expiring old ones would free.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";

const MiB = 1024 * 1024;
const OLD = { GIT_COMMITTER_DATE: "1577880000 +0000" };

/** `2.0 MiB` (as cli/commands/snapshot.ts sizeText writes it) in bytes. */
function bytesOf(text: string): number {
  const m = /^([0-9.]+) (bytes|KiB|MiB|GiB)$/.exec(text);
  if (!m) throw new Error(`not a size: ${text}`);
  return Number(m[1]) * { bytes: 1, KiB: 1024, MiB: MiB, GiB: 1024 * MiB }[m[2] as "bytes"];
}
const heldAlone = (stdout: string) => bytesOf(/snapshots alone hold (.+?) \(/.exec(stdout)![1]!);
const wouldFree = (stdout: string) => bytesOf(/that would free (.+?) \(/.exec(stdout)![1]!);
/** Every ref byte for byte, and the objects' count: what a dry run must leave alone. */
const refsAndObjects = (r: TestRepo) => [r.g("for-each-ref", "--format=%(refname) %(objectname) %(symref)"), r.g("count-objects", "-v")].join("\n");

describe("space held by snapshots", () => {
  test("gc --dry-run says what expiring would free and deletes nothing", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.write("dump.bin", randomBytes(2 * MiB));
    expect(r.undo(["snapshot"], { env: OLD }).code).toBe(0); // #1 holds dump.bin
    rmSync(r.path("dump.bin"));
    expect(r.undo(["snapshot"], { env: OLD }).code).toBe(0); // #2
    r.write("b.txt", "b\n");
    await r.okIn("snapshot"); // #3, now
    const before = refsAndObjects(r);
    const user = fingerprint(r);
    const dry = await r.okIn("gc", "--dry-run");
    expect(dry.split("\n")[0]).toBe("would delete 2 snapshots: #1, #2");
    // The random 2 MiB compress to nothing less: deleting #1 and #2 frees at least that.
    expect(wouldFree(dry)).toBeGreaterThanOrEqual(2 * MiB);
    expect(heldAlone(dry)).toBeGreaterThanOrEqual(2 * MiB);
    expect(refsAndObjects(r)).toBe(before);
    expect(fingerprint(r)).toBe(user);
    // Expiring only what holds nothing big frees little.
    const dryNewer = await r.okIn("gc", "--dry-run", "--expire", "now");
    expect(dryNewer.split("\n")[0]).toBe("would delete 2 snapshots: #1, #2");
    expect(refsAndObjects(r)).toBe(before);

    // The real gc deletes them; the snapshots left hold nothing big.
    const done = await r.okIn("gc");
    expect(done.split("\n")[0]).toBe("deleted 2 snapshots: #1, #2");
    expect(heldAlone(done)).toBeLessThan(MiB);
    expect(fingerprint(r).split("\n").filter((l) => !l.startsWith("refs/undo/"))).toEqual(user.split("\n").filter((l) => !l.startsWith("refs/undo/")));
  });

  test("only what no ref, stash, reflog or index holds is counted", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    const big = randomBytes(2 * MiB);
    r.write("dump.bin", big);
    await r.okIn("snapshot"); // #1
    const space = () => {
      const res = r.undo(["gc", "--expire", "never"]);
      expect(res.code).toBe(1); // nothing to delete, but the space is said
      return heldAlone(res.stdout);
    };
    expect(space()).toBeGreaterThanOrEqual(2 * MiB);
    // Staged: the index holds it too.
    r.git(["add", "dump.bin"]);
    expect(space()).toBeLessThan(MiB);
    // Committed on a branch, then unstaged and removed: the branch holds it.
    r.git(["checkout", "-q", "-b", "keep"]);
    r.git(["commit", "-q", "-m", "dump"]);
    r.git(["checkout", "-q", "main"]);
    expect(space()).toBeLessThan(MiB);
    // The branch deleted: its commit is in HEAD's reflog, which holds it.
    r.git(["branch", "-q", "-D", "keep"]);
    expect(space()).toBeLessThan(MiB);
    // The reflogs expired too: only the snapshot holds it now.
    r.git(["reflog", "expire", "--expire=all", "--all"]);
    expect(space()).toBeGreaterThanOrEqual(2 * MiB);
  });

  test("a dropped stash entry is counted; snapshot refs with reflogs of their own are too", async () => {
    const r = makeRepo();
    r.git(["config", "core.logAllRefUpdates", "always"]);
    r.commit("base", { "a.txt": "a\n" });
    r.write("dump.bin", randomBytes(2 * MiB));
    r.git(["stash", "-q", "-u"]);
    await r.okIn("snapshot"); // #1: the stash entry holds the file
    const space = () => heldAlone(r.undo(["gc", "--expire", "never"]).stdout);
    expect(space()).toBeLessThan(MiB);
    r.git(["stash", "drop", "-q"]);
    expect(space()).toBeGreaterThanOrEqual(2 * MiB);
    r.write("b.txt", "b\n");
    await r.okIn("snapshot"); // #2: records the stash list without the entry, so #1 alone holds it
    expect(wouldFree(await r.okIn("gc", "--dry-run", "--expire", "now"))).toBeGreaterThanOrEqual(2 * MiB);
  });

  test("doctor shows the space line", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.write("dump.bin", randomBytes(MiB));
    await r.okIn("snapshot");
    const d = await r.run(["doctor"]);
    const line = d.stdout.split("\n").find((l) => l.includes("snapshots alone hold"));
    expect(line).toBeDefined();
    expect(heldAlone(line!)).toBeGreaterThanOrEqual(MiB);
    expect(line).toContain("git undo gc --dry-run");
  });

  test("a snapshot naming objects that are gone: gc still works and says the space is unknown", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    await r.okIn("snapshot"); // #1
    r.write("b.txt", "b\n");
    await r.okIn("snapshot"); // #2
    // A crafted old snapshot whose tree names a blob this repository does not have.
    const missing = "1".repeat(r.g("rev-parse", "HEAD").length);
    const tree = r.git(["mktree", "--missing"], { input: `100644 blob ${missing}\tghost\n` }).stdout.trim();
    const commit = r.git(["commit-tree", tree, "-m", "crafted"], { env: OLD }).stdout.trim();
    r.git(["update-ref", "refs/undo/snapshots/0000000000", commit]);
    const before = refsAndObjects(r);
    const dry = await r.run(["gc", "--dry-run"]);
    expect(dry.stderr).toBe("");
    expect(dry.stdout).toContain("unknown");
    expect(refsAndObjects(r)).toBe(before);
    const user = fingerprint(r);
    const res = await r.run(["gc", "--expire", "now"]);
    expect(res.code).toBe(0);
    expect(res.stdout.split("\n")[0]).toStartWith("deleted ");
    expect(fingerprint(r).split("\n").filter((l) => !l.startsWith("refs/undo/"))).toEqual(user.split("\n").filter((l) => !l.startsWith("refs/undo/")));
  });
});
