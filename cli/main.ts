// git-undo's CLI: pick the command, run it, turn every failure into one line
// and Git's exit codes (0 done, 1 refused or nothing to do, 128 fatal, 129 usage).
import { accessSync, constants, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { BUNDLE_DIR, runEntry, toolkitRoot } from "../core/bundle.ts";
import { fatal, Refused, UndoError, usage } from "../core/errors.ts";
import { RestoreRefused } from "../core/restore/plan.ts";
import { GitError } from "../core/git.ts";
import { helpText, mostSimilar, parse } from "./command.ts";
import { COMMANDS, findCommand } from "./commands/index.ts";
import { jitForShortLife } from "./jit-policy.ts";
import { phase, traceEnd, traceStart } from "../core/trace.ts";
import { seams, seamsFromEnv } from "../core/seams.ts";
import { processesFor, useProcesses, type OwnProcess } from "../core/git-data/proc/index.ts";

/** This process as the core is given it: its pid, and kill(pid, 0) sent from it. */
const OWN_PROCESS: OwnProcess = { pid: process.pid, signal: (pid) => process.kill(pid, 0) };

/** The CPU this process has used (ms), for the trace's last line. */
function ownCpuMs(): number {
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1000;
}
import { takePagerOptions } from "./pager.ts";
import { takeColorOptions, type Output } from "./ui.ts";
import type { CommandIO } from "./io.ts";
import { CommandContext, type GlobalOptions } from "./context.ts";
import { processGuard, processHost, processTerminal } from "./host.ts";
import { fitToOutput } from "./wrap.ts";

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    "usage: git undo [--version] [-h | --help] [-C <path>] [--no-pager] <command> [<args>]",
    "",
    "Every Git command is recorded as a snapshot under refs/undo/; these commands",
    "inspect and manage the snapshots.",
    "",
    ...COMMANDS.map((c) => `    ${c.name.padEnd(width)}${c.summary}`),
    "",
    "'git undo <command> -h' (or 'git undo help <command>') describes one command.",
  ].join("\n");
}

const HELP_USAGE = [
  "usage: git undo help [<command>]",
  "",
  "Describes <command>, as 'git undo <command> -h' does; without one, lists the commands.",
].join("\n");

/** `git-undo <version>`: package.json's, read only when asked, with no repository. */
function version(): string {
  const pkg = JSON.parse(readFileSync(join(toolkitRoot(), "package.json"), "utf8")) as { version: string };
  return `git-undo ${pkg.version}`;
}

const CHDIR_WHY: Record<string, string> = { ENOENT: "No such file or directory", ENOTDIR: "Not a directory", EACCES: "Permission denied" };

/**
 * Git's `-C <path>` before the command: each relative to the one before; an
 * empty path changes nothing. Returns the rest of argv and the folder the
 * command runs in (the process's own working directory stays as it was).
 */
function takeDirectories(argv: string[], cwd: string): { argv: string[]; cwd: string } {
  let i = 0;
  for (; argv[i] === "-C"; i += 2) {
    const dir = argv[i + 1];
    if (dir === undefined) throw usage("no directory given for '-C' (see 'git undo -h')");
    if (dir === "") continue;
    // Joined, not normalised: `link/..` is the link's target's parent, as chdir finds it.
    const to = isAbsolute(dir) ? dir : cwd !== "" ? `${cwd}/${dir}` : "";
    try {
      if (to === "") throw Object.assign(new Error("the current directory no longer exists"), { code: "ENOENT" });
      if (!statSync(to).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
      accessSync(to, constants.X_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "";
      throw fatal(`cannot change to '${dir}': ${CHDIR_WHY[code] ?? (e as Error).message}`);
    }
    // As chdir would leave it: the physical path, which Git's own paths are in.
    cwd = realpathSync.native(to);
  }
  return { argv: argv.slice(i), cwd };
}

/** One message on stderr, broken at spaces to the terminal's width (a pipe gets it whole). */
function say(output: Output, line: string): void {
  output.write(2, `${fitToOutput(output.io, [line], 2).join("\n")}\n`);
}

/**
 * A command started in a folder that is gone (removed while a shell was in
 * it) fails in one line, before anything asks where it runs.
 */
function checkCurrentDirectory(cwd: string): void {
  let there = false;
  try {
    there = cwd !== "" && statSync(cwd).isDirectory();
  } catch {
    /* gone */
  }
  if (!there) throw fatal("the current directory no longer exists (it was removed); cd into the repository again");
}

/** Git's answer to an unknown command (help.c): the line, the most similar commands, exit 1. */
function unknownCommand(output: Output, name: string): number {
  say(output, `git undo: '${name}' is not a git undo command. See 'git undo --help'.`);
  const similar = mostSimilar(name, ["help", ...COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])])]);
  if (similar.length) output.write(2, `\nThe most similar ${similar.length === 1 ? "command is" : "commands are"}\n${similar.map((c) => `\t${c}\n`).join("")}`);
  return 1;
}

