// A rebase that runs on its own is one snapshot, even while its `exec` steps
// take seconds with no hook firing (issue 12): `git rebase` itself, an
// ancestor of every hook it fires, is alive all along. Its own file: it takes
// about 80 s and runs in parallel with the others.
import { expect, test } from "bun:test";
import { autoRepo, expectRecorded, list, settled } from "./helpers/auto.ts";

const QUIET = { GIT_UNDO_INTERNAL: "1" }; // set-up commands the hooks must not see

test("a 40-commit rebase with 2-second exec steps makes exactly one snapshot", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  r.git(["checkout", "-q", "-b", "topic"], { env: QUIET });
  for (let i = 0; i < 40; i++) {
    r.write(`t${i}.txt`, `${i}\n`);
    r.git(["add", `t${i}.txt`], { env: QUIET });
    r.git(["commit", "-q", "-m", `topic ${i}`], { env: QUIET });
  }
  r.git(["checkout", "-q", "main"], { env: QUIET });
  r.commit("main moves on", { "m.txt": "m\n" });
  r.git(["checkout", "-q", "topic"], { env: QUIET });
  await settled(gitDir);
  r.undo(["snapshot"]);
  const before = list(r);

  const res = r.git(["rebase", "-q", "-x", "sleep 2", "main"]);
  expect(res.code).toBe(0);
  await expectRecorded(r, before, /^rebase \(finish\): returning to refs\/heads\/topic$/, { gitDir });
  expect(r.g("log", "--format=%s", "-1")).toBe("topic 39");
}, 240_000);
