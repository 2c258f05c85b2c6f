// The worker stays inside its repository and lets go of its caller (issue
// #41): it keeps none of the caller's descriptors, takes the work tree from
// Git (never from the folder a clone ran in), stops once its repository is
// deleted or replaced and never brings its folders back, never hangs on a
// FIFO at one of git-undo's names, and a recording that fails is told by the
// next command, once.
import { expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { autoRepo, list, settled, waitFor, workerPid } from "../helpers/auto.ts";
import { isolatedEnv, makeRepo, tempDir, type TestRepo } from "../helpers/repo.ts";
import { spawnCount } from "../../core/git.ts";
import { appendToFile, replaceFile } from "../../core/files.ts";
import { openRepo } from "../../core/repo.ts";
import { RepositoryGone, writeOnlyWhile } from "../../core/repository-gone.ts";
import { GitDirHold } from "../../worker/protocol.ts";
import { noteRecordingProblem } from "../../core/worker-files.ts";
import { refused } from "../../core/errors.ts";

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return false;
  }
};

const sh = (r: TestRepo, script: string, timeoutMs = 20_000) =>
  Bun.spawnSync({ cmd: ["bash", "-c", script], cwd: r.dir, env: r.env, stdout: "pipe", stderr: "pipe", timeout: timeoutMs });

test("a pipe the Git command shares with its caller closes when the command ends, while the worker lingers", async () => {
  const r = autoRepo();
  const undoDir = join(r.gitDir(), "undo");
  r.env.GIT_UNDO_WORKER_LINGER = "20000";
  const before = list(r).length;
  // fds 3 and 12 are the same pipe as stdout: a harness's fd, make's jobserver.
  // The pipe's name (pipe:[inode] or socket:[inode]) goes to stderr, for the look at the worker's descriptors below.
  const p = Bun.spawn({
    cmd: ["bash", "-c", "exec 3>&1 12>&1; readlink /proc/$$/fd/1 >&2 || echo none >&2; git commit -q --allow-empty -m piped"],
    cwd: r.dir,
    env: r.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  // Resolves at end of file: once every process holding the pipe has let it go.
  expect(await new Response(p.stdout).text()).toBe("");
  const pipe = (await new Response(p.stderr).text()).trim();
  const pid = workerPid(undoDir);
  try {
    // The worker started and still lingers: it is not what ended the wait.
    expect(pid).not.toBeNull();
    expect(alive(pid!)).toBe(true);
    if (existsSync("/proc")) {
      expect(pipe).toMatch(/^(pipe|socket):\[\d+\]$/); // Bun gives a socket pair for "pipe"
      // A descriptor the worker closed between the listing and its look (a file it read) holds nothing.
      const target = (fd: string) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          return "closed";
        }
      };
      const held = readdirSync(`/proc/${pid}/fd`).map(target);
      expect(held.length).toBeGreaterThan(0);
      expect(held).not.toContain(pipe);
    }
    await waitFor(() => list(r).length === before + 1, "the commit's snapshot");
  } finally {
    if (pid !== null) process.kill(pid, "SIGTERM");
  }
}, 60_000);

