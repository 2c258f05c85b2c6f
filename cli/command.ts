// The shape of a command, and the parsing every command shares.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UndoError, usage } from "../core/errors.ts";

export type Options = NonNullable<ParseArgsConfig["options"]>;

export interface Parsed {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

export interface Command {
  name: string;
  /** The usage block `-h` prints (first line without "usage: "). */
  usage: string;
  options: Options;
  /** Whether the command takes positional arguments; the others refuse any. */
  takesArguments?: boolean;
  /** Added to the refusal of a stray argument (e.g. "use -m for a message"). */
  argumentHint?: string;
  run(args: Parsed): Promise<number>;
}

/** Parse argv for a command; `-h`/`--help` and bad arguments surface as usage errors. */
export function parse(command: Command, argv: string[]): Parsed | "help" {
  if (argv.includes("-h") || argv.includes("--help")) return "help";
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length && !command.takesArguments) {
      const hint = command.argumentHint ? `; ${command.argumentHint}` : "";
      throw usage(`git undo ${command.name} takes no arguments (got '${positionals[0]}'${hint})`);
    }
    return { values: values as Parsed["values"], positionals };
  } catch (e) {
    if (e instanceof UndoError) throw e;
    // One line, as Git says it: node's wording up to its first sentence.
    const first = (e as Error).message.split("\n")[0]!.replace(/\. To specify .*$/, "").replace(/\.$/, "");
    throw usage(`${first.charAt(0).toLowerCase()}${first.slice(1)} (see 'git undo ${command.name} -h')`);
  }
}

export function helpText(command: Command): string {
  const [first, ...rest] = command.usage.split("\n");
  return [`usage: ${first}`, ...rest].join("\n").trimEnd();
}

export const str = (v: Parsed["values"][string]): string | undefined => (typeof v === "string" ? v : undefined);

/** A whole number option such as `-n 5`. */
export function count(name: string, v: string | undefined, min = 1): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min) throw usage(`${name} takes a whole number of at least ${min}, not '${v}'`);
  return Number(v);
}
