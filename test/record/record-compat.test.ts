// Byte compatibility: a snapshot rebuilt from plain Git commands, following the
// spec and the clarifications rule by rule, must have the same tree and the
// same commit id as the one git-undo recorded. Only the summary line (which
// is descriptive) and the dates are taken from the recorded commit.
import { describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { immediateSymref, makeRepo, tempDir, type TestRepo } from "../helpers/repo.ts";
import { commitText, snapIn } from "../helpers/snap.ts";

const MARKERS = ["rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_LOG", "sequencer"];

type Run = (args: string[], opts?: { input?: string; env?: Record<string, string>; allowFail?: boolean }) => { code: number; stdout: string };

/** Plain-Git reconstruction of the state tree (no conflicts) seen from `cwd`. */
function oracleTree(r: TestRepo, cwd: string, dangling: string[] = []): { tree: string; keep: string[]; head: string } {
  const git: Run = (args, o = {}) => r.git(args, { cwd, ...o });
  const line = (...args: string[]) => git(args).stdout.replace(/\n$/, "");
  const gitDir = line("rev-parse", "--absolute-git-dir");
  // HEAD as its file would say it (with reftable that file is a placeholder).
  const headTarget = immediateSymref(r, "HEAD", cwd);
  const headFile = headTarget ? `ref: ${headTarget}` : line("rev-parse", "HEAD");
  const blob = (content: string) => git(["hash-object", "-w", "--stdin"], { input: content }).stdout.trim();

  // spec: The state tree, refs; clarifications: The refs blob.
  const names = line("for-each-ref", "--format=%(refname)")
    .split("\n")
    .filter((n) => n && !n.startsWith("refs/undo/"));
  const all = [...new Set([...names, ...dangling])].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const keep = new Set<string>();
  // clarifications: the keep entry (tags met peeling, trees and blobs named), as mktree input lines.
  const kept = new Set<string>();
  const keepObject = (start: string) => {
    let id = start;
    let type = line("cat-file", "-t", id);
    while (type === "tag") {
      const raw = git(["cat-file", "tag", id]).stdout;
      kept.add(`100644 blob ${blob(raw)}\t${id}.tag`);
      id = /^object (\S+)$/m.exec(raw)![1]!;
      type = line("cat-file", "-t", id);
    }
    if (type === "tree") kept.add(`040000 tree ${id}\t${id}`);
    else if (type === "blob") kept.add(`100644 blob ${id}\t${id}`);
  };
  const refLines = all.map((name) => {
    // `symbolic-ref --no-recurse` on Git 2.40+, the ref's file before (see the helper).
    const symref = immediateSymref(r, name, cwd);
    const v = git(["rev-parse", "-q", "--verify", name], { allowFail: true });
    const object = v.code === 0 ? v.stdout.trim() : "";
    const type = object ? line("cat-file", "-t", object) : "";
    let peeled = "";
    let peeledType = "";
    if (type === "tag") {
      peeled = line("rev-parse", `${object}^{}`);
      peeledType = line("cat-file", "-t", peeled);
    }
    if (object) keepObject(object);
    if (type === "commit") keep.add(object);
    else if (peeledType === "commit") keep.add(peeled);
    return `${name}\t${object}\t${type}\t${symref}\t${peeled}\t${peeledType}\n`;
  });

  const entries: string[] = [];
  entries.push(`100644 blob ${blob(headFile.startsWith("ref: ") ? `${headFile}\n` : `${headFile}\n`)}\tHEAD`);
  entries.push(`100644 blob ${blob(refLines.join(""))}\trefs`);
  const stash = git(["stash", "list", "--format=%H%x09%gs"]).stdout;
  if (stash) {
    entries.push(`100644 blob ${blob(stash)}\tstash`);
    for (const l of stash.split("\n").filter(Boolean)) keep.add(l.split("\t")[0]!);
  }
  const markers = MARKERS.filter((m) => existsSync(join(gitDir, m)));
  if (markers.length) entries.push(`100644 blob ${blob(markers.map((m) => `${m}\n`).join(""))}\tstate`);
  const scratch = tempDir("oracle");
  const idx = join(scratch, "index");
  const real = line("rev-parse", "--git-path", "index");
  const realPath = real.startsWith("/") ? real : join(cwd, real);
  if (existsSync(realPath)) copyFileSync(realPath, idx);
  const env = { GIT_INDEX_FILE: idx };
  entries.push(`040000 tree ${git(["write-tree"], { env }).stdout.trim()}\tindex`);
  git(["add", "-A"], { env });
  entries.push(`040000 tree ${git(["write-tree"], { env }).stdout.trim()}\tworktree`);
  if (kept.size) entries.push(`040000 tree ${git(["mktree"], { input: [...kept].map((e) => `${e}\n`).join("") }).stdout.trim()}\tkeep`);
  if (!headFile.startsWith("ref: ")) keep.add(headFile);
  const tree = git(["mktree"], { input: entries.map((e) => `${e}\n`).join("") }).stdout.trim();
  const head = headFile.startsWith("ref: refs/heads/") ? headFile.slice(16) : headFile.startsWith("ref: ") ? headFile.slice(5) : "detached";
  return { tree, keep: [...keep].sort(), head };
}

/** The snapshot commit rebuilt from the oracle: same id expected. */
function expectCompatible(r: TestRepo, s: { commit: string; tree: string }, cwd = r.dir, dangling: string[] = []): void {
  const o = oracleTree(r, cwd, dangling);
  expect(s.tree).toBe(o.tree);
  const raw = commitText(r, s.commit);
  const header = raw.slice(0, raw.indexOf("\n\n"));
  const summary = raw.slice(raw.indexOf("\n\n") + 2).split("\n", 1)[0]!;
  const date = (field: string) => /^\S+ .* <.*> (\d+ [+-]\d{4})$/m.exec(header.split("\n").find((l) => l.startsWith(`${field} `))!)![1]!;
  // clarifications: Undo-Reflog is `git reflog -1 --format='%H %gs' HEAD`, absent when it fails or prints nothing.
  const reflog = r.git(["reflog", "-1", "--format=%H %gs", "HEAD"], { cwd, allowFail: true });
  const trailers = ["Undo-Format: 1", "Undo-Kind: manual", `Undo-Head: ${o.head}`];
  if (reflog.code === 0 && reflog.stdout !== "") trailers.push(`Undo-Reflog: ${reflog.stdout.replace(/\n$/, "")}`);
  const message = `${summary}\n\n${trailers.join("\n")}\n`;
  const ident = r.git(["-c", "user.useConfigOnly=true", "var", "GIT_COMMITTER_IDENT"], { cwd, allowFail: true });
  const m = /^(.*) <(.*)> \d+ [+-]\d{4}$/.exec(ident.stdout.trim());
  const args = ["-c", "i18n.commitEncoding=UTF-8", "commit-tree", o.tree];
  for (const p of o.keep) args.push("-p", p);
  const expected = r.git(args, {
    cwd,
    input: message,
    env: {
      GIT_AUTHOR_NAME: "git-undo",
      GIT_AUTHOR_EMAIL: "git-undo@localhost",
      GIT_AUTHOR_DATE: date("author"),
      GIT_COMMITTER_NAME: m ? m[1]! : "git-undo",
      GIT_COMMITTER_EMAIL: m ? m[2]! : "git-undo@localhost",
      GIT_COMMITTER_DATE: date("committer"),
    },
  }).stdout.trim();
  expect(raw).toBe(commitText(r, expected));
  expect(s.commit).toBe(expected);
}

describe("refs blob and parents against plain Git", () => {
  test("tags, a symbolic ref to a tag of a tag, chains, dangling, a blob, a tree, packed with peeled lines", async () => {
    // packed-refs and dangling symbolic refs belong to the files storage (test/core/reftable.test.ts has the other).
    const r = makeRepo({ refFormat: "files" });
    const c1 = r.commit("one", { "a.c": "a\n" });
    r.git(["tag", "light"]);
    r.git(["tag", "-a", "ann", "-m", "annotated"]);
    r.git(["tag", "-a", "ann2", "ann", "-m", "tag of a tag"]);
    r.git(["tag", "-a", "treetag", "HEAD^{tree}", "-m", "a tree"]);
    const blobId = r.git(["hash-object", "-w", "--stdin"], { input: "just a blob\n" }).stdout.trim();
    r.git(["update-ref", "refs/blobs/b", blobId]);
    r.git(["update-ref", "refs/trees/t", r.g("rev-parse", "HEAD^{tree}")]);
    // A symbolic ref whose target is a tag of a tag: object is the outer tag, peeled in full.
    r.git(["symbolic-ref", "refs/x/totag", "refs/tags/ann2"]);
    r.git(["symbolic-ref", "refs/x/chain", "refs/x/totag"]);
    r.git(["symbolic-ref", "refs/x/gone", "refs/heads/nothere"]);
    r.git(["update-ref", "refs/worktree/mine", c1]);
    r.commit("two", { "a.c": "b\n" });
    r.git(["pack-refs", "--all"]);
    expect(readFileSync(join(r.gitDir(), "packed-refs"), "utf8")).toMatch(/\n\^[0-9a-f]{40}\n/);
    const s = await snapIn(r);
    const refs = r.git(["cat-file", "blob", `${s.tree}:refs`]).stdout;
    expect(refs).toContain(`refs/x/chain\t${r.g("rev-parse", "ann2")}\ttag\trefs/x/totag\t${c1}\tcommit\n`);
    expect(refs).toContain(`refs/x/gone\t\t\trefs/heads/nothere\t\t\n`);
    expect(refs).toContain(`refs/blobs/b\t${blobId}\tblob\t\t\t\n`);
    expectCompatible(r, s, r.dir, ["refs/x/gone"]);
  });

  test("stash after git stash drop stash@{1}: the rest, newest first, with their %gs", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "0\n" });
    for (const n of [1, 2, 3]) {
      r.write("a.c", `${n}\n`);
      r.git(["stash", "push", "-q", "-m", `entry ${n}`]);
    }
    r.git(["stash", "drop", "-q", "stash@{1}"]);
    const s = await snapIn(r);
    const listed = r.git(["stash", "list", "--format=%H%x09%gs"]).stdout;
    expect(listed.split("\n").filter(Boolean)).toHaveLength(2);
    expect(r.git(["cat-file", "blob", `${s.tree}:stash`]).stdout).toBe(listed);
    expectCompatible(r, s);
  });

  test("a linked worktree: its refs/worktree/ and refs/bisect/ (symbolic and dangling too), not the main one's", async () => {
    const r = makeRepo({ refFormat: "files" }); // a dangling symbolic ref is invisible with reftable
    const c1 = r.commit("one", { "a.c": "a\n" });
    r.commit("two", { "a.c": "b\n" });
    r.git(["update-ref", "refs/worktree/main-only", c1]);
    const wt = join(r.dir, "..", "wt");
    r.git(["worktree", "add", "-q", "-b", "wtb", wt]);
    r.git(["update-ref", "refs/worktree/here", c1], { cwd: wt });
    r.git(["symbolic-ref", "refs/worktree/sym", "refs/heads/main"], { cwd: wt });
    r.git(["symbolic-ref", "refs/worktree/dangle", "refs/heads/nothere"], { cwd: wt });
    r.git(["bisect", "start", "HEAD", c1], { cwd: wt });
    const s = await snapIn(r, [], { cwd: wt });
    expect(s.ref).toStartWith("refs/undo/worktrees/wt/snapshots/");
    const refs = r.git(["cat-file", "blob", `${s.tree}:refs`]).stdout;
    expect(refs).toContain("refs/bisect/bad\t");
    expect(refs).toContain("refs/worktree/here\t");
    expect(refs).toContain(`refs/worktree/sym\t${r.g("rev-parse", "main")}\tcommit\trefs/heads/main\t\t\n`);
    expect(refs).toContain("refs/worktree/dangle\t\t\trefs/heads/nothere\t\t\n");
    expect(refs).not.toContain("refs/worktree/main-only");
    expectCompatible(r, s, wt, ["refs/worktree/dangle"]);
    const m = await snapIn(r);
    const mainRefs = r.git(["cat-file", "blob", `${m.tree}:refs`]).stdout;
    expect(mainRefs).toContain("refs/worktree/main-only\t");
    expect(mainRefs).not.toContain("refs/bisect/");
    expect(mainRefs).not.toContain("refs/worktree/here");
    expectCompatible(r, m);
  });
});

