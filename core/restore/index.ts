// Restoring (spec: "Restoring", with the clarifications): put a snapshot's state
// back, all or nothing. Every check runs before anything moves; each step that
// then changes something leaves an undo action in a journal (journal.ts), and a
// failure at any later step plays the journal backwards so the repository is
// exactly as before. This file is the orchestration; the calls go down from it
// to apply.ts (the steps in order), worktree.ts, index-step.ts and journal.ts,
// to target.ts for what a request restores, and to outcome.ts for what the
// result reports. None of them calls back up.
//
// The spec's steps, and where each one is:
//   1. an operation in progress: a blocker (core/restore/plan.ts); --force ends it with
//      Git's own --quit (endOperations) and plans again;
//   2. objects T needs: a blocker (core/restore/plan.ts), or --skip-missing;
//      then, before anything moves, the checks Git's merge would make
//      (unknown files, index.lock, a branch checked out elsewhere) and the
//      record-first of an unrecorded state (restore);
//   4. the working tree: restoreWorktree (worktree.ts), run first (see applyPlan);
//   3. refs, symbolic refs, HEAD: restoreRefs, restoreSymbolicRefs, restoreHead (apply.ts);
//   5. the index: restoreIndex (index-step.ts, built aside by startNextIndex);
//   6. the stash: restoreStash (apply.ts);
//   7. the restore snapshot: restore, after applyPlan.
//
// Test-only (core/seams.ts): the restore can be made to fail right after a
// step (record-first, refs, symbolic-refs, head, worktree, index, stash,
// record), so tests can prove the rollback of each one, or to stop there, so
// tests can kill it.
import { fatal, noSpaceLeft, refused, UndoError } from "../errors.ts";
import { RestoreRefused } from "./plan.ts";
import { commitText, isReadable, reflogTrailer, type OperationMarker, type Snapshot, type SnapshotEntry } from "../format/index.ts";
import { streakOrigin, type Direction } from "../snapshots/history.ts";
import { acquireLock, clearDeadIndexLock, createIndexLock, indexLockPath, releaseIndexLock } from "../lock.ts";
import { withScratch, writeTagObjects } from "../git-data/objects.ts";
import { withQuarantine } from "../git-data/quarantine.ts";
import { againWithoutCaches } from "../record.ts";
import { addLineCounts, addOnlyLeft, planIsEmpty, planRestore, type Blocker, type RestorePlan, type StateSide } from "./plan.ts";
import { captureLive, captureWith, snapshotSequence, unchanged, type LiveCapture } from "../capture.ts";
import { loadState } from "../snapshots/read-state.ts";
import { scanUndoRefs, type SnapshotRef } from "../git-data/refs/index.ts";
import { commitCapture, type RecordOutcome } from "../snapshots/store.ts";
import { restoreSummary } from "../describe.ts";
import type { Repo } from "../repo.ts";
import { headReflogHint } from "../git-data/refs/store.ts";
import { currentMarkers, endBisect, operationFacts } from "../git-data/operation.ts";
import type { ComposedTarget } from "../compose.ts";

import { applyPlan, failAfter } from "./apply.ts";
import { startNextIndex, type NextIndex } from "./index-step.ts";
import { Journal } from "./journal.ts";
import { composeTarget, pending, resolveTarget, revertBlocker } from "./target.ts";
import { differences, goBack, partsAfter, sameButMarkers, steppedOver, waysBack } from "./outcome.ts";
import type { ProcessGuard, RestoreOptions, RestoreRequest, RestoreResult } from "./types.ts";
import { checkWorktree, mergeIndexFor, type MergeIndex } from "./worktree.ts";

// What callers of the restore use, from one place.
export { STEPS, type GoBack, type PartDifference, type ProcessGuard, type RestoreOptions, type RestoreRequest, type RestoreResult, type Step, type SteppedChange } from "./types.ts";

export const refusal = (blockers: readonly Blocker[]): RestoreRefused => new RestoreRefused(blockers);

