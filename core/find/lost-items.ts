// What lost work is, as core/find/lost.ts finds it: dropped stash entries,
// lost commits and file contents no commit holds, and the unreachable
// commits and blobs read on the way.
import type { ObjectId } from "../format/index.ts";

interface LostBase {
  /** What `git undo rescue <id>` names: the stash commit, the commit, the blob. */
  id: ObjectId;
  /** Unix seconds: a commit's committer date, a loose blob's modification time; null when nothing tells. */
  date: number | null;
  /** The refs whose reflog still reaches it (`HEAD`, `refs/heads/main`), when only a reflog does; else empty. */
  reflogs: string[];
}

/** A stash entry that is no longer in the stash list. */
export interface LostStash extends LostBase {
  kind: "stash";
  /** Its message as `git stash list` showed it: `WIP on main: 1a2b3c4 subject`, `On main: message`. */
  message: string;
  /** The branch it was made on, as its message says. */
  branch: string | null;
  /** The commit it was made on, its index commit and its untracked files' commit (null: none). */
  base: ObjectId;
  index: ObjectId;
  untracked: ObjectId | null;
  /** The files it holds (changed in the working tree or the index, or untracked); filled by stashFiles. */
  files: string[];
}

/** A commit nothing reaches but maybe a reflog: the newest of a run of lost commits. */
export interface LostCommit extends LostBase {
  kind: "commit";
  subject: string;
  /** The branch it was on, as a reflog (the branch's own, or HEAD's) or a message suggests. */
  branch: string | null;
  branchFrom: "reflog" | "message" | null;
  /** How many lost commits come before it (its ancestors that nothing else reaches). */
  earlier: number;
  /** Its nearest ancestor along first parents that is not lost (null: the lost run starts at a root). */
  base: ObjectId | null;
}

/** A file content no commit holds. */
export interface LostFile extends LostBase {
  kind: "file";
  /** The path a tree gave it (a deleted snapshot's index or working tree, a tree no commit holds); null when none did. */
  path: string | null;
  size: number;
  /** Its first lines (empty for a binary or very large content, or before lostPreviews). */
  lines: string[];
  binary: boolean;
  /** Named by a capture git-undo read and never recorded (its state tree, no snapshot's): work seen once, held nowhere else. */
  unrecorded?: boolean;
}

export type LostItem = LostStash | LostCommit | LostFile;

/** A commit read from the object database. */
export interface LostCommitObject {
  id: ObjectId;
  tree: ObjectId;
  parents: ObjectId[];
  date: number | null;
  message: string;
  /** Written by git-undo: a snapshot commit (deleted since) or a keep commit. */
  ownCommit: boolean;
}

export interface LostWork {
  /** Newest first (items without a date last). */
  items: LostItem[];
  /** Every unreachable commit read, by id (lost commits before a listed one can be rescued too). */
  commits: Map<ObjectId, LostCommitObject>;
  /** Commits that belong to a stash entry (its index and untracked commits), by id, with the entry's id. */
  stashParts: Map<ObjectId, ObjectId>;
  /** Unreachable blobs, with their size. */
  blobs: Map<ObjectId, number>;
  /** The shortest prefix length (at least 7) that tells every unreachable object apart. */
  abbrev: number;
}
