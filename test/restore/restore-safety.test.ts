// The working-tree step under stress (spec: Restoring step 4; clarifications:
// "Restoring", all or nothing). The two-tree merge runs on the index the capture
// kept, first of all steps: a file that changes between the capture and the
// merge must make it refuse with nothing changed, and a merge that fails while
// writing (a directory it cannot write in) must be undone, keeping whatever
// someone else changed meanwhile. Afterwards the restore snapshot says what is
// on disk, also when the merge could not remove a file or changed ignore rules.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UndoError } from "../../core/errors.ts";
import { RestoreRefused } from "../../core/restore/plan.ts";
import { listSnapshots, readableSnapshot } from "../../core/snapshots/history.ts";
import { withScratch } from "../../core/git-data/objects.ts";
import { planRestore } from "../../core/restore/plan.ts";
import { captureLive, unchanged } from "../../core/capture.ts";
import { openRepo } from "../../core/repo.ts";
import { applyPlan } from "../../core/restore/apply.ts";
import { startNextIndex } from "../../core/restore/index-step.ts";
import { Journal } from "../../core/restore/journal.ts";
import { mergeIndexFor } from "../../core/restore/worktree.ts";
import { fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { userFingerprint, numbersIn } from "../helpers/restore.ts";

/**
 * A directory no one may create or remove files in, root included: chattr +i
 * (ext4 and most Linux file systems), or mode 555 for an ordinary user.
 */
function lockDir(path: string): boolean {
  if (Bun.spawnSync({ cmd: ["chattr", "+i", path], stderr: "ignore" }).exitCode === 0) {
    locked.push(path);
    return true;
  }
  if (process.getuid?.() !== 0) {
    Bun.spawnSync({ cmd: ["chmod", "555", path] });
    locked.push(path);
    return true;
  }
  return false;
}
const locked: string[] = [];
function unlockAll(): void {
  for (const p of locked.splice(0)) {
    Bun.spawnSync({ cmd: ["chattr", "-i", p], stderr: "ignore" });
    Bun.spawnSync({ cmd: ["chmod", "755", p], stderr: "ignore" });
  }
}
afterEach(unlockAll);
// Before the helpers remove the temp repositories (a locked directory cannot be removed).
process.prependListener("exit", unlockAll);

/** Whether this machine can make a directory unwritable (probed once). */
const canLock = (() => {
  const d = mkdtempSync(join(tmpdir(), "git-undo-lockprobe-"));
  const ok = lockDir(d);
  unlockAll();
  rmSync(d, { recursive: true, force: true });
  return ok;
})();

/**
 * The restore's own steps, with `meanwhile` run between the capture (which keeps
 * its worktree index for the merge) and the merge: a race no CLI test can time.
 * Returns what applyPlan threw, and the journal's rollback failures.
 */
async function raceMerge(r: TestRepo, target: number, meanwhile: () => void) {
  return (async () => {
    const repo = await openRepo(r.at());
    return withScratch(repo, async (scratch) => {
      const capture = await captureLive(repo);
      const latest = unchanged(capture);
      expect(latest).toBeDefined(); // the state left is recorded: every file it has is in a snapshot
      const t = readableSnapshot(await listSnapshots(repo), target);
      const plan = await planRestore(repo, { number: latest!.number, tree: capture.tree, state: capture.state }, t);
      expect(plan.blockers).toEqual([]);
      expect(plan.worktree.mode).toBe("merge");
      const mergeIndex = await mergeIndexFor(repo, scratch, plan);
      meanwhile();
      const journal = new Journal();
      let error: unknown = null;
      try {
        await applyPlan(repo, { plan, scratch, mergeIndex, force: false, journal, nextIndex: startNextIndex(repo, scratch, plan) });
      } catch (e) {
        error = e;
      }
      const journalWasEmpty = journal.empty;
      const failures = await journal.rollback();
      return { error, journalWasEmpty, failures };
    });
  })();
}

/** #1: a.txt, b.txt, d/x.txt; #2 (recorded, the state left): a.txt and b.txt edited, d/ replaced by a file d. */
function twoStates(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n", "b.txt": "bee\n", "d/x.txt": "x\n", "keep.txt": "same\n" });
  r.ok("snapshot");
  r.remove("d");
  r.commit("two", { "a.txt": "two\n", "b.txt": "bee two\n", d: "d is a file\n" });
  r.ok("snapshot");
  return r;
}

describe("a file changes between the capture and the merge: refused, nothing changed", () => {
  const cases: [string, (r: TestRepo) => void, string][] = [
    ["edited (another size)", (r) => r.write("a.txt", "edited meanwhile, longer\n"), "a.txt"],
    // Same size, same second as the capture: only Git's racy-entry check can see it.
    ["edited (same size, same second)", (r) => r.write("a.txt", "TWO\n"), "a.txt"],
    [
      "replaced by a symlink",
      (r) => {
        unlinkSync(r.path("b.txt"));
        symlinkSync("keep.txt", r.path("b.txt"));
      },
      "b.txt",
    ],
    ["the file that gives way to a directory, edited", (r) => r.write("d", "d edited meanwhile\n"), "d"],
  ];
  for (const [name, change, path] of cases) {
    test(name, async () => {
      const r = twoStates();
      let during = "";
      const res = await raceMerge(r, 1, () => {
        change(r);
        during = fingerprint(r);
      });
      expect(res.error).toBeInstanceOf(UndoError);
      expect((res.error as UndoError).kind).toBe("refused");
      expect((res.error as UndoError).message).toContain(path);
      expect(res.journalWasEmpty).toBe(true);
      expect(fingerprint(r)).toBe(during);
    });
  }

  test("an untracked file appears where the merge creates one", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n", "n.txt": "in #1\n" });
    await r.okIn("snapshot");
    r.git(["rm", "-q", "n.txt"]);
    r.commit("two", { "a.txt": "2\n" });
    await r.okIn("snapshot");
    let during = "";
    const res = await raceMerge(r, 1, () => {
      r.write("n.txt", "written meanwhile, in no snapshot\n");
      during = fingerprint(r);
    });
    expect((res.error as UndoError).kind).toBe("refused");
    expect((res.error as UndoError).message).toContain("n.txt");
    expect(fingerprint(r)).toBe(during);
  });

  // Git's two-tree merge overwrites ignored files without a word (Git 2.39): the
  // plan's check for them is made again just before the merge.
  test("an ignored file appears where the merge creates one", async () => {
    const r = makeRepo();
    r.commit("one", { ".gitignore": "*.log\n", "a.txt": "1\n" });
    r.write("out.log", "tracked in #1 despite the rules\n");
    r.git(["add", "-f", "out.log"]);
    r.commit("track out.log");
    await r.okIn("snapshot");
    r.git(["rm", "-q", "--cached", "out.log"]);
    r.remove("out.log");
    r.commit("two", { "a.txt": "2\n" });
    await r.okIn("snapshot");
    const res = await raceMerge(r, 1, () => r.write("out.log", "build output, ignored, in no snapshot\n"));
    expect((res.error as UndoError).kind).toBe("refused");
    const blockers = (res.error as RestoreRefused).blockers;
    expect(blockers.map((b) => [b.kind, b.names])).toEqual([["ignored-file", ["out.log"]]]);
    expect(r.read("out.log")).toBe("build output, ignored, in no snapshot\n");
    expect(r.read("a.txt")).toBe("2\n");
  });

  test("an untracked file appears where the merge creates a directory", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n", "e/f.txt": "in #1\n" });
    await r.okIn("snapshot");
    r.remove("e");
    r.commit("two", { "a.txt": "2\n" });
    await r.okIn("snapshot");
    let during = "";
    const res = await raceMerge(r, 1, () => {
      r.write("e", "a file named e, in no snapshot\n");
      during = fingerprint(r);
    });
    expect((res.error as UndoError).kind).toBe("refused");
    expect(fingerprint(r)).toBe(during);
    expect(r.read("e")).toBe("a file named e, in no snapshot\n");
    expect(r.read("a.txt")).toBe("2\n");
  });

  test("an untracked file appears in the directory the merge replaces by a file", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n", g: "g is a file\n" });
    await r.okIn("snapshot");
    r.remove("g");
    r.commit("two", { "a.txt": "2\n", "g/h.txt": "h\n" });
    await r.okIn("snapshot");
    let during = "";
    const res = await raceMerge(r, 1, () => {
      r.write("g/new.txt", "new, in no snapshot\n");
      during = fingerprint(r);
    });
    expect((res.error as UndoError).kind).toBe("refused");
    expect(fingerprint(r)).toBe(during);
    expect(r.read("g/new.txt")).toBe("new, in no snapshot\n");
  });
});

