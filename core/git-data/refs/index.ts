// Listing refs: every ref outside refs/undo/ with its type and peeled object
// (one for-each-ref), the snapshot refs with their trees and messages (their
// names from another, their commits from
// core/git-data/refs/snapshot-commits.ts), and the loose symbolic refs. What
// a state holds of the ref storage (HEAD, its reflog, the stash, the markers)
// is read by the storage's backend (core/git-data/refs/store.ts), which builds
// on these; the lock files a killed Git leaves are in
// core/git-data/refs/locks.ts.
import { readdirSync, readFileSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { snapshotNumber, type ObjectId, type RefLine } from "../../format/index.ts";
import { decodeBytes } from "../../bytes.ts";
import { GitError } from "../../git.ts";
import type { Repo } from "../../repo.ts";
import { snapshotCommits, type ListedRef, type SnapshotRef } from "./snapshot-commits.ts";
import { peelTags } from "./tag-peels.ts";
import { phase } from "../../trace.ts";

export type { SnapshotRef } from "./snapshot-commits.ts";

export interface RefScan {
  /** Every ref outside refs/undo/, sorted by name in byte order. */
  refs: RefLine[];
  /** Every ref under refs/undo/ (all worktrees), in for-each-ref order. */
  undoRefs: SnapshotRef[];
  /** Refs whose object Git cannot read; only set when there are some (see listRefs). */
  unreadable?: UnreadableRef[];
}

/**
 * A ref whose object Git cannot read: a tag it cannot parse or peel (a
 * malformed tag object, or one naming an object that is gone), recorded by
 * its id without peeled fields; or an object that is missing, which no line
 * of the refs blob can describe (it has no type), left out.
 */
export interface UnreadableRef {
  name: string;
  object: ObjectId;
  why: "unpeelable-tag" | "missing-object";
}

const FIELD = "%00";
/** %(objecttype) reads only an object's header: tags are peeled by core/git-data/refs/tag-peels.ts, which keeps what it peeled. */
const REF_FORMAT = ["%(refname)", "%(objectname)", "%(objecttype)", "%(symref)"].join(FIELD) + "%00%01%00";
const RECORD_END = "\0\x01\0\n";

/**
 * Every ref outside refs/undo/, as for-each-ref patterns. In a glob Git's `*`
 * and `?` stop at a slash and `**` crosses it; a pattern without one matches
 * a whole ref or a folder of them. Together these name every refs/<first>/...
 * whose first component is not `undo` (Git 2.31 onwards; `--exclude` came in
 * 2.42). Listing the snapshots with the refs would read every snapshot
 * commit on every recording.
 */
const OUTSIDE_UNDO = [
  ...["refs/[!u]*", "refs/u[!n]*", "refs/un[!d]*", "refs/und[!o]*", "refs/undo?*"].flatMap((p) => [p, `${p}/**`]),
  "refs/u",
  "refs/un",
  "refs/und",
];

/** Snapshot refs: names and ids only, which reads no object (their commits come from core/git-data/refs/snapshot-commits.ts). */
const UNDO_FORMAT = "%(refname)%00%(objectname)%00%(symref)";

/** Per-worktree ref hierarchies: in a linked worktree they live in its own git dir. */
export const PER_WORKTREE = ["refs/bisect", "refs/worktree", "refs/rewritten"];

/**
 * Every ref outside refs/undo/ with its type, in one for-each-ref, and what
 * each tag among them peels to in full (`<tag>^{}`: core/git-data/refs/tag-peels.ts, which
 * peels only tags it has not seen). A tag that cannot be peeled keeps no
 * peeled fields and is returned as unreadable, for doctor. The for-each-ref
 * fails as a whole when a single ref's object is missing, so only then the
 * refs are read the slow way, one object at a time (readRefsUnparsed): a
 * broken object never stops recording. `patterns`: for-each-ref's, when
 * fewer refs are wanted.
 */
export async function listRefs(repo: Repo, patterns: readonly string[] = OUTSIDE_UNDO): Promise<{ refs: RefLine[]; unreadable: UnreadableRef[] }> {
  let refs: RefLine[];
  try {
    refs = parseRefs(await repo.git.text(["for-each-ref", `--format=${REF_FORMAT}`, ...patterns]));
  } catch (e) {
    if (!(e instanceof GitError)) throw e;
    return readRefsUnparsed(repo, patterns);
  }
  const tags = refs.filter((r) => r.type === "tag" && r.object);
  if (!tags.length) return { refs, unreadable: [] };
  const peeled = await peelTags(repo, [...new Set(tags.map((t) => t.object!))]);
  const unreadable: UnreadableRef[] = [];
  for (const t of tags) {
    const p = peeled.get(t.object!);
    if (p) {
      t.peeledObject = p.object;
      t.peeledType = p.type;
    } else unreadable.push({ name: t.name, object: t.object!, why: "unpeelable-tag" });
  }
  return { refs, unreadable };
}

/** Names, ids and symbolic targets only: for-each-ref reads no object for these. */
const UNPARSED_FORMAT = ["%(refname)", "%(objectname)", "%(symref)"].join(FIELD) + "%00%01%00";

/**
 * The refs when some object cannot be parsed: for-each-ref for names, ids and
 * symbolic targets (no object read), then one cat-file --batch-check for each
 * id's type and, by `<id>^{}`, the object it peels to in full. A tag that
 * cannot be peeled keeps no peeled fields; a ref whose object is missing is
 * left out. Both are returned as unreadable, for doctor.
 */
async function readRefsUnparsed(repo: Repo, patterns: readonly string[]): Promise<{ refs: RefLine[]; unreadable: UnreadableRef[] }> {
  const out = await repo.git.text(["for-each-ref", `--format=${UNPARSED_FORMAT}`, ...patterns]);
  const listed = out
    .split(RECORD_END)
    .filter(Boolean)
    .map((rec) => {
      const [name = "", object = "", symref = ""] = rec.split("\0");
      return { name, object, symref };
    })
    .filter((l) => !l.name.startsWith("refs/undo/"));
  const withObject = listed.filter((l) => l.object);
  const answer = withObject.length
    ? (await repo.git.text(["cat-file", "--batch-check"], { input: withObject.map((l) => `${l.object}\n${l.object}^{}\n`).join("") })).split("\n")
    : [];
  const found = new Map<string, { type: string; peeled: string; peeledType: string } | null>();
  withObject.forEach((l, i) => {
    const [, type = "missing"] = (answer[2 * i] ?? "").split(" ");
    const [peeled = "", peeledType = "missing"] = (answer[2 * i + 1] ?? "").split(" ");
    found.set(l.name, type === "missing" ? null : { type, peeled: peeledType === "missing" ? "" : peeled, peeledType: peeledType === "missing" ? "" : peeledType });
  });
  const refs: RefLine[] = [];
  const unreadable: UnreadableRef[] = [];
  for (const l of listed) {
    if (!l.object) continue; // a dangling symbolic ref: completed from its file, as with the fast listing
    const o = found.get(l.name);
    if (!o) {
      unreadable.push({ name: l.name, object: l.object, why: "missing-object" });
      continue;
    }
    const tag = o.type === "tag";
    if (tag && !o.peeled) unreadable.push({ name: l.name, object: l.object, why: "unpeelable-tag" });
    refs.push({
      name: l.name,
      object: l.object,
      type: o.type,
      symrefTarget: l.symref || null,
      peeledObject: tag ? o.peeled || null : null,
      peeledType: tag ? o.peeledType || null : null,
    });
  }
  return { refs, unreadable };
}

/** Only the refs under `prefix` (a snapshot sequence, or all of refs/undo/). */
export function scanUndoRefs(repo: Repo, prefix = "refs/undo/"): Promise<SnapshotRef[]> {
  return phase("read snapshots", async () => snapshotCommits(repo, (await listUndoRefs(repo, prefix)).listed, prefix));
}

/**
 * scanUndoRefs of the sequence under `prefix`, but only the `count`
 * highest-numbered snapshots' commits are read: what `list -n <count>` shows.
 * A ref among them whose object is no commit is left out by the reader; then
 * every commit is read, so that the count is made up from older ones as before.
 */
export function scanNewestUndoRefs(repo: Repo, prefix: string, count: number): Promise<SnapshotRef[]> {
  return phase("read snapshots", async () => {
    if (count > 0) {
      // Ten-digit names sort as their numbers: Git lists the newest only.
      const { listed, lines } = await listUndoRefs(repo, prefix, count);
      const newest = listed.filter((l) => snapshotNumber(prefix, l.ref) !== null).reverse();
      if (newest.length === count || lines < count) {
        const commits = await snapshotCommits(repo, newest, prefix, { partial: true });
        if (commits.length === newest.length) return commits;
      }
    }
    // Other refs among the newest names (a stray, a symbolic ref, a ref to no
    // commit): every ref is read, so that older ones make up the count as before.
    return snapshotCommits(repo, (await listUndoRefs(repo, prefix)).listed, prefix);
  });
}

/**
 * The refs under `prefix` as for-each-ref lists them, symbolic ones left out,
 * and how many lines it printed; with `newest`, only the last that many names.
 */
async function listUndoRefs(repo: Repo, prefix: string, newest?: number): Promise<{ listed: ListedRef[]; lines: number }> {
  const limit = newest === undefined ? [] : [`--count=${newest}`, "--sort=-refname"];
  const out = await repo.git.text(["for-each-ref", ...limit, `--format=${UNDO_FORMAT}`, prefix]);
  const listed: ListedRef[] = [];
  let lines = 0;
  for (const line of out.split("\n")) {
    if (!line) continue;
    lines++;
    const [ref = "", commit = "", symref = ""] = line.split("\0");
    // A symbolic ref there is no snapshot: deleting it (undo.limit, gc) would delete its target.
    if (ref && commit && !symref) listed.push({ ref, commit });
  }
  return { listed, lines };
}

/** Every ref for-each-ref listed with REF_FORMAT. */
function parseRefs(out: string): RefLine[] {
  const refs: RefLine[] = [];
  for (const rec of out.split(RECORD_END)) {
    if (!rec) continue;
    const [name = "", object = "", type = "", symref = ""] = rec.split("\0");
    if (name.startsWith("refs/undo/")) continue;
    const line: RefLine = { name, object: object || null, type: type || null, symrefTarget: symref || null, peeledObject: null, peeledType: null };
    refs.push(line);
  }
  return refs;
}

/** Every file (not folder) below `base/rel`, as `visit(base, its path from base, its entry)`; folders `skip` names are left out. */
export function walkRefFiles(base: string, rel: string, visit: (base: string, rel: string, e: Dirent) => void, skip: (rel: string) => boolean = () => false): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(join(base, rel), { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const child = `${rel}/${e.name}`;
    if (skip(child)) continue;
    if (e.isDirectory()) walkRefFiles(base, child, visit, skip);
    else visit(base, child, e);
  }
}

/** Loose symbolic refs and their immediate targets (symbolic refs are never packed). */
export function looseSymrefs(repo: Repo): Map<string, string> {
  const found = new Map<string, string>();
  const linked = repo.worktreeName !== null;
  const visit = (base: string, rel: string, e: Dirent) => {
    if (!e.isFile() || e.name.endsWith(".lock")) return;
    let content: string;
    try {
      content = decodeBytes(readFileSync(join(base, rel)));
    } catch {
      return;
    }
    if (content.startsWith("ref: ")) found.set(rel, content.slice(5).trim());
  };
  walkRefFiles(repo.commonDir, "refs", visit, (rel) => rel === "refs/undo" || (linked && PER_WORKTREE.includes(rel)));
  if (linked) for (const dir of PER_WORKTREE) walkRefFiles(repo.gitDir, dir, visit);
  return found;
}

