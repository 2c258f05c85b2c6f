// Finding lost work by path: git undo log -- <pathspec>.
import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { userState } from "../helpers/lost-work.ts";
import { makeRepo, type SnapshotJson } from "../helpers/repo.ts";

const numbersOf = (stdout: string) => (JSON.parse(stdout) as SnapshotJson[]).map((s) => s.number);

const SPACED = "notes dir/ünïcödé file.txt";

describe("git undo log -- <pathspec>", () => {
  test("the snapshots in which a path was created, edited, staged, unstaged or removed", async () => {
    const r = makeRepo();
    r.commit("base", { "other.txt": "other\n" });
    await r.okIn("snapshot"); // #1: no such path yet
    r.write(SPACED, "first words\n");
    await r.okIn("snapshot"); // #2: created (untracked)
    r.write("other.txt", "other, edited\n");
    await r.okIn("snapshot"); // #3: only the other file
    r.git(["add", "--", SPACED]);
    await r.okIn("snapshot"); // #4: staged, same content
    r.write(SPACED, "first words\nprecious second line\n");
    await r.okIn("snapshot"); // #5: edited
    const lost = userState(r);
    r.git(["reset", "-q", "--hard"]);
    await r.okIn("snapshot"); // #6: removed by reset --hard
    r.write("unrelated.md", "x\n");
    await r.okIn("snapshot"); // #7: only an unrelated file

    expect(numbersOf(await r.okIn("log", "--json", "--", SPACED))).toEqual([6, 5, 4, 2]);
    expect(numbersOf(await r.okIn("log", "--json", "--", "notes dir"))).toEqual([6, 5, 4, 2]);
    expect(numbersOf(await r.okIn("log", "--json", "--", "*.txt"))).toEqual([6, 5, 4, 3, 2, 1]);
    expect(numbersOf(await r.okIn("log", "--json", "--", "other.txt", SPACED))).toEqual([6, 5, 4, 3, 2, 1]);
    expect(numbersOf(await r.okIn("log", "--json", "--", "nothing-here"))).toEqual([]);
    expect(numbersOf(await r.okIn("log", "--json", "-n", "2", "--", SPACED))).toEqual([6, 5]);
    // The usual list lines.
    const text = await r.okIn("log", "--", SPACED);
    expect(text.split("\n").filter((l) => l && !l.startsWith("you are at")).map((l) => /#(\d+)/.exec(l)![1])).toEqual(["6", "5", "4", "2"]);
    // The position (#7) is not among them: the last line says where you are.
    expect(text.trimEnd().split("\n").at(-1)).toBe("you are at #7");

    // From a subdirectory, a pathspec is relative to it, as in Git.
    mkdirSync(r.path("notes dir"), { recursive: true });
    const sub = await r.run(["log", "--json", "--", "ünïcödé file.txt"], { cwd: r.path("notes dir") });
    expect(sub.code).toBe(0);
    expect(numbersOf(sub.stdout)).toEqual([6, 5, 4, 2]);

    // The snapshot before the removal holds the lost edit: restoring it brings everything back.
    expect(r.undo(["restore", "5"]).code).toBe(0);
    expect(userState(r)).toBe(lost);
    expect(r.read(SPACED)).toBe("first words\nprecious second line\n");
  });

  test("work lost to branch -D and stash drop is found by its path", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    await r.okIn("snapshot"); // #1
    r.git(["checkout", "-q", "-b", "feature"]);
    r.commit("feature work", { "feature.txt": "the feature\n" });
    await r.okIn("snapshot"); // #2
    const onFeature = userState(r);
    r.git(["checkout", "-q", "main"]);
    r.git(["branch", "-q", "-D", "feature"]);
    await r.okIn("snapshot"); // #3
    r.write("a.txt", "a, with a stashed edit\n");
    await r.okIn("snapshot"); // #4
    r.git(["stash", "-q"]);
    r.git(["stash", "drop", "-q"]);
    await r.okIn("snapshot"); // #5
    expect(numbersOf(await r.okIn("log", "--json", "--", "feature.txt"))).toEqual([3, 2]);
    expect(numbersOf(await r.okIn("log", "--json", "--", "a.txt"))).toEqual([5, 4, 1]);
    expect(r.undo(["restore", "2"]).code).toBe(0);
    expect(userState(r)).toBe(onFeature);
  });

  test("log without -- is still list; magic and paths outside refuse", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    await r.okIn("snapshot");
    r.write("b.md", "b\n");
    await r.okIn("snapshot");
    expect(numbersOf(await r.okIn("log", "--json"))).toEqual(numbersOf(await r.okIn("list", "--json")));
    expect(r.undo(["log", "--", ":(icase)A.TXT"]).code).toBe(129);
    expect(r.undo(["log", "--", "../elsewhere"]).code).toBe(129);
    // A path only after --: a bare word is refused, as before.
    expect(r.undo(["log", "a.txt"]).code).toBe(129);
    expect(numbersOf(await r.okIn("log", "--json", "--", ":/a.txt"))).toEqual([1]);
  });
});
