// git undo doctor: is automatic recording set up, and would it work? Checks the
// hooks folder, the hooks, the toolkit and Bun they start, the worker and its
// last errors, and whether something else answers to `git undo`.
import { accessSync, constants, existsSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { ENABLED, hookBun, hooksEnabled, hooksFolder, hookStatus, TOOLKIT_ROOT } from "../../core/hooks.ts";
import { strayUndoRefs } from "../../core/history.ts";
import { inspectLock } from "../../core/lock.ts";
import { openRepo } from "../../core/repo.ts";
import { lastLogLines, liveWorker, markAge, MARK } from "../../core/settle.ts";
import type { Command } from "../command.ts";
import { color, out } from "../ui.ts";

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** A lock held longer than this (seconds) is reported: no recording or restore takes that long. */
const LOCK_STUCK_S = 120;
const STALE_WHY = { dead: "a process that is gone", reused: "a process that is gone (its pid now names another)", unreadable: "a crash (its content is unreadable)" } as const;
/** Failed recordings in the last FAILURE_WINDOW_MS that make a problem rather than bad luck. */
const REPEATED_FAILURES = 3;
const FAILURE_WINDOW_MS = 3600_000;

/** worker.log's "recording failed" lines (core/settle.ts logLine: "<ISO date> [<pid>] <message>") since `sinceMs`. */
function recentFailures(lines: readonly string[], sinceMs: number): { count: number; last: string } {
  let count = 0;
  let last = "";
  for (const line of lines) {
    const m = /^(\S+) \[\d+\] recording failed: (.*)$/.exec(line);
    if (!m || !(Date.parse(m[1]!) >= sinceMs)) continue;
    count++;
    last = m[2]!;
  }
  return { count, last };
}

export const doctor: Command = {
  name: "doctor",
  usage: "git undo doctor\n\nExits 1 when it finds a problem.",
  options: {},
  async run() {
    const repo = await openRepo();
    let problems = 0;
    const ok = (msg: string) => out(`${color.green("ok")}       ${msg}`);
    const bad = (msg: string) => {
      problems++;
      out(`${color.red("problem")}  ${msg}`);
    };
    const note = (msg: string) => out(`${color.yellow("note")}     ${msg}`);

    const folder = await hooksFolder(repo);
    const where = folder.configured === null ? "(the default)" : `(core.hooksPath = ${folder.configured}${folder.origin ? `, from ${folder.origin.replace(/^file:/, "")}` : ""})`;
    if (folder.problem) bad(`hooks folder: ${folder.problem}; Git runs no hooks, so nothing is recorded automatically`);
    else ok(`hooks folder: ${folder.dir} ${where}`);
    if (folder.where === "outside") note("that folder is outside this repository: its hooks run in every repository using it");

    if (hooksEnabled(repo)) ok(`recording is on here (${repo.undoDir})`);
    else bad(`recording is off here: init has not run here (no ${join(repo.undoDir, ENABLED)}); run 'git undo init'`);

    const bun = hookBun();
    const bunsSeen = new Set<string>();
    for (const h of hookStatus(folder, TOOLKIT_ROOT, bun)) {
      if (!h.exists) bad(`${h.name}: ${h.path} does not exist; run 'git undo init'`);
      else if (!h.hasBlock) bad(`${h.name}: ${h.path} has no git-undo block; run 'git undo init'`);
      else if (!h.executable) bad(`${h.name}: ${h.path} is not executable, so Git does not run it`);
      else {
        const toolkit = h.root ?? "";
        if (!existsSync(join(toolkit, "worker", "main.ts"))) bad(`${h.name}: it starts the worker from ${toolkit}, which is gone; run 'git undo init' again`);
        else if (!h.current) note(`${h.name}: installed by another version or checkout (${toolkit}); 'git undo init' updates it`);
        else ok(`${h.name}: installed and executable`);
        if (h.bun) bunsSeen.add(h.bun);
      }
    }
    for (const b of bunsSeen) {
      if (executable(b)) continue;
      if (executable(join(TOOLKIT_ROOT, ".tools", "node_modules", ".bin", "bun"))) note(`the hooks name Bun at ${b}, which is gone; they fall back to the toolkit's own`);
      else bad(`the hooks start the worker with Bun at ${b}, which is gone; run 'git undo init' again`);
    }

    // Started as the hooks start it: no bunfig.toml or .env from this repository, no cache in $HOME.
    const check = Bun.spawnSync({
      cmd: [bun, "--config=/dev/null", "--no-env-file", "--no-install", join(TOOLKIT_ROOT, "worker", "main.ts"), "--check"],
      env: { ...process.env, BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0" },
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    });
    if (check.exitCode === 0 && check.stdout.toString().trim() === "ok") ok(`the worker starts (${bun})`);
    else bad(`the worker does not start with ${bun}: ${check.stderr.toString().trim().split("\n").pop() ?? `exit ${check.exitCode}`}`);

    const pid = liveWorker(repo.undoDir);
    const age = markAge(repo.undoDir);
    if (pid !== null) ok(`a worker is running (pid ${pid})`);
    else if (age !== null && age > repo.config.settleMs + 5000) {
      bad(`changes have waited ${Math.round(age / 1000)}s for a worker that is not running (${join(repo.undoDir, MARK)})`);
    }
    const log = lastLogLines(repo.undoDir, 5);
    if (log.length) {
      note(`the worker's last messages (${join(repo.undoDir, "worker.log")}):`);
      for (const line of log) out(`           ${line}`);
    }

    // capture.lock and the worker's failures: what keeps recording or restoring from happening.
    const lock = inspectLock(repo.undoDir);
    const heldFor = lock.writtenMs === null ? 0 : Math.max(0, Math.round((Date.now() - lock.writtenMs) / 1000));
    if (lock.state === "foreign") {
      bad(
        `${lock.path} is held by git-undo on another host (${lock.host}, pid ${lock.pid}); nothing is recorded or restored here while it stays. ` +
          `If no git-undo runs there, remove it: rm '${lock.path.replace(/'/g, "'\\''")}'`,
      );
    } else if (lock.state === "held" && heldFor > LOCK_STUCK_S) {
      bad(`${lock.path} has been held by pid ${lock.pid} for ${heldFor}s; git-undo waits for it, then refuses (is that process stuck?)`);
    } else if (lock.state === "held") {
      note(`${lock.path} is held by pid ${lock.pid}: it is recording or restoring right now`);
    } else if (lock.state === "stale") {
      note(`${lock.path} was left by ${STALE_WHY[lock.reason ?? "dead"]}; the next recording takes it over`);
    }
    const failures = recentFailures(lastLogLines(repo.undoDir, 200), Date.now() - FAILURE_WINDOW_MS);
    if (failures.count >= REPEATED_FAILURES) {
      bad(`the worker failed to record ${failures.count} times in the last hour; the last error: ${failures.last}`);
    }

    // What answers to `git undo`: Git looks in its exec path, then PATH, and only then at aliases.
    const ours = real(join(TOOLKIT_ROOT, "cli", "git-undo"));
    const execPath = await repo.git.line(["--exec-path"]);
    const dirs = [execPath, ...(process.env.PATH ?? "").split(":").filter(Boolean)];
    const found = dirs.map((d) => join(d, "git-undo")).find(executable);
    const alias = await repo.git.run(["config", "--get", "alias.undo"], { okExit: [1] });
    const aliasValue = new TextDecoder().decode(alias.stdout).trim();
    if (found === undefined) {
      if (aliasValue) bad(`'git undo' runs the alias undo = ${aliasValue}: no git-undo is on PATH (run ${join(TOOLKIT_ROOT, "install.sh")})`);
      else bad(`'git undo' finds no git-undo on PATH; run ${join(TOOLKIT_ROOT, "install.sh")}`);
    } else if (real(found) !== ours) {
      bad(`'git undo' runs ${found}${real(found) !== found ? ` (${real(found)})` : ""}, not this toolkit (${ours}); git-extras ships a git-undo of its own`);
    } else {
      ok(`'git undo' runs this toolkit (${found})`);
      if (aliasValue) note(`the alias undo = ${aliasValue} is shadowed by git-undo on PATH`);
    }
    // Refs under refs/undo/ that no reader takes for a snapshot (fetched from elsewhere, or damaged).
    const STRAY_WHY = { name: "not a snapshot's name", symbolic: "a symbolic ref", "not-a-commit": "not a commit" } as const;
    const stray = await strayUndoRefs(repo);
    if (stray.length) {
      note(`${stray.length} ref${stray.length === 1 ? "" : "s"} under refs/undo/ ${stray.length === 1 ? "is" : "are"} not a snapshot and ${stray.length === 1 ? "is" : "are"} ignored (git update-ref -d <ref> removes one):`);
      for (const r of stray) out(`           ${r.ref} (${STRAY_WHY[r.why]})`);
    }
    out(problems ? `${problems} problem${problems === 1 ? "" : "s"} found` : "everything looks right");
    return problems ? 1 : 0;
  },
};
