// The words for what a restore would do and what stops it: the one place that
// says them, for the report of git undo / redo / restore / revert, the dry run,
// and the picker's preview and confirmation. The core hands over typed plans
// and blockers (core/restore/plan.ts); nothing there is worded for the user.
import { headLabel, OPERATION_LABELS } from "../core/describe.ts";
import { refParts, type HeadState, type OperationMarker, type RefLine } from "../core/format/index.ts";
import { escapeControls, nameList } from "../core/text.ts";
import { MODE } from "../core/mode.ts";
import { filesOnDisk, indexChanges, submoduleOnly, planIsEmpty, type Blocker, type GitmodulesProblem, type RefProblem, type RestorePlan, type FileChange, type IndexPlan, type RefMove, type StashPlan, type WorktreePlan } from "../core/restore/plan.ts";
import type { GoBack } from "../core/restore/index.ts";
import { PARTS, type PartialSelection } from "../core/compose.ts";


/** An operation in progress, by the marker Git leaves for it. */
export const operationName = (m: OperationMarker): string => OPERATION_LABELS[m].name;


export const short = (oid: string): string => oid.slice(0, 7);

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** A ref as people say it: `main`, `tag v1`, `origin/main`, or the full name (names come from snapshots: escaped). */
export function refName(name: string): string {
  const { kind, short } = refParts(name);
  return escapeControls(kind === "tag" ? `tag ${short}` : short);
}

/** Where a ref points: its commit, or for a symbolic one the ref it names (`origin/main`). */
export function refWhere(r: RefLine): string {
  return r.symrefTarget ? escapeControls(refParts(r.symrefTarget).short) : short(r.object ?? "");
}

/** HEAD as people say it: a branch, or `detached at 1a2b3c4`. */
export const headName = (head: HeadState): string => escapeControls(headLabel(head));

/** `feature created at 1a2b3c4`, `v1 deleted (was 1a2b3c4)`, `main 1a2b3c4 -> 5d6e7f8`, `origin/HEAD points at origin/dev (was origin/main)`, or why it stays. */
export function refMovePhrase(m: RefMove, force: boolean): string {
  const name = refName(m.name);
  if (m.checkedOutIn !== undefined && !force) {
    return `${name} left at ${m.old ? refWhere(m.old) : "(absent)"}: checked out in worktree ${m.checkedOutIn} (--force moves it)`;
  }
  if (m.symbolic) {
    // A symbolic ref names another ref: said as a pointer, not as a commit it moves between.
    if (m.action === "create") return `${name} created, pointing at ${refWhere(m.new!)}`;
    if (m.action === "delete") return `${name} deleted (pointed at ${refWhere(m.old!)})`;
    return `${name} points at ${refWhere(m.new!)} (was ${refWhere(m.old!)})`;
  }
  if (m.action === "create") return `${name} created at ${refWhere(m.new!)}`;
  if (m.action === "delete") return `${name} deleted (was ${refWhere(m.old!)})`;
  return `${name} ${refWhere(m.old!)} -> ${refWhere(m.new!)}`;
}

/** The subject shown after a ref move: of the commit it reaches, or for a deletion the one it leaves. */
export const refMoveSubject = (m: RefMove): string | undefined => m.newSubject ?? (m.action === "delete" ? m.oldSubject : undefined);

/** `1 changed, 2 removed (+3 -4 lines)`. */
export function filesPhrase(files: readonly FileChange[]): string {
  const n = (a: string) => files.filter((f) => f.action === a).length;
  const parts = (["changed", "created", "removed"] as const).filter((a) => n(a) > 0).map((a) => `${n(a)} ${a}`);
  const added = files.reduce((k, f) => k + (f.added ?? 0), 0);
  const removed = files.reduce((k, f) => k + (f.removed ?? 0), 0);
  return `${parts.join(", ")} (+${added} -${removed} lines)`;
}

/** `1 entry back, 1 removed (3 entries after)`; without the count after when `short`. */
export function stashPhrase(p: StashPlan, short = false): string {
  const parts: string[] = [];
  if (p.added.length) parts.push(`${plural(p.added.length, "entry", "entries")} back`);
  if (p.removed.length) parts.push(`${p.removed.length} removed`);
  if (!parts.length) parts.push("reordered");
  return short ? parts.join(", ") : `${parts.join(", ")} (${plural(p.after.length, "entry", "entries")} after)`;
}

/** What happens to the index's conflicts, or null when they stay as they are. */
export function conflictsPhrase(index: IndexPlan, max = 3): string | null {
  if (index.conflictsAfter.length) return `conflicts restored: ${nameList(index.conflictsAfter, max)}`;
  if (index.conflictsNow.length) return `conflicts gone: ${nameList(index.conflictsNow, max)}`;
  return null;
}

/**
 * The files only the state being left holds, and how to get them back:
 * `back` is the command (or commands) that does.
 */
