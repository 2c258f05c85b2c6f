// Restoring (spec: "Restoring", with the clarifications): put a snapshot's state
// back, all or nothing. Every check runs before anything moves; each step that
// then changes something leaves an undo action in a journal, and a failure at any
// later step plays the journal backwards so the repository is exactly as before.
//
// The spec's steps, and where each one is:
//   1. an operation in progress: a blocker (core/plan.ts); --force ends it with
//      Git's own --quit (endOperations) and plans again;
//   2. objects T needs: a blocker (core/plan.ts), or --skip-missing;
//      then, before anything moves, the checks Git's merge would make
//      (unknown files, index.lock, a branch checked out elsewhere) and the
//      record-first of an unrecorded state (restore);
//   4. the working tree: restoreWorktree, run first (see applyPlan);
//   3. refs, symbolic refs, HEAD: restoreRefs, restoreSymbolicRefs, restoreHead;
//   5. the index: restoreIndex (built aside by startNextIndex);
//   6. the stash: restoreStash;
//   7. the restore snapshot: restore, after applyPlan.
//
// Test-only (core/seams.ts): the restore can be made to fail right after a
// step (record-first, refs, symbolic-refs, head, worktree, index, stash,
// record), so tests can prove the rollback of each one, or to stop there, so
// tests can kill it.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmdirSync, rmSync, statfsSync, unlinkSync, writeFileSync, type Stats } from "node:fs";
import { join } from "node:path";
import { fatal, refuse, UndoError } from "./errors.ts";
import { RestoreRefused } from "./plan.ts";
import { nameList } from "./text.ts";
import { decodeUnmerged, pathKey, type HeadState, type ObjectId, type OperationMarker, type Snapshot, type SnapshotEntry } from "./format.ts";
import { GitError } from "./git.ts";
import { candidates, navigationTarget, position, readableSnapshot, type Direction } from "./history.ts";
import { loadState } from "./inspect.ts";
import { acquireLock, clearDeadIndexLock, createIndexLock, indexLockPath, releaseIndexLock } from "./lock.ts";
import { withScratch, writeTagObjects } from "./objects.ts";
import { gitVersion, versionAtLeast } from "./hooks.ts";
import { addLineCounts, currentFolder, occupiedNow, parseRawNumstat, planIsEmpty, planRestore, refMoves, type Blocker, type FileChange, type RefMove, type RestorePlan, type StateSide } from "./plan.ts";
import { captureLive, captureWith, commitCapture, unchanged, type IndexParts, type LiveCapture } from "./record.ts";
import { phase } from "./trace.ts";
import { restoreSummary } from "./describe.ts";
import type { Repo } from "./repo.ts";
import { copyIndexFile, indexVersion } from "./index-file.ts";
import { currentMarkers } from "./refs.ts";
import { captureIndex } from "./state.ts";
import { composePartial, composeRevert, type ComposedTarget, type CurrentState, type PartialSelection, type RevertConflict } from "./compose.ts";
import { MODE } from "./mode.ts";
import { composeRescue, type RescueTarget } from "./find/rescue.ts";
import { seams } from "./seams.ts";

export type RestoreRequest =
  | { kind: Direction; steps: number }
  | { kind: "restore"; number: number }
  /** Parts of snapshot `number` over the current state (core/compose.ts). */
  | { kind: "partial"; number: number; selection: PartialSelection }
  /** The current state without the change snapshot `number` recorded. */
  | { kind: "revert"; number: number }
  /** The current state with lost work added back (core/find/rescue.ts). */
  | { kind: "rescue"; rescue: RescueTarget };

export interface RestoreOptions {
  force?: boolean;
  dryRun?: boolean;
  /** Restore what can be, leaving refs, HEAD and stash entries whose objects are gone (plan.notRestored). */
  skipMissing?: boolean;
}

export const STEPS = ["record-first", "refs", "symbolic-refs", "head", "worktree", "index", "stash", "record"] as const;
export type Step = (typeof STEPS)[number];

/** A part of the restore snapshot's tree that differs from the target's. */
export interface PartDifference {
  /** Top-level entry of the state tree: refs, HEAD, worktree, index, state, ... */
  part: string;
  /** Paths (worktree, index) or ref names within it; submodules marked. */
  names: string[];
}

export interface RestoreResult {
  plan: RestorePlan;
  dryRun: boolean;
  /** The change snapshot recorded first (the user's unrecorded state). */
  recordedFirst: Snapshot | null;
  /** Operations ended with --force. */
  endedOperations: OperationMarker[];
  /** The restore snapshot (null on a dry run). */
  restoreSnapshot: Snapshot | null;
  /** Where the state after the restore differs from the target. */
  differences: PartDifference[];
  /** The ways back to the state left: redo or undo when one step lands on it, and restore of its number (on a dry run, those the restore would offer). */
  goBack: GoBack[];
  /**
   * `git undo`: the changes it undid, newest first; `git undo redo`: the ones
   * it did again, oldest first. Empty for `git undo restore`. A change not yet
   * recorded on a dry run has number null and an empty summary.
   */
  stepped: SteppedChange[];
  /** What was asked: undo, redo, restore, a partial restore or a revert. */
  kind: RestoreRequest["kind"];
  /** The folder the user is in, which the restore emptied and kept (path from the top). */
  keptFolder: string | null;
  /** A partial restore or a revert: what it brings back (`src/a.c from #12`, `#17`) and what it records. */
  composed?: { description: string; summary: string; branchAlone?: ComposedTarget["branchAlone"] };
}

/** One way back to the state a restore left. */
export type GoBack = { command: "redo" | "undo" } | { command: "restore"; number: number };

/** A change `git undo` undid or `git undo redo` did again. */
export interface SteppedChange {
  number: number | null;
  summary: string;
}

export const refusal = (blockers: readonly Blocker[]): RestoreRefused => new RestoreRefused(blockers);

function failAfter(step: Step): void {
  pauseAfter(step);
  if (seams.failAfter === step) throw new Error(`simulated failure after step '${step}' (GIT_UNDO_TEST_FAIL_AFTER)`);
}

/**
 * Test-only (core/seams.ts): the restore stops right after that step (writing
 * the step's name to the pause file, if given), so a test can kill it there.
 */
function pauseAfter(step: Step): void {
  if (seams.pauseAfter !== step) return;
  const file = seams.pauseFile;
  if (file) writeFileSync(file, `${step}\n`);
  Bun.sleepSync(60_000);
}

/** A snapshot as it would be if the capture were recorded now (for counting targets). */
function pending(capture: LiveCapture): Snapshot {
  const latest = capture.latest;
  return {
    number: (latest?.number ?? 0) + 1,
    ref: "",
    commit: "",
    tree: capture.tree,
    date: Math.floor(Date.now() / 1000),
    summary: "",
    trailers: { format: 1, kind: "change", head: "" },
  };
}

function resolveTarget(snaps: readonly SnapshotEntry[], request: RestoreRequest): Snapshot {
  if (request.kind === "rescue") throw new Error("a rescue is a composed target");
  return "steps" in request ? navigationTarget(snaps, request.kind, request.steps) : readableSnapshot(snaps, request.number);
}

/** The snapshot a change snapshot's change started from: a restore's `from`, else the one before it. */
function changeBase(snaps: readonly SnapshotEntry[], change: Snapshot): Snapshot {
  const from = change.trailers.kind === "restore" ? change.trailers.from : undefined;
  if (from !== undefined && snaps.some((s) => s.number === from)) return readableSnapshot(snaps, from);
  const i = snaps.findIndex((s) => s.number === change.number);
  if (i <= 0) throw refuse(`snapshot #${change.number} is the oldest one: there is no state before it to revert to`);
  return readableSnapshot(snaps, snaps[i - 1]!.number);
}

/** The target of a partial restore or a revert, built over the state `now`. */
async function composeTarget(repo: Repo, scratch: string, request: RestoreRequest, snaps: readonly SnapshotEntry[], now: CurrentState): Promise<ComposedTarget | null> {
  if (request.kind === "partial") return composePartial(repo, scratch, now, readableSnapshot(snaps, request.number), request.selection);
  if (request.kind === "rescue") return composeRescue(repo, scratch, now, snaps, request.rescue);
  if (request.kind !== "revert") return null;
  const change = readableSnapshot(snaps, request.number);
  return composeRevert(repo, scratch, now, change, changeBase(snaps, change));
}

