// The `keep` entry of a state tree (docs/format.md, "Keeping what refs name"):
// the tag objects, trees and blobs the refs name, held by the snapshot so that
// git gc keeps them. Parents only keep commits alive.
//
// Bench-only (core/seams.ts noKeep): the entry left out, so bench/record.ts can
// time the same recording without it. Never otherwise: snapshots written so
// are not the format's.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ObjectId, RefLine } from "../format/index.ts";
import { readJsonFile, replaceFile } from "../files.ts";
import { seams } from "../seams.ts";
import { objectSizes, readObjects, writeBlobs, writeTree, type TreeEntry } from "../git-data/objects.ts";
import type { ObjectFormat, Repo } from "../repo.ts";
import { undoFile } from "../undo-files.ts";
import { MODE } from "../mode.ts";

export const KEEP_ENTRY = "keep";


/** What a keep cache entry says: these ref objects gave this keep tree, inside this state tree. */
interface KeepCache {
  /** Digest of the sorted ref objects that are tags, trees or blobs. */
  key: string;
  keep: ObjectId;
  /** The state tree it was written into. */
  tree: ObjectId;
}

/** A keep tree for a capture, and how to remember it once the state tree is known. */
export interface KeepResult {
  keep: ObjectId | undefined;
  /** Record that `tree` (the state tree just written) holds this keep tree. */
  remember(tree: ObjectId): void;
}

/**
 * The objects of the ref lines that the keep entry starts from: tags (whose
 * chains are read), trees and blobs. Tag objects are immutable, so these ids
 * alone decide the whole keep tree.
 */
function roots(refs: readonly RefLine[]): ObjectId[] {
  const ids = new Set<ObjectId>();
  for (const r of refs) {
    if (r.object && (r.type === "tag" || r.type === "tree" || r.type === "blob")) ids.add(r.object);
  }
  return [...ids].sort();
}

/** `object` and `type` header lines of a tag object's raw content. */
export function tagTarget(content: Uint8Array): { object: ObjectId; type: string } | null {
  const head = new TextDecoder().decode(content.subarray(0, 200));
  const m = /^object ([0-9a-f]+)\ntype (\S+)\n/.exec(head);
  return m ? { object: m[1]!, type: m[2]! } : null;
}

/** The id Git gives a tag object of these bytes: the hash of "tag <size>", a NUL, and the bytes. */
export function tagId(content: Uint8Array, format: ObjectFormat): ObjectId {
  const hasher = new Bun.CryptoHasher(format === "sha256" ? "sha256" : "sha1");
  hasher.update(`tag ${content.length}\0`);
  hasher.update(content);
  return hasher.digest("hex");
}

/**
 * The keep tree for these refs, or undefined when they name no tag, tree or
 * blob. Reused without any Git when the refs name the same objects as when the
 * keep tree was last written and the newest snapshot (`latestTree`) is the
 * state tree it was written into: that snapshot's ref holds it for sure.
 * Otherwise one cat-file per level of tag chains, one hash-object for the tag
 * blobs the previous keep tree lacks, and one mktree.
 */
export async function keepTree(repo: Repo, scratch: string, refs: readonly RefLine[], latestTree: ObjectId | undefined): Promise<KeepResult> {
  const ids = seams.noKeep ? [] : roots(refs);
  if (ids.length === 0) return { keep: undefined, remember: () => {} };
  const hasher = new Bun.CryptoHasher("sha1");
  for (const id of ids) hasher.update(`${id}\n`);
  const key = hasher.digest("hex");
  const cache = undoFile(repo.undoDir, "keepTree");
  const known = readCache(cache);
  const held = known !== null && known.tree === latestTree;
  const remember = (keep: ObjectId) => (tree: ObjectId) => {
    if (known?.key === key && known.keep === keep && known.tree === tree) return;
    try {
      replaceFile(cache, JSON.stringify({ key, keep, tree } satisfies KeepCache));
    } catch {
      /* the next recording builds the keep tree again */
    }
  };
  if (held && known.key === key) return { keep: known.keep, remember: remember(known.keep) };

  const keep = await buildKeepTree(repo, scratch, refs, held ? known.keep : undefined);
  return { keep, remember: keep === undefined ? () => {} : remember(keep) };
}

function readCache(path: string): KeepCache | null {
  const c = readJsonFile(path) as Partial<KeepCache> | null;
  return typeof c?.key === "string" && typeof c.keep === "string" && typeof c.tree === "string" ? (c as KeepCache) : null;
}

/**
 * Build the keep tree: every tag met peeling a ref line's object (as a
 * `<id>.tag` blob of its raw content), and every tree or blob a ref line's
 * object is or a tag chain ends at (named by its own id). `previous`: a keep
 * tree known to be in the repository, whose blobs need not be written again.
 *
 * Types are the objects' own, never what a tag's `type` line claims: a clone
 * can bring a tag whose header names the wrong type (`git mktag` refuses one,
 * `hash-object --literally` writes it), and mktree refuses an entry of the
 * wrong type. The ref lines carry real types (their objects' and, where the
 * chain could be peeled, its end's); only the ends of chains Git could not
 * peel are asked about, in one cat-file.
 */