describe("Undo-Reflog against git reflog -1 --format='%H %gs' HEAD", () => {
  test("newest entry written while HEAD was detached, and the checkout that left it", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.git(["checkout", "-q", "--detach"]);
    r.commit("detached work", { "a.c": "d\n" });
    expectCompatible(r, await snapIn(r));
    r.git(["checkout", "-q", "main"]);
    expectCompatible(r, await snapIn(r));
  });

  test("a newest entry with a null new id (as deleting HEAD's branch writes) is skipped, as Git skips it", async () => {
    const r = makeRepo({ refFormat: "files" }); // writes logs/HEAD by hand
    const c = r.commit("one", { "a.c": "a\n" });
    r.git(["checkout", "-q", "-b", "side"]);
    r.git(["checkout", "-q", "main"]);
    // `git update-ref -d` of HEAD's branch appends such a line; HEAD here still resolves.
    appendFileSync(join(r.gitDir(), "logs", "HEAD"), `${c} ${"0".repeat(40)} T <t@e> 1000000000 +0000\n`);
    const want = r.g("reflog", "-1", "--format=%H %gs", "HEAD");
    expect(want).toBe(`${c} checkout: moving from side to main`);
    const s = await snapIn(r);
    expect(commitText(r, s.commit)).toContain(`\nUndo-Reflog: ${want}\n`);
    expectCompatible(r, s);
  });

  test("HEAD's branch deleted: logs/HEAD exists, the command fails, no trailer", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.git(["update-ref", "-d", "refs/heads/main"]);
    expect(r.git(["reflog", "-1", "HEAD"], { allowFail: true }).code).not.toBe(0);
    const s = await snapIn(r);
    expect(commitText(r, s.commit)).not.toContain("Undo-Reflog");
    expectCompatible(r, s);
  });

  test("every entry of logs/HEAD null: Git prints nothing, no trailer", async () => {
    const r = makeRepo({ refFormat: "files" }); // writes logs/HEAD by hand
    const c = r.commit("one", { "a.c": "a\n" });
    const z = "0".repeat(40);
    writeFileSync(join(r.gitDir(), "logs", "HEAD"), `${c} ${z} T <t@e> 1000000000 +0000\tgone\n`);
    expect(r.git(["reflog", "-1", "--format=%H %gs", "HEAD"]).stdout).toBe("");
    const s = await snapIn(r);
    expect(commitText(r, s.commit)).not.toContain("Undo-Reflog");
    expectCompatible(r, s);
  });
});

