// The shape of a command, and the parsing every command shares.
import { usage } from "../core/errors.ts";
import type { CommandContext } from "./context.ts";

/** A command's options by long name, as node's util.parseArgs describes them. */
export interface OptionSpec {
  type: "boolean" | "string";
  short?: string;
  /** Given more than once, every value is kept (in order), not only the last. */
  multiple?: boolean;
}
export type Options = Record<string, OptionSpec>;

export interface Parsed {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
  /** How many of the positionals came after `--` (the last ones). */
  afterDashes: number;
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
  /** Runs in `ctx.io`'s folder with its environment, writing through `ctx.output` (cli/context.ts); returns the exit code. */
  run(args: Parsed, ctx: CommandContext): Promise<number>;
}

/**
 * Parse argv for a command; `-h`/`--help` and bad arguments surface as usage
 * errors naming `<invokedAs> -h`. As Git's parse-options does, an option that
 * takes a value takes the next word whatever it looks like (`-n -5`), and a
 * long option may be shortened to any prefix only it has.
 * `alsoKnown` are further long options to suggest for a mistyped one.
 */
export function parse(command: Command, argv: string[], invokedAs = `git undo ${command.name}`, alsoKnown: readonly string[] = []): Parsed | "help" {
  const see = `(see '${invokedAs} -h')`;
  const args = spellOut(command.options, argv, see, [...alsoKnown, "help"]);
  const end = args.indexOf("--");
  const before = end === -1 ? args : args.slice(0, end);
  if (before.includes("-h") || before.includes("--help")) return "help";
  const parsed = collect(command.options, shortNames(command.options), args, see);
  if (parsed.positionals.length && !command.takesArguments) {
    const hint = command.argumentHint ? `; ${command.argumentHint}` : "";
    throw usage(`${invokedAs} takes no arguments (got '${parsed.positionals[0]}'${hint})`);
  }
  return parsed;
}

/**
 * The values and positionals of argv as spellOut leaves it: `--name` or
 * `--name=value` for each long option, clusters of short switches (`-fn`),
 * words, and everything after `--` as words. (node's util.parseArgs did this;
 * loading node:util cost every command ~5 ms.)
 */
function collect(options: Options, byShort: ReadonlyMap<string, string>, args: readonly string[], see: string): Parsed {
  const values: Parsed["values"] = {};
  const positionals: string[] = [];
  let afterDashes = 0;
  const set = (name: string, value: string | boolean) => {
    if (!options[name]!.multiple) values[name] = value;
    else values[name] = [...((values[name] as (string | boolean)[] | undefined) ?? []), value] as string[] | boolean[];
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      afterDashes = args.length - i - 1;
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      if (options[name]!.type === "string") set(name, arg.slice(eq + 1));
      else if (eq !== -1) throw usage(`option '--${name}' takes no value ${see}`);
      else set(name, true);
    } else if (arg.startsWith("-") && arg !== "-") {
      // A cluster of switches; a value option in it takes the rest of the word, or the next word.
      for (let j = 1; j < arg.length; j++) {
        const name = byShort.get(arg[j]!);
        if (name === undefined) throw usage(`unknown switch '${arg[j]}' ${see}`);
        if (options[name]!.type === "boolean") {
          set(name, true);
          continue;
        }
        const value = j + 1 < arg.length ? arg.slice(j + 1) : args[++i];
        if (value === undefined) throw usage(`switch '${arg[j]}' requires a value ${see}`);
        set(name, value);
        break;
      }
    } else {
      positionals.push(arg);
    }
  }
  return { values, positionals, afterDashes };
}

/** Each short option's letter and its long name. */
const shortNames = (options: Options): Map<string, string> =>
  new Map(Object.entries(options).flatMap(([name, o]) => (o.short ? [[o.short, name] as const] : [])));

/**
 * argv with every option spelled out as node's parseArgs wants it: a value
 * option and its value joined (`--max-count=-5`), a unique prefix of a long
 * option expanded. Unknown options are refused here, with Git's suggestion.
 */
