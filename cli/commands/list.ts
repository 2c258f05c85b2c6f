// git undo list (alias log): the snapshots, newest first, with the position marked.
import { userSummary } from "../../core/describe.ts";
import { isReadable, type SnapshotEntry } from "../../core/format/index.ts";
import { usage } from "../../core/errors.ts";
import { escapeControls } from "../../core/text.ts";
import { lostChanging, pickaxeProblem, snapshotsBetween, snapshotsChanging, type Pickaxe, type PickaxeProblem } from "../../core/find/index.ts";
import { findLost } from "../../core/find/lost.ts";
import { checkStates, decodeNewest, decodeSnapshots, position, readOwnSnapshots, streakOrigin } from "../../core/snapshots/history.ts";
import { snapshotPrefixFor, undoDirFor, type Repo } from "../../core/repo.ts";
import { recordingPending } from "../../worker/protocol.ts";
import { scanNewestUndoRefs, scanUndoRefs, type SnapshotRef } from "../../core/git-data/refs/index.ts";
import { count, str, type Command } from "../command.ts";
import { fit } from "../pick/text.ts";
import { outputColumns } from "../wrap.ts";
import { isoDate, RECORDING_OFF, relativeAge, type Palette } from "../ui.ts";
import { hooksEnabled } from "../../core/hooks/enabled.ts";

interface Sequence {
  worktree: string | null;
  snapshots: SnapshotEntry[];
}

/** The main worktree's sequence and every linked worktree's, as found under refs/undo/. */
async function allSequences(repo: Repo): Promise<Sequence[]> {
  const refs = await scanUndoRefs(repo);
  const names = new Set<string>();
  for (const r of refs) {
    const m = /^refs\/undo\/worktrees\/([^/]+)\/snapshots\/[0-9]{10}$/.exec(r.ref);
    if (m) names.add(m[1]!);
  }
  const sequence = (w: string | null) => decodeSnapshots(refs, snapshotPrefixFor(w), readOwnSnapshots(undoDirFor(repo.commonDir, w)));
  const seqs: Sequence[] = [{ worktree: null, snapshots: sequence(null) }];
  for (const w of [...names].sort()) seqs.push({ worktree: w, snapshots: sequence(w) });
  return seqs;
}

export function snapshotJson(s: SnapshotEntry, current: number | null, worktree?: string | null) {
  const base = {
    number: s.number,
    date: isoDate(s.date),
    commit: s.commit,
    tree: s.tree,
    current: s.number === current,
    ...(worktree !== undefined ? { worktree } : {}),
    // Recorded elsewhere (fetched): plain undo and redo never land on it.
    ...(s.foreign ? { foreign: true } : {}),
  };
  if (!isReadable(s)) {
    return { ...base, kind: null, head: null, summary: null, restored: null, from: null, format: null, unreadable: s.reason };
  }
  return {
    ...base,
    kind: s.trailers.kind,
    head: s.trailers.head,
    summary: s.summary,
    restored: s.trailers.restored ?? null,
    from: s.trailers.from ?? null,
    format: s.trailers.format,
  };
}

/** Column widths for the rows shown, by display width (a CJK character takes two columns); `width`: the terminal's, when known. */
interface Columns {
  number: number;
  age: number;
  head: number;
  width: number | null;
}

function columnsFor(rows: readonly SnapshotEntry[], width: number | null): Columns {
  const widest = (xs: string[], min: number) => Math.max(min, ...xs.map((x) => Bun.stringWidth(x)));
  const number = widest(rows.map((s) => `#${s.number}`), 6);
  const age = widest(rows.map((s) => relativeAge(s.date)), 0);
  let head = widest(rows.filter(isReadable).map((s) => escapeControls(s.trailers.head)), 4);
  // On a terminal one long branch name must not push every row past its width:
  // the branch gets at most half of what the columns before it leave.
  if (width !== null) head = Math.min(head, Math.max(8, Math.floor((width - 1 - (number + age + 14)) / 2)));
  return { number, age, head, width };
}

/** Pad to a display width. */
const pad = (text: string, columns: number) => text + " ".repeat(Math.max(0, columns - Bun.stringWidth(text)));

/**
 * One row. A pipe gets it whole; on a terminal (its width known) it is cut
 * with an ellipsis so that it never wraps, as the branch name is to its column.
 */
