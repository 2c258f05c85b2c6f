// @pure: runs no Git, so one run of the suite covers it (test/run, GIT_UNDO_TEST_SKIP_PURE).
// The format in code, without Git: message and trailers, the blobs, keep
// grouping, ref names, and the parsing of undo.* configuration and ages.
import { describe, expect, test } from "bun:test";
import { cut, listPhrase } from "../../core/describe.ts";
import { UndoError } from "../../core/errors.ts";
import { commitsToKeep, decodeHead, decodeMessage, decodeRefs, decodeStash, decodeState, decodeTrailers, decodeUnmerged, encodeHead, encodeMessage, encodeRefs, encodeStash, encodeState, foldSummary, groupsOf, headTrailer, parseTrailerLines, snapshotNumber, snapshotRef, unmergedBlobIds, type RefLine } from "../../core/format/index.ts";
import { DEFAULT_CONFIG, parseAge, parseConfig } from "../../core/repo.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);
/** A ref line; "" for a field the line leaves empty (null in RefLine). */
const ref = (name: string, object = A, type = "commit", symrefTarget = "", peeledObject = "", peeledType = ""): RefLine => ({
  name,
  object: object || null,
  type: type || null,
  symrefTarget: symrefTarget || null,
  peeledObject: peeledObject || null,
  peeledType: peeledType || null,
});

/** The message of the error `fn` throws (failing when it does not throw an UndoError). */
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(UndoError);
    return (e as Error).message;
  }
  throw new Error("expected an error");
}

describe("the commit message", () => {
  test("trailers in the clarified order, each only where it applies, one final newline", () => {
    expect(
      encodeMessage({
        summary: "git undo: restore #3",
        trailers: { format: 1, kind: "restore", head: "feature/x", restored: 3, from: 7, reflog: `${A} reset: moving to HEAD` },
      }),
    ).toBe(
      `git undo: restore #3\n\nUndo-Format: 1\nUndo-Kind: restore\nUndo-Head: feature/x\nUndo-Restored: 3\nUndo-From: 7\nUndo-Reflog: ${A} reset: moving to HEAD\n`,
    );
    expect(encodeMessage({ summary: "s", trailers: { format: 1, kind: "change", head: "detached" } })).toBe(
      "s\n\nUndo-Format: 1\nUndo-Kind: change\nUndo-Head: detached\n",
    );
  });

  test("the summary is folded to one trimmed line", () => {
    expect(foldSummary("  a\nb\tc\r\n\n d  ")).toBe("a b c   d");
    const m = encodeMessage({ summary: "one\ntwo", trailers: { format: 1, kind: "manual", head: "main" } });
    expect(m.split("\n").slice(0, 3)).toEqual(["one two", "", "Undo-Format: 1"]);
  });

  test("decode reads back what encode wrote", () => {
    const message = { summary: "commit: x", trailers: { format: 1, kind: "restore" as const, head: "main", restored: 2, from: 5, reflog: `${B} commit: x` } };
    expect(decodeMessage(encodeMessage(message), "snapshot #9")).toEqual(message);
    const plain = { summary: "staged: a.c", trailers: { format: 1, kind: "change" as const, head: "detached" } };
    expect(decodeMessage(encodeMessage(plain), "snapshot #1")).toEqual(plain);
  });

  test("a format above 1 is refused with an error naming the snapshot", () => {
    const msg = errorOf(() => decodeMessage("s\n\nUndo-Format: 2\nUndo-Kind: change\nUndo-Head: main\n", "snapshot #12"));
    expect(msg).toContain("snapshot #12");
    expect(msg).toContain("format 2");
  });

  test("messages that are not snapshots, unknown kinds, a restore without Undo-Restored, bad numbers", () => {
    expect(errorOf(() => decodeMessage("just a commit\n", "snapshot #1"))).toContain("snapshot #1");
    expect(errorOf(() => decodeMessage("s\n\nUndo-Format: 1\nUndo-Kind: other\nUndo-Head: main\n", "snapshot #2"))).toContain("snapshot #2");
    expect(errorOf(() => decodeMessage("s\n\nUndo-Format: 1\nUndo-Kind: restore\nUndo-Head: main\n", "snapshot #3"))).toContain("Undo-Restored");
    expect(errorOf(() => decodeTrailers(parseTrailerLines("Undo-Format: 1\nUndo-Kind: restore\nUndo-Restored: x"), "snapshot #4"))).toContain(
      "snapshot #4",
    );
  });

  test("Undo-Head is the branch without refs/heads/, or detached", () => {
    expect(headTrailer({ kind: "symbolic", target: "refs/heads/feature/x" })).toBe("feature/x");
    expect(headTrailer({ kind: "detached", commit: A })).toBe("detached");
  });
});