describe("the message", () => {
  test("a commit subject with trailing whitespace and CRLF: one clean summary line, trailer as Git prints it", async () => {
    const r = makeRepo();
    r.write("a.c", "a\n");
    r.git(["add", "a.c"]);
    r.git(["commit", "-q", "--cleanup=verbatim", "-m", "fix the parser \t\r\n\r\nbody line\r\n"]);
    const s = await snapIn(r);
    const msg = commitText(r, s.commit).split("\n\n").slice(1).join("\n\n");
    const summary = msg.split("\n", 1)[0]!;
    expect(summary).not.toMatch(/[\r\t]|\s$/);
    expect(msg).toEndWith("\n");
    expect(msg).not.toEndWith("\n\n");
    expectCompatible(r, s);
  });

  test("-m with CRLF and trailing blanks is folded to one trimmed line", async () => {
    const r = makeRepo();
    r.commit("one");
    const s = await snapIn(r, ["-m", "first\r\nsecond \t\r\n"]);
    const raw = commitText(r, s.commit);
    expect(raw.slice(raw.indexOf("\n\n") + 2).split("\n").slice(0, 2)).toEqual(["first second", ""]);
    expectCompatible(r, s);
  });

  test("i18n.commitEncoding does not add an encoding header to snapshots or keep commits", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    r.git(["config", "i18n.commitEncoding", "ISO-8859-1"]);
    const base = r.g("rev-parse", "HEAD");
    const stream = Array.from({ length: 70 }, (_, i) => `commit refs/heads/b${String(i).padStart(3, "0")}\ncommitter T <t@e> ${1000000000 + i} +0000\ndata 2\nb\nfrom ${base}\n\n`).join("");
    r.git(["fast-import", "--quiet"], { input: stream });
    const s = await snapIn(r);
    expect(commitText(r, s.commit)).not.toMatch(/^encoding /m);
    const keeps = commitText(r, s.commit).split("\n").filter((l) => l.startsWith("parent ")).map((l) => l.slice(7));
    expect(keeps).toHaveLength(2);
    for (const k of keeps) expect(commitText(r, k)).toStartWith(`tree ${r.g("hash-object", "-t", "tree", "/dev/null")}\n`);
    for (const k of keeps) expect(commitText(r, k)).not.toMatch(/^encoding /m);
  });
});

