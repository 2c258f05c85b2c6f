// What a command is handed, as git-branchless hands its commands `Effects`:
// the io it runs with (cli/io.ts) and its output's state (colours, the pager,
// the configuration warning), one for each command run (cli/main.ts). Nothing
// of a command's output is kept in modules, so commands run one after another
// in one process (the tests do) start afresh each time.
import type { ColorWhen, Repo } from "../core/repo.ts";
import { openRepo } from "../core/repo.ts";
import type { Refusal } from "../core/errors.ts";
import { escapeControls } from "../core/text.ts";
import { clearFutureLease } from "../worker/protocol.ts";
import { takeRecordingProblem } from "../core/worker-files.ts";
import { ConfigWarnings } from "./config-words.ts";
import type { CommandIO } from "./io.ts";
import { Pager } from "./pager.ts";
import { Output } from "./ui.ts";

/** The options every command takes, from the command line (cli/main.ts). */
export interface GlobalOptions {
  /** `--color=<when>`, `--color`, `--no-color` (null: none given). */
  color: ColorWhen | null;
  /** `--no-pager`. */
  noPager: boolean;
}

export class CommandContext {
  readonly output: Output;
  readonly pager: Pager;
  readonly configWarnings: ConfigWarnings;

  constructor(
    readonly io: CommandIO,
    options: GlobalOptions = { color: null, noPager: false },
  ) {
    this.output = new Output(io, options.color);
    this.pager = new Pager(this.output, options.noPager);
    this.configWarnings = new ConfigWarnings(this.output);
  }

  /**
   * The repository the command runs in (core/repo.ts openRepo): it sets the
   * colours and has its configuration checked, and a failure of the
   * background worker is told once.
   */
  async openRepo(): Promise<Repo> {
    const repo = await openRepo(this.io);
    this.output.setColorConfig(repo.config.color);
    this.configWarnings.warn(repo);
    clearFutureLease(repo.undoDir);
    const problem = takeRecordingProblem(repo.undoDir);
    if (problem !== null) {
      const why = problem.refusal ? wordedRefusal(problem.refusal) : null;
      const what = why === null ? (problem.message ? `${problem.what}: ${problem.message}` : problem.what) : `${problem.what}: ${why}`;
      this.output.write(2, `warning: automatic recording has a problem (${escapeControls(problem.when)}): ${escapeControls(what)}; 'git undo doctor' says more\n`);
    }
    return repo;
  }
}

/** A refusal the worker kept as facts, in its words (loaded only then); null when the facts cannot be worded. */
function wordedRefusal(refusal: Refusal): string | null {
  return (require("./refusal-words.ts") as typeof import("./refusal-words.ts")).refusalTextOrNull(refusal);
}