/** A revert's conflicts as the blocker that refuses it. */
function revertBlocker(number: number, conflicts: readonly RevertConflict[]): Blocker {
  const names = conflicts.map((c) =>
    c.kind === "ref" ? c.name : c.kind === "head" ? "HEAD" : c.kind === "conflicts" ? "the index's conflicts" : c.part === "index" ? `${c.path} (staged)` : c.path,
  );
  return { kind: "revert-conflict", target: number, names };
}

/** index.lock, taken the way Git takes it, so no Git command changes the index while we restore. */
interface IndexLock {
  release(): void;
}

/**
 * Take index.lock, first removing one that a restore killed on this host left
 * (its owner file says so, core/lock.ts); one a Git command holds is refused.
 */
function takeIndexLock(repo: Repo): IndexLock {
  const path = indexLockPath(repo.indexFile);
  clearDeadIndexLock(repo.indexFile, repo.undoDir);
  if (!createIndexLock(repo.indexFile, repo.undoDir)) throw refusal([{ kind: "index-lock", target: 0, names: [path] }]);
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    releaseIndexLock(repo.indexFile, repo.undoDir);
  };
  process.once("exit", release);
  return { release };
}

/**
 * `update-index -z --index-info` input that gives each path the entry of one
 * side of its change: removals first (mode 0), so that a file can take the
 * place of a directory.
 */
function indexInfo(changes: readonly FileChange[], side: "old" | "new"): Buffer {
  const line = (mode: string, oid: ObjectId, raw: Uint8Array) => Buffer.concat([Buffer.from(`${mode} ${oid}\t`), raw, Buffer.from([0])]);
  const mode = (c: FileChange) => (side === "old" ? c.oldMode : c.newMode);
  return Buffer.concat([
    ...changes.filter((c) => mode(c) === MODE.absent).map((c) => line("0", c.oldObject, c.raw)),
    ...changes.filter((c) => mode(c) !== MODE.absent).map((c) => line(mode(c), side === "old" ? c.oldObject : c.newObject, c.raw)),
  ]);
}

/**
 * `update-index -z --index-info` with entries read from a snapshot. Git skips a
 * path it will not have in an index (`git~1`, `.git ` and the other names its
 * core.protectNTFS/protectHFS rules refuse) with a warning and exit 0; such a
 * file would silently not be written, so the restore refuses instead, naming it.
 */
async function snapshotEntries(repo: Repo, plan: RestorePlan, env: Record<string, string>, input: Uint8Array): Promise<void> {
  const r = await repo.git.run(["update-index", "-z", "--index-info"], { env, input });
  const refused = [...r.stderr.matchAll(/^Ignoring path (.*)$/gm)].map((m) => m[1]!);
  if (refused.length) {
    throw refuse(`snapshot #${plan.target.number} records ${refused.length === 1 ? "a path" : "paths"} Git refuses to write: ${nameList(refused)}`);
  }
}

/** The working-tree merge's private index, and the two trees it merges between. */
export interface MergeIndex {
  file: string;
  /** S's entries at the paths that change, as a tree. */
  from: ObjectId;
  /** T's entries at those paths. */
  to: ObjectId;
}

/**
 * The working-tree merge (spec step 4), narrowed to the paths S and T record
 * differently. A two-tree merge leaves a path alone when both trees agree on
 * it and the index has no entry ("keep index"), so merging from a tree of S's
 * entries at those paths to a tree of T's, on an index of S's entries there
 * with fresh stat data, writes and removes exactly the files the whole-tree
 * merge would, with the same checks, without Git walking the 100,000 paths
 * that stay, or reading and writing an entry for each. The refresh hashes just
 * these files: one that differs from S keeps stale stat data, and the merge
 * refuses it.
 */
export async function mergeIndexFor(repo: Repo, scratch: string, plan: RestorePlan): Promise<MergeIndex> {
  const file = join(scratch, MERGE_INDEX);
  const side = async (path: string, entries: FileChange[], which: "old" | "new", refresh: boolean): Promise<ObjectId> => {
    rmSync(path, { force: true });
    const env = { GIT_INDEX_FILE: path };
    // An empty index file, not a missing one: without a file read-tree takes the
    // merge for an initial checkout and writes every path.
    if (!entries.length) await repo.git.run(["read-tree", "--empty"], { env });
    else {
      await snapshotEntries(repo, plan, env, indexInfo(entries, which));
      if (refresh) await repo.git.run(["update-index", "-q", "--refresh"], { env, okExit: [1] });
    }
    return repo.git.line(["write-tree"], { env });
  };
  const files = plan.worktree.files;
  const [from, to] = await Promise.all([
    side(file, files.filter((f) => f.oldMode !== MODE.absent), "old", true),
    side(join(scratch, "merge-target"), files.filter((f) => f.newMode !== MODE.absent), "new", false),
  ]);
  return { file, from, to };
}

const MERGE_INDEX = "merge-index";

/** Paths Git's unpack-trees errors name (`Entry 'a' not uptodate`, `Untracked ... file 'b' would be overwritten`). */
function pathsInErrors(stderr: string): string[] {
  const names: string[] = [];
  for (const line of stderr.split("\n")) {
    const m = /'(.+)'/.exec(line);
    if (m && /uptodate|overwritten|removed|lost/.test(line)) names.push(m[1]!);
  }
  return [...new Set(names)];
}

/** The two-tree merge as a dry run: fails when a file on disk differs from the state left. */
async function checkMerge(repo: Repo, plan: RestorePlan, merge: MergeIndex): Promise<Blocker | null> {
  const r = await repo.git.run(["read-tree", "-m", "-u", "-n", merge.from, merge.to], { env: { GIT_INDEX_FILE: merge.file }, okExit: [128] });
  return r.exitCode === 0 ? null : mergeBlocker(plan, r.stderr);
}

/** What a refused two-tree merge means for the user. */
function mergeBlocker(plan: RestorePlan, stderr: string): Blocker {
  const names = pathsInErrors(stderr);
  const target = plan.target.number;
  if (/untracked/i.test(stderr)) return { kind: "untracked-file", target, names };
  return { kind: "not-uptodate", target, names, detail: stderr.trim().split("\n")[0] ?? "" };
}

/**
 * The checks only a look at the disk can make, added to the plan's blockers: the
 * two-tree merge as a dry run (a file differs from the state left, an untracked
 * file would be overwritten). Returns the private merge index for the restore.
 */
export async function checkWorktree(repo: Repo, scratch: string, plan: RestorePlan): Promise<MergeIndex | null> {
  if (plan.worktree.mode !== "merge" || plan.blockers.some((b) => b.kind === "missing-objects")) return null;
  const mergeIndex = await mergeIndexFor(repo, scratch, plan);
  const b = await checkMerge(repo, plan, mergeIndex);
  if (b) plan.blockers.push(b);
  return mergeIndex;
}

/** Everything checked: the plan plus the private merge index, or the blockers. */
/** What fullPlan plans with besides the two sides. */
interface PlanContext {
  opts: RestoreOptions;
  holdsIndexLock: boolean;
  /** Every snapshot of the sequence (the ones before `from` tell which files only it holds). */
  snaps: readonly SnapshotEntry[];
  /** A partial restore or a revert: the target it composed. */
  composed: ComposedTarget | null;
}

async function fullPlan(repo: Repo, scratch: string, from: StateSide, target: Snapshot, { opts, holdsIndexLock, snaps, composed }: PlanContext) {
  // The line counts only fill the report: a real restore counts them while it works.
  const plan = await planRestore(repo, from, target, {
    force: opts.force ?? false,
    holdsIndexLock,
    lineCounts: Boolean(opts.dryRun),
    skipMissing: opts.skipMissing ?? false,
    earlier: snaps.filter((s) => from.number === null || s.number < from.number),
    partial: composed !== null,
  });
  if (composed?.conflicts.length) plan.blockers.unshift(revertBlocker(target.number, composed.conflicts));
  else if (composed && planIsEmpty(plan)) {
    throw refuse(composed.kind === "revert" ? `nothing to revert: what #${target.number} changed is not in the current state` : `nothing to restore: ${composed.description.replace(/ from #\d+$/, "")} already as in #${target.number}`);
  }
  // A dry run asks the merge whether it would go through. A real restore lets the
  // merge itself decide, first of all steps: it checks every path before writing.
  if (opts.dryRun) return { plan, mergeIndex: await checkWorktree(repo, scratch, plan) };
  const merging = plan.worktree.mode === "merge" && !plan.blockers.some((b) => b.kind === "missing-objects");
  return { plan, mergeIndex: merging ? await mergeIndexFor(repo, scratch, plan) : null };
}

