// Finding lost work by time: @{<date>} wherever a snapshot number is taken, and list --since/--until.
import { describe, expect, test } from "bun:test";
import { userState } from "../helpers/lost-work.ts";
import { fingerprint, makeRepo, type SnapshotJson, type TestRepo } from "../helpers/repo.ts";

/** Three snapshots on three days of 2020, at 10:00 UTC, with a different f.txt each; their fingerprints. */
function dated(): { r: TestRepo; prints: string[] } {
  const r = makeRepo();
  const prints: string[] = [];
  for (const day of [1, 2, 3]) {
    r.commit(`day ${day}`, { "f.txt": `day ${day}\n` });
    r.write("draft.txt", `unsaved draft of day ${day}\n`);
    const res = r.undo(["snapshot"], { env: { GIT_COMMITTER_DATE: `2020-01-0${day}T10:00:00 +0000` } });
    expect(res.code).toBe(0);
    prints.push(userState(r));
  }
  return { r, prints };
}

/** What the user sees, without git-undo's own refs (which only grow). */

const numbersOf = (stdout: string) => (JSON.parse(stdout) as SnapshotJson[]).map((s) => s.number);

describe("@{<date>}", () => {
  test("picks the newest snapshot recorded at or before the date, in show and restore", async () => {
    const { r, prints } = dated();
    const shown = (arg: string) => (JSON.parse(r.ok("show", arg, "--json")) as SnapshotJson).number;
    expect(shown("@{2020-01-02 12:00 +0000}")).toBe(2);
    expect(shown("@{2020-01-02 10:00:00 +0000}")).toBe(2); // at: the date itself counts
    expect(shown("@{2020-01-02 09:59:59 +0000}")).toBe(1);
    expect(shown("@{2020-01-05}")).toBe(3);
    // Git's relative dates: the 2020 snapshots are all long before ten minutes ago.
    expect(shown("@{10.minutes.ago}")).toBe(3);
    expect(shown("@{1577959200}")).toBe(2); // 2020-01-02 10:00 UTC, as a unix time Git reads
    expect(shown("#2")).toBe(2);

    // Restore by date puts that state back, nothing else.
    r.write("f.txt", "edited after the last snapshot\n");
    await r.okIn("snapshot");
    const res = await r.run(["restore", "@{2020-01-01 23:00 +0000}"]);
    expect(res.code).toBe(0);
    expect(userState(r)).toBe(prints[0]!);
    expect(r.read("draft.txt")).toBe("unsaved draft of day 1\n");
  });

  test("before the first snapshot it refuses, naming the first one", async () => {
    const { r } = dated();
    const before = fingerprint(r);
    for (const args of [["show", "@{2019-12-31}"], ["restore", "@{2019-12-31}"]]) {
      const res = await r.run(args);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain("no snapshot was recorded at or before 2019-12-31; the first is #1 from 2020-01-0");
    }
    expect(fingerprint(r)).toBe(before);
  });

  test("a date Git does not read is a usage error; show --against takes a date too", async () => {
    const { r } = dated();
    const bad = await r.run(["show", "@{not a date at all}"]);
    expect(bad.code).toBe(129);
    expect(bad.stderr).toContain("'not a date at all' is not a date Git understands");
    expect(r.undo(["show", "1", "-p", "--against", "@{2020-01-02 11:00 +0000}"]).code).toBe(0);
    expect(r.undo(["show", "1", "-p", "--against", "@{2019-01-01}"]).code).toBe(1);
    expect(r.undo(["show", "twelve"]).stderr).toContain("'twelve' is not a snapshot number");
    // Git's @{1} and @{-1} count back in a reflog: refused, never read as a date.
    for (const arg of ["@{1}", "@{-1}", "@{ 2 }"]) {
      const res = await r.run(["show", arg]);
      expect(res.code).toBe(129);
      expect(res.stderr).toBe(`error: '${arg}' is not a date: git undo takes a snapshot number (such as 12, from 'git undo list') or @{<date>} (such as @{yesterday}); 'git undo <N>' goes back N steps\n`);
      expect(r.undo(["restore", arg, "--dry-run"]).code).toBe(129);
    }
  });

  test("with no snapshots at all it says so", async () => {
    const r = makeRepo();
    r.commit("one", { "f.txt": "1\n" });
    const res = await r.run(["show", "@{yesterday}"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("no snapshots yet");
  });
});

describe("list --since/--until", () => {
  test("keeps the snapshots recorded in the range, with -n and --json", async () => {
    const { r } = dated();
    expect(numbersOf(await r.okIn("list", "--json", "--since", "2020-01-02 00:00 +0000"))).toEqual([3, 2]);
    expect(numbersOf(await r.okIn("list", "--json", "--until", "2020-01-02 10:00 +0000"))).toEqual([2, 1]);
    expect(numbersOf(await r.okIn("list", "--json", "--since=2020-01-01 12:00 +0000", "--until=2020-01-02 12:00 +0000"))).toEqual([2]);
    expect(numbersOf(await r.okIn("list", "--json", "--since", "2020-01-01 00:00 +0000", "-n", "1"))).toEqual([3]);
    expect(numbersOf(await r.okIn("list", "--json", "--since", "yesterday"))).toEqual([]);
    const text = await r.okIn("list", "--until", "2020-01-01 23:00 +0000");
    expect(text).toMatch(/#1 /);
    expect(text).not.toMatch(/#[23] /);
    const bad = await r.run(["list", "--since", "blah blah"]);
    expect(bad.code).toBe(129);
  });
});