describe("the merge fails while writing (a directory it may not write in)", () => {
  /** #1: a, b, c, other; #2: a and c changed, b removed, new files in zz/ and in lockme/. Position: #1 restored (#3). */
  function blockedRestore(): TestRepo {
    const r = makeRepo();
    r.commit("one", { a: "a\n", b: "b\n", c: "c\n", other: "the same in #1 and #2\n" });
    r.ok("snapshot");
    r.git(["rm", "-q", "b"]);
    r.commit("two", { a: "a2\n", c: "c2\n", "zz/q": "q\n", "lockme/new": "n\n" });
    r.ok("snapshot");
    r.ok("restore", "1");
    mkdirSync(r.path("lockme"));
    return r;
  }

  test.skipIf(!canLock)("the files it had written go back: refs, index, files and snapshots as before", async () => {
    const r = blockedRestore();
    expect(lockDir(r.path("lockme"))).toBe(true);
    const before = fingerprint(r);
    const res = await r.run(["restore", "2"]);
    expect(res.code).toBe(128);
    expect(res.stderr).toMatch(/failed and was rolled back, nothing changed/);
    expect(res.stderr).toContain("lockme/new");
    // Byte for byte, refs/undo included: no snapshot was added either.
    expect(fingerprint(r)).toBe(before);
    expect(r.read("a")).toBe("a\n");
    expect(r.read("b")).toBe("b\n");
    expect(r.git(["status", "--porcelain"]).stdout).toBe("");
    unlockAll();
    await r.okIn("restore", "2");
    expect(r.read("lockme/new")).toBe("n\n");
    expect(r.read("c")).toBe("c2\n");
  });

  test.skipIf(!canLock)("a file someone changed meanwhile stays as they left it", async () => {
    const r = blockedRestore();
    const res = await raceMerge(r, 2, () => {
      expect(lockDir(r.path("lockme"))).toBe(true);
      // Neither is a file the merge changes, so the merge does not look at them; the rollback must not either.
      r.write("a-new-untracked.txt", "written during the restore\n");
      r.write("other", "edited during the restore\n");
    });
    expect(res.error).toBeInstanceOf(Error);
    expect((res.error as Error).message).toMatch(/working-tree merge failed.*lockme\/new/);
    expect(res.failures).toEqual([]);
    expect(r.read("a-new-untracked.txt")).toBe("written during the restore\n");
    expect(r.read("other")).toBe("edited during the restore\n");
    expect(r.read("a")).toBe("a\n");
    expect(r.read("b")).toBe("b\n");
    expect(r.read("c")).toBe("c\n");
    expect(r.git(["ls-files", "--others", "--exclude-standard"]).stdout).toBe("a-new-untracked.txt\n");
  });
});

