// git undo rescue: the work no ref and no snapshot holds, and bringing it back.
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { settled } from "../helpers/auto.ts";
import { VirtualTerminal } from "../helpers/vterm.ts";
import { userState } from "../helpers/lost-work.ts";
import { fingerprint, makeRepo, type TestRepo } from "../helpers/repo.ts";

interface Item {
  kind: "stash" | "commit" | "file";
  id: string;
  shortId: string;
  date: string | null;
  reflogs: string[];
  message?: string;
  files?: string[];
  branch?: string | null;
  branchFrom?: string | null;
  subject?: string;
  earlier?: number;
  path?: string | null;
  lines?: string[];
}

const lost = async (r: TestRepo): Promise<Item[]> => JSON.parse(await r.okIn("rescue", "--json")) as Item[];

/** Every object a ref (snapshots included) or the index still reaches. */
function reachable(r: TestRepo): Set<string> {
  const objects = r.g("rev-list", "--objects", "--all").split("\n").map((l) => l.split(" ")[0]!);
  const index = r.g("ls-files", "-s").split("\n").filter(Boolean).map((l) => l.split(" ")[1]!);
  return new Set([...objects, ...index]);
}

const snapshotCount = async (r: TestRepo) => (await r.snapshotsIn()).length;

describe("git undo rescue", () => {
  test("a stash dropped before git undo init is found with its files, brought back as a stash entry, and taken back by git undo", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n", "b.txt": "b\n" });
    r.write("a.txt", "a\nwork in progress\n");
    r.write("new.txt", "an untracked idea\n");
    r.git(["stash", "push", "-q", "--include-untracked", "-m", "parser ideas"]);
    const stash = r.g("rev-parse", "stash@{0}");
    r.git(["stash", "drop", "-q"]);
    expect((await r.run(["init"])).code).toBe(0);
    await settled(r.gitDir());

    const items = await lost(r);
    expect(items.map((i) => [i.kind, i.id])).toEqual([["stash", stash]]);
    expect(items[0]).toMatchObject({ message: "On main: parser ideas", files: ["a.txt", "new.txt"], reflogs: [] });
    const text = await r.okIn("rescue");
    expect(text).toContain(`stash  ${stash.slice(0, 7)}`);
    expect(text).toContain("On main: parser ideas");
    expect(text).toContain("files: a.txt, new.txt");

    const before = fingerprint(r);
    const beforeUser = userState(r);
    const count = await snapshotCount(r);
    // A dry run changes nothing.
    const dry = await r.run(["rescue", stash.slice(0, 8), "--dry-run"]);
    expect(dry.stdout).toContain("Would rescue stash entry 'On main: parser ideas'");
    expect(fingerprint(r)).toBe(before);
    const res = await r.run(["rescue", stash.slice(0, 8)]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Rescued stash entry 'On main: parser ideas' (${stash.slice(0, 7)})`);
    expect(r.git(["stash", "list", "--format=%H %gs"]).stdout).toBe(`${stash} On main: parser ideas\n`);
    expect(r.git(["stash", "show", "-p"]).stdout).toContain("+work in progress");
    expect(r.g("show", "stash@{0}^3:new.txt")).toBe("an untracked idea"); // stash show --include-untracked: Git 2.32+
    expect(await snapshotCount(r)).toBe(count + 1);
    // Now a snapshot holds it: nothing is lost.
    expect(await lost(r)).toEqual([]);

    expect((await r.run([])).code).toBe(0);
    expect(userState(r)).toBe(beforeUser);
    expect(r.git(["stash", "list"]).stdout).toBe("");
  });

  test("a content staged and lost to reset --hard with no worker is found by grep --lost and written back to a new path", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.write("notes.txt", "my precious staged line\nsecond line\n");
    r.git(["add", "notes.txt"]);
    const blob = r.g("rev-parse", ":notes.txt");
    r.git(["reset", "-q", "--hard"]);
    expect(existsSync(r.path("notes.txt"))).toBe(false);

    const grep = await r.run(["grep", "--lost", "precious"]);
    expect(grep).toEqual({ code: 0, stdout: `lost ${blob.slice(0, 7)} (no name):1:my precious staged line\n`, stderr: "" });
    const json = JSON.parse(await r.okIn("grep", "--lost", "--json", "second")) as unknown[];
    expect(json).toEqual([{ snapshot: null, snapshots: [], lost: { id: blob, kind: "file" }, path: null, line: 2, text: "second line" }]);
    expect((await r.run(["grep", "--lost", "written nowhere"])).code).toBe(1);
    const items = await lost(r);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: "file", id: blob, path: null, lines: ["my precious staged line", "second line"] });
    expect(items[0]!.date).not.toBeNull(); // a loose object: its file's time
    // log -S finds it too, after the snapshots.
    expect(await r.okIn("log", "-S", "precious", "--lost")).toContain(`file   ${blob.slice(0, 7)}`);

    // Without a path it says how; the path is relative to the current directory.
    expect((await r.run(["rescue", blob.slice(0, 7)])).code).toBe(129);
    r.write("sub/keep.txt", "k\n");
    const before = userState(r);
    const res = await r.run(["rescue", blob.slice(0, 7), "--", "notes back.txt"], { cwd: r.path("sub") });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Rescued ${blob.slice(0, 7)} as sub/notes back.txt`);
    expect(r.read("sub/notes back.txt")).toBe("my precious staged line\nsecond line\n");
    expect(r.g("status", "--porcelain")).toBe("?? sub/");
    // A plain git undo takes it back; the record-first snapshot kept sub/keep.txt.
    expect((await r.run([])).code).toBe(0);
    expect(existsSync(r.path("sub/notes back.txt"))).toBe(false);
    expect(userState(r)).toBe(before);
  });

  test("a content a tree named keeps its path (git write-tree, then reset)", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    r.write("docs/plan.md", "the plan\n");
    r.git(["add", "docs/plan.md"]);
    r.git(["write-tree"]);
    r.git(["reset", "-q", "--hard"]);
    const files = (await lost(r)).filter((i) => i.kind === "file");
    expect(files.map((f) => [f.path, f.lines])).toEqual([["docs/plan.md", ["the plan"]]]);
  });

  test("a content only deleted snapshots held keeps the path they gave it; their own commits are not listed", async () => {
    const r = makeRepo();
    r.git(["config", "undo.limit", "2"]);
    r.commit("base", { "a.txt": "a\n" });
    for (const i of [1, 2, 3, 4]) {
      r.write("notes/draft.txt", `draft ${i}\n`);
      await r.okIn("snapshot");
    }
    expect((await r.snapshotsIn()).map((s) => s.number)).toEqual([4, 3]);
    const items = await lost(r);
    // Newest first; two written in the same second come in id order, so compared as a set.
    expect(items.map((i) => `${i.kind} ${i.path} ${i.lines?.join("|")}`).sort()).toEqual(["file notes/draft.txt draft 1", "file notes/draft.txt draft 2"]);
    // Back at its own path it would stand over the file there now: refused; elsewhere it goes.
    const first = items.find((i) => i.lines?.[0] === "draft 1")!;
    expect((await r.run(["rescue", first.shortId, "--", "notes/draft.txt"])).code).toBe(1);
    expect((await r.run(["rescue", first.shortId, "--", "notes/draft 1.txt"])).code).toBe(0);
    expect(r.read("notes/draft 1.txt")).toBe("draft 1\n");
  });

  test("an amended commit is a lost commit on its branch, held only by reflogs; a commit of a deleted branch too", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n" });
    const old = r.commit("two", { "a.txt": "2\n" });
    r.git(["commit", "-q", "--amend", "-m", "two, amended"]);
    r.git(["checkout", "-q", "-b", "topic"]);
    r.commit("topic 1", { "t.txt": "1\n" });
    const tip = r.commit("topic 2", { "t.txt": "2\n" });
    r.git(["checkout", "-q", "main"]);
    r.git(["branch", "-q", "-D", "topic"]);

    const items = await lost(r);
    const amended = items.find((i) => i.id === old)!;
    expect(amended).toMatchObject({ kind: "commit", subject: "two", branch: "main", branchFrom: "reflog", earlier: 0 });
    expect(amended.reflogs).toEqual(["HEAD", "refs/heads/main"]);
    // The deleted branch's reflog went with it: HEAD's says which branch it was on.
    const topic = items.find((i) => i.id === tip)!;
    expect(topic).toMatchObject({ kind: "commit", subject: "topic 2", branch: "topic", branchFrom: "reflog", earlier: 1, reflogs: ["HEAD"] });
    expect(items.filter((i) => i.kind === "commit")).toHaveLength(2); // the run's older commit is counted, not listed
    expect(await r.okIn("rescue")).toContain("only a reflog still holds it (HEAD, main)");
    // grep --lost searches what each lost run changed since the commit it left.
    expect((await r.okIn("grep", "--lost", "^2$")).split("\n").sort().filter(Boolean)).toEqual([`lost ${old.slice(0, 7)} a.txt:1:2`, `lost ${tip.slice(0, 7)} t.txt:1:2`].sort());

    const before = userState(r);
    const res = await r.run(["rescue", tip.slice(0, 10)]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`rescued/${tip.slice(0, 7)} created at ${tip.slice(0, 7)}`);
    expect(r.g("rev-parse", `rescued/${tip.slice(0, 7)}`)).toBe(tip);
    // The amended one too; once a branch holds it, it is no longer lost.
    const again = await r.run(["rescue", old]);
    expect(again.code).toBe(0);
    expect(r.g("rev-parse", `rescued/${old.slice(0, 7)}`)).toBe(old);
    expect((await r.run(["rescue", old])).code).toBe(1); // no longer lost: a snapshot holds it
    expect((await r.run(["undo", "2"])).code).toBe(0);
    expect(userState(r)).toBe(before);
  });

  test("nothing a ref, a snapshot, the index or the stash list reaches is listed", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    // The stash list (stash@{1} is held by a reflog alone) is the user's.
    r.write("a.txt", "first stash\n");
    r.git(["stash", "-q"]);
    r.write("a.txt", "second stash\n");
    r.git(["stash", "-q"]);
    // Staged now: in the index.
    r.write("staged.txt", "staged\n");
    r.git(["add", "staged.txt"]);
    // A snapshot recorded a stash entry, a commit and a staged file that are then thrown away.
    r.write("b.txt", "recorded then lost\n");
    r.git(["add", "b.txt"]);
    r.git(["stash", "-q"]);
    r.write("c.txt", "staged, recorded\n");
    r.git(["add", "c.txt"]);
    r.commit("recorded commit", { "d.txt": "d\n" });
    r.write("e.txt", "staged then reset\n");
    r.git(["add", "e.txt"]);
    await r.okIn("snapshot");
    r.git(["reset", "-q", "--hard", "HEAD~1"]);
    r.git(["stash", "drop", "-q"]);
    // A preview writes the current files as objects nothing keeps: not lost.
    r.write("f.txt", "unrecorded, on disk\n");
    await r.okIn("show", "1", "-p");

    expect(await lost(r)).toEqual([]);
    expect(await r.okIn("rescue")).toBe("nothing lost: every object is held by a ref, a snapshot, the index or the stash list\n");
    // Only what nothing holds: one content staged and reset away unrecorded.
    r.write("g.txt", "truly lost\n");
    r.git(["add", "g.txt"]);
    const blob = r.g("rev-parse", ":g.txt");
    r.git(["reset", "-q", "--hard"]);
    const items = await lost(r);
    expect(items.map((i) => i.id)).toEqual([blob]);
    const held = reachable(r);
    for (const i of items) expect(held.has(i.id)).toBe(false);
  });

  test("rescue -- <path> refuses where anything stands, and changes nothing", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n", ".gitignore": "*.log\n" });
    r.write("x.txt", "lost content\n");
    r.git(["add", "x.txt"]);
    const blob = r.g("rev-parse", ":x.txt");
    r.git(["reset", "-q", "--hard"]);
    r.write("build.log", "ignored\n");
    r.symlink("elsewhere", "link");
    await r.okIn("snapshot");
    const before = fingerprint(r);
    const count = await snapshotCount(r);
    for (const [path, said] of [
      ["a.txt", "'a.txt' exists"],
      ["build.log", "'build.log' exists"],
      ["link", "'link' exists"],
      ["a.txt/inside", "'a.txt' is a file"],
      ["link/inside", "'link' is a symbolic link"],
    ] as const) {
      const res = await r.run(["rescue", blob, "--", path]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(said);
      expect(res.stdout).toBe("");
    }
    expect((await r.run(["rescue", blob, "--", ".git/hooks/x"])).code).toBe(129);
    expect((await r.run(["rescue", blob, "--", "../outside.txt"])).code).toBe(129);
    expect(fingerprint(r)).toBe(before);
    expect(r.read("build.log")).toBe("ignored\n");
    expect(await snapshotCount(r)).toBe(count);
    expect(existsSync(join(r.dir, "..", "outside.txt"))).toBe(false);
    // Ids: unknown, too short, or a commit given a path.
    expect((await r.run(["rescue", "0000000"])).code).toBe(1);
    expect((await r.run(["rescue", "ab"])).code).toBe(129);
  });

  test("the picker lists lost work after the snapshots; Enter, y rescues it as git undo rescue does", async () => {
    const r = makeRepo();
    r.commit("base", { "a.txt": "a\n" });
    await r.okIn("snapshot");
    r.write("a.txt", "a\nidea\n");
    r.git(["stash", "push", "-q", "-m", "dropped idea"]);
    const stash = r.g("rev-parse", "stash@{0}");
    r.git(["stash", "drop", "-q"]);
    await r.okIn("snapshot", "-m", "after the drop");
    const before = userState(r);
    const t = new VirtualTerminal(r, 120, 30);
    try {
      t.start(["pick"]);
      await t.waitForText("lost work (no ref or snapshot holds it; Enter rescues)");
      t.keys("End");
      let s = await t.waitForText("what rescuing it does");
      expect(s).toContain(`stash ${stash.slice(0, 7)}`);
      expect(s).toContain("Enter: comes back as the newest stash entry");
      t.keys("Enter");
      s = await t.waitForText(`Rescue stash ${stash.slice(0, 7)}?`);
      t.type("y");
      expect(await t.exitCode()).toBe(0);
      expect(t.screen()).toContain(`Rescued stash entry 'On main: dropped idea' (${stash.slice(0, 7)})`);
    } finally {
      await t.kill();
    }
    expect(r.git(["stash", "list", "--format=%H"]).stdout).toBe(`${stash}\n`);
    expect((await r.run([])).code).toBe(0);
    expect(userState(r)).toBe(before);
  });
});

