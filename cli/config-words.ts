// The words for configuration values git-undo cannot use (core/repo.ts
// ConfigProblem): the one warning a command gives before going on with what
// applies instead, doctor's list, and the refusal of a command that would act
// on the value.
import { DEFAULT_CONFIG, type ConfigKey, type ConfigProblem, type Repo } from "../core/repo.ts";
import { escapeControls } from "../core/text.ts";
import { sizeText, type Output } from "./ui.ts";

/** `undo.settle is 'abc', not a whole number of milliseconds from 0 to 10000`. */
export function problemText(p: ConfigProblem): string {
  const is = p.value === null ? `${p.key} is set without a value` : `${p.key} is '${escapeControls(p.value)}'`;
  return `${is}, not ${expectedText(p)}`;
}

function expectedText(p: ConfigProblem): string {
  const e = p.expected;
  if (e.kind === "boolean") return "a boolean (true or false)";
  if (e.kind === "age") return "an age such as 90d, 2.weeks, 6.months or never";
  const range = e.max === null ? `of at least ${e.min}` : `from ${e.min} to ${e.max}`;
  return `a whole number of ${e.unit} ${range}`;
}

/** What applies while the value stays as it is. */
export function fallbackText(key: ConfigKey): string {
  switch (key) {
    case "undo.worktree":
      return "the files are recorded (the default)";
    case "undo.limit":
      return "no snapshot is deleted for the limit until it is fixed";
    case "undo.expire":
      return "git undo gc deletes nothing until it is fixed (or is given --expire)";
    case "undo.settle":
      return `the worker waits ${DEFAULT_CONFIG.settleMs} ms (the default)`;
    case "undo.settleMax":
      return `the worker waits at most ${DEFAULT_CONFIG.settleMaxMs} ms (the default)`;
    case "undo.maxNewFileSize":
      return `untracked files over ${sizeText(DEFAULT_CONFIG.maxNewFileSize)} are left out (the default)`;
    case "undo.guard":
      return "as if unset: the guard where the working tree can be watched (Linux, a local file system), none elsewhere (the default)";
    case "undo.linger":
      return "the worker stays 30 s after its last command, 10 minutes with the guard on (the default)";
    case "undo.guardTimeout":
      return `a Git command waits at most ${DEFAULT_CONFIG.guardTimeoutMs} ms for the guard (the default)`;
  }
}

/** The one warning about unusable configuration values, given at most once in a command (cli/context.ts makes one per command). */
export class ConfigWarnings {
  /** Keys the running command words itself (doctor: all of them; gc: undo.expire, which it acts on). */
  private ownWords: ReadonlySet<ConfigKey> | "all" = new Set();
  private warned = false;

  constructor(private readonly output: Output) {}

  /** The running command says these problems itself: the warning leaves them out. */
  wordedByCommand(keys: readonly ConfigKey[] | "all"): void {
    this.ownWords = keys === "all" ? "all" : new Set(keys);
  }

  /**
   * One line on stderr, once a command, when the configuration has values
   * git-undo cannot use; the command goes on with what applies instead.
   */
  warn(repo: Repo): void {
    const ownWords = this.ownWords;
    if (this.warned || ownWords === "all") return;
    const shown = repo.config.problems.filter((p) => !ownWords.has(p.key));
    if (!shown.length) return;
    this.warned = true;
    const [one] = shown;
    const line =
      shown.length === 1 && one
        ? `${problemText(one)}; ${fallbackText(one.key)}`
        : `${shown.length} configuration values git-undo cannot use (${shown.map((p) => p.key).join(", ")}); 'git undo doctor' says what applies instead`;
    this.output.write(2, `warning: ${line}\n`);
  }
}