describe("the blobs", () => {
  test("HEAD", () => {
    expect(encodeHead({ kind: "symbolic", target: "refs/heads/main" })).toBe("ref: refs/heads/main\n");
    expect(encodeHead({ kind: "detached", commit: A })).toBe(`${A}\n`);
    expect(decodeHead("ref: refs/heads/x\n")).toEqual({ kind: "symbolic", target: "refs/heads/x" });
    expect(decodeHead(`${B}\n`)).toEqual({ kind: "detached", commit: B });
  });

  test("refs: six tab-separated fields, empty where they do not apply, sorted in byte order", () => {
    const refs = [
      ref("refs/tags/v1", B, "tag", "", A, "commit"),
      ref("refs/heads/\u{1F600}"),
      ref("refs/heads/\uFFFD"),
      ref("refs/heads/main"),
      ref("refs/heads/Main"),
      ref("refs/remotes/origin/HEAD", "", "", "refs/remotes/origin/gone"),
    ];
    const blob = encodeRefs(refs);
    expect(blob.split("\n").map((l) => l.split("\t")[0])).toEqual([
      "refs/heads/Main",
      "refs/heads/main",
      // UTF-8 bytes EF BF BD sort before F0 9F 98 80, unlike UTF-16 code units.
      "refs/heads/\uFFFD",
      "refs/heads/\u{1F600}",
      "refs/remotes/origin/HEAD",
      "refs/tags/v1",
      "",
    ]);
    expect(blob).toContain(`refs/remotes/origin/HEAD\t\t\trefs/remotes/origin/gone\t\t\n`);
    expect(blob).toContain(`refs/tags/v1\t${B}\ttag\t\t${A}\tcommit\n`);
    expect(decodeRefs(blob)).toEqual([...refs].sort((x, y) => Buffer.compare(Buffer.from(x.name), Buffer.from(y.name))));
  });

  test("stash: newest first as given, tab between commit and message", () => {
    const stash = [
      { commit: A, message: "On main: second" },
      { commit: B, message: "WIP on main: 1234567 one" },
    ];
    expect(encodeStash(stash)).toBe(`${A}\tOn main: second\n${B}\tWIP on main: 1234567 one\n`);
    expect(decodeStash(encodeStash(stash))).toEqual(stash);
  });

  test("state: the spec's order whatever the input order", () => {
    expect(encodeState(["sequencer", "MERGE_HEAD", "rebase-merge", "BISECT_LOG"])).toBe("rebase-merge\nMERGE_HEAD\nBISECT_LOG\nsequencer\n");
    expect(encodeState([])).toBe("");
    expect(decodeState("CHERRY_PICK_HEAD\nrebase-apply\n")).toEqual(["rebase-apply", "CHERRY_PICK_HEAD"]);
  });

  test("index-unmerged: raw paths (tabs and newlines included); index-blobs ids unique, sorted, no gitlinks", () => {
    const enc = new TextEncoder();
    const raw = enc.encode(
      `100644 ${B} 1\ta\tb\nc\x00100644 ${A} 2\ta\tb\nc\x00100755 ${B} 3\ta\tb\nc\x00160000 ${C} 2\tsub\x00`,
    );
    const entries = decodeUnmerged(raw);
    expect(entries.map((e) => [e.mode, e.object, e.stage, new TextDecoder().decode(e.path)])).toEqual([
      ["100644", B, 1, "a\tb\nc"],
      ["100644", A, 2, "a\tb\nc"],
      ["100755", B, 3, "a\tb\nc"],
      ["160000", C, 2, "sub"],
    ]);
    expect(unmergedBlobIds(entries)).toEqual([A, B]);
  });
});

describe("keep commits", () => {
  test("unique commits of refs, peeled tags, the stash and a detached HEAD, sorted; trees and blobs excluded", () => {
    const T = "d".repeat(40);
    const refs = [
      ref("refs/heads/main", C),
      ref("refs/heads/dup", C),
      ref("refs/tags/ann", T, "tag", "", B, "commit"),
      ref("refs/tags/tree", T, "tag", "", "e".repeat(40), "tree"),
      ref("refs/tags/blob", "f".repeat(40), "blob"),
      ref("refs/remotes/origin/HEAD", "", "", "refs/remotes/origin/gone"),
    ];
    const kept = commitsToKeep({ refs, stash: [{ commit: A, message: "m" }], head: { kind: "detached", commit: "0".repeat(40) } });
    expect(kept).toEqual(["0".repeat(40), A, B, C]);
    expect(commitsToKeep({ refs: [], stash: [], head: { kind: "symbolic", target: "refs/heads/main" } })).toEqual([]);
  });

  test("grouping: runs of 64, the last shorter", () => {
    const ids = Array.from({ length: 150 }, (_, i) => i.toString(16).padStart(40, "0"));
    expect(groupsOf(ids).map((g) => g.length)).toEqual([64, 64, 22]);
    expect(groupsOf(ids).flat()).toEqual(ids);
    expect(groupsOf(ids.slice(0, 64))).toHaveLength(1);
    expect(groupsOf([])).toEqual([]);
  });
});