function spellOut(options: Options, argv: readonly string[], see: string, alsoKnown: readonly string[]): string[] {
  const longs = Object.keys(options);
  const byShort = shortNames(options);
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (arg === "-h" || arg === "--help" || arg === "-" || !arg.startsWith("-")) {
      out.push(arg);
      continue;
    }
    let name: string;
    let value: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const typed = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      value = eq === -1 ? undefined : arg.slice(eq + 1);
      const prefixed = longs.includes(typed) ? [typed] : longs.filter((l) => l.startsWith(typed));
      if (prefixed.length > 1) throw usage(`ambiguous option: --${typed} (could be ${prefixed.map((l) => `--${l}`).join(" or ")}) ${see}`);
      if (prefixed.length === 0) throw usage(`unknown option '--${typed}'${didYouMean(typed, [...longs, ...alsoKnown])} ${see}`);
      name = prefixed[0]!;
    } else {
      const letter = arg[1]!;
      const long = byShort.get(letter);
      if (long === undefined) {
        // `-dry-run`: Git's "did you mean --dry-run (with two dashes)?"
        const word = arg.slice(1).split("=")[0]!;
        const dashes = [...longs, ...alsoKnown].includes(word) ? `; did you mean '--${word}' (with two dashes)?` : "";
        throw usage(`unknown switch '${letter}'${dashes} ${see}`);
      }
      if (options[long]!.type !== "string") {
        out.push(arg); // -f, or a cluster such as -fn: parseArgs checks each letter
        continue;
      }
      name = long;
      value = arg.length > 2 ? arg.slice(2) : undefined;
    }
    if (options[name]!.type === "string" && value === undefined) {
      if (i + 1 >= argv.length) throw usage(`option '${arg}' requires a value ${see}`);
      value = argv[++i]!;
    }
    out.push(value === undefined ? `--${name}` : `--${name}=${value}`);
  }
  return out;
}

/** Git's threshold: a candidate at this score or worse is not suggested (help.c). */
const SIMILARITY_FLOOR = 7;

/**
 * "Did you mean": the candidates that start with what was typed, when there
 * are some (and not every candidate does: that says nothing); else Git's rule
 * (help.c, help_unknown_cmd): each candidate's weighted Damerau-Levenshtein
 * distance plus 1 (swap 0, substitution 2, insertion 1, deletion 3), and every
 * candidate tied at the best score, in name order, when it is under the floor.
 * Git suggests prefix matches only alongside the best of the others, and none
 * when those are all too far: `restor` got nothing though `rest` got restore.
 */
export function mostSimilar(typed: string, candidates: readonly string[]): string[] {
  const names = [...new Set(candidates)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const prefixed = names.filter((name) => name.startsWith(typed));
  if (prefixed.length === names.length) return [];
  if (prefixed.length) return prefixed;
  const scored = names.map((name) => ({ name, score: levenshtein(typed, name, 0, 2, 1, 3) + 1 }));
  const best = Math.min(...scored.map((s) => s.score));
  return best < SIMILARITY_FLOOR ? scored.filter((s) => s.score === best).map((s) => s.name) : [];
}

/** Git's levenshtein.c: the cost of turning `a` into `b` with these weights for a swap, substitution, addition and deletion. */
function levenshtein(a: string, b: string, swap: number, substitution: number, addition: number, deletion: number): number {
  let row0: number[] = new Array<number>(b.length + 1).fill(0);
  let row1: number[] = Array.from({ length: b.length + 1 }, (_, j) => j * addition);
  let row2: number[] = new Array<number>(b.length + 1).fill(0);
  for (let i = 0; i < a.length; i++) {
    row2[0] = (i + 1) * deletion;
    for (let j = 0; j < b.length; j++) {
      let cost = row1[j]! + (a[i] === b[j] ? 0 : substitution);
      if (i > 0 && j > 0 && a[i - 1] === b[j] && a[i] === b[j - 1]) cost = Math.min(cost, row0[j - 1]! + swap);
      cost = Math.min(cost, row1[j + 1]! + deletion, row2[j]! + addition);
      row2[j + 1] = cost;
    }
    [row0, row1, row2] = [row1, row2, row0];
  }
  return row1[b.length]!;
}

/** `; did you mean '--dry-run'?` for a mistyped long option, or nothing. */
function didYouMean(typed: string, longs: readonly string[]): string {
  const similar = mostSimilar(typed, longs);
  return similar.length ? `; did you mean ${similar.map((l) => `'--${l}'`).join(" or ")}?` : "";
}

export function helpText(command: Command): string {
  const [first, ...rest] = command.usage.split("\n");
  return [`usage: ${first}`, ...rest].join("\n").trimEnd();
}

export const str = (v: Parsed["values"][string]): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * The one parser of counts (`-n 5`, the 3 of `git undo 3`): decimal digits
 * only, no sign or spaces, exact (a safe integer), at least `min`.
 */
export function parseCount(what: string, v: string, min = 1): number {
  if (/^[0-9]+$/.test(v) && !Number.isSafeInteger(Number(v))) throw usage(`${what} is too large: '${v}'`);
  if (!/^[0-9]+$/.test(v) || Number(v) < min) throw usage(`${what} must be a whole number of at least ${min}, not '${v}'`);
  return Number(v);
}

/** A whole number option such as `-n 5`, when given. */
export function count(name: string, v: string | undefined, min = 1): number | undefined {
  return v === undefined ? undefined : parseCount(name, v, min);
}
