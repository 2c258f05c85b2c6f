// Applying a restore plan: the steps in their order (the working tree first,
// then refs, symbolic refs, HEAD, the index, the stash), each leaving its undo
// action in the journal. The small steps are here; the working tree and the
// index have files of their own. Test-only (core/seams.ts): a restore can be
// made to fail or stop right after a step.
import { writeFileSync } from "node:fs";
import type { RefMove, RestorePlan } from "./plan.ts";
import { phase } from "../trace.ts";
import type { Repo } from "../repo.ts";
import { seams } from "../seams.ts";
import { readRefState, type RefState } from "../git-data/refs/store.ts";

import { type NextIndex, restoreIndex } from "./index-step.ts";
import { Journal, putRefsBack, refLine, setHead, setRef, storeStash, transaction } from "./journal.ts";
import type { Step, StepContext, WorktreeOutcome } from "./types.ts";
import { type MergeIndex, restoreWorktree } from "./worktree.ts";
import { reserveSpace, rollbackWrites } from "./backup.ts";

export function failAfter(step: Step): void {
  pauseAfter(step);
  if (seams.failAfter === step) throw new Error(`simulated failure after step '${step}' (GIT_UNDO_TEST_FAIL_AFTER)`);
}

/**
 * Test-only (core/seams.ts): the restore stops right after that step (writing
 * the step's name to the pause file, if given), so a test can kill it there.
 */
function pauseAfter(step: Step): void {
  if (seams.pauseAfter !== step) return;
  if (!seams.stopProcess) throw new Error(`GIT_UNDO_TEST_PAUSE_AFTER=${step}, but this process cannot be stopped (no entry point gave it a way)`);
  const file = seams.pauseFile;
  if (file) writeFileSync(file, `${step}\n`);
  // Frozen as it is, with nothing after the step begun: what "killed right after it" means.
  seams.stopProcess();
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
export function applyPlan(repo: Repo, req: ApplyRequest): Promise<ApplyOutcome> {
  return phase("apply", () => applySteps(repo, req));
}

/** What the steps leave for the restore snapshot. */
export interface ApplyOutcome extends WorktreeOutcome {
  /**
   * The ref storage as the steps left it, read beside the index step when no
   * stash step follows (the index step moves no ref); null: read it now.
   */
  refsAfter: Promise<RefState> | null;
}

async function applySteps(repo: Repo, req: ApplyRequest): Promise<ApplyOutcome> {
  const { plan, scratch, journal, nextIndex } = req;
  const moves = plan.refs.filter((m) => req.force || m.checkedOutIn === undefined);
  const T = plan.target.number;
  let refsAfter: Promise<RefState> | null = null;
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
    // The refs are where the restore puts them, unless the stash step follows: read them now.
    refsAfter = plan.stash ? null : readRefState(repo);
    refsAfter?.catch(() => {}); // awaited by the restore snapshot, or left with the failure
    if (nextIndex) await restoreIndex(step, await nextIndex, scratch);
    failAfter("index");
    await restoreStash(step);
    failAfter("stash");
    return { ...outcome, refsAfter };
  } catch (e) {
    await refsAfter?.catch(() => undefined); // no Git left reading while the rollback writes
    throw e;
  } finally {
    await nextIndex?.catch(() => undefined); // no Git left writing into the scratch directory
  }
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
