// Snapshot format v1 in code: the commit message and its trailers, the blobs of
// the state tree, and the grouping of kept commits. Pure functions: no Git here.
import { MODE } from "../mode.ts";
import { fatal } from "../errors.ts";
import { DECIMAL, escapeControls } from "../text.ts";
import { encodeBytes, hasEscapedBytes, nulRecords } from "../bytes.ts";

export const FORMAT_VERSION = 1;
export const PLACEHOLDER_NAME = "git-undo";
export const PLACEHOLDER_EMAIL = "git-undo@localhost";
/** Keep commits carry a fixed date so identical groups hash identically. */
export const KEEP_DATE = "1000000000 +0000";
export const KEEP_MESSAGE = "git-undo keep\n";
/** No commit written by git-undo has more parents than this. */
export const MAX_PARENTS = 64;

export type ObjectId = string;
export type SnapshotKind = "change" | "manual" | "restore";
export const SNAPSHOT_KINDS: readonly SnapshotKind[] = ["change", "manual", "restore"];

/** In-progress markers in the order the `state` blob lists them. */
export const OPERATION_MARKERS = [
  "rebase-merge",
  "rebase-apply",
  "MERGE_HEAD",
  "CHERRY_PICK_HEAD",
  "REVERT_HEAD",
  "BISECT_LOG",
  "sequencer",
] as const;
export type OperationMarker = (typeof OPERATION_MARKERS)[number];

/** One line of the `refs` blob. Empty strings stand for fields that do not apply. */
/** One line of the refs entry. A field the line leaves empty is null here. */
export interface RefLine {
  name: string;
  /** The object it points at; null only for a symbolic ref whose target does not exist. */
  object: ObjectId | null;
  type: string | null;
  /** The ref a symbolic ref names; null for a plain ref. */
  symrefTarget: string | null;
  /** For a tag: the object it peels to (never a tag), and that object's type. */
  peeledObject: ObjectId | null;
  peeledType: string | null;
}

export type HeadState = { kind: "symbolic"; target: string } | { kind: "detached"; commit: ObjectId };

/** One reflog entry: the commit it moved to, and its message. */
export interface ReflogEntry {
  commit: ObjectId;
  message: string;
}

/**
 * HEAD's newest reflog entry with what tells whether it describes a change:
 * the commit HEAD left (null when unknown) and when, in seconds (null when unknown).
 */
export interface HeadReflogEntry extends ReflogEntry {
  old: ObjectId | null;
  time: number | null;
}

/** A stash entry is its reflog entry in refs/stash's log. */
export type StashEntry = ReflogEntry;

/** The value of an `Undo-Reflog` trailer: `<commit> <message>`. */
export const reflogTrailer = (e: ReflogEntry): string => `${e.commit} ${e.message}`;

/** The decoded content of a snapshot's tree. */
export interface StateTree {
  head: HeadState;
  refs: RefLine[];
  stash: StashEntry[];
  state: OperationMarker[];
  /** Tree of the index without unmerged paths; absent in bare repositories. */
  index?: ObjectId;
  /** Raw `git ls-files -z --unmerged` output; absent when there are no conflicts. */
  indexUnmerged?: Uint8Array;
  indexBlobs?: ObjectId;
  /** Tree of the working tree; absent in bare repositories and with undo.worktree=false. */
  worktree?: ObjectId;
  /**
   * The `keep` extension: a tree holding the tag objects (as `<id>.tag` blobs of
   * their raw content), trees and blobs that the refs name, so git gc keeps them.
   * Absent when the refs name none.
   */
  keep?: ObjectId;
}

export interface Trailers {
  format: number;
  kind: SnapshotKind;
  head: string;
  restored?: number;
  from?: number;
  reflog?: string;
}

export interface SnapshotMessage {
  summary: string;
  trailers: Trailers;
}

/** A snapshot as listed: its ref, commit, tree and message. */
export interface Snapshot extends SnapshotMessage {
  number: number;
  ref: string;
  commit: ObjectId;
  tree: ObjectId;
  /** Committer date, seconds since the epoch. */
  date: number;
  /** Not recorded by this repository (fetched from elsewhere): never a target of plain undo or redo, never counted or deleted by undo.limit or gc. */
  foreign?: true;
}

/** A snapshot ref whose commit this version cannot read (a newer format, or damage). */
export interface UnreadableSnapshot {
  number: number;
  ref: string;
  commit: ObjectId;
  tree: ObjectId;
  date: number;
  reason: string;
  /** As Snapshot's. */
  foreign?: true;
}

export type SnapshotEntry = Snapshot | UnreadableSnapshot;
export const isReadable = (s: SnapshotEntry): s is Snapshot => !("reason" in s);

  /**
 * What a string reads as once commit-tree has stored it: Git keeps a UTF-8
 * commit message valid by taking each non-UTF-8 byte as Latin-1 (its
 * verify_utf8), so trailers read back from a snapshot compare with this.
 */
