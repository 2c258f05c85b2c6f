// Listing refs and looking after the ref storage's locks: every ref outside
// refs/undo/ with its type and peeled object (one for-each-ref), the snapshot
// refs with their trees and messages (their names from another, their commits
// from core/git-data/refs/snapshot-commits.ts), the loose symbolic refs, packing the
// snapshot refs, the lock files a killed Git leaves, and the sign that
// reftable's refs changed. What a state holds of the ref storage (HEAD, its
// reflog, the stash, the markers) is read by the storage's backend in
// core/git-data/refs/store.ts, which builds on these.
import { lstatSync, readdirSync, readFileSync, statSync, unlinkSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { snapshotNumber, type ObjectId, type RefLine } from "../../format/index.ts";
import { decodeBytes } from "../../bytes.ts";
import { GitError } from "../../git.ts";
import { forgetRefWriter, killedRefWriteStart } from "../../lock.ts";
import { gitBool, type Repo } from "../../repo.ts";
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
const PER_WORKTREE = ["refs/bisect", "refs/worktree", "refs/rewritten"];

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

/**
 * Pack the snapshot refs (files storage). Loose, each is a file that every
 * listing of refs opens, the other refs' included: 1,000 of them cost a
 * recording 40 ms or more. `--include` (Git 2.42+) packs ours along with
 * what Git packs by default (tags, refs already packed); an older Git refuses
 * the option, and packs them with `--all`, every ref, as `git gc` does (a
 * branch packed reads and moves as before; Git waits for the lock of a ref
 * being packed). Not where gc.packRefs says `git gc` must not pack refs.
 * Never fails: a recording does not depend on it.
 */
export async function packSnapshotRefs(repo: Repo): Promise<void> {
  if (repo.refStorage !== "files") return; // reftable compacts its tables itself
  const setting = repo.settings.get("gc.packrefs");
  if (setting !== undefined && (gitBool(setting) === false || (repo.bare && setting?.trim().toLowerCase() === "notbare"))) return;
  // Refused (a lock held by the user's Git): next time.
  for (const which of ["--include=refs/undo/*", "--all"]) {
    if (await repo.git.succeeds(["pack-refs", which]).catch(() => false)) return;
  }
}

/**
 * A sign of every write to this worktree's reftable refs: its table list,
 * which reftable replaces (a new file renamed over) on each. Null without
 * one (the files storage). What was read of the refs since it last changed
 * still holds.
 */
export function refStorageStamp(repo: Repo): string | null {
  try {
    const st = statSync(join(repo.gitDir, "reftable", "tables.list"), { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return null;
  }
}

/**
 * A lock file in Git's ref storage: on one ref (`<ref>.lock`, files storage),
 * on the packed refs (`packed-refs.lock`: every ref deletion takes it), or on
 * reftable's list of tables (`reftable/tables.list.lock`: every ref write
 * takes it). Git holds one for milliseconds; one left by a killed Git blocks
 * the writes that need it until it is removed.
 */
export interface RefLock {
  path: string;
  kind: "ref" | "packed-refs" | "reftable";
  /** The ref a ref's lock is for. */
  ref: string | null;
  /** Since its last change (ms). */
  ageMs: number;
}

/**
 * A lock in the ref storage left alone this long is no live Git's: Git holds
 * one for the length of a transaction, and waits 1 s (core.packedRefsTimeout)
 * for packed-refs.lock before it gives up.
 */
export const STALE_REF_LOCK_MS = 10_000;

/**
 * packed-refs.lock (or reftable's tables.list.lock) is taken for git-undo's
 * when it was made within this long after a ref transaction of git-undo's that
 * was killed had started: Git takes it at the start of a transaction.
 */
const KILLED_WRITE_WINDOW_MS = 5_000;

const ageOf = (path: string, now: number): number | null => {
  try {
    const st = lstatSync(path);
    return st.isFile() ? now - st.mtimeMs : null;
  } catch {
    return null;
  }
};

/** The repository-wide locks: packed-refs.lock, reftable's tables.list.lock. */
function storageLocks(repo: Repo, now: number): RefLock[] {
  const found: RefLock[] = [];
  for (const [kind, path] of [["packed-refs", join(repo.commonDir, "packed-refs.lock")], ["reftable", join(repo.commonDir, "reftable", "tables.list.lock")]] as const) {
    const ageMs = ageOf(path, now);
    if (ageMs !== null) found.push({ path, kind, ref: null, ageMs });
  }
  return found;
}

/** Every lock file in the ref storage now: on refs (under refs/, this worktree's own ones included), packed-refs, reftable's table list. */
export function refLocks(repo: Repo, now = Date.now()): RefLock[] {
  const found: RefLock[] = [];
  const visit = (base: string, rel: string, e: Dirent) => {
    if (!e.name.endsWith(".lock")) return;
    const ageMs = ageOf(join(base, rel), now);
    if (ageMs !== null) found.push({ path: join(base, rel), kind: "ref", ref: rel.slice(0, -".lock".length), ageMs });
  };
  walkRefFiles(repo.commonDir, "refs", visit);
  if (repo.worktreeName !== null) for (const dir of PER_WORKTREE) walkRefFiles(repo.gitDir, dir, visit);
  return [...found, ...storageLocks(repo, now)];
}

/** Every file (not folder) below `base/rel`, as `visit(base, its path from base, its entry)`; folders `skip` names are left out. */
function walkRefFiles(base: string, rel: string, visit: (base: string, rel: string, e: Dirent) => void, skip: (rel: string) => boolean = () => false): void {
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

/**
 * Remove the stale locks on this worktree's snapshot refs (files storage):
 * `.lock` files in its snapshot folder left alone for STALE_REF_LOCK_MS. Only
 * git-undo writes there, always holding capture.lock, which the caller holds:
 * such a lock is a killed git-undo's (or a killed fetch's of snapshot refs).
 * Returns the paths removed.
 */
export function clearStaleSnapshotRefLocks(repo: Repo, now = Date.now()): string[] {
  if (repo.refStorage !== "files") return [];
  const dir = join(repo.commonDir, repo.snapshotPrefix);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.endsWith(".lock")) continue;
    const path = join(dir, name);
    const age = ageOf(path, now);
    if (age === null || age < STALE_REF_LOCK_MS) continue;
    try {
      unlinkSync(path);
      removed.push(path);
    } catch {
      /* gone already */
    }
  }
  return removed;
}

/**
 * After a ref transaction of git-undo's was killed (core/lock.ts asRefWriter):
 * remove the stale locks on snapshot refs, and packed-refs.lock or reftable's
 * tables.list.lock when it is git-undo's for sure: made within
 * KILLED_WRITE_WINDOW_MS of that transaction's start (no Git of the user's
 * could have taken it while ours held it) and left alone since for
 * STALE_REF_LOCK_MS. One a user's Git made, or one still changing, stays
 * (doctor names it). The caller holds capture.lock. Returns the paths removed.
 */
export function clearKilledRefWrite(repo: Repo, now = Date.now()): string[] {
  const started = killedRefWriteStart(repo.undoDir);
  if (started === null) return [];
  const removed = clearStaleSnapshotRefLocks(repo, now);
  for (const lock of killedWriteLocks(repo, started, now)) {
    // Ours, but perhaps the Git we started outlived us by a moment: decide next time.
    if (lock.ageMs < STALE_REF_LOCK_MS) return removed;
    try {
      unlinkSync(lock.path);
      removed.push(lock.path);
    } catch {
      /* gone already */
    }
  }
  forgetRefWriter(repo.undoDir);
  return removed;
}

/**
 * packed-refs.lock and tables.list.lock when a ref transaction of git-undo's
 * that started at `started` (default: the killed one core/lock.ts knows of)
 * made them: made within KILLED_WRITE_WINDOW_MS of its start.
 */
export function killedWriteLocks(repo: Repo, started = killedRefWriteStart(repo.undoDir), now = Date.now()): RefLock[] {
  if (started === null) return [];
  return storageLocks(repo, now).filter((lock) => {
    const madeMs = now - lock.ageMs;
    return madeMs >= started - 1000 && madeMs <= started + KILLED_WRITE_WINDOW_MS;
  });
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