/**
 * Restore the target of `request` in this worktree: take capture.lock (waiting a
 * bounded time), record the current state first if it is new, check everything,
 * apply, and record the restore snapshot. A dry run stops after the checks and
 * returns the plan with its blockers.
 */
export async function restore(repo: Repo, request: RestoreRequest, opts: RestoreOptions = {}): Promise<RestoreResult> {
  const lock = await acquireLock(repo.undoDir);
  try {
    // index.lock next: a Git command writing the index right now makes the state a moving target.
    const indexLock = opts.dryRun || repo.bare ? null : takeIndexLock(repo);
    try {
      return await withScratch(repo, (scratch) => restoreLocked(repo, scratch, request, opts, indexLock !== null));
    } catch (e) {
      // Whatever fails once the restore changes anything comes back as an
      // UndoError saying what was rolled back; anything else failed while the
      // state was still being read or checked, before any change.
      if (e instanceof UndoError) throw e;
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === "ENOSPC" || /No space left on device/i.test((e as Error).message) ? "no space left on the device" : (e as Error).message;
      throw fatal(`could not restore: ${why}; nothing was changed`);
    } finally {
      indexLock?.release();
    }
  } finally {
    lock.release();
  }
}

async function restoreLocked(repo: Repo, scratch: string, request: RestoreRequest, opts: RestoreOptions, holdsIndexLock: boolean): Promise<RestoreResult> {
  const capture = await captureLive(repo, { lockHeld: true });
  const latest = unchanged(capture);
  // Count the target as if the current state were already recorded (record first ends the streak).
  const snaps = latest ? capture.snapshots : [...capture.snapshots, pending(capture)];
  const navigating = request.kind === "undo" || request.kind === "redo";
  let composed = await composeTarget(repo, scratch, request, capture.snapshots, capture);
  let target = composed?.target ?? resolveTarget(navigating ? snaps : capture.snapshots, request);
  const from: StateSide = { number: latest?.number ?? null, tree: capture.tree, state: capture.state };
  let { plan, mergeIndex } = await fullPlan(repo, scratch, from, target, { opts, holdsIndexLock, snaps: capture.snapshots, composed });
  const result: RestoreResult = {
    plan,
    dryRun: Boolean(opts.dryRun),
    recordedFirst: null,
    endedOperations: [],
    restoreSnapshot: null,
    differences: [],
    goBack: [],
    stepped: navigating ? steppedOver(snaps, request.kind, target, latest ? null : capture.tree) : [],
    kind: request.kind,
    keptFolder: null,
  };
  if (composed) result.composed = { description: composed.description, summary: composed.summary, ...(composed.branchAlone ? { branchAlone: composed.branchAlone } : {}) };
  if (opts.dryRun) {
    result.goBack = waysBack(capture.snapshots, from, target, composed !== null);
    return result;
  }
  if (plan.blockers.length) throw refusal(plan.blockers);

  const journal = new Journal();
  const guard = ignoreSignals();
  // Ending an operation (below) can change the index: T's is built after it then.
  let nextIndex = plan.operations.length && opts.force ? null : startNextIndex(repo, scratch, plan);
  try {
    let fromNumber = latest?.number ?? null;
    if (fromNumber === null) {
      const made = await commitCapture(repo, capture, { kind: "change" });
      if (made.created) {
        result.recordedFirst = made.snapshot;
        fromNumber = made.snapshot.number;
        // The change recorded first is the one `git undo` undoes: named now that it has a number.
        const first = made.snapshot;
        result.stepped = result.stepped.map((c) => (c.number === null ? { number: first.number, summary: first.summary } : c));
      } else fromNumber = made.latest.number;
      plan.from.number = fromNumber;
    }
    failAfter("record-first");

    if (plan.operations.length && opts.force) {
      result.endedOperations = await endOperations(repo);
      // Ending an operation can change more than its markers (rebase --quit stores an autostash).
      const after = await captureLive(repo, { lockHeld: true });
      if (!(await sameButMarkers(repo, capture.tree, after.tree))) {
        const made = await commitCapture(repo, after, { kind: "change", message: `ended ${result.endedOperations.join(", ")} (git undo --force)` });
        if (made.created) {
          fromNumber = made.snapshot.number;
          result.recordedFirst ??= made.snapshot;
        }
        // A partial restore or a revert is built again over the state the operation left.
        composed = await composeTarget(repo, scratch, request, after.snapshots, after);
        if (composed) target = composed.target;
        ({ plan, mergeIndex } = await fullPlan(repo, scratch, { number: fromNumber, tree: after.tree, state: after.state }, target, { opts, holdsIndexLock, snaps: after.snapshots, composed }));
        result.plan = plan;
        if (plan.blockers.length) throw refusal(plan.blockers);
      }
    }

    nextIndex ??= startNextIndex(repo, scratch, plan);
    await writeBackTags(repo, scratch, plan);
    const counting = addLineCounts(repo, plan).catch(() => {}); // the report shows none then
    const applied = await applyPlan(repo, { plan, scratch, mergeIndex, force: Boolean(opts.force), journal, nextIndex });

    const merged = plan.worktree.mode === "merge" && mergeIndex !== null;
    result.keptFolder = applied.keptFolder;
    // The configuration read for the first capture (the same process) keys the committer's kept answer.
    const recorded = await captureWith(repo, await partsAfter(repo, scratch, plan, merged, applied.readFilesAgain), capture.configDigest);
    // A partial restore or a revert makes a new state: a change, which plain `git undo` undoes.
    const made = await commitCapture(
      repo,
      recorded,
      composed
        ? { kind: "change", message: composed.summary }
        : { kind: "restore", restored: target.number, from: fromNumber, message: restoreSummary(target.number, target.summary) },
    );
    if (!made.created) throw fatal("the restore snapshot was not recorded");
    const snap = made.snapshot;
    journal.push("record", () => repo.git.run(["update-ref", "-d", snap.ref, snap.commit]).then(() => undefined));
    failAfter("record");
    result.restoreSnapshot = snap;
    if (recorded.tree !== target.tree) result.differences = await differences(repo, target, recorded);
    result.goBack = goBack([...recorded.snapshots, snap], fromNumber);
    await counting;
    return result;
  } catch (e) {
    const failures = await journal.rollback();
    const why = e instanceof UndoError || e instanceof GitError ? e.message : (e as Error).message;
    if (failures.length) {
      throw fatal(
        `restore of #${target.number} failed (${why}) and rolling it back failed too (${failures.join("; ")}); the state before the restore is snapshot #${plan.from.number ?? "?"} (git undo restore ${plan.from.number ?? "?"})`,
      );
    }
    if (e instanceof UndoError && e.kind === "refused" && journal.empty) throw e;
    throw fatal(`restore of #${target.number} failed and was rolled back, nothing changed: ${why}`);
  } finally {
    await nextIndex?.catch(() => undefined); // no Git left writing into the scratch directory
    guard();
  }
}

/**
 * Tags T's refs need that were pruned since, written back from T's keep entry
 * (the plan checked each against its name). Nothing to undo on failure: an
 * object nothing points at changes nothing the user sees.
 */
async function writeBackTags(repo: Repo, scratch: string, plan: RestorePlan): Promise<void> {
  const tags = plan.tagsToWrite;
  if (!tags.length) return;
  const written = await writeTagObjects(repo, scratch, tags.map((t) => t.content));
  const wrong = tags.filter((t, i) => written[i] !== t.id);
  if (wrong.length) throw refuse(`snapshot #${plan.target.number} is damaged: its keep entry does not give back tag ${wrong[0]!.id}`);
}

