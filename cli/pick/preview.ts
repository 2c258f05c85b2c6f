// What the picker shows beside the list: the restore plan of the highlighted
// snapshot (core/restore/plan.ts, the same plan `git undo restore --dry-run` prints),
// or Git's diff from the current state to it. Each is computed once, on demand.
import type { Snapshot } from "../../core/format/index.ts";
import { diffArgs, treePair } from "../../core/patch.ts";
import { filesOnDisk, indexChanges, planIsEmpty, planRestore, submoduleOnly, type RestorePlan, type StateSide } from "../../core/restore/plan.ts";
import { listSnapshots } from "../../core/snapshots/history.ts";
import type { GoBack } from "../../core/restore/index.ts";
import { waysBack } from "../../core/restore/outcome.ts";
import type { Repo } from "../../core/repo.ts";
import { recordingPending } from "../../worker/protocol.ts";
import type { Palette } from "../ui.ts";
import { blockerText, operationName, planGist, conflictsPhrase, filesPhrase, headName, onlyLeftPhrase, plural, refMovePhrase, refMoveSubject, short, stashPhrase, submodulesLeftPhrase, submodulesPhrase, waysBackPhrase } from "../plan-words.ts";
import { printable } from "./text.ts";

/** Where previews come from; the picker only ever asks for one at a time. */
export { planGist };

export interface PreviewSource {
  /** Lines saying what restoring `snap` would do. */
  summary(snap: Snapshot): Promise<string[]>;
  /** Git's diff of the files, from the current state to `snap`, as lines. */
  diff(snap: Snapshot): Promise<string[]>;
  /** What restoring `snap` would do, in one line (the confirmation repeats it). */
  gist(snap: Snapshot): Promise<string>;
}

/** Longest diff the picker holds; `git undo show <n> -p` shows all of it. */
const DIFF_LINES = 5000;

/** Previews of restoring each snapshot from `from`, the state the picker was opened in, in `color`. */
export function planPreviews(repo: Repo, from: StateSide, color: Palette): PreviewSource {
  const plans = new Map<number, Promise<RestorePlan>>();
  // The snapshots before the state left, once: they tell which files only that state holds.
  const all = listSnapshots(repo);
  const earlier = all.then((snaps) => snaps.filter((s) => from.number === null || s.number < from.number));
  earlier.catch(() => {}); // reaches the user through each preview
  const plan = (snap: Snapshot) => {
    let p = plans.get(snap.number);
    if (!p) {
      p = earlier.then((e) => planRestore(repo, from, snap, { earlier: e }));
      plans.set(snap.number, p);
      p.catch(() => plans.delete(snap.number));
    }
    return p;
  };
  return {
    async summary(snap) {
      const p = await plan(snap);
      const lines = describePlan(color, p, waysBack(await all, p.from, snap, false));
      if (recordingPending(repo.undoDir, (await all.catch(() => [])).at(-1)?.date ?? null)) {
        lines.push(color.yellow("recording… a newer change is being recorded; the list may not show it yet"));
      }
      return lines;
    },
    async gist(snap) {
      return planGist(await plan(snap));
    },
    async diff(snap) {
      const p = await plan(snap);
      const pair = treePair(p.from.state, p.targetState);
      if (!pair) return [color.dim("no files recorded on one side: nothing to diff")];
      const out = await repo.git.text(diffArgs(pair, color.on() ? "always" : "never"));
      if (!out) return [color.dim(`no file differs between the current state and #${snap.number}`)];
      const lines = out.replace(/\n$/, "").split("\n");
      if (lines.length <= DIFF_LINES) return lines;
      return [...lines.slice(0, DIFF_LINES), color.dim(`... cut at ${DIFF_LINES} lines; git undo show ${snap.number} -p shows it all`)];
    },
  };
}

const stat = (color: Palette, added: number | null, removed: number | null) =>
  added === null || removed === null ? color.dim("binary") : `${color.green(`+${added}`)} ${color.red(`-${removed}`)}`;
const ACTION_MARK = { created: "A", removed: "D", changed: "M" } as const;