export function onlyLeftPhrase(files: readonly string[], back: string, max = 5): string {
  const one = files.length === 1;
  return `only the state left has ${one ? "this file" : "these files"}: ${nameList(files, max)}; to get ${one ? "it" : "them"} back: ${back}`;
}

/**
 * Submodules whose recorded commit changes, or that go, while no file of
 * theirs changes (null when none): `submodule sub: #3 records 1a2b3c4, its
 * files stay as they are (git submodule update checks it out)`. Those whose
 * folders keep files when they go are said by submodulesLeftPhrase.
 */
export function submodulesPhrase(w: WorktreePlan, target: number, max = 3): string | null {
  const only = w.files.filter(submoduleOnly);
  const recorded = only.filter((f) => f.newMode === MODE.gitlink);
  const gone = only.filter((f) => f.newMode === MODE.absent && !w.submodulesLeft.includes(f.path));
  const parts: string[] = [];
  if (recorded.length) {
    const one = recorded.length === 1;
    const what = one ? `#${target} records ${short(recorded[0]!.newObject)}` : `#${target} records other commits`;
    parts.push(`${one ? "submodule" : "submodules"} ${nameList(recorded.map((f) => f.path), max)}: ${what}, ${one ? "its files stay" : "their files stay"} as they are (git submodule update checks ${one ? "it" : "them"} out)`);
  }
  if (gone.length) parts.push(`${gone.length === 1 ? "submodule" : "submodules"} ${nameList(gone.map((f) => f.path), max)}: not in #${target} (an empty folder, removed)`);
  return parts.length ? parts.join("; ") : null;
}

/** Submodules the restore takes out of the index whose folders stay on disk, files and all. */
export function submodulesLeftPhrase(paths: readonly string[], max = 5): string {
  const one = paths.length === 1;
  return `${one ? "a submodule's folder stays" : "submodules' folders stay"} on disk with ${one ? "its" : "their"} files: ${nameList(paths, max)} (git-undo never deletes them)`;
}

/** The folder the user is in, emptied by the restore and kept. */
export const keptFolderPhrase = (folder: string): string => `the folder you are in stays, now empty: ${escapeControls(folder)} (Git never removes the current directory)`;

/** A partial restore as the command to type: `git undo restore 3 --ref main --only index,worktree`. */
export function partialCommand(target: number, sel: PartialSelection): string {
  const parts = PARTS.filter((p) => sel.parts.includes(p));
  return [`git undo restore ${target}`, ...sel.refs.map((r) => `--ref ${escapeControls(r)}`), ...(parts.length ? [`--only ${parts.join(",")}`] : [])].join(" ");
}

/** A partial restore moving the branch checked out here, the index and the files left (as git reset --soft leaves them). */
export function branchAlonePhrase(branch: string, target: number, withFiles: PartialSelection): string {
  return `${refName(branch)} is checked out here: the index and the files stay as they are (as after git reset --soft); to bring them too: ${partialCommand(target, withFiles)}`;
}

/** A way back as the command to type. */
export function goBackCommand(g: GoBack): string {
  return g.command === "restore" ? `git undo restore ${g.number}` : g.command === "undo" ? "git undo" : "git undo redo";
}

/** The ways back to the state a restore leaves, as the report, the dry run and the picker say them: `git undo redo or git undo restore 8`. */
export const waysBackPhrase = (ways: readonly GoBack[], separator = " or "): string => ways.map(goBackCommand).join(separator);

/** Why a restore cannot go ahead, in one sentence (shown on a terminal: escaped). */
export function blockerText(b: Blocker): string {
  return escapeControls(blockerSentence(b));
}

