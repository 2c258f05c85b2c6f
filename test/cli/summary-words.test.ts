// Summaries are shown in people's words (issue 17): Git's rebase reflog lines
// are reworded for display; the snapshot keeps Git's own line.
import { expect, test } from "bun:test";
import { restoreSummary, userSummary } from "../../core/describe.ts";
import { makeRepo } from "../helpers/repo.ts";

test("rebase reflog lines read as words; everything else is left as it is", async () => {
  const cases: [string, string][] = [
    ["rebase (finish): returning to refs/heads/main", "rebase finished: back on main"],
    ["rebase -i (finish): returning to refs/heads/topic", "rebase finished: back on topic"],
    ["rebase (continue) (finish): returning to refs/heads/x", "rebase finished: back on x"],
    ["rebase (start): checkout main", "rebase started: checkout main"],
    ["rebase (pick): fix the parser", "rebase picked: fix the parser"],
    ["pull --rebase (finish): refs/heads/main onto 1234567", "pull --rebase finished: main onto 1234567"],
    ["rebase (squash): two", "rebase squash: two"],
    ["commit: rebase (finish): a message that says so", "commit: rebase (finish): a message that says so"],
    ["reset: moving to HEAD~1", "reset: moving to HEAD~1"],
    ["branch feature deleted", "branch feature deleted"],
  ];
  for (const [raw, shown] of cases) expect(userSummary(raw)).toBe(shown);
});

test("list and show word a rebase; --json and the snapshot keep Git's line", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  const line = "rebase (finish): returning to refs/heads/main";
  await r.okIn("snapshot", "-m", line);
  expect(r.ok("list").split("\n")[0]).toMatch(/rebase finished: back on main$/);
  expect(await r.okIn("show", "1")).toMatch(/^summary +rebase finished: back on main$/m);
  expect((await r.snapshotsIn())[0]!.summary).toBe(line);
  expect(r.g("log", "-1", "--format=%s", "refs/undo/snapshots/0000000001")).toBe(line);
});

test("summaries as shown: object ids cut to seven digits, restores of restores named once", async () => {
  const hex = "1a981f6ae5404ed47ac6fc703e382ee075449deb";
  expect(userSummary(`checkout: moving from ${hex} to wt2`)).toBe("checkout: moving from 1a981f6 to wt2");
  expect(userSummary("restore #39: restore #37: restore #35: commit: x")).toBe("restore #39: commit: x");
  // Recorded: a restore of a restore says what the state's own change was.
  expect(restoreSummary(39, "restore #37: restore #35: commit: x")).toBe("restore #39: commit: x");
  expect(restoreSummary(4, "commit: x")).toBe("restore #4: commit: x");
});