export const commitText = (s: string): string =>
  hasEscapedBytes(s) ? s.replace(/[\uDC80-\uDCFF]/gu, (c) => String.fromCharCode(c.charCodeAt(0) - 0xdc00)) : s;

// ---------------------------------------------------------------- ref names

const SEQ_WIDTH = 10;
export const snapshotRef = (prefix: string, n: number): string => prefix + String(n).padStart(SEQ_WIDTH, "0");

/** The highest number a snapshot ref can carry. */
export const MAX_SNAPSHOT_NUMBER = 10 ** SEQ_WIDTH - 1;

/**
 * The number of a snapshot ref under `prefix`, or null when the name is not
 * exactly a snapshot's: the prefix and ten ASCII digits. Anything else there
 * (more digits, fewer, a suffix) is not a snapshot, so that no name can stand
 * for a number another snapshot has, or for one past exact integers.
 */
export function snapshotNumber(prefix: string, ref: string): number | null {
  if (!ref.startsWith(prefix)) return null;
  const seq = ref.slice(prefix.length);
  return /^[0-9]{10}$/.test(seq) ? Number(seq) : null;
}

// ---------------------------------------------------------------- message

/** Fold a summary into one line: newlines and tabs become spaces, ends trimmed. */
// Each newline (CRLF counts as one) and each tab becomes one space.
export const foldSummary = (s: string): string => s.replace(/\r\n|[\r\n\t]/g, " ").trim();

export function encodeMessage(m: SnapshotMessage): string {
  const t = m.trailers;
  const lines = [`Undo-Format: ${t.format}`, `Undo-Kind: ${t.kind}`, `Undo-Head: ${t.head}`];
  if (t.restored !== undefined) lines.push(`Undo-Restored: ${t.restored}`);
  if (t.from !== undefined) lines.push(`Undo-From: ${t.from}`);
  if (t.reflog !== undefined) lines.push(`Undo-Reflog: ${t.reflog}`);
  return `${foldSummary(m.summary)}\n\n${lines.join("\n")}\n`;
}

/** Parse `Key: value` trailer lines into a map (the last paragraph of a message). */
export function parseTrailerLines(block: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of block.split("\n")) {
    const m = /^([A-Za-z0-9-]+):\s?(.*)$/.exec(line);
    if (m) map.set(m[1]!, m[2]!);
  }
  return map;
}

/**
 * Decode trailers. Throws when the snapshot is of a format this version does not
 * know, or lacks the trailers every snapshot has; `label` names it in the error.
 */
export function decodeTrailers(map: Map<string, string>, label: string): Trailers {
  const formatText = map.get("Undo-Format");
  if (formatText === undefined) throw fatal(`${label} is not a git-undo snapshot (no Undo-Format)`);
  if (!/^[1-9][0-9]*$/.test(formatText)) throw fatal(`${label} has a bad Undo-Format '${escapeControls(formatText)}'`);
  if (formatText !== String(FORMAT_VERSION)) {
    throw fatal(`${label} uses snapshot format ${formatText.slice(0, 12)}; this git-undo reads format ${FORMAT_VERSION} (upgrade git-undo)`);
  }
  const format = FORMAT_VERSION;
  const kind = map.get("Undo-Kind") as SnapshotKind | undefined;
  if (!kind || !SNAPSHOT_KINDS.includes(kind)) throw fatal(`${label} has an unknown Undo-Kind '${escapeControls(kind ?? "")}'`);
  const t: Trailers = { format, kind, head: map.get("Undo-Head") ?? "detached" };
  const num = (key: string): number | undefined => {
    const v = map.get(key);
    if (v === undefined) return undefined;
    if (!DECIMAL.test(v)) throw fatal(`${label} has a bad ${key} '${escapeControls(v)}'`);
    return Number(v);
  };
  const restored = num("Undo-Restored");
  const from = num("Undo-From");
  if (restored !== undefined) t.restored = restored;
  if (from !== undefined) t.from = from;
  if (kind === "restore" && restored === undefined) throw fatal(`${label} is a restore snapshot without Undo-Restored`);
  const reflog = map.get("Undo-Reflog");
  if (reflog !== undefined) t.reflog = reflog;
  return t;
}

export function decodeMessage(message: string, label: string): SnapshotMessage {
  const summary = message.split("\n", 1)[0] ?? "";
  const paragraphs = message.trimEnd().split(/\n\n+/);
  const trailers = decodeTrailers(parseTrailerLines(paragraphs[paragraphs.length - 1] ?? ""), label);
  return { summary, trailers };
}

/** `Undo-Head`: the branch HEAD is on (without refs/heads/), or `detached`. */
export function headTrailer(head: HeadState): string {
  if (head.kind === "detached") return "detached";
  return branchName(head.target);
}

const REF_KINDS = [
  ["refs/heads/", "branch"],
  ["refs/tags/", "tag"],
  ["refs/remotes/", "remote branch"],
] as const;

