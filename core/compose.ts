// Targets that are no snapshot as recorded: parts of snapshot <n> laid over the
// current state (`git undo restore <n> -- <paths>`, `--ref`, `--stash`,
// `--only`), or the current state with the change <n> recorded taken out
// (`git undo revert <n>`). Each is written as a state tree and then planned,
// checked and applied by the restorer like any snapshot, so a partial restore
// has every guarantee a whole one has; it is recorded as a change snapshot.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cut, refLabel } from "./describe.ts";
import { refused } from "./errors.ts";
import { compareBytes, pathKey, type HeadState, type ObjectId, type RefLine, type Snapshot, type StashEntry, type StateTree } from "./format/index.ts";
import { nulRecords } from "./bytes.ts";
import { loadState } from "./snapshots/read-state.ts";
import { readObjects } from "./git-data/objects.ts";
import { currentFolder, headsEqual } from "./restore/plan.ts";
import { writeStateTree } from "./capture.ts";
import { hashLengthOf, type Repo } from "./repo.ts";
import { MODE } from "./mode.ts";

/** The parts of a state a partial restore can take from a snapshot. */
export const PARTS = ["refs", "head", "index", "worktree", "stash"] as const;
export type Part = (typeof PARTS)[number];

export interface PartialSelection {
  /** Parts taken whole (index and worktree only at `paths` when paths are given). */
  parts: Part[];
  /** Pathspecs, as the user typed them (relative to the current directory, with Git's magic). */
  paths: string[];
  /** Ref names as the user typed them (`feature`, `v1`, `refs/notes/commits`). */
  refs: string[];
}

/** Something the change being reverted touched that has changed again since. */
export type RevertConflict =
  | { kind: "ref"; name: string }
  | { kind: "head" }
  | { kind: "file"; part: "index" | "worktree"; path: string }
  | { kind: "conflicts" };

export interface ComposedTarget {
  /** What composed it: `restore <n> -- <paths>` and its kin, `revert <n>`, `rescue <id>`. */
  kind: "partial" | "revert" | "rescue";
  /** The state tree to restore, as a snapshot numbered after the one it came from. */
  target: Snapshot;
  /** What it brings back, for the report and the summary: `src/a.c from #12`, `#17`. */
  description: string;
  /** The summary of the change snapshot the restore records. */
  summary: string;
  /** revert: what stops it (the target keeps the current state there). */
  conflicts: RevertConflict[];
  /**
   * A partial restore that moves the branch checked out here while the index
   * and the files stay (as `git reset --soft` does): the branch, and the
   * selection that would bring them with it.
   */
  branchAlone?: { branch: string; withFiles: PartialSelection };
}

/** The current state, just captured. */
export interface CurrentState {
  tree: ObjectId;
  state: StateTree;
}

// ------------------------------------------------------------ partial restore

/** Git's order for a short ref name (the rules of `git rev-parse`, git-rev-parse(1) "SPECIFYING REVISIONS"). */
const DWIM_RULES = ["%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"];

/** The full name a short ref name stands for in either state, as Git would resolve it; null when neither has one. */
export function resolveRefName(name: string, ...states: readonly (readonly RefLine[])[]): string | null {
  const names = new Set(states.flatMap((refs) => refs.map((r) => r.name)));
  for (const rule of DWIM_RULES) {
    const full = rule.replace("%s", name);
    if (full.startsWith("refs/") && names.has(full)) return full;
  }
  return null;
}

const sortRefs = (refs: RefLine[]): RefLine[] => refs.sort((a, b) => compareBytes(a.name, b.name));

/** Refs of `now` with `names` as `from` has them (created, moved, or deleted where `from` lacks them). */
function refsWith(now: readonly RefLine[], from: readonly RefLine[], names: ReadonlySet<string>): RefLine[] {
  return sortRefs([...now.filter((r) => !names.has(r.name)), ...from.filter((r) => names.has(r.name))]);
}

/**
 * Snapshot `source`'s parts named by `sel` over the current state. Refuses a
 * pathspec or ref name that matches nothing on either side, and parts the
 * source did not record.
 */
