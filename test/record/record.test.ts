// Recording: the snapshot commit (message, trailers, identities, parents) and
// the HEAD and refs blobs, checked against what Git reports for the same state.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { immediateSymref, makeRepo } from "../helpers/repo.ts";
import { blobText, commitMessage, emptyTree, entries, ident, parents, refLine, snap, snapIn } from "../helpers/snap.ts";

describe("a fresh repository with an unborn HEAD", () => {
  test("records HEAD symbolic, no refs, empty index and worktree, as a root commit", async () => {
    const r = makeRepo();
    const s = await snapIn(r);
    expect(s.ref).toBe("refs/undo/snapshots/0000000001");
    const e = entries(r, s.tree);
    expect(Object.keys(e).sort()).toEqual(["HEAD", "index", "refs", "worktree"]);
    expect(blobText(r, s.tree, "HEAD")).toBe("ref: refs/heads/main\n");
    expect(blobText(r, s.tree, "refs")).toBe("");
    // clarifications: an index that does not exist yet is the empty tree.
    expect(e.index).toBe(`040000 tree ${emptyTree(r)}`);
    expect(e.worktree).toBe(`040000 tree ${emptyTree(r)}`);
    expect(e.HEAD).toStartWith("100644 blob ");
    expect(e.refs).toStartWith("100644 blob ");
    expect(parents(r, s.commit)).toEqual([]);
    // No reflog on an unborn branch: no Undo-Reflog trailer.
    const msg = commitMessage(r, s.commit);
    expect(msg).toMatch(/\n\nUndo-Format: 1\nUndo-Kind: manual\nUndo-Head: main\n$/);
    expect(msg).not.toContain("Undo-Reflog");
  });

  test("untracked files of an unborn repository go into worktree only", async () => {
    const r = makeRepo();
    r.write("a.c", "a\n");
    const s = await snapIn(r);
    const e = entries(r, s.tree);
    expect(e.index).toBe(`040000 tree ${emptyTree(r)}`);
    expect(r.g("ls-tree", "-r", "--name-only", `${s.tree}:worktree`)).toBe("a.c");
  });
});

