// A rebase that runs on its own is one snapshot, even while its `exec` steps
// take seconds with no hook firing (issue 12): `git rebase` itself, an
// ancestor of every hook it fires, is alive all along. Every fifth step sleeps
// 2 s (eight pauses, each far longer than undo.settle), which proves the same
// as forty of them in a fifth of the time; its own file, so it runs in parallel.
import { expect, test } from "bun:test";
import { autoRepo, expectRecorded, fortyCommitTopic } from "../helpers/auto.ts";

test("a 40-commit rebase with 2-second exec steps makes exactly one snapshot", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  const before = await fortyCommitTopic(r);

  const everyFifth = 'case "$(git log -1 --format=%s)" in *[05]) sleep 2 ;; esac';
  const res = r.git(["rebase", "-q", "-x", everyFifth, "main"]);
  expect(res.code).toBe(0);
  await expectRecorded(r, before, /^rebase \(finish\): returning to refs\/heads\/topic$/, { gitDir });
  expect(r.g("log", "--format=%s", "-1")).toBe("topic 39");
}, 120_000);
