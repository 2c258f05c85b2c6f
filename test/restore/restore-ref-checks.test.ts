// What the real restore would fail on, found before anything moves (issue
// #27.8): refs Git would refuse to write (a ref and a folder of the same name,
// a name too long for the ref storage, a branch naming a blob, a symbolic ref
// in a loop) and conflicted index entries whose blobs are gone. --dry-run and
// the picker's preview say so and exit 1; the restore refuses with nothing
// changed, instead of failing halfway and rolling back.
import { describe, expect, test } from "bun:test";
import { attackerOf, baseOf, blob, commitSnapshot, observe, previewOf, rawTree, victim, withEntry, type Base } from "../helpers/hostile.ts";
import { makeRepo, refFormatOf, type TestRepo } from "../helpers/repo.ts";
import { expectRefusedIn } from "../helpers/restore.ts";

/** A crafted snapshot fetched into the victim, as one arrives from anyone; returns its number. */
function crafted(v: TestRepo, craft: (x: TestRepo, base: Base) => string): number {
  const x = attackerOf(v);
  const base = baseOf(x);
  const { ref } = commitSnapshot(x, base, craft(x, base));
  v.git(["fetch", "-q", x.dir, "+refs/undo/*:refs/undo/*"]);
  return Number(ref.slice(-10));
}

/** The base snapshot's tree with one more line in its refs. */
function withRefLine(x: TestRepo, base: Base, line: string): string {
  const refs = x.git(["cat-file", "blob", `${base.tree}:refs`]).stdout;
  return withEntry(x, base.tree, "refs", blob(x, refs + line));
}

const refLine = (name: string, oid: string, type: string, target = "") => `${name}\t${oid}\t${type}\t${target}\t\t\n`;

/** Dry run, preview and restore all refuse `n` with `reason`, and nothing the victim had changes. */
function expectCaught(v: TestRepo, n: number, reason: RegExp): void {
  const before = observe(v);
  const dry = v.undo(["restore", String(n), "--dry-run"]);
  expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 1, stderr: "" });
  expect(dry.stdout).toMatch(new RegExp(`would refuse: .*${reason.source}`));
  const preview = previewOf(v, n);
  expect(preview.stdout).toMatch(new RegExp(`refused: .*${reason.source}`));
  const real = v.undo(["restore", String(n)]);
  expect(real.code).toBe(1);
  expect(real.stderr).toMatch(reason);
  expect(real.stderr).not.toMatch(/rolled back/);
  expect(observe(v)).toEqual(before);
}

describe("a ref and a folder of the same name", () => {
  function repoWith(now: string, then: string): TestRepo {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n" });
    r.git(["branch", then]);
    r.ok("snapshot"); // #1: `then` exists
    r.git(["branch", "-D", then]);
    r.git(["branch", now]);
    r.ok("snapshot"); // #2: `now` instead
    return r;
  }

  for (const [now, then] of [
    ["a/b", "a"],
    ["a", "a/b"],
  ] as const) {
    test(`--ref ${then} while ${now} exists: the dry run says Git would refuse it; nothing changes`, async () => {
      const r = repoWith(now, then);
      const dry = await r.run(["restore", "1", "--ref", then, "--dry-run"]);
      expect(dry.code).toBe(1);
      expect(dry.stdout).toContain(`would refuse: Git would refuse a ref snapshot #1 has: refs/heads/${then} (Git cannot have it and refs/heads/${now} at once)`);
      await expectRefusedIn(r, ["restore", "1", "--ref", then], new RegExp(`refs/heads/${then} \\(Git cannot have it and refs/heads/${now} at once\\)`));
      // The whole snapshot deletes the other ref first: that goes through.
      await r.okIn("restore", "1");
      expect(r.g("for-each-ref", "--format=%(refname)", "refs/heads/")).toBe(`refs/heads/${then}\nrefs/heads/main`);
    });
  }

  test("a branch left for another worktree that has it checked out blocks its folder's name", async () => {
    const r = repoWith("a/b", "a");
    r.git(["worktree", "add", "-q", `${r.dir}-wt`, "a/b"]);
    const dry = await r.run(["restore", "1", "--dry-run"]);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toContain("a/b left at");
    expect(dry.stdout).toContain("refs/heads/a (Git cannot have it and refs/heads/a/b at once)");
    await expectRefusedIn(r, ["restore", "1"], /refs\/heads\/a \(Git cannot have it and refs\/heads\/a\/b at once\)/);
  });
});

