// Summary lines: what a new snapshot changed, in a few words. Pure: the facts
// come from core/change-facts.ts (Git's diffs and the previous snapshot's
// parts) and core/git-data/operation.ts (the operation's files); nothing here reads.
// The facts' types are here, with what words them; change-facts.ts fills them in.
import { branchName, decodeUnmerged, refParts, type HeadState, type OperationMarker, type RefLine, type StashEntry, type StateTree } from "./format/index.ts";
import { escapeControls } from "./text.ts";
import type { OperationFacts } from "./git-data/operation.ts";

/** What the previous snapshot's tree holds that the summary compares with. */
export interface PreviousParts {
  head: string | null;
  refs: RefLine[];
  stash: StashEntry[];
  markers: OperationMarker[];
  /** Conflicted paths (UTF-8 text). */
  conflicts: string[];
}

/** What a change did, as Git tells it. */
export interface ChangeFacts {
  /** Paths of the state tree that differ from the previous snapshot's, by status letter. */
  changed: Map<string, string>;
  /** The files against the index now, by status letter; null without a working tree. */
  unstaged: Map<string, string> | null;
  /** The previous snapshot's parts, when refs, the stash, HEAD or conflicts changed (or they were known). */
  previous: PreviousParts | null;
  /** Index paths that differ from HEAD's tree, among those that could be staged or set back. */
  stagedVsHead: Set<string>;
}

/** Longest summary line we write; lists are cut with "and N more". */
export const SUMMARY_WIDTH = 72;

/** A short human name for a ref: `branch feature`, `tag v1`, `remote branch origin/main`. */
export function refLabel(name: string): string {
  const { kind, short } = refParts(name);
  return kind ? `${kind} ${short}` : name;
}

export function headLabel(head: HeadState): string {
  if (head.kind === "detached") return `detached at ${head.commit.slice(0, 7)}`;
  return branchName(head.target);
}

/** `label: a, b and 3 more`, as long as fits in `width`. */
export function listPhrase(label: string, items: readonly string[], width = SUMMARY_WIDTH, sep = ": "): string {
  let shown = items.length;
  const phrase = (n: number) => {
    const head = items.slice(0, n).join(", ");
    const rest = items.length - n;
    return `${label}${sep}${head}${rest > 0 ? `${n > 0 ? " and " : ""}${rest} more` : ""}`;
  };
  while (shown > 1 && phrase(shown).length > width) shown--;
  return phrase(shown);
}

/** Cut a line to `width` characters, marking the cut. */
export function cut(line: string, width = SUMMARY_WIDTH): string {
  return line.length <= width ? line : `${line.slice(0, width - 3).trimEnd()}...`;
}

export interface RefChange {
  name: string;
  change: "created" | "deleted" | "moved";
}

export function refChanges(before: readonly RefLine[], after: readonly RefLine[]): RefChange[] {
  const old = new Map(before.filter((r) => r.name !== "refs/stash").map((r) => [r.name, r]));
  const changes: RefChange[] = [];
  for (const r of after) {
    if (r.name === "refs/stash") continue;
    const o = old.get(r.name);
    old.delete(r.name);
    if (!o) changes.push({ name: r.name, change: "created" });
    else if (o.object !== r.object || o.symrefTarget !== r.symrefTarget) changes.push({ name: r.name, change: "moved" });
  }
  for (const name of old.keys()) changes.push({ name, change: "deleted" });
  return changes;
}

export function stashPhrase(before: readonly StashEntry[], after: readonly StashEntry[]): string | null {
  const had = new Set(before.map((s) => s.commit));
  const has = new Set(after.map((s) => s.commit));
  const pushed = after.filter((s) => !had.has(s.commit)).length;
  const dropped = before.filter((s) => !has.has(s.commit)).length;
  const parts: string[] = [];
  const n = (k: number) => `${k} ${k === 1 ? "entry" : "entries"}`;
  if (pushed) parts.push(`${n(pushed)} pushed`);
  if (dropped) parts.push(`${n(dropped)} dropped`);
  return parts.length ? `stash: ${parts.join(", ")}` : null;
}