/** Undo actions of the steps done so far; played backwards on failure. */
export class Journal {
  private entries: { step: string; undo: () => Promise<void> }[] = [];
  push(step: string, undo: () => Promise<void>): void {
    this.entries.push({ step, undo });
  }
  get empty(): boolean {
    return this.entries.length === 0;
  }
  async rollback(): Promise<string[]> {
    const failures: string[] = [];
    for (const e of this.entries.reverse()) {
      try {
        await e.undo();
      } catch (err) {
        failures.push(`${e.step}: ${(err as Error).message}`);
      }
    }
    this.entries = [];
    return failures;
  }
}

/** Hold off Ctrl-C while files and refs move: a half-done restore is worse than a late one. */
function ignoreSignals(): () => void {
  const noop = () => {};
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, noop);
  return () => {
    for (const s of signals) process.off(s, noop);
  };
}

/**
 * One ref of an update-ref -z command: its name, then ids. Only plain refs
 * get here, and a plain ref always has an object (core/validate.ts checkRefs).
 */
const refLine = (name: string, ...ids: (ObjectId | null)[]) =>
  `${name}\0${ids
    .map((id) => {
      if (id === null) throw new Error(`internal error: the plain ref ${name} has no object`);
      return `${id}\0`;
    })
    .join("")}`;

/** Run one update-ref -z transaction; `lines` are complete commands. */
async function transaction(repo: Repo, message: string, commands: string[]): Promise<void> {
  if (!commands.length) return;
  await repo.git.run(["update-ref", "--no-deref", "-m", message, "--stdin", "-z"], { input: commands.join("") });
}

/**
 * Put plain refs the restore moved back where they were, those only that are
 * where it put them now (one that did not move, or that someone moved since,
 * stays). One cat-file tells where each is.
 */
async function putRefsBack(repo: Repo, message: string, moves: readonly RefMove[]): Promise<void> {
  if (!moves.length) return;
  const out = await repo.git.text(["cat-file", "--batch-check=%(objectname)"], { input: moves.map((m) => `${m.name}\n`).join("") });
  const now = out.split("\n");
  const commands: string[] = [];
  moves.forEach((m, i) => {
    const line = now[i] ?? "";
    const current = line.endsWith(" missing") || line === "" ? null : line;
    if (current !== (m.new?.object ?? null)) return;
    if (m.old === null) commands.push(`delete ${refLine(m.name, current!)}`);
    else if (current === null) commands.push(`create ${refLine(m.name, m.old.object)}`);
    else commands.push(`update ${refLine(m.name, m.old.object, current)}`);
  });
  await transaction(repo, message, commands);
}

/** Set a ref (symbolic or not) to a recorded line, or delete it (null). Used for symbolic refs and their rollback. */
async function setRef(repo: Repo, name: string, line: RefMove["old"], message: string): Promise<void> {
  // Deleting a ref that does not exist succeeds; --no-deref removes a symbolic ref itself.
  await repo.git.run(["update-ref", "--no-deref", "-d", name]);
  if (!line) return;
  if (line.symrefTarget) await repo.git.run(["symbolic-ref", "-m", message, name, line.symrefTarget]);
  else if (line.object) await repo.git.run(["update-ref", "--no-deref", "-m", message, name, line.object, ""]);
}

async function setHead(repo: Repo, head: HeadState, message: string): Promise<void> {
  if (head.kind === "symbolic") await repo.git.run(["symbolic-ref", "-m", message, "HEAD", head.target]);
  else await repo.git.run(["update-ref", "--no-deref", "-m", message, "HEAD", head.commit]);
}

async function storeStash(repo: Repo, entries: readonly { commit: ObjectId; message: string }[], hadStash: boolean, message: string): Promise<void> {
  if (hadStash) await repo.git.run(["update-ref", "-m", message, "-d", "refs/stash"]);
  for (const e of [...entries].reverse()) await repo.git.run(["stash", "store", "-q", "-m", e.message, e.commit]);
}

/** What applyPlan needs besides the repository. */
export interface ApplyRequest {
  plan: RestorePlan;
  /** The scratch folder of this restore (backups, the indexes built aside). */
  scratch: string;
  /** The private index the working-tree merge runs on, with S's and T's trees; null when no file changes. */
  mergeIndex: MergeIndex | null;
  /** --force: move branches checked out in other worktrees too. */
  force: boolean;
  journal: Journal;
  /** From startNextIndex, started by the caller as soon as the plan was known. */
  nextIndex: Promise<NextIndex> | null;
}

/**
 * Spec steps 3 to 6, one function each, each leaving its undo in the journal
 * before (or as soon as) it changes anything. They run in this order:
 *   step 4, the working tree (restoreWorktree): first, because the two-tree
 *     merge checks every path before it writes one, so a merge Git refuses is
 *     a refusal with nothing changed; a merge that fails while writing is
 *     undone there, before any other step ran;
 *   step 3, the refs (restoreRefs), then the symbolic refs and HEAD
 *     (restoreSymbolicRefs, restoreHead);
 *   step 5, the index (restoreIndex), built aside meanwhile;
 *   step 6, the stash (restoreStash).
 * Exported for tests that change files between the capture and the merge.
 */
export function applyPlan(repo: Repo, req: ApplyRequest): Promise<WorktreeOutcome> {
  return phase("apply", () => applySteps(repo, req));
}

async function applySteps(repo: Repo, req: ApplyRequest): Promise<WorktreeOutcome> {
  const { plan, scratch, journal, nextIndex } = req;
  const moves = plan.refs.filter((m) => req.force || m.checkedOutIn === undefined);
  const T = plan.target.number;
  try {
    // Room for the rollback's ref, reflog and stash writes, set aside before
    // anything changes and given back as the rollback starts (reserveSpace).
    const spare = reserveSpace(scratch, rollbackWrites(plan, moves));
    const step: StepContext = {
      repo,
      plan,
      journal,
      message: `git undo: restore #${T}`,
      back: `git undo: restore #${T} (rolled back)`,
      withSpace: (undo) => async () => {
        spare.free();
        await undo();
      },
    };
    const outcome = req.mergeIndex ? await restoreWorktree(step, req.mergeIndex, scratch) : { readFilesAgain: false, keptFolder: null };
    failAfter("worktree");
    await restoreRefs(step, moves.filter((m) => !m.symbolic));
    failAfter("refs");
    await restoreSymbolicRefs(step, moves.filter((m) => m.symbolic));
    failAfter("symbolic-refs");
    await restoreHead(step);
    failAfter("head");
    if (nextIndex) await restoreIndex(step, await nextIndex, scratch);
    failAfter("index");
    await restoreStash(step);
    failAfter("stash");
    return outcome;
  } finally {
    await nextIndex?.catch(() => undefined); // no Git left writing into the scratch directory
  }
}

/** What every step shares: the plan, the journal, and the reflog messages of the restore and of its rollback. */
interface StepContext {
  repo: Repo;
  plan: RestorePlan;
  journal: Journal;
  message: string;
  back: string;
  /** Wraps an undo so that it first gives back the space set aside for the rollback. */
  withSpace: (undo: () => Promise<void>) => () => Promise<void>;
}

/** Step 5's new index, built aside, and the paths whose stat data to refresh once the files are written. */
export interface NextIndex {
  file: string;
  /** Pathspecs for `git add --refresh`; null: refresh every entry. */
  refresh: Uint8Array | null;
}

/**
 * Start building step 5's new index aside (it touches no file the merge
 * writes), as soon as the plan is known: the restore snapshot waits for it.
 * Null when the restore writes no index (a bare repository).
 */
export function startNextIndex(repo: Repo, scratch: string, plan: RestorePlan): Promise<NextIndex> | null {
  if (repo.bare || plan.targetState.index === undefined) return null;
  const building = Promise.all([buildNextIndex(repo, scratch, plan), refreshPaths(repo, plan)]).then(([file, refresh]) => ({ file, refresh }));
  building.catch(() => {}); // awaited by applyPlan, or settled by whoever started it
  return building;
}

/** What the working-tree step tells the rest of the restore. */
export interface WorktreeOutcome {
  /** The files must be read again for the restore snapshot (the merge warned, or a rule file such as .gitignore changed). */
  readFilesAgain: boolean;
  /** The folder the user is in, emptied by the restore and kept (Git never removes the current directory). */
  keptFolder: string | null;
}

