// One snapshot per command a person types (format clarifications, "When the
// worker records"): a command that starts 250 ms or more after the previous
// one ended is always recorded on its own, so every state Git left between
// two commands typed at an ordinary pace can be brought back. Each case runs
// with both process-table backends (/proc, and ps as on macOS and the BSDs).
import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { list, recorded, waitFor } from "../helpers/auto.ts";
import { makeRepo, PROCESS_BACKENDS, type SnapshotJson, type TestRepo } from "../helpers/repo.ts";

/**
 * A repository with git-undo's hooks and the default undo.settle, its worker
 * lingering between commands as it does for a user (the suite's other tests
 * have it leave at once), and already started: a first command after a long
 * pause waits for a worker to start, which a loaded machine makes slow.
 */
async function typingRepo(backend: "proc" | "ps", files: Record<string, string> = { "a.txt": "a\n" }): Promise<TestRepo> {
  const r = makeRepo();
  Object.assign(r.env, { GIT_UNDO_PROCESS_TABLE: backend, GIT_UNDO_WORKER_LINGER: "3000", GIT_UNDO_VERIFY_KEPT: "" });
  r.commit("base", files);
  const init = r.undo(["init"]);
  if (init.code !== 0) throw new Error(init.stderr);
  await warm(r);
  return r;
}

/** A worker alive and idle: a command recorded, the worker lingering after it. */
async function warm(r: TestRepo, gitDir = r.gitDir()): Promise<void> {
  const n = list(r).length;
  r.git(["update-ref", "refs/warm", "HEAD"]);
  // The marks first: `list` starts the CLI, so it runs only once they are gone.
  await recorded(gitDir);
  await waitFor(() => list(r).length > n, "the warm-up");
}

/**
 * The promise is about time: it holds where the worker gets the CPU it needs
 * within a quarter of a second. On a machine loaded far past its cores (a CI
 * runner with the suite's workers beside it) a miss is tried again; a real
 * regression misses every time.
 */
const TIMED = { timeout: 60_000, retry: 2 };

/** Run `steps`, each a Git command, with the pause before the next. */
async function typed(r: TestRepo, steps: [args: string[], pauseMs: number, edit?: () => void][]): Promise<void> {
  for (const [args, pauseMs, edit] of steps) {
    edit?.();
    if (r.env.GIT_UNDO_DEBUG_SETTLE) appendFileSync(r.env.GIT_UNDO_DEBUG_SETTLE, `${Date.now()} test: git ${args.join(" ")}\n`);
    r.git(args);
    if (r.env.GIT_UNDO_DEBUG_SETTLE) appendFileSync(r.env.GIT_UNDO_DEBUG_SETTLE, `${Date.now()} test: done\n`);
    await Bun.sleep(pauseMs);
  }
  await recorded(r.gitDir());
}

/** The snapshots taken after `before` (oldest first). */
const since = (r: TestRepo, before: SnapshotJson[]): SnapshotJson[] => list(r).slice(0, list(r).length - before.length).reverse();

const show = (r: TestRepo, rev: string): string | null => {
  const res = r.git(["show", rev], { allowFail: true });
  return res.code === 0 ? res.stdout : null;
};