/** Parse `git diff-tree -r -z --name-status` output into [status, path] pairs. */
export function parseNameStatus(out: string): [string, string][] {
  const parts = out.split("\0");
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) pairs.push([parts[i]!, parts[i + 1]!]);
  return pairs;
}

export const conflictPathsOf = (blob: Uint8Array | undefined): string[] =>
  blob ? [...new Set(decodeUnmerged(blob).map((e) => Buffer.from(e.path).toString("utf8")))] : [];

/** What a change did to paths, in the order a summary names them. */
type PathWord = "discarded" | "staged" | "unstaged" | "untracked" | "removed from the index" | "discarded edits" | "removed untracked" | "deleted" | "edited";
const PATH_WORDS: readonly PathWord[] = [
  "discarded",
  "staged",
  "unstaged",
  "removed from the index",
  "discarded edits",
  "edited",
  "deleted",
  "untracked",
  "removed untracked",
];

/**
 * Each path the index or the files changed at, by what happened to it.
 * `inIndex`/`inWorktree`: status letters of the index's and the files' paths
 * that differ from the previous snapshot; `unstaged`: the files against the
 * index now (null without a working tree); `stagedVsHead`: index paths that
 * differ from HEAD's tree, among those that could go either way.
 */
function pathWords(
  inIndex: Map<string, string>,
  inWorktree: Map<string, string>,
  unstaged: Map<string, string> | null,
  stagedVsHead: ReadonlySet<string>,
): Map<PathWord, string[]> {
  const words = new Map<PathWord, string[]>(PATH_WORDS.map((w) => [w, []]));
  const add = (w: PathWord, p: string) => words.get(w)!.push(p);
  // An index path that now differs from the file, or changed with it: staged
  // (`add -p`, an edit then `add`) or set back to HEAD (`reset`, `reset --hard`)?
  // HEAD's tree says (core/change-facts.ts read it for those paths).
  const ambiguous = new Set(ambiguousPaths(inIndex, inWorktree, unstaged));
  for (const [path, status] of inIndex) {
    const onDisk = unstaged?.get(path);
    if (status === "D" && onDisk === "A") add("removed from the index", path);
    else if (!ambiguous.has(path) || stagedVsHead.has(path)) add("staged", path);
    else if (inWorktree.has(path) && onDisk === undefined) add("discarded", path);
    else add("unstaged", path);
  }
  for (const [path, status] of inWorktree) {
    if (inIndex.has(path)) continue;
    const onDisk = unstaged?.get(path);
    if (status === "D") add(onDisk === "D" ? "deleted" : "removed untracked", path);
    else if (onDisk === "A" || (status === "A" && unstaged === null)) add("untracked", path);
    else if (onDisk === undefined && unstaged !== null) add("discarded edits", path);
    else add("edited", path);
  }
  return words;
}

/** Index paths that could be staged or set back: changed, not deleted, and differing from the file or changed with it. */
export function ambiguousPaths(inIndex: ReadonlyMap<string, string>, inWorktree: ReadonlyMap<string, string>, unstaged: ReadonlyMap<string, string> | null): string[] {
  return [...inIndex].filter(([p, status]) => status !== "D" && (unstaged?.has(p) || inWorktree.has(p))).map(([p]) => p);
}

/**
 * What differs between the previous snapshot (its tree) and the new state, as a
 * summary line: `branch feature created`, `staged: a.c`, `edited: a.c, b.c`,
 * `resolved: a.c` (a conflict the index no longer has)...
 */
export function describeChange(facts: ChangeFacts, state: StateTree, opts: { duringOperation?: boolean; besidesHead?: boolean } = {}): string {
  const parts = changeParts(facts, state, opts);
  return cut(parts.length ? parts.join("; ") : "state changed");
}

