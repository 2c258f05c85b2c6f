// A rebase that runs on its own is one snapshot, even while its `exec` steps
// take seconds with no hook firing (issue 12): `git rebase` itself, an
// ancestor of every hook it fires, is alive all along. Its own file: it takes
// about 80 s and runs in parallel with the others.
import { expect, test } from "bun:test";
import { autoRepo, expectRecorded, fortyCommitTopic } from "./helpers/auto.ts";

test("a 40-commit rebase with 2-second exec steps makes exactly one snapshot", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  const before = await fortyCommitTopic(r);

  const res = r.git(["rebase", "-q", "-x", "sleep 2", "main"]);
  expect(res.code).toBe(0);
  await expectRecorded(r, before, /^rebase \(finish\): returning to refs\/heads\/topic$/, { gitDir });
  expect(r.g("log", "--format=%s", "-1")).toBe("topic 39");
}, 240_000);
