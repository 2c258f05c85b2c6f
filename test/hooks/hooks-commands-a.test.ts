// Automatic recording after everyday commands (spec: Automatic recording): each
// command leaves exactly one new change snapshot, named after what Git did,
// holding the live state.
import { expect, test } from "bun:test";
import { autoRepo, expectRecorded, list } from "../helpers/auto.ts";

test("commit, amend, checkout, checkout -- file, resets, add, rm --cached, stash push/pop are each recorded", async () => {
  const r = autoRepo({ files: { "a.txt": "a\n", "b.txt": "b\n" } });
  const gitDir = r.gitDir();
  let snaps = list(r);
  expect(snaps).toHaveLength(1);
  const step = async (run: () => void, summary: RegExp) => {
    run();
    snaps = await expectRecorded(r, snaps, summary, { gitDir });
  };

  await step(() => r.commit("second", { "a.txt": "a2\n" }), /^commit: second$/);
  await step(() => r.git(["commit", "-q", "--amend", "-m", "second, amended"]), /^commit \(amend\): second, amended$/);
  await step(() => r.git(["checkout", "-q", "-b", "feature"]), /^checkout: moving from main to feature$/);
  await step(() => r.git(["checkout", "-q", "main"]), /^checkout: moving from feature to main$/);

  // An edit outside Git is seen by the next snapshot; record it so the checkout has something to undo.
  r.write("a.txt", "scribble\n");
  r.ok("snapshot");
  snaps = list(r);
  // Summaries say which way a path moved: discarded, staged, unstaged, removed.
  await step(() => r.git(["checkout", "--", "a.txt"]), /^discarded edits: a\.txt$/);
  expect(r.read("a.txt")).toBe("a2\n");

  await step(() => r.git(["reset", "-q", "--soft", "HEAD~1"]), /^reset: moving to HEAD~1$/);
  await step(() => r.git(["reset", "-q", "--mixed", "HEAD"]), /^reset: moving to HEAD$/);
  await step(() => r.git(["reset", "-q", "--hard", "HEAD~0"]), /^reset: moving to HEAD~0$/);
  r.write("new.txt", "new\n");
  await step(() => r.git(["add", "new.txt"]), /^staged: new\.txt$/);
  await step(() => r.git(["rm", "-q", "--cached", "new.txt"]), /^removed from the index: new\.txt$/);
  // `git clean` runs no hook of its own: the guard (on by default) marks it.
  await step(() => r.git(["clean", "-q", "-f"]), /^removed untracked: new\.txt$/);
  await step(() => r.git(["rm", "-q", "--cached", "a.txt"]), /^removed from the index: a\.txt$/);
  await step(() => r.git(["add", "a.txt"]), /^staged: a\.txt$/);
  r.write("a.txt", "staged then reset\n");
  await step(() => r.git(["add", "a.txt"]), /^staged: a\.txt$/);
  await step(() => r.git(["reset", "-q", "a.txt"]), /^unstaged: a\.txt$/);
  await step(() => r.git(["add", "a.txt"]), /^staged: a\.txt$/);
  // A second reset --hard to the same commit writes the same reflog line: the change itself is described.
  await step(() => r.git(["reset", "-q", "--hard", "HEAD~0"]), /^discarded: a\.txt$/);

  // Recorded first (by hand): the recording the guard makes before the stash then finds nothing new.
  r.write("b.txt", "b changed\n");
  r.ok("snapshot");
  snaps = list(r);
  await step(() => r.git(["stash", "push", "-q"]), /stash/);
  expect(r.read("b.txt")).toBe("b\n");
  await step(() => r.git(["stash", "pop", "-q"]), /stash/);
  expect(r.read("b.txt")).toBe("b changed\n");
}, 120_000);
