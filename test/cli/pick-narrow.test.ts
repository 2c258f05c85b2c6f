// A 60-column terminal: the picker puts the preview below the list and cuts
// every line to the width, so no line wraps and the frame stays whole.
import { afterEach, expect, test } from "bun:test";
import { makeRepo } from "../helpers/repo.ts";
import { VirtualTerminal } from "../helpers/vterm.ts";
import { expectWholeFrame } from "../helpers/pick-frame.ts";

const terminals: VirtualTerminal[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) await t.kill();
});

test("60 columns: long branch names, summaries, paths and diff lines never break the frame", async () => {
  const r = makeRepo({ branch: "a-very-long-branch-name-that-goes-on-and-on" });
  const long = `${"deeply/nested/".repeat(6)}file-with-a-long-name.txt`;
  r.commit("one", { "a.txt": "one\n" });
  r.ok("snapshot", "-m", `a summary that is much longer than sixty columns can show ${"x".repeat(40)}`);
  r.commit("two", { [long]: `${"a long line of text ".repeat(10)}\n\tand a tab\n`, "wide.txt": "日本語のテキスト".repeat(10) });
  r.ok("snapshot");
  for (let i = 0; i < 12; i++) {
    r.write("a.txt", `edit ${i}\n`);
    r.ok("snapshot");
  }
  const t = new VirtualTerminal(r, 60, 24);
  terminals.push(t);
  t.start(["pick"]);
  let s = await t.waitForText("Restoring #13");
  expectWholeFrame(s, 60);
  t.keys("End");
  s = await t.waitForText("Restoring #1");
  expect(s).toContain("…"); // something was cut, not wrapped
  expectWholeFrame(s, 60);
  t.keys("Tab");
  s = await t.waitForText("diff --git");
  expectWholeFrame(s, 60);
  t.keys("PageDown");
  s = await t.waitFor((x) => x !== s, "the next page of the diff");
  expectWholeFrame(s, 60);
  // A typed filter narrows the list and the frame is still whole.
  t.keys("Tab");
  t.type("deeply");
  s = await t.waitForText("1 of 14 snapshots");
  expect(s).toContain("#2");
  expectWholeFrame(s, 60);
  t.keys("Escape"); // clears the filter
  s = await t.waitForText(/◆ {2}Pick a state to restore {2}14 snapshots/);
  expectWholeFrame(s, 60);
  t.keys("Escape");
  expect(await t.exitCode()).toBe(1);
});

test("a resized terminal is redrawn whole at its new size", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  r.ok("snapshot");
  r.commit("two", { "a.txt": "two\n" });
  r.ok("snapshot");
  const t = new VirtualTerminal(r, 130, 24);
  terminals.push(t);
  t.start(["pick"]);
  // Wide: the preview is beside the list.
  let s = await t.waitForText("Restoring #1");
  expect(s.split("\n").some((l) => /#1 .*│ .*Restoring #1|[●○].*#2.*│/.test(l))).toBe(true);
  t.resize(60, 20);
  s = await t.waitFor((x) => x.includes("├── what restoring it does"), "the narrow layout");
  expectWholeFrame(s, 60);
  t.keys("Escape");
  expect(await t.exitCode()).toBe(1);
});
