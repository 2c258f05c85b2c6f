// Issue #30.16: `list -n 2` showed no `*` when the position was further down.
// A last line says where it is, only when the position is not among the rows.
import { expect, test } from "bun:test";
import { makeRepo } from "../helpers/repo.ts";

test("list says 'you are at #N' only when the position is not among the rows shown", async () => {
  const r = makeRepo();
  for (const n of [1, 2, 3, 4]) {
    r.commit(`c${n}`, { "f.txt": `${n}\n` });
    await r.okIn("snapshot");
  }
  // At the newest: it is shown, with its `*`, and no extra line.
  expect(r.ok("list", "-n", "2").trimEnd().split("\n")).toEqual([expect.stringMatching(/^\* #4 /), expect.stringMatching(/^  #3 /)]);

  await r.okIn("restore", "1"); // recorded as #5, a restore of #1: the position is #1
  const short = r.ok("list", "-n", "2").trimEnd().split("\n");
  expect(short).toEqual([expect.stringMatching(/^  #5 /), expect.stringMatching(/^< #4 /), "you are at #1"]);
  // A range that leaves it out says it too; a list that shows it does not.
  expect(r.ok("list", "--since", "1.hour.ago", "--", "nothing-matches").trimEnd().split("\n")).toEqual(["you are at #1"]);
  const all = r.ok("list").trimEnd().split("\n");
  expect(all.at(-1)).toMatch(/^\* #1 /);
  expect(all.some((l) => l.startsWith("you are at"))).toBe(false);
  // JSON says it with `current`, as before.
  expect((JSON.parse(await r.okIn("list", "-n", "2", "--json")) as { current: boolean }[]).some((s) => s.current)).toBe(false);
});