async function buildKeepTree(repo: Repo, scratch: string, refs: readonly RefLine[], previous: ObjectId | undefined): Promise<ObjectId | undefined> {
  const tags = new Map<ObjectId, Uint8Array>();
  const others = new Map<ObjectId, "tree" | "blob">();
  const types = new Map<ObjectId, string>();
  let pending = new Set<ObjectId>();
  for (const r of refs) {
    if (!r.object) continue; // a dangling symbolic ref
    if (r.type) types.set(r.object, r.type);
    if (r.peeledObject && r.peeledType) types.set(r.peeledObject, r.peeledType);
    if (r.type === "tag") pending.add(r.object);
    else if (r.type === "tree" || r.type === "blob") others.set(r.object, r.type);
  }
  const storedBlobs = previous ? listBlobs(repo, previous) : Promise.resolve(new Set<ObjectId>());
  storedBlobs.catch(() => {}); // awaited below
  const keepEnd = (id: ObjectId, type: string | undefined) => {
    if (type === "tree" || type === "blob") others.set(id, type);
  };
  // One cat-file per level of tag chains: nearly always one.
  while (pending.size > 0) {
    const level = [...pending];
    pending = new Set();
    const objects = await readObjects(repo, level);
    const ends: ObjectId[] = [];
    objects.forEach((o, i) => {
      if (!o) return; // gone meanwhile: nothing to keep
      if (o.type !== "tag") return keepEnd(level[i]!, o.type); // a header called it a tag
      tags.set(level[i]!, o.content);
      const target = tagTarget(o.content);
      if (!target || tags.has(target.object)) return;
      // Read as a tag if its header says so (reading it tells its real type); else its type as the refs know it.
      if (target.type === "tag") pending.add(target.object);
      else if (types.has(target.object)) {
        const type = types.get(target.object)!;
        if (type === "tag") pending.add(target.object);
        else keepEnd(target.object, type);
      } else ends.push(target.object);
    });
    // The end of a chain Git could not peel: its type as the object database has it.
    if (ends.length) {
      (await objectSizes(repo, ends)).forEach((o, i) => {
        if (o?.type === "tag") pending.add(ends[i]!);
        else keepEnd(ends[i]!, o?.type);
      });
    }
  }
  if (tags.size === 0 && others.size === 0) {
    await storedBlobs.catch(() => undefined);
    return undefined;
  }
  const tagIds = [...tags.keys()];
  // Its own folder: the capture writes its blobs through `scratch` at the same time.
  const dir = join(scratch, "keep");
  mkdirSync(dir, { recursive: true });
  const blobIds = await writeBlobs(repo, dir, tagIds.map((id) => tags.get(id)!), await storedBlobs.catch(() => new Set<ObjectId>()));
  const entries: TreeEntry[] = tagIds.map((id, i) => ({ mode: MODE.file, type: "blob", oid: blobIds[i]!, name: `${id}.tag` }));
  for (const [oid, type] of others) entries.push(type === "tree" ? { mode: MODE.tree, type, oid, name: oid } : { mode: MODE.file, type, oid, name: oid });
  return writeTree(repo, entries);
}

/** The blob ids a keep tree holds. */
async function listBlobs(repo: Repo, tree: ObjectId): Promise<Set<ObjectId>> {
  const out = await repo.git.records(["ls-tree", "-z", tree]);
  const ids = new Set<ObjectId>();
  for (const rec of out) {
    const m = /^100644 blob ([0-9a-f]+)\t/.exec(rec);
    if (m) ids.add(m[1]!);
  }
  return ids;
}

/** A tag object to write back from a snapshot's keep entry. */
export interface KeptTag {
  id: ObjectId;
  content: Uint8Array;
}

export interface TagRecovery {
  /** Tags the keep entry gives back, checked against their names; outermost first. */
  tags: KeptTag[];
  /** Missing ids the keep entry gives back in full: the tag and every tag its chain meets. */
  recovered: Set<ObjectId>;
  /** `.tag` blobs whose content is not the tag they are named after (a damaged snapshot). */
  damaged: ObjectId[];
}

/**
 * Of `missing` (ids the target's refs need that the repository lacks), the tags
 * the target state tree's keep entry holds, read and checked without writing
 * anything: the hash of each `.tag` blob as a tag must be its name. A tag
 * whose chain meets another missing tag needs that one back too; one cat-file
 * per level of the chain. Trees and blobs the keep entry holds are never
 * missing: the keep tree itself keeps them.
 */
export async function recoverTags(repo: Repo, stateTree: ObjectId, missing: readonly ObjectId[]): Promise<TagRecovery> {
  const tags = new Map<ObjectId, Uint8Array>();
  const damaged: ObjectId[] = [];
  /** Inner tags of the chains that the repository still has. */
  const present = new Set<ObjectId>();
  let ask = [...new Set(missing)].filter((id) => /^[0-9a-f]+$/.test(id));
  while (ask.length > 0) {
    const blobs = await readObjects(repo, ask.map((id) => `${stateTree}:${KEEP_ENTRY}/${id}.tag`));
    const inner: ObjectId[] = [];
    ask.forEach((id, i) => {
      const o = blobs[i];
      if (!o || o.type !== "blob") return; // not held: lost for good
      const target = tagTarget(o.content);
      if (tagId(o.content, repo.objectFormat) !== id || !target) return void damaged.push(id);
      tags.set(id, o.content);
      if (target.type === "tag" && !tags.has(target.object)) inner.push(target.object);
    });
    // Inner tags still in the repository need nothing; the others come from keep too.
    const found = await readObjects(repo, inner);
    ask = [];
    inner.forEach((id, i) => (found[i] ? present.add(id) : ask.push(id)));
  }
  // A tag comes back in full when every tag down its chain is present or comes back.
  const whole = (id: ObjectId): boolean => {
    for (let at: ObjectId | undefined = id, n = 0; at !== undefined && n < 1000; n++) {
      if (present.has(at)) return true;
      const content = tags.get(at);
      if (!content) return false;
      const target = tagTarget(content)!;
      if (target.type !== "tag") return true;
      at = target.object;
    }
    return false;
  };
  const recovered = new Set(missing.filter((id) => tags.has(id) && whole(id)));
  return { tags: [...tags].map(([id, content]) => ({ id, content })), recovered, damaged };
}
