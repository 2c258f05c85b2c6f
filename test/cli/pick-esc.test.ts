// Leaving the picker changes nothing: Esc and Ctrl-C, after moving, filtering,
// looking at diffs and opening the confirmation, with unrecorded edits, staged
// changes, untracked files and a stash around.
import { afterEach, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { VirtualTerminal } from "../helpers/vterm.ts";

const terminals: VirtualTerminal[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) await t.kill();
});

function busyRepo(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n", "keep.txt": "k\n" });
  r.ok("snapshot");
  r.commit("two", { "a.txt": "two\n" });
  r.ok("snapshot");
  r.write("a.txt", "stashed\n");
  r.git(["stash", "push", "-q", "-m", "wip"]);
  r.ok("snapshot");
  // Not recorded by any snapshot: the picker must not record it, and must not touch it.
  r.write("a.txt", "unrecorded edit\n");
  r.write("staged.txt", "staged\n");
  r.git(["add", "staged.txt"]);
  r.write("untracked.txt", "untracked\n");
  return r;
}

const snapshotRefs = (r: TestRepo) => r.g("for-each-ref", "--format=%(refname) %(objectname)", "refs/undo/");

for (const [label, leaveKey] of [
  ["Esc", "Escape"],
  ["Ctrl-C", "C-c"],
] as const) {
  test(`${label} leaves refs, HEAD, index, files and stash byte-identical`, async () => {
    const r = busyRepo();
    const before = fingerprint(r);
    const refsBefore = snapshotRefs(r);
    const indexMtime = Bun.file(join(r.gitDir(), "index")).lastModified;
    const t = new VirtualTerminal(r, 100, 30);
    terminals.push(t);
    t.start(["pick"]);
    // The state left is not recorded yet: the preview says it would be saved first.
    await t.waitForText("saved as a new snapshot first");
    t.keys("Down");
    await t.waitForText("Restoring #1");
    t.keys("Tab");
    await t.waitForText("diff --git");
    t.keys("Tab");
    t.type("two");
    await t.waitForText("1 of 3 snapshots");
    t.keys("Enter");
    await t.waitForText("Restore #2?");
    if (leaveKey === "Escape") {
      // Esc steps back one layer at a time: the confirmation, then the filter, then the picker.
      t.keys("Escape");
      await t.waitFor((x) => !x.includes("Restore #2?") && x.includes("1 of 3 snapshots"), "the filtered list again");
      t.keys("Escape");
      await t.waitFor((x) => /\b3 snapshots/.test(x) && !x.includes("of 3") && !x.includes("filter: two"), "the filter cleared");
    }
    t.keys(leaveKey);
    const s = await t.waitForText(/EXIT=\d+/);
    expect(s).toContain("nothing changed");
    expect(await t.exitCode()).toBe(1);
    expect(fingerprint(r)).toBe(before);
    expect(snapshotRefs(r)).toBe(refsBefore);
    expect(Bun.file(join(r.gitDir(), "index")).lastModified).toBe(indexMtime);
    // No lock or scratch file left behind.
    const undoDir = join(r.gitDir(), "undo");
    let left: string[] = [];
    try {
      left = readdirSync(undoDir).filter((f) => f.endsWith(".lock"));
    } catch {}
    expect(left).toEqual([]);
  });
}
