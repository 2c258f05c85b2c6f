// git-undo's CLI: pick the command, run it, turn every failure into one line
// and Git's exit codes (0 done, 1 refused or nothing to do, 128 fatal, 129 usage).
import { UndoError } from "../core/errors.ts";
import { GitError } from "../core/git.ts";
import { helpText, parse } from "./command.ts";
import { COMMANDS, findCommand } from "./commands/index.ts";
import { onRepoOpened } from "../core/repo.ts";
import { setColorConfig, takeColorOptions, write } from "./ui.ts";

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    "usage: git undo <command> [<args>]",
    "",
    "Every Git command is recorded as a snapshot under refs/undo/; these commands",
    "inspect and manage the snapshots.",
    "",
    ...COMMANDS.map((c) => `    ${c.name.padEnd(width)}${c.summary}`),
    "",
    "'git undo <command> -h' describes one command.",
  ].join("\n");
}

export async function main(rawArgv: string[]): Promise<number> {
  // Global options, accepted anywhere as Git accepts them: --color[=<when>], --no-color.
  const argv = takeColorOptions(rawArgv);
  onRepoOpened((repo) => setColorConfig(repo.config.color));
  const [first, ...rest] = argv;
  if (first === "-h" || first === "--help" || first === "help") {
    write(1, `${mainHelp()}\n`);
    return 0;
  }
  // `git undo`, `git undo 3`, `git undo --dry-run`: the undo command itself.
  if (first === undefined || /^\d+$/.test(first) || first.startsWith("-")) {
    const undoCommand = await findCommand("undo")!.load();
    const parsedUndo = parse(undoCommand, argv);
    if (parsedUndo === "help") {
      write(1, `${helpText(undoCommand)}\n`);
      return 0;
    }
    return undoCommand.run(parsedUndo);
  }
  const entry = findCommand(first);
  if (!entry) {
    write(2, `git undo: '${first}' is not a git undo command. See 'git undo --help'.\n`);
    return 129;
  }
  const command = await entry.load();
  const parsed = parse(command, rest);
  if (parsed === "help") {
    write(1, `${helpText(command)}\n`);
    return 0;
  }
  return command.run(parsed);
}

function report(e: unknown): number {
  if (e instanceof UndoError) {
    const prefix = e.kind === "usage" ? "error" : e.kind === "refused" ? "error" : "fatal";
    write(2, `${prefix}: ${e.message}\n`);
    return e.exitCode;
  }
  if (e instanceof GitError) {
    write(2, `fatal: ${e.message}\n`);
    return 128;
  }
  const err = e as Error;
  write(2, `fatal: ${err?.message ?? String(e)}\n`);
  if (process.env.GIT_UNDO_DEBUG) write(2, `${err?.stack ?? ""}\n`);
  return 128;
}

if (import.meta.main) {
  let code: number;
  try {
    code = await main(process.argv.slice(2));
  } catch (e) {
    code = report(e);
  }
  process.exit(code);
}
