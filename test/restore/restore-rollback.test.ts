// All or nothing (clarifications: "Restoring"): a restore that fails after any of
// its steps leaves refs, HEAD, index, working tree and stash exactly as they were.
import { expect, test } from "bun:test";
import { STEPS } from "../../core/restore/index.ts";
import { fromTemplate, fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { userFingerprint, numbersIn } from "../helpers/restore.ts";

/** #1 and #2 differ in every part a restore changes: refs, a symbolic ref, HEAD, files, index, stash. */
/** Built once per file, copied for each test. */
const everyPartDiffers = (): TestRepo => fromTemplate("everyPartDiffers", buildEveryPartDiffers);

function buildEveryPartDiffers(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "1\n", "x.txt": "only in #1\n" });
  r.git(["branch", "old"]);
  r.git(["symbolic-ref", "refs/sym", "refs/heads/main"]);
  r.write("a.txt", "stashed\n");
  r.git(["stash", "-q"]);
  r.write("a.txt", "staged in #1\n");
  r.git(["add", "a.txt"]);
  r.ok("snapshot"); // #1
  r.git(["reset", "-q", "--hard"]);
  r.git(["checkout", "-q", "-b", "new"]);
  r.git(["rm", "-q", "x.txt"]);
  r.commit("two", { "a.txt": "2\n", "y.txt": "only in #2\n" });
  r.git(["branch", "-D", "old"]);
  r.git(["symbolic-ref", "refs/sym", "refs/heads/new"]);
  r.write("y.txt", "stash two\n");
  r.git(["stash", "-q", "-m", "second"]);
  r.write("untracked.txt", "untracked in #2\n");
  r.ok("snapshot"); // #2
  return r;
}

test("every step has a failure point the test switch can trigger", async () => {
  expect([...STEPS]).toEqual(["record-first", "refs", "symbolic-refs", "head", "worktree", "index", "stash", "record"]);
});

for (const step of STEPS.filter((s) => s !== "record-first")) {
  test(`failing after '${step}' rolls everything back`, async () => {
    const r = everyPartDiffers();
    const before = fingerprint(r);
    const res = await r.run(["restore", "1"], { env: { GIT_UNDO_TEST_FAIL_AFTER: step } });
    expect(res.code).toBe(128);
    expect(res.stderr).toContain(`simulated failure after step '${step}'`);
    expect(res.stderr).toContain("rolled back");
    // Byte-identical, git-undo's own refs included: the restore snapshot is gone too.
    expect(fingerprint(r)).toBe(before);
    expect(r.read("untracked.txt")).toBe("untracked in #2\n");
    // And the restore still works afterwards.
    await r.okIn("restore", "1");
    expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/main");
    expect(r.g("symbolic-ref", "refs/sym")).toBe("refs/heads/main");
    expect(r.g("stash", "list", "--format=%gs")).toBe("WIP on main: " + r.g("log", "-1", "--format=%h %s", "main"));
    expect(r.read("x.txt")).toBe("only in #1\n");
    expect(r.g("diff", "--cached", "--name-only")).toBe("a.txt");
  });
}

test("failing after record-first keeps the saved snapshot and changes nothing else", async () => {
  const r = everyPartDiffers();
  r.write("a.txt", "unrecorded edit\n");
  const before = userFingerprint(r);
  const res = await r.run(["restore", "1"], { env: { GIT_UNDO_TEST_FAIL_AFTER: "record-first" } });
  expect(res.code).toBe(128);
  expect(res.stderr).toContain("rolled back");
  expect(userFingerprint(r)).toBe(before);
  expect(await numbersIn(r)).toEqual([1, 2, 3]);
  expect(r.read("a.txt")).toBe("unrecorded edit\n");
});