/**
 * The plan as the picker's preview lines (colours applied, not yet cut to
 * width), below the header the picker draws itself. What happens to HEAD, the
 * refs and the stash comes first: a long file list must not hide it.
 */
export function describePlan(color: Palette, p: RestorePlan, back: readonly GoBack[]): string[] {
  const lines: string[] = [];
  for (const b of p.blockers) lines.push(color.red(`refused: ${printable(blockerText(b))}`));
  if (p.recordFirst) lines.push(color.yellow("Your unrecorded changes are saved as a new snapshot first."));
  if (planIsEmpty(p)) {
    lines.push(color.dim("Nothing would change: this is the state you are in."));
    return lines;
  }
  const subject = (s: string | undefined) => (s ? color.dim(`  ${printable(s)}`) : "");
  if (p.head) lines.push(`${color.bold("HEAD")}   ${headName(p.head.old)} -> ${headName(p.head.new)}${subject(p.head.newSubject)}`);
  if (p.refs.length) {
    lines.push(color.bold(`refs   ${plural(p.refs.length, "ref")} would move`));
    for (const m of p.refs) lines.push(`  ${printable(refMovePhrase(m, false))}${subject(refMoveSubject(m))}`);
  }
  if (p.stash) {
    lines.push(`${color.bold("stash")}  ${stashPhrase(p.stash)}`);
    for (const e of p.stash.added) lines.push(`  ${color.green("+")} ${short(e.commit)} ${printable(e.message)}`);
    for (const e of p.stash.removed) lines.push(`  ${color.red("-")} ${short(e.commit)} ${printable(e.message)}`);
  }
  if (p.operations.length) lines.push(color.yellow(`in progress now: ${p.operations.map(operationName).join(", ")}`));
  const wt = p.worktree;
  if (wt.mode === "skipped") lines.push(color.dim(`files  left alone: ${wt.reason ?? "not recorded"}`));
  else if (filesOnDisk(wt).length) {
    lines.push(color.bold(`files  ${filesPhrase(filesOnDisk(wt))}`));
    // Counts before the path: a long path is cut at its end, the counts stay.
    for (const f of filesOnDisk(wt)) lines.push(`  ${ACTION_MARK[f.action]} ${stat(color, f.added, f.removed)}  ${printable(f.path)}`);
  }
  const submodules = submodulesPhrase(wt, p.target.number, 10);
  if (submodules) lines.push(printable(submodules));
  if (wt.submodulesLeft.length) lines.push(color.yellow(printable(submodulesLeftPhrase(wt.submodulesLeft, 10))));
  if (p.index && indexChanges(p)) {
    const key = (f: { path: string; newObject: string }) => `${f.path}\0${f.newObject}`;
    // A submodule's entry that changes as its record does was said above.
    const asSubmodule = new Set(wt.files.filter(submoduleOnly).map(key));
    const e = p.index.entries.filter((f) => !asSubmodule.has(key(f)));
    // Entries that change exactly as their file does were listed under files already.
    const asFile = new Set(filesOnDisk(wt).map(key));
    const own = e.filter((f) => !asFile.has(key(f)));
    const also = e.length - own.length;
    if (!e.length) {
      /* only submodules' entries */
    } else if (!own.length) lines.push(`${color.bold("index")}  follows the files (${plural(e.length, "entry", "entries")})`);
    else lines.push(color.bold(`index  ${plural(e.length, "entry", "entries")} differ${e.length === 1 ? "s" : ""}`) + (also ? color.dim(` (${also} as the files)`) : ""));
    for (const f of own) lines.push(`  ${ACTION_MARK[f.action]} ${stat(color, f.added, f.removed)}  ${printable(f.path)}`);
    const conflicts = conflictsPhrase(p.index, 10);
    if (conflicts) lines.push(`  ${printable(conflicts)}`);
  }
  if (p.onlyLeft.length) lines.push(color.yellow(printable(onlyLeftPhrase(p.onlyLeft, waysBackPhrase(back), 10))));
  return lines;
}
