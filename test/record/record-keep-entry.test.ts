// The `keep` entry (docs/format.md, "Keeping what refs name"): its exact bytes
// against a tree built with plain Git (`git cat-file tag`, `git mktree`), its
// absence when nothing applies, and the cache that spares rebuilding it.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { entries, snap, snapIn } from "../helpers/snap.ts";

/** Plain Git's keep tree for what `refs` (ref names) name, or null when nothing applies. */
function oracleKeep(r: TestRepo, refs: string[]): string | null {
  const lines = new Set<string>();
  for (const ref of refs) {
    let id = r.g("rev-parse", ref);
    let type = r.g("cat-file", "-t", id);
    while (type === "tag") {
      const raw = r.git(["cat-file", "tag", id]).stdout;
      const blob = r.git(["hash-object", "-w", "--stdin"], { input: raw }).stdout.trim();
      lines.add(`100644 blob ${blob}\t${id}.tag`);
      id = /^object (\S+)$/m.exec(raw)![1]!;
      type = r.g("cat-file", "-t", id);
    }
    if (type === "tree") lines.add(`040000 tree ${id}\t${id}`);
    if (type === "blob") lines.add(`100644 blob ${id}\t${id}`);
  }
  if (lines.size === 0) return null;
  return r.git(["mktree"], { input: [...lines].map((l) => `${l}\n`).join("") }).stdout.trim();
}

const allRefs = (r: TestRepo) =>
  r
    .g("for-each-ref", "--format=%(refname)")
    .split("\n")
    .filter((n) => n && !n.startsWith("refs/undo/"));

describe("the keep entry", () => {
  test("tags, a tag of a tag of a tag, a tag of a tree, a tag of a blob, a ref to a tree and to a blob: plain Git's tree", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.git(["tag", "light"]);
    r.git(["tag", "-a", "v1", "-m", "annotated"]);
    r.git(["tag", "-a", "v1b", "v1", "-m", "tag of a tag"]);
    r.git(["tag", "-a", "v1c", "v1b", "-m", "tag of a tag of a tag"]);
    r.git(["tag", "-a", "treetag", "HEAD^{tree}", "-m", "a tree"]);
    const blob = r.git(["hash-object", "-w", "--stdin"], { input: "just a blob\n" }).stdout.trim();
    const tree2 = r.git(["mktree"], { input: `100644 blob ${blob}\tonly\n` }).stdout.trim();
    r.git(["tag", "-a", "blobtag", blob, "-m", "a blob"]);
    r.git(["update-ref", "refs/blobs/b", blob]);
    r.git(["update-ref", "refs/trees/t", tree2]);
    // A symbolic ref to a tag names the tag too; a dangling one names nothing.
    r.git(["symbolic-ref", "refs/x/totag", "refs/tags/v1c"]);
    r.git(["symbolic-ref", "refs/x/gone", "refs/heads/nothere"]);
    const s = await snapIn(r);
    const want = oracleKeep(r, allRefs(r));
    expect(want).not.toBeNull();
    expect(entries(r, s.tree)["keep"]).toBe(`040000 tree ${want}`);
    // Eight entries: the three tags of v1c's chain, treetag and blobtag; the blob and two trees.
    const listed = r.g("ls-tree", want!).split("\n");
    expect(listed).toHaveLength(8);
    expect(listed.filter((l) => l.endsWith(".tag"))).toHaveLength(5);
    expect(listed).toContain(`100644 blob ${blob}\t${blob}`);
    expect(listed).toContain(`040000 tree ${tree2}\t${tree2}`);
    expect(listed).toContain(`040000 tree ${r.g("rev-parse", "HEAD^{tree}")}\t${r.g("rev-parse", "HEAD^{tree}")}`);
    // Each .tag blob writes back the identical tag object.
    const v1 = r.g("rev-parse", "v1");
    const back = r.git(["hash-object", "-t", "tag", "--stdin"], { input: r.git(["cat-file", "blob", `${want}:${v1}.tag`]).stdout }).stdout.trim();
    expect(back).toBe(v1);
  });

  test("only commits and lightweight tags: no keep entry", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.git(["tag", "light"]);
    r.git(["branch", "side"]);
    const s = await snapIn(r);
    expect(entries(r, s.tree)["keep"]).toBeUndefined();
  });

  test("the cached keep tree is reused while the refs name the same objects, and rebuilt when a tag comes or goes", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.git(["tag", "-a", "v1", "-m", "one"]);
    const s1 = await snapIn(r);
    const cache = join(r.gitDir(), "undo", "keep-tree.json");
    expect(existsSync(cache)).toBe(true);
    const k1 = entries(r, s1.tree)["keep"];
    r.write("a.c", "edited\n");
    const s2 = await snapIn(r);
    expect(entries(r, s2.tree)["keep"]).toBe(k1!);
    expect(JSON.parse(readFileSync(cache, "utf8")).tree).toBe(s2.tree);
    r.git(["tag", "-a", "v2", "-m", "two"]);
    const s3 = await snapIn(r);
    expect(entries(r, s3.tree)["keep"]).toBe(`040000 tree ${oracleKeep(r, allRefs(r))}`);
    expect(entries(r, s3.tree)["keep"]).not.toBe(k1!);
    r.git(["tag", "-d", "v2"]);
    expect(entries(r, snap(r).tree)["keep"]).toBe(k1!);
    r.git(["tag", "-d", "v1"]);
    expect(entries(r, snap(r).tree)["keep"]).toBeUndefined();
  });

  test("a cache that names another state tree is not trusted", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.git(["tag", "-a", "v1", "-m", "one"]);
    await snapIn(r);
    const cache = join(r.gitDir(), "undo", "keep-tree.json");
    const known = JSON.parse(readFileSync(cache, "utf8")) as { key: string; keep: string; tree: string };
    // A keep tree id that is not the right one, under a tree no snapshot has.
    const wrong = r.git(["mktree"], { input: "" }).stdout.trim();
    writeFileSync(cache, JSON.stringify({ ...known, keep: wrong, tree: "0".repeat(40) }));
    r.write("a.c", "b\n");
    const s = await snapIn(r);
    expect(entries(r, s.tree)["keep"]).toBe(`040000 tree ${oracleKeep(r, allRefs(r))}`);
  });

  test("sha256 repository: the same rules", async () => {
    const r = makeRepo({ objectFormat: "sha256" });
    r.commit("one", { "a.c": "a\n" });
    r.git(["tag", "-a", "v1", "-m", "one"]);
    r.git(["tag", "-a", "v2", "v1", "-m", "two"]);
    const s = await snapIn(r);
    expect(entries(r, s.tree)["keep"]).toBe(`040000 tree ${oracleKeep(r, allRefs(r))}`);
  });
});