describe("snapshot ref names", () => {
  test("ten zero-padded digits under the worktree's prefix", () => {
    expect(snapshotRef("refs/undo/snapshots/", 7)).toBe("refs/undo/snapshots/0000000007");
    expect(snapshotRef("refs/undo/worktrees/wt/snapshots/", 1234567890)).toBe("refs/undo/worktrees/wt/snapshots/1234567890");
    expect(snapshotNumber("refs/undo/snapshots/", "refs/undo/snapshots/0000000042")).toBe(42);
    expect(snapshotNumber("refs/undo/snapshots/", "refs/undo/snapshots/x")).toBeNull();
    expect(snapshotNumber("refs/undo/snapshots/", "refs/undo/worktrees/w/snapshots/0000000001")).toBeNull();
  });
});

describe("configuration", () => {
  const cfg = (pairs: Record<string, string | null>) => parseConfig(new Map(Object.entries(pairs)));

  test("defaults", () => {
    expect(cfg({})).toEqual(DEFAULT_CONFIG);
    expect(DEFAULT_CONFIG).toMatchObject({ worktree: true, limit: 1000, expireSeconds: 90 * 86400, settleMs: 150 });
  });

  test("Git's boolean and integer forms", () => {
    expect(cfg({ "undo.worktree": "false" }).worktree).toBe(false);
    expect(cfg({ "undo.worktree": "Off" }).worktree).toBe(false);
    expect(cfg({ "undo.worktree": null }).worktree).toBe(true);
    expect(cfg({ "undo.worktree": "yes" }).worktree).toBe(true);
    expect(cfg({ "undo.limit": "20" }).limit).toBe(20);
    expect(cfg({ "undo.limit": "2k" }).limit).toBe(2048);
  });

  test("a bad value is a problem naming the key, never an error", () => {
    const keys = (pairs: Record<string, string | null>) => cfg(pairs).problems.map((p) => p.key);
    expect(keys({ "undo.limit": "abc" })).toEqual(["undo.limit"]);
    expect(keys({ "undo.limit": "0" })).toEqual(["undo.limit"]);
    expect(keys({ "undo.worktree": "maybe" })).toEqual(["undo.worktree"]);
    expect(keys({ "undo.expire": "soon" })).toEqual(["undo.expire"]);
    expect(keys({ "undo.settle": "-1" })).toEqual(["undo.settle"]);
  });

  test("ages in Git's forms", () => {
    const day = 86400;
    expect(parseAge("k", "90d")).toBe(90 * day);
    expect(parseAge("k", "2.weeks")).toBe(14 * day);
    expect(parseAge("k", "2.weeks.ago")).toBe(14 * day);
    expect(parseAge("k", "3 months ago")).toBe(90 * day);
    expect(parseAge("k", "1.year")).toBe(365 * day);
    expect(parseAge("k", "12.hours")).toBe(12 * 3600);
    expect(parseAge("k", "30.minutes")).toBe(1800);
    expect(parseAge("k", "never")).toBeNull();
    expect(parseAge("k", "false")).toBeNull();
    expect(parseAge("k", "now")).toBe(0);
    expect(parseAge("k", "all")).toBe(0);
    expect(errorOf(() => parseAge("--expire", "soon"))).toContain("--expire");
    expect(errorOf(() => parseAge("undo.expire", "90 parsecs"))).toContain("undo.expire");
  });
});

describe("summary helpers", () => {
  test("cut marks the cut and respects the width", () => {
    expect(cut("short")).toBe("short");
    const long = cut("x".repeat(100));
    expect(long).toHaveLength(72);
    expect(long).toEndWith("...");
  });

  test("listPhrase names as many as fit, then 'and N more'", () => {
    expect(listPhrase("edited", ["a.c", "b.c"])).toBe("edited: a.c, b.c");
    const many = listPhrase("edited", Array.from({ length: 30 }, (_, i) => `file-number-${i}.c`));
    expect(many.length).toBeLessThanOrEqual(72);
    expect(many).toMatch(/^edited: file-number-0\.c, .* and \d+ more$/);
  });
});