/**
 * What differs besides what HEAD's reflog line already says (a script's
 * `git checkout` then `git branch -D`): HEAD, its branch before and after,
 * and the paths that now match HEAD's commit in the index and on disk (a
 * checkout's, a commit's, a hard reset's) go unsaid. `stagedVsHead` must
 * cover every index path that changed (changeFacts' `allIndexPaths`).
 * Empty when nothing is left to say.
 */
export const changeBesidesHead = (facts: ChangeFacts, state: StateTree): string => changeParts(facts, state, { besidesHead: true }).join("; ");

function changeParts(facts: ChangeFacts, state: StateTree, opts: { duringOperation?: boolean; besidesHead?: boolean }): string[] {
  const diff = [...facts.changed].map(([path, status]) => [status, path] as const);
  const top = new Set(diff.map(([, p]) => p.split("/", 1)[0]!));
  const parts: string[] = [];
  const prev = facts.previous;
  const prevRefs = prev?.refs ?? [];
  const prevStash = prev?.stash ?? [];
  const prevHead = prev?.head ?? null;
  // The branches HEAD is on, before and after, when HEAD's reflog line speaks for them.
  const headBranches = new Set(opts.besidesHead ? [prevHead?.startsWith("ref: ") ? prevHead.slice(5).trim() : "", state.head.kind === "symbolic" ? state.head.target : ""] : []);
  if (top.has("HEAD") && prevHead !== null && !opts.besidesHead) {
    parts.push(`HEAD ${state.head.kind === "detached" ? "detached at " + state.head.commit.slice(0, 7) : "on " + headLabel(state.head)}`);
  }
  if (top.has("refs")) {
    for (const c of refChanges(prevRefs, state.refs)) if (!headBranches.has(c.name)) parts.push(`${refLabel(c.name)} ${c.change}`);
  }
  let stashed = false;
  if (top.has("stash")) {
    const s = stashPhrase(prevStash, state.stash);
    if (s) parts.push(s);
    stashed = s !== null && s.includes("pushed");
  }
  const conflicts = conflictPathsOf(state.indexUnmerged);
  const conflicted = new Set(conflicts);
  // A conflict the index no longer has was resolved (git add, git rm), whatever the file now holds.
  const resolved = top.has("index-unmerged") ? (prev?.conflicts ?? []).filter((p) => !conflicted.has(p)) : [];
  const newConflicts = conflicts.filter((p) => !(prev?.conflicts ?? []).includes(p));
  if (top.has("index-unmerged") && newConflicts.length) parts.push(listPhrase("conflict in", conflicts, SUMMARY_WIDTH, " "));
  if (resolved.length) parts.push(listPhrase("resolved", resolved));
  // A conflicted path leaves the index tree and gets markers on disk: the conflict says it all.
  const quiet = new Set([...conflicts, ...resolved]);
  const inIndex = new Map<string, string>();
  const inWorktree = new Map<string, string>();
  for (const [status, path] of diff) {
    if (path.startsWith("index/") && !quiet.has(path.slice(6))) inIndex.set(path.slice(6), status);
    else if (path.startsWith("worktree/") && !quiet.has(path.slice(9))) inWorktree.set(path.slice(9), status);
  }
  if (opts.besidesHead) {
    // A path whose index entry matches HEAD and whose file matches the index followed HEAD.
    const clean = (p: string) => !facts.stagedVsHead.has(p) && facts.unstaged !== null && !facts.unstaged.has(p);
    for (const p of [...inIndex.keys()]) if (clean(p)) inIndex.delete(p);
    for (const p of [...inWorktree.keys()]) if (!inIndex.has(p) && clean(p)) inWorktree.delete(p);
  }
  // Which way each path moved is read against HEAD's tree and between the new
  // index and files (two tree diffs, only when the index or the files changed):
  // `git add` stages, `git reset`/`rm --cached` unstage, `checkout -- f`
  // discards edits, `git clean` removes untracked files.
  const words = pathWords(inIndex, inWorktree, facts.unstaged, facts.stagedVsHead);
  // Changes that went into a new stash entry are not news of their own.
  for (const [label, paths] of words) {
    if (paths.length && (!stashed || label === "untracked")) parts.push(listPhrase(label, paths));
  }
  const staged = ["staged", "unstaged", "removed from the index", "discarded"].flatMap((w) => words.get(w as PathWord) ?? []);
  if (top.has("state") && !opts.duringOperation) parts.push(state.state.length ? `${state.state.join(", ")} in progress` : "operation ended");
  if (!top.has("worktree") && state.worktree === undefined && top.has("index") && !staged.length && !opts.besidesHead) parts.push("index changed");
  return parts;
}