function blockerSentence(b: Blocker): string {
  const T = `#${b.target}`;
  const names = nameList(b.names);
  const one = b.names.length === 1;
  switch (b.kind) {
    case "operation":
      return `${operationName(b.names[0] as Parameters<typeof operationName>[0])} is in progress; finish or abort it first, or use --force to end it (its commits stay in the snapshots)`;
    case "missing-objects":
      return `objects snapshot ${T} needs are gone from the repository (pruned by git gc?): ${nameList(b.missing.map((m) => `${m.what} (${short(m.object)})`))}; 'git undo restore ${b.target} --skip-missing' restores everything else`;
    case "untracked-file":
    case "ignored-file": {
      const what = b.kind === "ignored-file" ? (one ? "an ignored file" : "ignored files") : one ? "a file Git has not recorded" : "files Git has not recorded";
      return `${what} ${one ? "stands" : "stand"} where snapshot ${T} creates ${one ? "one" : "some"}: ${names}; move ${one ? "it" : "them"} away first (git-undo never overwrites a file no snapshot holds)`;
    }
    case "submodule-in-the-way":
      return `${one ? "a submodule's folder holds files" : "submodules' folders hold files"} where snapshot ${T} has a file: ${names}; git-undo never deletes a submodule's files (its changes and untracked files may be nowhere else): move ${one ? "the folder" : "the folders"} away first`;
    case "not-uptodate":
      return `a file on disk differs from the state being left (changed while git-undo was reading it?): ${b.names.length ? names : b.detail}; run the command again`;
    case "index-lock":
      return `${b.names[0]} exists: another Git command is running in this repository (if none is, remove the file)`;
    case "head-in-other-worktree":
      return `snapshot ${T} has HEAD on ${headLabel({ kind: "symbolic", target: b.names[0]! })}, which is checked out in ${b.worktree} (use --force to check it out here too)`;
    case "revert-conflict":
      return `what ${T} changed has changed again since: ${names}; nothing was reverted`;
    case "current-directory":
      return `snapshot ${T} has a file where the folder you are in is: ${names}; cd out of it first (Git never removes the current directory)`;
    case "ref-refused":
      return `Git would refuse ${one ? "a ref" : "refs"} snapshot ${T} has: ${nameList(b.refs.map(refProblemText), 3)}`;
    case "missing-conflict-blobs":
      return `the conflicted files snapshot ${T} has in the index are gone from the repository: ${nameList(b.missing.map((m) => `${m.path} (${short(m.object)})`))}; 'git undo restore ${b.target} --only refs,head,worktree,stash' restores the rest`;
    case "path-too-long":
      return b.part === "path"
        ? `snapshot ${T}'s files are nested too deep to restore: ${shownName(b.names[0]!)} is ${plural(b.depth, "folder")} deep (a path here holds at most ${b.limit} bytes)`
        : `snapshot ${T} has a file name too long to restore: ${shownName(b.names[0]!)} (a name of ${b.bytes} bytes; a name here holds at most ${b.limit})`;
    case "gitmodules-refused":
      return `snapshot ${T} has a .gitmodules Git refuses to read (${gitmodulesProblemText(b.problem)}); restored, it would make Git fail wherever it looks at submodules`;
  }
}

/** What Git refuses in a snapshot's .gitmodules. */
function gitmodulesProblemText(p: GitmodulesProblem): string {
  switch (p.why) {
    case "unreadable":
      return "it is not a configuration file Git can parse";
    case "update":
      return p.value?.startsWith("!")
        ? `${shownName(p.key)} = ${shownName(p.value)}: Git runs update commands only from .git/config, never from .gitmodules`
        : `${shownName(p.key)}${p.value === null ? " has no value" : ` = ${shownName(p.value)}`}: Git updates a submodule only by checkout, rebase, merge or none`;
    case "fetch-recurse":
      return `${shownName(p.key)} = ${shownName(p.value)}: neither true, false nor on-demand`;
  }
}

/** A ref name or a setting as a message shows it: a very long one cut, with its length. */
function shownName(name: string): string {
  return name.length > 80 ? `${name.slice(0, 60)}... (${Buffer.byteLength(name)} bytes)` : name;
}

/** One ref Git would refuse, and why. */
function refProblemText(p: RefProblem): string {
  const name = shownName(p.name);
  switch (p.why) {
    case "conflict":
      return `${name} (Git cannot have it and ${shownName(p.other)} at once)`;
    case "too-long":
      return `${name} (a name too long for ${p.storage === "reftable" ? "reftable" : "the files"} ref storage)`;
    case "not-a-commit":
      return `${name} (a branch naming a ${p.type}; Git puts only commits on branches)`;
    case "loop":
      return `${name} (a symbolic ref in a loop: ${p.loop.map(shownName).join(" -> ")})`;
  }
}

/** The plan in one line: "HEAD to feature, 2 refs, 3 files, stash: 1 entry goes". */
export function planGist(p: RestorePlan): string {
  if (p.blockers.length) return `refused: ${blockerText(p.blockers[0]!)}`;
  if (planIsEmpty(p)) return "nothing would change";
  const parts: string[] = [];
  if (p.head) parts.push(`HEAD to ${headName(p.head.new)}`);
  if (p.refs.length) parts.push(plural(p.refs.length, "ref"));
  if (p.stash) {
    parts.push(`stash: ${stashPhrase(p.stash, true)}`);
  }
  const files = filesOnDisk(p.worktree);
  const submodules = p.worktree.files.length - files.length;
  if (p.worktree.mode !== "skipped" && files.length) parts.push(plural(files.length, "file"));
  else if (p.worktree.mode !== "skipped" && submodules) parts.push(plural(submodules, "submodule"));
  else if (p.index && indexChanges(p)) parts.push(plural(p.index.entries.length, "index entry", "index entries"));
  if (p.onlyLeft.length) parts.push(`${plural(p.onlyLeft.length, "file")} kept only in the state left`);
  return parts.join(", ");
}
