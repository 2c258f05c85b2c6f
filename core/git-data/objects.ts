// Reading and writing objects in batches: one cat-file, hash-object or mktree per batch.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ObjectId } from "../format/index.ts";
import { decodeBytes, encodeBytes } from "../bytes.ts";
import { clearDeadIndexLock, tagOwnerGone } from "../lock.ts";
import { ownerTag } from "../files.ts";
import type { ObjectFormat, Repo } from "../repo.ts";
import { MODE } from "../mode.ts";
import { ensureUndoDir } from "../undo-files.ts";

/** Read blobs by name (`<tree>:<path>`) in one cat-file; a missing one reads as null. */
export async function readBlobs(repo: Repo, names: readonly string[]): Promise<(string | null)[]> {
  const raw = await readObjects(repo, names);
  return raw.map((o) => (o ? decodeBytes(o.content) : null));
}

export interface RawObject {
  oid: ObjectId;
  type: string;
  content: Uint8Array;
}

/** `git cat-file --batch` for several objects at once; null for a missing name. */
export async function readObjects(repo: Repo, names: readonly string[]): Promise<(RawObject | null)[]> {
  if (names.length === 0) return [];
  const r = await repo.git.run(["cat-file", "--batch"], { input: names.map((n) => `${n}\n`).join("") });
  const buf = r.stdout;
  const out: (RawObject | null)[] = [];
  let pos = 0;
  for (let i = 0; i < names.length; i++) {
    const nl = buf.indexOf(10, pos);
    if (nl < 0) break;
    const header = new TextDecoder().decode(buf.subarray(pos, nl));
    pos = nl + 1;
    const m = /^(\S+) (\S+) (\d+)$/.exec(header);
    if (!m) {
      out.push(null); // "<name> missing" or "ambiguous"
      continue;
    }
    const size = Number(m[3]);
    out.push({ oid: m[1]!, type: m[2]!, content: buf.slice(pos, pos + size) });
    pos += size + 1;
  }
  return out;
}

/** The id Git gives an object (gitformat-object): the hash of "<type> <size>", a NUL, and the bytes. */
export function objectId(type: "blob" | "tree" | "commit", bytes: Uint8Array, format: ObjectFormat): ObjectId {
  const hasher = new Bun.CryptoHasher(format === "sha256" ? "sha256" : "sha1");
  hasher.update(`${type} ${bytes.length}\0`);
  hasher.update(bytes);
  return hasher.digest("hex");
}

/** The id Git gives a blob of these bytes. */
export const blobId = (bytes: Uint8Array, format: ObjectFormat): ObjectId => objectId("blob", bytes, format);

/**
 * Write blobs with one hash-object, through files in `scratchDir`; returns
 * their ids in order. A blob whose id is in `stored` (objects known to be in
 * the repository) is not written again, and when all are, no Git runs.
 */
export async function writeBlobs(
  repo: Repo,
  scratchDir: string,
  contents: readonly (string | Uint8Array)[],
  stored: ReadonlySet<ObjectId> = new Set(),
): Promise<ObjectId[]> {
  const bytes = contents.map((c) => (typeof c === "string" ? encodeBytes(c) : c));
  const ids = bytes.map((b) => (stored.size ? blobId(b, repo.objectFormat) : null));
  const missing = bytes.map((_, i) => i).filter((i) => ids[i] === null || !stored.has(ids[i]!));
  if (missing.length === 0) return ids as ObjectId[];
  const paths = missing.map((i) => {
    const p = join(scratchDir, `blob-${i}`);
    writeFileSync(p, bytes[i]!);
    return p;
  });
  const out = (await repo.git.text(["hash-object", "-w", "--no-filters", "--stdin-paths"], { input: paths.join("\n") + "\n" })).split("\n");
  missing.forEach((i, k) => (ids[i] = out[k]!));
  return ids as ObjectId[];
}

/**
 * Write tag objects from their raw content with one hash-object, through files
 * in `scratchDir`; returns the ids Git gave them, in order.
 */
