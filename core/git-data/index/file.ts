// Git's index file (gitformat-index), read directly: the few facts the
// recorder needs about an index without starting Git (its version, a digest of
// its entries without their stat data, the root of its cache tree, whether
// paths have entries), and the copies of it the recorder makes. Only versions 2 and 3 are parsed; anything that does
// not parse answers null, and the caller then does what the spec says without
// the shortcut. Everything here is pure over bytes or touches only the files
// it is given.
import { closeSync, copyFileSync, existsSync, openSync, readFileSync, readSync, statSync, utimesSync, writeFileSync, type BigIntStats } from "node:fs";
import type { ObjectId } from "../../format/index.ts";

/**
 * Copy an index file keeping its timestamp (whole seconds, never later): a
 * newer copy would defeat Git's racy-entry check and miss a same-size edit.
 * The time is read before the content (or given with content already read),
 * so an index replaced meanwhile can only make the copy look older, never
 * newer. A missing `from` leaves `to` absent: Git starts an empty index there.
 */
export function copyIndexFile(from: string, to: string, known?: { bytes: Uint8Array; mtimeMs: number }): string {
  let mtimeMs: number;
  if (known) {
    writeFileSync(to, known.bytes);
    mtimeMs = known.mtimeMs;
  } else {
    if (!existsSync(from)) return to;
    mtimeMs = statSync(from).mtimeMs;
    copyFileSync(from, to);
  }
  const seconds = Math.floor(mtimeMs / 1000);
  utimesSync(to, seconds, seconds);
  return to;
}

/**
 * The real index a capture starts from: its stat data at once, its content and
 * entries digest only when asked (reading 10 MB costs more than the stat).
 */
