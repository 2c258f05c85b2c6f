// Issues #30.6 and #27.8: a configuration value git-undo cannot use stops
// nothing. Core reports it as data (core/repo.ts ConfigProblem) with the key's
// fallback in force; a reading command warns once, on one line of stderr, and
// goes on; doctor lists every one; gc, which acts on undo.expire, refuses.
// undo.settle and undo.settleMax are bounded, so a worker never sleeps for good.
import { describe, expect, test } from "bun:test";
import { DEFAULT_CONFIG, parseConfig, SETTLE_MAX_MAX_MS, SETTLE_MAX_MS } from "../../core/repo.ts";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";

// Keys as `git config --list` prints them: lowercased.
const cfg = (pairs: Record<string, string | null>) => parseConfig(new Map(Object.entries(pairs)));

function withSnapshots(config: Record<string, string>): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  r.ok("snapshot");
  r.commit("two", { "a.txt": "two\n" });
  r.ok("snapshot");
  for (const [k, v] of Object.entries(config)) r.git(["config", k, v]);
  return r;
}

const warnings = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("warning: "));

describe("core: bad values are data, with the fallback in force", () => {
  test("undo.settle is bounded to 0..10000 ms; the default is 150", async () => {
    expect(DEFAULT_CONFIG.settleMs).toBe(150);
    expect(cfg({ "undo.settle": "0" })).toMatchObject({ settleMs: 0, problems: [] });
    expect(cfg({ "undo.settle": String(SETTLE_MAX_MS) })).toMatchObject({ settleMs: 10_000, problems: [] });
    for (const bad of ["99999999999999999999", "10001", "-1", "abc", "1.5", "", "10m"]) {
      const c = cfg({ "undo.settle": bad });
      expect({ bad, settleMs: c.settleMs, problems: c.problems }).toEqual({
        bad,
        settleMs: 150,
        problems: [{ key: "undo.settle", value: bad, expected: { kind: "number", unit: "milliseconds", min: 0, max: 10_000 } }],
      });
    }
    expect(cfg({ "undo.settle": null }).problems.map((p) => p.key)).toEqual(["undo.settle"]);
  });

  test("undo.settleMax is bounded to an hour; numbers too large to hold exactly are refused everywhere", async () => {
    expect(cfg({ "undo.settlemax": String(SETTLE_MAX_MAX_MS) }).settleMaxMs).toBe(3600_000);
    expect(cfg({ "undo.settlemax": "3600001" })).toMatchObject({ settleMaxMs: DEFAULT_CONFIG.settleMaxMs, problems: [{ key: "undo.settleMax" }] });
    expect(cfg({ "undo.maxnewfilesize": "99999999999999g" })).toMatchObject({ maxNewFileSize: DEFAULT_CONFIG.maxNewFileSize, problems: [{ key: "undo.maxNewFileSize" }] });
    expect(cfg({ "undo.expire": "99999999999999999999 years" })).toMatchObject({ problems: [{ key: "undo.expire" }] });
  });

  test("a bad undo.limit deletes nothing; a bad undo.worktree records the files; every bad key is listed", async () => {
    expect(cfg({ "undo.limit": "lots" }).limit).toBe(Number.POSITIVE_INFINITY);
    expect(cfg({ "undo.worktree": "maybe" }).worktree).toBe(true);
    const c = cfg({ "undo.settle": "abc", "undo.expire": "bogus", "undo.limit": "0", "undo.worktree": "maybe" });
    expect(c.problems.map((p) => p.key).sort()).toEqual(["undo.expire", "undo.limit", "undo.settle", "undo.worktree"]);
    expect(c.expireSeconds).toBe(DEFAULT_CONFIG.expireSeconds);
  });
});

describe("the CLI", () => {
  test("undo.expire=bogus: list warns once and lists; gc refuses and deletes nothing; gc --expire goes on", async () => {
    const r = withSnapshots({ "undo.expire": "bogus" });
    const list = await r.run(["list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("#2");
    expect(warnings(list.stderr)).toEqual([
      "warning: undo.expire is 'bogus', not an age such as 90d, 2.weeks, 6.months or never; git undo gc deletes nothing until it is fixed (or is given --expire)",
    ]);
    expect(list.stderr.trimEnd().split("\n")).toHaveLength(1);
    // --json stays parseable: the warning is on stderr.
    const json = await r.run(["list", "--json"]);
    expect((JSON.parse(json.stdout) as unknown[]).length).toBe(2);

    const gc = await r.run(["gc"]);
    expect(gc.code).toBe(1);
    expect(gc.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(/^error: undo\.expire is 'bogus', .*git undo gc deletes nothing until it is fixed/)]);
    expect((await r.snapshotsIn()).map((s) => s.number)).toEqual([2, 1]);

    const given = await r.run(["gc", "--expire", "never"]);
    expect(given.stdout).toContain("nothing to delete");
    expect(warnings(given.stderr)).toHaveLength(1);
  });

  test("undo.settle=abc: doctor lists it as a problem (exit 1, not fatal); several bad values make one warning line", async () => {
    const r = withSnapshots({ "undo.settle": "abc" });
    const doctor = await r.run(["doctor"]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/problem +undo\.settle is 'abc', not a whole number of milliseconds from 0 to 10000; the worker waits 150 ms/);
    expect(warnings(doctor.stderr)).toEqual([]);

    r.git(["config", "undo.expire", "bogus"]);
    r.git(["config", "undo.settleMax", "99999999999999999999"]);
    const doctor2 = await r.run(["doctor"]);
    for (const key of ["undo.settle", "undo.expire", "undo.settleMax"]) expect(doctor2.stdout).toMatch(new RegExp(`problem +${key} is `));

    const show = await r.run(["show", "2"]);
    expect(show.code).toBe(0);
    expect(warnings(show.stderr)).toEqual(["warning: 3 configuration values git-undo cannot use (undo.expire, undo.settle, undo.settleMax); 'git undo doctor' says what applies instead"]);
  });

  test("undo.worktree=maybe and undo.limit=lots: recording goes on, files included, nothing deleted", async () => {
    const r = withSnapshots({ "undo.worktree": "maybe", "undo.limit": "lots" });
    r.write("new.txt", "new\n");
    const made = await r.run(["snapshot"]);
    expect(made.code).toBe(0);
    expect(warnings(made.stderr)).toHaveLength(1);
    expect((await r.snapshotsIn()).map((s) => s.number)).toEqual([3, 2, 1]);
    expect(r.git(["cat-file", "-t", "refs/undo/snapshots/0000000003:worktree/new.txt"]).stdout.trim()).toBe("blob");
  });
});
