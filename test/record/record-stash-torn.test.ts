// A capture reads the refs, then refs/stash's reflog: a stash pushed or
// dropped between the two used to give a snapshot whose refs/stash names one
// stash and whose stash list another (#41 point 17; seen in Git's t3903: a
// summary "stash: 13 entries dropped" while refs/stash still named the old
// top). Every snapshot's refs/stash line must be its stash blob's first entry.
import { expect, test } from "bun:test";
import { gitAtLeast, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { snapshotRefs } from "../helpers/snap.ts";

const FORMATS = gitAtLeast(2, 45) ? (["files", "reftable"] as const) : (["files"] as const);

/** refs/stash's id in a snapshot's refs blob, and its stash blob's newest entry ("" for none). */
function stashOf(r: TestRepo, tree: string): { ref: string; top: string } {
  const show = (name: string) => r.git(["cat-file", "-p", `${tree}:${name}`], { allowFail: true }).stdout;
  const line = show("refs")
    .split("\n")
    .find((l) => l.startsWith("refs/stash\t"));
  return { ref: line?.split("\t")[1] ?? "", top: show("stash").split("\t")[0] ?? "" };
}

for (const refFormat of FORMATS) {
  test(`${refFormat}: snapshots taken while a stash is pushed and dropped in a loop hold refs/stash and the stash list as one`, async () => {
    const r = makeRepo({ refFormat });
    r.commit("one", { "a.txt": "1\n" });
    const commits: string[] = [];
    for (const n of ["2", "3", "4"]) {
      r.write("a.txt", `${n}\n`);
      commits.push(r.g("stash", "create", `stash ${n}`));
    }
    r.git(["checkout", "--", "a.txt"]);
    r.git(["stash", "store", "-m", "kept", commits[0]!]);
    // Only the stash ref and its reflog move: the files and the index stay as they are.
    const loop = Bun.spawn({
      cmd: ["sh", "-c", `while :; do git stash store -m pushed ${commits[1]} && git stash store -m again ${commits[2]} && git stash drop -q && git stash drop -q; done`],
      cwd: r.dir,
      env: { ...r.env, GIT_UNDO_INTERNAL: "1" },
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      for (let i = 0; i < 40; i++) await r.run(["snapshot"]);
    } finally {
      loop.kill();
      await loop.exited;
    }
    const snaps = snapshotRefs(r);
    expect(snaps.length).toBeGreaterThan(5);
    const torn = snaps.map((s) => stashOf(r, s.tree)).filter((s) => s.ref !== s.top);
    expect(torn).toEqual([]);
  }, 120_000);
}
