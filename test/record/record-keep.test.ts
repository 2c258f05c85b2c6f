// Keep commits level by level: more than 64 x 64 commits to keep.
import { expect, test } from "bun:test";
import { makeRepo } from "../helpers/repo.ts";
import { emptyTree, parents, snapIn } from "../helpers/snap.ts";

test("4100 branches: keep commits of keep commits, none with more than 64 parents, every commit reachable", async () => {
  const r = makeRepo();
  let stream = "";
  for (let i = 0; i < 4100; i++) {
    const name = `b${String(i).padStart(4, "0")}`;
    stream += `commit refs/heads/${name}\ncommitter T <t@x> ${1600000000 + i} +0000\ndata ${name.length}\n${name}\n\n`;
  }
  r.git(["fast-import", "--quiet"], { input: stream });
  r.git(["symbolic-ref", "HEAD", "refs/heads/b0000"]);
  const tips = r.g("for-each-ref", "--format=%(objectname)", "refs/heads/").split("\n").sort();
  expect(new Set(tips).size).toBe(4100);

  const s = await snapIn(r);
  // 4100 commits -> 65 keep commits (64 x 64 + 4) -> 2 keep commits of keep commits.
  const top = parents(r, s.commit);
  expect(top).toHaveLength(2);
  expect([...top].sort()).toEqual(top);
  const level1 = top.flatMap((k) => parents(r, k));
  expect(level1).toHaveLength(65);
  // Level 1 is the sorted list of keep commits cut into runs of 64.
  const sortedLevel1 = [...level1].sort();
  expect(parents(r, top[0]!).length + parents(r, top[1]!).length).toBe(65);
  expect(top.map((k) => parents(r, k)).flat().sort()).toEqual(sortedLevel1);
  expect([parents(r, top[0]!), parents(r, top[1]!)].map((g) => g.length).sort((a, b) => a - b)).toEqual([1, 64]);
  const empty = emptyTree(r);
  for (const k of [...top, ...level1.slice(0, 3)]) {
    expect(r.g("cat-file", "commit", k)).toMatch(
      new RegExp(`^tree ${empty}\\n(parent [0-9a-f]{40}\\n){1,64}author git-undo <git-undo@localhost> 1000000000 \\+0000\\ncommitter git-undo <git-undo@localhost> 1000000000 \\+0000\\n\\ngit-undo keep$`),
    );
  }
  const kept = level1.flatMap((k) => parents(r, k)).sort();
  expect(kept).toEqual(tips);
});