/** The first Git that leaves the folder it runs in when a checkout empties it. */
const KEEPS_ITS_FOLDER_SINCE: readonly [number, number] = [2, 35];

/**
 * Keep the folder the user is in when the merge empties it, as Git itself
 * does: the merge runs there, and Git (2.35 and newer) does not remove the
 * folder it runs in. An older Git would, and the user's shell would be left in
 * a folder that is gone: for it, a file of git-undo's own holds the folder for
 * the merge's length. Returns what to call after the merge.
 */
async function holdCurrentFolder(repo: Repo, plan: RestorePlan): Promise<{ cwd: string | undefined; release(): string | null }> {
  const here = currentFolder(repo);
  const emptying = here !== null && plan.worktree.files.some((f) => f.newMode === MODE.absent && f.path.startsWith(`${here.rel}/`));
  if (!emptying) return { cwd: here?.abs, release: () => null };
  let keeper: string | null = null;
  if (!versionAtLeast(await gitVersion(repo), KEEPS_ITS_FOLDER_SINCE)) {
    const file = join(here.abs, `.git-undo-keep-${process.pid}`);
    try {
      writeFileSync(file, "", { flag: "wx" });
      keeper = file;
    } catch {
      /* a folder we may not write in: Git may remove it then, as Git itself would */
    }
  }
  return {
    cwd: here.abs,
    release() {
      if (keeper) rmSync(keeper, { force: true });
      try {
        return readdirSync(here.abs).length === 0 ? here.rel : null;
      } catch {
        return null;
      }
    },
  };
}

/** Step 4: the working tree, by a two-tree merge on the private index. */
async function restoreWorktree({ repo, plan, journal }: StepContext, mergeIndex: MergeIndex, scratch: string): Promise<WorktreeOutcome> {
  if (plan.worktree.mode !== "merge") return { readFilesAgain: false, keptFolder: null };
  const { from: s, to: t } = mergeIndex;
  const env = { GIT_INDEX_FILE: mergeIndex.file };
  // The merge checks every path before it writes one, but a write can still fail
  // halfway (a directory it may not write in, a full disk, a signal): then some
  // files are T's and others S's, and its index is left as it was.
  const occupied = await occupiedNow(repo, plan);
  if (occupied.length) throw refusal(occupied);
  // S's files kept by hard links, so that going back needs no disk space; then
  // the merge index is refreshed again, as a link changes a file's ctime.
  const backup = linkBackup(repo, scratch, plan);
  if (backup?.paths.some((p) => p.backup)) await repo.git.run(["update-index", "-q", "--refresh"], { env, okExit: [1] });
  let failed: string | null = null;
  let refused: Blocker | null = null;
  let readFilesAgain = false;
  const folder = await holdCurrentFolder(repo, plan);
  let keptFolder: string | null = null;
  try {
    const r = await repo.git.run(["read-tree", "-m", "-u", s, t], { env, okExit: [128], cwd: folder.cwd });
    if (r.exitCode !== 0) {
      failed = mergeErrors(r.stderr, repo.workTree);
      refused = mergeBlocker(plan, r.stderr);
    }
    // A merge that went through can still warn: a file it could not remove stays on disk.
    readFilesAgain = r.stderr.trim() !== "" || plan.worktree.files.some((f) => RULE_FILES.test(f.path));
  } catch (e) {
    failed = (e as Error).message;
  } finally {
    keptFolder = folder.release();
  }
  if (failed !== null) {
    let putBack: string[];
    try {
      putBack = await undoPartialMerge(repo, scratch, plan, mergeIndex.file, backup);
    } catch (e) {
      // Leave the rollback's own failure for the journal to report (the state left is recorded).
      journal.push("worktree", () => Promise.reject(e as Error));
      throw new Error(`the working-tree merge failed (${failed})`);
    }
    if (!putBack.length && refused) throw refusal([refused]);
    throw new Error(`the working-tree merge failed (${failed})${putBack.length ? `; the files it had changed are back: ${nameList(putBack)}` : ""}`);
  }
  if (backup) {
    journal.push("worktree", async () => {
      const { left } = await putBackLinked(repo, backup, "complete");
      if (left.length) throw new Error(`files changed since the restore wrote them are left as they are: ${nameList(left)}`);
    });
  } else {
    // The reverse merge refuses to overwrite a file that changed since, rather than lose it.
    journal.push("worktree", () => repo.git.run(["read-tree", "-m", "-u", t, s], { env }).then(() => undefined));
  }
  return { readFilesAgain, keptFolder };
}

/**
 * Step 3: the plain refs, in two transactions: deletes and updates first,
 * creates second (Git refuses to delete refs/heads/a and create
 * refs/heads/a/b in one). Each rollback is in the journal before its
 * transaction runs, and puts back only the refs that are where the restore put
 * them: a transaction Git reports as failed may still have taken effect
 * (reftable commits the new table, then fails compacting it on a full disk).
 */
async function restoreRefs({ repo, journal, message, back, withSpace }: StepContext, moves: RefMove[]): Promise<void> {
  const first = moves.filter((m) => m.action !== "create");
  const second = moves.filter((m) => m.action === "create");
  journal.push("refs", withSpace(() => putRefsBack(repo, back, first)));
  await transaction(
    repo,
    message,
    first.map((m) => (m.action === "delete" ? `delete ${refLine(m.name, m.old!.object)}` : `update ${refLine(m.name, m.new!.object, m.old!.object)}`)),
  );
  journal.push("refs", withSpace(() => putRefsBack(repo, back, second)));
  await transaction(repo, message, second.map((m) => `create ${refLine(m.name, m.new!.object)}`));
}

/** Step 3 too: symbolic refs other than HEAD, one symbolic-ref each. */
async function restoreSymbolicRefs({ repo, journal, message, back, withSpace }: StepContext, moves: RefMove[]): Promise<void> {
  for (const m of moves) {
    journal.push("symbolic-refs", withSpace(() => setRef(repo, m.name, m.old, back)));
    await setRef(repo, m.name, m.new, message);
  }
}

/** Step 3 too: HEAD, last of the refs. */
async function restoreHead({ repo, plan, journal, message, back, withSpace }: StepContext): Promise<void> {
  if (!plan.head) return;
  const old = plan.head.old;
  journal.push("head", withSpace(() => setHead(repo, old, back)));
  await setHead(repo, plan.head.new, message);
}

/** Step 5: the index, built aside and moved into place while we hold index.lock. */
async function restoreIndex({ repo, journal }: StepContext, { file: next, refresh }: NextIndex, scratch: string): Promise<void> {
  await refreshChanged(repo, next, refresh);
  const backup = join(scratch, "index-before");
  const hadIndex = existsSync(repo.indexFile);
  if (hadIndex) linkSync(repo.indexFile, backup);
  journal.push("index", async () => {
    if (hadIndex) renameSync(backup, repo.indexFile);
    else rmSync(repo.indexFile, { force: true });
  });
  renameSync(next, repo.indexFile);
}

/** Step 6: the stash, rebuilt oldest first with each entry's own message. */
async function restoreStash({ repo, plan, journal, message, back, withSpace }: StepContext): Promise<void> {
  if (!plan.stash) return;
  const { now, after } = plan.stash;
  journal.push(
    "stash",
    withSpace(async () => {
      const current = await repo.git.run(["rev-parse", "-q", "--verify", "refs/stash"], { okExit: [1] });
      await storeStash(repo, now, current.exitCode === 0, back);
    }),
  );
  await storeStash(repo, after, now.length > 0, message);
}

/**
 * T's index over a copy of the real index (spec step 5: read-tree --reset, then
 * the unmerged entries). When the real index is S's index itself (version 2,
 * so no intent-to-add or skip-worktree entries, and no conflicts), the entries
 * that differ between S and T are all that change: update-index puts T's in
 * their place, which is the one-way merge's result without Git reading T's
 * whole tree. Either way every entry T shares with the index now keeps its
 * stat data, so only the entries refreshChanged names can be stale.
 */
