// The read side of the CLI: snapshot, list (log), show, gc; their --json, their
// options, and their errors (one line on stderr, non-zero exit, no stack trace).
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { fromTemplate, makeRepo, tempDir, type TestRepo, type RunResult } from "../helpers/repo.ts";
import { numberRuns } from "../../cli/commands/gc.ts";
import { snap, snapIn, snapshotRefs } from "../helpers/snap.ts";

/** The first line of gc's output: the space snapshots hold follows it (cli/commands/gc.ts). */
const gcFirstLine = (r: { code: number; stdout: string; stderr: string }) => ({ ...r, stdout: `${r.stdout.split("\n")[0]}\n` });

/** A failure as Git reports one: non-zero exit, nothing on stdout, one line on stderr. */
function oneLineError(res: RunResult, code?: number): string {
  expect(res.code).not.toBe(0);
  if (code !== undefined) expect(res.code).toBe(code);
  expect(res.stdout).toBe("");
  const lines = res.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(res.stderr).not.toMatch(/\n\s+at |\.ts:\d+/);
  return lines[0]!;
}

/** Three snapshots: a commit, a branch, an edit (built once per file, copied for each test). */
const history = (): TestRepo => fromTemplate("history", buildHistory);

function buildHistory(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.c": "a\n" });
  snap(r);
  r.git(["branch", "feature"]);
  snap(r);
  r.write("a.c", "edited\n");
  snap(r);
  return r;
}

/** A snapshot of format 2, made by hand, as a newer git-undo would write it. */
function addFutureSnapshot(r: TestRepo, n: number): void {
  const tree = snapshotRefs(r).at(-1)!.tree;
  const commit = r.g("commit-tree", tree, "-m", "from the future\n\nUndo-Format: 2\nUndo-Kind: change\nUndo-Head: main");
  r.git(["update-ref", `refs/undo/snapshots/${String(n).padStart(10, "0")}`, commit]);
}

describe("snapshot", () => {
  test("prints '#<n> <summary>' (exit 0), then 'no change since #<n>' (exit 1: nothing to do)", async () => {
    const r = makeRepo();
    r.commit("one");
    expect(await r.run(["snapshot"])).toEqual({ code: 0, stdout: "#1 commit (initial): one\n", stderr: "" });
    expect(await r.run(["snapshot"])).toEqual({ code: 1, stdout: "no change since #1\n", stderr: "" });
    r.write("x", "x\n");
    expect(await r.run(["snapshot", "-m", "my label"])).toEqual({ code: 0, stdout: "#2 my label\n", stderr: "" });
    expect((await r.snapshotsIn())[0]!.kind).toBe("manual");
    // An empty message is no message.
    r.write("y", "y\n");
    expect(r.undo(["snapshot", "-m", " \n"]).stdout).toBe("#3 untracked: y\n");
  });

  test("works from a subdirectory", async () => {
    const r = makeRepo();
    r.commit("one", { "sub/dir/a.c": "a\n" });
    r.write("top.txt", "t\n");
    expect(r.undo(["snapshot"], { cwd: r.path("sub/dir") }).code).toBe(0);
    expect(r.g("ls-tree", "-r", "--name-only", `${snapshotRefs(r)[0]!.tree}:worktree`).split("\n")).toEqual(["sub/dir/a.c", "top.txt"]);
  });
});

