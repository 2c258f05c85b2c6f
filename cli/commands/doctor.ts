// git undo doctor: is automatic recording set up, and would it work? Checks the
// hooks folder, the hooks, the toolkit and Bun they start, the worker and its
// last errors, and whether something else answers to `git undo`.
import { GUARD_PROTOCOL, guardChoice, readWatchState } from "../../core/guard.ts";
import { monitorSetting } from "../../core/monitor-setting.ts";
import { gitBool } from "../../core/repo.ts";
import { accessSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { CONFIG_HOOK, CONFIG_HOOKS_SINCE, configHookCommand, configHooks, parseConfigHookCommand } from "../../core/hooks/config.ts";
import { gitVersion, versionAtLeast } from "../../core/git.ts";
import { HOOK_NAMES, hookBun, hookCallLine, shq, TOOLKIT_ROOT } from "../../core/hooks/template.ts";
import { hooksEnabled, submodulesNotRecording } from "../../core/hooks/enabled.ts";
import { hooksFolder } from "../../core/hooks/folder.ts";
import { hookStatus } from "../../core/hooks/index.ts";
import { bundleState } from "../../core/bundle.ts";
import { configRefusal } from "../../core/record.ts";
import { listSnapshots, missingSnapshotObjects, strayUndoRefs } from "../../core/snapshots/history.ts";
import { isReadable } from "../../core/format/index.ts";
import { indexLockHolder, inspectLock } from "../../core/lock.ts";
import { ownerTag } from "../../core/files.ts";
import { killedWriteLocks, recordingRemoves, refLocks, STALE_REF_LOCK_MS } from "../../core/git-data/refs/locks.ts";
import { readRefState } from "../../core/git-data/refs/store.ts";
import { deafWorker, liveWorker, markAge } from "../../worker/protocol.ts";
import { lastLogLines } from "../../core/worker-files.ts";
import { processes } from "../../core/git-data/proc/index.ts";
import { filesLeftOut } from "../../core/git-data/index/trees.ts";
import { escapeControls } from "../../core/text.ts";
import type { Command } from "../command.ts";
import { sizeText } from "../ui.ts";
import { numberRuns, spaceLine } from "./gc.ts";
import { brokenUndoFiles, undoFile, type UndoFile } from "../../core/undo-files.ts";
import { fallbackText, problemText } from "../config-words.ts";
import { errorText, wordedLogMessage } from "../refusal-words.ts";
import { runInstallCompletion } from "./completion.ts";

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

/**
 * The launcher a `git-undo` on PATH runs: the file itself (or its link's
 * target), or, for the command install.sh writes (cli/write-command), the
 * launcher of the toolkit it names in its `git_undo_root='...'` line.
 */
function launcherOf(file: string): string {
  let text = "";
  try {
    if (statSync(file).size < 4096) text = readFileSync(file, "utf8");
  } catch {
    /* unreadable: taken as it is */
  }
  const named = /^git_undo_root='((?:[^']|'\\'')*)'$/m.exec(text);
  return real(named ? join(named[1]!.replaceAll(`'\\''`, "'"), "cli", "git-undo") : file);
}

/** A lock held longer than this (seconds) is reported: no recording or restore takes that long. */
const LOCK_STUCK_S = 120;
const STALE_WHY = { dead: "a process that is gone", reused: "a process that is gone (its pid now names another)", unreadable: "a crash (its content is unreadable)" } as const;
/** Failed recordings in the last FAILURE_WINDOW_MS that make a problem rather than bad luck. */
const REPEATED_FAILURES = 3;
const FAILURE_WINDOW_MS = 3600_000;

/** worker.log's "recording failed" lines (core/worker-files.ts logLine: "<ISO date> [<pid>] <message>") since `sinceMs`. */
function recentFailures(lines: readonly string[], sinceMs: number): { count: number; last: string } {
  let count = 0;
  let last = "";
  for (const line of lines) {
    const m = /^(\S+) \[\d+\] recording failed: (.*)$/.exec(line);
    if (!m || !(Date.parse(m[1]!) >= sinceMs)) continue;
    count++;
    last = wordedLogMessage(m[2]!);
  }
  return { count, last };
}

/** How many unreadable snapshots doctor names one by one. */
const SHOWN_AT_MOST = 10;