/**
 * Each operation's words, the one table of them: `word` for summaries
 * ("rebase"), `name` for sentences about it ("a rebase or git am": the marker
 * alone cannot tell which).
 */
export const OPERATION_LABELS: Record<OperationMarker, { word: string; name: string }> = {
  "rebase-merge": { word: "rebase", name: "a rebase" },
  "rebase-apply": { word: "rebase", name: "a rebase or git am" },
  MERGE_HEAD: { word: "merge", name: "a merge" },
  CHERRY_PICK_HEAD: { word: "cherry-pick", name: "a cherry-pick" },
  REVERT_HEAD: { word: "revert", name: "a revert" },
  BISECT_LOG: { word: "bisect", name: "a bisect" },
  sequencer: { word: "cherry-pick", name: "a cherry-pick or revert sequence" },
};

/** The operation as a word (`merge`, `rebase`, `am`), by its markers and, when known, its facts. */
export function operationWord(markers: readonly OperationMarker[], facts?: OperationFacts): string {
  const m = markers[0];
  if (!m) return "operation";
  if (facts?.am) return "am";
  if (facts?.revert) return "revert";
  return OPERATION_LABELS[m].word;
}

/** The operation in progress in a few words: `merge of topic` (MERGE_MSG), `rebase of feature` (head-name), `am`, `cherry-pick`. */
export function operationLabel(markers: readonly OperationMarker[], facts: OperationFacts): string {
  const word = operationWord(markers, facts);
  if (word === "merge") {
    const m = /^Merge (?:remote-tracking )?(?:branch|branches|tag|commit) '([^']+)'/.exec(facts.mergeMessage);
    return m ? `merge of ${m[1]}` : "merge";
  }
  if (word === "rebase") return facts.rebaseHead.startsWith("refs/heads/") ? `rebase of ${branchName(facts.rebaseHead)}` : "rebase";
  return word;
}

