// Position, undo and redo (spec: "Position, undo and redo"; clarifications: "Numbers and position").
import { describe, expect, test } from "bun:test";
import { fingerprint, makeRepo } from "../helpers/repo.ts";
import { trailersOf, numbersIn, positionIn } from "../helpers/restore.ts";

describe("the worked example of the clarifications", () => {
  test("undo, undo, redo, redo, then new work ends the streak", async () => {
    const r = makeRepo();
    r.commit("one", { "f.txt": "1\n" });
    await r.okIn("snapshot");
    r.commit("two", { "f.txt": "2\n" });
    await r.okIn("snapshot");
    r.commit("three", { "f.txt": "3\n" });
    await r.okIn("snapshot");
    const tip = (n: string) => r.g("rev-parse", n);
    const c3 = tip("HEAD");
    const c2 = tip("HEAD~1");
    const c1 = tip("HEAD~2");
    expect(await positionIn(r)).toBe(3);

    // git undo restores 2, written as 4 (restore, Restored 2, From 3): position 2.
    const out4 = await r.okIn();
    expect(out4).toMatch(/^Restored #2 · commit: two · /m);
    expect(out4).toContain(`main ${c3.slice(0, 7)} -> ${c2.slice(0, 7)}`);
    expect(out4).toMatch(/To go back: git undo redo, or git undo restore 3/);
    expect(trailersOf(r, 4)).toMatchObject({ "Undo-Kind": "restore", "Undo-Restored": "2", "Undo-From": "3" });
    expect(await positionIn(r)).toBe(2);
    expect(r.read("f.txt")).toBe("2\n");
    expect(tip("main")).toBe(c2);

    // git undo restores 1, as 5 (Restored 1, From 4).
    await r.okIn();
    expect(trailersOf(r, 5)).toMatchObject({ "Undo-Kind": "restore", "Undo-Restored": "1", "Undo-From": "4" });
    expect(await positionIn(r)).toBe(1);
    expect(tip("main")).toBe(c1);

    // git undo redo restores 2, as 6; again restores 3, as 7.
    await r.okIn("redo");
    expect(trailersOf(r, 6)).toMatchObject({ "Undo-Restored": "2", "Undo-From": "5" });
    expect(tip("main")).toBe(c2);
    await r.okIn("redo");
    expect(trailersOf(r, 7)).toMatchObject({ "Undo-Restored": "3", "Undo-From": "6" });
    expect(tip("main")).toBe(c3);
    expect(r.read("f.txt")).toBe("3\n");
    const none = await r.run(["redo"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("nothing to redo");

    // New work is recorded as 8: the streak is over, position 8, nothing to redo.
    r.commit("four", { "f.txt": "4\n" });
    await r.okIn("snapshot");
    expect(await numbersIn(r)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await positionIn(r)).toBe(8);
    expect(r.undo(["redo"]).code).toBe(1);

    // git undo now targets 7 (the state of 3), then 6, 5, 4, 3, 2, 1.
    const expected = [7, 6, 5, 4, 3, 2, 1];
    const content: Record<number, string> = { 7: "3\n", 6: "2\n", 5: "1\n", 4: "2\n", 3: "3\n", 2: "2\n", 1: "1\n" };
    let next = 9;
    for (const n of expected) {
      const out = await r.okIn();
      expect(out).toMatch(new RegExp(`^Restored #${n} `, "m"));
      expect(trailersOf(r, next)).toMatchObject({ "Undo-Restored": String(n), "Undo-From": String(next - 1) });
      expect(r.read("f.txt")).toBe(content[n]!);
      next++;
    }
    const end = await r.run([]);
    expect(end.code).toBe(1);
    expect(end.stderr).toContain("nothing to undo");
  });
});

test("git undo N and git undo redo N skip several; too many refuses and says how many exist", async () => {
  const r = makeRepo();
  for (const n of [1, 2, 3, 4]) {
    r.commit(`c${n}`, { "f.txt": `${n}\n` });
    await r.okIn("snapshot");
  }
  const tooMany = await r.run(["9"]);
  expect(tooMany.code).toBe(1);
  expect(tooMany.stderr).toMatch(/only 3 are available/);
  await r.okIn("3");
  expect(r.read("f.txt")).toBe("1\n");
  expect(trailersOf(r, 5)).toMatchObject({ "Undo-Restored": "1", "Undo-From": "4" });
  await r.okIn("redo", "2");
  expect(r.read("f.txt")).toBe("3\n");
  await r.okIn("restore", "4");
  expect(r.read("f.txt")).toBe("4\n");
  expect(trailersOf(r, 7)).toMatchObject({ "Undo-Restored": "4", "Undo-From": "6" });
});

test("with no snapshots at all there is nothing to undo, and nothing is recorded", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  const before = fingerprint(r);
  const res = await r.run([]);
  expect(res.code).toBe(1);
  expect(res.stderr).toContain("nothing to undo");
  expect(fingerprint(r)).toBe(before);
});

describe("record first", () => {
  test("edits Git never saw are saved as a change snapshot before the restore, and restoring it brings them back", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "a\n" });
    await r.okIn("snapshot");
    r.commit("two", { "a.txt": "a2\n" });
    await r.okIn("snapshot");
    // Edits no Git command saw: a changed file, a new untracked file.
    r.write("a.txt", "edited by hand\n");
    r.write("notes/new.txt", "fresh\n");
    const out = await r.okIn();
    expect(out).toContain("Saved your unrecorded changes as #3 first");
    expect(trailersOf(r, 3)).toMatchObject({ "Undo-Kind": "change" });
    // Counted from the new snapshot: the target is 2 (the one below 3), not 1.
    expect(out).toMatch(/^Restored #2 /m);
    expect(trailersOf(r, 4)).toMatchObject({ "Undo-Kind": "restore", "Undo-Restored": "2", "Undo-From": "3" });
    expect(r.read("a.txt")).toBe("a2\n");
    expect(() => r.read("notes/new.txt")).toThrow();
    // Restoring the saved snapshot brings the edits back.
    await r.okIn("redo");
    expect(r.read("a.txt")).toBe("edited by hand\n");
    expect(r.read("notes/new.txt")).toBe("fresh\n");
  });

  test("nothing is saved first when the state is already the latest snapshot", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "a\n" });
    await r.okIn("snapshot");
    r.commit("two", { "a.txt": "b\n" });
    await r.okIn("snapshot");
    const out = await r.okIn();
    expect(out).not.toContain("Saved your unrecorded");
    expect(await numbersIn(r)).toEqual([1, 2, 3]);
  });

  test("record first ends the streak: after undo, a new edit then undo undoes the edit", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n" });
    await r.okIn("snapshot");
    r.commit("two", { "a.txt": "2\n" });
    await r.okIn("snapshot");
    await r.okIn(); // #3 restores 1
    r.write("a.txt", "hand\n");
    const out = await r.okIn(); // saves #4, restores #3 (the state of 1)
    expect(out).toContain("Saved your unrecorded changes as #4 first");
    expect(out).toMatch(/^Restored #3 /m);
    expect(r.read("a.txt")).toBe("1\n");
    expect(r.undo(["redo"]).code).toBe(0);
    expect(r.read("a.txt")).toBe("hand\n");
  });
});