/** A ref's kind and its name within that kind (`refs/tags/v1`: tag, v1); other refs keep their full name. */
export function refParts(name: string): { kind: (typeof REF_KINDS)[number][1] | null; short: string } {
  for (const [prefix, kind] of REF_KINDS) if (name.startsWith(prefix)) return { kind, short: name.slice(prefix.length) };
  return { kind: null, short: name };
}

/** A branch without refs/heads/; any other ref as it is. */
export const branchName = (name: string): string => (name.startsWith("refs/heads/") ? name.slice("refs/heads/".length) : name);

// ---------------------------------------------------------------- blobs

export function encodeHead(head: HeadState): string {
  return head.kind === "symbolic" ? `ref: ${head.target}\n` : `${head.commit}\n`;
}

export function decodeHead(blob: string): HeadState {
  const line = blob.replace(/\n$/, "");
  if (line.startsWith("ref: ")) return { kind: "symbolic", target: line.slice(5) };
  return { kind: "detached", commit: line };
}

/** Byte order, as Git sorts ref names. */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(encodeBytes(a), encodeBytes(b));
}

export function encodeRefs(refs: readonly RefLine[]): string {
  return [...refs]
    .sort((a, b) => compareBytes(a.name, b.name))
    .map((r) => `${r.name}\t${r.object ?? ""}\t${r.type ?? ""}\t${r.symrefTarget ?? ""}\t${r.peeledObject ?? ""}\t${r.peeledType ?? ""}\n`)
    .join("");
}

export function decodeRefs(blob: string): RefLine[] {
  const out: RefLine[] = [];
  for (const line of blob.split("\n")) {
    if (!line) continue;
    const [name = "", object, type, symrefTarget, peeledObject, peeledType] = line.split("\t");
    out.push({ name, object: object || null, type: type || null, symrefTarget: symrefTarget || null, peeledObject: peeledObject || null, peeledType: peeledType || null });
  }
  return out;
}

export function encodeStash(stash: readonly StashEntry[]): string {
  return stash.map((s) => `${s.commit}\t${s.message}\n`).join("");
}

export function decodeStash(blob: string): StashEntry[] {
  return blob
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf("\t");
      return tab < 0 ? { commit: line, message: "" } : { commit: line.slice(0, tab), message: line.slice(tab + 1) };
    });
}

export function encodeState(markers: readonly OperationMarker[]): string {
  return OPERATION_MARKERS.filter((m) => markers.includes(m))
    .map((m) => `${m}\n`)
    .join("");
}

export function decodeState(blob: string): OperationMarker[] {
  const lines = blob.split("\n").filter(Boolean);
  return OPERATION_MARKERS.filter((m) => lines.includes(m));
}

/** A path's bytes as a map key (one char per byte, so any bytes compare exactly). */
export const pathKey = (raw: Uint8Array): string => Buffer.from(raw).toString("latin1");

/** One entry of `git ls-files -z --unmerged`: `<mode> <object> <stage>\t<path>`. */
export interface UnmergedEntry {
  mode: string;
  object: ObjectId;
  stage: number;
  /** The path's bytes, exactly as Git printed them. */
  path: Uint8Array;
}

export function decodeUnmerged(blob: Uint8Array): UnmergedEntry[] {
  const out: UnmergedEntry[] = [];
  for (const rec of nulRecords(blob)) {
    const tab = rec.indexOf(9);
    if (tab < 0) continue;
    const [mode = "", object = "", stage = "0"] = new TextDecoder().decode(rec.subarray(0, tab)).split(" ");
    out.push({ mode, object, stage: Number(stage), path: rec.slice(tab + 1) });
  }
  return out;
}

/** The blobs `index-blobs` keeps alive: unique blob ids of the unmerged entries (gitlinks are not blobs). */
export function unmergedBlobIds(entries: readonly UnmergedEntry[]): ObjectId[] {
  return [...new Set(entries.filter((e) => e.mode !== MODE.gitlink).map((e) => e.object))].sort();
}

// ---------------------------------------------------------------- keep commits

/**
 * The commits a snapshot keeps alive: unique commit ids among each ref's object
 * (or peeled object) when it is a commit, every stash entry, and a detached HEAD.
 * Sorted by hex id.
 */
export function commitsToKeep(state: Pick<StateTree, "refs" | "stash" | "head">): ObjectId[] {
  const keep = new Set<ObjectId>();
  for (const r of state.refs) {
    if (r.type === "commit" && r.object) keep.add(r.object);
    else if (r.peeledType === "commit" && r.peeledObject) keep.add(r.peeledObject);
  }
  for (const s of state.stash) keep.add(s.commit);
  if (state.head.kind === "detached" && state.head.commit) keep.add(state.head.commit);
  return [...keep].sort();
}

/** Cut a sorted id list into runs of at most MAX_PARENTS. */
export function groupsOf(ids: readonly ObjectId[]): ObjectId[][] {
  const groups: ObjectId[][] = [];
  for (let i = 0; i < ids.length; i += MAX_PARENTS) groups.push(ids.slice(i, i + MAX_PARENTS));
  return groups;
}