describe("the commit", () => {
  test("message bytes: summary, blank line, trailers in order, one final newline", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    const s = await snapIn(r);
    const reflog = r.g("reflog", "-1", "--format=%H %gs", "HEAD");
    expect(commitMessage(r, s.commit)).toBe(
      `commit (initial): one\n\nUndo-Format: 1\nUndo-Kind: manual\nUndo-Head: main\nUndo-Reflog: ${reflog}\n`,
    );
  });

  test("-m gives the summary; each newline and tab becomes one space", async () => {
    const r = makeRepo();
    r.commit("one");
    const s = await snapIn(r, ["-m", "  before\tthe\n\nbig   change \n"]);
    const msg = commitMessage(r, s.commit);
    expect(msg.split("\n", 1)[0]).toBe("before the  big   change");
    expect(msg.split("\n")[1]).toBe("");
    expect(s.out).toBe("#1 before the  big   change\n");
  });

  test("Undo-Reflog follows git reflog -1 --format='%H %gs' HEAD after commit, checkout, reset and amend", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "1\n" });
    const steps: (() => void)[] = [
      () => r.commit("two", { "a.c": "2\n" }),
      () => r.git(["checkout", "-q", "-b", "side"]),
      () => r.git(["reset", "-q", "--hard", "HEAD~1"]),
      () => r.git(["commit", "-q", "--amend", "-m", "one again"]),
    ];
    for (const step of steps) {
      step();
      const s = await snapIn(r);
      const want = r.g("reflog", "-1", "--format=%H %gs", "HEAD");
      expect(commitMessage(r, s.commit)).toContain(`\nUndo-Reflog: ${want}\n`);
      // The summary is the reflog message when it is new.
      expect(commitMessage(r, s.commit).split("\n", 1)[0]).toBe(want.slice(want.indexOf(" ") + 1));
    }
  });

  test("Undo-Reflog is left out on an unborn branch even when HEAD has a reflog", async () => {
    const r = makeRepo();
    r.commit("one");
    r.git(["checkout", "-q", "--orphan", "fresh"]);
    expect(r.git(["reflog", "-1", "HEAD"], { allowFail: true }).code).not.toBe(0);
    const s = await snapIn(r);
    expect(commitMessage(r, s.commit)).not.toContain("Undo-Reflog");
    expect(commitMessage(r, s.commit)).toContain("\nUndo-Head: fresh\n");
    expect(blobText(r, s.tree, "HEAD")).toBe("ref: refs/heads/fresh\n");
  });

  test("Undo-Head keeps slashes of a branch name", async () => {
    const r = makeRepo({ branch: "feature/x" });
    r.commit("one");
    expect(commitMessage(r, snap(r).commit)).toContain("\nUndo-Head: feature/x\n");
  });

  test("author is always the placeholder; committer is the configured identity", async () => {
    const r = makeRepo();
    r.commit("one");
    const s = await snapIn(r);
    expect(ident(r, s.commit, "author")).toBe("git-undo <git-undo@localhost>");
    expect(ident(r, s.commit, "committer")).toBe("Test User <test@example.com>");
  });

  test("without an identity the committer is the placeholder, never a host-name guess", async () => {
    const r = makeRepo({ identity: false });
    r.env.EMAIL = "";
    delete r.env.EMAIL;
    // Commit with an explicit environment identity: Git needs one to commit at all.
    r.git(["commit", "-q", "--allow-empty", "-m", "one"], {
      env: { GIT_AUTHOR_NAME: "A", GIT_AUTHOR_EMAIL: "a@x", GIT_COMMITTER_NAME: "A", GIT_COMMITTER_EMAIL: "a@x" },
    });
    expect(r.git(["-c", "user.useConfigOnly=true", "var", "GIT_COMMITTER_IDENT"], { allowFail: true }).code).not.toBe(0);
    const s = await snapIn(r);
    expect(ident(r, s.commit, "committer")).toBe("git-undo <git-undo@localhost>");
    expect(ident(r, s.commit, "author")).toBe("git-undo <git-undo@localhost>");
  });

  test("Git's environment overrides of the committer count as configured", async () => {
    const r = makeRepo();
    r.commit("one");
    const s = await snapIn(r, [], { env: { GIT_COMMITTER_NAME: "From Env", GIT_COMMITTER_EMAIL: "env@example.com" } });
    expect(ident(r, s.commit, "committer")).toBe("From Env <env@example.com>");
    expect(ident(r, s.commit, "author")).toBe("git-undo <git-undo@localhost>");
  });

  test("the committer follows every change of identity, although git var's answer is kept between recordings", async () => {
    const r = makeRepo();
    r.commit("one");
    r.write("a.c", "1\n");
    expect(ident(r, snap(r).commit, "committer")).toBe("Test User <test@example.com>");
    r.git(["config", "user.name", "Renamed User"]);
    r.write("a.c", "2\n");
    expect(ident(r, snap(r).commit, "committer")).toBe("Renamed User <test@example.com>");
    r.write("a.c", "3\n");
    const fromEnv = await snapIn(r, [], { env: { GIT_COMMITTER_EMAIL: "env@example.com" } });
    expect(ident(r, fromEnv.commit, "committer")).toBe("Renamed User <env@example.com>");
    r.write("a.c", "4\n");
    expect(ident(r, snap(r).commit, "committer")).toBe("Renamed User <test@example.com>");
    r.git(["config", "--unset", "user.email"]);
    r.write("a.c", "5\n");
    expect(ident(r, snap(r).commit, "committer")).toBe("git-undo <git-undo@localhost>");
    // The date is the recording's own, cached identity or not.
    r.write("a.c", "6\n");
    const dated = await snapIn(r);
    const stamp = Number(r.g("log", "-1", "--format=%ct", dated.commit));
    expect(Math.abs(stamp - Date.now() / 1000)).toBeLessThan(60);
  });

  test("no hook observes the recorder's own Git commands", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    const log = `${r.dir}/../hook-log`;
    for (const hook of ["reference-transaction", "post-index-change", "post-commit", "pre-commit"]) {
      r.write(`.git/hooks/${hook}`, `#!/bin/sh\necho ${hook} >> '${log}'\n`, 0o755);
    }
    r.write("a.c", "edited\n");
    await snapIn(r);
    expect(existsSync(log)).toBe(false);
    // The hooks do work for the user's own commands.
    r.git(["add", "a.c"]);
    expect(readFileSync(log, "utf8")).toContain("post-index-change");
  });

  test("the committer date is the time of recording", async () => {
    const r = makeRepo();
    r.commit("one");
    const before = Math.floor(Date.now() / 1000);
    const s = await snapIn(r);
    const date = Number(r.g("log", "-1", "--format=%ct", s.commit));
    expect(date).toBeGreaterThanOrEqual(before - 1);
    expect(date).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
  });
});