describe("list", () => {
  test("newest first: number, kind, age, branch, summary; the position marked", async () => {
    const r = history();
    const lines = r.ok("list").trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\* #3 +manual +\d+ seconds? ago +main +edited: a\.c$/);
    expect(lines[1]).toMatch(/^  #2 +manual +\d+ seconds? ago +main +branch feature created$/);
    expect(lines[2]).toMatch(/^  #1 +manual +\d+ seconds? ago +main +commit \(initial\): one$/);
    const noAge = (t: string) => t.replace(/\d+ seconds? ago +/g, "");
    expect(noAge(await r.okIn("log"))).toBe(noAge(await r.okIn("list")));
  });

  test("-n limits the count", async () => {
    const r = history();
    const lines = r.ok("list", "-n", "2").trimEnd().split("\n");
    expect(lines.map((l) => /#(\d+)/.exec(l)![1])).toEqual(["3", "2"]);
    expect((await r.snapshotsIn()).map((s) => s.number)).toEqual([3, 2, 1]);
    expect((JSON.parse(await r.okIn("list", "--json", "--max-count", "1")) as unknown[]).length).toBe(1);
  });

  test("-n shows the same rows as the whole list, the position marked, after an undo and with an unreadable snapshot further back", async () => {
    const r = history();
    // #1's message is replaced by one that is no snapshot's: only a full list decodes it.
    const bad = r.git(["hash-object", "-t", "commit", "-w", "--stdin"], { input: `tree ${snapshotRefs(r).at(-1)!.tree}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nnot a snapshot\n` }).stdout.trim();
    r.git(["update-ref", "refs/undo/snapshots/0000000001", bad]);
    await r.okIn("undo"); // #4 restores #2: the position is 2
    const noAge = (t: string) => t.replace(/\d+ seconds? ago +/g, "");
    const all = noAge(await r.okIn("list")).trimEnd().split("\n");
    expect(all).toHaveLength(4);
    expect(all[3]).toMatch(/^ +#1 +unreadable/);
    // Where the rows leave the position (#2) out, a last line says where it is.
    for (const n of [1, 2, 3]) expect(noAge(await r.okIn("list", "-n", String(n))).trimEnd().split("\n")).toEqual([...all.slice(0, n), ...(n < 3 ? ["you are at #2"] : [])]);
    expect(all.find((l) => l.startsWith("*"))).toMatch(/^\* #2 /);
    expect((JSON.parse(await r.okIn("list", "--json", "-n", "2")) as { number: number; current: boolean }[]).map((s) => [s.number, s.current])).toEqual([[4, false], [3, false]]);
  });

  test("--json has the stable field names", async () => {
    const r = history();
    const rows = JSON.parse(await r.okIn("list", "--json")) as Record<string, unknown>[];
    expect(rows).toHaveLength(3);
    const refs = snapshotRefs(r);
    for (const f of ["number", "kind", "date", "head", "summary", "restored", "from", "commit", "tree", "format"]) {
      expect(Object.keys(rows[0]!)).toContain(f);
    }
    expect(rows[0]).toMatchObject({
      number: 3,
      kind: "manual",
      head: "main",
      summary: "edited: a.c",
      restored: null,
      from: null,
      commit: refs[2]!.commit,
      tree: refs[2]!.tree,
      format: 1,
      current: true,
    });
    expect(new Date(rows[0]!.date as string).getTime()).toBe(Number(r.g("log", "-1", "--format=%ct", refs[2]!.commit)) * 1000);
  });

  test("an empty sequence", async () => {
    const r = makeRepo();
    expect(await r.okIn("list")).toContain("no snapshots");
    expect(await r.okIn("list", "--json")).toBe("[]\n");
  });

  test("--all-worktrees lists every worktree's sequence", async () => {
    const r = makeRepo();
    r.commit("one");
    await snapIn(r);
    r.git(["worktree", "add", "-q", "-b", "wtb", "../wt"]);
    const wt = join(r.dir, "..", "wt");
    await snapIn(r, [], { cwd: wt });
    r.write("b", "b\n");
    await snapIn(r);
    // Each worktree sees its own sequence by default.
    expect(r.ok("list").trimEnd().split("\n")).toHaveLength(2);
    expect(r.undo(["list"], { cwd: wt }).stdout.trimEnd().split("\n")).toHaveLength(1);
    const text = await r.okIn("list", "--all-worktrees");
    expect(text).toMatch(/^main worktree\n.*#2.*\n.*#1.*\n\nworktree wt\n.*#1.*wtb/);
    const rows = JSON.parse(await r.okIn("list", "--all-worktrees", "--json")) as { number: number; worktree: string | null }[];
    expect(rows.map((x) => [x.worktree, x.number])).toEqual([
      [null, 2],
      [null, 1],
      ["wt", 1],
    ]);
  });

  test("a snapshot of a newer format is listed as unreadable, not fatal", async () => {
    const r = history();
    addFutureSnapshot(r, 4);
    const text = await r.okIn("list");
    expect(text.split("\n")[0]).toMatch(/#4 +unreadable .*snapshot #4 .*format 2/);
    expect(text).toContain("#3");
    const rows = (await r.snapshotsIn());
    expect(rows[0]).toMatchObject({ number: 4, kind: null, format: null });
    expect(rows[0]!.unreadable).toContain("snapshot #4");
    // show refuses it in one line naming it.
    expect(oneLineError(await r.run(["show", "4"]))).toContain("snapshot #4");
    // Recording goes on after it.
    r.write("new.txt", "n\n");
    expect(await r.okIn("snapshot")).toMatch(/^#5 /);
  });
});

describe("show", () => {
  test("the trailers and what the snapshot holds", async () => {
    const r = makeRepo();
    const c = r.commit("base", { "a.c": "base\n", "b.c": "b\n" });
    r.git(["tag", "-a", "v1", "-m", "v1"]);
    r.git(["checkout", "-q", "-b", "other"]);
    r.commit("other", { "a.c": "other\n" });
    r.git(["checkout", "-q", "main"]);
    r.commit("main", { "a.c": "main\n" });
    r.write("b.c", "wip\n");
    r.git(["stash", "-q"]);
    r.git(["merge", "other"], { allowFail: true });
    r.write("b.c", "unstaged\n");
    r.write("new.txt", "untracked\n");
    await snapIn(r);
    const text = await r.okIn("show", "1");
    expect(text).toContain("snapshot #1");
    // Labelled sections in order, the trailers last.
    const labels = text.split("\n").map((l) => /^(\S[^ ]*(?: refs)?) /.exec(l)?.[1]).filter(Boolean);
    expect(labels).toEqual(["snapshot", "summary", "HEAD", "branches", "tags", "index", "files", "stash", "operation", "trailers"]);
    expect(text).toMatch(/\ntrailers {3}Undo-Format: 1\n {11}Undo-Kind: manual\n {11}Undo-Head: main\n {11}Undo-Reflog: .*\n$/);
    expect(text).toMatch(/HEAD +main \([0-9a-f]{7}\)/);
    expect(text).toMatch(/branches +main +[0-9a-f]{7} commit\n {11}other +[0-9a-f]{7} commit/);
    expect(text).toMatch(new RegExp(`tags +v1 +[0-9a-f]{7} tag \\(peels to commit ${c.slice(0, 7)}\\)`));
    expect(text).toMatch(/files +1 path unstaged, 1 path untracked\n/);
    expect(text).toMatch(/index +\d+ paths? staged, conflicts in a\.c/);
    expect(text).toMatch(/stash +1 entry/);
    expect(text).toMatch(/operation +merge in progress/);

    const j = JSON.parse(await r.okIn("show", "#1", "--json")) as Record<string, unknown>;
    expect(j).toMatchObject({
      number: 1,
      kind: "manual",
      head: "main",
      commit: snapshotRefs(r)[0]!.commit,
      tree: snapshotRefs(r)[0]!.tree,
      format: 1,
      unstaged: ["b.c"],
      untracked: ["new.txt"],
      conflicts: ["a.c"],
      inProgress: ["MERGE_HEAD"],
    });
    expect((j.stash as unknown[]).length).toBe(1);
    expect((j.refs as { name: string }[]).map((x) => x.name)).toEqual(["refs/heads/main", "refs/heads/other", "refs/stash", "refs/tags/v1"]);
  });

  test("staged paths are counted against HEAD's commit", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.write("a.c", "staged\n");
    r.write("n.c", "n\n");
    r.git(["add", "-A"]);
    await snapIn(r);
    expect(await r.okIn("show", "1")).toMatch(/index +2 paths staged\n/);
    expect((JSON.parse(await r.okIn("show", "1", "--json")) as { staged: string[] }).staged).toEqual(["a.c", "n.c"]);
  });

  test("undo.worktree=false says the worktree was not recorded", async () => {
    const r = makeRepo();
    r.commit("one");
    r.git(["config", "undo.worktree", "false"]);
    await snapIn(r);
    expect(await r.okIn("show", "1")).toContain("not recorded");
    expect((JSON.parse(await r.okIn("show", "1", "--json")) as { worktreeRecorded: boolean }).worktreeRecorded).toBe(false);
  });
});

describe("gc", () => {
  /** Snapshots #1 and #2 dated 2020, #3 now. */
  function aged(): TestRepo {
    const r = makeRepo();
    r.commit("one");
    const old = { GIT_COMMITTER_DATE: "1577880000 +0000" };
    snap(r, [], { env: old });
    r.write("a", "a\n");
    snap(r, [], { env: old });
    r.write("b", "b\n");
    snap(r);
    return r;
  }

  test("--dry-run says what would go and deletes nothing", async () => {
    const r = aged();
    expect(await r.okIn("gc", "--dry-run")).toStartWith("would delete 2 snapshots: #1, #2\n");
    expect(snapshotRefs(r)).toHaveLength(3);
  });

  test("deletes snapshots older than undo.expire (default 90 days); says how many and which", async () => {
    const r = aged();
    expect(await r.okIn("gc")).toStartWith("deleted 2 snapshots: #1, #2\n");
    expect(snapshotRefs(r).map((s) => s.ref)).toEqual(["refs/undo/snapshots/0000000003"]);
    // Nothing to do: exit 1, as the README says.
    expect(gcFirstLine(await r.run(["gc"]))).toEqual({ code: 1, stdout: "nothing to delete\n", stderr: "" });
    // Numbers go on growing.
    r.write("c", "c\n");
    expect(await r.okIn("snapshot")).toMatch(/^#4 /);
  });

  test("--expire overrides undo.expire; never the newest; never", async () => {
    const r = aged();
    r.git(["config", "undo.expire", "never"]);
    expect(gcFirstLine(await r.run(["gc"]))).toEqual({ code: 1, stdout: "nothing to delete: snapshots never expire\n", stderr: "" });
    expect(await r.okIn("gc", "--expire", "now")).toStartWith("deleted 2 snapshots: #1, #2\n");
    // Only the newest is left, and it stays even when everything has expired.
    expect(gcFirstLine(await r.run(["gc", "--expire", "now"]))).toEqual({ code: 1, stdout: "nothing to delete\n", stderr: "" });
    expect(snapshotRefs(r)).toHaveLength(1);
  });

  test("long runs of numbers are said as ranges", async () => {
    expect(numberRuns([1, 2])).toBe("#1, #2");
    expect(numberRuns([1, 2, 3, 4, 7, 9, 10, 11])).toBe("#1-#4, #7, #9-#11");
    expect(numberRuns([])).toBe("");
  });

  test("the newest is kept even when it is old", async () => {
    const r = makeRepo();
    r.commit("one");
    await snapIn(r, [], { env: { GIT_COMMITTER_DATE: "1577880000 +0000" } });
    expect(gcFirstLine(await r.run(["gc", "--expire", "1.day"]))).toEqual({ code: 1, stdout: "nothing to delete\n", stderr: "" });
    expect(snapshotRefs(r)).toHaveLength(1);
  });
});

describe("errors", () => {
  test("outside a repository", async () => {
    const base = tempDir("norepo");
    const r = makeRepo();
    const env = { GIT_CEILING_DIRECTORIES: base };
    for (const args of [["snapshot"], ["list"], ["show", "1"], ["gc"]]) {
      const line = oneLineError(await r.run(args, { cwd: base, env }), 128);
      expect(line).toContain("not a git repository");
    }
  });

  test("an unknown snapshot number", async () => {
    const r = history();
    expect(oneLineError(await r.run(["show", "9"]), 128)).toContain("no snapshot #9");
    expect(oneLineError(await r.run(["show", "9", "--json"]), 128)).toContain("#1 to #3");
  });

  test("bad arguments are usage errors (exit 129) in one line", async () => {
    const r = history();
    const cases: string[][] = [
      ["show", "abc"],
      ["show"],
      ["show", "1", "2"],
      ["list", "-n", "abc"],
      ["list", "-n", "0"],
      ["list", "--bogus"],
      ["list", "extra"],
      ["snapshot", "extra"],
      ["snapshot", "-m"],
      ["gc", "--expire", "soon"],
      ["gc", "extra"],
    ];
    for (const args of cases) {
      const line = oneLineError(await r.run(args), 129);
      expect(line.length).toBeGreaterThan(10);
    }
    expect(oneLineError(await r.run(["list", "--bogus"]))).toContain("--bogus");
    expect(oneLineError(await r.run(["gc", "--expire", "soon"]))).toContain("soon");
    // An unknown command with nothing like it: Git's one line and exit 1.
    expect(oneLineError(await r.run(["nonsense"]), 1)).toContain("'nonsense' is not a git undo command");
    expect(snapshotRefs(r)).toHaveLength(3);
  });

  test("bad configuration names the key: a warning where the command goes on, a refusal where it would act on it", async () => {
    const cases: [string, string, string[]][] = [
      ["undo.limit", "abc", ["snapshot"]],
      ["undo.worktree", "maybe", ["snapshot"]],
    ];
    for (const [key, value, args] of cases) {
      const r = makeRepo();
      r.commit("one");
      r.git(["config", key, value]);
      const res = await r.run(args);
      expect(res.code).toBe(0);
      expect(res.stderr).toBe(`warning: ${key} is '${value}', not ${key === "undo.limit" ? "a whole number of snapshots of at least 1" : "a boolean (true or false)"}; ${key === "undo.limit" ? "no snapshot is deleted for the limit until it is fixed" : "the files are recorded (the default)"}\n`);
      expect(snapshotRefs(r)).toHaveLength(1);
    }
    const r = makeRepo();
    r.commit("one");
    r.git(["config", "undo.expire", "soon"]);
    const line = oneLineError(await r.run(["gc"]), 1);
    expect(line).toContain("undo.expire is 'soon'");
  });

  test("-h and --help on every command print its usage and exit 0", async () => {
    const r = makeRepo();
    for (const cmd of ["snapshot", "list", "log", "show", "gc"]) {
      for (const flag of ["-h", "--help"]) {
        const res = await r.run([cmd, flag]);
        expect(res.code).toBe(0);
        expect(res.stderr).toBe("");
        expect(res.stdout).toStartWith(`usage: git undo ${cmd === "log" ? "list" : cmd}`);
      }
    }
    const top = await r.run(["--help"]);
    expect(top.code).toBe(0);
    for (const cmd of ["snapshot", "list", "show", "gc"]) expect(top.stdout).toContain(`    ${cmd} `);
    // Help works outside a repository too.
    expect(r.undo(["list", "-h"], { cwd: tempDir("nohelp"), env: { GIT_CEILING_DIRECTORIES: tempDir("c") } }).code).toBe(0);
  });
});