/** What git-undo cannot do while something other than a plain file stands at one of its names. */
const BROKEN_FILE_COST: Partial<Record<UndoFile, string>> = {
  captureLock: "nothing is recorded or restored while it is there",
  indexLockOwner: "no restore runs while it is there",
  ownSnapshots: "git-undo cannot tell its own snapshots from fetched ones, and counts them all as its own",
  refWriteOwner: "the locks a killed git-undo leaves are not removed by the next recording",
  hooksEnabled: "the hooks record only where it is a plain file, so nothing is recorded here; after removing it, run 'git undo init'",
  pending: "the hooks cannot mark a change, so nothing is recorded (the next recording removes it)",
  workerLog: "the worker's messages are lost (the next recording removes it)",
};

/**
 * Why git-undo cannot create files in its folder (or in the git directory,
 * where the folder is to be made), or null when it can: tried for real with a
 * file named by its owner, removed at once (the next run sweeps one a kill left).
 */
function undoFolderUnwritable(undoDir: string): string | null {
  try {
    mkdirSync(undoDir, { recursive: true });
    const probe = join(undoDir, `.doctor.git-undo-${ownerTag()}`);
    writeFileSync(probe, "");
    unlinkSync(probe);
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}

export const doctor: Command = {
  name: "doctor",
  usage: "git undo doctor\n\nExits 1 when it finds a problem.",
  options: {},
  async run(_, ctx) {
    const { color, out } = ctx.output;
    ctx.configWarnings.wordedByCommand("all"); // listed below, each with what applies instead
    const repo = await ctx.openRepo();
    let problems = 0;
    const ok = (msg: string) => out(`${color.green("ok")}       ${msg}`);
    const bad = (msg: string) => {
      problems++;
      out(`${color.red("problem")}  ${msg}`);
    };
    const note = (msg: string) => out(`${color.yellow("note")}     ${msg}`);

    const folder = await hooksFolder(repo);
    const version = await gitVersion(repo.git);
    const configRuns = versionAtLeast(version, CONFIG_HOOKS_SINCE);
    const defined = await configHooks(repo);
    // git-undo's entry in the configuration (init on Git 2.54+), if init wrote one.
    const undoHook = defined.find((h) => h.name === CONFIG_HOOK && h.command !== null && parseConfigHookCommand(h.command) !== null);
    const fromFile = (origin: string | null) => (origin ?? "").replace(/^file:/, "") || "the command line";
    const where = folder.configured === null ? "(the default)" : `(core.hooksPath = ${folder.configured}${folder.origin ? `, from ${folder.origin.replace(/^file:/, "")}` : ""})`;
    // Config hooks run whatever core.hooksPath says: a folder Git cannot use then only matters to hook files.
    if (folder.problem && undoHook && configRuns) note(`hooks folder: ${folder.problem}; Git runs no hook files there (git-undo's hooks are in the configuration)`);
    else if (folder.problem) bad(`hooks folder: ${folder.problem}; Git runs no hooks, so nothing is recorded automatically`);
    else ok(`hooks folder: ${folder.dir} ${where}`);
    if (folder.where === "outside") note("that folder is outside this repository: its hooks run in every repository using it");
    // What to run: where init installs hook files it refuses a folder Git cannot use, and one outside without --global-hooks.
    const runInit = configRuns
      ? "run 'git undo init'"
      : folder.problem
        ? "unset core.hooksPath or point it at a folder, then run 'git undo init'"
        : folder.where === "outside"
          ? "run 'git undo init --global-hooks' (its hooks act only where init ran)"
          : "run 'git undo init'";

    if (hooksEnabled(repo)) ok(`recording is on here (${repo.undoDir})`);
    else if (!brokenUndoFiles(repo.undoDir).some((b) => b.name === "hooksEnabled")) bad(`recording is off here: init has not run here (no ${undoFile(repo.undoDir, "hooksEnabled")}); ${runInit}`);
    for (const p of repo.config.problems) bad(`${problemText(p)}; ${fallbackText(p.key)}`);
    // Each submodule is a repository of its own, with its own init: the superproject's hooks never see it.
    const submodules = await submodulesNotRecording(repo);
    const offSubmodules = Array.isArray(submodules) ? submodules : [];
    if (!Array.isArray(submodules)) note(`Git cannot list the submodules (${escapeControls(submodules.gitError)}), so doctor cannot say which record; each records only once 'git undo init' ran in it`);
    const here = real(repo.cwd);
    for (const sub of offSubmodules) {
      const from = relative(here, join(repo.workTree!, sub.path)) || ".";
      const shown = /^[\w./@%+=:,-]+$/.test(from) ? from : shq(from);
      bad(`submodule ${escapeControls(sub.path)}: recording is off there (init has not run in it), so nothing in it is recorded; turn it on with: git -C ${escapeControls(shown)} undo init`);
    }
    if (offSubmodules.length > 1) note("or turn it on in every submodule at once: git submodule foreach --recursive git undo init");

    const bun = hookBun(ctx.io.env, ctx.io.runtime);
    const bunsSeen = new Set<string>();
    const files = hookStatus(folder, TOOLKIT_ROOT, bun);
    if (undoHook) {
      const named = parseConfigHookCommand(undoHook.command!)!;
      const missing = HOOK_NAMES.filter((e) => !undoHook.events.includes(e));
      const v = version.join(".");
      if (!configRuns) bad(`hook.${CONFIG_HOOK} is set in ${fromFile(undoHook.commandOrigin)}, but Git ${v} runs no hooks from the configuration (they came in 2.54); run 'git undo init' again, which installs hook files`);
      else if (undoHook.enabled === false) {
        bad(`hook.${CONFIG_HOOK}.enabled=false (in ${fromFile(undoHook.enabledOrigin)}): Git runs none of git-undo's hooks, so nothing is recorded; git config --unset hook.${CONFIG_HOOK}.enabled turns them on`);
      } else if (missing.length) bad(`hook.${CONFIG_HOOK} runs for no ${missing.join(" and no ")} event; run 'git undo init'`);
      else if (!existsSync(join(named.root, "worker", "main.ts"))) bad(`hook.${CONFIG_HOOK} starts the worker from ${named.root}, which is gone; run 'git undo init' again`);
      else if (undoHook.command !== configHookCommand(TOOLKIT_ROOT, bun)) note(`hook.${CONFIG_HOOK}: set by another checkout or Bun (${named.root}); 'git undo init' updates it`);
      else ok(`hooks: hook.${CONFIG_HOOK} in ${fromFile(undoHook.commandOrigin)} runs ${join(named.root, "hooks")}/ on ${HOOK_NAMES.join(" and ")}`);
      bunsSeen.add(named.bun);
      if (files.some((h) => h.hasBlock)) note(`the hook files in ${folder.dir} hold git-undo's block as well, so the hooks start twice; 'git undo init' removes the blocks`);
    }
    // A folder Git cannot use is the one problem: its files are not looked at.
    for (const h of undoHook || folder.problem ? [] : files) {
      // A hook init cannot add its block to: on Git 2.54+ init leaves it alone (config hooks); before, the two ways on.
      const chainOrCall = (what: string) =>
        configRuns
          ? `${what}; ${runInit} (on this Git it registers its hooks in the configuration and leaves this file alone)`
          : `${what}; 'git undo init --chain' keeps it as ${h.path}.local and installs git-undo's hook, which runs it with the same arguments, stdin and exit status, ` +
            `or have it run ${hookCallLine(TOOLKIT_ROOT, bun)} with its arguments`;
      if (!h.exists) bad(`${h.name}: ${h.path} does not exist${h.linkTo !== null ? ` (a symbolic link to ${h.linkTo}, which is missing)` : ""}; ${runInit}`);
      else if (!h.hasBlock && h.calls !== null) {
        if (!existsSync(join(h.calls, "worker", "main.ts"))) bad(`${h.name}: ${h.path} calls git-undo's hook in ${h.calls}, which is gone; have it run ${hookCallLine(TOOLKIT_ROOT, bun)} with its arguments`);
        else if (!h.executable) bad(`${h.name}: ${h.path} calls git-undo's hook but is not executable, so Git does not run it`);
        else {
          ok(`${h.name}: ${h.path} calls git-undo's hook itself (${h.calls})`);
          if (real(h.calls) !== real(TOOLKIT_ROOT)) note(`${h.name}: it calls another checkout than this one (${TOOLKIT_ROOT})`);
        }
      } else if (!h.hasBlock && h.linkTo !== null) bad(chainOrCall(`${h.name}: ${h.path} is a symbolic link (to ${h.linkTo}) with no git-undo block`));
      else if (!h.hasBlock && !h.shell) bad(chainOrCall(`${h.name}: ${h.path} is not a shell script, so init cannot add its block`));
      else if (!h.hasBlock && !h.executable) bad(`${h.name}: ${h.path} is not executable, so Git does not run it; make it executable or remove it, then ${runInit}`);
      else if (!h.hasBlock) bad(`${h.name}: ${h.path} has no git-undo block; ${runInit}`);
      else if (!h.executable) bad(`${h.name}: ${h.path} is not executable, so Git does not run it`);
      else {
        const toolkit = h.root ?? "";
        if (!existsSync(join(toolkit, "worker", "main.ts"))) bad(`${h.name}: it starts the worker from ${toolkit}, which is gone; run 'git undo init' again`);
        else if (!h.current) note(`${h.name}: installed by another version or checkout (${toolkit}); 'git undo init' updates it`);
        else if (h.chained) ok(`${h.name}: installed and executable; it runs your hook ${h.chained.local} after it`);
        else ok(`${h.name}: installed and executable`);
        if (h.chained && !h.chained.exists) note(`${h.name}: your hook ${h.chained.local} is gone, so git-undo's hook runs alone ('git undo uninstall' would then delete it)`);
        if (h.bun) bunsSeen.add(h.bun);
      }
    }
    // The user's own config hooks for the same events: Git runs each with its own copy of the arguments and stdin.
    if (configRuns) {
      for (const h of defined) {
        const events = h.events.filter((e) => (HOOK_NAMES as readonly string[]).includes(e));
        if (h === undoHook || h.command === null || !events.length) continue;
        const off = h.enabled === false ? " (disabled: hook." + h.name + ".enabled=false)" : "";
        note(`your config hook ${h.name} (${events.join(", ")}, from ${fromFile(h.commandOrigin)})${off} runs next to git-undo's with its input intact; git-undo's own Git calls do not run it`);
      }
    }
    // Started as the hooks start it (cli/start-worker): the Bun they name, or the one the launcher would find.
    const startWorker = (named: string) =>
      Bun.spawnSync({ cmd: ["sh", join(TOOLKIT_ROOT, "cli", "start-worker"), named, "--check"], cwd: repo.cwd, env: { ...ctx.io.env }, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    const starts = (r: ReturnType<typeof startWorker>) => r.exitCode === 0 && r.stdout.toString().trim() === "ok";
    for (const b of bunsSeen) {
      if (executable(b)) continue;
      if (starts(startWorker(b))) note(`the hooks name Bun at ${b}, which is gone; they fall back to the Bun the launcher finds`);
      else bad(`the hooks start the worker with Bun at ${b}, which is gone; run 'git undo init' again`);
    }
    const check = startWorker(bun);
    if (starts(check)) ok(`the worker starts (${bun})`);
    else bad(`the worker does not start with ${bun}: ${check.stderr.toString().trim().split("\n").pop() || `exit ${check.exitCode}`}`);

    // The guard (core.fsmonitor): registered or not, and whether its answers come from a watch.
    const monitor = monitorSetting(repo.settings.get("core.fsmonitor"), gitBool);
    const wanted = repo.workTree !== null && guardChoice(repo.config, repo.workTree, process.platform).wanted;
    if (repo.bare) {
      /* no working tree to guard */
    } else if (monitor.kind === "guard") {
      if (repo.config.guard === false) note("the guard is registered as core.fsmonitor but undo.guard is false: every command goes on at once; 'git undo init' takes it out");
      else if (!existsSync(join(monitor.root, "hooks", "hook.sh"))) bad(`the guard (core.fsmonitor) runs ${join(monitor.root, "hooks", "hook.sh")}, which is gone; run 'git undo init' again`);
      else if (repo.settings.get("core.fsmonitorhookversion") !== String(GUARD_PROTOCOL)) bad(`core.fsmonitorHookVersion is not ${GUARD_PROTOCOL}, which the guard speaks; run 'git undo init' again`);
      else {
        ok("the guard: core.fsmonitor records before a Git command throws away work no snapshot holds");
        const watch = readWatchState(repo.undoDir);
        if (watch?.startsWith("off: ")) {
          note(`the guard answers Git "look at every file" each time (slower, and git status then rewrites the index): ${watch.slice(5)}; 'git config undo.guard false', then 'git undo init', turns the guard off`);
        }
      }
    } else if (wanted && monitor.kind === "none") {
      // Said only where init ran: elsewhere the advice to run init is already there, once.
      if (hooksEnabled(repo)) note(`the guard is not registered${repo.config.guard === true ? " (undo.guard is true)" : ""}, so edits no Git command saw are not recorded before a command throws them away; run 'git undo init'`);
    } else if (wanted && monitor.kind !== "none") {
      note(`core.fsmonitor is yours (${monitor.kind === "builtin" ? "Git's own monitor" : escapeControls(monitor.command)}), so the guard is off: edits no Git command saw are not recorded before a command throws them away`);
    }

    // Without a bundle (a checkout not set up with install.sh, a package packed where Bun was missing) every command loads each module.
    const bundle = bundleState(TOOLKIT_ROOT);
    const buildIt = `${shq(bun)} ${shq(join(TOOLKIT_ROOT, "build", "bundle.ts"))}${existsSync(join(TOOLKIT_ROOT, "install.sh")) && existsSync(join(TOOLKIT_ROOT, ".git")) ? " (or install.sh)" : ""}`;
    if (bundle.state === "stale") {
      note(`the bundle in ${bundle.dir} is older than the sources: git-undo runs from the sources (about 10 ms slower a command) until ${buildIt} builds it again`);
    } else if (bundle.state === "absent") {
      note(`git-undo runs from its sources, with no bundle (${bundle.dir} is missing): every command and every recording starts about 10 ms slower; ${buildIt} builds it`);
    }

    // Shell completion, which npm's install script sets up (and npm 11.19+ skips): the files where this install puts them.
    const completion = runInstallCompletion(ctx.io, ["--check"]);
    const noCompletion = completion.stdout.split("\n").filter(Boolean).map((line) => line.split(" ")[0]);
    if (completion.code === 1 && noCompletion.length) {
      note(`shell completion is not set up for ${noCompletion.join(", ")}; 'git undo completion install' sets it up`);
    }

    const pid = liveWorker(repo.undoDir, processes().table);
    const age = markAge(repo.undoDir);
    if (pid !== null) ok(`a worker is running (pid ${pid})`);
    else if (age !== null && age > repo.config.settleMs + 5000) {
      bad(`changes have waited ${Math.round(age / 1000)}s for a worker that is not running (${undoFile(repo.undoDir, "pending")})`);
    }
    // Said only while the guards skip their wait for it: any other worker they wait for as before.
    const deaf = monitor.kind === "guard" && repo.config.guardTimeoutMs > 0 ? deafWorker(repo.undoDir) : null;
    if (deaf !== null) {
      note(`a Git command waited undo.guardTimeout for the worker (pid ${deaf}), alive but not answering: until it reads the guard's requests again, commands do not wait for it, so edits no command saw are not recorded before a command throws them away; ending it ('kill ${deaf}') lets the next Git command start another`);
    }
    const log = lastLogLines(repo.undoDir, 5);
    if (log.length) {
      note(`the worker's last messages (${undoFile(repo.undoDir, "workerLog")}):`);
      // A refusal is logged as its facts: shown in its words.
      for (const line of log) out(`           ${line.replace(/^(\S+ \[\d+\] [^:]+: )(.*)$/, (_, head: string, text: string) => head + wordedLogMessage(text))}`);
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
    // Locks a killed Git (or git-undo) left: they block recording, restoring, and the user's own commands.
    // Paths come from the file system: control characters made visible.
    const quote = (p: string) => `'${escapeControls(p).replace(/'/g, "'\\''")}'`;
    const killedOurs = new Set(killedWriteLocks(repo).map((l) => l.path));
    for (const lock of refLocks(repo)) {
      const age = Math.round(lock.ageMs / 1000);
      if (lock.ageMs < STALE_REF_LOCK_MS) {
        note(`${escapeControls(lock.path)} is held: a Git command is writing refs right now`);
      } else if (recordingRemoves(repo, lock)) {
        note(`${escapeControls(lock.path)} was left ${age}s ago by a Git that was killed; the next recording removes it`);
      } else if (killedOurs.has(lock.path)) {
        bad(`${escapeControls(lock.path)} was left by git-undo, killed while it changed refs; the next recording removes it, or remove it now: rm ${quote(lock.path)}`);
      } else {
        const blocks =
          lock.kind === "ref" ? `Git cannot change ${escapeControls(lock.ref!)} while it exists` : lock.kind === "packed-refs" ? "Git cannot delete any ref (git branch -d, git tag -d, git undo gc) while it exists" : "Git cannot change any ref while it exists";
        bad(`${escapeControls(lock.path)} has been there for ${age}s: ${blocks}; if no Git command is running, one that crashed left it: rm ${quote(lock.path)}`);
      }
    }
    if (!repo.bare) {
      const index = indexLockHolder(repo.indexFile, repo.undoDir);
      if (index.kind === "git-undo-gone") {
        bad(`${escapeControls(index.path)} was left by a git-undo restore that was killed (pid ${index.pid}); Git cannot write the index while it exists. The next recording or git undo removes it, or remove it now: rm ${quote(index.path)}`);
      } else if (index.kind === "git-undo-alive") {
        note(`${escapeControls(index.path)} is held by git-undo (pid ${index.pid}): it is restoring right now`);
      } else if (index.kind === "other" && index.ageMs >= STALE_REF_LOCK_MS) {
        bad(`${escapeControls(index.path)} has been there for ${Math.round(index.ageMs / 1000)}s: Git cannot write the index while it exists; if no Git command is running, one that crashed left it: rm ${quote(index.path)}`);
      }
    }
    // A configuration value Git dies on (Git 2.55's git add and a bad color.ui) fails every recording: ask git add.
    if (repo.workTree !== null) {
      const probe = await repo.git.run(["add", "--dry-run", "--ignore-missing", "--", ":(literal)git-undo-doctor-probe"], { okExit: [1, 128] });
      const refused = probe.exitCode === 0 ? null : await configRefusal(repo, new Error(probe.stderr));
      if (refused) bad(`recording fails: ${errorText(refused)}`);
    }
    const failures = recentFailures(lastLogLines(repo.undoDir, 200), Date.now() - FAILURE_WINDOW_MS);
    if (failures.count >= REPEATED_FAILURES) {
      bad(`the worker failed to record ${failures.count} times in the last hour; the last error: ${failures.last}`);
    }

    // What answers to `git undo`: Git looks in its exec path, then PATH, and only then at aliases.
    const ours = real(join(TOOLKIT_ROOT, "cli", "git-undo"));
    const execPath = await repo.git.line(["--exec-path"]);
    const dirs = [execPath, ...(ctx.io.env.PATH ?? "").split(":").filter(Boolean)];
    const found = dirs.map((d) => join(d, "git-undo")).find(executable);
    const launcher = found === undefined ? undefined : launcherOf(found);
    const alias = await repo.git.run(["config", "--get", "alias.undo"], { okExit: [1] });
    const aliasValue = new TextDecoder().decode(alias.stdout).trim();
    if (found === undefined) {
      if (aliasValue) bad(`'git undo' runs the alias undo = ${aliasValue}: no git-undo is on PATH (run ${join(TOOLKIT_ROOT, "install.sh")})`);
      else bad(`'git undo' finds no git-undo on PATH; run ${join(TOOLKIT_ROOT, "install.sh")}`);
    } else if (launcher !== ours) {
      bad(`'git undo' runs ${found}${launcher !== found ? ` (${launcher})` : ""}, not this toolkit (${ours}); git-extras ships a git-undo of its own`);
    } else {
      ok(`'git undo' runs this toolkit (${found})`);
      if (aliasValue) note(`the alias undo = ${aliasValue} is shadowed by git-undo on PATH`);
    }
    // Refs under refs/undo/ that no reader takes for a snapshot (fetched from elsewhere, or damaged).
    const STRAY_WHY = { name: "not a snapshot's name", symbolic: "a symbolic ref", "not-a-commit": "not a commit" } as const;
    const strayRefs = await strayUndoRefs(repo);
    const stray = strayRefs.filter((r) => r.why !== "missing");
    if (stray.length) {
      note(`${stray.length} ref${stray.length === 1 ? "" : "s"} under refs/undo/ ${stray.length === 1 ? "is" : "are"} not a snapshot and ${stray.length === 1 ? "is" : "are"} ignored (git update-ref -d <ref> removes one):`);
      for (const r of stray) out(`           ${escapeControls(r.ref)} (${STRAY_WHY[r.why as keyof typeof STRAY_WHY]})`);
    }
    for (const r of strayRefs.filter((r) => r.why === "missing")) {
      bad(`${escapeControls(r.ref)} names an object that is missing from the repository: that snapshot is lost; 'git fsck' says more, 'git update-ref -d ${escapeControls(r.ref)}' removes the ref`);
    }
    // The snapshots themselves: those no reader can use, and objects they hold that are gone.
    const snaps = await listSnapshots(repo);
    const unusable = snaps.filter((s) => !isReadable(s));
    if (unusable.length) {
      const many = unusable.length !== 1;
      note(`${unusable.length} snapshot${many ? "s" : ""} cannot be read; undo and redo pass over ${many ? "them" : "it"}, 'git undo list' marks ${many ? "them" : "it"}:`);
      for (const s of unusable.slice(0, SHOWN_AT_MOST)) out(`           #${s.number}: ${escapeControls(isReadable(s) ? "" : s.reason)}`);
      if (unusable.length > SHOWN_AT_MOST) out(`           and ${unusable.length - SHOWN_AT_MOST} more`);
    }
    const { missing, needing } = await missingSnapshotObjects(repo, snaps);
    if (missing.length) {
      const many = missing.length !== 1;
      const damaged = snaps.filter((s) => needing.has(s.commit)).map((s) => s.number);
      const which = damaged.length === 1 ? `snapshot #${damaged[0]} needs ${many ? "them" : "it"}` : `snapshots ${numberRuns(damaged)} need ${many ? "them" : "it"}`;
      bad(
        `${missing.length} object${many ? "s" : ""} the snapshots hold ${many ? "are" : "is"} missing from the repository (${missing.slice(0, 3).join(", ")}${many && missing.length > 3 ? ", ..." : ""}); ` +
          (damaged.length
            ? `${which}, so Git's gc, repack and fsck fail and no restore of ${damaged.length === 1 ? "it" : "them"} can succeed; 'git undo gc' deletes ${damaged.length === 1 ? "it" : "them"} and keeps the others ('git undo gc --dry-run' shows which)`
            : `a restore that needs one refuses and names it; 'git fsck' says more`),
      );
    }
    // git-undo's own folder: it must be writable, and hold plain files at git-undo's names.
    const unwritable = undoFolderUnwritable(repo.undoDir);
    if (unwritable) bad(`git-undo cannot write in ${repo.undoDir} (${unwritable}): nothing is recorded or restored; check its owner and permissions (ls -ld '${repo.undoDir.replace(/'/g, "'\\''")}')`);
    for (const b of brokenUndoFiles(repo.undoDir)) {
      const rm = `rm -r '${escapeControls(b.path).replace(/'/g, "'\\''")}'`;
      if (b.cache) note(`${escapeControls(b.path)} is a ${b.kind}, not git-undo's cache: git-undo does without it (a little slower) until it is removed: ${rm}`);
      else bad(`${escapeControls(b.path)} is a ${b.kind}, not git-undo's file: ${BROKEN_FILE_COST[b.name] ?? "git-undo cannot use it"}; ${rm}`);
    }
    // Refs whose object Git cannot read: recorded as far as they can be (docs/format.md, `refs`).
    const { unreadable = [] } = await readRefState(repo);
    for (const u of unreadable) {
      const name = escapeControls(u.name);
      if (u.why === "unpeelable-tag") {
        note(`${name} points at a tag Git cannot read or peel (${u.object}); snapshots record it by its id alone; 'git fsck' says more`);
      } else {
        bad(`${name} points at ${u.object}, which is missing from the repository, so no snapshot records it; 'git fsck' says more, 'git update-ref -d ${name}' removes the ref`);
      }
    }
    // Untracked files too large to record: the user should know they are not protected.
    const leftOut = await filesLeftOut(repo);
    if (leftOut.length) {
      const many = leftOut.length !== 1;
      note(
        `${leftOut.length} untracked file${many ? "s are" : " is"} larger than undo.maxNewFileSize (${sizeText(repo.config.maxNewFileSize)}), so no snapshot holds ${many ? "them" : "it"}; ` +
          `'git config undo.maxNewFileSize <size>' raises the limit, 0 removes it:`,
      );
      for (const f of leftOut) out(`           ${escapeControls(f.path)} (${sizeText(f.size)})`);
    }
    // What the history costs: `git undo gc` forgets old snapshots (undo.expire).
    note(`${await spaceLine(repo)}; 'git undo gc --dry-run' shows what expiring old ones would free`);
    out(problems ? `${problems} problem${problems === 1 ? "" : "s"} found` : "everything looks right");
    return problems ? 1 : 0;
  },
};