/**
 * The options every command takes (--color, --no-color, --no-pager, anywhere
 * before `--`, as Git accepts them) and Git's `-C <path>` before the command:
 * the rest of argv, and the io the command runs with.
 */
function readCommandLine(rawArgv: string[], given: CommandIO): { argv: string[]; io: CommandIO; options: GlobalOptions } {
  const colors = takeColorOptions(rawArgv);
  const pager = takePagerOptions(colors.argv);
  const { argv, cwd } = takeDirectories(pager.argv, given.cwd);
  const io: CommandIO = cwd === given.cwd ? given : { ...given, cwd, env: { ...given.env, PWD: cwd } };
  return { argv, io, options: { color: colors.when, noPager: pager.noPager } };
}

/** The command argv names, run with `ctx`; `rawArgv` and `given` are what a hand-over starts again from. */
async function dispatch(argv: string[], ctx: CommandContext, rawArgv: string[], given: CommandIO): Promise<number> {
  const { write } = ctx.output;
  const [first, ...rest] = argv;
  if (first === "--version") {
    write(1, `${version()}\n`);
    return 0;
  }
  if (first === "-h" || first === "--help") {
    write(1, `${mainHelp()}\n`);
    return 0;
  }
  // `git undo help <command>` is `git undo <command> --help`, as in Git.
  if (first === "help") {
    if (rest.length > 1) throw usage("git undo help takes one command name, such as 'git undo help restore'");
    if (rest[0] === undefined) {
      write(1, `${mainHelp()}\n`);
      return 0;
    }
    if (rest[0] === "help" || rest[0] === "-h" || rest[0] === "--help") {
      write(1, `${HELP_USAGE}\n`);
      return 0;
    }
    const entry = findCommand(rest[0]);
    if (!entry) return unknownCommand(ctx.output, rest[0]);
    if (!entry.load) return handOver(rawArgv, given);
    write(1, `${helpText(await entry.load())}\n`);
    return 0;
  }
  // `git undo`, `git undo 3`, `git undo --dry-run`: the undo command itself
  // (a word starting with a digit is a step count, refused there when it is not one).
  if (first === undefined || /^\s*\+?[0-9]/.test(first) || first.startsWith("-")) {
    checkCurrentDirectory(ctx.io.cwd);
    const load = findCommand("undo")!.load;
    if (!load) return handOver(rawArgv, given);
    const undoCommand = await phase("load undo", load);
    const parsedUndo = parse(undoCommand, argv, "git undo", ["version"]);
    if (parsedUndo === "help") {
      write(1, `${helpText(undoCommand)}\n`);
      return 0;
    }
    return undoCommand.run(parsedUndo, ctx);
  }
  const entry = findCommand(first);
  if (!entry) return unknownCommand(ctx.output, first);
  if (!entry.load) return handOver(rawArgv, given);
  checkCurrentDirectory(ctx.io.cwd);
  const command = await phase(`load ${entry.name}`, entry.load);
  const parsed = parse(command, rest, `git undo ${first}`);
  if (parsed === "help") {
    write(1, `${helpText(command)}\n`);
    return 0;
  }
  return command.run(parsed, ctx);
}

