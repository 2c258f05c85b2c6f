// The picker in a real terminal (tmux), once per size the other picker tests
// use in-process (helpers/vterm.ts): the process's own stdin and stdout, raw
// mode, the alternate screen left as it was, and a resize by the terminal
// itself (SIGWINCH), which the in-process terminal only imitates.
import { afterEach, expect, test } from "bun:test";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { expectWholeFrame, frameDrawn } from "../helpers/pick-frame.ts";
import { hasTmux, Terminal } from "../helpers/tmux.ts";

const terminals: Terminal[] = [];
afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
});

function twoStates(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  r.ok("snapshot");
  r.commit("two", { "a.txt": "two\n" });
  r.ok("snapshot");
  return r;
}

for (const [cols, rows] of [
  [60, 24],
  [100, 30],
  [180, 45],
] as const) {
  test.skipIf(!hasTmux())(`${cols}x${rows}: the frame fills the terminal whole, Esc leaves it as it was`, async () => {
    const r = twoStates();
    const t = new Terminal(r, cols, rows);
    terminals.push(t);
    t.start(["pick"]);
    const s = await t.waitFor((x) => x.includes("Restoring #1") && frameDrawn(x), "the whole frame");
    expectWholeFrame(s, cols);
    t.keys("Escape");
    expect(await t.exitCode()).toBe(1);
    // The alternate screen is left: the frame is gone, the shell's lines are back.
    const after = await t.waitForText("nothing changed");
    expect(after).not.toContain("Pick a state");
  });
}

test.skipIf(!hasTmux())("a terminal resized by the user is redrawn whole at its new size", async () => {
  const r = twoStates();
  const t = new Terminal(r, 130, 24);
  terminals.push(t);
  t.start(["pick"]);
  let s = await t.waitForText("Restoring #1");
  expect(s.split("\n").some((l) => /[●○].*#2.*│/.test(l))).toBe(true);
  Bun.spawnSync({ cmd: ["tmux", "-L", t.socket, "resize-window", "-t", "0", "-x", "60", "-y", "20"], env: r.env });
  s = await t.waitFor((x) => x.includes("├── what restoring it does") && frameDrawn(x), "the narrow layout, drawn whole");
  expectWholeFrame(s, 60);
  t.keys("Enter");
  await t.waitForText("Restore #1?");
  t.keys("y");
  expect(await t.exitCode()).toBe(0);
  expect(r.read("a.txt")).toBe("one\n");
});
