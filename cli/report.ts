// The report of git undo, redo, restore and revert, and of their dry runs:
// what was (or would be) restored, the refs that move, HEAD, file counts, the
// stash, whether the state was saved first, and how to go back. Worded with
// cli/plan-words.ts, as the picker's preview is.
import { userSummary } from "../core/describe.ts";
import { filesOnDisk, indexChanges, planIsEmpty, submoduleOnly, type NotRestored, type RefMove, type RestorePlan } from "../core/restore/plan.ts";
import type { RestoreResult } from "../core/restore/index.ts";
import { escapeControls, nameList } from "../core/text.ts";
import { MODE } from "../core/mode.ts";
import { blockerText, branchAlonePhrase, operationName, conflictsPhrase, onlyLeftPhrase, filesPhrase, headName, keptFolderPhrase, plural, refMovePhrase, refName, short, stashPhrase, submodulesLeftPhrase, submodulesPhrase, waysBackPhrase } from "./plan-words.ts";
import { beforeRestoresPhrase } from "./refusal-words.ts";

export interface ReportStyle {
  /** "3 minutes ago" for a unix time. */
  age: (unixSeconds: number) => string;
  /** Colour hooks; identity by default. */
  strong?: (s: string) => string;
  dim?: (s: string) => string;
}

function refLine(m: RefMove, force: boolean): string {
  const held = m.checkedOutIn !== undefined && !force;
  return `${refMovePhrase(m, force)}${!held && m.action !== "delete" && m.newSubject ? `  ${escapeControls(m.newSubject)}` : ""}`;
}

/** What changes, the body shared by the report and the dry run. */
export function describePlan(plan: RestorePlan, force = false): string[] {
  const lines: string[] = [];
  for (const m of plan.refs) lines.push(refLine(m, force));
  if (plan.head) lines.push(`HEAD ${headName(plan.head.old)} -> ${headName(plan.head.new)}`);
  const w = plan.worktree;
  if (w.mode === "skipped") lines.push(`files left alone: ${w.reason}`);
  else if (filesOnDisk(w).length) lines.push(`files: ${filesPhrase(filesOnDisk(w))}`);
  const submodules = submodulesPhrase(w, plan.target.number);
  if (submodules) lines.push(submodules);
  if (w.submodulesLeft.length) lines.push(submodulesLeftPhrase(w.submodulesLeft));
  if (plan.index && indexChanges(plan)) {
    const filePaths = new Set(w.files.map((f) => f.path));
    const own = plan.index.entries.filter((e) => !filePaths.has(e.path));
    if (own.length || (w.mode !== "merge" && plan.index.entries.length)) {
      lines.push(`index: ${plural(plan.index.entries.length, "entry", "entries")} change (${nameList(plan.index.entries.map((e) => e.path), 3)})`);
    }
    const conflicts = conflictsPhrase(plan.index);
    if (conflicts) lines.push(conflicts);
  }
  if (plan.stash) lines.push(`stash: ${stashPhrase(plan.stash)}`);
  if (planIsEmpty(plan)) lines.push(`nothing changes: the current state already matches #${plan.target.number}`);
  return lines;
}

/** A part of the target left as it is (--skip-missing), as the report names it. */
function notRestoredLine(n: NotRestored): string {
  if (n.kind === "ref") return `${refName(n.name)} (${short(n.object)})`;
  if (n.kind === "head") return `HEAD (${headName(n.head)} in the snapshot)`;
  return `stash entry '${escapeControls(n.entry.message)}' (${short(n.entry.commit)})`;
}

