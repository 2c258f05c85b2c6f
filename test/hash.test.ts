// core/hash.ts computes object ids in-process; the recorder trusts them only to
// see that nothing changed, so they must be exactly Git's (spec: Recording step 5).
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { objectId, treeId } from "../core/hash.ts";
import type { TreeEntry } from "../core/objects.ts";
import { makeRepo, type TestRepo } from "./helpers/repo.ts";

for (const format of ["sha1", "sha256"] as const) {
  test(`blob and tree ids match hash-object and mktree (${format})`, () => {
    const r = makeRepo({ objectFormat: format });
    const blob = (content: string) => r.git(["hash-object", "-w", "--stdin"], { input: content }).stdout.trim();
    const contents = ["ref: refs/heads/main\n", "", "caf\u00e9\tline\n"];
    const ids = contents.map(blob);
    contents.forEach((c, i) => expect(objectId(format, "blob", c)).toBe(ids[i]!));
    const sub = r.git(["mktree"], { input: `100644 blob ${ids[0]}\tx\n` }).stdout.trim();
    // The state tree's names, where Git's order puts "index-blobs/" before "index-unmerged" before "index/".
    const entries: TreeEntry[] = [
      { mode: "100644", type: "blob", oid: ids[0]!, name: "HEAD" },
      { mode: "100644", type: "blob", oid: ids[1]!, name: "refs" },
      { mode: "040000", type: "tree", oid: sub, name: "index" },
      { mode: "100644", type: "blob", oid: ids[2]!, name: "index-unmerged" },
      { mode: "040000", type: "tree", oid: sub, name: "index-blobs" },
      { mode: "040000", type: "tree", oid: sub, name: "worktree" },
      { mode: "100644", type: "blob", oid: ids[1]!, name: "stash" },
    ];
    const input = entries.map((e) => `${e.mode} ${e.type} ${e.oid}\t${e.name}\n`).join("");
    expect(treeId(format, entries)).toBe(r.git(["mktree"], { input }).stdout.trim());
    expect(treeId(format, [])).toBe(r.git(["mktree"], { input: "" }).stdout.trim());
  });
}

/** The Git commands one `git undo snapshot` ran, and what it printed. */
function traced(r: TestRepo): { out: string; commands: string[] } {
  const trace = join(r.home, "spawns.txt");
  writeFileSync(trace, "");
  const res = r.undo(["snapshot"], { env: { GIT_UNDO_TRACE_SPAWNS: trace } });
  if (res.code !== 0) throw new Error(res.stderr);
  return { out: res.stdout, commands: readFileSync(trace, "utf8").split("\n").filter(Boolean).map((l) => l.split(" ")[0]!) };
}

describe("an unchanged state is recognised without writing objects (spec: Recording step 5)", () => {
  test("clean repository: no hash-object or mktree the second time", () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.write("new.txt", "untracked\n");
    const first = traced(r);
    expect(first.out).toMatch(/^#1 /);
    expect(first.commands).toContain("mktree");
    const second = traced(r);
    expect(second.out).toBe("no change since #1\n");
    expect(second.commands).not.toContain("hash-object");
    expect(second.commands).not.toContain("mktree");
  });

  test("a change after that is still recorded", () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    traced(r);
    r.write("a.c", "b\n"); // same size
    expect(traced(r).out).toMatch(/^#2 edited: a\.c/);
    r.git(["branch", "feature"]);
    expect(traced(r).out).toMatch(/^#3 branch feature created/);
  });

  test("with conflicts: index-unmerged and index-blobs are predicted too", () => {
    const r = makeRepo();
    r.commit("base", { "a.c": "base\n" });
    r.git(["checkout", "-q", "-b", "other"]);
    r.commit("other", { "a.c": "other\n" });
    r.git(["checkout", "-q", "main"]);
    r.commit("main", { "a.c": "main\n" });
    r.git(["merge", "other"], { allowFail: true });
    const first = traced(r);
    expect(first.commands).toContain("ls-files");
    const second = traced(r);
    expect(second.out).toMatch(/^no change since #\d+\n$/);
    expect(second.commands).not.toContain("mktree");
  });
});