describe("HEAD", () => {
  test("a detached HEAD is recorded as its commit, kept as a parent, Undo-Head detached", async () => {
    const r = makeRepo();
    r.commit("one");
    r.git(["checkout", "-q", "--detach"]);
    const only = r.commit("only reachable from HEAD");
    const s = await snapIn(r);
    expect(blobText(r, s.tree, "HEAD")).toBe(`${only}\n`);
    expect(commitMessage(r, s.commit)).toContain("\nUndo-Head: detached\n");
    expect(parents(r, s.commit)).toContain(only);
    expect(blobText(r, s.tree, "refs")).toBe(refLine("refs/heads/main", r.g("rev-parse", "main"), "commit"));
  });
});

describe("the refs blob", () => {
  test("lightweight and annotated tags, a tag of a tag peeled fully, tags of a tree", async () => {
    const r = makeRepo();
    const c1 = r.commit("one", { "a.c": "a\n" });
    r.git(["tag", "light"]);
    r.git(["tag", "-a", "ann", "-m", "annotated"]);
    r.git(["tag", "-a", "ann2", "ann", "-m", "tag of a tag"]);
    r.git(["tag", "-a", "ann3", "ann2", "-m", "tag of a tag of a tag"]);
    r.git(["tag", "-a", "treetag", "HEAD^{tree}", "-m", "a tree"]);
    r.git(["tag", "lighttree", "HEAD^{tree}"]);
    const tree = r.g("rev-parse", "HEAD^{tree}");
    // The annotated tag's commit is kept even when no branch reaches it any more.
    r.git(["commit", "-q", "--amend", "-m", "one amended"]);
    const c2 = r.g("rev-parse", "HEAD");
    const tagOid = (t: string) => r.g("rev-parse", `refs/tags/${t}`);
    const want =
      refLine("refs/heads/main", c2, "commit") +
      refLine("refs/tags/ann", tagOid("ann"), "tag", "", c1, "commit") +
      refLine("refs/tags/ann2", tagOid("ann2"), "tag", "", r.g("rev-parse", "ann2^{}"), "commit") +
      refLine("refs/tags/ann3", tagOid("ann3"), "tag", "", r.g("rev-parse", "ann3^{}"), "commit") +
      refLine("refs/tags/light", c1, "commit") +
      refLine("refs/tags/lighttree", tree, "tree") +
      refLine("refs/tags/treetag", tagOid("treetag"), "tag", "", tree, "tree");
    expect(r.g("rev-parse", "ann3^{}")).toBe(c1);
    const loose = await snapIn(r);
    expect(blobText(r, loose.tree, "refs")).toBe(want);
    // Trees contribute nothing; commits once each, sorted by hex id.
    expect(parents(r, loose.commit)).toEqual([c1, c2].sort());
    // Packed refs give the same blob (packed-refs "peeled" lines peel in full).
    r.git(["pack-refs", "--all"]);
    r.write("b.c", "b\n");
    const packed = await snapIn(r);
    expect(blobText(r, packed.tree, "refs")).toBe(want);
  });

  test("symbolic refs other than HEAD: immediate target, dangling, chain; sorted by name in byte order", async () => {
    const r = makeRepo({ refFormat: "files" }); // a dangling symbolic ref is invisible with reftable (test/core/reftable.test.ts)
    const c = r.commit("one");
    r.git(["update-ref", "refs/remotes/origin/main", c]);
    r.git(["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
    r.git(["symbolic-ref", "refs/remotes/gone/HEAD", "refs/remotes/gone/main"]);
    // A chain: refs/x/a -> refs/x/b -> refs/heads/main.
    r.git(["symbolic-ref", "refs/x/b", "refs/heads/main"]);
    r.git(["symbolic-ref", "refs/x/a", "refs/x/b"]);
    r.git(["update-ref", "refs/heads/Zed", c]);
    r.git(["update-ref", "refs/heads/_low", c]);
    expect(immediateSymref(r, "refs/x/a")).toBe("refs/x/b");
    const s = await snapIn(r);
    const want =
      refLine("refs/heads/Zed", c, "commit") +
      refLine("refs/heads/_low", c, "commit") +
      refLine("refs/heads/main", c, "commit") +
      refLine("refs/remotes/gone/HEAD", "", "", "refs/remotes/gone/main") +
      refLine("refs/remotes/origin/HEAD", c, "commit", "refs/remotes/origin/main") +
      refLine("refs/remotes/origin/main", c, "commit") +
      refLine("refs/x/a", c, "commit", "refs/x/b") +
      refLine("refs/x/b", c, "commit", "refs/heads/main");
    expect(blobText(r, s.tree, "refs")).toBe(want);
    expect(parents(r, s.commit)).toEqual([c]);
  });

  test("refs/undo/ is never a line; refs/stash is; notes and other hierarchies are", async () => {
    const r = makeRepo();
    const c = r.commit("one", { "a.c": "a\n" });
    r.git(["notes", "add", "-m", "a note"]);
    await snapIn(r);
    r.write("a.c", "b\n");
    r.git(["stash", "-q"]);
    const s = await snapIn(r);
    const lines = blobText(r, s.tree, "refs").split("\n").filter(Boolean).map((l) => `${l}\n`);
    expect(lines.map((l) => l.split("\t")[0])).toEqual(["refs/heads/main", "refs/notes/commits", "refs/stash"]);
    expect(lines[2]).toBe(refLine("refs/stash", r.g("rev-parse", "refs/stash"), "commit"));
    expect(lines[0]).toBe(refLine("refs/heads/main", c, "commit"));
  });
});

describe("parents and keep commits", () => {
  test("150 branches: keep commits of at most 64 parents, exact bytes, shared between snapshots", async () => {
    const r = makeRepo();
    r.commit("base", { "a.c": "a\n" });
    // 150 distinct root commits on 150 branches, written by one fast-import.
    let stream = "";
    for (let i = 0; i < 150; i++) {
      const name = `b${String(i).padStart(3, "0")}`;
      stream += `commit refs/heads/${name}\ncommitter T <t@x> ${1600000000 + i} +0000\ndata ${name.length}\n${name}\n\n`;
    }
    r.git(["fast-import", "--quiet"], { input: stream });
    const tips = r
      .g("for-each-ref", "--format=%(objectname)", "refs/heads/")
      .split("\n")
      .filter(Boolean);
    const sorted = [...new Set(tips)].sort();
    expect(sorted).toHaveLength(151);

    const s = await snapIn(r);
    const keeps = parents(r, s.commit);
    expect(keeps).toHaveLength(3); // runs of 64, 64, 23
    expect([...keeps].sort()).toEqual(keeps);
    const runs = [sorted.slice(0, 64), sorted.slice(64, 128), sorted.slice(128)];
    const empty = emptyTree(r);
    const byRun = keeps.map((k) => {
      const raw = r.git(["cat-file", "commit", k]).stdout;
      expect(raw).toStartWith(`tree ${empty}\n`);
      expect(raw).toContain("\nauthor git-undo <git-undo@localhost> 1000000000 +0000\n");
      expect(raw).toContain("\ncommitter git-undo <git-undo@localhost> 1000000000 +0000\n");
      expect(raw).toEndWith("\n\ngit-undo keep\n");
      const ps = parents(r, k);
      expect(ps.length).toBeLessThanOrEqual(64);
      return ps;
    });
    expect(byRun.map((ps) => ps.join()).sort()).toEqual(runs.map((ps) => ps.join()).sort());

    // A second snapshot of the same commits (only the index changed) has the same keep commits.
    r.write("a.c", "changed\n");
    r.git(["add", "a.c"]);
    const s2 = await snapIn(r);
    expect(s2.tree).not.toBe(s.tree);
    expect(parents(r, s2.commit)).toEqual(keeps);
  });

  test("stash entries and a detached HEAD are kept; each commit once, sorted", async () => {
    const r = makeRepo();
    const c1 = r.commit("one", { "a.c": "1\n" });
    r.write("a.c", "2\n");
    r.git(["stash", "-q"]);
    r.write("a.c", "3\n");
    r.git(["stash", "-q"]);
    const stashes = r.g("stash", "list", "--format=%H").split("\n");
    const s = await snapIn(r);
    expect(parents(r, s.commit)).toEqual([c1, ...stashes].sort());
  });
});
