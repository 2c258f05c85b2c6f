// A restore plans while its capture runs, on the guess that the state now is
// the latest snapshot's (core/restore/index.ts, planOnLatest). The guess is
// taken only when the capture comes out as that very state; whatever else
// changed since (a file, a ref other than HEAD, the index) makes the restore
// record that state first and plan from it, as the spec's Restoring has it,
// so the state left is never lost. And HEAD having moved (its reflog) means no
// guess is made at all.
import { describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, refFormatOf, tempDir, type TestRepo } from "../helpers/repo.ts";

/** A repository with two snapshots: a.txt "one", then "two" (and b.txt). */
async function twoSnapshots(): Promise<TestRepo> {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  await r.okIn("snapshot");
  r.commit("two", { "a.txt": "two\n", "b.txt": "b\n" });
  await r.okIn("snapshot");
  return r;
}

/** `git undo` in-process, with the Git commands it ran. */
async function undoTraced(r: TestRepo, args: string[] = []): Promise<{ code: number; stderr: string; commands: string[] }> {
  const file = join(tempDir("spawns"), "spawns");
  rmSync(file, { force: true });
  const res = await r.run(args, { env: { GIT_UNDO_TRACE_SPAWNS: file } });
  let commands: string[] = [];
  try {
    commands = readFileSync(file, "utf8").split("\n").filter(Boolean);
  } catch {
    /* no Git ran */
  }
  return { code: res.code, stderr: res.stderr, commands };
}

/**
 * How many plans the restore made: each plan diffs the state trees' parts
 * (`diff-tree <from> <target> -- index worktree`), one `from` per plan (the
 * line counts diff the chosen plan's two trees again).
 */
function plans(commands: readonly string[]): number {
  const froms = commands.map((c) => /^(?:-c core.maxTreeDepth=\d+ )?diff-tree -r -z --raw (?:--numstat )?--no-renames ([0-9a-f]+) [0-9a-f]+ -- /.exec(c)?.[1]).filter(Boolean);
  return new Set(froms).size;
}

describe("the plan made while the capture runs", () => {
  test("nothing changed since the latest snapshot: the guess is taken, the state planned once", async () => {
    const r = await twoSnapshots();
    const before = (await r.snapshotsIn()).length;
    const res = await undoTraced(r);
    expect(res.code).toBe(0);
    expect(r.read("a.txt")).toBe("one\n");
    expect(plans(res.commands)).toBe(1);
    // Nothing recorded first: the only new snapshot is the restore's.
    const after = await r.snapshotsIn();
    expect(after.length).toBe(before + 1);
    expect(after[0]!.kind).toBe("restore");
    // The state it left is the target's, tree for tree: worked out, not written again.
    expect(after[0]!.tree).toBe(after.find((s) => s.number === 1)!.tree);
    expect(res.commands.filter((c) => /^(mktree|hash-object)\b/.test(c))).toEqual([]);
  });

  test("a file edited since (HEAD unmoved): the guess is dropped, the edit recorded first and kept", async () => {
    const r = await twoSnapshots();
    r.write("a.txt", "edited, never recorded\n");
    const res = await undoTraced(r);
    expect(res.code).toBe(0);
    // A guess was made, then the plan made again from the capture.
    expect(plans(res.commands)).toBe(2);
    const snaps = await r.snapshotsIn();
    expect(snaps[1]!.kind).toBe("change");
    expect(snaps[1]!.summary).toContain("a.txt");
    // Undo undid the edit (the change just recorded), not the commit before it.
    expect(r.read("a.txt")).toBe("two\n");
    expect(r.g("log", "-1", "--format=%s")).toBe("two");
    await r.okIn("redo");
    expect(r.read("a.txt")).toBe("edited, never recorded\n");
  });

  test("a branch made since (HEAD unmoved): recorded first, and back with redo", async () => {
    const r = await twoSnapshots();
    r.git(["branch", "topic"]);
    const res = await undoTraced(r);
    expect(res.code).toBe(0);
    expect(plans(res.commands)).toBe(2);
    expect(r.git(["rev-parse", "-q", "--verify", "refs/heads/topic"], { allowFail: true }).code).not.toBe(0);
    expect(r.read("a.txt")).toBe("two\n");
    await r.okIn("redo");
    expect(r.g("rev-parse", "topic")).toBe(r.g("rev-parse", "main"));
  });

  test("a file staged since: the index recorded first, and back with redo", async () => {
    const r = await twoSnapshots();
    r.write("b.txt", "staged\n");
    r.git(["add", "b.txt"]);
    r.write("b.txt", "b\n"); // the file as recorded, only the index differs
    const res = await undoTraced(r);
    expect(res.code).toBe(0);
    expect(plans(res.commands)).toBe(2);
    expect(r.g("diff", "--cached", "--name-only")).toBe("");
    await r.okIn("redo");
    expect(r.g("show", ":b.txt")).toBe("staged");
  });

  test("HEAD moved since (a commit): no guess is made (with reftable, HEAD's reflog takes Git: made and dropped), the commit recorded first", async () => {
    const r = await twoSnapshots();
    r.commit("three", { "a.txt": "three\n" });
    const res = await undoTraced(r);
    expect(res.code).toBe(0);
    expect(plans(res.commands)).toBe(refFormatOf(r) === "reftable" ? 2 : 1);
    expect(r.read("a.txt")).toBe("two\n");
    await r.okIn("redo");
    expect(r.read("a.txt")).toBe("three\n");
  });

  test("restore N and a dry run take the guess too, and drop it as a restore does", async () => {
    const r = await twoSnapshots();
    const dry = await undoTraced(r, ["restore", "--dry-run", "1"]);
    expect(dry.code).toBe(0);
    expect(plans(dry.commands)).toBe(1);
    r.write("a.txt", "edited\n");
    const refused = await undoTraced(r, ["restore", "--dry-run", "1"]);
    // From the capture now (the edit): a.txt differs from the state left, the dry run says what it would record first.
    expect(plans(refused.commands)).toBe(2);
    const res = await r.run(["restore", "1"]);
    expect(res.code).toBe(0);
    expect(r.read("a.txt")).toBe("one\n");
    const snaps = await r.snapshotsIn();
    expect(snaps[1]!.kind).toBe("change");
  });
});