export async function composePartial(repo: Repo, scratch: string, now: CurrentState, source: Snapshot, sel: PartialSelection): Promise<ComposedTarget> {
  const src = await loadState(repo, source.tree, `snapshot #${source.number}`);
  const cur = now.state;
  const next: StateTree = { ...cur, refs: [...cur.refs], stash: [...cur.stash], state: [...cur.state] };
  delete next.indexBlobs;
  const what: string[] = [];
  const has = (p: Part) => sel.parts.includes(p);

  // Refs: whole, or by name.
  const refNames = new Set<string>();
  for (const typed of sel.refs) {
    if (typed === "HEAD") throw refused({ kind: "ref-not-by-name", ref: "HEAD" });
    const full = resolveRefName(typed, cur.refs, src.refs);
    if (full === null) throw refused({ kind: "no-such-ref", ref: typed, number: source.number });
    if (full.startsWith("refs/undo/") || full === "refs/stash") throw refused({ kind: "ref-not-by-name", ref: full });
    refNames.add(full);
  }
  if (has("refs")) {
    next.refs = sortRefs(src.refs.filter((r) => r.name !== "refs/stash").concat(cur.refs.filter((r) => r.name === "refs/stash")));
    what.push("the refs");
  } else if (refNames.size) {
    next.refs = refsWith(cur.refs, src.refs, refNames);
    what.push(...[...refNames].map(refLabel));
  }
  if (has("refs") || refNames.size) {
    // A restored ref may name a tag git gc has pruned since: the source's keep entry has it.
    if (src.keep !== undefined) next.keep = src.keep;
    else delete next.keep;
  }

  // HEAD: asked for, or where it would otherwise be left on a branch the restore deletes.
  const onDeleted = (h: HeadState) => h.kind === "symbolic" && cur.refs.some((r) => r.name === h.target) && !next.refs.some((r) => r.name === h.target);
  if (has("head") || onDeleted(cur.head)) {
    next.head = src.head;
    if (has("head")) what.push("HEAD");
  }

  if (has("stash")) {
    next.stash = [...src.stash];
    next.refs = sortRefs(next.refs.filter((r) => r.name !== "refs/stash").concat(src.refs.filter((r) => r.name === "refs/stash")));
    what.push("the stash");
  }

  // Files and index entries.
  const wantIndex = has("index");
  const wantWorktree = has("worktree");
  if (wantIndex && (src.index === undefined || cur.index === undefined)) throw refused({ kind: "bare-no-index" });
  if (wantWorktree && (src.worktree === undefined || cur.worktree === undefined)) {
    throw refused(
      src.worktree === undefined
        ? { kind: "files-not-recorded", number: source.number, why: src.index === undefined ? "no-work-tree" : "worktree-off" }
        : { kind: "files-not-recorded", number: null, why: "worktree-off" },
    );
  }
  if (sel.paths.length) {
    const files = new PathComposer(repo, scratch, sel.paths, userDirectory(repo));
    const matchedBy = new Set<number>();
    if (wantIndex) {
      const r = await files.index(cur, src);
      next.index = r.index;
      if (r.unmerged.length) next.indexUnmerged = r.unmerged;
      else delete next.indexUnmerged;
      r.matchedBy.forEach((i) => matchedBy.add(i));
    }
    if (wantWorktree) {
      const r = await files.worktree(cur.worktree!, src.worktree!);
      next.worktree = r.tree;
      r.matchedBy.forEach((i) => matchedBy.add(i));
    }
    const unmatched = sel.paths.filter((_, i) => !matchedBy.has(i));
    if (unmatched.length) throw refused({ kind: "pathspec-no-match", spec: unmatched[0]!, number: source.number });
    // The picker names a file as `:(top,literal)<path>`: said as the path.
    what.push(...sel.paths.map((p) => p.replace(/^:\(top,literal\)/, "")));
  } else {
    if (wantIndex) {
      next.index = src.index;
      if (src.indexUnmerged) next.indexUnmerged = src.indexUnmerged;
      else delete next.indexUnmerged;
      what.push("the index");
    }
    if (wantWorktree) {
      next.worktree = src.worktree;
      what.push("the files");
    }
  }

  const tree = await writeStateTree(repo, scratch, next);
  const description = `${listWords(what)} from #${source.number}`;
  const composed: ComposedTarget = { kind: "partial", target: { ...source, tree }, description, summary: cut(`restored ${description}`), conflicts: [] };
  const branch = branchMovedAlone(cur, next, wantIndex && wantWorktree && !sel.paths.length);
  if (branch) composed.branchAlone = { branch, withFiles: { parts: [...new Set([...sel.parts, "index", "worktree"] as Part[])], paths: [], refs: [...sel.refs] } };
  return composed;
}

