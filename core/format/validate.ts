// Snapshots are untrusted input: they are refs, and refs travel (fetch, clone,
// push --mirror), so anyone may have written one. Every reader checks a
// snapshot here before using it, and an invalid one is refused as a whole with
// one line naming the first problem. The checks are the format's, and they are
// what stands between a snapshot's bytes and Git's plumbing: a name that is not
// a ref under refs/ could make update-ref write `.git/commondir` or `MERGE_HEAD`,
// a NUL would split an -z transaction, a path with a `.git` component would
// reach update-index. Pure functions: no Git here (core/snapshots/read-state.ts reads the
// objects and calls them).
import { UndoError } from "../errors.ts";
import type { ObjectId, StateTree } from "./index.ts";
import { nulRecords } from "../bytes.ts";
import { escapeControls } from "../text.ts";
import { MODE } from "../mode.ts";

/** A reader's refusal of a snapshot: `<label> is not a valid snapshot: <problem>`. */
export class SnapshotRefused extends UndoError {
  constructor(
    label: string,
    readonly problem: string,
  ) {
    super(`${label} is not a valid snapshot: ${problem}`, "fatal");
  }
}

/** What is wrong with a snapshot, as one line. */
export class InvalidSnapshot extends Error {
  constructor(readonly problem: string) {
    super(problem);
    this.name = "InvalidSnapshot";
  }
}

const invalid = (problem: string): never => {
  throw new InvalidSnapshot(problem);
};

/**
 * What `git check-ref-format` accepts (its rules 1 to 10, for a full name with
 * at least two components): no component empty, starting with a dot or ending
 * in `.lock`; no `..`, `@{`, control characters, space, `~ ^ : ? * [ \`; not
 * ending in `/` or `.`. Bytes that are not UTF-8 are allowed, as Git allows them.
 */
export function isValidRefName(name: string): boolean {
  if (name === "@" || name.endsWith(".") || name.includes("..") || name.includes("@{")) return false;
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return false;
  const parts = name.split("/");
  if (parts.length < 2) return false;
  return parts.every((c) => c !== "" && !c.startsWith(".") && !c.endsWith(".lock"));
}

/** A ref a snapshot may name: valid, under refs/, and not one of git-undo's own. */
export const isRestorableRef = (name: string): boolean => name.startsWith("refs/") && !name.startsWith("refs/undo/") && isValidRefName(name);

/** A full object id of the repository's hash (`hexLength` 40 or 64), lowercase hex. */
export const isObjectId = (s: string, hexLength: number): boolean => s.length === hexLength && /^[0-9a-f]+$/.test(s);

const OBJECT_TYPES = new Set(["commit", "tree", "blob", "tag"]);

/** Escape what a terminal would act on, for a value quoted in a problem line. */
const q = (s: string): string => `'${escapeControls(s)}'`;

// ---------------------------------------------------------------- trailers

// ---------------------------------------------------------------- state blobs

/** The `HEAD` blob: `ref: refs/heads/<name>\n` or `<commit id>\n`. */
export function checkHead(blob: string, hexLength: number): void {
  if (!blob.endsWith("\n") || blob.indexOf("\n") !== blob.length - 1) invalid(`its HEAD entry is not one line`);
  const line = blob.slice(0, -1);
  if (line.startsWith("ref: ")) {
    const target = line.slice(5);
    if (!target.startsWith("refs/heads/") || !isValidRefName(target)) invalid(`its HEAD names ${q(target)}, not a branch`);
  } else if (!isObjectId(line, hexLength)) invalid(`its HEAD is neither a branch nor a commit id: ${q(line)}`);
}

/** Lines of a blob that must end with a newline (an empty blob has none). */
function linesOf(blob: string, what: string): string[] {
  if (blob === "") return [];
  if (!blob.endsWith("\n")) invalid(`its ${what} entry does not end with a newline`);
  const lines = blob.slice(0, -1).split("\n");
  if (lines.some((l) => l === "")) invalid(`its ${what} entry has an empty line`);
  return lines;
}

