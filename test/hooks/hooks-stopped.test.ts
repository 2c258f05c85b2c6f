// Operations Git stops and hands back (a conflict, an `edit`) are recorded at
// once, each step of the user's work on them too, with summaries that say what
// happened (issue 12): the conflicted state, every resolution, the abort.
import { expect, test } from "bun:test";
import { autoRepo, expectRecorded, list, settled } from "../helpers/auto.ts";
import { fingerprint, type TestRepo } from "../helpers/repo.ts";

const QUIET = { GIT_UNDO_INTERNAL: "1" }; // set-up commands the hooks must not see

/** Everything the user sees but the snapshots themselves. */
const visible = (r: TestRepo) =>
  fingerprint(r)
    .split("\n")
    .filter((l) => !l.startsWith("refs/undo/"))
    .join("\n");

const stateBlob = (r: TestRepo, commit: string) => r.git(["cat-file", "-p", `${commit}:state`], { allowFail: true });

/** Restore snapshot n, then go back to the state left, proving nothing is lost either way. */
function restoreAndBack(r: TestRepo, n: number, check: () => void): void {
  const left = visible(r);
  const leftNumber = list(r)[0]!.number;
  const res = r.undo(["restore", String(n)]);
  expect(res.code).toBe(0);
  check();
  const back = r.undo(["restore", String(leftNumber)]);
  expect(back.code).toBe(0);
  expect(visible(r)).toBe(left);
}

test("a merge conflict: the conflicted state, each resolution and the abort are snapshots", async () => {
  const r = autoRepo({ files: { "a.txt": "base\n", "b.txt": "base\n" } });
  const gitDir = r.gitDir();
  r.git(["checkout", "-q", "-b", "topic"], { env: QUIET });
  r.commit("theirs", { "a.txt": "theirs\n", "b.txt": "theirs\n" });
  r.git(["checkout", "-q", "main"], { env: QUIET });
  r.commit("ours", { "a.txt": "ours\n", "b.txt": "ours\n" });
  await settled(gitDir);
  r.undo(["snapshot"]);
  let snaps = list(r);

  // Before issue 12 nothing was recorded here until undo.settleMax (10 minutes).
  r.git(["merge", "-q", "topic"], { allowFail: true });
  snaps = await expectRecorded(r, snaps, /^merge of topic stopped: conflict in a\.txt, b\.txt$/, { gitDir });
  expect(stateBlob(r, snaps[0]!.commit).stdout).toBe("MERGE_HEAD\n");

  r.write("a.txt", "RESOLVED CAREFULLY\n");
  r.git(["add", "a.txt"]);
  snaps = await expectRecorded(r, snaps, /^resolved: a\.txt \(merge of topic\)$/, { gitDir });
  const resolvedA = snaps[0]!.number;

  r.git(["rm", "-q", "b.txt"]);
  snaps = await expectRecorded(r, snaps, /^resolved: b\.txt \(merge of topic\)$/, { gitDir });

  r.git(["merge", "--abort"]);
  snaps = await expectRecorded(r, snaps, /^merge aborted$/, { gitDir });
  expect(stateBlob(r, snaps[0]!.commit).code).not.toBe(0);
  expect(r.read("a.txt")).toBe("ours\n");

  // The resolution comes back, on disk and staged; the merge itself is not re-created.
  restoreAndBack(r, resolvedA, () => {
    expect(r.read("a.txt")).toBe("RESOLVED CAREFULLY\n");
    expect(r.g("show", ":a.txt")).toBe("RESOLVED CAREFULLY");
  });
  await settled(gitDir);
}, 120_000);

/** main and topic (three commits), where topic's second commit conflicts with main. */
async function rebaseRepo(): Promise<TestRepo> {
  const r = autoRepo({ files: { "a.txt": "base\n" } });
  r.git(["checkout", "-q", "-b", "topic"], { env: QUIET });
  for (const [i, files] of [{ "t1.txt": "1\n" }, { "a.txt": "topic\n" }, { "t3.txt": "3\n" }].entries()) {
    for (const [name, content] of Object.entries(files)) r.write(name, content);
    r.git(["add", "."], { env: QUIET });
    r.git(["commit", "-q", "-m", `topic ${i + 1}`], { env: QUIET });
  }
  r.git(["checkout", "-q", "main"], { env: QUIET });
  r.write("a.txt", "main\n");
  r.git(["commit", "-q", "-am", "main moves on"], { env: QUIET });
  r.git(["checkout", "-q", "topic"], { env: QUIET });
  await settled(r.gitDir());
  r.undo(["snapshot"]);
  return r;
}

test("a rebase stopped on a conflict: the stop, the resolution and the finish are snapshots", async () => {
  const r = await rebaseRepo();
  const gitDir = r.gitDir();
  let snaps = list(r);

  r.git(["rebase", "-q", "main"], { allowFail: true });
  snaps = await expectRecorded(r, snaps, /^rebase of topic stopped: conflict in a\.txt$/, { gitDir });
  expect(stateBlob(r, snaps[0]!.commit).stdout).toBe("rebase-merge\n");

  r.write("a.txt", "main and topic\n");
  r.git(["add", "a.txt"]);
  snaps = await expectRecorded(r, snaps, /^resolved: a\.txt \(rebase of topic\)$/, { gitDir });
  const resolved = snaps[0]!.number;

  r.git(["rebase", "--continue"], { env: { GIT_EDITOR: "true" } });
  // Git's reflog line, whose wording depends on the version (Git 2.31: `rebase (continue) (finish): ...`).
  snaps = await expectRecorded(r, snaps, /^rebase .*\(finish\): returning to refs\/heads\/topic$/, { gitDir });
  expect(snaps[0]!.summary).toBe(r.g("reflog", "-1", "--format=%gs", "HEAD"));
  expect(r.g("log", "--format=%s", "-3").split("\n")).toEqual(["topic 3", "topic 2", "topic 1"]);

  restoreAndBack(r, resolved, () => {
    expect(r.read("a.txt")).toBe("main and topic\n");
    expect(r.g("show", ":a.txt")).toBe("main and topic");
  });
  await settled(gitDir);
}, 120_000);

test("a rebase stopped for an edit: the stop, the amend and the abort are snapshots", async () => {
  const r = await rebaseRepo();
  const gitDir = r.gitDir();
  let snaps = list(r);
  const editFirst = { GIT_SEQUENCE_EDITOR: "sed -i -e '1s/^pick/edit/'" };

  r.git(["rebase", "-q", "-i", "HEAD~2"], { env: editFirst });
  snaps = await expectRecorded(r, snaps, /^rebase of topic stopped for edit at topic 2$/, { gitDir });

  r.write("a.txt", "edited while stopped\n");
  r.git(["commit", "-q", "-a", "--amend", "--no-edit"]);
  snaps = await expectRecorded(r, snaps, /^commit \(amend\): topic 2 \(rebase of topic\)$/, { gitDir });
  const amended = snaps[0]!.number;

  r.git(["rebase", "--abort"]);
  snaps = await expectRecorded(r, snaps, /^rebase aborted$/, { gitDir });
  expect(r.read("a.txt")).toBe("topic\n");

  restoreAndBack(r, amended, () => expect(r.read("a.txt")).toBe("edited while stopped\n"));
  await settled(gitDir);
}, 120_000);