test("a clone with git-undo's hooks in its template records the clone's own files, never the folder it ran in", async () => {
  const src = makeRepo();
  src.commit("base", { "a.txt": "a\n", "d/b.txt": "b\n" });
  const hooked = autoRepo();
  // A template as Git's own test suite makes one: the hooks and the marker.
  const template = tempDir("template");
  mkdirSync(join(template, "hooks"), { recursive: true });
  mkdirSync(join(template, "undo"));
  for (const hook of ["reference-transaction", "post-index-change"]) {
    const file = join(hooked.gitDir(), "hooks", hook);
    if (existsSync(file)) cpSync(file, join(template, "hooks", hook));
  }
  const hookCommands = hooked.git(["config", "--get-regexp", "^hook\\."], { allowFail: true }).stdout;
  writeFileSync(join(template, "undo", "hooks-enabled"), "");
  const parent = tempDir("parent");
  writeFileSync(join(parent, "parent-only.txt"), "not the clone's\n");
  const env = { ...isolatedEnv(src.home), GIT_UNDO_WORKER_LINGER: "0" };
  // Config-defined hooks (Git 2.54+) come along as the clone's configuration.
  const configArgs = hookCommands
    .split("\n")
    .filter(Boolean)
    .flatMap((line) => ["-c", `${line.slice(0, line.indexOf(" "))}=${line.slice(line.indexOf(" ") + 1)}`]);
  for (const bare of [false, true]) {
    const name = bare ? "c.git" : "c";
    const res = Bun.spawnSync({ cmd: ["git", ...configArgs, "clone", "-q", ...(bare ? ["--bare"] : []), `--template=${template}`, src.dir, name], cwd: parent, env, stdout: "pipe", stderr: "pipe" });
    expect(res.stderr.toString()).toBe("");
    const gitDir = bare ? join(parent, name) : join(parent, name, ".git");
    await settled(gitDir);
    const run = (args: string[]) => Bun.spawnSync({ cmd: ["git", ...args], cwd: join(parent, name), env, stdout: "pipe" }).stdout.toString();
    const refs = run(["for-each-ref", "--format=%(refname)", "refs/undo/"]).split("\n").filter(Boolean);
    expect(refs.length).toBeGreaterThanOrEqual(1);
    const tree = run(["ls-tree", "--name-only", refs[0]!]).split("\n").filter(Boolean);
    if (bare) expect(tree).not.toContain("worktree");
    else expect(run(["ls-tree", "-r", "--name-only", `${refs[0]}:worktree`]).split("\n").filter(Boolean)).toEqual(["a.txt", "d/b.txt"]);
    expect(Bun.spawnSync({ cmd: ["git", "fsck", "--no-dangling"], cwd: join(parent, name), env }).exitCode).toBe(0);
  }
}, 60_000);

test("a repository deleted while its worker lingers: the worker leaves and nothing comes back at the path", async () => {
  const r = autoRepo();
  const undoDir = join(r.gitDir(), "undo");
  r.env.GIT_UNDO_WORKER_LINGER = "20000";
  const before = list(r).length;
  r.git(["branch", "doomed"]);
  await waitFor(() => list(r).length === before + 1, "the recording");
  const pid = workerPid(undoDir);
  expect(pid).not.toBeNull();
  // A new mark for it to work on as the folder goes.
  r.git(["branch", "doomed2"]);
  rmSync(r.dir, { recursive: true, force: true });
  await waitFor(() => !alive(pid!), "the worker to leave", 10_000);
  expect(existsSync(r.dir)).toBe(false);
}, 60_000);

test("a repository replaced at the same path: the old worker leaves, the new repository records with its own", async () => {
  const r = autoRepo();
  const undoDir = join(r.gitDir(), "undo");
  r.env.GIT_UNDO_WORKER_LINGER = "20000";
  const before = list(r).length;
  r.git(["branch", "one"]);
  await waitFor(() => list(r).length === before + 1, "the recording");
  const old = workerPid(undoDir)!;
  expect(old).not.toBeNull();
  // Another repository with recording on, moved in where this one was.
  const other = autoRepo({ files: { "b.txt": "b\n" } });
  renameSync(r.dir, `${r.dir}.old`);
  renameSync(other.dir, r.dir);
  await waitFor(() => !alive(old), "the old worker to leave", 10_000);
  r.env.GIT_UNDO_WORKER_LINGER = "0";
  const snaps = list(r).length;
  r.git(["branch", "two"]);
  await settled(r.gitDir());
  expect(list(r).length).toBe(snaps + 1);
  expect(existsSync(join(`${r.dir}.old`, ".git", "refs", "heads", "two"))).toBe(false);
}, 60_000);