/**
 * The `refs` blob: six tab-separated fields a line; each name valid, under
 * refs/, outside refs/undo/, and once; ids full ids of this repository's
 * hash; types the four object types; a symbolic target valid and under refs/;
 * a peeled object only for a tag.
 */
export function checkRefs(blob: string, hexLength: number): void {
  const seen = new Set<string>();
  for (const line of linesOf(blob, "refs")) {
    const f = line.split("\t");
    if (f.length !== 6) invalid(`a line of its refs entry has ${f.length} fields, not 6: ${q(line)}`);
    const [name, object, type, target, peeled, peeledType] = f as [string, string, string, string, string, string];
    if (!isRestorableRef(name)) invalid(`its refs entry names ${q(name)}, which is not a ref git-undo may restore`);
    if (seen.has(name)) invalid(`its refs entry names ${q(name)} twice`);
    seen.add(name);
    if (target !== "" && !isRestorableRef(target)) invalid(`${q(name)} is a symbolic ref to ${q(target)}, which is not a ref under refs/`);
    if (object === "" && type === "") {
      if (target === "") invalid(`${q(name)} has no object and is not a symbolic ref`);
    } else {
      if (!isObjectId(object, hexLength)) invalid(`${q(name)} points at ${q(object)}, not an object id`);
      if (!OBJECT_TYPES.has(type)) invalid(`${q(name)} has an unknown object type ${q(type)}`);
    }
    if (peeled !== "" || peeledType !== "") {
      if (type !== "tag") invalid(`${q(name)} has a peeled object but is not a tag`);
      if (!isObjectId(peeled, hexLength) || !OBJECT_TYPES.has(peeledType) || peeledType === "tag") {
        invalid(`${q(name)} has a bad peeled object ${q(`${peeled} ${peeledType}`)}`);
      }
    }
  }
}

/** The `stash` blob: `<commit id>\t<message>\n` a line. */
export function checkStash(blob: string, hexLength: number): void {
  for (const line of linesOf(blob, "stash")) {
    const tab = line.indexOf("\t");
    if (tab < 0 || !isObjectId(line.slice(0, tab), hexLength)) invalid(`a line of its stash entry is not '<commit>\\t<message>': ${q(line)}`);
  }
}

/** The `state` blob: known marker names, one a line. */
export function checkMarkers(blob: string, known: readonly string[]): void {
  for (const line of linesOf(blob, "state")) {
    if (!known.includes(line)) invalid(`its state entry names an unknown operation ${q(line)}`);
  }
}

/**
 * A path Git would accept into an index: relative, no empty, `.` or `..`
 * component, and no `.git` component in any letter case. Bytes, as Git has them.
 * The names Git's own NTFS rules (core.protectNTFS, on by default everywhere)
 * take for `.git` count too: `git~1`, `.git ` or `.git.` with trailing spaces
 * and dots, `.git::$INDEX_ALLOCATION`, with `\` as a separator as well.
 */
export function isSafePath(raw: Uint8Array): boolean {
  if (raw.length === 0) return false;
  const s = Buffer.from(raw).toString("latin1");
  if (s.includes("\0")) return false;
  if (!s.split("/").every((c) => c !== "" && c !== "." && c !== "..")) return false;
  return !s.split(/[/\\]/).some((c) => /^(\.git|git~1)[. ]*(:.*)?$/i.test(c));
}

const printable = (raw: Uint8Array): string => escapeControls(Buffer.from(raw).toString("utf8"));

const INDEX_MODES = new Set<string>([MODE.file, MODE.executable, MODE.symlink, MODE.gitlink]);

