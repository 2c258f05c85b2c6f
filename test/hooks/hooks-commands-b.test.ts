// Automatic recording of branch, tag, merge, cherry-pick and revert (spec:
// Automatic recording). A conflicted merge is an operation in progress: the
// worker records it once Git has stopped, with its state.
import { expect, test } from "bun:test";
import { autoRepo, expectRecorded, list, settled } from "../helpers/auto.ts";
import { refFormatOf } from "../helpers/repo.ts";

test("branch create/rename/delete, tag, merges (ff, real, conflicted, aborted), cherry-pick, revert are each recorded", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  let snaps = list(r);
  const step = async (run: () => void, summary: RegExp) => {
    run();
    snaps = await expectRecorded(r, snaps, summary, { gitDir });
  };
  /** Set-up commands are recorded too; let them settle before the step under test. */
  const setUp = async (run: () => void) => {
    run();
    await settled(gitDir);
    snaps = list(r);
  };
  const stateBlob = (commit: string) => r.git(["cat-file", "-p", `${commit}:state`], { allowFail: true });

  await step(() => r.git(["branch", "topic"]), /^branch topic created$/);
  const renameHooked = refFormatOf(r) === "files";
  if (renameHooked) await step(() => r.git(["branch", "-m", "topic", "side"]), /side/);
  else {
    // Git 2.55's reftable renames a branch without running reference-transaction:
    // nothing is recorded then, and the next command's snapshot holds the rename too.
    r.git(["branch", "-m", "topic", "side"]);
    await settled(gitDir);
    expect(list(r)).toHaveLength(snaps.length);
  }
  // Without the rename's snapshot the last one still has topic.
  await step(() => r.git(["branch", "-D", "side"]), renameHooked ? /^branch side deleted$/ : /^branch topic deleted$/);
  await step(() => r.git(["tag", "v1"]), /^tag v1 created$/);

  await setUp(() => {
    r.git(["checkout", "-q", "-b", "ff"]);
    r.commit("ff work", { "f.txt": "f\n" });
    r.git(["checkout", "-q", "main"]);
  });
  await step(() => r.git(["merge", "-q", "ff"]), /^merge ff: Fast-forward$/);

  await setUp(() => {
    r.git(["checkout", "-q", "-b", "other", "HEAD~1"]);
    r.commit("other work", { "o.txt": "o\n" });
    r.git(["checkout", "-q", "main"]);
  });
  // The summary is Git's reflog message, whose strategy name depends on the
  // version (ort from Git 2.34, recursive before): compare with what Git wrote.
  await step(() => r.git(["merge", "-q", "--no-edit", "other"]), /^merge other: Merge made by the '\w+' strategy\.$/);
  expect(snaps[0]!.summary).toBe(r.g("reflog", "-1", "--format=%gs", "HEAD"));

  // Conflicted: recorded once Git has stopped, the state blob naming the merge.
  await setUp(() => {
    r.git(["checkout", "-q", "-b", "clash", "HEAD~1"]);
    r.commit("clash", { "a.txt": "theirs\n" });
    r.git(["checkout", "-q", "main"]);
    r.commit("ours", { "a.txt": "ours\n" });
  });
  await step(() => r.git(["merge", "-q", "clash"], { allowFail: true }), /conflict in a\.txt/);
  expect(stateBlob(snaps[0]!.commit).stdout).toBe("MERGE_HEAD\n");
  await step(() => r.git(["merge", "--abort"]), /^merge aborted$/);
  expect(stateBlob(snaps[0]!.commit).code).not.toBe(0);
  expect(r.read("a.txt")).toBe("ours\n");

  await step(() => r.git(["cherry-pick", "clash"], { allowFail: true }), /conflict in a\.txt/);
  expect(stateBlob(snaps[0]!.commit).stdout).toBe("CHERRY_PICK_HEAD\n");
  await setUp(() => {
    r.git(["cherry-pick", "--abort"]);
    r.git(["checkout", "-q", "-b", "pick"]);
    r.commit("picked work", { "p.txt": "p\n" });
    r.git(["checkout", "-q", "main"]);
  });
  await step(() => r.git(["cherry-pick", "pick"]), /^cherry-pick: picked work$/);
  await step(() => r.git(["revert", "--no-edit", "HEAD"]), /^revert: Revert "picked work"$/);
}, 120_000);
