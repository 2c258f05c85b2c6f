// git undo list lines its columns up by display width (a CJK character takes
// two columns), whatever the branch names' lengths, and cuts nothing: a pipe
// gets every summary whole (issue 17).
import { expect, test } from "bun:test";
import { makeRepo } from "../helpers/repo.ts";

test("columns line up by display width with long and CJK branch names; summaries are never cut", () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  r.ok("snapshot");
  r.git(["checkout", "-q", "-b", "日本語のブランチ"]);
  r.ok("snapshot");
  r.git(["checkout", "-q", "-b", "a-branch-name-much-longer-than-twelve"]);
  const long = `a summary of ${"many words ".repeat(30)}end`;
  r.ok("snapshot", "-m", long);
  const rows = r.ok("list").trimEnd().split("\n");
  expect(rows).toHaveLength(3);
  // The summary starts at the same display column on every row.
  const summaryColumn = (row: string, summary: string) => Bun.stringWidth(row.slice(0, row.indexOf(summary)));
  const at = [summaryColumn(rows[0]!, long), summaryColumn(rows[1]!, "checkout:"), summaryColumn(rows[2]!, "commit (initial)")];
  expect(new Set(at).size).toBe(1);
  expect(rows[0]!.endsWith(long)).toBe(true);
  expect(rows[1]).toContain("日本語のブランチ ");
});

test("on a terminal of 80 columns a 51-character branch is cut with an ellipsis and no row wraps; a pipe gets it whole", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  await r.okIn("snapshot");
  const branch = `feature/${"x".repeat(43)}`;
  expect(branch).toHaveLength(51);
  r.git(["checkout", "-q", "-b", branch]);
  await r.okIn("snapshot");
  r.git(["checkout", "-q", "main"]);
  await r.okIn("snapshot");
  const fitted = await r.run(["list"], { env: { COLUMNS: "80" } });
  expect(fitted.code).toBe(0);
  const rows = fitted.stdout.trimEnd().split("\n");
  expect(rows).toHaveLength(3);
  for (const row of rows) expect(Bun.stringWidth(row)).toBeLessThan(80);
  expect(rows[1]).toContain("feature/xxx");
  expect(rows[1]).toContain("… ");
  expect(rows[1]).toMatch(/checkout: /);
  const whole = (await r.run(["list"])).stdout;
  expect(whole).toContain(`${branch} `);
});
