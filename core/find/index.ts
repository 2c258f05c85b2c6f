// Finding lost work across snapshots: by time (list --since/--until), by path
// (log -- <pathspec>), by a change of content (log -S/-G) and by content (grep,
// in grep.ts, whose API is given here with the others).
import { posix } from "node:path";
import { relative } from "node:path";
import { fatal, refused } from "../errors.ts";
import { itemPairs, type LostCommit, type LostItem, type LostStash, type LostWork } from "./lost.ts";
import { grepBlobs, type GrepOptions } from "./git-grep.ts";
import { diffPairs, FILE_TREES, type Change } from "./state-diff.ts";
import { diffTreePairs, EMPTY_TREE } from "../git-data/tree-diff.ts";
import { GitError } from "../git.ts";
import { isReadable, type ObjectId, type Snapshot, type SnapshotEntry } from "../format/index.ts";
import { parseGitDate } from "../snapshots/history.ts";
import { hashLengthOf, type Repo } from "../repo.ts";

export { grepLost, grepSnapshots, snapshotsHolding, type GrepMatch, type GrepOptions } from "./grep.ts";

/** The snapshots recorded in [since, until] (committer dates; either end open), given as Git dates. */
export async function snapshotsBetween(repo: Repo, snaps: readonly SnapshotEntry[], since?: string, until?: string): Promise<SnapshotEntry[]> {
  const [from, to] = await Promise.all([since === undefined ? -Infinity : parseGitDate(repo, since), until === undefined ? Infinity : parseGitDate(repo, until)]);
  return snaps.filter((s) => s.date >= from && s.date <= to);
}

/**
 * The user's pathspecs, typed from the current directory, as pathspecs of the
 * state tree: `src/a.ts` becomes `index/src/a.ts` and `worktree/src/a.ts`.
 * Globs keep their meaning; `:/x` is from the top. Other magic is refused.
 */
export function statePathspecs(repo: Repo, pathspecs: readonly string[]): string[] {
  const prefix = repo.workTree === null ? "" : relative(repo.workTree, repo.cwd).split("\\").join("/");
  if (prefix.startsWith("..")) throw refused({ kind: "run-outside-tree" }, "usage");
  const out: string[] = [];
  for (const p of pathspecs) {
    let rel: string;
    if (p.startsWith(":/")) rel = p.slice(2);
    else if (p.startsWith(":")) throw refused({ kind: "pathspec-magic", spec: p }, "usage");
    else rel = posix.join(prefix, p);
    rel = posix.normalize(rel === "" ? "." : rel);
    if (rel === ".." || rel.startsWith("../")) throw refused({ kind: "pathspec-outside-tree", spec: p }, "usage");
    for (const t of FILE_TREES) out.push(rel === "." ? t : `${t}/${rel}`);
  }
  return out;
}

/** Each readable snapshot (oldest first) with the one before it, or the empty tree for the first. */
function pairsOf(repo: Repo, snaps: readonly SnapshotEntry[]): { snap: Snapshot; before: ObjectId }[] {
  const empty = EMPTY_TREE[hashLengthOf(repo)];
  if (!empty) throw fatal("unknown object format");
  const out: { snap: Snapshot; before: ObjectId }[] = [];
  let before = empty;
  for (const s of snaps) {
    if (!isReadable(s)) continue;
    out.push({ snap: s, before });
    before = s.tree;
  }
  return out;
}

export interface Pickaxe {
  /** `-S`: the number of occurrences of this string changed (a regular expression with `regex`). */
  string?: string;
  /** `-G`: a line matching this regular expression was added or removed. */
  lines?: string;
  /** `--pickaxe-regex`: `string` is an extended regular expression. */
  regex?: boolean;
}

/**
 * The snapshots (oldest first) whose index or working-tree files changed as
 * `git log -S/-G -- <pathspec>` would find a commit changed, each compared with
 * the readable snapshot before it in the sequence (the first with nothing).
 * All pairs go through one `git diff-tree --stdin`: Git does the search.
 */
export async function snapshotsChanging(repo: Repo, snaps: readonly SnapshotEntry[], what: { pathspecs?: readonly string[]; pickaxe?: Pickaxe }): Promise<Snapshot[]> {
  const specs = what.pathspecs?.length ? statePathspecs(repo, what.pathspecs) : [...FILE_TREES];
  const flags = pickaxeFlags(what.pickaxe ?? {});
  const pairs = pairsOf(repo, snaps);
  const [first, ...later] = pairs;
  if (!first) return [];
  let changes: Map<string, Change[]>;
  let firstChanged: boolean;
  try {
    [changes, firstChanged] = await Promise.all([diffPairs(repo, later.map((p) => [p.before, p.snap.tree]), specs, flags), firstChanges(repo, first.snap, specs, flags)]);
  } catch (e) {
    throw (await badPattern(repo, flags, e)) ?? e;
  }
  return [...(firstChanged ? [first.snap] : []), ...later.filter((p) => (changes.get(`${p.before} ${p.snap.tree}`)?.length ?? 0) > 0).map((p) => p.snap)];
}