test("FIFOs at probe, worker.log and hooks-enabled hang neither Git nor doctor, and doctor says what they cost", async () => {
  const r = autoRepo();
  const undoDir = join(r.gitDir(), "undo");
  const fifo = (name: string) => {
    rmSync(join(undoDir, name), { force: true });
    expect(Bun.spawnSync({ cmd: ["mkfifo", join(undoDir, name)] }).exitCode).toBe(0);
  };
  // probe: the hook touches it when it starts a worker.
  fifo("probe");
  const before = list(r).length;
  const commit = sh(r, "git commit -q --allow-empty -m through-a-fifo");
  expect(commit.exitCode).toBe(0);
  await settled(r.gitDir());
  expect(list(r).length).toBe(before + 1);
  expect(statSync(join(undoDir, "probe"), { throwIfNoEntry: false })?.isFIFO() ?? false).toBe(false);

  // worker.log: doctor reads it, the worker appends to it.
  fifo("worker.log");
  const doctor = Bun.spawnSync({ cmd: ["git", "undo", "doctor"], cwd: r.dir, env: r.env, stdout: "pipe", stderr: "pipe", timeout: 30_000 });
  expect(doctor.signalCode ?? null).toBeNull();
  const words = (await r.run(["doctor"])).stdout;
  expect(words).toMatch(/worker\.log is a special file, not git-undo's file: the worker's messages are lost/);

  // hooks-enabled: the hooks record nothing, and doctor does not say recording is on.
  fifo("hooks-enabled");
  const off = await r.run(["doctor"]);
  expect(off.code).toBe(1);
  expect(off.stdout).not.toMatch(/recording is on here/);
  expect(off.stdout).toMatch(/hooks-enabled is a special file, not git-undo's file: the hooks record only where it is a plain file/);
  expect(sh(r, "git commit -q --allow-empty -m unrecorded").exitCode).toBe(0);
  // init puts the marker back, and recording goes on.
  expect((await r.run(["init"])).code).toBe(0);
  expect(statSync(join(undoDir, "hooks-enabled")).isFile()).toBe(true);
  const count = list(r).length;
  r.git(["branch", "after-init"]);
  await settled(r.gitDir());
  expect(list(r).length).toBeGreaterThan(count);
}, 90_000);

test("a recording that fails is logged and told by the next command once; it goes quiet when recording works again", async () => {
  const r = autoRepo();
  const undoDir = join(r.gitDir(), "undo");
  // A clean filter that fails: Git's add, and so every capture of the files, dies on it.
  r.git(["config", "filter.boom.clean", "false"]);
  r.git(["config", "filter.boom.required", "true"]);
  r.write(".gitattributes", "boom.txt filter=boom\n");
  r.write("boom.txt", "x\n");
  r.git(["update-ref", "refs/heads/moved", "HEAD"]);
  await waitFor(() => existsSync(join(undoDir, "recording-problem")), "the worker to note the failure");
  expect(readFileSync(join(undoDir, "worker.log"), "utf8")).toMatch(/recording failed: .*boom/);
  const first = await r.run(["list"]);
  expect(first.stderr).toMatch(/^warning: automatic recording has a problem \(\d{4}-\d\d-\d\dT[^)]*\): recording failed: .*boom.*; 'git undo doctor' says more\n$/);
  const second = await r.run(["list"]);
  expect(second.stderr).toBe("");
  // Fixed: the next recording goes through and the problem is over.
  r.remove("boom.txt");
  r.git(["update-ref", "refs/heads/moved2", "HEAD"]);
  await settled(r.gitDir());
  expect(existsSync(join(undoDir, "recording-problem"))).toBe(false);
  expect(existsSync(join(undoDir, "recording-problem.shown"))).toBe(false);
  expect((await r.run(["list"])).stderr).toBe("");
}, 60_000);

test("a refusal that stopped a recording is kept as facts and worded by the CLI, as the refusal is everywhere", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  expect(r.undo(["init"]).code).toBe(0);
  const undoDir = join(r.gitDir(), "undo");
  noteRecordingProblem(undoDir, "recording failed", refused({ kind: "config-unreadable", where: "line 3 in .git/config" }));
  expect(readFileSync(join(undoDir, "worker.log"), "utf8")).toMatch(/recording failed: config-unreadable /);
  const shown = await r.run(["list"]);
  expect(shown.stderr).toMatch(/^warning: automatic recording has a problem \([^)]*\): recording failed: Git cannot read its configuration \(line 3 in \.git\/config\): fix that line; 'git undo doctor' says more\n$/);
  // doctor shows the log's facts in words too.
  expect(r.undo(["doctor"]).stdout).toContain("] recording failed: Git cannot read its configuration (line 3 in .git/config): fix that line");
  // A plain error keeps its message; an older worker's line without facts reads as before.
  noteRecordingProblem(undoDir, "worker stopped", new Error("no space left"));
  expect((await r.run(["list"])).stderr).toMatch(/\): worker stopped: no space left; /);
  writeFileSync(join(undoDir, "recording-problem"), "2026-01-01T00:00:00.000Z recording failed: an older line\n{not json\n");
  expect((await r.run(["list"])).stderr).toMatch(/\(2026-01-01T00:00:00\.000Z\): recording failed: an older line; /);
});

