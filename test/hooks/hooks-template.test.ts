// The hooks as the design draws them: one small POSIX sh template for every
// hook, which only appends the pid of the Git process running it to the mark
// and starts the worker when none runs. Which command that pid belongs to,
// and when it has ended, the worker works out (worker/settle.ts), with either
// process-table backend.
import { expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configHookCommand } from "../../core/hooks/config.ts";
import { findBlock, renderHook } from "../../core/hooks/template.ts";
import { processTable } from "../../core/git-data/proc/index.ts";
import { readMark } from "../../worker/protocol.ts";
import { CommandWatch } from "../../worker/settle.ts";
import { markingRepo, waitFor } from "../helpers/auto.ts";
import { OWN_PROCESS, PROCESS_BACKENDS, ROOT } from "../helpers/repo.ts";

const TEMPLATE = join(ROOT, "hooks", "hook.sh");

test("one template of at most 75 lines of code renders every hook and the guard, and reads no process table", () => {
  const text = readFileSync(TEMPLATE, "utf8");
  const span = findBlock(text)!;
  const block = text.slice(span.start, span.end);
  const code = block.split("\n").filter((l) => l.trim() !== "" && !l.trim().startsWith("#"));
  // 50 for the hooks; 25 for the guard's request, its bounded wait and printing the worker's answer.
  expect(code.length).toBeLessThanOrEqual(75);
  expect(block).not.toContain("/proc");
  expect(block).not.toMatch(/\bps\b/);
  const a = renderHook("reference-transaction", "/toolkit", "/bun");
  const b = renderHook("post-index-change", "/toolkit", "/bun");
  expect(a.block).toBe(b.block);
  expect(a.file).toBe(b.file);
  // The config-defined hook runs the template itself, with the same block.
  expect(configHookCommand("/toolkit", "/bun")).toBe("[ ! -f '/toolkit/hooks/hook.sh' ] || GIT_UNDO_HOOK_BUN='/bun' exec sh '/toolkit/hooks/hook.sh' 2>/dev/null");
  expect(block.replace("git_undo_root=''", "git_undo_root='/toolkit'").replace("git_undo_bun=''", "git_undo_bun='/bun'")).toBe(a.block);
  // The names earlier config-defined hooks run hand over to the template.
  for (const name of ["reference-transaction", "post-index-change"]) expect(readFileSync(join(ROOT, "hooks", name), "utf8")).toContain('"${0%/*}/hook.sh"');
});


test("the mark is the pid of the Git process each hook ran under and the hook's first argument, one a line", () => {
  const { r, undo, release } = markingRepo();
  const lines = () => readFileSync(join(undo, "pending"), "latin1").split("\n").filter(Boolean);
  try {
    const res = r.git(["update-ref", "refs/heads/marked", "HEAD"]);
    expect(res.stdout + res.stderr).toBe("");
    // reference-transaction fires for prepared and committed (and preparing on newer Gits): only committed marks.
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(/^[1-9]\d* committed$/);
    // post-index-change says whether Git wrote files: `git add` did not, `reset --hard` did.
    r.write("b.txt", "b\n");
    r.git(["add", "b.txt"]);
    expect(lines()[1]).toMatch(/^[1-9]\d* 0$/);
    r.git(["reset", "-q", "--hard"]);
    expect(lines().slice(2).some((l) => / 1$/.test(l))).toBe(true);
    // One command's hooks name one process: a commit writes the index and a ref.
    const n = lines().length;
    r.write("c.txt", "c\n");
    r.git(["add", "c.txt"], { env: { GIT_UNDO_INTERNAL: "1" } });
    expect(lines()).toHaveLength(n); // Git's own calls are not marked
    r.git(["commit", "-q", "-m", "c"]);
    const commit = lines().slice(n).map((l) => l.split(" ")[0]);
    expect(commit.length).toBeGreaterThanOrEqual(1);
    expect(new Set(commit).size).toBe(1);
  } finally {
    release();
  }
});

test("a FIFO or a link at the mark: Git neither hangs nor writes through it", () => {
  const { r, undo, release } = markingRepo();
  try {
    const pending = join(undo, "pending");
    expect(Bun.spawnSync(["mkfifo", pending]).exitCode).toBe(0);
    const started = Date.now();
    const res = r.git(["update-ref", "refs/heads/fifo", "HEAD"]);
    expect(res.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    rmSync(pending);
    const target = join(r.home, "elsewhere");
    writeFileSync(target, "mine\n");
    symlinkSync(target, pending);
    r.git(["update-ref", "refs/heads/link", "HEAD"]);
    expect(readFileSync(target, "utf8")).toBe("mine\n");
  } finally {
    release();
  }
});

for (const backend of PROCESS_BACKENDS) {
  test(`the worker follows a mark up to the command the user started (${backend}): an alias's Git, an exec step's rebase`, async () => {
    const table = processTable(backend, OWN_PROCESS);
    const { r, undo, release } = markingRepo();
    try {
      // The Git that marks is `update-ref --stdin`, alive until its input ends, so the worker
      // finds it (and what is above it) as it would a command still running.
      const follow = async (alias: string, operation: boolean) => {
        rmSync(join(undo, "pending"), { force: true });
        const p = Bun.spawn({ cmd: ["git", "-c", `alias.slow=${alias}`, "slow"], cwd: r.dir, env: r.env, stdin: "pipe", stdout: "ignore", stderr: "ignore" });
        p.stdin.write(`start\nupdate refs/heads/followed ${r.g("rev-parse", "HEAD")}\ncommit\n`);
        p.stdin.flush();
        await waitFor(() => (readMark(undo, null)?.pids.length ?? 0) > 0, "the mark");
        const mark = readMark(undo, null)!;
        const watch = new CommandWatch(table);
        watch.add(mark.pids, mark.markMs, operation);
        expect(watch.commandCount).toBe(1);
        expect(watch.running()).toBe(true);
        // The Git that marked ends; what runs on above it (a second of sleep) decides.
        p.stdin.end();
        await Bun.sleep(500);
        const afterItsEnd = watch.running();
        await p.exited;
        expect(watch.running()).toBe(false);
        expect(watch.endedMs).not.toBeNull();
        return afterItsEnd;
      };
      // An alias's Git is the command: it runs while the alias does.
      expect(await follow("!git update-ref --stdin; sleep 1", false)).toBe(true);
      // Something that is neither Git nor sh between them ends the walk outside an operation...
      expect(await follow("!timeout 30 git update-ref --stdin; sleep 1", false)).toBe(false);
      // ...and not during one: a rebase's `exec make test` running Git belongs to the rebase.
      expect(await follow("!timeout 30 git update-ref --stdin; sleep 1", true)).toBe(true);
    } finally {
      release();
    }
  }, 30_000);
}

test("the hooks stay quiet where init never ran, and without the toolkit", () => {
  const { r, undo, release } = markingRepo();
  try {
    rmSync(join(undo, "hooks-enabled"));
    r.git(["update-ref", "refs/heads/off", "HEAD"]);
    expect(existsSync(join(undo, "pending"))).toBe(false);
  } finally {
    release();
  }
});
