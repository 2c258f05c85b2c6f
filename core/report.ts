// The lines `git undo`, `git undo redo` and `git undo restore` print: what was
// (or, on a dry run, would be) restored, the refs that move, HEAD, file counts,
// the stash, whether the state was saved first, and how to go back.
import { userSummary } from "./describe.ts";
import type { HeadState, RefLine } from "./format.ts";
import { indexChanges, nameList, operationName, planIsEmpty, type NotRestored, type RefMove, type RestorePlan } from "./plan.ts";
import type { RestoreResult } from "./restore.ts";

export interface ReportStyle {
  /** "3 minutes ago" for a unix time. */
  age: (unixSeconds: number) => string;
  /** Colour hooks; identity by default. */
  strong?: (s: string) => string;
  dim?: (s: string) => string;
}

const short = (oid: string) => oid.slice(0, 7);

/** A ref as people say it: `main`, `tag v1`, `origin/main`, or the full name. */
export function refName(name: string): string {
  if (name.startsWith("refs/heads/")) return name.slice(11);
  if (name.startsWith("refs/tags/")) return `tag ${name.slice(10)}`;
  if (name.startsWith("refs/remotes/")) return name.slice(13);
  return name;
}

function where(r: RefLine): string {
  if (r.symrefTarget) return `-> ${r.symrefTarget.replace(/^refs\/(heads|remotes)\//, "")}`;
  return short(r.object);
}

function headText(h: HeadState): string {
  if (h.kind === "detached") return `detached at ${short(h.commit)}`;
  return h.target.replace(/^refs\/heads\//, "");
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function refLine(m: RefMove, force: boolean): string {
  const name = refName(m.name);
  const subject = m.newSubject ? `  ${m.newSubject}` : "";
  if (m.checkedOutIn !== undefined && !force) {
    return `${name} left at ${m.old ? where(m.old) : "(absent)"}: checked out in worktree ${m.checkedOutIn} (--force moves it)`;
  }
  if (m.action === "create") return `${name} created at ${where(m.new!)}${subject}`;
  if (m.action === "delete") return `${name} deleted (was ${where(m.old!)})`;
  return `${name} ${where(m.old!)} -> ${where(m.new!)}${subject}`;
}

/** What changes, the body shared by the report and the dry run. */
export function describePlan(plan: RestorePlan, force = false): string[] {
  const lines: string[] = [];
  for (const m of plan.refs) lines.push(refLine(m, force));
  if (plan.head) lines.push(`HEAD ${headText(plan.head.old)} -> ${headText(plan.head.new)}`);
  const w = plan.worktree;
  if (w.mode === "skipped") lines.push(`files left alone: ${w.reason}`);
  else if (w.files.length) {
    const n = (a: string) => w.files.filter((f) => f.action === a).length;
    const parts = (["changed", "created", "removed"] as const).filter((a) => n(a) > 0).map((a) => `${n(a)} ${a}`);
    const added = w.files.reduce((k, f) => k + (f.added ?? 0), 0);
    const removed = w.files.reduce((k, f) => k + (f.removed ?? 0), 0);
    lines.push(`files: ${parts.join(", ")} (+${added} -${removed} lines)`);
  }
  if (plan.index && indexChanges(plan)) {
    const filePaths = new Set(w.files.map((f) => f.path));
    const own = plan.index.entries.filter((e) => !filePaths.has(e.path));
    if (own.length || (w.mode !== "merge" && plan.index.entries.length)) {
      lines.push(`index: ${plural(plan.index.entries.length, "entry", "entries")} change (${nameList(plan.index.entries.map((e) => e.path), 3)})`);
    }
    const now = plan.index.conflictsNow;
    const after = plan.index.conflictsAfter;
    if (after.length) lines.push(`conflicts restored: ${nameList(after, 3)}`);
    else if (now.length) lines.push(`conflicts gone: ${nameList(now, 3)}`);
  }
  if (plan.stash) {
    const { added, removed, after } = plan.stash;
    const parts: string[] = [];
    if (added.length) parts.push(`${plural(added.length, "entry", "entries")} back`);
    if (removed.length) parts.push(`${removed.length} removed`);
    if (!parts.length) parts.push("reordered");
    lines.push(`stash: ${parts.join(", ")} (${plural(after.length, "entry", "entries")} after)`);
  }
  if (planIsEmpty(plan)) lines.push(`nothing changes: the current state already matches #${plan.target.number}`);
  return lines;
}

/** A part of the target left as it is (--skip-missing), as the report names it. */
function notRestoredLine(n: NotRestored): string {
  if (n.kind === "ref") return `${refName(n.name)} (${short(n.object)})`;
  if (n.kind === "head") return `HEAD (${headText(n.head)} in the snapshot)`;
  return `stash entry '${n.entry.message}' (${short(n.entry.commit)})`;
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
 * has their content.
 */
function onlyLeftLine(result: RestoreResult): string | null {
  const files = result.plan.onlyLeft;
  if (!files.length) return null;
  const left = result.plan.from.number;
  let back: string;
  if (!result.dryRun) back = result.goBack.length ? result.goBack.join(" or ") : `git undo restore ${left ?? "?"}`;
  // A partial restore or a revert is a new change: plain `git undo` is the way back.
  else if (result.composed) back = left !== null ? `git undo or git undo restore ${left}` : "git undo (they are saved first)";
  else back = left !== null ? `git undo redo or git undo restore ${left}` : "git undo redo (they are saved first)";
  return `only the state left has ${files.length === 1 ? "this file" : "these files"}: ${nameList(files, 5)}; to get ${files.length === 1 ? "it" : "them"} back: ${back}`;
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
  const what = result.composed ? (revert ? head : result.composed.description) : head;
  const verb = result.dryRun ? (revert ? "Would revert" : "Would restore") : revert ? "Reverted" : "Restored";
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
  const skipped = plan.notRestored;
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
    if (d.part === "state") lines.push(`  note: the operation in progress in #${t.number} is not re-created`);
    else lines.push(`  note: ${d.part} differs from #${t.number}${d.names.length ? `: ${nameList(d.names, 3)}` : ""}`);
  }
  if (result.dryRun) {
    if (plan.blockers.length) for (const b of plan.blockers) lines.push(`would refuse: ${b.message}`);
    lines.push(dim("Nothing was changed (--dry-run)."));
  } else if (result.restoreSnapshot) {
    const back = result.goBack.length ? ` To go back: ${result.goBack.join(", or ")}` : "";
    lines.push(dim(`Recorded as #${result.restoreSnapshot.number}.${back}`));
    if (skipped.length) lines.push(`warning: ${plural(skipped.length, "part")} of #${t.number} could not be restored (objects gone; see 'not restored' above)`);
  }
  return lines;
}
