// @pure: runs no Git, so one run of the suite covers it (test/run, GIT_UNDO_TEST_SKIP_PURE).
// The pure parts of a restore plan (core/restore/plan.ts) and its one wording
// (cli/plan-words.ts), as tables: ref moves, the stash plan, diff-tree's raw
// records, and the sentences every place that shows a plan or a blocker uses.
// No Git runs here; the end-to-end tests drive the same code through real
// repositories.
import { describe, expect, test } from "bun:test";
import type { RefLine, StashEntry } from "../../core/format/index.ts";
import { headsEqual, parseRawNumstat, refMoves, stashPlan, type Blocker, type FileChange, type RefMove } from "../../core/restore/plan.ts";
import { nameList } from "../../core/text.ts";
import { blockerText, filesPhrase, goBackCommand, refMovePhrase, refName, stashPhrase } from "../../cli/plan-words.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);
const ref = (name: string, object: string, more: Partial<RefLine> = {}): RefLine => ({ name, object, type: "commit", symrefTarget: null, peeledObject: null, peeledType: null, ...more });
const sym = (name: string, target: string): RefLine => ({ name, object: null, type: null, symrefTarget: target, peeledObject: null, peeledType: null });
const entry = (commit: string, message: string): StashEntry => ({ commit, message });
const moveSummary = (m: RefMove[]) => m.map((x) => `${x.action} ${x.name}${x.symbolic ? " (symbolic)" : ""}`);

describe("refMoves: what the transaction must do to turn now's refs into the target's", () => {
  test.each([
    ["nothing differs", [ref("refs/heads/main", A)], [ref("refs/heads/main", A)], []],
    ["a branch moves", [ref("refs/heads/main", A)], [ref("refs/heads/main", B)], ["update refs/heads/main"]],
    ["a branch the target lacks is deleted; one it has is created", [ref("refs/heads/old", A)], [ref("refs/heads/new", A)], ["create refs/heads/new", "delete refs/heads/old"]],
    ["refs/stash is the stash's business, never the transaction's", [ref("refs/stash", A)], [ref("refs/stash", B)], []],
    ["a stash that appears is not a ref move either", [], [ref("refs/stash", B)], []],
    ["the same id as another type (a tag object replaced by a commit of the same id cannot be, but the type still counts)", [ref("refs/tags/v1", A, { type: "tag" })], [ref("refs/tags/v1", A)], ["update refs/tags/v1"]],
    ["a symbolic ref is compared by its target, not by the object it reaches", [sym("refs/remotes/origin/HEAD", "refs/remotes/origin/main")], [sym("refs/remotes/origin/HEAD", "refs/remotes/origin/main")], []],
    ["a symbolic ref retargeted", [sym("refs/remotes/origin/HEAD", "refs/remotes/origin/main")], [sym("refs/remotes/origin/HEAD", "refs/remotes/origin/dev")], ["update refs/remotes/origin/HEAD (symbolic)"]],
    ["a plain ref turned symbolic", [ref("refs/heads/alias", A)], [sym("refs/heads/alias", "refs/heads/main")], ["update refs/heads/alias (symbolic)"]],
    ["a symbolic ref the target lacks", [sym("refs/heads/alias", "refs/heads/main")], [], ["delete refs/heads/alias (symbolic)"]],
  ] as [string, RefLine[], RefLine[], string[]][])("%s", (_, now, after, expected) => {
    expect(moveSummary(refMoves(now, after))).toEqual(expected);
  });

  test("each move carries both sides", () => {
    const [m] = refMoves([ref("refs/heads/main", A)], [ref("refs/heads/main", B)]);
    expect(m!.old!.object).toBe(A);
    expect(m!.new!.object).toBe(B);
  });
});

