// The settling worker the hooks start: `bun worker/main.ts <gitdir> <worktree-top>`.
// One per worktree (its pid file and lease; recordings also take capture.lock).
// It reads the pids the hooks append to the mark, follows them to the Git
// command the user started, and once every process of it has exited and
// undo.settle more has passed without a new mark (worker/settle.ts), takes the
// mark and records one change snapshot; it repeats while marks arrive, and
// exits once nothing has been marked for a while (worker/protocol.ts lingerMs).
// It never prints: errors go to <gitdir>/undo/worker.log.
import { appendFileSync, closeSync, existsSync, readdirSync, readlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { runEntry } from "../core/bundle.ts";
import { seamsFromEnv } from "../core/seams.ts";
import { errorMessage } from "../core/errors.ts";
import { writeOnlyWhile } from "../core/repository-gone.ts";
import { processes, processesFor, selfCpuMs, useProcesses, type OwnProcess } from "../core/git-data/proc/index.ts";
import {
  claimWorker,
  dropTaken,
  GitDirHold,
  hasMark,
  hasTaken,
  markStartedMs,
  LEASE_RENEW_MS,
  lingerForMark,
  lingerMs,
  lingerSetting,
  lowerPriority,
  MarkWatch,
  readMark,
  releaseWorker,
  renewLease,
  restoreMark,
  takeMark,
  type MarkCursor,
  type MarkRead,
} from "./protocol.ts";
import type { Repo } from "../core/repo.ts";
import { indexLocked, operationFiles, operationMarker } from "../core/git-data/operation.ts";
import { refFormatKept, refMigrationRunning } from "../core/git-data/refs/migration.ts";
import { clearRecordingProblem, logLine, noteRecordingProblem } from "../core/worker-files.ts";
import { CommandWatch, earlyReadIn, NO_PROCESS_QUIET_MS, quietFrom, READ_AFTER_MS, RUNNING_QUIET_MS, settleDelay, type SettleView } from "./settle.ts";
import { GuardDesk } from "./guard-desk.ts";
import { dropOldAnswers, guardRequests, writeGuardBound } from "../core/guard.ts";
import { monitorSetting } from "../core/monitor-setting.ts";
import { DEFAULT_CONFIG, gitBool } from "../core/repo.ts";
import { WatchKeeper, type TreeWatch } from "./tree-watch.ts";

/**
 * The hook's environment describes the Git command that fired it: a temporary
 * index, a quarantine, `-c` settings, its dates. None of that is the state to
 * record, so only variables that say who the user is and how Git is set up stay.
 */
const KEEP = new Set([
  "GIT_CONFIG_NOSYSTEM",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_EXEC_PATH",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "GIT_CEILING_DIRECTORIES",
]);

export function scrubEnvironment(env: NodeJS.ProcessEnv): void {
  for (const key of Object.keys(env)) {
    if (!key.startsWith("GIT_") || KEEP.has(key)) continue;
    if (key.startsWith("GIT_UNDO_") && key !== "GIT_UNDO_INTERNAL") continue;
    delete env[key];
  }
}

/** This process as the core is given it: its pid, and kill(pid, 0) sent from it. */
const OWN_PROCESS: OwnProcess = { pid: process.pid, signal: (pid) => process.kill(pid, 0) };

/**
 * GIT_UNDO_WORKER_TRACE=<file> (tests, bench/scripted.ts): a line per start
 * and stop; a stop also gives the CPU milliseconds this worker and the Git
 * processes it waited for have used, from /proc.
 */
function trace(event: string): void {
  const path = process.env.GIT_UNDO_WORKER_TRACE;
  if (!path) return;
  appendFileSync(path, event === "stop" ? `stop ${process.pid} ${selfCpuMs() ?? ""}\n` : `${event} ${process.pid}\n`);
}

/** GIT_UNDO_DEBUG_SETTLE=<file>: a line per decision of the settling loop, for tests being diagnosed. */
function debug(line: string): void {
  const path = process.env.GIT_UNDO_DEBUG_SETTLE;
  if (path) appendFileSync(path, `${Date.now()} [${process.pid}] ${line}\n`);
}

/**
 * Wait, the state read, until `until` (undo.settle after its command ended):
 * false when a hook marks before then (the next command of a script, which the
 * recording then covers too).
 */
async function quietUntil(undoDir: string, until: number, marks: MarkWatch, readOnly: (pid: number) => boolean): Promise<boolean> {
  for (;;) {
    const marked = markStartedMs(undoDir);
    // A mark of read-only commands alone (the index refresh of a `git status` the guard let go) is no next command.
    if (marked !== null && !onlyReadOnly(readMark(undoDir, null), readOnly)) return marked >= until;
    const left = until - Date.now();
    if (left <= 0) return true;
    await marks.wait(left);
  }
}

/** Whether the repository's configuration runs the guard, and undo.guard does not stop it. */
const guardRegistered = (repo: Repo): boolean => repo.config.guard !== false && monitorSetting(repo.settings.get("core.fsmonitor"), gitBool).kind === "guard";

/** Whether every line of a mark comes from a process the guard found read-only. */
function onlyReadOnly(mark: MarkRead | null, readOnly: (pid: number) => boolean): boolean {
  return mark !== null && mark.lines.length > 0 && mark.lines.every((l) => readOnly(l.pid) && l.word !== "1");
}

/** The mark without the lines of read-only processes. */
function withoutReadOnly(mark: MarkRead, readOnly: (pid: number) => boolean): MarkRead {
  const lines = mark.lines.filter((l) => !(readOnly(l.pid) && l.word !== "1"));
  if (lines.length === mark.lines.length) return mark;
  return { ...mark, lines, pids: lines.map((l) => l.pid), indexWrites: lines.filter((l) => l.word === "0" || l.word === "1").length };
}

/**
 * A command typed this long after the previous one ended is a command of its
 * own (clarifications: two snapshots); the guard waits for the previous
 * one's recording then. Closer commands (a script's) may share a snapshot.
 */
const SEPARATE_COMMAND_MS = 250;

/**
 * How long a mark or a guard's request with no line yet is taken for one
 * being written (past that, a killed hook's mark is a change of unknown
 * source, and a request is left to the desk's stale check).
 */
const UNWRITTEN_MARK_MS = 2000;

/** How long the capture's check waits for a command writing the index to finish and mark. */
const INTACT_WAIT_MS = 200;

/**
 * Whether a capture that began with the index at `before` is one state: the
 * index untouched since, or written only by commands that wrote no files
 * (`git add`, a commit: the capture's copy of the index and the files it read
 * still belong together). A command that wrote files, or an index written
 * with no mark at all (hooks off, another tool), tears it.
 */
export async function captureIntact(repo: Repo, undoDir: string, before: string | null): Promise<boolean> {
  const { indexIdentity } = await import("../core/git-data/index/file.ts");
  if (!indexLocked(repo) && indexIdentity(repo.indexFile) === before) return true;
  const deadline = Date.now() + INTACT_WAIT_MS;
  while (indexLocked(repo) && Date.now() < deadline) await Bun.sleep(5);
  // Its post-index-change runs right after the index is written.
  for (;;) {
    const mark = readMark(undoDir, null);
    if (mark?.worktreeWritten) return false;
    if ((mark?.indexWrites ?? 0) > 0 && !indexLocked(repo)) return true;
    if (Date.now() >= deadline) return false;
    await Bun.sleep(10);
  }
}

/** How long a worker waits for a `git refs migrate` it met to end. */
const MIGRATION_WAIT_MS = 30_000;

/**
 * Whether no ref migration is under way (any met has ended, within
 * MIGRATION_WAIT_MS) and the repository is still there: the open that
 * failed, maybe while HEAD was being moved, is then worth one more try.
 */
async function migrationOver(gitDir: string, hold: GitDirHold): Promise<boolean> {
  const moving = () => refMigrationRunning(gitDir) || !existsSync(join(gitDir, "HEAD"));
  const deadline = Date.now() + MIGRATION_WAIT_MS;
  while (moving()) {
    if (!hold.held() || Date.now() > deadline) return false;
    await Bun.sleep(50);
  }
  return hold.held();
}

/** How many recordings may fail in a row before the worker leaves the mark to the next one. */
const MAX_FAILURES = 3;

/**
 * Follow the marks and record until the worker leaves. `lingerFromEnv` is
 * GIT_UNDO_WORKER_LINGER as the entry point read it (lingerSetting): null
 * when unset, the lingering then undo.linger's or the default.
 */
async function settleLoop(gitDir: string, cwd: string, undoDir: string, marks: MarkWatch, hold: GitDirHold, lingerFromEnv: number | null): Promise<void> {
  // Pin the repository the hook named; every Git the worker runs is given its folder.
  process.env.GIT_DIR = gitDir;
  process.chdir(cwd || gitDir);
  // The repository is opened and the recorder loaded while the first marks are
  // followed: the command that started this worker may be about to end, and the
  // next one to start.
  const opening = (async () => {
    const [{ openHookRepo }, recorder, { CaptureTorn }, { indexIdentity }] = await Promise.all([
      import("../core/repo.ts"),
      import("../core/record.ts"),
      import("../core/capture.ts"),
      import("../core/git-data/index/file.ts"),
    ]);
    // As the Git command that ran the hook saw it: a dotfiles repository's work tree, a push's none.
    const open = () => openHookRepo(gitDir, { cwd, env: process.env });
    let repo: Awaited<ReturnType<typeof open>>;
    try {
      repo = await open();
    } catch (e) {
      // `git refs migrate` takes HEAD away for a moment, and Git then sees no repository: once more after it.
      if (!(await migrationOver(gitDir, hold))) throw e;
      repo = await open();
    }
    return { repo, record: recorder.record, CaptureTorn, indexIdentity };
  })();
  let opened: Awaited<typeof opening> | null = null;
  // Awaited below too; open, the guard's watch can start (treeWatch).
  opening.then(
    (o) => {
      opened ??= o;
      // The watch starts at once where the guard is registered, else with its first request.
      if (guardRegistered(o.repo)) treeWatch();
    },
    () => {},
  );
  const table = processes().table;
  const commands = new CommandWatch(table);
  let cursor: MarkCursor | null = null;
  let firstSeen: number | null = null;
  let failures = 0;
  // When the state being read may be recorded: undo.settle after its command ended (0: at once).
  let recordFrom = 0;
  // How soon after a command's end the state is read: READ_AFTER_MS, or, after a
  // reading a script's next command made useless, undo.settle (no reading wasted
  // per command of a script) until a recording goes through.
  let readAfterMs = READ_AFTER_MS;
  let tornByNextCommand = false;
  /** The marks recorded, or gone: the next ones are followed afresh. */
  const startOver = (): void => {
    commands.reset();
    cursor = null;
    firstSeen = null;
  };
  // The guard's bound (undo.guardTimeout) is written down for it once the configuration is read.
  let boundToWrite = true;
  /** The repository open (waited for while it is opening), and the guard's bound written down once. */
  const openedRepo = async (): Promise<Awaited<typeof opening>> => {
    const o = (opened ??= await opening);
    if (boundToWrite) {
      if (guardRegistered(o.repo)) writeGuardBound(undoDir, o.repo.config.guardTimeoutMs);
      boundToWrite = false;
    }
    return o;
  };
  /** A command's marks are still to be recorded, or being recorded (read-only commands' aside). */
  const unrecorded = (): boolean => hasTaken(undoDir) || (!onlyReadOnly(readMark(undoDir, null), readOnly) && hasMark(undoDir));
  /** A working tree with nothing but its .git has nothing to lose: a worktree being added, before Git's reset --hard fills it. */
  const holdsNothing = (workTree: string): boolean => {
    try {
      return readdirSync(workTree).every((name) => name === ".git");
    } catch {
      return false;
    }
  };
  // The guard's requests (core/guard.ts): read as they come, even while a recording runs.
  const desk: GuardDesk = new GuardDesk(undoDir, table, {
    owed: (madeMs) => owedBefore(madeMs),
    namesCommit: async (word) => {
      if (word === "-" || /^@\{-\d+\}$/.test(word)) return true;
      const { repo } = (opened ??= await opening);
      return repo.git.succeeds(["rev-parse", "-q", "--verify", "--end-of-options", `${word}^{commit}`]);
    },
    // A guard that runs was registered (by init, by hand, GIT_TEST_FSMONITOR): only undo.guard=false stops it.
    settings: () => ({ on: opened?.repo.config.guard !== false, timeoutMs: opened?.repo.config.guardTimeoutMs ?? DEFAULT_CONFIG.guardTimeoutMs }),
    unseen: (workTree): boolean => {
      const w = treeWatch();
      if (w === null || !w.watches(workTree) || recordedAt === null || w.changedSince(recordedAt)) return !holdsNothing(workTree);
      // A command's marks not recorded yet (a script's `git add` just before): its index is in no snapshot.
      return unrecorded();
    },
    unrecorded,
    answer: (token, workTree) => {
      const w = treeWatch();
      // Another work tree (--work-tree, GIT_WORK_TREE, a GIT_DIR used from elsewhere): no answer from this watch.
      if (w === null || !w.watches(workTree)) return null;
      const a = w.answer(token);
      watches.noteChange(w);
      return a;
    },
  });
  // The working tree's watch, while the guard is on: started once the repository is open.
  const watches = new WatchKeeper(undoDir);
  const treeWatch = (): TreeWatch | null => (opened === null ? null : watches.watch(opened.repo));
  /** The watch's entry number when the last recording read the files (null: none since the watch began). */
  let recordedAt: number | null = null;
  const readOnly = (pid: number): boolean => desk.readOnlyPid(pid);
  /**
   * Whether a command that asked the guard at `madeMs` finds an earlier one
   * unrecorded that may have ended SEPARATE_COMMAND_MS or more before: none of
   * its Git processes runs, and the last sign of one (a mark, a look that saw
   * it running) is that old.
   */
  const owedBefore = (madeMs: number): boolean => {
    const pending = readMark(undoDir, null);
    const taken = readMark(undoDir, null, "pendingTaken");
    const lines = [...(pending?.lines ?? []), ...(taken?.lines ?? [])].filter((l) => !readOnly(l.pid) || l.word === "1");
    if (lines.length === 0) return false;
    const lastMark = Math.max(pending?.markMs ?? 0, taken?.markMs ?? 0);
    commands.add([...new Set(lines.map((l) => l.pid))], lastMark, false);
    if (commands.running() === true) return false;
    return madeMs - Math.max(commands.lastRunningMs, lastMark) >= SEPARATE_COMMAND_MS;
  };
  marks.onEvent = (name) => {
    if (name === null || name.startsWith("guard.")) void desk.scan();
  };
  /**
   * Record now, for commands the guard holds: whatever is marked joins in.
   * The commands wait holding index.lock, so the index cannot change under
   * the capture; they all go on once it is done, recorded or not.
   */
  const recordForGuard = async (): Promise<void> => {
    try {
      const { repo, record, CaptureTorn, indexIdentity } = await openedRepo();
      if (!hasTaken(undoDir) && markStartedMs(undoDir) !== null) takeMark(undoDir);
      const before = indexIdentity(repo.indexFile);
      // A guard asked: its watch runs from here on, where the system has one.
      const seq = treeWatch()?.now() ?? null;
      try {
        await record(repo, { kind: "change", commands: commands.commandCount, intact: () => hold.held() && indexIdentity(repo.indexFile) === before });
        recordedAt = seq;
        dropTaken(undoDir);
        clearRecordingProblem(undoDir);
        debug("recorded for the guard");
      } catch (e) {
        if (hasTaken(undoDir)) restoreMark(undoDir);
        if (!(e instanceof CaptureTorn) && (await heldAfterFailure(hold))) noteRecordingProblem(undoDir, "recording before a command failed", e);
      }
    } finally {
      desk.releaseAll();
      startOver();
    }
  };
  let firstLook = true;
  try {
    for (let migrations = 0; ; migrations++) {
      try {
        await settleLoopBody();
        break;
      } catch (e) {
        // A Git of ours that ran while `git refs migrate` moved HEAD found no repository: go on after it.
        const open = opened as Awaited<typeof opening> | null; // set in the body: not the null TypeScript sees here
        const migrated = refMigrationRunning(gitDir) || (open !== null && !refFormatKept(open.repo));
        if (!migrated || migrations >= MAX_FAILURES || !(await migrationOver(gitDir, hold))) throw e;
        debug(`a ref migration met: ${errorMessage(e)}`);
        startOver();
      }
    }
  } finally {
    // Leaving: no command waits for this worker any more.
    marks.onEvent = null;
    desk.close();
    watches.close();
    dropOldAnswers(undoDir, processes().alive);
  }
  async function settleLoopBody(): Promise<void> {
    for (;;) {
      // The repository deleted or replaced: nothing more is written there (the mark goes with it).
      if (!hold.held()) return;
      // The requests' folder events reach the desk as they come; this look catches any that came before the watch.
      if (desk.asked || firstLook || (opened !== null && guardRegistered(opened.repo))) await desk.scan();
      firstLook = false;
      if (desk.due) {
        await recordForGuard();
        continue;
      }
      if (!hasTaken(undoDir)) {
        const next = await followMarks();
        if (next === "leave") return;
        if (next === "look again") continue;
      }
      if (!(await recordTaken())) return;
      startOver();
    }
  }

  /**
   * Read the new marks and follow their commands: "take" once the mark is
   * taken for a recording, "look again" after a wait, "leave" when the
   * worker is to exit.
   */
  async function followMarks(): Promise<"take" | "look again" | "leave"> {
    const gone = desk.readOnlyGone();
    const raw = readMark(undoDir, cursor);
    desk.forgetReadOnly(gone);
    // A hook's shell opens the mark before it writes its line (a busy machine can hold it there):
    // whose mark it is, and so whether it is a change at all, is known once the line is there.
    if (raw !== null && raw.cursor.offset === 0 && Date.now() - raw.markMs < UNWRITTEN_MARK_MS) {
      await marks.wait(20);
      return "look again";
    }
    // Nothing but the index refreshes of read-only commands: not a change to record.
    if (raw !== null && onlyReadOnly(raw, readOnly) && takeMark(undoDir)) {
      if (onlyReadOnly(readMark(undoDir, null, "pendingTaken"), readOnly)) dropTaken(undoDir);
      else restoreMark(undoDir);
      cursor = null;
      return "look again";
    }
    const mark = raw === null ? null : withoutReadOnly(raw, readOnly);
    if (mark === null) {
      startOver();
      // A read-only command the guard let go still runs: its index refresh is still to come.
      if (desk.readOnlyRunning) {
        await marks.wait(50);
        return "look again";
      }
      // A guard's request with no line yet: its command is about to ask (a killed guard's is let be).
      if (guardRequests(undoDir).some((r) => r.gitPid === null && Date.now() - r.madeMs < UNWRITTEN_MARK_MS)) {
        await marks.wait(20);
        return "look again";
      }
      return (await lingered()) ? "look again" : "leave";
    }
    cursor = mark.cursor;
    // An operation's files and index.lock are looked at where the answer counts:
    // new pids to follow, or a settle that depends on them (not while a command
    // runs: `followingOnly`). The markers reftable keeps as refs take Git (when
    // its refs changed): asked only where the answer counts (not before the
    // repository is open, on the first look: its ref storage is not known yet).
    let filesSaid: boolean | null = null;
    const filesSay = (): boolean => (filesSaid ??= operationFiles(gitDir));
    const refsSay = async () => !filesSay() && opened !== null && (await operationMarker(opened.repo)) !== null;
    const following = mark.pids.length > 0 && commands.sighted;
    if (mark.pids.length > 0) commands.add(mark.pids, mark.markMs, filesSay() || (following && (await refsSay())));
    // The pids' processes read, every decision from here on takes the repository's own settings.
    const { repo } = await openedRepo();
    hold.workTree = repo.workTree;
    const now = Date.now();
    firstSeen ??= now;
    const { settleMs, settleMaxMs } = repo.config;
    const running = commands.running(now);
    // A followed Git still runs and has marked within RUNNING_QUIET_MS: settleDelay
    // waits pollMs whatever an operation or index.lock say, and nothing is read
    // early (earlyReadIn), so this look (most of them while a script runs) reads neither.
    const followingOnly = running === true && now - mark.markMs < RUNNING_QUIET_MS && now - firstSeen < settleMaxMs;
    const view: SettleView = {
      now,
      markMs: mark.markMs,
      firstSeenMs: firstSeen,
      running,
      endedMs: commands.endedMs,
      operation: followingOnly ? false : filesSay(),
      indexLocked: followingOnly ? false : indexLocked(repo),
      settleMs,
      settleMaxMs,
      blindQuietMs: NO_PROCESS_QUIET_MS,
    };
    if (!followingOnly && !filesSay() && settleDelay({ ...view, operation: true }) !== settleDelay(view)) view.operation = await refsSay();
    const wait = settleDelay(view);
    debug(`pids=${mark.pids} markMs=${Math.round(mark.markMs)} ended=${commands.endedMs} wait=${wait} cmds=${commands.commandCount}`);
    // Read early (READ_AFTER_MS after the end) and record once undo.settle has passed.
    const early = wait > 0 ? earlyReadIn(view, readAfterMs) : 0;
    if (wait > 0 && early !== 0) {
      // While a followed command runs, the next look comes after `wait` (the poll): its hooks' marks are read then.
      await marks.wait(early === null ? wait : Math.min(wait, early), !followingOnly);
      return "look again";
    }
    // `git refs migrate` running: nothing is read until it is done (core/snapshots/store.ts checks again before the ref).
    if (refMigrationRunning(gitDir)) {
      await marks.wait(50);
      return "look again";
    }
    if (!takeMark(undoDir)) return "look again";
    debug("take");
    recordFrom = wait > 0 ? quietFrom(view) : 0;
    return "take";
  }

  /**
   * Nothing to record: stay a while for the next mark, so that a burst of
   * commands with pauses starts one worker, not one per pause. False when the
   * worker is to leave.
   */
  async function lingered(): Promise<boolean> {
    const lingerFor = lingerMs(lingerFromEnv, opened ? { lingerMs: opened.repo.config.lingerMs, guard: watches.started || guardRegistered(opened.repo) } : undefined);
    if ((await lingerForMark(undoDir, lingerFor, marks, () => hold.held())) || desk.readOnlyRunning) return true;
    // Leave the pid file first, then look again: a hook that saw us
    // alive may have marked in between, and then nobody else would record.
    trace("stop");
    releaseWorker(undoDir);
    const asking = guardRequests(undoDir).some((r) => r.gitPid !== null || Date.now() - r.madeMs < UNWRITTEN_MARK_MS);
    if (!hasMark(undoDir) && !hasTaken(undoDir) && !asking && !desk.readOnlyRunning) return false;
    if (!hold.held() || !claimWorker(undoDir, gitDir, table, { waitForHook: false })) return false;
    trace("start");
    return true;
  }

  /** Record the taken mark. False when the worker is to leave (its repository gone, or too many failures). */
  async function recordTaken(): Promise<boolean> {
    opened ??= await opening;
    const { repo, record, CaptureTorn, indexIdentity } = opened;
    const before = indexIdentity(repo.indexFile);
    const seq = watches.existing()?.now() ?? null;
    try {
      await record(repo, {
        kind: "change",
        commands: commands.commandCount,
        intact: async () => {
          tornByNextCommand = !(await quietUntil(undoDir, recordFrom, marks, readOnly));
          return !tornByNextCommand && hold.held() && (await captureIntact(repo, undoDir, before));
        },
      });
      recordedAt = seq;
      dropTaken(undoDir);
      clearRecordingProblem(undoDir);
      readAfterMs = READ_AFTER_MS;
      debug("recorded");
      failures = 0;
    } catch (e) {
      if (e instanceof CaptureTorn) {
        // Another command started during the capture: its own end is the next state to record.
        restoreMark(undoDir);
        if (tornByNextCommand) readAfterMs = Number.POSITIVE_INFINITY;
        debug("torn");
      } else {
        failures++;
        if (!(await heldAfterFailure(hold))) return false;
        noteRecordingProblem(undoDir, "recording failed", e);
        if (failures >= MAX_FAILURES) {
          logLine(undoDir, `giving up after ${failures} failures; the next Git command tries again`);
          trace("stop");
          releaseWorker(undoDir);
          return false;
        }
        await Bun.sleep(500 * failures);
      }
    }
    return true;
  }
}

export async function main(argv: string[]): Promise<number> {
  const [gitDirArg, cwdArg] = argv;
  if (gitDirArg === "--check") {
    // doctor: can this Bun load the recorder?
    await import("../core/record.ts");
    process.stdout.write("ok\n");
    return 0;
  }
  if (!gitDirArg) return 0;
  scrubEnvironment(process.env);
  seamsFromEnv(process.env);
  useProcesses(processesFor(process.env.GIT_UNDO_PROCESS_TABLE, OWN_PROCESS));
  const gitDir = resolve(gitDirArg);
  // The hook's folder when Git ran it in a work tree; '' outside one (a clone): the git dir then says (core/repo.ts).
  const cwd = cwdArg === undefined ? gitDir : cwdArg === "" ? "" : resolve(cwdArg);
  const undoDir = join(gitDir, "undo");
  let hold: GitDirHold;
  try {
    hold = new GitDirHold(gitDir, undoDir);
  } catch {
    return 0; // gone before we started
  }
  // Every Git and every file of ours from here on: only while the repository is there (core/repository-gone.ts).
  writeOnlyWhile(() => hold.held());
  // Claim first, before loading the recorder, so a worker that loses the race costs little.
  // A repository being deleted gets no pid file back (the claim would create one).
  if (!hold.held() || !claimWorker(undoDir, gitDir, processes().table)) {
    trace("lost");
    return 0;
  }
  trace("start");
  // Whatever the user runs comes first: the lowest CPU and I/O priority, inherited by our Git processes.
  await lowerPriority();
  // Stopped from outside (uninstall, a shutdown): leave no pid file behind. The mark stays for the next worker.
  process.on("SIGTERM", () => {
    trace("stop");
    releaseWorker(undoDir);
    process.exit(0);
  });
  // The terminal Git ran in closing is no reason to stop (where there is no setsid to leave its session).
  process.on("SIGHUP", () => {});
  // The lease tells the hooks a worker of ours lives under worker.pid (worker/protocol.ts).
  const lease = setInterval(() => renewLease(undoDir), LEASE_RENEW_MS);
  const marks = new MarkWatch(undoDir);
  try {
    await settleLoop(gitDir, cwd, undoDir, marks, hold, lingerSetting(process.env.GIT_UNDO_WORKER_LINGER));
  } catch (e) {
    if (await heldAfterFailure(hold)) noteRecordingProblem(undoDir, "worker stopped", e);
    trace("stop");
  } finally {
    clearInterval(lease);
    marks.close();
    releaseWorker(undoDir);
  }
  return 0;
}

/**
 * Close what the caller left open above 9 (cli/start-worker lists it in
 * GIT_UNDO_INHERITED_FDS, having closed 3 to 9): a worker holding a caller's
 * pipe keeps `git commit | cat`, a test harness or make waiting while it
 * lingers. Bun's own descriptors were opened after the list was made, at the
 * lowest free numbers; an event descriptor is never the caller's.
 */
export function closeInheritedFds(env: NodeJS.ProcessEnv): void {
  const list = env.GIT_UNDO_INHERITED_FDS;
  delete env.GIT_UNDO_INHERITED_FDS;
  for (const word of (list ?? "").split(" ")) {
    const fd = Number(word);
    if (!Number.isInteger(fd) || fd < 10) continue;
    try {
      if (/^anon_inode:/.test(readlinkSync(`/proc/self/fd/${fd}`))) continue;
    } catch {
      /* no /proc: the list alone says */
    }
    try {
      closeSync(fd);
    } catch {
      /* closed already (the shell's own script) */
    }
  }
}

/**
 * How long after a failure the worker looks again whether its repository is
 * there. `rm -rf` of the repository makes Git fail (an object, a scratch
 * folder gone) before it reaches the files the hold watches; a problem noted
 * in that moment is a new file in undo/, and the removal then fails with
 * "Directory not empty". Failures are rare: the wait costs nothing.
 */
const FAILURE_LOOK_AGAIN_MS = 100;

async function heldAfterFailure(hold: GitDirHold): Promise<boolean> {
  await Bun.sleep(FAILURE_LOOK_AGAIN_MS);
  return hold.held();
}

/** The worker run to its end. */
export async function run(argv: string[]): Promise<never> {
  closeInheritedFds(process.env);
  // Git's streams are not ours: an error nothing caught goes to worker.log
  // and to the next command's warning, never to them.
  const gitDir = argv[0] && argv[0] !== "--check" ? resolve(argv[0]) : null;
  const stop = (e: unknown) => {
    try {
      if (gitDir !== null) Bun.sleepSync(FAILURE_LOOK_AGAIN_MS); // as heldAfterFailure
      if (gitDir !== null && existsSync(join(gitDir, "undo", "hooks-enabled"))) noteRecordingProblem(join(gitDir, "undo"), "worker stopped", e);
    } catch {
      /* the repository gone (core/repository-gone.ts): nothing to tell there */
    }
    process.exit(1);
  };
  process.on("uncaughtException", stop);
  process.on("unhandledRejection", stop);
  process.exit(await main(argv));
}

// A bundle older than the sources hands over to them (core/bundle.ts).
// No top-level await: the bundle is CommonJS (build/bundle.ts); run() ends the process.
if (import.meta.main) {
  // The check of the bundle against its sources may rewrite its manifest (a file named by this process's pid).
  useProcesses(processesFor(process.env.GIT_UNDO_PROCESS_TABLE, OWN_PROCESS));
  void runEntry("worker", process.argv.slice(2), run);
}
