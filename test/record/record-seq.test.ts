// The snapshot sequence: dedupe, numbering and its retry, undo.limit, the
// capture lock, and where bare, linked-worktree and SHA-256 repositories record.
import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { tryLock } from "../../core/lock.ts";
import { blobId } from "../../core/git-data/objects.ts";
import { captureLive } from "../../core/capture.ts";
import { commitCapture } from "../../core/snapshots/store.ts";
import { recordLocked } from "../../core/record.ts";
import { openRepo } from "../../core/repo.ts";
import { CLI, gitAtLeast, makeRepo, refFormatOf, type TestRepo } from "../helpers/repo.ts";
import { blobText, commitMessage, entries, parents, snap, snapIn, snapshotRefs } from "../helpers/snap.ts";

const numbers = (r: TestRepo, prefix?: string) => snapshotRefs(r, prefix).map((s) => Number(s.ref.slice(-10)));

describe("dedupe", () => {
  test("no manual snapshot whose tree equals the latest's: 'no change since #n', exit 1", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    expect(snap(r).out).toBe("#1 commit (initial): one\n");
    const again = await r.run(["snapshot"]);
    expect(again).toEqual({ code: 1, stdout: "no change since #1\n", stderr: "" });
    expect(numbers(r)).toEqual([1]);
    // A -m message is a bookmark: recorded even though nothing changed, with the same tree.
    expect(await r.run(["snapshot", "-m", "just a label"])).toEqual({ code: 0, stdout: "#2 just a label\n", stderr: "" });
    expect(numbers(r)).toEqual([1, 2]);
    expect(snapshotRefs(r).map((s) => s.tree)).toEqual([snapshotRefs(r)[0]!.tree, snapshotRefs(r)[0]!.tree]);
    // An empty message says nothing: deduped as without -m.
    expect(r.undo(["snapshot", "-m", " "]).stdout).toBe("no change since #2\n");
  });

  test("a change snapshot is deduped too; a restore snapshot is always created", async () => {
    const r = makeRepo();
    r.commit("one");
    await snapIn(r);
    const repo = await openRepo(r.at());
    const change = await recordLocked(repo, { kind: "change" });
    expect(change.created).toBe(false);
    const restore = await recordLocked(repo, { kind: "restore", restored: 1, from: 1 });
    expect(restore.created).toBe(true);
    if (!restore.created) return;
    expect(restore.snapshot.number).toBe(2);
    expect(restore.snapshot.tree).toBe(snapshotRefs(r)[0]!.tree);
    expect(commitMessage(r, restore.snapshot.commit)).toMatch(/\nUndo-Kind: restore\nUndo-Head: main\nUndo-Restored: 1\nUndo-From: 1\nUndo-Reflog: /);
  });
});