/** The branch HEAD is on, when it moves and stays checked out while the index and files do not follow it whole. */
function branchMovedAlone(cur: StateTree, next: StateTree, filesFollow: boolean): string | null {
  if (filesFollow || cur.head.kind !== "symbolic" || next.head.kind !== "symbolic" || cur.head.target !== next.head.target) return null;
  const branch = cur.head.target;
  const before = cur.refs.find((r) => r.name === branch);
  const after = next.refs.find((r) => r.name === branch);
  return before && after && before.object !== after.object ? branch : null;
}

/** `a, b and c`. */
function listWords(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "nothing";
  const shown = items.slice(0, 3);
  const rest = items.length - shown.length;
  if (rest > 0) return `${shown.join(", ")} and ${rest} more`;
  return `${shown.slice(0, -1).join(", ")} and ${shown[shown.length - 1]}`;
}

/**
 * Index entries and files at some pathspecs taken from another state. Trees
 * are read into private index files, where `ls-files` matches the pathspecs as
 * Git does everywhere (relative to the current directory, with magic such as
 * `:(glob)`), and `update-index` swaps the matched entries.
 */
class PathComposer {
  private count = 0;
  constructor(
    private readonly repo: Repo,
    private readonly scratch: string,
    private readonly specs: readonly string[],
    /** Where the pathspecs are relative to. */
    private readonly cwd: string | undefined,
  ) {}

  private async load(tree: ObjectId, unmerged?: Uint8Array): Promise<string> {
    const file = join(this.scratch, `compose-${this.count++}`);
    rmSync(file, { force: true });
    const env = { GIT_INDEX_FILE: file };
    await this.repo.git.run(["read-tree", tree], { env });
    if (unmerged?.length) await this.repo.git.run(["update-index", "-z", "--index-info"], { env, input: unmerged });
    return file;
  }

  /** `mode oid stage\tpath` records of the entries matching the pathspecs, and which pathspecs matched any. */
  private async matching(file: string): Promise<{ records: Uint8Array[]; matchedBy: number[] }> {
    const env = { GIT_INDEX_FILE: file };
    const ls = (specs: readonly string[]) => this.repo.git.run(["ls-files", "-z", "-s", "--full-name", "--", ...specs], { env, ...(this.cwd ? { cwd: this.cwd } : {}) });
    const all = await ls(this.specs);
    const records = nulRecords(all.stdout);
    let matchedBy: number[] = [];
    if (this.specs.length === 1) matchedBy = records.length ? [0] : [];
    else if (records.length) {
      const each = await Promise.all(this.specs.map((s) => ls([s])));
      matchedBy = each.flatMap((r, i) => (r.stdout.length ? [i] : []));
    }
    return { records, matchedBy };
  }

  /** `into` with its entries at the pathspecs replaced by `from`'s. */
  private async swap(into: string, mine: readonly Uint8Array[], theirs: readonly Uint8Array[]): Promise<void> {
    const zero = "0".repeat(hashLengthOf(this.repo) * 2);
    const paths = new Map<string, Uint8Array>();
    for (const r of mine) paths.set(pathKey(pathOf(r)), pathOf(r));
    const input = Buffer.concat([
      ...[...paths.values()].flatMap((p) => [Buffer.from(`0 ${zero}\t`), p, Buffer.from([0])]),
      ...theirs.flatMap((r) => [r, Buffer.from([0])]),
    ]);
    if (input.length) await this.repo.git.run(["update-index", "-z", "--index-info"], { env: { GIT_INDEX_FILE: into }, input });
  }

