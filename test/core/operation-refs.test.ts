// The operation in progress is read alike on both ref storages (#41): with
// reftable CHERRY_PICK_HEAD and REVERT_HEAD are refs, not files, yet a
// cherry-pick or revert stopped on a conflict is recorded as stopped, the
// worker waits for it as for any operation, and `watch` sees it.
import { expect, test } from "bun:test";
import { openRepo } from "../../core/repo.ts";
import { operationMarker } from "../../core/git-data/operation.ts";
import { autoRepo, expectRecorded, list, QUIET, settled } from "../helpers/auto.ts";
import { gitAtLeast, makeRepo, refFormatOf, type TestRepo } from "../helpers/repo.ts";

const FORMATS = gitAtLeast(2, 45) ? (["files", "reftable"] as const) : (["files"] as const);

const OPERATIONS = [
  { op: "cherry-pick", marker: "CHERRY_PICK_HEAD", summary: /^cherry-pick .*stopped: conflict in a\.txt$/ },
  { op: "revert", marker: "REVERT_HEAD", summary: /^revert .*stopped: conflict in a\.txt$/ },
] as const;

/** main with a.txt at 1, 2, 3 and a branch side that sets it otherwise: `cherry-pick side` and `revert HEAD~1` both conflict. */
function conflicting(refFormat: "files" | "reftable", settleMaxMs?: number): TestRepo {
  const r = autoRepo({ refFormat, files: { "a.txt": "base\n" }, ...(settleMaxMs ? { settleMaxMs } : {}) });
  expect(refFormatOf(r)).toBe(refFormat);
  r.git(["checkout", "-q", "-b", "side"], { env: QUIET });
  r.write("a.txt", "side\n");
  r.git(["commit", "-q", "-am", "side"], { env: QUIET });
  r.git(["checkout", "-q", "main"], { env: QUIET });
  for (const n of ["1", "2", "3"]) {
    r.write("a.txt", `${n}\n`);
    r.git(["commit", "-q", "-am", `main ${n}`], { env: QUIET });
  }
  return r;
}

const argsOf = (op: string): string[] => (op === "cherry-pick" ? ["cherry-pick", "side"] : ["revert", "--no-edit", "HEAD~1"]);

for (const refFormat of FORMATS) {
  for (const { op, marker, summary } of OPERATIONS) {
    test(`${refFormat}: a ${op} stopped on a conflict is recorded as stopped with ${marker}, and is Git's operation until it ends`, async () => {
      const r = conflicting(refFormat);
      await settled(r.gitDir());
      r.undo(["snapshot"]);
      const before = list(r);
      expect(r.git(argsOf(op), { allowFail: true }).code).not.toBe(0);
      const after = await expectRecorded(r, before, summary);
      expect(r.g("cat-file", "-p", `${after[0]!.commit}:state`)).toBe(marker);
      // What the worker's settle and `watch` ask, asked often: the same answer, then none once it ended.
      const repo = await openRepo(r.at());
      expect(await operationMarker(repo)).toBe(marker);
      expect(await operationMarker(repo)).toBe(marker);
      r.git([op, "--abort"]);
      expect(await operationMarker(repo)).toBeNull();
      await settled(r.gitDir());
    }, 60_000);
  }

  test(`${refFormat}: without process information the worker waits for a stopped cherry-pick as for any operation, up to undo.settleMax`, async () => {
    const r = conflicting(refFormat, 4000);
    r.env.GIT_UNDO_PROCESS_TABLE = "none";
    await settled(r.gitDir());
    r.undo(["snapshot"]);
    const before = list(r);
    const start = Date.now();
    expect(r.git(["cherry-pick", "side"], { allowFail: true }).code).not.toBe(0);
    // The mark is quiet after 700 ms: a command that is no operation is recorded by then.
    await Bun.sleep(2000);
    expect(list(r).length).toBe(before.length);
    await expectRecorded(r, before, OPERATIONS[0].summary);
    expect(Date.now() - start).toBeGreaterThanOrEqual(3500);
  }, 60_000);
}

for (const refFormat of FORMATS) {
  test(`${refFormat}: --force ends a bisect whole, the pseudo-refs it keeps (refs with reftable) included`, async () => {
    const r = makeRepo({ refFormat });
    for (const n of ["1", "2", "3", "4"]) r.commit(`c${n}`, { "a.txt": `${n}\n` });
    await r.okIn("snapshot");
    r.git(["bisect", "start", "HEAD", "HEAD~3"]);
    expect(r.git(["rev-parse", "-q", "--verify", "BISECT_EXPECTED_REV"]).code).toBe(0);
    expect((await r.run(["restore", "1"])).code).toBe(1);
    await r.okIn("restore", "1", "--force");
    expect(r.git(["rev-parse", "-q", "--verify", "BISECT_EXPECTED_REV"], { allowFail: true }).code).not.toBe(0);
    expect(r.git(["bisect", "log"], { allowFail: true }).code).not.toBe(0);
    expect(await operationMarker(await openRepo(r.at()))).toBeNull();
  });
}