/** index.lock, taken the way Git takes it, so no Git command changes the index while we restore. */
interface IndexLock {
  release(): void;
}

/**
 * Take index.lock, first removing one that a restore killed on this host left
 * (its owner file says so, core/lock.ts); one a Git command holds is refused.
 */
function takeIndexLock(repo: Repo, guard: ProcessGuard | undefined): IndexLock {
  const path = indexLockPath(repo.indexFile);
  clearDeadIndexLock(repo.indexFile, repo.undoDir);
  if (!createIndexLock(repo.indexFile, repo.undoDir)) throw refusal([{ kind: "index-lock", target: 0, names: [path] }]);
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    forget();
    releaseIndexLock(repo.indexFile, repo.undoDir);
  };
  const forget = guard?.atExit(release) ?? (() => {});
  return { release };
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

/** The snapshots before the state being left (all of them when it is not recorded yet). */
const earlierThan = (snaps: readonly SnapshotEntry[], from: StateSide) => snaps.filter((s) => from.number === null || s.number < from.number);

/** A plan with what the steps need built aside: the merge's private index and the next index (both started, not awaited). */
interface ReadyPlan {
  plan: RestorePlan;
  /** Null on a plan with blockers, or when no file changes. */
  mergeIndex: Promise<MergeIndex | null>;
  /** Null on a dry run, a plan with blockers, or when an operation is to be ended first (it can change the index). */
  nextIndex: Promise<NextIndex> | null;
}