export async function writeTagObjects(repo: Repo, scratchDir: string, contents: readonly Uint8Array[]): Promise<ObjectId[]> {
  if (contents.length === 0) return [];
  const paths = contents.map((c, i) => {
    const p = join(scratchDir, `tag-${i}`);
    writeFileSync(p, c);
    return p;
  });
  const out = await repo.git.text(["hash-object", "-t", "tag", "-w", "--no-filters", "--stdin-paths"], { input: paths.join("\n") + "\n" });
  return out.split("\n").slice(0, contents.length);
}

export interface TreeEntry {
  mode: typeof MODE.file | typeof MODE.tree;
  type: "blob" | "tree";
  oid: ObjectId;
  name: string;
}

/** Write a tree with mktree (which sorts the entries itself). */
export async function writeTree(repo: Repo, entries: readonly TreeEntry[]): Promise<ObjectId> {
  const input = entries.map((e) => `${e.mode} ${e.type} ${e.oid}\t${e.name}\n`).join("");
  return repo.git.line(["mktree"], { input });
}

/**
 * The id of the tree mktree would write for these entries (gitformat-object:
 * "<mode> <name>", a NUL and the binary id for each, in Git's order, where a
 * tree's name sorts as if it ended in a slash; a tree's mode without its
 * leading zero).
 */
export function treeId(entries: readonly TreeEntry[], format: ObjectFormat): ObjectId {
  const key = (e: TreeEntry) => Buffer.from(e.type === "tree" ? `${e.name}/` : e.name);
  const sorted = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)));
  const parts = sorted.map((e) => Buffer.concat([Buffer.from(`${e.mode.replace(/^0+/, "")} ${e.name}\0`), Buffer.from(e.oid, "hex")]));
  return objectId("tree", Buffer.concat(parts), format);
}

/** A scratch folder of an earlier version, named without its owner, is left alone this long. */
const UNOWNED_SCRATCH_MS = 3600_000;

/**
 * Remove what killed processes of this host left in <gitdir>/undo/: scratch
 * folders (tmp-<pid>@<host>-XXXXXX), replaceFile's half-written files
 * (.<name>.git-undo-<pid>@<host>), and index.lock with its owner file when a
 * killed restore made it. A live owner's, or another host's, stay.
 */
export function sweepLeftovers(repo: Repo): void {
  let names: string[];
  try {
    names = readdirSync(repo.undoDir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^tmp-(.+)-[^-]{6}$/.exec(name) ?? /^\..+\.git-undo-(\d+@.+)$/.exec(name);
    if (!m && !/^tmp-[^-@]{6}$/.test(name)) continue;
    const path = join(repo.undoDir, name);
    try {
      const changed = statSync(path).mtimeMs;
      const gone = m ? tagOwnerGone(m[1]!, changed) : Date.now() - changed > UNOWNED_SCRATCH_MS;
      if (gone) rmSync(path, { recursive: true, force: true });
    } catch {
      /* removed by someone else meanwhile */
    }
  }
  if (!repo.bare) clearDeadIndexLock(repo.indexFile, repo.undoDir);
}

/**
 * A scratch directory under <gitdir>/undo/, removed when `fn` ends; named by
 * its owner so that the next run removes it when a kill left it behind.
 */
export async function withScratch<T>(repo: Repo, fn: (dir: string) => Promise<T>): Promise<T> {
  ensureUndoDir(repo.undoDir);
  sweepLeftovers(repo);
  const dir = mkdtempSync(join(repo.undoDir, `tmp-${ownerTag()}-`));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `git cat-file --batch-check` for several objects at once: each one's type and size, null for a missing name. */
export async function objectSizes(repo: Repo, names: readonly string[]): Promise<({ type: string; size: number } | null)[]> {
  if (names.length === 0) return [];
  const out = await repo.git.text(["cat-file", "--batch-check"], { input: names.map((n) => `${n}\n`).join("") });
  return out
    .split("\n")
    .slice(0, names.length)
    .map((line) => {
      const m = /^\S+ (\S+) (\d+)$/.exec(line);
      return m ? { type: m[1]!, size: Number(m[2]) } : null;
    });
}