describe("stashPlan: entries brought back and entries that go", () => {
  const one = entry(A, "On main: one");
  const two = entry(B, "On main: two");
  const renamed = entry(A, "On main: renamed");
  test.each([
    ["the same list: no plan", [one, two], [one, two], null],
    ["a push since the target: it goes", [two, one], [one], { added: [], removed: [two] }],
    ["a drop since the target: it comes back", [one], [two, one], { added: [two], removed: [] }],
    ["the same entries in another order: a plan that adds and removes nothing", [one, two], [two, one], { added: [], removed: [] }],
    ["the same commit under another message is another entry", [one], [renamed], { added: [renamed], removed: [one] }],
    ["all dropped", [one, two], [], { added: [], removed: [one, two] }],
  ] as [string, StashEntry[], StashEntry[], { added: StashEntry[]; removed: StashEntry[] } | null][])("%s", (_, now, after, expected) => {
    const p = stashPlan(now, after);
    if (expected === null) expect(p).toBeNull();
    else expect({ added: p!.added, removed: p!.removed, after: p!.after }).toEqual({ ...expected, after });
  });
});

describe("parseRawNumstat: diff-tree -z --raw --numstat", () => {
  const z = (...parts: (string | Uint8Array)[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(`${p}\0`) : Buffer.concat([p, Buffer.from([0])]))));
  test("created, removed, changed; binary files have no line counts; path bytes kept exactly", () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]); // "café.txt" in Latin-1: not UTF-8
    const out = z(
      `:000000 100644 ${"0".repeat(40)} ${A} A`,
      "new file.txt",
      `:100644 000000 ${B} ${"0".repeat(40)} D`,
      "-gone",
      `:100644 100755 ${B} ${C} M`,
      latin1,
      `:100644 100644 ${A} ${B} M`,
      "img.png",
      "3\t0\t",
      "0\t2\t",
      "1\t1\t",
      "-\t-\t",
    );
    const changes = parseRawNumstat(out);
    const rows = changes.map((c: FileChange) => [c.action, c.oldMode, c.newMode, c.added, c.removed]);
    expect(rows).toEqual([
      ["created", "000000", "100644", 3, 0],
      ["removed", "100644", "000000", 0, 2],
      ["changed", "100644", "100755", 1, 1],
      ["changed", "100644", "100644", null, null],
    ]);
    expect(changes.map((c) => c.path)).toEqual(["new file.txt", "-gone", "caf\ufffd.txt", "img.png"]);
    expect(Buffer.from(changes[2]!.raw).equals(latin1)).toBe(true);
  });
  test("no output, no changes", () => {
    expect(parseRawNumstat(new Uint8Array())).toEqual([]);
  });
});

describe("small pieces", () => {
  test("headsEqual", () => {
    expect(headsEqual({ kind: "symbolic", target: "refs/heads/main" }, { kind: "symbolic", target: "refs/heads/main" })).toBe(true);
    expect(headsEqual({ kind: "symbolic", target: "refs/heads/main" }, { kind: "symbolic", target: "refs/heads/dev" })).toBe(false);
    expect(headsEqual({ kind: "detached", commit: A }, { kind: "detached", commit: A })).toBe(true);
    expect(headsEqual({ kind: "detached", commit: A }, { kind: "symbolic", target: A })).toBe(false);
  });
  test("nameList cuts after max and escapes control characters", () => {
    expect(nameList(["a", "b", "c"], 5)).toBe("a, b, c");
    expect(nameList(["a", "b", "c", "d"], 2)).toBe("a, b and 2 more");
    expect(nameList(["evil\x1b[2Jname"])).not.toContain("\x1b");
  });
});

