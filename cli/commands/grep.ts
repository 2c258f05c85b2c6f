// git undo grep <pattern> [<n>...] [--all] [--lost]: which snapshot, or what lost work, still holds a line.
import { usage } from "../../core/errors.ts";
import { isReadable, type Snapshot } from "../../core/format/index.ts";
import { grepLost, grepSnapshots, type GrepMatch, type GrepOptions } from "../../core/find/index.ts";
import { findLost } from "../../core/find/lost.ts";
import { listSnapshots, readableSnapshot, resolveSnapshotArg } from "../../core/snapshots/history.ts";
import { escapeControls } from "../../core/text.ts";
import { type Command } from "../command.ts";
import type { Palette } from "../ui.ts";
import { numberRuns } from "./gc.ts";
import { withSpinner } from "../progress.ts";

export const grep: Command = {
  name: "grep",
  usage: [
    "git undo grep [-i] [-F | -E] [--json] <pattern> (<n>... | --all) [--lost]",
    "   or: git undo grep [<options>] <pattern> --lost",
    "",
    "Searches the files of snapshots <n>... (numbers or @{<date>}), or of every",
    "snapshot with --all, for <pattern> (a regular expression, as git grep reads",
    "it): the index, the working tree and the files of their stash entries.",
    "Prints '#<n> <path>:<line>:<text>' (a stash entry's file as",
    "'stash@{<i>}:<path>'). With --all each distinct content at a path is printed",
    "once, naming every snapshot holding it ('#4-#6,#9'); 'git undo restore <n>'",
    "with any of them brings it back. Exits 1 when nothing matched.",
    "",
    "    --all                 search every snapshot (each distinct file once)",
    "    --lost                search lost work too: what no ref or snapshot holds",
    "                          ('git undo rescue' lists it); printed as",
    "                          'lost <id> <path>:<line>:<text>', and",
    "                          'git undo rescue <id>' brings it back",
    "    -i, --ignore-case     ignore case",
    "    -F, --fixed-strings   <pattern> is a string, not a regular expression",
    "    -E, --extended-regexp <pattern> is an extended regular expression",
    "    --json                machine-readable output",
  ].join("\n"),
  options: {
    all: { type: "boolean" },
    lost: { type: "boolean" },
    "ignore-case": { type: "boolean", short: "i" },
    "fixed-strings": { type: "boolean", short: "F" },
    "extended-regexp": { type: "boolean", short: "E" },
    json: { type: "boolean" },
  },
  takesArguments: true,
  async run({ values, positionals }, ctx) {
    const { json, out } = ctx.output;
    const [pattern, ...which] = positionals;
    if (pattern === undefined) throw usage("git undo grep needs a pattern, such as 'git undo grep TODO --all'");
    if (values.all && which.length) throw usage("git undo grep takes snapshot numbers or --all, not both");
    if (!values.all && !which.length && !values.lost) throw usage("git undo grep needs what to search: snapshot numbers (git undo grep <pattern> 12), --all or --lost");
    const repo = await ctx.openRepo();
    const opts: GrepOptions = { ignoreCase: Boolean(values["ignore-case"]), fixedStrings: Boolean(values["fixed-strings"]), extendedRegexp: Boolean(values["extended-regexp"]) };
    const searchSnapshots = async (): Promise<GrepMatch[]> => {
      if (!values.all && !which.length) return [];
      const snaps = await listSnapshots(repo);
      let chosen: Snapshot[];
      if (values.all) chosen = snaps.filter(isReadable);
      else {
        const numbers = new Set<number>();
        for (const arg of which) numbers.add(await resolveSnapshotArg(repo, arg, snaps));
        chosen = [...numbers].map((n) => readableSnapshot(snaps, n));
      }
      return grepSnapshots(repo, chosen, pattern, opts, !values.all);
    };
    const searchLost = async (): Promise<{ matches: GrepMatch[]; abbrev: number }> => {
      if (!values.lost) return { matches: [], abbrev: 7 };
      const work = await findLost(repo);
      return { matches: await grepLost(repo, work, pattern, opts), abbrev: work.abbrev };
    };
    const label = values.all ? "searching every snapshot" : "searching";
    const [inSnapshots, lost] = await withSpinner(ctx.output, label, () => Promise.all([searchSnapshots(), searchLost()]));
    const matches = [...inSnapshots, ...lost.matches];
    if (values.json) json(matches);
    else for (const m of matches) out(matchLine(ctx.output.color, m, lost.abbrev));
    return matches.length ? 0 : 1;
  },
};

/** `#4-#6,#9 src/a.c:12:text`, `#3 stash@{0}:a.c:1:text`, `lost 1a2b3c4 a.c:1:text`. */
function matchLine(color: Palette, m: GrepMatch, abbrev: number): string {
  const where = m.lost ? `lost ${m.lost.id.slice(0, abbrev)}` : numberRuns(m.snapshots).replace(/, /g, ",");
  const path = `${m.stash !== undefined ? `stash@{${m.stash}}:` : ""}${m.path === null ? "(no name)" : m.path}`;
  return `${color.yellow(where)} ${color.magenta(escapeControls(path))}:${color.green(String(m.line))}:${escapeControls(m.text)}`;
}
