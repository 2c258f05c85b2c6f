// git undo grep <pattern> [<n>...] [--all]: which snapshot still holds a line.
import { usage } from "../../core/errors.ts";
import { isReadable, type Snapshot } from "../../core/format.ts";
import { grepSnapshots } from "../../core/find.ts";
import { listSnapshots, readableSnapshot, resolveSnapshotArg } from "../../core/history.ts";
import { openRepo } from "../../core/repo.ts";
import { escapeControls } from "../../core/validate.ts";
import { type Command } from "../command.ts";
import { color, json, out } from "../ui.ts";

export const grep: Command = {
  name: "grep",
  usage: [
    "git undo grep [-i] [-F | -E] [--json] <pattern> (<n>... | --all)",
    "",
    "Searches the files (index and working tree) of snapshots <n>... (numbers or",
    "@{<date>}), or of every snapshot with --all, for <pattern> (a regular",
    "expression, as git grep reads it). Prints '#<n> <path>:<line>:<text>'; with",
    "--all, #<n> is the newest snapshot holding that content at that path, which",
    "'git undo restore <n>' brings back. Exits 1 when nothing matched.",
    "",
    "    --all                 search every snapshot (each distinct file once)",
    "    -i, --ignore-case     ignore case",
    "    -F, --fixed-strings   <pattern> is a string, not a regular expression",
    "    -E, --extended-regexp <pattern> is an extended regular expression",
    "    --json                machine-readable output",
  ].join("\n"),
  options: {
    all: { type: "boolean" },
    "ignore-case": { type: "boolean", short: "i" },
    "fixed-strings": { type: "boolean", short: "F" },
    "extended-regexp": { type: "boolean", short: "E" },
    json: { type: "boolean" },
  },
  takesArguments: true,
  async run({ values, positionals }) {
    const [pattern, ...which] = positionals;
    if (pattern === undefined) throw usage("git undo grep needs a pattern, such as 'git undo grep TODO --all'");
    if (values.all && which.length) throw usage("git undo grep takes snapshot numbers or --all, not both");
    if (!values.all && !which.length) throw usage("git undo grep needs the snapshots to search: numbers (git undo grep <pattern> 12) or --all");
    const repo = await openRepo();
    const snaps = await listSnapshots(repo);
    let chosen: Snapshot[];
    if (values.all) chosen = snaps.filter(isReadable);
    else {
      const numbers = new Set<number>();
      for (const arg of which) numbers.add(await resolveSnapshotArg(repo, arg, snaps));
      chosen = [...numbers].map((n) => readableSnapshot(snaps, n));
    }
    const matches = await grepSnapshots(
      repo,
      chosen,
      pattern,
      { ignoreCase: Boolean(values["ignore-case"]), fixedStrings: Boolean(values["fixed-strings"]), extendedRegexp: Boolean(values["extended-regexp"]) },
      !values.all,
    );
    if (values.json) json(matches);
    else for (const m of matches) out(`${color.yellow(`#${m.snapshot}`)} ${color.magenta(escapeControls(m.path))}:${color.green(String(m.line))}:${escapeControls(m.text)}`);
    return matches.length ? 0 : 1;
  },
};
