// Finding lost work by content: git undo grep <pattern> (<n>... | --all).
import { describe, expect, test } from "bun:test";
import { lostWork, SPACED, userState } from "../helpers/lost-work.ts";
import { makeRepo } from "../helpers/repo.ts";

const lines = (stdout: string) => stdout.split("\n").filter(Boolean);

describe("git undo grep", () => {
  test("finds text destroyed by reset --hard, stash drop and branch -D, and its number restores it", async () => {
    const { r, atOne } = lostWork();

    expect(lines(await r.okIn("grep", "precious", "--all"))).toEqual(["#1 f.txt:2:my precious work"]);
    expect(lines(await r.okIn("grep", "--all", "secret"))).toEqual([`#1 ${SPACED}:1:secret ünïcode line`]);
    expect(lines(await r.okIn("grep", "--all", "stashed"))).toEqual(["#3 f.txt:2:stashed thought"]);
    expect(lines(await r.okIn("grep", "--all", "branch-only"))).toEqual(["#5 feature.txt:1:branch-only idea"]);
    // Each distinct content of f.txt once, naming every snapshot holding it: "base" alone
    // (index #1-#6, worktree #2 and #4-#6: one content), the stashed edit (#3), the precious edit (#1).
    expect(lines(await r.okIn("grep", "--all", "^base$"))).toEqual(["#1-#6 f.txt:1:base", "#3 f.txt:1:base", "#1 f.txt:1:base"]);
    expect(lines(await r.okIn("grep", "--all", "idea"))).toEqual(["#5 feature.txt:1:branch-only idea"]);
    // Given snapshots: each one holding it.
    expect(lines(await r.okIn("grep", "^base$", "1", "#4"))).toEqual(["#4 f.txt:1:base", "#1 f.txt:1:base"]);
    expect(lines(await r.okIn("grep", "-i", "PRECIOUS", "1"))).toEqual(["#1 f.txt:2:my precious work"]);
    expect(lines(await r.okIn("grep", "-F", "precious w", "1"))).toEqual(["#1 f.txt:2:my precious work"]);
    expect(lines(await r.okIn("grep", "-E", "prec(i)ous", "@{now}", "1"))).toEqual(["#1 f.txt:2:my precious work"]);
    const json = JSON.parse(await r.okIn("grep", "--json", "--all", "precious")) as unknown[];
    expect(json).toEqual([{ snapshot: 1, snapshots: [1], path: "f.txt", line: 2, text: "my precious work" }]);

    // Nothing matched: exit 1, as git grep.
    const none = await r.run(["grep", "precious", "2"]);
    expect(none.code).toBe(1);
    expect(none.stdout).toBe("");
    expect(r.undo(["grep", "no such text anywhere", "--all"]).code).toBe(1);

    expect(r.undo(["restore", "1"]).code).toBe(0);
    expect(userState(r)).toBe(atOne);
  });

  test("--all searches the snapshots' stash entries, each entry once, naming the snapshots holding it", async () => {
    const r = makeRepo();
    r.commit("base", { "f.txt": "base\n" });
    r.write("f.txt", "base\nstashed edit\n");
    r.write("new.txt", "untracked idea\n");
    r.git(["stash", "push", "-q", "--include-untracked"]);
    await r.okIn("snapshot"); // #1: the entry is stash@{0}
    r.write("g.txt", "other\n");
    r.git(["stash", "push", "-q", "--include-untracked"]);
    await r.okIn("snapshot"); // #2: it is stash@{1}
    r.git(["stash", "drop", "-q", "stash@{1}"]);
    await r.okIn("snapshot"); // #3: dropped
    expect(lines(await r.okIn("grep", "--all", "stashed"))).toEqual(["#1,#2 stash@{1}:f.txt:2:stashed edit"]);
    expect(lines(await r.okIn("grep", "--all", "idea"))).toEqual(["#1,#2 stash@{1}:new.txt:1:untracked idea"]);
    expect(lines(await r.okIn("grep", "stashed", "1"))).toEqual(["#1 stash@{0}:f.txt:2:stashed edit"]);
    const json = JSON.parse(await r.okIn("grep", "--json", "--all", "stashed")) as unknown[];
    expect(json).toEqual([{ snapshot: 2, snapshots: [1, 2], stash: 1, path: "f.txt", line: 2, text: "stashed edit" }]);
    // Restoring the stash list of #2 brings the entry back.
    expect(r.undo(["restore", "2", "--stash"]).code).toBe(0);
    expect(r.git(["stash", "list", "--format=%gs"]).stdout).toContain("WIP on main");
    expect(r.git(["stash", "show", "-p", "stash@{1}"]).stdout).toContain("+stashed edit");
  });

  test("control characters in found text and paths are escaped; usage errors", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.write("evil\x1b]0;title\x07.txt", "needle \x1b[2J here\n");
    await r.okIn("snapshot");
    const out = await r.okIn("grep", "--all", "needle");
    expect(out).not.toContain("\x1b");
    expect(out).toContain("\\e[2J");
    expect(out).toContain("evil\\e]0;title\\x07.txt");
    expect(r.undo(["grep"]).code).toBe(129);
    expect(r.undo(["grep", "x"]).code).toBe(129);
    expect(r.undo(["grep", "x", "1", "--all"]).code).toBe(129);
    expect(r.undo(["grep", "x", "99"]).code).toBe(128);
    expect(r.undo(["grep", "-h"]).stdout).toContain("usage: git undo grep");
  });
});
