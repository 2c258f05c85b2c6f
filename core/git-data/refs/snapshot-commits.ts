// The commits the snapshot refs point at: tree, committer date and message,
// which every reader of the history needs. Reading them from Git means
// inflating every snapshot commit on every command, a cost that grows with
// the history (5,000 loose commits: over 100 ms). A commit's id names its
// content for ever, so what was read once is kept in
// <gitdir>/undo/snapshot-commits, and only commits not seen before are read,
// in one cat-file. The file is this module's alone; deleting it costs one
// full read.
//
// One line per commit, a JSON array [commit, ref, tree, date, message]:
// commits read later are appended (one write of a few hundred bytes, whatever
// the history's length), and the file is written anew only when more of its
// lines name snapshots that are gone than name listed ones.
import { mkdirSync } from "node:fs";
import { fromFileEnd } from "../../file-tail.ts";
import { type ObjectId } from "../../format/index.ts";
import { decodeBytes } from "../../bytes.ts";
import { appendToFile, replaceFile } from "../../files.ts";
import { readObjects } from "../objects.ts";
import type { Repo } from "../../repo.ts";
import { undoFile } from "../../undo-files.ts";

/** A ref under refs/undo/ with what its commit says (the input every history reader decodes). */
export interface SnapshotRef {
  ref: string;
  commit: ObjectId;
  tree: ObjectId;
  /** The committer date, seconds since the epoch (0 when the commit has none Git can read). */
  date: number;
  message: string;
}

/** A snapshot ref as for-each-ref lists it, before its commit is read. */
export interface ListedRef {
  ref: string;
  commit: ObjectId;
}

/** Messages longer than this are read from Git each time rather than kept (a crafted snapshot must not bloat the file). */
const MAX_KEPT_MESSAGE = 8192;

type KeptLine = [commit: ObjectId, ref: string, tree: ObjectId, date: number, message: string];

/**
 * The commits of `listed` (all under `prefix`), in the same order; a ref
 * whose object is no commit (a stray) is left out, as for-each-ref's
 * `%(objecttype)` check left it out before.
 */
export async function snapshotCommits(repo: Repo, listed: readonly ListedRef[], prefix: string, opts: { partial?: boolean } = {}): Promise<SnapshotRef[]> {
  const file = undoFile(repo.undoDir, "snapshotCommits");
  // A partial listing (list -n) parses only its own lines, and cannot tell which kept ones are gone.
  const kept = readKept(file, opts.partial ? new Set(listed.map((l) => l.commit)) : null);
  const missing = [...new Set(listed.filter((l) => !kept.has(l.commit)).map((l) => l.commit))];
  const read = new Map<ObjectId, Omit<SnapshotRef, "ref" | "commit"> | null>();
  if (missing.length) {
    const objects = await readObjects(repo, missing);
    missing.forEach((id, i) => {
      const o = objects[i];
      read.set(id, o && o.type === "commit" ? parseCommit(o.content) : null);
    });
  }
  const out: SnapshotRef[] = [];
  const added: SnapshotRef[] = [];
  for (const l of listed) {
    const k = kept.get(l.commit);
    if (k) {
      out.push({ ref: l.ref, commit: l.commit, tree: k[2], date: k[3], message: k[4] });
      continue;
    }
    const c = read.get(l.commit);
    if (!c) continue;
    const s = { ref: l.ref, commit: l.commit, ...c };
    out.push(s);
    added.push(s);
  }
  const listedIds = new Set(listed.map((l) => l.commit));
  let gone = 0;
  if (!opts.partial) for (const k of kept.values()) if (k[1].startsWith(prefix) && !listedIds.has(k[0])) gone++;
  if (gone > kept.size - gone + 64) {
    const live = [...kept.values()].filter((k) => !k[1].startsWith(prefix) || listedIds.has(k[0]));
    try {
      replaceFile(file, [...live.map(line), ...keptLines(added)].join(""));
    } catch {
      /* read from Git again next time */
    }
  } else {
    appendKept(repo, added);
  }
  return out;
}

/** A snapshot commit this process wrote, kept so that no reader has to read it back. */
export const rememberCommit = (repo: Repo, c: SnapshotRef): void => appendKept(repo, [c]);

const line = (k: KeptLine): string => `${JSON.stringify(k)}\n`;

/** The lines of the commits worth keeping. */
const keptLines = (commits: readonly SnapshotRef[]): string[] =>
  commits.filter((c) => c.message.length <= MAX_KEPT_MESSAGE).map((c) => line([c.commit, c.ref, c.tree, c.date, c.message]));

/** Append commits to the file, creating the undo folder if it is not there yet (a first `list`). */
function appendKept(repo: Repo, commits: readonly SnapshotRef[]): void {
  const lines = keptLines(commits);
  if (!lines.length) return;
  try {
    mkdirSync(repo.undoDir, { recursive: true });
    appendToFile(undoFile(repo.undoDir, "snapshotCommits"), lines.join(""));
  } catch {
    /* read from Git again next time */
  }
}

/**
 * What for-each-ref's %(tree), %(committerdate:unix) and %(contents) give for
 * a commit (ref-filter.c): the first tree and committer headers, and the
 * message after the headers with its leading empty lines skipped.
 */
export function parseCommit(content: Uint8Array): Omit<SnapshotRef, "ref" | "commit"> {
  const text = decodeBytes(content);
  const end = text.startsWith("\n") ? 0 : text.indexOf("\n\n");
  const headers = end < 0 ? text : text.slice(0, end);
  const message = end < 0 ? "" : text.slice(end).replace(/^\n+/, "");
  let tree: string | undefined;
  let committer: string | undefined;
  for (const line of headers.split("\n")) {
    if (tree === undefined && line.startsWith("tree ")) tree = line.slice(5);
    else if (committer === undefined && line.startsWith("committer ")) committer = line;
  }
  const date = committer === undefined ? null : /> (\d+) [+-]\d{4}$/.exec(committer);
  return { tree: tree ?? "", date: date ? Number(date[1]) : 0, message };
}

/**
 * The kept lines by commit; a line that is not exactly the shape written
 * (torn, edited) is skipped. With `only`, the lines of other commits are not
 * parsed (each starts `["<commit>"`), and the file is read from its end, where
 * the newest commits were appended, until all of them are found.
 */
function readKept(file: string, only: ReadonlySet<ObjectId> | null): Map<ObjectId, KeptLine> {
  try {
    const found = fromFileEnd(file, only ? 64 * 1024 : Infinity, (piece, whole) => {
      const kept = new Map<ObjectId, KeptLine>();
      parseKept(piece.toString("utf8"), only, kept);
      return whole || (only && kept.size === only.size) ? kept : undefined;
    }, { noFollow: true });
    return found ?? new Map();
  } catch {
    return new Map();
  }
}

function parseKept(text: string, only: ReadonlySet<ObjectId> | null, kept: Map<ObjectId, KeptLine>): void {
  for (const l of text.split("\n")) {
    if (!l) continue;
    if (only && !only.has(l.slice(2, l.indexOf('"', 2)))) continue;
    let k: unknown;
    try {
      k = JSON.parse(l);
    } catch {
      continue;
    }
    if (
      Array.isArray(k) && k.length === 5 &&
      typeof k[0] === "string" && typeof k[1] === "string" && typeof k[2] === "string" && typeof k[3] === "number" && typeof k[4] === "string"
    ) kept.set(k[0], k as KeptLine);
  }
}