/** Why an interactive rebase handed control back, from the last step it did: `for edit at <subject>`, `at a break`. */
function rebaseStop(facts: OperationFacts): string | null {
  if (facts.lastRebaseStep === null) return null;
  const [command = "", ...rest] = facts.lastRebaseStep.split(/\s+/);
  if (command === "edit" || command === "e") {
    // `edit <oid> [# ]<subject>`
    const subject = rest.slice(1).join(" ").replace(/^# /, "");
    return subject ? `for edit at ${subject}` : "for edit";
  }
  if (command === "break" || command === "b") return "at a break";
  if (command === "exec" || command === "x") return "after a failed exec";
  return null;
}

/** Reflog lines that an operation's abort writes (merge --abort and cherry-pick --abort reset). */
const ABORT_REFLOG = /^(?:reset: moving to |[\w -]+ \(abort\))/;

/** Whether an operation may be part of this change: one in progress now, or a reflog line an abort writes. */
export const operationMayBeInvolved = (state: StateTree, reflogMessage: string): boolean => state.state.length > 0 || ABORT_REFLOG.test(reflogMessage);

/**
 * A change around an operation: its summary, or, while the operation goes on
 * with nothing of its own to say, how to word what changed (`during`); null
 * when no operation is involved (neither side has one in progress).
 * `merge of topic stopped: conflict in a.txt`, `resolved: a.txt (merge of
 * topic)`, `merge aborted`, `rebase of topic stopped for edit at <subject>`.
 */
export function operationSummary(state: StateTree, reflogMessage: string, prev: PreviousParts, facts: OperationFacts): { text: string } | { during: (what: string) => string } | null {
  const now = state.state;
  if (!now.length && !prev.markers.length) return null;
  if (!now.length) {
    // Ended: finished (its reflog line says how) or aborted.
    const word = operationWord(prev.markers);
    if (reflogMessage && !ABORT_REFLOG.test(reflogMessage)) return { text: cut(reflogMessage) };
    return { text: reflogMessage ? `${word} aborted` : `${word} ended` };
  }
  const label = operationLabel(now, facts);
  const conflicts = conflictPathsOf(state.indexUnmerged);
  const started = now.join() !== prev.markers.join();
  const freshConflicts = conflicts.some((p) => !prev.conflicts.includes(p));
  if (started || freshConflicts) {
    // Git handed control back: say where it stopped.
    if (conflicts.length) return { text: cut(listPhrase(`${label} stopped: conflict in`, conflicts, SUMMARY_WIDTH, " ")) };
    const stop = now[0] === "rebase-merge" ? rebaseStop(facts) : null;
    if (stop) return { text: cut(`${label} stopped ${stop}`) };
    if (now[0] === "MERGE_HEAD" || now[0] === "CHERRY_PICK_HEAD" || now[0] === "REVERT_HEAD") return { text: cut(`${label} waiting for its commit`) };
    if (now[0] === "BISECT_LOG" && started) return { text: cut(`bisect started`) };
    if (started) return { text: cut(`${label} stopped`) };
  }
  // During the operation: what changed, and which operation it is part of.
  const word = operationWord(now, facts);
  const during = (what: string) => cut(what.startsWith(word) ? what : `${what} (${label})`);
  return reflogMessage ? { text: during(reflogMessage) } : { during };
}

/** Steps of Git's rebase reflog lines, as a person would say them. */
const REBASE_STEPS: Record<string, string> = { start: "started", finish: "finished", continue: "continued", pick: "picked", abort: "aborted", skip: "skipped" };

/**
 * A summary as people read it. The summary recorded is Git's reflog line when
 * Git wrote one (the format says so), and Git's rebase lines are written for
 * Git: `rebase (finish): returning to refs/heads/main` reads `rebase finished:
 * back on main`. Only the display changes; the snapshot keeps Git's words.
 * Read from a snapshot, it is shown with its control characters escaped.
 */
export function userSummary(summary: string): string {
  return escapeControls(readableSummary(summary));
}

function readableSummary(summary: string): string {
  return readableRebase(shortIds(collapseRestores(summary)));
}

/** Object ids as Git shows them: the first seven digits (a detached checkout's reflog line names them in full). */
const shortIds = (summary: string): string => summary.replace(/\b([0-9a-f]{7})(?:[0-9a-f]{33}|[0-9a-f]{57})\b/g, "$1");

/** The summary of a restore of snapshot `n`: what that snapshot's own change was, named once however often it was restored. */
export const restoreSummary = (n: number, summary: string): string => cut(`restore #${n}: ${summary.replace(/^(?:restore #\d+: )+/, "")}`);

/** A restore of a restore names the state it came back to once: `restore #39: restore #37: x` reads `restore #39: x`. */
export const collapseRestores = (summary: string): string => summary.replace(/^(restore #\d+: )(?:restore #\d+: )+/, "$1");

function readableRebase(summary: string): string {
  const m = /^((?:pull --rebase|rebase)(?: -i)?) \(([a-z]+)\)(?: \(([a-z]+)\))?: (.*)$/.exec(summary);
  if (!m) return summary;
  const [, op, step, second, rest] = m as unknown as [string, string, string, string | undefined, string];
  const last = second ?? step;
  const said = REBASE_STEPS[last] ?? last;
  const what = rest.replace(/^returning to refs\/heads\/(.+)$/, "back on $1").replace(/\brefs\/heads\//g, "");
  return `${op.replace(/ -i$/, "")} ${said}: ${what}`;
}