async function fullPlan(repo: Repo, scratch: string, from: StateSide, target: Snapshot, { opts, holdsIndexLock, snaps, composed }: PlanContext): Promise<ReadyPlan> {
  // The line counts only fill the report: a real restore counts them while it works.
  const plan = await planRestore(repo, from, target, {
    force: opts.force ?? false,
    holdsIndexLock,
    lineCounts: Boolean(opts.dryRun),
    skipMissing: opts.skipMissing ?? false,
    earlier: earlierThan(snaps, from),
    // A real restore works out which files only the state left holds while it applies (addOnlyLeft).
    deferOnlyLeft: !opts.dryRun,
    partial: composed !== null,
  });
  if (composed?.conflicts.length) plan.blockers.unshift(revertBlocker(target.number, composed.conflicts));
  else if (composed && planIsEmpty(plan)) {
    throw refused({ kind: "nothing-to-change", revert: composed.kind === "revert", number: target.number, what: composed.description.replace(/ from #\d+$/, "") });
  }
  // A dry run asks the merge whether it would go through. A real restore lets the
  // merge itself decide, first of all steps: it checks every path before writing.
  if (opts.dryRun) return { plan, mergeIndex: Promise.resolve(await checkWorktree(repo, scratch, plan)), nextIndex: null };
  // A plan with blockers is refused: nothing is built for it (nor any file linked).
  const nextIndex = plan.blockers.length || (plan.operations.length && opts.force) ? null : startNextIndex(repo, scratch, plan);
  const mergeIndex = plan.worktree.mode === "merge" && !plan.blockers.length ? mergeIndexFor(repo, scratch, plan, { keepFiles: true }) : Promise.resolve(null);
  mergeIndex.catch(() => {}); // awaited by whoever takes the plan, or settled (settleReady)
  return { plan, mergeIndex, nextIndex };
}

/** Wait for what a plan's indexes still run in the scratch directory, when the plan is not used or fails. */
async function settleReady(ready: ReadyPlan | null): Promise<void> {
  await Promise.all([ready?.mergeIndex.catch(() => undefined), ready?.nextIndex?.catch(() => undefined)]);
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
    const indexLock = opts.dryRun || repo.bare ? null : takeIndexLock(repo, opts.guard);
    try {
      // The objects it writes reach the store only when something is about to
      // name them: a snapshot's ref, a restored ref, the index (core/git-data/quarantine.ts).
      // A Git error reaching here came before any change (restoreLocked words the others).
      return await againWithoutCaches(repo, () =>
        withScratch(repo, (scratch) => withQuarantine(repo, (moveIn) => restoreLocked(repo, scratch, request, opts, indexLock !== null, moveIn), { dropCachesIfLeft: true })),
      );
    } catch (e) {
      // Whatever fails once the restore changes anything comes back as an
      // UndoError saying what was rolled back; anything else failed while the
      // state was still being read or checked, before any change.
      if (e instanceof UndoError) throw e;
      const cause = e instanceof Error ? e : new Error(String(e));
      throw refused({ kind: "restore-not-started", cause, diskFull: noSpaceLeft(e) }, "fatal");
    } finally {
      indexLock?.release();
    }
  } finally {
    lock.release();
  }
}

/** A plan made while the capture runs, on the guess that the state now is the latest snapshot's. */
interface EarlyPlan extends ReadyPlan {
  from: SnapshotEntry;
  target: Snapshot;
}

/**
 * The plan for a snapshot target (undo, redo, restore N) from the latest
 * snapshot, made while the capture reads the state now: where the hooks have
 * recorded every command, the state now is that snapshot's, and the plan, the
 * merge index and the next index are ready when the capture ends. The restore
 * takes them only when the capture comes out as that very tree (restoreLocked);
 * otherwise, or when anything here fails, it plans again from the capture.
 * Null when there is nothing to guess from.
 */
async function planOnLatest(repo: Repo, scratch: string, request: RestoreRequest, ctx: Omit<PlanContext, "snaps" | "composed">, undoRefs: Promise<SnapshotRef[]>): Promise<EarlyPlan | null> {
  if (request.kind !== "undo" && request.kind !== "redo" && request.kind !== "restore") return null;
  const { latest, snapshots } = snapshotSequence(repo, await undoRefs);
  if (!latest || !isReadable(latest)) return null;
  // HEAD moved since (a commit, a checkout): the guess is wrong, and making it would only slow the capture.
  const head = headReflogHint(repo);
  if (head !== null && latest.trailers.reflog !== (head && commitText(reflogTrailer(head)))) return null;
  const target = resolveTarget(snapshots, request);
  const from: StateSide = { number: latest.number, tree: latest.tree, state: await loadState(repo, latest.tree, `snapshot #${latest.number}`) };
  return { from: latest, target, ...(await fullPlan(repo, scratch, from, target, { ...ctx, snaps: snapshots, composed: null })) };
}

/** A promise awaited later (or settled on the way out): a failure before then is not an unhandled one. */
function awaitedLater<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

/** What every step of a restore under its locks shares. */
interface Run {
  repo: Repo;
  scratch: string;
  request: RestoreRequest;
  opts: RestoreOptions;
  holdsIndexLock: boolean;
  /** Moves the objects written so far into the store (core/git-data/quarantine.ts), before anything names them. */
  moveIn: () => void;
}

/** The state now, captured, and the plan from it to the target, checked. */
interface Start {
  capture: LiveCapture;
  /** The latest snapshot when the capture is its state: nothing to record first. */
  latest: SnapshotEntry | undefined;
  /** The snapshots a navigation counts in: the capture among them as if recorded (record first ends the streak). */
  snaps: SnapshotEntry[];
  from: StateSide;
  composed: ComposedTarget | null;
  target: Snapshot;
  ready: ReadyPlan;
}

/** What the steps work on: planned again, with its target, when ending an operation (--force) changed the state. */
interface Work {
  plan: RestorePlan;
  target: Snapshot;
  composed: ComposedTarget | null;
  mergeIndex: MergeIndex | null;
  nextIndex: Promise<NextIndex> | null;
  /** Which files only the state left holds (addOnlyLeft), read beside the steps. */
  onlyLeft: Promise<void>;
}

/** Whether the request steps through the history (undo, redo), counting the state now as recorded. */
const navigating = (request: RestoreRequest): request is Extract<RestoreRequest, { kind: Direction }> => request.kind === "undo" || request.kind === "redo";

/**
 * The restore under its locks, as steps: capture and plan, then the dry run's
 * answer or the blockers' refusal; then, each change leaving its undo in the
 * journal: record first, end an operation (--force), apply the plan and record
 * the restore snapshot. A failure there plays the journal backwards (rolledBack).
 */
async function restoreLocked(repo: Repo, scratch: string, request: RestoreRequest, opts: RestoreOptions, holdsIndexLock: boolean, moveIn: () => void): Promise<RestoreResult> {
  const run: Run = { repo, scratch, request, opts, holdsIndexLock, moveIn };
  const start = await captureAndPlan(run);
  const { capture, latest, from, composed, target, ready } = start;
  const result = resultBefore(run, start);
  if (opts.dryRun) {
    result.goBack = waysBack(capture.snapshots, from, target, composed !== null);
    return result;
  }
  const { plan } = ready;
  if (plan.blockers.length) {
    await settleReady(ready);
    throw refusal(plan.blockers);
  }
  // Which files only the state left holds: for the report only, and read from
  // snapshots and the target's commits, which no step changes; from now on,
  // beside the steps (with a long history it is the restore's longest read).
  const onlyLeft = awaitedLater(addOnlyLeft(repo, plan, earlierThan(capture.snapshots, plan.from))); // awaited with the line counts
  // A state not recorded yet is recorded first: beside the merge index, which it does not touch.
  const recordingFirst = latest ? null : awaitedLater(commitCapture(repo, capture, { kind: "change", beforeRef: moveIn })); // awaited below
  let mergeIndex: MergeIndex | null;
  try {
    mergeIndex = await ready.mergeIndex;
  } catch (e) {
    await Promise.all([settleReady(ready), recordingFirst?.catch(() => undefined)]);
    throw e;
  }

  const work: Work = { plan, target, composed, mergeIndex, nextIndex: ready.nextIndex, onlyLeft };
  const journal = new Journal();
  const guard = opts.guard?.holdInterruptions() ?? (() => {});
  try {
    // The snapshot of the state left, recorded first when it is new.
    let fromNumber = await recordFirst(run, capture, latest, recordingFirst, plan, result);
    failAfter("record-first");
    if (plan.operations.length && opts.force) fromNumber = await endOperationsFirst(run, capture, fromNumber, work, result);
    await applyAndRecord(run, capture, fromNumber, journal, work, result);
    return result;
  } catch (e) {
    throw await rolledBack(journal, e, work);
  } finally {
    await work.nextIndex?.catch(() => undefined); // no Git left writing into the scratch directory
    guard();
  }
}

/**
 * Capture the state now and plan from it: the early plan (planOnLatest, made
 * while the capture runs) when its guess holds, else a plan made now.
 */
async function captureAndPlan({ repo, scratch, request, opts, holdsIndexLock }: Run): Promise<Start> {
  // The snapshot refs, listed once for the capture and the early plan.
  const undoRefs = awaitedLater(scanUndoRefs(repo, repo.snapshotPrefix)); // awaited by both
  const early = planOnLatest(repo, scratch, request, { opts, holdsIndexLock }, undoRefs).catch(() => null);
  const capture = await captureLive(repo, { lockHeld: true, undoRefs }).catch(async (e) => {
    await settleReady(await early);
    throw e;
  });
  const guess = await early;
  const latest = unchanged(capture);
  // Count the target as if the current state were already recorded (record first ends the streak).
  const snaps = latest ? capture.snapshots : [...capture.snapshots, pending(capture)];
  const from: StateSide = { number: latest?.number ?? null, tree: capture.tree, state: capture.state };
  try {
    const composed = await composeTarget(repo, scratch, request, capture.snapshots, capture);
    const target = composed?.target ?? resolveTarget(navigating(request) ? snaps : capture.snapshots, request);
    const guessed = guess !== null && latest !== undefined && guess.from.number === latest.number && guess.from.tree === capture.tree && guess.target.number === target.number && guess.target.tree === target.tree;
    if (guessed) {
      guess.plan.from = from; // the same state: the capture's own reading of it
      return { capture, latest, snaps, from, composed, target, ready: guess };
    }
    await settleReady(guess);
    const ready = await fullPlan(repo, scratch, from, target, { opts, holdsIndexLock, snaps: capture.snapshots, composed });
    return { capture, latest, snaps, from, composed, target, ready };
  } catch (e) {
    await settleReady(guess);
    throw e;
  }
}

/** The result as the checks leave it (all a dry run returns but its ways back); the steps fill in the rest. */
function resultBefore({ request, opts }: Run, { capture, latest, snaps, composed, target, ready }: Start): RestoreResult {
  const result: RestoreResult = {
    plan: ready.plan,
    dryRun: Boolean(opts.dryRun),
    recordedFirst: null,
    endedOperations: [],
    restoreSnapshot: null,
    differences: [],
    goBack: [],
    before: null,
    stepped: navigating(request) ? steppedOver(snaps, request.kind, target, latest ? null : capture.tree) : [],
    kind: request.kind,
    keptFolder: null,
  };
  if (composed) result.composed = { description: composed.description, summary: composed.summary, ...(composed.branchAlone ? { branchAlone: composed.branchAlone } : {}) };
  return result;
}

/**
 * A state not recorded yet, recorded first (begun beside the merge index): the
 * change `git undo` then undoes. Returns the number of the state left.
 */
async function recordFirst({ repo, moveIn }: Run, capture: LiveCapture, latest: SnapshotEntry | undefined, recordingFirst: Promise<RecordOutcome> | null, plan: RestorePlan, result: RestoreResult): Promise<number> {
  if (latest) return latest.number;
  let fromNumber: number;
  const made = await (recordingFirst ?? commitCapture(repo, capture, { kind: "change", beforeRef: moveIn }));
  if (made.created) {
    result.recordedFirst = made.snapshot;
    fromNumber = made.snapshot.number;
    // The change recorded first is the one `git undo` undoes: named now that it has a number.
    const first = made.snapshot;
    result.stepped = result.stepped.map((c) => (c.number === null ? { number: first.number, summary: first.summary } : c));
  } else fromNumber = made.latest.number;
  plan.from.number = fromNumber;
  return fromNumber;
}

/**
 * --force with an operation in progress: end it with Git's own --quit, and
 * when that changed more than its markers, record the state it left and plan
 * again from there. Returns the number of the state left then.
 */
async function endOperationsFirst(run: Run, capture: LiveCapture, fromNumber: number, work: Work, result: RestoreResult): Promise<number> {
  const { repo, scratch, request, opts, holdsIndexLock, moveIn } = run;
  result.endedOperations = await endOperations(repo);
  moveIn(); // what Git's own --quit wrote
  // Ending an operation can change more than its markers (rebase --quit stores an autostash).
  const after = await captureLive(repo, { lockHeld: true });
  if (await sameButMarkers(repo, capture.tree, after.tree)) return fromNumber;
  const made = await commitCapture(repo, after, { kind: "change", message: `ended ${result.endedOperations.join(", ")} (git undo --force)`, beforeRef: moveIn });
  if (made.created) {
    fromNumber = made.snapshot.number;
    result.recordedFirst ??= made.snapshot;
  }
  // A partial restore or a revert is built again over the state the operation left.
  work.composed = await composeTarget(repo, scratch, request, after.snapshots, after);
  if (work.composed) work.target = work.composed.target;
  const again = await fullPlan(repo, scratch, { number: fromNumber, tree: after.tree, state: after.state }, work.target, { opts, holdsIndexLock, snaps: after.snapshots, composed: work.composed });
  const plan = again.plan;
  work.plan = plan;
  work.nextIndex = again.nextIndex;
  result.plan = plan;
  if (plan.blockers.length) throw refusal(plan.blockers);
  work.mergeIndex = await again.mergeIndex;
  work.onlyLeft = awaitedLater(work.onlyLeft.then(() => addOnlyLeft(repo, plan, earlierThan(after.snapshots, plan.from))));
  return fromNumber;
}

/** Steps 3 to 6 (applyPlan), each leaving its undo in the journal, then step 7: the restore snapshot. */
async function applyAndRecord({ repo, scratch, opts, moveIn }: Run, capture: LiveCapture, fromNumber: number, journal: Journal, work: Work, result: RestoreResult): Promise<void> {
  const { plan, target, composed, mergeIndex, onlyLeft } = work;
  const nextIndex = (work.nextIndex ??= startNextIndex(repo, scratch, plan));
  await writeBackTags(repo, scratch, plan);
  // From here refs, the index and files may name what this restore wrote (a
  // composed target's trees, tags written back): into the store first.
  moveIn();
  const applying = applyPlan(repo, { plan, scratch, mergeIndex, force: Boolean(opts.force), journal, nextIndex });
  // The line counts only fill the report (none shown when they fail) and read only objects
  // no step changes. Started from a timer, which fires once the steps' first Git process
  // is running: starting a process holds this thread for a millisecond or more.
  const counting = new Promise<void>((done) =>
    setTimeout(() => void Promise.all([addLineCounts(repo, plan), onlyLeft]).then(() => done(), () => done()), 0),
  );
  const applied = await applying;

  const merged = plan.worktree.mode === "merge" && mergeIndex !== null;
  result.keptFolder = applied.keptFolder;
  // The configuration read for the first capture (the same process) keys the committer's kept answer.
  const recorded = await captureWith(repo, await partsAfter(repo, scratch, plan, merged, applied.readFilesAgain), target.tree, capture.configDigest, applied.refsAfter ?? undefined);
  // A partial restore or a revert makes a new state: a change, which plain `git undo` undoes.
  const made = await commitCapture(
    repo,
    recorded,
    composed
      ? { kind: "change", message: composed.summary, beforeRef: moveIn }
      : { kind: "restore", restored: target.number, from: fromNumber, message: restoreSummary(target.number, target.summary), beforeRef: moveIn },
  );
  if (!made.created) throw fatal("the restore snapshot was not recorded");
  const snap = made.snapshot;
  journal.push("record", () => repo.git.run(["update-ref", "-d", snap.ref, snap.commit]).then(() => undefined));
  failAfter("record");
  result.restoreSnapshot = snap;
  if (recorded.tree !== target.tree) result.differences = await differences(repo, target, recorded);
  result.goBack = goBack([...recorded.snapshots, snap], fromNumber);
  const origin = streakOrigin([...recorded.snapshots, snap]);
  if (origin !== fromNumber) result.before = origin;
  await counting;
}

/** What a restore that failed once it could have changed something ends with, the journal played backwards first. */
async function rolledBack(journal: Journal, e: unknown, { target, plan }: Work): Promise<unknown> {
  const failures = await journal.rollback();
  const cause = e instanceof Error ? e : new Error(String(e));
  if (failures.length) return refused({ kind: "rollback-failed", number: target.number, cause, failures, before: plan.from.number }, "fatal");
  if (e instanceof UndoError && e.kind === "refused" && journal.empty) return e;
  return refused({ kind: "restore-rolled-back", number: target.number, cause }, "fatal");
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
  if (wrong.length) throw refused({ kind: "keep-entry-damaged", number: plan.target.number, tag: wrong[0]!.id });
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
  if (operationFacts(repo.gitDir, now).am) await quit(["am", "--quit"]);
  if (has("rebase-merge") || has("rebase-apply")) await quit(["rebase", "--quit"]);
  if (has("REVERT_HEAD")) await quit(["revert", "--quit"]);
  if (has("CHERRY_PICK_HEAD") || has("sequencer")) await quit(["cherry-pick", "--quit"]);
  if (has("MERGE_HEAD")) await quit(["merge", "--quit"]);
  if (has("BISECT_LOG")) await endBisect(repo);
  const left = await currentMarkers(repo);
  if (left.length) throw refused({ kind: "operation-not-ended", markers: left }, "fatal");
  return ended;
}
