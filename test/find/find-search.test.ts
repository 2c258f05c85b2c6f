// Finding lost work by a change of content: git undo log -S <string> / -G <regex>.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { blob, treeEntries, withEntry } from "../helpers/hostile.ts";
import { lostWork, SPACED, userState } from "../helpers/lost-work.ts";
import { makeRepo, tempDir, type SnapshotJson, type TestRepo } from "../helpers/repo.ts";

const numbersOf = (stdout: string) => (JSON.parse(stdout) as SnapshotJson[]).map((s) => s.number);
const found = (r: TestRepo, ...args: string[]) => numbersOf(r.ok("log", "--json", ...args));


describe("git undo log -S / -G", () => {
  test("finds text destroyed by reset --hard, stash drop and branch -D; its number restores it", async () => {
    const { r, atOne, atThree, atFive } = lostWork();
    // Where the text appeared and where it went, newest first, as git log -S lists commits.
    expect(found(r, "-S", "precious")).toEqual([2, 1]);
    expect(found(r, "-Ssecret ünïcode")).toEqual([2, 1]);
    expect(found(r, "-S", "stashed thought")).toEqual([4, 3]);
    expect(found(r, "-S", "branch-only")).toEqual([6, 5]);
    expect(found(r, "-G", "prec[i]ous")).toEqual([2, 1]);
    expect(found(r, "-G", "^stashed")).toEqual([4, 3]);
    expect(found(r, "-G", "idea$")).toEqual([6, 5]);
    expect(found(r, "-S", "prec[i]ous", "--pickaxe-regex")).toEqual([2, 1]);
    // Only in the first snapshot did the base line appear (compared with nothing); it never left.
    expect(found(r, "-G", "^base$")).toEqual([1]);
    expect(found(r, "-S", "written nowhere")).toEqual([]);
    // The grep agrees: the newest snapshot holding each line.
    expect(r.ok("grep", "--all", "precious").trim()).toBe("#1 f.txt:2:my precious work");

    // The older number of each pair holds the text: restoring it brings everything back.
    expect(r.undo(["restore", "3"]).code).toBe(0);
    expect(userState(r)).toBe(atThree);
    expect(r.read("f.txt")).toBe("base\nstashed thought\n");
    expect(r.undo(["restore", "5"]).code).toBe(0);
    expect(userState(r)).toBe(atFive);
    expect(r.read("feature.txt")).toBe("branch-only idea\n");
    expect(r.undo(["restore", "1"]).code).toBe(0);
    expect(userState(r)).toBe(atOne);
    expect(r.read("f.txt")).toBe("base\nmy precious work\n");
    expect(r.read(SPACED)).toBe("secret ünïcode line\n");
  });

  test("with pathspecs, -n, --since/--until, --json and the usual lines", async () => {
    const { r } = lostWork();
    expect(found(r, "-S", "secret", "--", SPACED)).toEqual([2, 1]);
    expect(found(r, "-S", "secret", "--", "notes dir")).toEqual([2, 1]);
    expect(found(r, "-S", "secret", "--", "f.txt")).toEqual([]);
    expect(found(r, "-G", "secret", "--", "*.txt")).toEqual([2, 1]);
    expect(found(r, "-n", "1", "-S", "precious")).toEqual([2]);
    expect(found(r, "-S", "precious", "--since", "1.hour.ago")).toEqual([2, 1]);
    expect(found(r, "-S", "precious", "--until", "2001-01-01")).toEqual([]);
    // The JSON rows are list's rows.
    const rows = JSON.parse(await r.okIn("log", "-S", "precious", "--json")) as SnapshotJson[];
    expect(rows.map((s) => [s.number, s.kind, s.current])).toEqual([
      [2, "manual", false],
      [1, "manual", false],
    ]);
    expect(rows[0]!.commit).toBe(r.g("rev-parse", "refs/undo/snapshots/0000000002"));
    // The text lines: one per snapshot found, with its number.
    const text = await r.okIn("log", "-S", "precious");
    expect(text.split("\n").filter((l) => /#\d/.test(l) && !l.startsWith("you are at")).map((l) => /#(\d+)/.exec(l)![1])).toEqual(["2", "1"]);
    // `list` is the same command.
    expect(numbersOf(await r.okIn("list", "--json", "-G", "branch-only"))).toEqual([6, 5]);
  });

  test("-S counts occurrences, -G looks at lines; the index is searched as well as the working tree", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "one needle\n" });
    await r.okIn("snapshot"); // #1: a.txt holds one needle (index and worktree, from nothing)
    r.write("a.txt", "one needle, edited\n");
    await r.okIn("snapshot"); // #2: the line changed, the count did not
    r.git(["add", "a.txt"]);
    await r.okIn("snapshot"); // #3: staged: the index's line changed, the count did not
    r.write("a.txt", "one needle, edited\nanother needle\n");
    await r.okIn("snapshot"); // #4: two needles in the working tree
    r.git(["add", "a.txt"]);
    await r.okIn("snapshot"); // #5: and in the index
    expect(found(r, "-S", "needle")).toEqual([5, 4, 1]);
    expect(found(r, "-G", "needle")).toEqual([5, 4, 3, 2, 1]);
    // A string that looks like an option stays a string.
    r.write("a.txt", "--dashes--\n");
    await r.okIn("snapshot"); // #6
    expect(found(r, "-S", "--dashes")).toEqual([6]);
    expect(found(r, "-S--dashes")).toEqual([6]);
  });

  test("the oldest snapshot is found by what only its index, or only its working tree, holds; grep --all finds both", async () => {
    const r = makeRepo();
    r.commit("base", { "t.txt": "tracked\n", "sub/s.txt": "in a folder\n" });
    r.write("t.txt", "tracked\nstaged only\n");
    r.git(["add", "t.txt"]);
    r.write("t.txt", "tracked\nworktree only\n");
    r.write("sub/new file.txt", "untracked only\n");
    await r.okIn("snapshot"); // #1
    r.write("t.txt", "tracked\n");
    r.git(["add", "t.txt"]);
    r.remove("sub/new file.txt");
    await r.okIn("snapshot"); // #2: all three texts gone
    for (const text of ["staged only", "worktree only", "untracked only"]) {
      expect({ text, s: found(r, "-S", text), g: found(r, "-G", text) }).toEqual({ text, s: [2, 1], g: [2, 1] });
    }
    expect(found(r, "-S", "in a folder")).toEqual([1]); // in both, never changed
    expect(found(r, "-S", "untracked only", "--", "sub")).toEqual([2, 1]);
    expect(found(r, "-S", "untracked only", "--", "t.txt")).toEqual([]);
    expect(found(r, "-S", "staged only", "--", "t.txt")).toEqual([2, 1]);
    // grep --all: the index's copy of t.txt and the working tree's, both from #1.
    expect(r.ok("grep", "--all", "-F", "only").trim().split("\n")).toEqual([
      "#1 sub/new file.txt:1:untracked only",
      "#1 t.txt:2:staged only",
      "#1 t.txt:2:worktree only",
    ]);
  });

  test("every worktree's sequence with --all-worktrees", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    await r.okIn("snapshot"); // main #1
    const wt = join(tempDir("wt"), "linked tree");
    r.git(["worktree", "add", "-q", "-b", "side", wt]);
    r.write("a.txt", "main-only words\n");
    await r.okIn("snapshot"); // main #2
    const inLinked = (args: string[]) => {
      const res = r.undo(args, { cwd: wt });
      if (res.code !== 0) throw new Error(res.stderr);
      return res.stdout;
    };
    writeFileSync(join(wt, "b.txt"), "linked-only words\n");
    inLinked(["snapshot"]); // linked #1
    expect(found(r, "-S", "only words")).toEqual([2]);
    expect(numbersOf(inLinked(["log", "--json", "-S", "only words"]))).toEqual([1]);
    const all = JSON.parse(await r.okIn("log", "--json", "--all-worktrees", "-S", "only words")) as (SnapshotJson & { worktree: string | null })[];
    expect(all.map((s) => [s.worktree === null ? "main" : "linked", s.number])).toEqual([
      ["main", 2],
      ["linked", 1],
    ]);
  });

  test("usage errors: one line, nothing read", async () => {
    const { r } = lostWork();
    const refs = r.g("for-each-ref");
    for (const args of [
      ["-S", "a", "-G", "b"],
      ["-G", "a("],
      ["-S", "a(", "--pickaxe-regex"],
      ["--pickaxe-regex"],
      ["-S", ""],
      ["-S"],
    ]) {
      const res = await r.run(["log", ...args]);
      expect(res.code).toBe(129);
      expect(res.stderr.trim().split("\n")).toHaveLength(1);
      expect(res.stderr).not.toContain("    at ");
      expect(res.stdout).toBe("");
    }
    expect(r.undo(["log", "-G", "a("]).stderr).toContain("a(");
    expect(r.undo(["log", "-h"]).stdout).toContain("-S <string>");
    expect(r.g("for-each-ref")).toBe(refs);
  });

  test("a crafted snapshot is not searched: its text is never reported, the others still compare", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.write("a.txt", "a\nreal words\n");
    await r.okIn("snapshot"); // #1
    // #2: #1's state with an unreadable HEAD entry and a file only it holds.
    const tree = r.g("rev-parse", "refs/undo/snapshots/0000000001^{tree}");
    const worktree = treeEntries(r, tree).find((e) => e.name === "worktree")!.oid;
    const evilWorktree = withEntry(r, worktree, "evil.txt", blob(r, "hostile words\n"));
    const evil = withEntry(r, withEntry(r, tree, "worktree", evilWorktree, "40000"), "HEAD", blob(r, "not a head\n"));
    const message = r.git(["cat-file", "commit", "refs/undo/snapshots/0000000001"]).stdout.replace(/^[\s\S]*?\n\n/, "");
    const commit = r.git(["commit-tree", evil, "-p", "HEAD"], { input: message }).stdout.trim();
    r.git(["update-ref", "refs/undo/snapshots/0000000002", commit]);
    r.write("a.txt", "a\n");
    await r.okIn("snapshot"); // #3: the real words are gone (compared with #1, the readable one before)
    expect(found(r, "-S", "hostile words")).toEqual([]);
    expect(found(r, "-G", "hostile")).toEqual([]);
    expect(found(r, "-S", "real words")).toEqual([3, 1]);
    const listed = JSON.parse(await r.okIn("log", "--json")) as SnapshotJson[];
    expect(listed.find((s) => s.number === 2)?.unreadable).toContain("#2");
  });
});

test("searches Git refuses are usage errors in one line, worded as git log words them, before anything is read", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  await r.okIn("snapshot");
  const refused = async (args: string[], line: string) => {
    const res = await r.run(["log", ...args]);
    expect({ code: res.code, stdout: res.stdout, stderr: res.stderr }).toEqual({ code: 129, stdout: "", stderr: `error: ${line}\n` });
  };
  await refused(["-S", "a", "-G", "b"], "-S and -G cannot be used together");
  await refused(["--pickaxe-regex"], "--pickaxe-regex goes with -S");
  await refused(["-S", ""], "-S needs a non-empty string");
  await refused(["-G", ""], "-G needs a non-empty regular expression");
});