test("--dry-run prints the plan and changes nothing, not even a record-first snapshot", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  await r.okIn("snapshot");
  r.commit("two", { "a.txt": "b\n", "b.txt": "new\n" });
  await r.okIn("snapshot");
  r.write("c.txt", "unrecorded\n");
  const before = fingerprint(r);
  const out = await r.okIn("--dry-run");
  expect(out).toMatch(/^Would restore #2 /m);
  expect(out).toContain("Would save your unrecorded changes");
  // Counted from the unrecorded state, the target #2 differs from it by c.txt only.
  expect(out).toMatch(/files: 1 removed/);
  expect(out).toContain("Nothing was changed (--dry-run).");
  expect(fingerprint(r)).toBe(before);
  const one = await r.okIn("restore", "1", "--dry-run");
  expect(one).toMatch(/^Would restore #1 /m);
  expect(one).toMatch(/main \w{7} -> \w{7}  one/);
  expect(one).toMatch(/files: 1 changed, 2 removed/);
  expect(fingerprint(r)).toBe(before);
});

test("-h prints each command's usage; git undo -h still prints the main help", async () => {
  const r = makeRepo();
  expect(await r.okIn("redo", "-h")).toMatch(/usage: git undo redo/);
  expect(await r.okIn("restore", "-h")).toMatch(/--dry-run/);
  expect(await r.okIn("undo", "-h")).toMatch(/usage: git undo \[<N>\]/);
  expect(await r.okIn("-h")).toMatch(/usage: git undo .*<command>/);
  expect(r.undo(["restore"]).code).toBe(129);
  expect(r.undo(["restore", "x"]).code).toBe(129);
  expect(r.undo(["restore", "99"]).code).not.toBe(0);
});