describe("refs Git would refuse, in a snapshot", () => {
  test("a name too long for the ref storage", async () => {
    const v = victim();
    // About 4,000 bytes: past a reftable block, and past the files storage's paths.
    const long = `refs/heads/${Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(199, "x")).join("/")}`;
    const n = crafted(v, (x, base) => withRefLine(x, base, refLine(long, base.head, "commit")));
    expectCaught(v, n, /Git would refuse a ref snapshot #\d+ has: refs\/heads\/0x+\.\.\. \(\d+ bytes\) \(a name too long for (reftable|the files) ref storage\)/);
  });

  test("a name with one part longer than a file name can be (files storage)", async () => {
    const v = victim();
    if (refFormatOf(v) !== "files") return; // reftable takes it
    const n = crafted(v, (x, base) => withRefLine(x, base, refLine(`refs/heads/${"y".repeat(251)}`, base.head, "commit")));
    expectCaught(v, n, /refs\/heads\/y+\.\.\. \(262 bytes\) \(a name too long for the files ref storage\)/);
  });

  test("a branch naming a blob", async () => {
    const v = victim();
    const n = crafted(v, (x, base) => withRefLine(x, base, refLine("refs/heads/notes", x.g("rev-parse", `${base.head}:a.txt`), "blob")));
    expectCaught(v, n, /refs\/heads\/notes \(a branch naming a blob; Git puts only commits on branches\)/);
  });

  test("a ref and its folder both in the snapshot", async () => {
    const v = victim();
    const n = crafted(v, (x, base) => withRefLine(x, base, refLine("refs/heads/p", base.head, "commit") + refLine("refs/heads/p/q", base.head, "commit")));
    expectCaught(v, n, /refs\/heads\/p \(Git cannot have it and refs\/heads\/p\/q at once\)/);
  });

  test("symbolic refs in a loop (two refs naming each other, a ref naming itself)", async () => {
    const v = victim();
    const n = crafted(v, (x, base) =>
      withRefLine(x, base, refLine("refs/heads/l1", base.head, "commit", "refs/heads/l2") + refLine("refs/heads/l2", base.head, "commit", "refs/heads/l1") + refLine("refs/heads/me", base.head, "commit", "refs/heads/me")),
    );
    expectCaught(v, n, /Git would refuse refs snapshot #\d+ has: refs\/heads\/l1 \(a symbolic ref in a loop: refs\/heads\/l1 -> refs\/heads\/l2 -> refs\/heads\/l1\)/);
    expect(v.undo(["restore", String(n), "--dry-run"]).stdout).toMatch(/refs\/heads\/me \(a symbolic ref in a loop: refs\/heads\/me -> refs\/heads\/me\)/);
  });

  test("a loop the user made and deleted is not written back by an undo", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n" });
    r.git(["symbolic-ref", "refs/heads/l1", "refs/heads/l2"]);
    r.git(["symbolic-ref", "refs/heads/l2", "refs/heads/l1"]);
    // Only the files storage shows a recording such refs (as files); reftable lists none that resolve nowhere.
    if (refFormatOf(r) === "reftable") return;
    await r.okIn("snapshot"); // #1 records the loop
    r.git(["update-ref", "--no-deref", "-d", "refs/heads/l1"]);
    r.git(["update-ref", "--no-deref", "-d", "refs/heads/l2"]);
    await r.okIn("snapshot"); // #2
    await expectRefusedIn(r, ["undo"], /refs\/heads\/l1 \(a symbolic ref in a loop: refs\/heads\/l1 -> refs\/heads\/l2 -> refs\/heads\/l1\)/);
    expect(r.git(["fsck", "--no-progress"], { allowFail: true }).code).toBe(0);
  });
});

test("a conflicted entry whose blob is gone: refused before anything moves, not rolled back after", async () => {
  const v = victim();
  const n = crafted(v, (x, base) => {
    const present = blob(x, "conflict side\n");
    const gone = "1".repeat(present.length);
    const records = [`100644 ${present} 1\ta.txt`, `100644 ${gone} 2\ta.txt`].map((r) => `${r}\0`).join("");
    const tree = withEntry(x, base.tree, "index-unmerged", blob(x, records));
    return withEntry(x, tree, "index-blobs", rawTree(x, [{ mode: "100644", name: present, oid: present }]), "40000");
  });
  expectCaught(v, n, /the conflicted files snapshot #\d+ has in the index are gone from the repository: a\.txt \(1111111\)/);
  // What the message offers instead: everything but the index.
  v.write("notes.txt", "changed since\n");
  const rest = await v.run(["restore", String(n), "--only", "refs,head,worktree,stash"]);
  expect({ code: rest.code, stderr: rest.stderr }).toEqual({ code: 0, stderr: "" });
  expect(v.read("notes.txt")).toBe("untracked, edited\n");
});