describe("a tree's id worked out without Git (core/git-data/objects.ts treeId)", () => {
  for (const objectFormat of ["sha1", "sha256"] as const) {
    test(`the id mktree gives the same entries, ${objectFormat}: a tree's name sorts as if it ended in a slash`, async () => {
      const { treeId } = await import("../../core/git-data/objects.ts");
      const r = makeRepo({ objectFormat });
      const blob = r.git(["hash-object", "-w", "--stdin"], { input: "x\n" }).stdout.trim();
      const empty = r.git(["mktree"], { input: "" }).stdout.trim();
      // The state tree's own names, and names where the slash decides the order ("a-b" < "a/" < "a0").
      const entries = [
        ...["HEAD", "refs", "stash", "state", "index-unmerged", "a-b", "a.b", "a0", "ä"].map((name) => ({ mode: "100644" as const, type: "blob" as const, oid: blob, name })),
        ...["index", "index-blobs", "worktree", "keep", "a"].map((name) => ({ mode: "040000" as const, type: "tree" as const, oid: empty, name })),
      ];
      const byGit = r.git(["mktree"], { input: entries.map((e) => `${e.mode} ${e.type} ${e.oid}\t${e.name}\n`).join("") }).stdout.trim();
      expect(treeId(entries, objectFormat)).toBe(byGit);
      expect(treeId([...entries].reverse(), objectFormat)).toBe(byGit);
      expect(treeId(entries.slice(1), objectFormat)).not.toBe(byGit);
    });
  }

  test("a capture with nothing new since the newest snapshot runs no mktree, and records the same tree", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "a\n" });
    await r.okIn("snapshot");
    const file = join(tempDir("spawns"), "spawns");
    const res = await r.run(["snapshot"], { env: { GIT_UNDO_TRACE_SPAWNS: file } });
    expect(res.stdout).toContain("no change since #1");
    expect(readFileSync(file, "utf8")).not.toContain("mktree");
    r.write("a.txt", "b\n");
    const again = await r.run(["snapshot"], { env: { GIT_UNDO_TRACE_SPAWNS: file } });
    expect(again.code).toBe(0);
    expect(readFileSync(file, "utf8")).toContain("mktree");
  });
});