  async index(cur: StateTree, src: StateTree): Promise<{ index: ObjectId; unmerged: Uint8Array; matchedBy: number[] }> {
    const [mine, theirs] = await Promise.all([this.load(cur.index!, cur.indexUnmerged), this.load(src.index!, src.indexUnmerged)]);
    const [m, t] = await Promise.all([this.matching(mine), this.matching(theirs)]);
    await this.swap(mine, m.records, t.records);
    const env = { GIT_INDEX_FILE: mine };
    // The state keeps conflicts apart from the tree of the merged entries, as a capture does.
    const unmerged = (await this.repo.git.run(["ls-files", "-z", "--unmerged", "--full-name"], { env })).stdout;
    if (unmerged.length) {
      const zero = "0".repeat(hashLengthOf(this.repo) * 2);
      const seen = new Map<string, Uint8Array>();
      for (const r of nulRecords(unmerged)) seen.set(pathKey(pathOf(r)), pathOf(r));
      const input = Buffer.concat([...seen.values()].flatMap((p) => [Buffer.from(`0 ${zero}\t`), p, Buffer.from([0])]));
      await this.repo.git.run(["update-index", "-z", "--index-info"], { env, input });
    }
    const index = await this.repo.git.line(["write-tree"], { env });
    return { index, unmerged, matchedBy: [...new Set([...m.matchedBy, ...t.matchedBy])] };
  }

  async worktree(cur: ObjectId, src: ObjectId): Promise<{ tree: ObjectId; matchedBy: number[] }> {
    const [mine, theirs] = await Promise.all([this.load(cur), this.load(src)]);
    const [m, t] = await Promise.all([this.matching(mine), this.matching(theirs)]);
    await this.swap(mine, m.records, t.records);
    const tree = await this.repo.git.line(["write-tree"], { env: { GIT_INDEX_FILE: mine } });
    return { tree, matchedBy: [...new Set([...m.matchedBy, ...t.matchedBy])] };
  }
}

/** The user's directory when it is inside the working tree (pathspecs are relative to it), else the top. */
function userDirectory(repo: Repo): string | undefined {
  return repo.workTree === null ? undefined : (currentFolder(repo)?.abs ?? repo.workTree);
}

/** The path of an `ls-files -s` record (`mode oid stage\tpath`). */
const pathOf = (record: Uint8Array): Uint8Array => record.subarray(record.indexOf(9) + 1);

// --------------------------------------------------------------------- revert

const sameLine = (a: RefLine | undefined, b: RefLine | undefined): boolean => {
  if (!a || !b) return !a && !b;
  if (a.symrefTarget || b.symrefTarget) return a.symrefTarget === b.symrefTarget;
  return a.object === b.object && a.type === b.type;
};

/**
 * The current state without the change `change` recorded (from `before`, the
 * snapshot ahead of it, to `change`), keeping everything done since: a ref the
 * change moved goes back when it is still where the change left it; stash
 * entries it pushed and still there go, those it dropped come back; index and
 * files go through Git's three-way merge (base: the change's state; ours: now;
 * theirs: the state before it). What changed again since is a conflict: the
 * target keeps the current state there, and the caller refuses.
 */