async function buildNextIndex(repo: Repo, scratch: string, plan: RestorePlan): Promise<string> {
  const next = join(scratch, "next-index");
  rmSync(next, { force: true });
  copyIndexFile(repo.indexFile, next);
  const env = { GIT_INDEX_FILE: next };
  const changes = plan.index?.entries;
  if (changes && !plan.from.state.indexUnmerged && indexVersion(next) === 2) {
    if (changes.length) await snapshotEntries(repo, plan, env, indexInfo(changes, "new"));
  } else {
    await repo.git.run(["read-tree", "--reset", plan.targetState.index!], { env });
  }
  if (plan.targetState.indexUnmerged) {
    await snapshotEntries(repo, plan, env, plan.targetState.indexUnmerged);
  }
  return next;
}

/**
 * Step 5's refresh, limited to the entries whose stat data can be stale: files
 * the merge wrote and entries T's index changed. `git add --refresh` takes a
 * pathspec, but one that matches no entry is fatal, so only paths in T's index
 * (asked in one cat-file) are named; conflicted paths have no stat to refresh.
 * Returns the pathspecs, empty when none, or null to refresh every entry.
 */
async function refreshPaths(repo: Repo, plan: RestorePlan): Promise<Uint8Array | null> {
  const t = plan.targetState;
  const conflicted = new Set(t.indexUnmerged ? decodeUnmerged(t.indexUnmerged).map((e) => pathKey(e.path)) : []);
  const paths = new Map<string, Uint8Array>();
  for (const f of [...plan.worktree.files, ...(plan.index?.entries ?? [])]) {
    if (f.newMode !== MODE.absent && !conflicted.has(pathKey(f.raw))) paths.set(pathKey(f.raw), f.raw);
  }
  if (paths.size === 0) return new Uint8Array();
  const raws = [...paths.values()];
  // A newline in a name does not fit cat-file's lines: refresh everything.
  if (raws.some((r) => r.includes(10))) return null;
  const nl = Buffer.from("\n");
  const query = Buffer.concat(raws.flatMap((r) => [Buffer.from(`${t.index}:`), r, nl]));
  const answers = (await repo.git.text(["cat-file", "--batch-check"], { input: query })).split("\n");
  const inIndex = raws.filter((_, i) => answers[i] !== undefined && !answers[i]!.endsWith(" missing"));
  return Buffer.concat(inIndex.flatMap((r) => [Buffer.from(":(literal)"), r, Buffer.from([0])]));
}

async function refreshChanged(repo: Repo, next: string, pathspecs: Uint8Array | null): Promise<void> {
  const env = { GIT_INDEX_FILE: next };
  if (pathspecs === null) await repo.git.run(["update-index", "-q", "--refresh"], { env, okExit: [1] });
  else if (pathspecs.length) await repo.git.run(["add", "--refresh", "--pathspec-from-file=-", "--pathspec-file-nul"], { env, input: pathspecs, okExit: [1] });
}

/** Files whose change changes what `git add -A` reads from the others: ignore rules, attributes (filters, eol). */
const RULE_FILES = /(^|\/)\.git(ignore|attributes)$/;

/*
 * The working tree's way back, without new disk space: a full disk is what
 * makes a merge fail halfway, and it must not stop the rollback too.
 *
 * Git's checkout never writes into a file it replaces: it unlinks it and
 * creates a new one (entry.c), and it removes files by unlinking them. So hard
 * links to S's files that the merge changes or removes, made in the scratch
 * directory before the merge, keep S's contents on disk, and going back is:
 * unlink what the merge wrote (which frees space), rmdir the directories it
 * made, mkdir the ones it removed, and rename the links over their paths. A
 * rename and an unlink allocate no data blocks; a directory made again takes at
 * most what the merge's own rmdir freed, and only after every file the merge
 * wrote is gone. The links' directory entries are allocated before the merge,
 * where running out of space still changes nothing. A file at a path that is
 * neither S's (the same inode) nor T's (its content, or for a write cut short,
 * the start of it) was written by someone else meanwhile and stays as it is.
 * Where no link can be made (the git dir on another file system, a file system
 * without hard links), the rollback goes back to Git's own merge, which writes.
 *
 * The rollback of refs, HEAD and the stash does write (lock files, reflog
 * lines): reserveSpace holds room for it from before the first change.
 */

/** A path the merge may change, as it was before the merge. */
interface PathBefore {
  file: FileChange;
  /** The absolute path as bytes (names need not be UTF-8). */
  abs: Buffer;
  /** What stood there (null: nothing). */
  was: { dev: number; ino: number } | null;
  /** S's file or symlink, kept by a hard link in the scratch directory. */
  backup: string | null;
}

/** A directory above a path the merge may change, as it was before the merge. */
interface DirBefore {
  abs: Buffer;
  depth: number;
  /** Whether it was a directory (false: nothing there, or a file the merge replaces). */
  dir: boolean;
  mode: number;
}

interface WorktreeBackup {
  /** The top of the working tree, ending in a slash. */
  top: Buffer;
  paths: PathBefore[];
  dirs: DirBefore[];
}

const lstatOrNull = (p: Buffer): Stats | null => {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
};

const noSpace = (e: unknown): boolean => ["ENOSPC", "EDQUOT"].includes((e as NodeJS.ErrnoException).code ?? "");

/**
 * Hard links to S's files and symlinks at the paths the merge changes or
 * removes, and the state of the directories above them. Null when links cannot
 * be made here (the rollback then uses Git's merge); throws when the disk has
 * no room for them, before anything changed.
 */
function linkBackup(repo: Repo, scratch: string, plan: RestorePlan): WorktreeBackup | null {
  if (repo.workTree === null) return null;
  const top = Buffer.from(`${repo.workTree}/`);
  const place = join(scratch, "worktree-before");
  const paths: PathBefore[] = [];
  try {
    mkdirSync(place);
    plan.worktree.files.forEach((file, i) => {
      const abs = Buffer.concat([top, file.raw]);
      const st = lstatOrNull(abs);
      let backup: string | null = null;
      if (st && file.oldMode !== MODE.absent && file.oldMode !== MODE.gitlink && (st.isFile() || st.isSymbolicLink())) {
        backup = join(place, String(i));
        linkSync(abs, backup);
      }
      paths.push({ file, abs, was: st && { dev: st.dev, ino: st.ino }, backup });
    });
  } catch (e) {
    rmSync(place, { recursive: true, force: true });
    if (noSpace(e)) throw new Error("not enough disk space to keep the files it replaces until it is done");
    return null;
  }
  const dirs = new Map<string, DirBefore>();
  for (const { file } of paths) {
    let depth = 0;
    for (let i = file.raw.indexOf(47); i > 0; i = file.raw.indexOf(47, i + 1)) {
      depth++;
      const rel = Buffer.from(file.raw.subarray(0, i));
      const key = rel.toString("latin1");
      if (dirs.has(key)) continue;
      const abs = Buffer.concat([top, rel]);
      const st = lstatOrNull(abs);
      dirs.set(key, { abs, depth, dir: st?.isDirectory() ?? false, mode: st ? st.mode & 0o7777 : 0o755 });
    }
  }
  return { top, paths, dirs: [...dirs.values()] };
}

/** Whether a directory above the path is a symlink now: Git never writes through one, nor does the rollback. */
function behindSymlink(b: WorktreeBackup, raw: Uint8Array): boolean {
  for (let i = raw.indexOf(47); i > 0; i = raw.indexOf(47, i + 1)) {
    if (lstatOrNull(Buffer.concat([b.top, raw.subarray(0, i)]))?.isSymbolicLink()) return true;
  }
  return false;
}

/**
 * Put S's files back from the links after the merge wrote some or all of T's
 * (see the comment above WorktreeBackup). `complete`: the merge went through,
 * so a file of T's is whole; `cut-short`: a write may have been cut short. Returns
 * the paths put back, and those left as someone else changed them.
 */
