// Restoring refs to tag objects, trees and blobs that git gc pruned after the
// refs were deleted: the snapshot's keep entry holds them (docs/format.md,
// "Keeping what refs name"), and the restore writes the tags back byte for byte.
import { describe, expect, test } from "bun:test";
import { makeRepo, fingerprint, type TestRepo } from "../helpers/repo.ts";
import { entries, snap } from "../helpers/snap.ts";

const userRefs = (r: TestRepo) =>
  r
    .g("for-each-ref", "--format=%(refname) %(objectname) %(objecttype) %(symref)")
    .split("\n")
    .filter((l) => !l.startsWith("refs/undo/"))
    .join("\n");

const exists = (r: TestRepo, id: string) => r.git(["cat-file", "-e", id], { allowFail: true }).code === 0;

const prune = (r: TestRepo) => {
  r.git(["reflog", "expire", "--expire=now", "--all"]);
  r.git(["gc", "-q", "--prune=now"]);
};

interface Fixture {
  r: TestRepo;
  number: number;
  refsThen: string;
  /** Tag name or id -> `git cat-file tag` bytes at the time of the snapshot. */
  tags: Map<string, string>;
  outerId: string;
  innerId: string;
  blob: string;
  tree: string;
}

/** Annotated v1, a tag of a tag whose inner tag has no ref, a tag of a tree, a ref to a blob: snapshot, delete, prune. */
function prunedTags(): Fixture {
  const r = makeRepo();
  r.commit("one", { "a.c": "a\n" });
  r.git(["tag", "-a", "v1", "-m", "release one"]);
  r.git(["tag", "-a", "inner", "-m", "inner tag"]);
  r.git(["tag", "-a", "outer", "inner", "-m", "tag of a tag"]);
  const innerId = r.g("rev-parse", "inner");
  r.git(["tag", "-d", "inner"]); // only outer's chain names it now
  const blob = r.git(["hash-object", "-w", "--stdin"], { input: "a blob no commit has\n" }).stdout.trim();
  const tree = r.git(["mktree"], { input: `100644 blob ${blob}\tonly-here\n` }).stdout.trim();
  r.git(["tag", "-a", "treetag", tree, "-m", "a tree no commit has"]);
  r.git(["update-ref", "refs/blobs/b", blob]);
  const tags = new Map<string, string>();
  for (const t of ["v1", "outer", "treetag"]) tags.set(t, r.git(["cat-file", "tag", t]).stdout);
  tags.set(innerId, r.git(["cat-file", "tag", innerId]).stdout);
  const s = snap(r);
  expect(entries(r, s.tree)["keep"]).toStartWith("040000 tree ");
  const number = Number(s.ref.slice(-10));
  const refsThen = userRefs(r);
  const outerId = r.g("rev-parse", "outer");
  const ids = ["v1", "treetag"].map((t) => r.g("rev-parse", t));
  r.git(["tag", "-d", "v1", "outer", "treetag"]);
  r.git(["update-ref", "-d", "refs/blobs/b"]);
  prune(r);
  // Pruned: the tag objects; held by the keep entry: the tree and the blob.
  for (const id of [...ids, outerId, innerId]) expect(exists(r, id)).toBe(false);
  expect(exists(r, tree)).toBe(true);
  expect(exists(r, blob)).toBe(true);
  return { r, number, refsThen, tags, outerId, innerId, blob, tree };
}

describe("restoring refs to pruned tags, trees and blobs", () => {
  test("git undo restore <n> brings every tag back byte-identical, the tag of a tag's inner tag too", async () => {
    const f = prunedTags();
    const { r } = f;
    const out = await r.okIn("restore", String(f.number));
    expect(out).toContain("tag v1 created");
    expect(userRefs(r)).toBe(f.refsThen);
    for (const t of ["v1", "outer", "treetag"]) expect(r.git(["cat-file", "tag", t]).stdout).toBe(f.tags.get(t)!);
    expect(r.git(["cat-file", "tag", f.innerId]).stdout).toBe(f.tags.get(f.innerId)!);
    expect(r.g("rev-parse", "outer^{}")).toBe(r.g("rev-parse", "HEAD"));
    expect(r.g("rev-parse", "treetag^{}")).toBe(f.tree);
    expect(r.g("rev-parse", "refs/blobs/b")).toBe(f.blob);
    expect(r.git(["fsck", "--no-dangling"]).code).toBe(0);
  });

  test("a dry run says it would restore, and writes nothing", async () => {
    const f = prunedTags();
    const { r } = f;
    const before = fingerprint(r);
    const dry = await r.run(["restore", String(f.number), "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("tag v1 created");
    expect(dry.stdout).not.toContain("would refuse");
    expect(fingerprint(r)).toBe(before);
    expect(exists(r, f.outerId)).toBe(false);
  });

  test("a keep entry whose .tag blob is not the tag it is named after: refused as not a valid snapshot, nothing changes", async () => {
    const f = prunedTags();
    const { r } = f;
    const ref = `refs/undo/snapshots/${String(f.number).padStart(10, "0")}`;
    const commit = r.g("rev-parse", ref);
    const tree = r.g("rev-parse", `${ref}^{tree}`);
    const keep = r.g("rev-parse", `${tree}:keep`);
    // Swap v1's .tag blob for outer's content: a tag object, but not v1.
    const v1 = r.g("ls-tree", keep).split("\n").find((l) => l.endsWith(".tag") && f.tags.get("v1") === r.git(["cat-file", "blob", l.split(/\s/)[2]!]).stdout)!;
    const v1Name = v1.split("\t")[1]!;
    const wrong = r.git(["hash-object", "-w", "--stdin"], { input: f.tags.get("outer")! }).stdout.trim();
    const keepLines = r.g("ls-tree", keep).split("\n").map((l) => (l === v1 ? `100644 blob ${wrong}\t${v1Name}` : l));
    const badKeep = r.git(["mktree"], { input: keepLines.join("\n") + "\n" }).stdout.trim();
    const stateLines = r.g("ls-tree", tree).split("\n").map((l) => (l.endsWith("\tkeep") ? `040000 tree ${badKeep}\tkeep` : l));
    const badTree = r.git(["mktree"], { input: stateLines.join("\n") + "\n" }).stdout.trim();
    const message = r.git(["log", "-1", "--format=%B", commit]).stdout;
    const parents = r.g("log", "-1", "--format=%P", commit).split(" ").filter(Boolean);
    const badCommit = r.git(["commit-tree", badTree, ...parents.flatMap((p) => ["-p", p])], { input: message }).stdout.trim();
    r.git(["update-ref", ref, badCommit]);
    const before = fingerprint(r);
    const res = await r.run(["restore", String(f.number)]);
    expect(res.code).toBe(128);
    expect(res.stderr).toContain("is not a valid snapshot: its keep entry holds tags that are not what they are named after");
    expect(res.stderr).toContain(v1Name.slice(0, 7));
    expect(fingerprint(r)).toBe(before);
    expect(exists(r, v1Name.replace(/\.tag$/, ""))).toBe(false);
  });
});
