// Bringing lost work back (`git undo rescue <id> [-- <path>]`): a stash entry
// as a stash entry, a commit as a branch `rescued/<id>`, a file content as a
// new file. Each is the current state with that one thing added, written as a
// state tree that the restorer plans, checks and applies like any snapshot
// (core/restore/, as core/compose.ts does for partial restores): it records
// first, never overwrites, rolls back on failure, and is recorded as a change
// that plain `git undo` takes back.
import { lstatSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ComposedTarget, CurrentState } from "../compose.ts";
import { cut } from "../describe.ts";
import { refused } from "../errors.ts";
import { compareBytes, headTrailer, isReadable, type ObjectId, type RefLine, type SnapshotEntry, type StateTree } from "../format/index.ts";
import { encodeBytes } from "../bytes.ts";
import { writeStateTree } from "../capture.ts";
import type { Repo } from "../repo.ts";
import { isSafePath, isValidRefName } from "../format/validate.ts";
import type { LostCommitObject, LostWork } from "./lost.ts";

/** What a rescue adds to the current state. */
export type RescueTarget =
  /** A stash entry back on top of the stash list, with its message. */
  | { kind: "stash"; commit: ObjectId; message: string }
  /** A lost commit as a new branch (`refs/heads/rescued/<short id>`). */
  | { kind: "branch"; commit: ObjectId; ref: string; subject: string }
  /** A file content as a new file at `path` (from the top of the working tree). */
  | { kind: "file"; blob: ObjectId; path: string };

/** The branch a rescued commit gets: `rescued/<short id>`. */
export const rescuedBranch = (id: ObjectId, abbrev: number): string => `refs/heads/rescued/${id.slice(0, abbrev)}`;

/**
 * What `git undo rescue <id>` (with `path` for a file content) brings back:
 * `id` is a prefix (4 hex digits or more) of one lost object's id. A stash
 * entry, a lost commit or a file content; never git-undo's own commits, nor
 * what the stash list still holds.
 */
export function rescueTarget(work: LostWork, id: string, path: string | null): RescueTarget {
  const prefix = id.toLowerCase();
  if (!/^[0-9a-f]{4,64}$/.test(prefix)) throw refused({ kind: "rescue-not-an-id", id }, "usage");
  const found = [...work.commits.keys(), ...work.blobs.keys()].filter((o) => o.startsWith(prefix));
  if (found.length === 0) throw refused({ kind: "rescue-not-lost", prefix });
  if (found.length > 1) throw refused({ kind: "rescue-ambiguous", prefix, ids: found.map((o) => o.slice(0, work.abbrev)) });
  const oid = found[0]!;
  const commit = work.commits.get(oid);
  if (!commit) {
    if (path === null) throw refused({ kind: "rescue-needs-path", id: oid.slice(0, work.abbrev) }, "usage");
    return { kind: "file", blob: oid, path };
  }
  if (path !== null) throw refused({ kind: "rescue-not-a-file", id: oid.slice(0, work.abbrev), is: stashOf(work, oid) ? "stash entry" : "commit" }, "usage");
  return commitTarget(work, commit);
}

function stashOf(work: LostWork, oid: ObjectId) {
  return work.items.find((i) => i.kind === "stash" && i.id === oid);
}

function commitTarget(work: LostWork, commit: LostCommitObject): RescueTarget {
  const short = commit.id.slice(0, work.abbrev);
  if (commit.ownCommit) throw refused({ kind: "rescue-own-commit", id: short });
  const whole = work.stashParts.get(commit.id);
  if (whole !== undefined) throw refused({ kind: "rescue-stash-part", id: short, entry: whole.slice(0, work.abbrev) });
  const stash = stashOf(work, commit.id);
  if (stash?.kind === "stash") return { kind: "stash", commit: commit.id, message: stash.message };
  return { kind: "branch", commit: commit.id, ref: rescuedBranch(commit.id, work.abbrev), subject: commit.message.split("\n", 1)[0]!.trim() };
}

/**
 * The current state with the rescued thing added, as the target the restorer
 * applies: numbered as the state it is laid over (the latest snapshot, or the
 * one record-first is about to write). Refuses what would replace anything:
 * a branch that exists, a file or folder at the path, a stash entry the list
 * already has.
 */