/** `Undid #17 · branch feature deleted`: what `git undo` took back (or redo did again), before where it went. */
function steppedLines(result: RestoreResult): string[] {
  const redo = result.kind === "redo";
  const verb = result.dryRun ? (redo ? "Would redo" : "Would undo") : redo ? "Redid" : "Undid";
  const shown = result.stepped.slice(0, 3).map((c) => `${verb} ${c.number === null ? "your unrecorded changes" : `#${c.number} · ${userSummary(c.summary)}`}`);
  if (result.stepped.length > 3) shown.push(`  and ${result.stepped.length - 3} more`);
  return shown;
}

/**
 * The files only the state left holds, and how to get them back: the restore
 * takes them off disk or changes them, and no snapshot before the state left
 * has their content. The way back is the real restore's (a dry run's is worked
 * out for the restore it would make).
 */
function onlyLeftLine(result: RestoreResult): string | null {
  const files = result.plan.onlyLeft;
  if (!files.length) return null;
  return onlyLeftPhrase(files, result.goBack.length ? waysBackPhrase(result.goBack) : `git undo restore ${result.plan.from.number ?? "?"}`);
}

/** The report of a restore, or of a dry run. */
export function reportLines(result: RestoreResult, style: ReportStyle, force = false): string[] {
  const strong = style.strong ?? ((s: string) => s);
  const dim = style.dim ?? ((s: string) => s);
  const { plan } = result;
  const t = plan.target;
  const head = `#${t.number} · ${userSummary(t.summary)} · ${style.age(t.date)}`;
  // A partial restore names what it brings back; a revert, the change it takes out.
  const revert = result.kind === "revert";
  const rescue = result.kind === "rescue";
  const what = result.composed ? (revert ? head : escapeControls(result.composed.description)) : head;
  const verb = result.dryRun ? (revert ? "Would revert" : rescue ? "Would rescue" : "Would restore") : revert ? "Reverted" : rescue ? "Rescued" : "Restored";
  const lines: string[] = [];
  if (result.dryRun) {
    lines.push(...steppedLines(result));
    lines.push(strong(`${verb} ${what}`));
    if (plan.recordFirst) lines.push("Would save your unrecorded changes as a snapshot first");
    if (plan.operations.length) {
      lines.push(force ? `Would end ${operationName(plan.operations[0]!)} in progress first (Git's own --quit)` : `${operationName(plan.operations[0]!)} is in progress`);
    }
  } else {
    if (result.recordedFirst) lines.push(`Saved your unrecorded changes as #${result.recordedFirst.number} first`);
    if (result.endedOperations.length) lines.push(`Ended ${result.endedOperations.map(operationName).join(", ")} in progress (Git's --quit)`);
    lines.push(...steppedLines(result).map((l) => strong(l)));
    lines.push(strong(`${verb} ${what}`));
  }
  for (const l of describePlan(plan, force)) lines.push(`  ${l}`);
  const onlyLeft = onlyLeftLine(result);
  if (onlyLeft) lines.push(`  ${onlyLeft}`);
  if (result.keptFolder !== null) lines.push(`  ${keptFolderPhrase(result.keptFolder)}`);
  const alone = result.composed?.branchAlone;
  if (alone) lines.push(`  ${branchAlonePhrase(alone.branch, t.number, alone.withFiles)}`);
  const skipped = plan.notRestored;
  const submodulesSaid = new Set(
    [...plan.worktree.files.filter((f) => submoduleOnly(f) && f.newMode !== MODE.absent).map((f) => f.path), ...plan.worktree.submodulesLeft].map((p) => `${p} (submodule checkout)`),
  );
  for (const n of skipped) lines.push(`  ${result.dryRun ? "would not restore" : "not restored"}: ${notRestoredLine(n)}: its objects are gone, left as it is`);
  for (const d of result.differences) {
    // The parts left as they are (above) are why refs, HEAD or the stash differ: not said twice.
    if (d.part === "HEAD" && skipped.some((n) => n.kind === "head")) continue;
    if (d.part === "stash" && skipped.some((n) => n.kind === "stash")) continue;
    if (d.part === "refs" && skipped.length) {
      const names = d.names.filter((name) => !skipped.some((n) => n.kind === "ref" && n.name === name));
      if (names.length) lines.push(`  note: refs differ from #${t.number}: ${nameList(names, 3)}`);
      continue;
    }
    if (d.part === "state") {
      lines.push(`  note: the operation in progress in #${t.number} is not re-created`);
      continue;
    }
    // Submodule checkouts left as they are were said above.
    const names = d.part === "worktree" ? d.names.filter((n) => !submodulesSaid.has(n)) : d.names;
    if (d.part === "worktree" && d.names.length && !names.length) continue;
    lines.push(`  note: ${d.part} differs from #${t.number}${names.length ? `: ${nameList(names, 3)}` : ""}`);
  }
  if (result.dryRun) {
    if (plan.blockers.length) for (const b of plan.blockers) lines.push(`would refuse: ${blockerText(b)}`);
    lines.push(dim("Nothing was changed (--dry-run)."));
  } else if (result.restoreSnapshot) {
    const back = result.goBack.length ? ` To go back: ${waysBackPhrase(result.goBack, ", or ")}` : "";
    const before = result.before === null ? "" : `${back ? ";" : ""} ${beforeRestoresPhrase(result.before)}`;
    lines.push(dim(`Recorded as #${result.restoreSnapshot.number}.${back}${before}`));
    if (skipped.length) lines.push(`warning: ${plural(skipped.length, "part")} of #${t.number} could not be restored (objects gone; see 'not restored' above)`);
  }
  return lines;
}