/**
 * Whether the oldest snapshot, compared with nothing, has a change the search
 * finds. Its index and its working tree are mostly the same files, so rather
 * than reading every file twice, its index is compared with nothing and its
 * working tree with its index: a text (or a matching line) in its files is in
 * the index, or else where the working tree differs from the index. Same
 * answer, each file read once; the two diffs run side by side.
 */
async function firstChanges(repo: Repo, snap: Snapshot, specs: readonly string[], flags: readonly string[]): Promise<boolean> {
  const empty = EMPTY_TREE[hashLengthOf(repo)]!;
  const indexSpecs = specs.filter((p) => p === "index" || p.startsWith("index/"));
  // The same pathspecs inside the state tree's index/ and worktree/ (none: everything).
  const inside = indexSpecs.includes("index") ? [] : indexSpecs.map((p) => p.slice("index/".length));
  const diff = (args: string[]) => repo.git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", ...flags, ...args]);
  const [index, worktree] = await Promise.all([
    indexSpecs.length ? diff([empty, snap.tree, "--", ...indexSpecs]) : null,
    // A state tree without both entries (readers skip such a snapshot's files anyway): the plain comparison.
    diff([`${snap.tree}:index`, `${snap.tree}:worktree`, "--", ...inside]).catch(() => diff([empty, snap.tree, "--", ...specs])),
  ]);
  return (index?.stdout.length ?? 0) > 0 || worktree.stdout.length > 0;
}

/** What makes a search one Git refuses; the CLI words it. */
export type PickaxeProblem = "string-and-lines" | "regex-without-string" | "empty-string" | "empty-lines";

export function pickaxeProblem(p: Pickaxe): PickaxeProblem | null {
  if (p.string !== undefined && p.lines !== undefined) return "string-and-lines";
  if (p.regex && p.string === undefined) return "regex-without-string";
  if (p.string === "") return "empty-string";
  if (p.lines === "") return "empty-lines";
  return null;
}

/** Git's own options for a search Git accepts (pickaxeProblem: none); one argument each, so a string starting with '-' stays a string. */
export function pickaxeFlags(p: Pickaxe): string[] {
  const problem = pickaxeProblem(p);
  if (problem) throw new Error(`internal error: a search Git refuses (${problem})`);
  if (p.string !== undefined) return [`-S${p.string}`, ...(p.regex ? ["--pickaxe-regex"] : [])];
  if (p.lines !== undefined) return [`-G${p.lines}`];
  return [];
}

/**
 * When a search failed, whether its regular expression is what Git refused:
 * the same search over two empty trees compiles it and compares nothing, so it
 * fails only on the pattern. Then a usage error with Git's reason; else null.
 */
async function badPattern(repo: Repo, flags: readonly string[], e: unknown): Promise<Error | null> {
  const regex = flags.some((f) => f.startsWith("-G") || f === "--pickaxe-regex");
  if (!regex || !(e instanceof GitError)) return null;
  const empty = EMPTY_TREE[hashLengthOf(repo)]!;
  const probe = await repo.git.run(["diff-tree", ...flags, empty, empty], { okExit: [128, 129] });
  if (probe.exitCode === 0) return null;
  const reason = probe.stderr.trim().split("\n").pop()?.replace(/^(fatal|error): /, "") ?? "";
  const pattern = flags[0]!.slice(2);
  return refused({ kind: "bad-regex", pattern, reason }, "usage");
}

/**
 * The lost items (newest first) that hold a change as `git log -S/-G` finds
 * one: a stash entry or a run of lost commits compared with what it was made
 * on, a lost file content compared with nothing (it holds the text, or a
 * matching line). Git does the search: one diff-tree, one grep.
 */
export async function lostChanging(repo: Repo, work: LostWork, pickaxe: Pickaxe): Promise<LostItem[]> {
  const flags = pickaxeFlags(pickaxe);
  const withCommits = work.items.filter((i): i is LostStash | LostCommit => i.kind !== "file");
  const files = work.items.filter((i) => i.kind === "file");
  // A content compared with nothing changed as -S sees it when the text occurs in it, and as -G sees it when a line matches.
  const asGrep: GrepOptions = pickaxe.lines !== undefined || pickaxe.regex ? { extendedRegexp: true } : { fixedStrings: true };
  let changes: Map<string, unknown[]>;
  let inFiles: Map<ObjectId, unknown[]>;
  try {
    [changes, inFiles] = await Promise.all([
      diffTreePairs(repo, withCommits.flatMap(itemPairs), { flags }),
      grepBlobs(repo, files.map((f) => f.id), (pickaxe.string ?? pickaxe.lines)!, asGrep),
    ]);
  } catch (e) {
    throw (await badPattern(repo, flags, e)) ?? e;
  }
  return work.items.filter((i) => (i.kind === "file" ? inFiles.has(i.id) : itemPairs(i).some(([commit]) => (changes.get(commit)?.length ?? 0) > 0)));
}