export async function composeRevert(repo: Repo, scratch: string, now: CurrentState, change: Snapshot, before: Snapshot): Promise<ComposedTarget> {
  const [b, c] = await Promise.all([loadState(repo, before.tree, `snapshot #${before.number}`), loadState(repo, change.tree, `snapshot #${change.number}`)]);
  const cur = now.state;
  const conflicts: RevertConflict[] = [];
  const next: StateTree = { ...cur, refs: [...cur.refs], stash: [...cur.stash], state: [...cur.state] };
  delete next.indexBlobs;

  // Refs (refs/stash goes with the stash below).
  const byName = (refs: readonly RefLine[]) => new Map(refs.filter((r) => r.name !== "refs/stash").map((r) => [r.name, r]));
  const [inBefore, inChange, inNow] = [byName(b.refs), byName(c.refs), byName(cur.refs)];
  const refs = new Map(inNow);
  let refsMoved = false;
  for (const name of new Set([...inBefore.keys(), ...inChange.keys()])) {
    const was = inBefore.get(name);
    const made = inChange.get(name);
    if (sameLine(was, made)) continue;
    const current = inNow.get(name);
    if (sameLine(current, was)) continue; // already back
    if (!sameLine(current, made)) {
      conflicts.push({ kind: "ref", name });
      continue;
    }
    refsMoved = true;
    if (was) refs.set(name, was);
    else refs.delete(name);
  }
  if (refsMoved && b.keep !== undefined) next.keep = b.keep;

  // HEAD.
  if (!headsEqual(b.head, c.head) && !headsEqual(cur.head, b.head)) {
    if (headsEqual(cur.head, c.head)) next.head = b.head;
    else conflicts.push({ kind: "head" });
  }

  // The stash: what the change pushed goes, what it dropped comes back where it was.
  const key = (e: StashEntry) => e.commit;
  const beforeKeys = new Set(b.stash.map(key));
  const changeKeys = new Set(c.stash.map(key));
  const pushed = new Set(c.stash.filter((e) => !beforeKeys.has(key(e))).map(key));
  let stash = cur.stash.filter((e) => !pushed.has(key(e)));
  b.stash.forEach((e, i) => {
    if (changeKeys.has(key(e)) || stash.some((s) => key(s) === key(e))) return;
    stash = [...stash.slice(0, i), e, ...stash.slice(i)];
  });
  next.stash = stash;
  const stashRef = (list: readonly StashEntry[]) => (list.length ? (b.refs.concat(c.refs, cur.refs).find((r) => r.name === "refs/stash") ?? null) : null);
  const withoutStash = [...refs.values()];
  const top = stashRef(stash);
  if (top) withoutStash.push({ ...top, object: stash[0]!.commit });
  next.refs = sortRefs(withoutStash);

  // Index and files.
  const merger = new TreeMerger(repo, scratch);
  if (b.index !== c.index && cur.index !== undefined && b.index !== undefined && c.index !== undefined) {
    const r = await merger.merge(c.index, cur.index, b.index);
    next.index = r.tree;
    for (const path of r.conflicts) conflicts.push({ kind: "file", part: "index", path });
  }
  if (!bytesEqual(b.indexUnmerged, c.indexUnmerged) && !bytesEqual(cur.indexUnmerged, b.indexUnmerged)) {
    if (bytesEqual(cur.indexUnmerged, c.indexUnmerged)) {
      if (b.indexUnmerged) next.indexUnmerged = b.indexUnmerged;
      else delete next.indexUnmerged;
    } else conflicts.push({ kind: "conflicts" });
  }
  if (b.worktree !== c.worktree && cur.worktree !== undefined && b.worktree !== undefined && c.worktree !== undefined) {
    const r = await merger.merge(c.worktree, cur.worktree, b.worktree);
    next.worktree = r.tree;
    for (const path of r.conflicts) conflicts.push({ kind: "file", part: "worktree", path });
  }

  const tree = await writeStateTree(repo, scratch, next);
  const description = `#${change.number}`;
  return { kind: "revert", target: { ...change, tree }, description, summary: cut(`reverted #${change.number}: ${change.summary}`), conflicts };
}

function bytesEqual(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (!a || !b) return !a && !b;
  return Buffer.from(a).equals(Buffer.from(b));
}

/** `git merge-file` exits with the number of conflicts (at most 127), or 255 when it cannot merge the files at all. */
const MERGE_FILE_CONFLICTS = [...Array.from({ length: 127 }, (_, i) => i + 1), 255];

/**
 * Git's three-way merge of trees, on a private index: `read-tree -m` resolves
 * every path only one side changed; a path both changed goes through
 * `git merge-file`, which resolves it when the changes touch different lines.
 * Anything else (changed on one side and removed on the other, added on both,
 * binary, a symlink or submodule changed on both) is a conflict.
 */
class TreeMerger {
  private count = 0;
  constructor(
    private readonly repo: Repo,
    private readonly scratch: string,
  ) {}