for (const backend of PROCESS_BACKENDS) {
  describe(`commands typed at an ordinary pace are each a snapshot (${backend})`, () => {
    test("six `git add`s after edits, 0.3 to 0.9 s apart, then reset --hard: each staged state is kept", async () => {
      const r = await typingRepo(backend);
      const before = list(r);
      const pauses = [300, 500, 900, 400, 600, 300];
      await typed(r, [
        ...pauses.map((ms, i): [string[], number, () => void] => [["add", "a.txt"], ms, () => r.write("a.txt", `work ${i + 1}\n`)]),
        [["reset", "-q", "--hard"], 0],
      ]);
      const made = since(r, before);
      expect(made.map((s) => s.summary)).toHaveLength(7);
      for (let i = 0; i < 6; i++) expect(show(r, `${made[i]!.commit}:index/a.txt`)).toBe(`work ${i + 1}\n`);
      expect(r.read("a.txt")).toBe("a\n");
    }, TIMED);

    test("a commit then reset --hard HEAD~1 half a second later: the commit is a snapshot", async () => {
      const r = await typingRepo(backend);
      const before = list(r);
      await typed(r, [
        [["add", "b.txt"], 300, () => r.write("b.txt", "b\n")],
        [["commit", "-q", "-m", "two b"], 500],
        [["reset", "-q", "--hard", "HEAD~1"], 0],
      ]);
      const made = since(r, before);
      expect(made.map((s) => s.summary)).toEqual(["staged: b.txt", "commit: two b", "reset: moving to HEAD~1"]);
      // And the plain undo brings the commit back.
      expect(r.undo(["undo"]).code).toBe(0);
      expect(r.g("log", "-1", "--format=%s")).toBe("two b");
      expect(r.read("b.txt")).toBe("b\n");
    }, TIMED);

    test("the README's opening example, typed: commit, then reset --hard, then git undo", async () => {
      const r = await typingRepo(backend, { "notes.txt": "notes\n" });
      r.write("notes.txt", "notes\nmore\n");
      await typed(r, [
        [["commit", "-qam", "Extend notes"], 300],
        [["reset", "-q", "--hard", "HEAD~1"], 300],
      ]);
      const res = r.undo(["undo"]);
      expect(res.code).toBe(0);
      expect(r.g("log", "-1", "--format=%s")).toBe("Extend notes");
      expect(r.read("notes.txt")).toBe("notes\nmore\n");
    }, TIMED);

    test("a conflict resolved by hand and staged, then merge --abort 0.8 s later: the resolution is kept", async () => {
      const r = await typingRepo(backend);
      r.git(["checkout", "-q", "-b", "side"], { env: { GIT_UNDO_INTERNAL: "1" } });
      r.commit("side", { "a.txt": "side\n" });
      r.git(["checkout", "-q", "-"], { env: { GIT_UNDO_INTERNAL: "1" } });
      r.commit("main", { "a.txt": "main\n" });
      await warm(r);
      const before = list(r);
      r.git(["merge", "-q", "side"], { allowFail: true });
      await Bun.sleep(400);
      await typed(r, [
        [["add", "a.txt"], 800, () => r.write("a.txt", "resolved by hand\n")],
        [["merge", "--abort"], 0],
      ]);
      const made = since(r, before);
      expect(made.length).toBe(3);
      expect(show(r, `${made[1]!.commit}:index/a.txt`)).toBe("resolved by hand\n");
      expect(r.read("a.txt")).toBe("main\n");
    }, TIMED);

    test("git worktree add, then a commit in it 0.3 s after its worker runs: the new worktree's state before the commit is a snapshot", async () => {
      const r = await typingRepo(backend);
      const wt = join(r.home, "wt2");
      r.git(["worktree", "add", "-q", wt]);
      // A new worktree's first command starts its own worker (docs/guide.md): the
      // next command is apart from it once that worker runs, and 0.3 s later.
      const wtUndo = join(r.git(["rev-parse", "--absolute-git-dir"], { cwd: wt }).stdout.trim(), "undo");
      await waitFor(() => existsSync(join(wtUndo, "worker.pid")) && statSync(join(wtUndo, "worker.pid")).mtimeMs > Date.now(), "the new worktree's worker");
      await Bun.sleep(300);
      writeFileSync(join(wt, "w.txt"), "w\n");
      r.git(["add", "w.txt"], { cwd: wt, env: { GIT_UNDO_INTERNAL: "1" } });
      r.git(["commit", "-q", "-m", "in wt2"], { cwd: wt });
      const wtGitDir = r.git(["rev-parse", "--absolute-git-dir"], { cwd: wt }).stdout.trim();
      await recorded(wtGitDir);
      const made = list(r, wt).reverse();
      expect(made.length).toBe(2);
      expect(show(r, `${made[0]!.commit}:HEAD`)).toBe("ref: refs/heads/wt2\n");
      expect(made[0]!.summary).not.toContain("in wt2");
      expect(made[1]!.summary).toBe("commit: in wt2");
    }, TIMED);

    test("a script's commands, back to back, may share a snapshot: the last state is always one", async () => {
      const r = await typingRepo(backend);
      const before = list(r);
      const script = Bun.spawnSync({
        cmd: ["sh", "-c", "for i in 1 2 3 4 5; do echo $i >a.txt; git add a.txt; git branch s$i; done"],
        cwd: r.dir,
        env: r.env,
      });
      expect(script.exitCode).toBe(0);
      await recorded(r.gitDir());
      const made = since(r, before);
      // Each snapshot is a state the script went through, in order: after step i's add
      // (a.txt = i, branches s1..s(i-1)) or after its branch (s1..si). None is torn.
      const steps = made.map((snap) => {
        const staged = Number(show(r, `${snap.commit}:index/a.txt`)!.trim());
        const branches = show(r, `${snap.commit}:refs`)!
          .split("\n")
          .filter((l) => /^refs\/heads\/s\d\t/.test(l)).length;
        expect([staged - 1, staged]).toContain(branches);
        return 2 * staged - (branches === staged ? 0 : 1);
      });
      expect(steps).toEqual([...steps].sort((a, b) => a - b));
      expect(new Set(steps).size).toBe(steps.length);
      const last = made.at(-1)!;
      expect(show(r, `${last.commit}:index/a.txt`)).toBe("5\n");
      expect(r.undo(["snapshot"]).stdout).toBe(`no change since #${last.number}\n`);
    }, TIMED);
  });
}