test("rescue lists the user's work only: git-undo's own records are set aside, and a thrown-away capture's file is named as seen, never recorded", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  const head = r.g("rev-parse", "HEAD");
  const write = (text: string) => r.git(["hash-object", "-w", "--stdin"], { input: text }).stdout.trim();
  // What a capture thrown away before its tree was written leaves: HEAD, the refs table, a stash list, markers.
  const records = [
    write("ref: refs/heads/side\n"),
    write(`${head}\n`),
    write(`refs/heads/main\t${head}\tcommit\t\t\t\n`),
    write(`${head}\tOn main: wip\n`),
    write("MERGE_HEAD\n"),
  ];
  const userBlob = write("a draft no commit holds\n");
  // A capture's state tree no snapshot commit holds, naming a file no snapshot has.
  const seen = write("seen once by a capture\n");
  const worktree = r.git(["mktree"], { input: `100644 blob ${seen}\tdraft.txt\n` }).stdout.trim();
  r.git(["mktree"], { input: `100644 blob ${records[0]}\tHEAD\n100644 blob ${records[2]}\trefs\n040000 tree ${worktree}\tworktree\n` });
  const items = await lost(r);
  const ids = items.map((i) => i.id);
  for (const id of records) expect(ids).not.toContain(id);
  expect(ids).toContain(userBlob);
  expect(items.find((i) => i.id === seen)?.path).toBe("draft.txt");
  const text = await r.okIn("rescue");
  expect(text).toMatch(/draft\.txt[^\n]*\n\s+seen by git-undo, never recorded/);
  expect(text).toContain("a draft no commit holds");
});