describe("a lean recording", () => {
  /** The Git commands one `git undo snapshot` ran, past any leading "-c key=value". */
  function commands(r: TestRepo): string[] {
    const trace = join(r.dir, "..", `trace-${Math.random()}`);
    // Without the test-only cross-check, whose spawns a user never pays for.
    r.undo(["snapshot"], { env: { GIT_UNDO_TRACE_SPAWNS: trace, GIT_UNDO_VERIFY_KEPT: "" } });
    if (!existsSync(trace)) return [];
    return readFileSync(trace, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => l.replace(/^(-c \S+ )+/, ""));
  }
  /** Their subcommands. */
  const spawns = (r: TestRepo): string[] => commands(r).map((c) => c.split(" ")[0]!);

  test("at most 13 Git processes; nothing written when nothing changed; a commit needs no diff; no snapshot commit is read back", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    await snapIn(r);
    r.commit("two", { "a.c": "b\n" });
    const afterCommitLines = commands(r);
    const afterCommit = afterCommitLines.map((c) => c.split(" ")[0]!);
    // With reftable, HEAD, the marker refs and the two reflogs come from Git: 4 more.
    const budget = refFormatOf(r) === "reftable" ? 17 : 13;
    expect(afterCommit.length).toBeLessThanOrEqual(budget);
    // The refs, and this worktree's snapshot refs by name: listed apart so that no
    // snapshot commit is read (each recording keeps the one it wrote).
    expect(afterCommitLines.filter((c) => c.startsWith("for-each-ref"))).toEqual([
      expect.stringContaining("refs/[!u]*"),
      expect.stringMatching(/^for-each-ref --format=%\(refname\)%00%\(objectname\)%00%\(symref\) refs\/undo\/snapshots\/$/),
    ]);
    expect(afterCommitLines.filter((c) => c === "cat-file --batch")).toEqual([]);
    // The summary is the reflog message: no diff for it (the kept index may diff two index trees).
    expect(afterCommitLines.filter((c) => c.startsWith("diff-tree") && c.includes("--name-status"))).toEqual([]);
    expect(afterCommit.filter((c) => c === "commit-tree")).toHaveLength(1);
    // The committer comes from git var once, then from its kept answer (same configuration).
    expect(afterCommit).not.toContain("var");
    const unchanged = spawns(r);
    expect(unchanged).not.toContain("commit-tree");
    expect(unchanged).not.toContain("update-ref");
    expect(unchanged).not.toContain("var");
    r.write("a.c", "edited\n");
    expect(spawns(r).length).toBeLessThanOrEqual(budget);
    // git add: the real index moved on, and its cache tree no longer names its tree.
    r.write("a.c", "staged\n");
    r.git(["add", "a.c"]);
    r.write("a.c", "staged, then edited\n");
    // The index changed at a path that also differs from the file: staged (add -p) or
    // set back (reset)? The summary asks HEAD's tree in one more process.
    expect(spawns(r).length).toBeLessThanOrEqual(budget + 1);
  });

  test("blobs the newest snapshot holds are not written again; after a gc, they are", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    await snapIn(r);
    r.write("a.c", "edited\n");
    // HEAD and refs as in #1: no hash-object.
    expect(spawns(r)).not.toContain("hash-object");
    r.git(["commit", "-q", "-am", "two"]);
    expect(spawns(r)).toContain("hash-object"); // the refs moved
    // The newest snapshot gone and its objects pruned: the kept ids no longer vouch for anything.
    const newest = snapshotRefs(r).at(-1)!;
    r.git(["update-ref", "-d", newest.ref]);
    r.git(["reflog", "expire", "--expire=now", "--all"]);
    r.git(["gc", "-q", "--prune=now"]);
    r.write("a.c", "after gc\n");
    expect(spawns(r)).toContain("hash-object");
    const recorded = snapshotRefs(r).at(-1)!;
    for (const name of ["HEAD", "refs"]) expect(r.git(["cat-file", "-e", `${recorded.tree}:${name}`], { allowFail: true }).code).toBe(0);
    expect(r.git(["fsck", "--no-progress"], { allowFail: true }).code).toBe(0);
  });
});

describe("the committer's date", () => {
  /** The committer line of snapshot n and whether `git var` ran for it. */
  function record(r: TestRepo, n: number, env: Record<string, string>): { committer: string; askedGit: boolean } {
    r.write("a.c", `edit ${n}\n`);
    const trace = join(r.dir, "..", `trace-${n}`);
    expect(r.undo(["snapshot"], { env: { ...env, GIT_UNDO_TRACE_SPAWNS: trace } }).code).toBe(0);
    const committer = r.g("cat-file", "commit", `refs/undo/snapshots/${String(n).padStart(10, "0")}`).split("\n").find((l) => l.startsWith("committer "))!;
    return { committer, askedGit: readFileSync(trace, "utf8").split("\n").some((l) => / ?var GIT_COMMITTER_IDENT$/.test(l)) };
  }

  test("now, with the local offset Git gave: kept for its quarter of an hour, asked again past it or when TZ changes", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    const india = { TZ: "IST-5:30" }; // POSIX rules: no time-zone files needed
    const first = record(r, 1, india);
    expect(first.askedGit).toBe(true);
    expect(first.committer).toMatch(/^committer Test User <test@example\.com> \d+ \+0530$/);
    const second = record(r, 2, india);
    expect(second.askedGit).toBe(false);
    expect(second.committer).toMatch(/ \+0530$/);
    expect(Math.abs(Number(second.committer.split(" ").at(-2)) - Date.now() / 1000)).toBeLessThan(60);
    const newfoundland = record(r, 3, { TZ: "NST3:30" });
    expect(newfoundland.askedGit).toBe(true);
    expect(newfoundland.committer).toMatch(/ -0330$/);
    // Past the quarter of an hour the offset was known for, Git is asked again.
    const file = join(r.gitDir(), "undo", "committer.json");
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), until: Date.now() - 1 }));
    expect(record(r, 4, { TZ: "NST3:30" }).askedGit).toBe(true);
    // The author is the placeholder, dated as the committer.
    const commit = r.g("cat-file", "commit", "refs/undo/snapshots/0000000004");
    const dateOf = (who: string) => commit.split("\n").find((l) => l.startsWith(`${who} `))!.split(" ").slice(-2).join(" ");
    expect(commit).toContain("\nauthor git-undo <git-undo@localhost> ");
    expect(dateOf("author")).toBe(dateOf("committer"));
  });
});