/** Inode, size and times: Git replaces the index by a rename, so any write changes them. */
const identityOf = (st: BigIntStats): string => `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;

/** The index file's identity now (see identityOf); null when there is none. */
export function indexIdentity(path: string): string | null {
  try {
    return identityOf(statSync(path, { bigint: true }));
  } catch {
    return null;
  }
}

export class RealIndex {
  private content?: Uint8Array;
  private walked?: { digest: string; layout: IndexLayout } | null;
  private constructor(
    readonly path: string,
    private readonly hashLength: number,
    /** Its modification time, read before its content. */
    readonly mtimeMs: number,
    /** Inode, size and times: Git replaces the index by a rename, so any write changes this. */
    readonly identity: string,
  ) {}

  /** The real index, or null when there is none yet (a fresh repository). */
  static open(path: string, hashLength: number): RealIndex | null {
    let st;
    try {
      st = statSync(path, { bigint: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
    return new RealIndex(path, hashLength, Number(st.mtimeMs), identityOf(st));
  }

  get bytes(): Uint8Array {
    return (this.content ??= readFileSync(this.path));
  }

  /** Write the content to a private file with the index's timestamp (copyIndexFile). */
  copyTo(path: string): string {
    return copyIndexFile(this.path, path, { bytes: this.bytes, mtimeMs: this.mtimeMs });
  }

  /** entriesDigest() of the content. */
  get entries(): string | null {
    return this.parsed()?.digest ?? null;
  }

  /** cacheTreeRoot() of the content, from the same walk, when the entries have a digest. */
  get cacheTree(): ObjectId | null {
    const parsed = this.parsed();
    return parsed ? rootOf(parsed.layout, this.hashLength) : null;
  }

  private parsed(): { digest: string; layout: IndexLayout } | null {
    if (this.walked === undefined) this.walked = digestAndLayout(this.bytes, this.hashLength);
    return this.walked;
  }

  /** Whether each of `paths` has an entry (any stage), or null when the content does not parse (version 4). */
  has(paths: readonly Uint8Array[]): boolean[] | null {
    const key = (p: Uint8Array) => Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString("latin1");
    const wanted = new Set(paths.map(key));
    const lengths = new Set(paths.map((p) => p.length));
    const found = new Set<string>();
    const bytes = this.bytes;
    const version = bytes.length >= 8 ? new DataView(bytes.buffer, bytes.byteOffset).getUint32(4) : 0;
    const walked = walkEntries(bytes, this.hashLength, (at, flags) => {
      const nameAt = at + 40 + this.hashLength + 2 + (version === 3 && flags & 0x4000 ? 2 : 0);
      const nameLength = flags & 0x0fff;
      const length = nameLength < 0x0fff ? nameLength : bytes.indexOf(0, nameAt) - nameAt;
      if (lengths.has(length)) {
        const name = key(bytes.subarray(nameAt, nameAt + length));
        if (wanted.has(name)) found.add(name);
      }
      return true;
    });
    return walked === null ? null : paths.map((p) => found.has(key(p)));
  }
}

/** The version an index file's header names (gitformat-index), or null when it has none. */
export function indexVersion(path: string): number | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const header = Buffer.alloc(8);
    if (readSync(fd, header, 0, 8, 0) !== 8 || header.toString("latin1", 0, 4) !== "DIRC") return null;
    return header.readUInt32BE(4);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Walk the entries of a version 2 or 3 index (gitformat-index), calling
 * `visit` with each one's offset and flags; false from it stops the walk.
 * Returns the offset of the extensions, or null when the walk was stopped or
 * the bytes do not parse (another version among them: version 4 compresses
 * the names).
 */
function walkEntries(bytes: Uint8Array, hashLength: number, visit?: (at: number, flags: number) => boolean): number | null {
  const end = bytes.length - hashLength; // the trailing checksum
  if (end < 12 || new TextDecoder().decode(bytes.subarray(0, 4)) !== "DIRC") return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(4);
  if (version !== 2 && version !== 3) return null;
  const count = view.getUint32(8);
  let at = 12;
  const STAT = 40; // ctime, mtime, dev, ino, mode, uid, gid, size
  for (let i = 0; i < count; i++) {
    const flagsAt = at + STAT + hashLength;
    if (flagsAt + 2 > end) return null;
    const flags = view.getUint16(flagsAt);
    if (visit && !visit(at, flags)) return null;
    const nameAt = flagsAt + 2 + (version === 3 && flags & 0x4000 ? 2 : 0);
    const nameLength = flags & 0x0fff;
    const nameEnd = nameLength < 0x0fff ? nameAt + nameLength : bytes.indexOf(0, nameAt);
    if (nameEnd < 0 || nameEnd >= end || bytes[nameEnd] !== 0) return null;
    at += (nameEnd - at + 8) & ~7; // 1 to 8 NULs end each entry
  }
  return at;
}

/** The extensions of an index after its entries: signature and content, or null when they do not parse. */
function extensionsFrom(bytes: Uint8Array, hashLength: number, at: number): Map<string, Uint8Array> | null {
  const end = bytes.length - hashLength;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found = new Map<string, Uint8Array>();
  while (at + 8 <= end) {
    const size = view.getUint32(at + 4);
    if (at + 8 + size > end) return null;
    found.set(new TextDecoder().decode(bytes.subarray(at, at + 4)), bytes.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return at === end ? found : null;
}

/** What one walk over an index finds: how many entries, where they end, and its extensions. */
interface IndexLayout {
  count: number;
  entriesEnd: number;
  extensions: Map<string, Uint8Array>;
}

function layoutOf(bytes: Uint8Array, hashLength: number, visit?: (at: number, flags: number) => boolean): IndexLayout | null {
  const entriesEnd = walkEntries(bytes, hashLength, visit);
  const extensions = entriesEnd === null ? null : extensionsFrom(bytes, hashLength, entriesEnd);
  return extensions && { count: new DataView(bytes.buffer, bytes.byteOffset).getUint32(8), entriesEnd: entriesEnd!, extensions };
}

/**
 * A digest of a version 2 index's entries without their stat data: equal
 * digests mean the same paths, modes, object ids and flags, so `git status`
 * refreshing stat data does not count as a change. Null for anything else
 * (another version, a split index, assume-unchanged entries, a file that does
 * not parse as gitformat-index describes): such an index is never reused. So
 * with a digest, every entry's flags are zero, and its index tree says all.
 * Also returns the layout the walk found.
 */
function digestAndLayout(bytes: Uint8Array, hashLength: number): { digest: string; layout: IndexLayout } | null {
  // Version 2 has no extended flags: no intent-to-add or skip-worktree entries.
  if (bytes.length < 12 || new DataView(bytes.buffer, bytes.byteOffset).getUint32(4) !== 2) return null;
  // A copy with the stat data zeroed (all but the mode), hashed in one call.
  const masked = new Uint8Array(bytes); // a copy: Buffer#slice would share the bytes
  const layout = layoutOf(bytes, hashLength, (at, flags) => {
    // Extended flags cannot be in version 2; assume-unchanged entries are never reused around.
    if (flags & 0xc000) return false;
    masked.fill(0, at, at + 24);
    masked.fill(0, at + 28, at + 40); // the mode, at 24, stays
    return true;
  });
  // Extensions: cache tree and the like change nothing add -A does, but a
  // split index keeps its entries in another file.
  if (!layout || layout.extensions.has("link") || layout.extensions.has("sdir")) return null;
  const entries = masked.subarray(12, layout.entriesEnd);
  const digest = `${layout.count}:${entries.length}:${Bun.hash(entries).toString(16)}:${Bun.hash.xxHash64(entries).toString(16)}`;
  return { digest, layout };
}

export const entriesDigest = (bytes: Uint8Array, hashLength: number): string | null => digestAndLayout(bytes, hashLength)?.digest ?? null;

/**
 * The tree `git write-tree` would give for a version 2 or 3 index without
 * writing anything, when its cache tree (the TREE extension) is valid at the
 * root: Git then answers from it too. Null when the root is invalid (Git
 * drops it at every change of entries; `git commit` leaves it whole) or the
 * bytes do not parse.
 */
export function cacheTreeRoot(bytes: Uint8Array, hashLength: number): ObjectId | null {
  const layout = layoutOf(bytes, hashLength);
  return layout && rootOf(layout, hashLength);
}

function rootOf(layout: IndexLayout, hashLength: number): ObjectId | null {
  const tree = layout.extensions.get("TREE");
  // The root entry: an empty path, NUL, "<entries> <subtrees>\n", then its id.
  if (!tree || tree[0] !== 0) return null;
  const lineEnd = tree.indexOf(0x0a, 1);
  if (lineEnd < 0 || lineEnd + 1 + hashLength > tree.length) return null;
  const covered = Number(new TextDecoder().decode(tree.subarray(1, lineEnd)).split(" ")[0]);
  if (covered !== layout.count) return null; // -1: invalid
  return Buffer.from(tree.subarray(lineEnd + 1, lineEnd + 1 + hashLength)).toString("hex");
}