describe("the words (cli/plan-words.ts): one wording for the report, the dry run and the picker", () => {
  test("ref names and moves", () => {
    expect(refName("refs/heads/feature")).toBe("feature");
    expect(refName("refs/tags/v1")).toBe("tag v1");
    expect(refName("refs/remotes/origin/main")).toBe("origin/main");
    expect(refName("refs/notes/commits")).toBe("refs/notes/commits");
    const [create] = refMoves([], [ref("refs/heads/feature", A)]);
    const [del] = refMoves([ref("refs/tags/v1", B, { type: "tag" })], []);
    const [update] = refMoves([ref("refs/heads/main", A)], [ref("refs/heads/main", B)]);
    const [retarget] = refMoves([sym("refs/remotes/origin/HEAD", "refs/remotes/origin/main")], [sym("refs/remotes/origin/HEAD", "refs/remotes/origin/dev")]);
    expect(refMovePhrase(create!, false)).toBe("feature created at aaaaaaa");
    expect(refMovePhrase(del!, false)).toBe("tag v1 deleted (was bbbbbbb)");
    expect(refMovePhrase(update!, false)).toBe("main aaaaaaa -> bbbbbbb");
    expect(refMovePhrase(retarget!, false)).toBe("origin/HEAD points at origin/dev (was origin/main)");
    const [alias] = refMoves([], [sym("refs/heads/alias", "refs/heads/main")]);
    expect(refMovePhrase(alias!, false)).toBe("alias created, pointing at main");
    const [plainToSym] = refMoves([ref("refs/heads/alias", A)], [sym("refs/heads/alias", "refs/heads/main")]);
    expect(refMovePhrase(plainToSym!, false)).toBe("alias points at main (was aaaaaaa)");
    expect(refMovePhrase({ ...update!, checkedOutIn: "/work/wt" }, false)).toBe("main left at aaaaaaa: checked out in worktree /work/wt (--force moves it)");
    expect(refMovePhrase({ ...update!, checkedOutIn: "/work/wt" }, true)).toBe("main aaaaaaa -> bbbbbbb");
  });

  test("files and stash", () => {
    const f = (action: FileChange["action"], added: number | null, removed: number | null) => ({ action, added, removed }) as FileChange;
    expect(filesPhrase([f("changed", 2, 1), f("removed", 0, 3), f("removed", null, null)])).toBe("1 changed, 2 removed (+2 -4 lines)");
    expect(filesPhrase([f("created", 5, 0)])).toBe("1 created (+5 -0 lines)");
    const p = stashPlan([entry(A, "x")], [entry(B, "y"), entry(C, "z")])!;
    expect(stashPhrase(p)).toBe("2 entries back, 1 removed (2 entries after)");
    expect(stashPhrase(p, true)).toBe("2 entries back, 1 removed");
    expect(stashPhrase(stashPlan([entry(A, "x"), entry(B, "y")], [entry(B, "y"), entry(A, "x")])!)).toBe("reordered (2 entries after)");
  });

  test("every blocker kind has its sentence, naming what it is about", () => {
    const blockers: Blocker[] = [
      { kind: "operation", target: 3, names: ["MERGE_HEAD"] },
      { kind: "missing-objects", target: 3, names: ["refs/heads/x"], missing: [{ what: "branch x", object: A }] },
      { kind: "untracked-file", target: 3, names: ["notes.txt"] },
      { kind: "ignored-file", target: 3, names: ["build.log", "out.o"] },
      { kind: "not-uptodate", target: 3, names: ["a.txt"], detail: "" },
      { kind: "index-lock", target: 0, names: ["/r/.git/index.lock"] },
      { kind: "head-in-other-worktree", target: 3, names: ["refs/heads/topic"], worktree: "/r-wt" },
      { kind: "revert-conflict", target: 3, names: ["a.txt", "main"] },
    ];
    const texts = blockers.map(blockerText);
    expect(texts[0]).toMatch(/^a merge is in progress; .*--force/);
    expect(texts[1]).toContain("branch x (aaaaaaa)");
    expect(texts[1]).toContain("git undo restore 3 --skip-missing");
    expect(texts[2]).toMatch(/^a file Git has not recorded stands where snapshot #3 creates one: notes\.txt/);
    expect(texts[3]).toMatch(/^ignored files stand where snapshot #3 creates some: build\.log, out\.o/);
    expect(texts[4]).toContain("a.txt");
    expect(texts[5]).toMatch(/^\/r\/\.git\/index\.lock exists/);
    expect(texts[6]).toContain("topic, which is checked out in /r-wt");
    expect(texts[7]).toBe("what #3 changed has changed again since: a.txt, main; nothing was reverted");
    expect(new Set(texts).size).toBe(blockers.length);
  });

  test("ways back as commands", () => {
    expect(goBackCommand({ command: "redo" })).toBe("git undo redo");
    expect(goBackCommand({ command: "undo" })).toBe("git undo");
    expect(goBackCommand({ command: "restore", number: 12 })).toBe("git undo restore 12");
  });
});