async function putBackLinked(repo: Repo, b: WorktreeBackup, merge: "complete" | "cut-short"): Promise<{ putBack: string[]; left: string[] }> {
  const complete = merge === "complete";
  const undone = new Set<FileChange>();
  const left = new Set<string>();
  const untouched = (st: Stats, p: PathBefore) => p.was !== null && st.dev === p.was.dev && st.ino === p.was.ino;
  const removed = (remove: () => void) => {
    try {
      remove();
      return true;
    } catch {
      return false; // a directory not empty: something the merge did not write is in it
    }
  };
  const rmdir = (abs: Buffer) => removed(() => rmdirSync(abs));
  // What the merge wrote, and only that: T's files where S's no longer stand.
  const found: Found[] = [];
  for (const p of b.paths) {
    if (p.file.newMode === MODE.absent || behindSymlink(b, p.file.raw)) continue;
    const st = lstatOrNull(p.abs);
    if (!st || untouched(st, p)) continue;
    if (p.file.newMode === MODE.gitlink) {
      // The merge makes an empty directory for a submodule.
      if (p.was === null && st.isDirectory() && rmdir(p.abs)) undone.add(p.file);
    } else if (st.isFile() || st.isSymbolicLink()) found.push({ p, st });
  }
  const ours = await writtenByMerge(repo, found, complete);
  for (const { p } of found) {
    if (ours.has(p.file) && removed(() => unlinkSync(p.abs))) undone.add(p.file);
    else left.add(p.file.path);
  }
  // Directories the merge made, deepest first; then those it removed (it removes
  // a directory it emptied), shallowest first.
  const dirs = [...b.dirs].sort((x, y) => y.depth - x.depth);
  for (const d of dirs) if (!d.dir && lstatOrNull(d.abs)?.isDirectory()) rmdir(d.abs);
  for (const d of dirs.reverse()) {
    if (!d.dir || lstatOrNull(d.abs)) continue;
    try {
      mkdirSync(d.abs, { mode: d.mode });
    } catch {
      /* the renames below name what stays out */
    }
  }
  for (const p of b.paths) {
    if (p.file.oldMode === MODE.gitlink && p.was && !lstatOrNull(p.abs)) {
      try {
        mkdirSync(p.abs);
        undone.add(p.file);
      } catch {
        left.add(p.file.path);
      }
    }
    if (!p.backup) continue;
    const st = lstatOrNull(p.abs);
    if (st && untouched(st, p)) continue;
    if (st || behindSymlink(b, p.file.raw)) {
      left.add(p.file.path); // someone else's file stands there now
      continue;
    }
    try {
      renameSync(p.backup, p.abs);
      undone.add(p.file);
    } catch {
      left.add(p.file.path);
    }
  }
  return { putBack: b.paths.filter((p) => undone.has(p.file)).map((p) => p.file.path), left: [...left] };
}

interface Found {
  p: PathBefore;
  st: Stats;
}

/**
 * Which of the files found are the merge's: T's content (hashed as `git add`
 * would, clean filters and end of line included, writing no object), or T's
 * file as checkout writes it, or, when `complete` is false, the start of it
 * (a write cut short by a full disk; Git goes on to the next file).
 */
async function writtenByMerge(repo: Repo, found: readonly Found[], complete: boolean): Promise<Set<FileChange>> {
  const ours = new Set<FileChange>();
  const files: Found[] = [];
  for (const f of found) {
    const c = f.p.file;
    if (c.newMode === MODE.symlink) {
      if (f.st.isSymbolicLink() && blobId(repo, readlinkSync(f.p.abs, { encoding: "buffer" })) === c.newObject) ours.add(c);
    } else if (f.st.isFile()) {
      if (!complete && f.st.size === 0) ours.add(c);
      else files.push(f);
    }
  }
  if (!files.length) return ours;
  const input = Buffer.concat(files.flatMap((f) => [stdinPath(f.p.file.raw), Buffer.from("\n")]));
  const hashed = await repo.git.run(["hash-object", "--stdin-paths"], { input, okExit: [128] });
  const ids = hashed.exitCode === 0 ? Buffer.from(hashed.stdout).toString("latin1").split("\n") : [];
  for (const [i, f] of files.entries()) {
    const c = f.p.file;
    if (ids[i] === c.newObject) {
      ours.add(c);
      continue;
    }
    const want = await repo.git.run(["cat-file", "--filters", `--path=${c.path}`, c.newObject], { okExit: [128] });
    if (want.exitCode !== 0) continue;
    const disk = readFileSync(f.p.abs);
    const t = Buffer.from(want.stdout);
    if (complete ? disk.equals(t) : disk.length <= t.length && disk.equals(t.subarray(0, disk.length))) ours.add(c);
  }
  return ours;
}

/** A name for `--stdin-paths`: C-quoted when a line could not carry it as it is. */
function stdinPath(raw: Uint8Array): Buffer {
  if (raw[0] !== 34 && !raw.includes(10) && raw[raw.length - 1] !== 13) return Buffer.from(raw);
  const out: number[] = [34];
  for (const b of raw) {
    if (b === 34 || b === 92) out.push(92, b);
    else if (b < 32 || b === 127) out.push(...Buffer.from(`\\${b.toString(8).padStart(3, "0")}`));
    else out.push(b);
  }
  out.push(34);
  return Buffer.from(out);
}

/** The object id Git gives a blob of these bytes (a symlink's target). */
function blobId(repo: Repo, bytes: Uint8Array): ObjectId {
  return createHash(repo.objectFormat).update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

/**
 * Room for the rollback's writes: a file of `bytes`, written now (real blocks,
 * random so that no file system compresses them away) and removed by free(),
 * so the rollback's lock files and reflog lines find the space it held however
 * full the disk is by then. Throws before anything changed when even that
 * much does not fit.
 */
function reserveSpace(scratch: string, bytes: number): { free(): void } {
  if (bytes === 0) return { free() {} };
  const file = join(scratch, "rollback-space");
  try {
    // write() takes the blocks (delayed allocation reserves them then): no fsync needed.
    writeFileSync(file, randomBytes(bytes), { flag: "wx", mode: 0o600 });
  } catch (e) {
    rmSync(file, { force: true });
    if (noSpace(e)) throw new Error(`not enough disk space to keep ${Math.ceil(bytes / 1024)} KiB for a rollback`);
    throw e;
  }
  let held = true;
  return {
    free() {
      if (held) rmSync(file, { force: true });
      held = false;
    },
  };
}

/**
 * What the rollback of refs, HEAD and the stash may write, at worst a block for
 * each ref's lock file, its reflog line and HEAD's: three 4 KiB blocks a ref.
 */
function rollbackWrites(plan: RestorePlan, moves: readonly RefMove[]): number {
  const refs = moves.length + (plan.head ? 1 : 0) + (plan.stash ? plan.stash.now.length + 1 : 0);
  return refs === 0 ? 0 : Math.min(16 * 1024 + refs * 3 * 4096, 8 * 1024 * 1024);
}

/** Git's errors from a merge that failed, on one line; Git's own do not say that the disk is full. */
function mergeErrors(stderr: string, workTree: string | null): string {
  const lines = stderr.trim().split("\n").filter(Boolean);
  const shown = lines.length > 4 ? [...lines.slice(0, 3), `and ${lines.length - 3} more`] : lines;
  return shown.join("; ") + (diskFull(workTree) && !/no space left/i.test(stderr) ? "; no space left on the device" : "");
}

function diskFull(dir: string | null): boolean {
  if (dir === null) return false;
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize < 64 * 1024;
  } catch {
    return false;
  }
}

/**
 * After a working-tree merge that failed, put back S's version of every path the
 * merge changed, and only those. The files are read as a capture reads them (on
 * a copy of the merge index, which still holds S): a path of the plan that now
 * holds T's version was written by the merge and goes back to S's; one that holds
 * S's needs nothing; one that holds neither was changed by someone else meanwhile
 * and stays as it is. Git's own two-tree merge then does the writing, with its
 * checks. Returns the paths put back: none when the merge refused before writing.
 * With S's files kept by links (linkBackup) the links go back instead, which
 * needs no disk space; this way, which writes, is for where links cannot be made.
 */