/** `index-unmerged`: `<mode> <id> <stage>\t<path>\0` records, stages 1 to 3, modes Git uses, safe paths. */
export function checkUnmerged(blob: Uint8Array, hexLength: number): void {
  if (blob.length === 0) invalid("its index-unmerged entry is empty");
  if (blob[blob.length - 1] !== 0) invalid("its index-unmerged entry does not end with a NUL");
  const seen = new Set<string>();
  for (const rec of nulRecords(blob)) {
    const tab = rec.indexOf(9);
    if (tab < 0) invalid("a record of its index-unmerged entry has no path");
    const head = Buffer.from(rec.subarray(0, tab)).toString("latin1");
    const path = rec.subarray(tab + 1);
    const m = /^([0-9]{6}) ([0-9a-f]+) ([0-9])$/.exec(head);
    if (!m || !INDEX_MODES.has(m[1]!) || !isObjectId(m[2]!, hexLength) || !["1", "2", "3"].includes(m[3]!)) {
      invalid(`a record of its index-unmerged entry is not '<mode> <id> <stage>': ${q(head)}`);
    }
    if (!isSafePath(path)) invalid(`its index-unmerged entry names a path Git would not accept: ${q(printable(path))}`);
    const key = `${m![3]}:${Buffer.from(path).toString("latin1")}`;
    if (seen.has(key)) invalid(`its index-unmerged entry has ${q(printable(path))} twice at stage ${m![3]}`);
    seen.add(key);
  }
}

// ---------------------------------------------------------------- trees

export interface RawTreeEntry {
  mode: string;
  name: string;
  oid: ObjectId;
}

/** A tree object's raw content: `<mode> <name>\0<binary id>` entries. */
export function parseRawTree(content: Uint8Array, hashBytes: number): RawTreeEntry[] {
  const out: RawTreeEntry[] = [];
  let pos = 0;
  while (pos < content.length) {
    const sp = content.indexOf(0x20, pos);
    const nul = content.indexOf(0, sp + 1);
    if (sp < 0 || nul < 0 || nul + 1 + hashBytes > content.length) invalid("one of its trees cannot be read");
    out.push({
      mode: Buffer.from(content.subarray(pos, sp)).toString("latin1"),
      name: Buffer.from(content.subarray(sp + 1, nul)).toString("latin1"),
      oid: Buffer.from(content.subarray(nul + 1, nul + 1 + hashBytes)).toString("hex"),
    });
    pos = nul + 1 + hashBytes;
  }
  return out;
}

/** `index-blobs`: blobs only, each named by its own id. */
export function checkIndexBlobs(entries: readonly RawTreeEntry[]): void {
  for (const e of entries) {
    if (e.mode !== MODE.file || e.name !== e.oid) invalid(`its index-blobs entry holds ${q(e.name)}, not a blob named by its id`);
  }
}

/**
 * `keep`: `<tag id>.tag` blobs, and trees and blobs named by their own ids.
 * That a `.tag` blob really is the tag its name says is checked when it is
 * written back (core/snapshots/keep-entry.ts), the one time its content is read.
 */
export function checkKeep(entries: readonly RawTreeEntry[], hexLength: number): void {
  for (const e of entries) {
    if (e.name.endsWith(".tag")) {
      if (e.mode !== MODE.file || !isObjectId(e.name.slice(0, -4), hexLength)) invalid(`its keep entry holds ${q(e.name)}, not a tag's blob`);
    } else if (!isObjectId(e.name, hexLength) || e.name !== e.oid || (e.mode !== MODE.file && e.mode !== "40000")) {
      invalid(`its keep entry holds ${q(e.name)}, not an object named by its id`);
    }
  }
}

/** The entries of a state tree and the object type each must have. */
export const STATE_ENTRY_TYPES: Readonly<Record<string, "blob" | "tree">> = {
  HEAD: "blob",
  refs: "blob",
  stash: "blob",
  state: "blob",
  "index-unmerged": "blob",
  index: "tree",
  "index-blobs": "tree",
  worktree: "tree",
  keep: "tree",
};

/** Conflicts come with their blobs, and their blobs with conflicts. */
export function checkConsistent(state: StateTree): void {
  if (state.indexUnmerged && state.indexBlobs === undefined) invalid("it has index-unmerged without index-blobs");
  if (state.indexUnmerged && state.index === undefined) invalid("it has index-unmerged without an index");
}

/** Run a check, turning its failure into the snapshot's one-line problem. */
export function problemOf(check: () => void): string | null {
  try {
    check();
    return null;
  } catch (e) {
    if (e instanceof InvalidSnapshot) return e.problem;
    throw e;
  }
}

export { invalid };
