// The picker's partial actions on a terminal (in-process, helpers/vterm.ts): Ctrl-R reverts the
// highlighted snapshot's change, keeping what came after; Ctrl-F in the diff
// view restores only the file in view. Both confirm first, as Enter does.
import { afterEach, expect, test } from "bun:test";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { VirtualTerminal } from "../helpers/vterm.ts";

const terminals: VirtualTerminal[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) await t.kill();
});
const open = (r: TestRepo, cols = 120, rows = 32) => {
  const t = new VirtualTerminal(r, cols, rows);
  terminals.push(t);
  t.start(["pick"]);
  return t;
};

/** #1 a.txt and b.txt; #2 a.txt edited; #3 b.txt edited (the current state). */
function states(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a1\n", "b.txt": "b1\n" });
  r.ok("snapshot");
  r.write("a.txt", "a2\n");
  r.ok("snapshot");
  r.write("b.txt", "b2\n");
  r.ok("snapshot");
  return r;
}

test("Ctrl-R offers the revert of the highlighted change; y reverts it and keeps the later edit", async () => {
  const r = states();
  const t = open(r);
  const s = await t.waitForText("Restoring #2");
  expect(s).toContain("or ^R: revert only the change #2 made");
  t.keys("C-r");
  await t.waitForText("Revert #2?");
  t.keys("y");
  const done = await t.waitForText(/EXIT=\d+/);
  expect(done).toContain("Reverted #2");
  expect(await t.exitCode()).toBe(0);
  expect(r.read("a.txt")).toBe("a1\n");
  expect(r.read("b.txt")).toBe("b2\n");
});

test("Ctrl-F in the diff view restores only the file in view; n goes back without changing anything", async () => {
  const r = states();
  const t = open(r);
  await t.waitForText("Restoring #2");
  t.keys("Down"); // #1: a.txt and b.txt differ
  await t.waitForText("Restoring #1");
  t.keys("Tab");
  await t.waitForText("diff --git a/a.txt b/a.txt");
  t.keys("C-f");
  await t.waitForText("Restore a.txt from #1?");
  t.keys("n");
  await t.waitForText("Enter restore");
  expect(r.read("a.txt")).toBe("a2\n");
  t.keys("C-f");
  await t.waitForText("Restore a.txt from #1?");
  t.keys("y");
  const done = await t.waitForText(/EXIT=\d+/);
  expect(done).toContain("Restored a.txt from #1");
  expect(await t.exitCode()).toBe(0);
  expect(r.read("a.txt")).toBe("a1\n");
  expect(r.read("b.txt")).toBe("b2\n");
  expect(r.snapshots()[0]!.summary).toBe("restored a.txt from #1");
});
