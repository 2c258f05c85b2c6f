// Finding lost work by path: git undo log -- <pathspec>.
import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { userState } from "./helpers/lost-work.ts";
import { makeRepo, type SnapshotJson } from "./helpers/repo.ts";

const numbersOf = (stdout: string) => (JSON.parse(stdout) as SnapshotJson[]).map((s) => s.number);

const SPACED = "notes dir/ünïcödé file.txt";

describe("git undo log -- <pathspec>", () => {
  test("the snapshots in which a path was created, edited, staged, unstaged or removed", () => {
    const r = makeRepo();
    r.commit("base", { "other.txt": "other\n" });
    r.ok("snapshot"); // #1: no such path yet
    r.write(SPACED, "first words\n");
    r.ok("snapshot"); // #2: created (untracked)
    r.write("other.txt", "other, edited\n");
    r.ok("snapshot"); // #3: only the other file
    r.git(["add", "--", SPACED]);
    r.ok("snapshot"); // #4: staged, same content
    r.write(SPACED, "first words\nprecious second line\n");
    r.ok("snapshot"); // #5: edited
    const lost = userState(r);
    r.git(["reset", "-q", "--hard"]);
    r.ok("snapshot"); // #6: removed by reset --hard
    r.write("unrelated.md", "x\n");
    r.ok("snapshot"); // #7: only an unrelated file

    expect(numbersOf(r.ok("log", "--json", "--", SPACED))).toEqual([6, 5, 4, 2]);
    expect(numbersOf(r.ok("log", "--json", "--", "notes dir"))).toEqual([6, 5, 4, 2]);
    expect(numbersOf(r.ok("log", "--json", "--", "*.txt"))).toEqual([6, 5, 4, 3, 2, 1]);
    expect(numbersOf(r.ok("log", "--json", "--", "other.txt", SPACED))).toEqual([6, 5, 4, 3, 2, 1]);
    expect(numbersOf(r.ok("log", "--json", "--", "nothing-here"))).toEqual([]);
    expect(numbersOf(r.ok("log", "--json", "-n", "2", "--", SPACED))).toEqual([6, 5]);
    // The usual list lines.
    const text = r.ok("log", "--", SPACED);
    expect(text.split("\n").filter((l) => l && !l.startsWith("you are at")).map((l) => /#(\d+)/.exec(l)![1])).toEqual(["6", "5", "4", "2"]);
    // The position (#7) is not among them: the last line says where you are.
    expect(text.trimEnd().split("\n").at(-1)).toBe("you are at #7");

    // From a subdirectory, a pathspec is relative to it, as in Git.
    mkdirSync(r.path("notes dir"), { recursive: true });
    const sub = r.undo(["log", "--json", "--", "ünïcödé file.txt"], { cwd: r.path("notes dir") });
    expect(sub.code).toBe(0);
    expect(numbersOf(sub.stdout)).toEqual([6, 5, 4, 2]);

    // The snapshot before the removal holds the lost edit: restoring it brings everything back.
    expect(r.undo(["restore", "5"]).code).toBe(0);
    expect(userState(r)).toBe(lost);
    expect(r.read(SPACED)).toBe("first words\nprecious second line\n");
  });

  test("work lost to branch -D and stash drop is found by its path", () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.ok("snapshot"); // #1
    r.git(["checkout", "-q", "-b", "feature"]);
    r.commit("feature work", { "feature.txt": "the feature\n" });
    r.ok("snapshot"); // #2
    const onFeature = userState(r);
    r.git(["checkout", "-q", "main"]);
    r.git(["branch", "-q", "-D", "feature"]);
    r.ok("snapshot"); // #3
    r.write("a.txt", "a, with a stashed edit\n");
    r.ok("snapshot"); // #4
    r.git(["stash", "-q"]);
    r.git(["stash", "drop", "-q"]);
    r.ok("snapshot"); // #5
    expect(numbersOf(r.ok("log", "--json", "--", "feature.txt"))).toEqual([3, 2]);
    expect(numbersOf(r.ok("log", "--json", "--", "a.txt"))).toEqual([5, 4, 1]);
    expect(r.undo(["restore", "2"]).code).toBe(0);
    expect(userState(r)).toBe(onFeature);
  });

  test("log without -- is still list; magic and paths outside refuse", () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.ok("snapshot");
    r.write("b.md", "b\n");
    r.ok("snapshot");
    expect(numbersOf(r.ok("log", "--json"))).toEqual(numbersOf(r.ok("list", "--json")));
    expect(r.undo(["log", "--", ":(icase)A.TXT"]).code).toBe(129);
    expect(r.undo(["log", "--", "../elsewhere"]).code).toBe(129);
    // A path only after --: a bare word is refused, as before.
    expect(r.undo(["log", "a.txt"]).code).toBe(129);
    expect(numbersOf(r.ok("log", "--json", "--", ":/a.txt"))).toEqual([1]);
  });
});