  async merge(base: ObjectId, ours: ObjectId, theirs: ObjectId): Promise<{ tree: ObjectId; conflicts: string[] }> {
    if (ours === base) return { tree: theirs, conflicts: [] };
    if (theirs === base || ours === theirs) return { tree: ours, conflicts: [] };
    const file = join(this.scratch, `merge-${this.count++}`);
    rmSync(file, { force: true });
    const env = { GIT_INDEX_FILE: file };
    await this.repo.git.run(["read-tree", "--empty"], { env });
    await this.repo.git.run(["read-tree", "-m", "-i", "--aggressive", base, ours, theirs], { env });
    const unmerged = (await this.repo.git.run(["ls-files", "-z", "--unmerged", "--full-name"], { env })).stdout;
    const byPath = new Map<string, { raw: Uint8Array; stages: Map<number, { mode: string; oid: ObjectId }> }>();
    for (const rec of nulRecords(unmerged)) {
      const tab = rec.indexOf(9);
      const [mode = "", oid = "", stage = "0"] = new TextDecoder().decode(rec.subarray(0, tab)).split(" ");
      const raw = rec.slice(tab + 1);
      const k = pathKey(raw);
      const entry = byPath.get(k) ?? { raw, stages: new Map() };
      entry.stages.set(Number(stage), { mode, oid });
      byPath.set(k, entry);
    }
    const conflicts: string[] = [];
    const resolved: { raw: Uint8Array; mode: string; content: Uint8Array }[] = [];
    const candidates = [...byPath.values()].filter((e) => {
      const ok = [1, 2, 3].every((s) => e.stages.has(s)) && [...e.stages.values()].every((s) => s.mode === MODE.file || s.mode === MODE.executable);
      if (!ok) conflicts.push(new TextDecoder().decode(e.raw));
      return ok;
    });
    if (candidates.length) {
      const objects = await readObjects(this.repo, candidates.flatMap((e) => [1, 2, 3].map((s) => e.stages.get(s)!.oid)));
      await Promise.all(
        candidates.map(async (e, i) => {
          const [baseObj, oursObj, theirsObj] = objects.slice(i * 3, i * 3 + 3);
          const name = new TextDecoder().decode(e.raw);
          const [bm, om, tm] = [1, 2, 3].map((s) => e.stages.get(s)!.mode);
          const mode = om === bm ? tm! : tm === bm || om === tm ? om! : null;
          const binary = [baseObj, oursObj, theirsObj].some((o) => !o || o.content.includes(0));
          if (mode === null || binary) return conflicts.push(name);
          const paths = ["base", "ours", "theirs"].map((s) => join(this.scratch, `merge-file-${this.count}-${i}-${s}`));
          [baseObj, oursObj, theirsObj].forEach((o, k) => writeFileSync(paths[k]!, o!.content));
          const r = await this.repo.git.run(["merge-file", "-p", "-q", paths[1]!, paths[0]!, paths[2]!], { okExit: MERGE_FILE_CONFLICTS });
          for (const p of paths) rmSync(p, { force: true });
          if (r.exitCode !== 0) return conflicts.push(name);
          resolved.push({ raw: e.raw, mode, content: r.stdout });
        }),
      );
    }
    if (conflicts.length) return { tree: ours, conflicts: conflicts.sort() };
    if (resolved.length) {
      const paths = resolved.map((r, i) => {
        const p = join(this.scratch, `merged-${this.count}-${i}`);
        writeFileSync(p, r.content);
        return p;
      });
      const ids = (await this.repo.git.text(["hash-object", "-w", "--no-filters", "--stdin-paths"], { input: paths.join("\n") + "\n" })).split("\n");
      // A stage-0 entry replaces the path's unmerged stages.
      const input = Buffer.concat(resolved.flatMap((r, i) => [Buffer.from(`${r.mode} ${ids[i]} 0\t`), r.raw, Buffer.from([0])]));
      await this.repo.git.run(["update-index", "-z", "--index-info"], { env, input });
    }
    return { tree: await this.repo.git.line(["write-tree"], { env }), conflicts: [] };
  }
}
