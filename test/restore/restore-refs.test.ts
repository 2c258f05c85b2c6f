// Refs and HEAD (spec: Restoring step 3; clarifications: every update carries
// `git undo: restore #<T>`).
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { makeRepo } from "../helpers/repo.ts";

const lastReflog = (r: ReturnType<typeof makeRepo>, ref: string) => r.g("reflog", "show", "-1", "--format=%gs", ref);

describe("refs", () => {
  test("branches and tags moved, created and deleted come back, each with the reflog message", async () => {
    const r = makeRepo();
    const c1 = r.commit("one", { "a.txt": "1\n" });
    r.git(["branch", "moved"]);
    r.git(["branch", "deleted-later"]);
    r.git(["tag", "light"]);
    r.git(["tag", "-a", "-m", "annotated", "ann"]);
    const annObject = r.g("rev-parse", "ann");
    await r.okIn("snapshot"); // #1
    const c2 = r.commit("two", { "a.txt": "2\n" });
    r.git(["branch", "-f", "moved", c2]);
    r.git(["branch", "-D", "deleted-later"]);
    r.git(["branch", "created-later"]);
    r.git(["tag", "-d", "light", "ann"]);
    r.git(["tag", "-a", "-m", "moved", "ann", c2]);
    r.git(["tag", "new-tag"]);
    await r.okIn("snapshot"); // #2
    const out = await r.okIn("restore", "1");
    expect(out).toContain(`moved ${c2.slice(0, 7)} -> ${c1.slice(0, 7)}  one`);
    expect(out).toContain(`deleted-later created at ${c1.slice(0, 7)}`);
    expect(out).toContain(`created-later deleted (was ${c2.slice(0, 7)})`);
    expect(out).toContain("tag new-tag deleted");
    expect(r.g("rev-parse", "main", "moved", "deleted-later", "light")).toBe([c1, c1, c1, c1].join("\n"));
    expect(r.g("rev-parse", "ann")).toBe(annObject);
    expect(r.git(["rev-parse", "-q", "--verify", "refs/heads/created-later"], { allowFail: true }).code).not.toBe(0);
    expect(r.git(["rev-parse", "-q", "--verify", "refs/tags/new-tag"], { allowFail: true }).code).not.toBe(0);
    for (const ref of ["main", "moved", "deleted-later", "HEAD"]) expect(lastReflog(r, ref)).toBe("git undo: restore #1");
    // And back again.
    await r.okIn("restore", "2");
    expect(r.g("rev-parse", "moved", "created-later", "new-tag")).toBe([c2, c2, c2].join("\n"));
    expect(lastReflog(r, "moved")).toBe("git undo: restore #2");
  });

  test("a branch and a branch below its name swap places (refs/heads/a vs refs/heads/a/b)", async () => {
    const r = makeRepo();
    r.commit("one", { "f": "1\n" });
    r.git(["branch", "a"]);
    await r.okIn("snapshot");
    r.git(["branch", "-D", "a"]);
    r.git(["branch", "a/b"]);
    await r.okIn("snapshot");
    await r.okIn("restore", "1");
    expect(r.g("for-each-ref", "--format=%(refname)", "refs/heads/")).toBe("refs/heads/a\nrefs/heads/main");
    await r.okIn("restore", "2");
    expect(r.g("for-each-ref", "--format=%(refname)", "refs/heads/")).toBe("refs/heads/a/b\nrefs/heads/main");
  });

  test("a symbolic ref other than HEAD gets its target back (and goes when the target lacked it)", async () => {
    const r = makeRepo();
    r.commit("one", { "f": "1\n" });
    r.git(["branch", "dev"]);
    r.git(["update-ref", "refs/remotes/origin/main", "HEAD"]);
    r.git(["update-ref", "refs/remotes/origin/dev", "HEAD"]);
    await r.okIn("snapshot"); // #1: no origin/HEAD
    r.git(["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
    await r.okIn("snapshot"); // #2
    r.git(["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/dev"]);
    await r.okIn("snapshot"); // #3
    await r.okIn("restore", "2");
    expect(r.g("symbolic-ref", "refs/remotes/origin/HEAD")).toBe("refs/remotes/origin/main");
    await r.okIn("restore", "1");
    expect(r.git(["symbolic-ref", "-q", "refs/remotes/origin/HEAD"], { allowFail: true }).code).not.toBe(0);
    expect(existsSync(join(r.gitDir(), "refs/remotes/origin/HEAD"))).toBe(false);
    await r.okIn("restore", "3");
    expect(r.g("symbolic-ref", "refs/remotes/origin/HEAD")).toBe("refs/remotes/origin/dev");
  });
});

describe("HEAD", () => {
  test("symbolic, detached and on an unborn branch", async () => {
    const r = makeRepo();
    const c1 = r.commit("one", { "a.txt": "1\n" });
    await r.okIn("snapshot"); // #1 on main
    r.git(["checkout", "-q", "--detach"]);
    r.commit("detached work", { "a.txt": "2\n" });
    const detached = r.g("rev-parse", "HEAD");
    await r.okIn("snapshot"); // #2 detached
    r.git(["checkout", "-q", "--orphan", "fresh"]);
    r.git(["rm", "-q", "-r", "--cached", "."]);
    r.remove("a.txt");
    r.write("b.txt", "orphan file\n");
    await r.okIn("snapshot"); // #3 unborn branch fresh, b.txt untracked

    let out = await r.okIn("restore", "2");
    expect(out).toContain(`HEAD fresh -> detached at ${detached.slice(0, 7)}`);
    expect(r.g("rev-parse", "HEAD")).toBe(detached);
    expect(r.git(["symbolic-ref", "-q", "HEAD"], { allowFail: true }).code).not.toBe(0);
    expect(r.read("a.txt")).toBe("2\n");
    expect(existsSync(r.path("b.txt"))).toBe(false);
    expect(lastReflog(r, "HEAD")).toBe("git undo: restore #2");

    out = await r.okIn("restore", "1");
    expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/main");
    expect(r.g("rev-parse", "HEAD")).toBe(c1);
    expect(r.read("a.txt")).toBe("1\n");

    await r.okIn("restore", "3");
    expect(r.g("symbolic-ref", "HEAD")).toBe("refs/heads/fresh");
    expect(r.git(["rev-parse", "-q", "--verify", "HEAD"], { allowFail: true }).code).not.toBe(0);
    expect(r.read("b.txt")).toBe("orphan file\n");
    expect(existsSync(r.path("a.txt"))).toBe(false);
    expect(r.g("ls-files")).toBe("");
    // The detached commit is still reachable through the snapshots, so it can come back.
    await r.okIn("restore", "2");
    expect(r.g("rev-parse", "HEAD")).toBe(detached);
  });
});