/**
 * A command this part of the bundle does not hold (the launcher picks a part
 * by the command's name, core/bundled.ts): the whole bundle runs it, in this
 * process, from the start.
 */
async function handOver(argv: string[], io: CommandIO): Promise<number> {
  traceEnd();
  const whole = (await import(join(toolkitRoot(), BUNDLE_DIR, "cli", "main.js"))) as { runCommand: typeof runCommand };
  return whole.runCommand(argv, io);
}

/** Every error is one line: a message written over several is joined. */
const oneLine = (message: string): string =>
  message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" ");

async function report(e: unknown, output: Output): Promise<number> {
  if (e instanceof RestoreRefused) {
    // Every reason, worded once (cli/plan-words.ts), one line each.
    const { blockerText } = await import("./plan-words.ts");
    for (const b of e.blockers) say(output, `error: ${oneLine(blockerText(b))}`);
    return e.exitCode;
  }
  if (e instanceof UndoError) {
    const prefix = e.kind === "usage" ? "error" : e.kind === "refused" ? "error" : "fatal";
    // A typed refusal in its words (cli/refusal-words.ts), loaded only on this path.
    const text = e instanceof Refused ? (await import("./refusal-words.ts")).refusalText(e.refusal) : e.message;
    say(output, `${prefix}: ${oneLine(text)}`);
    return e.exitCode;
  }
  if (e instanceof GitError) {
    say(output, `fatal: ${oneLine(e.message)}`);
    return 128;
  }
  const err = e as Error;
  say(output, `fatal: ${oneLine(err?.message ?? String(e))}`);
  if (output.io.env.GIT_UNDO_DEBUG) output.write(2, `${err?.stack ?? ""}\n`);
  return 128;
}

/**
 * One command run to its end in `io`'s folder, with its environment and
 * streams: the exit code, every failure worded. Each gets its own context
 * (cli/context.ts: its output's state), so that several can run one after
 * another in one process (the tests do, each with its own io).
 */
export async function runCommand(argv: string[], io: CommandIO): Promise<number> {
  seamsFromEnv(io.env);
  useProcesses(processesFor(io.env.GIT_UNDO_PROCESS_TABLE, OWN_PROCESS));
  // A command line that cannot be read is worded with the io as given.
  let ctx = new CommandContext(io);
  let code: number;
  try {
    traceStart(io.env, ownCpuMs);
    const line = readCommandLine(argv, io);
    ctx = new CommandContext(line.io, line.options);
    code = await dispatch(line.argv, ctx, argv, io);
  } catch (e) {
    code = await report(e, ctx.output);
  }
  await ctx.pager.end();
  traceEnd();
  return code;
}

/** The folder the process runs in; "" when it was removed (checkCurrentDirectory words that). */
function processCwd(): string {
  try {
    return process.cwd();
  } catch {
    return "";
  }
}

/** The command line run to its end, in the process's folder, environment and terminal, as the process's exit code. */
export async function run(argv: string[]): Promise<never> {
  const io: CommandIO = { cwd: processCwd(), env: process.env, stdout: null, stderr: null, runtime: process.execPath, terminal: processTerminal, guard: processGuard, host: processHost(process.env) };
  // A restore told to pause after a step (a test's GIT_UNDO_TEST_PAUSE_AFTER) stops this process there.
  seams.stopProcess = () => process.kill(process.pid, "SIGSTOP");
  process.exit(await runCommand(argv, io));
}

// A bundle older than the sources hands over to them (core/bundle.ts).
// No top-level await: the bundle is CommonJS (build/bundle.ts); run() ends the process.
if (import.meta.main) {
  jitForShortLife();
  // The check of the bundle against its sources may rewrite its manifest (a file named by this process's pid).
  useProcesses(processesFor(process.env.GIT_UNDO_PROCESS_TABLE, OWN_PROCESS));
  void runEntry("cli", process.argv.slice(2), run);
}