function line(color: Palette, s: SnapshotEntry, current: number | null, cols: Columns, before: number | null = null): string {
  const fitted = (row: string) => (cols.width === null ? row : fit(color, row, cols.width - 1));
  // `<`: where you were before the restores at the end (git undo restore <it> returns there).
  const mark = s.number === current ? color.green("*") : s.number === before ? color.yellow("<") : " ";
  const num = color.yellow(pad(`#${s.number}`, cols.number));
  const age = pad(relativeAge(s.date), cols.age);
  if (!isReadable(s)) return fitted(`${mark} ${num} ${color.red(pad("unreadable", 8))} ${age} ${s.foreign ? `${color.yellow("(fetched)")} ` : ""}${color.dim(escapeControls(s.reason))}`);
  const kind = (s.trailers.kind === "restore" ? color.magenta : color.dim)(pad(s.trailers.kind, 8));
  const branch = escapeControls(s.trailers.head);
  const head = color.cyan(pad(cols.width === null ? branch : fit(color, branch, cols.head), cols.head));
  const elsewhere = s.foreign ? `${color.yellow("(fetched)")} ` : "";
  return fitted(`${mark} ${num} ${kind} ${color.dim(age)} ${head} ${elsewhere}${userSummary(s.summary)}`);
}

/** Searches Git refuses, as git log words them. */
const PICKAXE_PROBLEMS: Record<PickaxeProblem, string> = {
  "string-and-lines": "-S and -G cannot be used together",
  "regex-without-string": "--pickaxe-regex goes with -S",
  "empty-string": "-S needs a non-empty string",
  "empty-lines": "-G needs a non-empty regular expression",
};