describe("blobId", () => {
  test("the id git hash-object gives, in SHA-1 and SHA-256 repositories", async () => {
    for (const format of ["sha1", "sha256"] as const) {
      const r = makeRepo({ objectFormat: format });
      for (const content of ["", "ref: refs/heads/main\n", "caf\u00e9\0binary\n"]) {
        expect(blobId(Buffer.from(content), format)).toBe(r.git(["hash-object", "--stdin"], { input: content }).stdout.trim());
      }
    }
  });
});

describe("numbers", () => {
  test("our own highest existing number plus one, ten digits; a number that exists is skipped", async () => {
    const r = makeRepo();
    r.commit("one");
    await snapIn(r);
    const first = snapshotRefs(r)[0]!;
    ownRef(r, "refs/undo/snapshots/0000000007", first.commit);
    r.write("a.c", "a\n");
    expect(snap(r).ref).toBe("refs/undo/snapshots/0000000008");
    r.git(["update-ref", "-d", "refs/undo/snapshots/0000000008"]);
    r.git(["update-ref", "-d", "refs/undo/snapshots/0000000007"]);
    r.write("a.c", "b\n");
    // Counted from what exists (undo.limit and gc never delete the newest).
    expect(snap(r).ref).toBe("refs/undo/snapshots/0000000002");
    // Refs not recorded here (fetched) count for nothing but their own numbers.
    r.git(["update-ref", "refs/undo/snapshots/0000000003", first.commit]);
    r.git(["update-ref", "refs/undo/snapshots/0000000009", first.commit]);
    r.write("a.c", "c\n");
    expect(snap(r).out).toMatch(/^#4 /);
  });

  test("every hundredth snapshot packs the snapshot refs (files); with Git 2.42+ the user's loose branches stay loose, an older Git packs them as git gc does", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    const first = await snapIn(r);
    r.git(["branch", "loose"]);
    ownRef(r, "refs/undo/snapshots/0000000099", first.commit);
    r.write("a.c", "b\n");
    expect(snap(r).ref).toBe("refs/undo/snapshots/0000000100");
    const loose = (dir: string) => existsSync(join(r.gitDir(), dir)) ? readdirSync(join(r.gitDir(), dir)) : [];
    if (refFormatOf(r) === "files" && gitAtLeast(2, 42)) {
      expect(loose("refs/undo/snapshots")).toEqual([]);
      expect(readFileSync(join(r.gitDir(), "packed-refs"), "utf8")).toContain(" refs/undo/snapshots/0000000100\n");
      expect(loose("refs/heads")).toContain("loose");
    } else if (refFormatOf(r) === "files") {
      // --include is refused: --all packs every ref, as git gc does.
      expect(loose("refs/undo/snapshots")).toEqual([]);
      expect(loose("refs/heads")).not.toContain("loose");
      expect(readFileSync(join(r.gitDir(), "packed-refs"), "utf8")).toContain(" refs/heads/loose\n");
      expect(r.git(["rev-parse", "loose"]).stdout.trim()).toBe(r.git(["rev-parse", "HEAD"]).stdout.trim());
    }
    // Packed or not, the sequence reads the same and goes on.
    expect(snapshotRefs(r).map((s) => s.ref).sort()).toEqual(["refs/undo/snapshots/0000000001", "refs/undo/snapshots/0000000099", "refs/undo/snapshots/0000000100"]);
    r.write("a.c", "c\n");
    expect(snap(r).ref).toBe("refs/undo/snapshots/0000000101");
    expect(r.ok("list").split("\n")[0]).toMatch(/#101 /);
  });

  test("a ref that appears between reading the sequence and creating the ref: the next number is used", async () => {
    const r = makeRepo();
    r.commit("one");
    await snapIn(r);
    r.write("a.c", "a\n");
    const repo = await openRepo(r.at());
    const capture = await captureLive(repo);
    // Another recorder won the race for #2.
    r.git(["update-ref", "refs/undo/snapshots/0000000002", snapshotRefs(r)[0]!.commit]);
    const out = await commitCapture(repo, capture, { kind: "manual" });
    expect(out.created && out.snapshot.number).toBe(3);
    expect(numbers(r)).toEqual([1, 2, 3]);
    expect(snapshotRefs(r)[2]!.tree).toBe(capture.tree);
  });

  test("undo.limit deletes the oldest, never the newest; numbers keep growing", async () => {
    const r = makeRepo();
    r.commit("one");
    r.git(["config", "undo.limit", "3"]);
    for (let i = 0; i < 5; i++) {
      r.write("a.c", `${i}\n`);
      await snapIn(r);
    }
    expect(numbers(r)).toEqual([3, 4, 5]);
    r.git(["config", "undo.limit", "1"]);
    r.write("a.c", "last\n");
    await snapIn(r);
    expect(numbers(r)).toEqual([6]);
    r.write("a.c", "after\n");
    await snapIn(r);
    expect(numbers(r)).toEqual([7]);
    expect(r.g("cat-file", "blob", `${snapshotRefs(r)[0]!.tree}:worktree/a.c`)).toBe("after");
  });
});

describe("the capture lock", () => {
  test("holds '<pid> <host>\\n' and is created exclusively", async () => {
    const r = makeRepo();
    const dir = join(r.gitDir(), "undo");
    const lock = tryLock(dir);
    expect(lock).not.toBeNull();
    expect(readFileSync(join(dir, "capture.lock"), "utf8")).toBe(`${process.pid} ${hostname()}\n`);
    expect(tryLock(dir)).toBeNull();
    lock!.release();
    expect(existsSync(join(dir, "capture.lock"))).toBe(false);
  });

  test("a stale lock of a dead process is taken over", async () => {
    const r = makeRepo();
    r.commit("one");
    const dir = join(r.gitDir(), "undo");
    mkdirSync(dir, { recursive: true });
    // A pid that cannot be alive: above the kernel's pid_max.
    writeFileSync(join(dir, "capture.lock"), `4194305 ${hostname()}\n`);
    expect(snap(r).ref).toBe("refs/undo/snapshots/0000000001");
    expect(existsSync(join(dir, "capture.lock"))).toBe(false);
  });

  test("a live owner makes the recording wait, then refuse in one line; the lock is left alone", async () => {
    const r = makeRepo();
    r.commit("one");
    const dir = join(r.gitDir(), "undo");
    mkdirSync(dir, { recursive: true });
    const content = `${process.pid} ${hostname()}\n`;
    writeFileSync(join(dir, "capture.lock"), content);
    const res = await r.run(["snapshot"], { env: { GIT_UNDO_LOCK_WAIT_MS: "200" } });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(res.stderr).toContain("capture.lock");
    expect(res.stderr).toContain(`pid ${process.pid}`);
    expect(readFileSync(join(dir, "capture.lock"), "utf8")).toBe(content);
    expect(snapshotRefs(r)).toEqual([]);
  });

  test("a recording waits for a live owner that finishes", async () => {
    const r = makeRepo();
    r.commit("one");
    const dir = join(r.gitDir(), "undo");
    mkdirSync(dir, { recursive: true });
    const lockPath = join(dir, "capture.lock");
    writeFileSync(lockPath, `${process.pid} ${hostname()}\n`);
    const proc = Bun.spawn({
      cmd: [process.execPath, CLI, "snapshot"],
      cwd: r.dir,
      env: { ...r.env, GIT_UNDO_LOCK_WAIT_MS: "20000" },
      stdout: "pipe",
      stderr: "pipe",
    });
    // Release the lock once the recorder is waiting on it.
    await Bun.sleep(500);
    expect(snapshotRefs(r)).toEqual([]);
    rmSync(lockPath);
    expect(await proc.exited).toBe(0);
    expect(await new Response(proc.stdout).text()).toMatch(/^#1 /);
    expect(snapshotRefs(r)).toHaveLength(1);
  });

  test("a lock written on another host is never taken over", async () => {
    const r = makeRepo();
    r.commit("one");
    const dir = join(r.gitDir(), "undo");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "capture.lock"), `4194305 some-other-host.example\n`);
    const res = await r.run(["snapshot"], { env: { GIT_UNDO_LOCK_WAIT_MS: "100" } });
    expect(res.code).toBe(1);
    expect(snapshotRefs(r)).toEqual([]);
  });
});