describe("the restore snapshot says what is on disk", () => {
  test.skipIf(!canLock)("a file the merge could not remove stays, and the snapshot and the report say so", async () => {
    const r = makeRepo();
    r.commit("one", { "locked/old.txt": "old\n", a: "1\n" });
    await r.okIn("snapshot");
    r.git(["rm", "-q", "locked/old.txt"]);
    r.commit("two", { a: "2\n" });
    await r.okIn("snapshot");
    mkdirSync(r.path("locked"), { recursive: true });
    await r.okIn("restore", "1");
    expect(lockDir(r.path("locked"))).toBe(true);
    const out = await r.okIn("restore", "2");
    // Git only warns when it cannot remove a file: the restore goes through, and says where it differs.
    expect(out).toMatch(/worktree differs from #2: locked\/old\.txt/);
    expect(r.read("locked/old.txt")).toBe("old\n");
    expect(r.read("a")).toBe("2\n");
    const latest = (await r.snapshotsIn())[0]!;
    expect(r.g("cat-file", "-p", `${latest.tree}:worktree/locked/old.txt`)).toBe("old");
    // Nothing new to record: the restore snapshot is the state on disk.
    expect(await r.run(["snapshot"])).toMatchObject({ code: 1, stdout: expect.stringMatching(/^no change since/) });
  });

  test("a change of .gitignore: files it hid or shows are recorded as they are", async () => {
    const r = makeRepo();
    r.commit("one", { ".gitignore": "*.log\n", a: "1\n" });
    r.write("build.log", "ignored in #1, on disk\n");
    await r.okIn("snapshot");
    r.git(["rm", "-q", ".gitignore"]);
    r.commit("two", { a: "2\n" });
    r.remove("build.log");
    r.write("trace.log", "untracked in #2\n");
    await r.okIn("snapshot");
    await r.okIn("restore", "1");
    // trace.log is #2's (removed, it is in #2); build.log was hidden in #1 and is not in it: the restore leaves it be.
    expect(existsSync(r.path("trace.log"))).toBe(false);
    expect(await r.run(["snapshot"])).toMatchObject({ code: 1, stdout: expect.stringMatching(/^no change since/) });
    r.write("build.log", "ignored, written after #1 was restored\n");
    await r.okIn("restore", "2");
    // #2 has no .gitignore: build.log shows up, and the restore snapshot holds it.
    const latest = (await r.snapshotsIn())[0]!;
    expect(r.g("cat-file", "-p", `${latest.tree}:worktree/build.log`)).toBe("ignored, written after #1 was restored");
    expect(await r.run(["snapshot"])).toMatchObject({ code: 1, stdout: expect.stringMatching(/^no change since/) });
    expect(await numbersIn(r)).toEqual([1, 2, 3, 4]);
    expect(userFingerprint(r)).toContain("build.log");
  });
});
