// The ref storage behind one table (core/git-data/refs/ref-store.ts): the
// repository's backend, and what is asked of it. Everything a snapshot
// records of the storage (every ref with its type and peeled object, this
// worktree's snapshot refs, HEAD, HEAD's newest reflog entry, the stash list
// and the operation markers) is read together by the backend: the files one
// (core/git-data/refs/files-store.ts) reads the plain files Git keeps, the
// reftable one (core/git-data/refs/reftable-store.ts), which has no such
// files, asks Git for all of it in one wave of processes.
import type { ReflogEntry } from "../../format/index.ts";
import type { Repo } from "../../repo.ts";
import { FILES } from "./files-store.ts";
import { REFTABLE } from "./reftable-store.ts";
import type { SnapshotRef } from "./index.ts";
import type { RefState, RefStore } from "./ref-store.ts";

export type { RefState, RefStore, RefStoreName } from "./ref-store.ts";

/**
 * The repository's ref storage, by extensions.refStorage as last read (Git
 * itself refuses to run on a value it does not know). The configuration is
 * read again before each recording: `git refs migrate` can change it under a
 * long-running worker.
 */
export const refStoreOf = (repo: Pick<Repo, "settings">): RefStore => ((repo.settings.get("extensions.refstorage") ?? "files") === "files" ? FILES : REFTABLE);

/**
 * The ref storage's state now, by the repository's backend. `undoRefs`: the
 * snapshot refs, when the caller listed them already (a restore lists them
 * once, for its capture and for the plan it makes meanwhile).
 */
export const readRefState = (repo: Repo, undoRefs?: Promise<SnapshotRef[]>): Promise<RefState> => refStoreOf(repo).read(repo, undoRefs);

/** HEAD's newest reflog entry without a Git process (RefStore.headReflogHint); null where that takes Git. */
export const headReflogHint = (repo: Repo): ReflogEntry | undefined | null => refStoreOf(repo).headReflogHint(repo);

/** Pack the snapshot refs where loose ones slow every listing of refs (the files storage); never fails. */
export const packSnapshotRefs = (repo: Repo): Promise<void> => refStoreOf(repo).packSnapshotRefs(repo);