async function undoPartialMerge(repo: Repo, scratch: string, plan: RestorePlan, mergeIndex: string, backup: WorktreeBackup | null): Promise<string[]> {
  if (backup) return (await putBackLinked(repo, backup, "cut-short")).putBack;
  const probe = join(scratch, "probe-index");
  rmSync(probe, { force: true });
  copyIndexFile(mergeIndex, probe);
  const env = { GIT_INDEX_FILE: probe };
  await repo.git.run(["add", "-A", "--ignore-errors"], { env, okExit: [1] });
  const disk = await repo.git.line(["write-tree"], { env });
  const s = plan.from.state.worktree!;
  if (disk === s) return [];
  const planned = new Map(plan.worktree.files.map((f) => [pathKey(f.raw), f]));
  const out = await repo.git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", s, disk]);
  const back: FileChange[] = [];
  for (const c of parseRawNumstat(out.stdout)) {
    const f = planned.get(pathKey(c.raw));
    if (f && c.newMode === f.newMode && c.newObject === f.newObject) back.push(f);
  }
  if (!back.length) return [];
  // The tree to go back to: the disk as it is, with S's entries at those paths.
  const goal = join(scratch, "goal-index");
  rmSync(goal, { force: true });
  copyIndexFile(probe, goal);
  await repo.git.run(["update-index", "-z", "--index-info"], { env: { GIT_INDEX_FILE: goal }, input: indexInfo(back, "old") });
  const goalTree = await repo.git.line(["write-tree"], { env: { GIT_INDEX_FILE: goal } });
  await repo.git.run(["update-index", "-q", "--refresh"], { env, okExit: [1] });
  await repo.git.run(["read-tree", "-m", "-u", disk, goalTree], { env });
  return back.map((f) => f.path);
}

/**
 * The index and working-tree parts of the state the restore left, known by
 * construction: the real index is T's, and the files are T's (S's when no
 * merge ran). Only a submodule's checkout is not moved by the merge; and a
 * merge that warned (a file it could not remove) or changed ignore rules or
 * attributes changes what a capture reads. Then the files are read again as a
 * capture reads them, so the snapshot says what is on disk.
 */
async function partsAfter(repo: Repo, scratch: string, plan: RestorePlan, merged: boolean, readFilesAgain: boolean): Promise<IndexParts> {
  if (repo.bare) return {};
  const t = plan.targetState;
  const parts: IndexParts = {};
  if (t.index !== undefined) {
    parts.index = t.index;
    if (t.indexUnmerged) parts.indexUnmerged = t.indexUnmerged;
  } else if (plan.from.state.index !== undefined) {
    parts.index = plan.from.state.index;
    if (plan.from.state.indexUnmerged) parts.indexUnmerged = plan.from.state.indexUnmerged;
  }
  if (!repo.config.worktree) return parts;
  parts.worktree = merged ? t.worktree : plan.from.state.worktree;
  if (!merged) return parts;
  const gitlinks = plan.worktree.files.some((f) => f.oldMode === MODE.gitlink || f.newMode === MODE.gitlink);
  if (!readFilesAgain && !gitlinks) return parts;
  const dir = join(scratch, "after");
  mkdirSync(dir, { recursive: true });
  parts.worktree = (await captureIndex(repo, dir, { worktree: true, lockHeld: true })).worktree;
  return parts;
}

/** End the operations in progress with Git's own --quit (index and files stay as they are). */
async function endOperations(repo: Repo): Promise<OperationMarker[]> {
  const ended = await currentMarkers(repo);
  let now = ended;
  const has = (m: OperationMarker) => now.includes(m);
  // One --quit can end more than its own marker: read them again after each.
  const quit = async (args: string[]) => {
    await repo.git.run(args);
    now = await currentMarkers(repo);
  };
  if (has("rebase-apply") && existsSync(join(repo.gitDir, "rebase-apply", "applying"))) await quit(["am", "--quit"]);
  if (has("rebase-merge") || has("rebase-apply")) await quit(["rebase", "--quit"]);
  if (has("REVERT_HEAD")) await quit(["revert", "--quit"]);
  if (has("CHERRY_PICK_HEAD") || has("sequencer")) await quit(["cherry-pick", "--quit"]);
  if (has("MERGE_HEAD")) await quit(["merge", "--quit"]);
  if (has("BISECT_LOG")) {
    // Bisect has no --quit; its refs/bisect/* are refs the restore puts back as recorded.
    for (const f of ["BISECT_LOG", "BISECT_START", "BISECT_EXPECTED_REV", "BISECT_ANCESTORS_OK", "BISECT_NAMES", "BISECT_TERMS", "BISECT_RUN", "BISECT_HEAD", "BISECT_FIRST_PARENT"]) {
      rmSync(join(repo.gitDir, f), { force: true });
    }
  }
  const left = await currentMarkers(repo);
  if (left.length) throw fatal(`could not end the operation in progress (${left.join(", ")} still there)`);
  return ended;
}

/** Whether two state trees differ only in the `state` entry (the operation markers). */
async function sameButMarkers(repo: Repo, a: ObjectId, b: ObjectId): Promise<boolean> {
  if (a === b) return true;
  const out = await repo.git.records(["diff-tree", "-z", "--name-only", a, b]);
  return out.every((p) => p === "state");
}

/** Which parts of the restore snapshot differ from the target, for the report. */
async function differences(repo: Repo, target: Snapshot, recorded: LiveCapture): Promise<PartDifference[]> {
  const out = await repo.git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", target.tree, recorded.tree]);
  const parts = new Map<string, string[]>();
  const add = (part: string, name?: string) => {
    const list = parts.get(part) ?? [];
    if (name !== undefined && !list.includes(name)) list.push(name);
    parts.set(part, list);
  };
  for (const c of parseRawNumstat(out.stdout)) {
    const slash = c.path.indexOf("/");
    const part = slash < 0 ? c.path : c.path.slice(0, slash);
    if (part === "index-blobs") continue;
    if (slash < 0) add(part);
    else add(part, c.path.slice(slash + 1) + (c.oldMode === MODE.gitlink || c.newMode === MODE.gitlink ? " (submodule checkout)" : ""));
  }
  if (parts.has("refs")) {
    const t = await loadState(repo, target.tree, `snapshot #${target.number}`);
    parts.set(
      "refs",
      refMoves(t.refs, recorded.state.refs).map((m) => m.name),
    );
  }
  return [...parts].map(([part, names]) => ({ part, names }));
}

/**
 * The changes between the position and the target: undone (newest first) or
 * done again (oldest first). `pendingTree`: the state not yet recorded, which
 * `snaps` ends with as a provisional snapshot (number null in the answer).
 */
function steppedOver(snaps: readonly SnapshotEntry[], direction: Direction, target: Snapshot, pendingTree: ObjectId | null): SteppedChange[] {
  const p = position(snaps);
  if (p === null) return [];
  const pendingNumber = pendingTree === null ? null : snaps[snaps.length - 1]?.number;
  const over = candidates(snaps).filter((s) => (direction === "undo" ? s.number > target.number && s.number <= p : s.number > p && s.number <= target.number));
  if (direction === "undo") over.reverse();
  return over.map((s) => (s.number === pendingNumber ? { number: null, summary: "" } : { number: s.number, summary: s.summary }));
}

/**
 * The ways back a restore of `target` from the state `from` will offer once
 * done (goBack), worked out before it runs, for a dry run and the picker's
 * preview: on the sequence as it will be then, the state left recorded first
 * when it is new, and the restore's own snapshot after it (a change for a
 * partial restore or a revert).
 */
export function waysBack(snaps: readonly SnapshotEntry[], from: { number: number | null; tree: ObjectId }, target: Snapshot, composed: boolean): GoBack[] {
  const sequence = [...snaps];
  const next = () => (sequence[sequence.length - 1]?.number ?? 0) + 1;
  const provisional = (number: number, tree: ObjectId, trailers: Partial<Snapshot["trailers"]>): Snapshot => ({
    number,
    ref: "",
    commit: "",
    tree,
    date: 0,
    summary: "",
    trailers: { format: 1, kind: "change", head: "", ...trailers },
  });
  let left = from.number;
  if (left === null) {
    left = next();
    sequence.push(provisional(left, from.tree, { kind: "change" }));
  }
  sequence.push(provisional(next(), target.tree, composed ? { kind: "change" } : { kind: "restore", restored: target.number, from: left }));
  return goBack(sequence, left);
}

/** How to get back to the state left: redo or undo when one step lands on it, and restore always. */
function goBack(snaps: readonly SnapshotEntry[], from: number | null): GoBack[] {
  const left = snaps.find((s) => s.number === from);
  if (!left) return [];
  const ways: GoBack[] = [];
  for (const command of ["redo", "undo"] as const) {
    try {
      if (navigationTarget(snaps, command, 1).tree === left.tree) {
        ways.push({ command });
        break;
      }
    } catch {
      /* nothing that way */
    }
  }
  ways.push({ command: "restore", number: left.number });
  return ways;
}
