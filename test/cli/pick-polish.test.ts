// The picker's finish (issue 17), on a 60x24 and a 180x45 terminal: the
// selected row in reverse video, the effects on HEAD, refs and stash before the
// file list and "… N more" where the preview is cut, the confirmation repeating
// the plan in one line, ages that go on, and Esc clearing a filter first.
import { afterEach, expect, test } from "bun:test";
import { fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { VirtualTerminal } from "../helpers/vterm.ts";

const terminals: VirtualTerminal[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) await t.kill();
});

/** #1 before 40 files and a stash entry existed; #2 with them (the current state). */
function manyFiles(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  r.ok("snapshot");
  const files: Record<string, string> = {};
  for (let i = 0; i < 40; i++) files[`f${String(i).padStart(2, "0")}.txt`] = `${i}\n`;
  r.commit("forty files", files);
  r.write("a.txt", "stashed\n");
  r.git(["stash", "push", "-q", "-m", "wip"]);
  r.git(["branch", "topic"]);
  r.ok("snapshot");
  return r;
}

for (const [cols, rows] of [
  [60, 24],
  [180, 45],
] as const) {
  test(`${cols}x${rows}: reverse-video row, effects first, "… N more", the plan in the confirmation`, async () => {
    const r = manyFiles();
    const before = fingerprint(r);
    const t = new VirtualTerminal(r, cols, rows);
    terminals.push(t);
    t.start(["pick"]);
    let s = await t.waitForText("Restoring #1");
    // The stash entry that would go and the branch that would be deleted come before the files.
    const lines = s.split("\n");
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(at(/stash\s+1 removed/)).toBeGreaterThan(0);
    expect(at(/topic/)).toBeGreaterThan(0);
    const files = at(/files\s+\d+ changed/);
    expect(at(/stash\s+1 removed/)).toBeLessThan(files === -1 ? Infinity : files);
    // Forty files do not fit either terminal's preview: the cut says how much is left.
    expect(s).toMatch(/… \d+ more/);
    // Only the highlighted row is drawn in reverse video.
    const reversed = t.screenWithEscapes().split("\n").filter((l) => l.includes("\x1b[7m"));
    expect(reversed).toHaveLength(1);
    expect(reversed[0]).toContain("#1");
    // The confirmation repeats what would change, in one line.
    t.keys("Enter");
    s = await t.waitForText(/#1: HEAD|#1: \d+ refs?/);
    expect(s).toContain("Restore #1?");
    expect(s).toMatch(/#1: 2 refs, stash: 1 removed, 40 files/);
    t.keys("n");
    await t.waitFor((x) => !x.includes("Restore #1?"), "the list again");
    t.keys("Escape");
    expect(await t.exitCode()).toBe(1);
    expect(fingerprint(r)).toBe(before);
  });
}

for (const [cols, rows] of [
  [60, 24],
  [180, 45],
] as const) {
  test(`${cols}x${rows}: ages go on without a key; Esc clears the filter, then leaves`, async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "one\n" });
    r.ok("snapshot");
    r.commit("two", { "a.txt": "two\n" });
    r.ok("snapshot");
    const t = new VirtualTerminal(r, cols, rows);
    terminals.push(t);
    t.start(["pick"]);
    const first = await t.waitForText(/Restoring #1 · \d+ seconds? ago/);
    const age = (x: string) => Number(/Restoring #1 · (\d+) seconds? ago/.exec(x)?.[1] ?? NaN);
    const then = age(first);
    // No key pressed: the header's age moves on by itself.
    await t.waitFor((x) => age(x) >= then + 2, "the age to go on", 10_000);
    t.type("one");
    await t.waitForText("1 of 2 snapshots");
    t.keys("Escape");
    await t.waitFor((x) => /\b2 snapshots/.test(x) && !x.includes("of 2"), "the filter cleared");
    t.keys("Escape");
    expect(await t.exitCode()).toBe(1);
  });
}