test("a lease far in the future under a pid that is no worker: doctor says no worker runs, and the next git-undo command clears it so recording resumes", async () => {
  const r = autoRepo();
  const undoDir = join(r.gitDir(), "undo");
  const sleeper = Bun.spawn({ cmd: ["sleep", "60"], cwd: r.dir, stdout: "ignore", stderr: "ignore" });
  try {
    writeFileSync(join(undoDir, "worker.pid"), `${sleeper.pid}\n`);
    const future = new Date(Date.now() + 3600_000);
    utimesSync(join(undoDir, "worker.pid"), future, future);
    const doctor = await r.run(["doctor"]);
    expect(doctor.stdout).not.toMatch(/a worker is running/);
    // Any command looks at the lease: the next Git command then starts a worker.
    expect(existsSync(join(undoDir, "worker.pid"))).toBe(false);
    expect(readFileSync(join(undoDir, "worker.log"), "utf8")).toMatch(/lease stood far ahead of the clock/);
    const before = list(r).length;
    r.git(["branch", "after-the-lease"]);
    await settled(r.gitDir());
    expect(list(r).length).toBe(before + 1);
  } finally {
    sleeper.kill();
  }
}, 60_000);

test("a linked worktree's folder removed while its worker lingers: the worker leaves without writing there", async () => {
  const r = autoRepo();
  const wt = `${r.dir}-wt`;
  r.git(["worktree", "add", "-q", wt], { env: { GIT_UNDO_INTERNAL: "1" } });
  const wtGitDir = r.git(["rev-parse", "--absolute-git-dir"], { cwd: wt }).stdout.trim();
  const undoDir = join(wtGitDir, "undo");
  r.env.GIT_UNDO_WORKER_LINGER = "20000";
  r.git(["branch", "from-wt"], { cwd: wt });
  await waitFor(() => workerPid(undoDir) !== null && !existsSync(join(undoDir, "pending")) && !existsSync(join(undoDir, "pending.taken")), "the worktree's recording");
  const pid = workerPid(undoDir)!;
  rmSync(wt, { recursive: true, force: true });
  await waitFor(() => !alive(pid), "the worker to leave", 10_000);
  const log = existsSync(join(undoDir, "worker.log")) ? readFileSync(join(undoDir, "worker.log"), "utf8") : "";
  expect(log).not.toMatch(/recording failed/);
  expect(r.git(["worktree", "prune"]).code).toBe(0);
  expect(existsSync(wtGitDir)).toBe(false);
}, 60_000);

test("the worker runs no higher than the command that started it (nice 5, or the caller's when that is lower)", async () => {
  const r = autoRepo();
  const undoDir = join(r.gitDir(), "undo");
  r.env.GIT_UNDO_WORKER_LINGER = "5000";
  sh(r, "nice -n 12 git branch niced");
  await waitFor(() => workerPid(undoDir) !== null, "the worker");
  const pid = workerPid(undoDir)!;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    expect(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])).toBe(12);
  } finally {
    process.kill(pid, "SIGTERM");
  }
}, 60_000);

test("a repository being deleted, in any order: the hold lets go once any folder the worker writes into has lost its witness", () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  const gitDir = r.gitDir();
  const undoDir = join(gitDir, "undo");
  mkdirSync(undoDir);
  writeFileSync(join(undoDir, "hooks-enabled"), "");
  for (const witness of ["HEAD", "undo/hooks-enabled", "refs/heads", "objects/info", "objects/pack"]) {
    const hold = new GitDirHold(gitDir, undoDir);
    expect(hold.held()).toBe(true);
    const path = join(gitDir, witness);
    renameSync(path, `${path}.away`);
    expect({ witness, held: hold.held() }).toEqual({ witness, held: false });
    renameSync(`${path}.away`, path);
    expect(hold.held()).toBe(true);
  }
});

test("once the repository is gone, the worker's process starts no Git and writes none of its files", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  const repo = await openRepo(r.at());
  let there = true;
  writeOnlyWhile(() => there);
  try {
    const marker = join(repo.gitDir, "undo-written");
    replaceFile(marker, "while there\n");
    expect(await repo.git.line(["rev-parse", "--verify", "HEAD"])).toMatch(/^[0-9a-f]{40,64}$/);
    there = false;
    const spawns = spawnCount();
    expect(repo.git.line(["rev-parse", "HEAD"])).rejects.toBeInstanceOf(RepositoryGone);
    expect(spawnCount()).toBe(spawns);
    expect(() => replaceFile(marker, "after\n")).toThrow(RepositoryGone);
    expect(() => appendToFile(marker, "after\n")).toThrow(RepositoryGone);
    expect(readFileSync(marker, "utf8")).toBe("while there\n");
    expect(readdirSync(repo.gitDir).filter((n) => n.includes("git-undo"))).toEqual([]);
  } finally {
    writeOnlyWhile(() => true);
  }
});