export async function composeRescue(repo: Repo, scratch: string, now: CurrentState, snaps: readonly SnapshotEntry[], rescue: RescueTarget): Promise<ComposedTarget> {
  const cur = now.state;
  const next: StateTree = { ...cur, refs: [...cur.refs], stash: [...cur.stash], state: [...cur.state] };
  delete next.indexBlobs;
  let description: string;
  let summary: string;
  const short = (oid: ObjectId) => oid.slice(0, 7);
  if (rescue.kind === "stash") {
    if (cur.stash.some((e) => e.commit === rescue.commit)) throw refused({ kind: "rescue-in-stash", id: short(rescue.commit) });
    next.stash = [{ commit: rescue.commit, message: rescue.message }, ...cur.stash];
    const stashRef: RefLine = { name: "refs/stash", object: rescue.commit, type: "commit", symrefTarget: null, peeledObject: null, peeledType: null };
    next.refs = sortRefs([...next.refs.filter((r) => r.name !== "refs/stash"), stashRef]);
    description = `stash entry '${rescue.message}' (${short(rescue.commit)})`;
    summary = `rescued stash entry: ${rescue.message}`;
  } else if (rescue.kind === "branch") {
    const taken = cur.refs.find((r) => r.name === rescue.ref || rescue.ref.startsWith(`${r.name}/`) || r.name.startsWith(`${rescue.ref}/`));
    if (taken) throw refused({ kind: "rescue-branch-exists", ref: taken.name });
    if (!isValidRefName(rescue.ref)) throw refused({ kind: "rescue-bad-branch", ref: rescue.ref });
    next.refs = sortRefs([...next.refs, { name: rescue.ref, object: rescue.commit, type: "commit", symrefTarget: null, peeledObject: null, peeledType: null }]);
    const branch = rescue.ref.slice("refs/heads/".length);
    description = `commit ${short(rescue.commit)} as branch ${branch}`;
    summary = `rescued ${short(rescue.commit)} as branch ${branch}: ${rescue.subject}`;
  } else {
    if (repo.workTree === null || cur.worktree === undefined) {
      throw refused({ kind: "rescue-no-files", bare: repo.workTree === null });
    }
    checkFreePath(repo.workTree, rescue.path);
    next.worktree = await withFile(repo, scratch, cur.worktree, rescue.blob, rescue.path);
    description = `${short(rescue.blob)} as ${rescue.path}`;
    summary = `rescued ${rescue.path} (${short(rescue.blob)})`;
  }
  const tree = await writeStateTree(repo, scratch, next);
  const latest = [...snaps].reverse().find(isReadable);
  const number = latest && latest.tree === now.tree ? latest.number : (snaps[snaps.length - 1]?.number ?? 0) + 1;
  const target = { number, ref: "", commit: "", tree, date: Math.floor(Date.now() / 1000), summary: cut(summary), trailers: { format: 1, kind: "change" as const, head: headTrailer(cur.head) } };
  return { kind: "rescue", target, description, summary: cut(summary), conflicts: [] };
}

const sortRefs = (refs: RefLine[]): RefLine[] => refs.sort((a, b) => compareBytes(a.name, b.name));

/**
 * Refuses a path a rescue must not write: one Git would not accept, one where
 * anything stands (a file, a folder, a link, even a broken one), or one inside
 * a folder that is not a plain folder (a file, or a link that could lead out
 * of the working tree).
 */
function checkFreePath(top: string, path: string): void {
  if (!isSafePath(encodeBytes(path))) throw refused({ kind: "rescue-bad-path", path }, "usage");
  const parts = path.split("/");
  for (let i = 1; i <= parts.length; i++) {
    const rel = parts.slice(0, i).join("/");
    let st;
    try {
      st = lstatSync(join(top, rel));
    } catch {
      return; // nothing there: neither is anything below it
    }
    if (i === parts.length) throw refused({ kind: "rescue-path-exists", path });
    if (!st.isDirectory()) throw refused({ kind: "rescue-not-a-folder", path: rel, is: st.isSymbolicLink() ? "symbolic link" : "file" });
  }
}

/** A working tree with one more file, written through a private index. */
async function withFile(repo: Repo, scratch: string, worktree: ObjectId, blob: ObjectId, path: string): Promise<ObjectId> {
  const file = join(scratch, "rescue-index");
  rmSync(file, { force: true });
  const env = { GIT_INDEX_FILE: file };
  await repo.git.run(["read-tree", worktree], { env });
  const input = Buffer.concat([Buffer.from(`100644 ${blob}\t`), encodeBytes(path), Buffer.from([0])]);
  await repo.git.run(["update-index", "-z", "--add", "--index-info"], { env, input });
  return repo.git.line(["write-tree"], { env });
}
