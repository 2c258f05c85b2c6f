// The ref storage's table, as Git's ref_storage_be (refs/refs-internal.h):
// one RefStore per backend (core/git-data/refs/files-store.ts,
// core/git-data/refs/reftable-store.ts), chosen by core/git-data/refs/store.ts.
// Code outside core/git-data/ asks the table and never learns which backend
// it holds. Here too what both backends share: the stash read so that it
// agrees with refs/stash.
import type { HeadState, HeadReflogEntry, OperationMarker, ReflogEntry, RefLine, StashEntry } from "../../format/index.ts";
import { listRefs, type RefScan, type SnapshotRef, type UnreadableRef } from "./index.ts";
import type { Repo } from "../../repo.ts";

/** A ref storage's name, as extensions.refStorage gives it. */
export type RefStoreName = "files" | "reftable";

/** The ref storage's part of a state: the refs and the snapshot refs, with what the files storage keeps as files. */
export interface RefState extends RefScan {
  head: HeadState;
  /** HEAD's newest reflog entry; undefined when there is none or HEAD is unborn. */
  headReflog: HeadReflogEntry | undefined;
  /** The stash, newest first (what `git stash list` shows). */
  stash: StashEntry[];
  /** The operations in progress, by the markers Git leaves for them. */
  markers: OperationMarker[];
}

/** A ref storage (extensions.refStorage): how its state is read, and how it is looked after. */
export interface RefStore {
  readonly name: RefStoreName;
  /** Everything at once, for a capture (the refs first, then what goes with them, as the spec orders it). */
  read(repo: Repo, undoRefs?: Promise<SnapshotRef[]>): Promise<RefState>;
  /**
   * HEAD's newest reflog entry as its file says, without a Git process: a
   * quick sign that HEAD moved since a snapshot (its Undo-Reflog trailer).
   * Null where that takes Git.
   */
  headReflogHint(repo: Repo): ReflogEntry | undefined | null;
  /** The operation markers now. */
  markers(repo: Repo): Promise<OperationMarker[]>;
  /** Whether some operation markers are refs here (asked of Git), not files. */
  readonly markerRefs: boolean;
  /**
   * A sign of every write to this worktree's refs, where the storage keeps
   * one that costs no Git process; else null. What was read of the refs
   * since it last changed still holds.
   */
  writeStamp(repo: Repo): string | null;
  /** Pack the snapshot refs, where loose ones cost every listing of refs. Never fails. */
  packSnapshotRefs(repo: Repo): Promise<void>;
  /** Whether a ref is written under a lock file of its own (`<ref>.lock`), which a killed writer leaves behind. */
  readonly refLockFiles: boolean;
  /** Whether `name` is longer than the storage holds (Git would refuse to write it). */
  nameTooLong(repo: Repo, name: string): boolean;
}

// ---------------------------------------------------------------- shared by the backends

export const withUnreadable = <T extends RefScan>(scan: T, unreadable: UnreadableRef[]): T => (unreadable.length ? { ...scan, unreadable } : scan);

/** A refs/stash line for fileStash, which only asks whether there is one. */
export const STASH_LINE: RefLine = { name: "refs/stash", object: null, type: null, symrefTarget: null, peeledObject: null, peeledType: null };

/** How many times refs/stash and its reflog are read again while they disagree. */
const STASH_REREADS = 2;

/**
 * The stash, agreeing with refs/stash's line in `refs`: the refs are listed
 * first and the reflog read after, so a stash push or drop in between leaves
 * a reflog whose newest entry is not what refs/stash names (or entries with
 * no refs/stash). Then both are read again, the ref first, refs/stash's line
 * in `refs` replaced with the one read beside the entries, until they agree.
 * Past STASH_REREADS, refs/stash's line is the newest entry of the reflog
 * last read, which Git writes with the ref (and reftable as one): the format
 * has refs/stash point at the top of the stash, and a restore puts it there.
 * `readLog` reads the reflog now, as `stash` was read.
 */
export async function stashAgreeing(repo: Repo, refs: RefLine[], stash: StashEntry[], readLog: () => Promise<StashEntry[]>): Promise<StashEntry[]> {
  const agree = () => {
    const line = refs.find((r) => r.name === "refs/stash");
    return !line || stash[0]?.commit === line.object;
  };
  const replace = (line: RefLine | undefined) => {
    const at = refs.findIndex((r) => r.name === "refs/stash");
    refs.splice(at, 1, ...(line ? [line] : []));
  };
  for (let i = 0; i < STASH_REREADS && !agree(); i++) {
    const [again] = (await listRefs(repo, ["refs/stash"])).refs.filter((r) => r.name === "refs/stash");
    replace(again);
    stash = again ? await readLog() : [];
  }
  // A reflog with no entries (expired) says nothing of the ref: it stays as read.
  if (!agree() && stash.length) replace({ ...STASH_LINE, object: stash[0]!.commit, type: "commit" });
  return stash;
}
