// A randomized soak (issue #41): 200 steps of Git commands, kills of the worker
// and of restores, and FIFOs, links and folders planted at git-undo's own
// files, in a repository that records automatically. Every step must end
// (nothing wedged), and at the end nothing is lost or silent: every commit a
// checkpoint recorded is still reachable from a branch or a snapshot, the final state is
// recorded, Git's fsck finds nothing broken, no scratch folder is left, and
// what remains planted is named by doctor.
import { expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { autoRepo, list, waitFor, workerPid } from "../helpers/auto.ts";
import { CLI, tempDir } from "../helpers/repo.ts";
import { rng } from "../helpers/rng.ts";

const STEPS = 200;
/** git-undo's files a stranger may plant something at (hooks-enabled aside: without it recording is off by design). */
const PLANTABLE = ["probe", "worker.log", "pending", "worker.pid", "capture.lock", "state-blobs.json", "valid-trees", "tag-peels", "recording-problem"];

test(`a soak of ${STEPS} random steps: nothing lost, wedged or silent`, async () => {
  const seed = Number(process.env.GIT_UNDO_SOAK_SEED ?? 20261206);
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const r = autoRepo();
  // The soak edits files while the worker reads them: a check of the kept index
  // against a fresh copy read a moment later (the suite's GIT_UNDO_VERIFY_KEPT)
  // would see the newer files and cry wolf. What a capture reads mid-edit is
  // the state of that moment, recorded or taken again by the next command.
  delete r.env.GIT_UNDO_VERIFY_KEPT;
  const gitDir = r.gitDir();
  const undoDir = join(gitDir, "undo");
  const outside = join(tempDir("outside"), "precious.txt");
  const made = new Set<string>();
  const log: string[] = [];
  /** Run a command with a deadline: a step that does not end is a wedge. */
  const step = (cmd: string[], what: string) => {
    const res = Bun.spawnSync({ cmd, cwd: r.dir, env: r.env, stdout: "pipe", stderr: "pipe", timeout: 30_000 });
    log.push(`${what}: ${res.exitCode}`);
    if (res.signalCode) throw new Error(`step ${log.length} (${what}) wedged: killed by ${res.signalCode}; seed ${seed}\n${log.slice(-10).join("\n")}`);
    return res;
  };
  const git = (...args: string[]) => step(["git", ...args], `git ${args.join(" ")}`);
  /** The worker's pid; read only from a plain file (a FIFO planted at worker.pid would block the read). */
  const liveWorker = () => (lstatSync(join(undoDir, "worker.pid"), { throwIfNoEntry: false })?.isFile() ? workerPid(undoDir) : null);
  const head = () => git("rev-parse", "HEAD").stdout.toString().trim();

  for (let i = 0; i < STEPS; i++) {
    // A checkpoint: the state recorded by hand; what it holds must outlive every later step.
    if (i % 20 === 19) {
      const res = step([process.execPath, CLI, "snapshot"], "checkpoint");
      expect({ step: i, stderr: res.stderr.toString() }).toEqual({ step: i, stderr: "" });
      made.add(head());
      continue;
    }
    const roll = random();
    if (roll < 0.3) {
      r.write(`f${Math.floor(random() * 5)}.txt`, `step ${i} ${random()}\n`);
      if (random() < 0.5) git("add", "-A");
    } else if (roll < 0.45) {
      git("add", "-A");
      git("commit", "-q", "-m", `soak ${i}`);
    } else if (roll < 0.5) {
      git("branch", "-f", `b${Math.floor(random() * 3)}`);
    } else if (roll < 0.55) {
      git("stash", pick(["push", "pop"]));
    } else if (roll < 0.6) {
      git("reset", "-q", "--hard", pick(["HEAD", "HEAD~1"]));
    } else if (roll < 0.65) {
      git("checkout", "-q", pick(["b0", "b1", "main"]));
    } else if (roll < 0.72) {
      // The worker killed wherever it is.
      const pid = liveWorker();
      if (pid !== null) {
        process.kill(pid, "SIGKILL");
        log.push(`kill worker ${pid}`);
      }
    } else if (roll < 0.8) {
      // Something planted at one of git-undo's names.
      const name = pick(PLANTABLE);
      const path = join(undoDir, name);
      rmSync(path, { recursive: true, force: true });
      const kind = pick(["fifo", "link", "folder"]);
      if (kind === "fifo") step(["mkfifo", path], `mkfifo ${name}`);
      else if (kind === "link") symlinkSync(outside, path);
      else mkdirSync(path);
      log.push(`plant ${kind} at ${name}`);
    } else if (roll < 0.9) {
      // A restore, killed after a random moment or left to finish.
      const p = Bun.spawn({ cmd: [process.execPath, CLI, ...(random() < 0.5 ? [] : ["redo"])], cwd: r.dir, env: r.env, stdout: "ignore", stderr: "ignore" });
      const killAt = random() < 0.5 ? Math.floor(random() * 300) : null;
      if (killAt !== null) {
        await Bun.sleep(killAt);
        p.kill("SIGKILL");
      }
      const ended = await Promise.race([p.exited, Bun.sleep(30_000).then(() => "wedged" as const)]);
      if (ended === "wedged") throw new Error(`a restore wedged at step ${i}; seed ${seed}`);
      log.push(`restore${killAt === null ? "" : ` killed after ${killAt} ms`}: ${ended}`);
    } else {
      step([process.execPath, CLI, "snapshot"], "snapshot");
    }
  }

  // The end: whatever was planted is cleared by hand where a recording cannot (a folder with things in it stays theirs).
  // The last worker leaves (a worker that never does is a wedge). Not `settled`: a
  // folder planted at pending, or a mark a killed worker left taken, stays until
  // the next command's worker, and the final snapshot below records that state.
  r.env.GIT_UNDO_WORKER_LINGER = "0";
  await waitFor(() => liveWorker() === null, "the last worker to leave", 60_000);
  const final = step([process.execPath, CLI, "snapshot"], "final snapshot");
  // Recorded now (0), or by the worker already (1: "no change since"); nothing on stderr.
  expect({ stderr: final.stderr.toString(), out: /^(#\d+ |no change since #\d+\n)/.test(final.stdout.toString()) }).toEqual({ stderr: "", out: true });
  // Nothing silent: recording the same state again finds it recorded.
  expect(step([process.execPath, CLI, "snapshot"], "again").stdout.toString()).toMatch(/^no change since #\d+\n$/);
  // Nothing lost: every commit a checkpoint recorded is still reachable from a branch, HEAD or a snapshot.
  for (const commit of made) {
    const holders = git("for-each-ref", "--contains", commit, "--format=%(refname)").stdout.toString().trim();
    const atHead = git("merge-base", "--is-ancestor", commit, "HEAD").exitCode === 0;
    expect({ commit, held: holders !== "" || atHead }).toEqual({ commit, held: true });
  }
  // Git is whole, and git-undo left nothing behind.
  const fsck = git("fsck", "--no-dangling", "--no-progress");
  expect(fsck.stdout.toString() + fsck.stderr.toString()).not.toMatch(/missing|broken|error/i);
  expect(readdirSync(undoDir).filter((n) => n.startsWith("tmp-"))).toEqual([]);
  expect(list(r).length).toBeGreaterThan(1);
  // What is still planted is named by doctor, and nothing was written through a link.
  expect(existsSync(outside)).toBe(false);
  const doctor = step([process.execPath, CLI, "doctor"], "doctor");
  for (const name of PLANTABLE) {
    const st = lstatSync(join(undoDir, name), { throwIfNoEntry: false });
    if (st && !st.isFile()) expect(doctor.stdout.toString()).toContain(join(undoDir, name));
  }
}, 300_000);