export const list: Command = {
  name: "list",
  usage: [
    "git undo list [-n <count>] [--since <date>] [--until <date>] [--all-worktrees] [--json]",
    "   or: git undo log [<options>] [-S <string> | -G <regex>] [-- <pathspec>...]",
    "",
    "    -n, --max-count <count>   show at most <count> snapshots",
    "    --since <date>            only snapshots recorded at or after <date>",
    "    --until <date>            only snapshots recorded at or before <date>",
    "                              (dates as Git reads them: yesterday, 2.hours.ago,",
    "                              '2026-12-01 17:00')",
    "    -S <string>               only snapshots that changed the number of times",
    "                              <string> occurs in a file (index or working",
    "                              tree) since the snapshot before, as git log -S",
    "    --pickaxe-regex           -S takes an extended regular expression",
    "    --lost                    with -S or -G: lost work too (what no ref or",
    "                              snapshot holds, as 'git undo rescue' lists it),",
    "                              listed after the snapshots",
    "    -G <regex>                only snapshots that added or removed a line",
    "                              matching <regex> since the snapshot before",
    "    -- <pathspec>...          only snapshots in which a matching path changed",
    "                              (created, edited, removed, staged or unstaged)",
    "                              since the snapshot before",
    "    --all-worktrees           every worktree's sequence, not just this one's",
    "",
    "'*' marks your position; after restores, '<' marks where you were before",
    "them (git undo restore <that number> goes back there).",
    "    --json                    machine-readable output",
  ].join("\n"),
  options: {
    "max-count": { type: "string", short: "n" },
    since: { type: "string" },
    until: { type: "string" },
    // -S and -G as git log spells them; they have no long form there either.
    S: { type: "string", short: "S" },
    G: { type: "string", short: "G" },
    "pickaxe-regex": { type: "boolean" },
    lost: { type: "boolean" },
    "all-worktrees": { type: "boolean" },
    json: { type: "boolean" },
  },
  // Pathspecs, as `git log -- <path>` takes them.
  takesArguments: true,
  async run({ values, positionals, afterDashes }, ctx) {
    const { color, json, out } = ctx.output;
    const repo = await ctx.openRepo();
    const limit = count("-n", str(values["max-count"]));
    const since = str(values.since);
    const until = str(values.until);
    const search: Pickaxe = { string: str(values.S), lines: str(values.G), regex: Boolean(values["pickaxe-regex"]) };
    const pickaxe = search.string !== undefined || search.lines !== undefined || search.regex ? search : undefined;
    const problem = pickaxe ? pickaxeProblem(pickaxe) : null;
    if (problem) throw usage(PICKAXE_PROBLEMS[problem]); // refused before anything is read
    if (values.lost && !pickaxe) throw usage("--lost goes with -S or -G (git undo log -S <text> --lost); 'git undo rescue' lists all lost work");
    // Lost work is searched beside the snapshots.
    const lost = values.lost && pickaxe ? findLost(repo).then(async (work) => ({ work, items: await lostChanging(repo, work, pickaxe) })) : null;
    lost?.catch(() => {}); // awaited below
    // Paths only after `--`, as `git log -- <path>` (a lost file need not exist); any other word is refused.
    if (positionals.length > afterDashes) {
      throw usage(`git undo list takes no arguments (got '${positionals[0]}'; paths go after --: git undo log -- <path>)`);
    }
    // `-n` alone shows the newest: only they are decoded (the position is the newest's).
    const newestOnly = limit !== undefined && since === undefined && until === undefined && !positionals.length && !pickaxe;
    const own = readOwnSnapshots(repo.undoDir);
    const decode = (refs: SnapshotRef[]) =>
      newestOnly ? decodeNewest(refs, repo.snapshotPrefix, limit, own) : decodeSnapshots(refs, repo.snapshotPrefix, own);
    const seqs: Sequence[] = values["all-worktrees"]
      ? await allSequences(repo)
      : [{ worktree: repo.worktreeName, snapshots: decode(await (newestOnly ? scanNewestUndoRefs(repo, repo.snapshotPrefix, limit) : scanUndoRefs(repo, repo.snapshotPrefix))) }];
    // The position needs only the trailers; the states of the snapshots shown are checked (core/format/validate.ts).
    const shown = new Map<Sequence, SnapshotEntry[]>();
    for (const q of seqs) {
      let pool: SnapshotEntry[] = q.snapshots;
      if (since !== undefined || until !== undefined) pool = await snapshotsBetween(repo, pool, since, until);
      // Paths are compared over the whole sequence (each with the one before), then the range applies.
      if (positionals.length || pickaxe) {
        const touching = new Set((await snapshotsChanging(repo, await checkStates(repo, q.snapshots), { pathspecs: positionals, pickaxe })).map((s) => s.number));
        pool = pool.filter((s) => touching.has(s.number));
      }
      shown.set(q, await checkStates(repo, [...pool].reverse().slice(0, limit ?? pool.length)));
    }
    const newestFirst = (q: Sequence) => shown.get(q)!;
    const found = lost ? await lost : null;
    const lostShown = found ? found.items.slice(0, limit ?? found.items.length) : [];
    // Their words load only when asked for (they bring the size words of `snapshot`).
    const { lostLines, title } = found ? await import("../lost-words.ts") : { lostLines: null, title: null };
    if (values.json) {
      const rows: unknown[] = seqs.flatMap((q) => {
        const p = position(q.snapshots);
        return newestFirst(q).map((s) => snapshotJson(s, p, values["all-worktrees"] ? q.worktree : undefined));
      });
      for (const i of lostShown) rows.push({ lost: i.kind, id: i.id, shortId: i.id.slice(0, found!.work.abbrev), date: i.date === null ? null : isoDate(i.date), summary: title!(i) });
      json(rows);
      return 0;
    }
    await ctx.pager.start(repo);
    // One set of columns for every row printed, so that the worktrees' lists line up too.
    const cols = columnsFor(seqs.flatMap((q) => newestFirst(q)), outputColumns(ctx.io, 1));
    for (const [i, q] of seqs.entries()) {
      if (values["all-worktrees"]) {
        if (i > 0) out();
        out(color.bold(q.worktree === null ? "main worktree" : `worktree ${q.worktree}`));
      }
      if (q.snapshots.length === 0) {
        if (values["all-worktrees"]) out("  no snapshots");
        else out(hooksEnabled(repo) ? "no snapshots yet (git undo snapshot records one)" : `no snapshots yet: ${RECORDING_OFF} (git undo snapshot records one now)`);
        continue;
      }
      const p = position(q.snapshots);
      // The worker has a change still to record: the newest line is not the state now.
      if (q.worktree === repo.worktreeName && recordingPending(repo.undoDir, q.snapshots[q.snapshots.length - 1]?.date ?? null)) {
        out(`${color.yellow("  recording…")} ${color.dim("a newer change is being recorded (git undo records it first)")}`);
      }
      const rows = newestFirst(q);
      const before = streakOrigin(q.snapshots);
      for (const s of rows) out(line(color, s, p, cols, before));
      // The `*` is further down than the rows shown (-n, a range, a path): say where it is.
      if (p !== null && !rows.some((s) => s.number === p)) out(`you are at #${p}`);
    }
    if (found) {
      out();
      out(color.bold(lostShown.length ? "lost work ('git undo rescue <id>' brings it back):" : "no lost work found"));
      for (const l of lostLines!(color, lostShown, found.work.abbrev)) out(`  ${l}`);
    }
    return 0;
  },
};

