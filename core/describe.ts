// Summary lines: what a new snapshot changed, in a few words.
import { decodeRefs, decodeStash, decodeUnmerged, type HeadState, type ObjectId, type RefLine, type StashEntry, type StateTree } from "./format.ts";
import { readBlobs } from "./objects.ts";
import type { Repo } from "./repo.ts";

/** Longest summary line we write; lists are cut with "and N more". */
export const SUMMARY_WIDTH = 72;

/** A short human name for a ref: `branch feature`, `tag v1`, `remote branch origin/main`. */
export function refLabel(name: string): string {
  if (name.startsWith("refs/heads/")) return `branch ${name.slice(11)}`;
  if (name.startsWith("refs/tags/")) return `tag ${name.slice(10)}`;
  if (name.startsWith("refs/remotes/")) return `remote branch ${name.slice(13)}`;
  return name;
}

export function headLabel(head: HeadState): string {
  if (head.kind === "detached") return `detached at ${head.commit.slice(0, 7)}`;
  return head.target.startsWith("refs/heads/") ? head.target.slice(11) : head.target;
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

/**
 * What differs between the previous snapshot (its tree) and the new state, as a
 * summary line: `branch feature created`, `staged: a.c`, `edited: a.c, b.c`...
 */
export async function describeChange(repo: Repo, prevTree: ObjectId, state: StateTree, tree: ObjectId): Promise<string> {
  const diff = parseNameStatus(
    await repo.git.text(["diff-tree", "-r", "-z", "--no-renames", "--name-status", prevTree, tree]),
  );
  const top = new Set(diff.map(([, p]) => p.split("/", 1)[0]!));
  const parts: string[] = [];

  let prevRefs: RefLine[] = [];
  let prevStash: StashEntry[] = [];
  let prevHead: string | null = null;
  if (top.has("refs") || top.has("stash") || top.has("HEAD")) {
    const names = ["HEAD", "refs", "stash"];
    const blobs = await readBlobs(repo, names.map((n) => `${prevTree}:${n}`));
    prevHead = blobs[0] ?? null;
    prevRefs = decodeRefs(blobs[1] ?? "");
    prevStash = decodeStash(blobs[2] ?? "");
  }
  if (top.has("HEAD") && prevHead !== null) {
    parts.push(`HEAD ${state.head.kind === "detached" ? "detached at " + state.head.commit.slice(0, 7) : "on " + headLabel(state.head)}`);
  }
  if (top.has("refs")) {
    for (const c of refChanges(prevRefs, state.refs)) parts.push(`${refLabel(c.name)} ${c.change}`);
  }
  let stashed = false;
  if (top.has("stash")) {
    const s = stashPhrase(prevStash, state.stash);
    if (s) parts.push(s);
    stashed = s !== null && s.includes("pushed");
  }
  const conflicts = state.indexUnmerged
    ? [...new Set(decodeUnmerged(state.indexUnmerged).map((e) => Buffer.from(e.path).toString("utf8")))]
    : [];
  if (top.has("index-unmerged") && conflicts.length) parts.push(listPhrase("conflict in", conflicts, SUMMARY_WIDTH, " "));
  // A conflicted path leaves the index tree and gets markers on disk: the conflict says it all.
  const conflicted = new Set(conflicts);
  const inIndex = new Map<string, string>();
  const inWorktree = new Map<string, string>();
  for (const [status, path] of diff) {
    if (path.startsWith("index/") && !conflicted.has(path.slice(6))) inIndex.set(path.slice(6), status);
    else if (path.startsWith("worktree/") && !conflicted.has(path.slice(9))) inWorktree.set(path.slice(9), status);
  }
  const staged = [...inIndex.keys()];
  const untracked = [...inWorktree].filter(([p, s]) => s === "A" && !inIndex.has(p)).map(([p]) => p);
  const edited = [...inWorktree].filter(([p, s]) => s !== "A" && !inIndex.has(p)).map(([p]) => p);
  // Changes that went into a new stash entry are not news of their own.
  if (staged.length && !stashed) parts.push(listPhrase("staged", staged));
  if (edited.length && !stashed) parts.push(listPhrase("edited", edited));
  if (untracked.length) parts.push(listPhrase("untracked", untracked));
  if (top.has("state")) parts.push(state.state.length ? `${state.state.join(", ")} in progress` : "operation ended");
  if (!top.has("worktree") && state.worktree === undefined && top.has("index") && !staged.length) parts.push("index changed");
  return cut(parts.length ? parts.join("; ") : "state changed");
}