describe("kinds of repository", () => {
  test("a bare repository records refs and HEAD only", async () => {
    const r = makeRepo({ bare: true });
    const tree = r.g("hash-object", "-t", "tree", "-w", "--stdin");
    const c = r.git(["commit-tree", tree, "-m", "one"]).stdout.trim();
    r.git(["update-ref", "refs/heads/main", c]);
    const s = await snapIn(r);
    expect(Object.keys(entries(r, s.tree)).sort()).toEqual(["HEAD", "refs"]);
    expect(blobText(r, s.tree, "HEAD")).toBe("ref: refs/heads/main\n");
    expect(blobText(r, s.tree, "refs")).toBe(`refs/heads/main\t${c}\tcommit\t\t\t\n`);
    expect(parents(r, s.commit)).toEqual([c]);
    expect(s.ref).toBe("refs/undo/snapshots/0000000001");
  });

  test("a linked worktree has its own sequence under refs/undo/worktrees/<w>/snapshots/", async () => {
    const r = makeRepo();
    r.commit("one", { "a.c": "a\n" });
    await snapIn(r);
    r.git(["worktree", "add", "-q", "-b", "wtb", "../wt"]);
    const wt = join(r.dir, "..", "wt");
    writeFileSync(join(wt, "a.c"), "in the worktree\n");
    const s = await snapIn(r, [], { cwd: wt });
    expect(s.ref).toBe("refs/undo/worktrees/wt/snapshots/0000000001");
    expect(blobText(r, s.tree, "HEAD")).toBe("ref: refs/heads/wtb\n");
    expect(r.g("cat-file", "blob", `${s.tree}:worktree/a.c`)).toBe("in the worktree");
    expect(commitMessage(r, s.commit)).toContain("\nUndo-Head: wtb\n");
    // Refs are shared: the worktree's refs blob has both branches, never refs/undo/.
    expect(blobText(r, s.tree, "refs").split("\n").filter(Boolean).map((l) => l.split("\t")[0])).toEqual(["refs/heads/main", "refs/heads/wtb"]);
    // The main worktree's sequence goes on by itself.
    expect(numbers(r)).toEqual([1]);
    r.write("a.c", "main edit\n");
    expect(snap(r).ref).toBe("refs/undo/snapshots/0000000002");
    expect(existsSync(join(r.gitDir(), "worktrees", "wt", "undo"))).toBe(true);
  });

  test("a SHA-256 repository: 64-digit ids everywhere, conflicts and keep commits too", async () => {
    const r = makeRepo({ objectFormat: "sha256" });
    r.commit("base", { "a.c": "base\n" });
    r.git(["checkout", "-q", "-b", "other"]);
    r.commit("other", { "a.c": "other\n" });
    r.git(["checkout", "-q", "main"]);
    const c = r.commit("main", { "a.c": "main\n" });
    r.git(["merge", "other"], { allowFail: true });
    const s = await snapIn(r);
    expect(s.commit).toMatch(/^[0-9a-f]{64}$/);
    expect(blobText(r, s.tree, "HEAD")).toBe("ref: refs/heads/main\n");
    expect(blobText(r, s.tree, "refs")).toBe(
      `refs/heads/main\t${c}\tcommit\t\t\t\nrefs/heads/other\t${r.g("rev-parse", "other")}\tcommit\t\t\t\n`,
    );
    const blobs = r.g("ls-tree", "--name-only", `${s.tree}:index-blobs`).split("\n");
    expect(blobs).toHaveLength(3);
    for (const b of blobs) expect(b).toMatch(/^[0-9a-f]{64}$/);
    expect(commitMessage(r, s.commit)).toContain(`\nUndo-Reflog: ${r.g("reflog", "-1", "--format=%H %gs", "HEAD")}\n`);
    expect(r.undo(["list"]).code).toBe(0);
  });
});

/** A snapshot ref made by hand and written down as this worktree's own, as if recorded here. */
function ownRef(r: TestRepo, ref: string, commit: string): void {
  r.git(["update-ref", ref, commit]);
  appendFileSync(join(r.gitDir(), "undo", "own-snapshots"), `${commit} ${ref}\n`);
}
