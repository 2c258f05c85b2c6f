// The ref storage behind one interface: everything a snapshot records of it
// (every ref with its type and peeled object, this worktree's snapshot refs,
// HEAD, HEAD's newest reflog entry, the stash list and the operation markers)
// read together, by one backend per storage. The files backend reads the
// plain files Git keeps (HEAD, the markers, the reflogs, loose symbolic
// refs), which is both safe (Git replaces them by a rename) and measurably
// faster than a Git process each; the reftable backend, which has no such
// files, asks Git for all of it in one wave of processes.
import { join } from "node:path";
import { fromFileEnd } from "../../file-tail.ts";
import { compareBytes, type HeadState, type HeadReflogEntry, type OperationMarker, type ReflogEntry, type RefLine, type StashEntry } from "../../format/index.ts";
import { decodeBytes } from "../../bytes.ts";
import { readFileSync } from "node:fs";
import { text, type GitResult } from "../../git.ts";
import { markerFiles, markersWith, REF_MARKER_QUERY } from "../operation.ts";
import { listRefs, looseSymrefs, scanUndoRefs, type RefScan, type SnapshotRef, type UnreadableRef } from "./index.ts";
import type { Repo } from "../../repo.ts";

/** The ref storage's part of a state: the refs and the snapshot refs, with what the files storage keeps as files. */
export interface RefState extends RefScan {
  head: HeadState;
  /** HEAD's newest reflog entry; undefined when there is none or HEAD is unborn. */
  headReflog: HeadReflogEntry | undefined;
  /** The stash, newest first (what `git stash list` shows). */
  stash: StashEntry[];
  /** The operations in progress, by the markers Git leaves for them. */
  markers: OperationMarker[];
}

/** A ref storage (extensions.refStorage): how its state is read. */
interface RefStore {
  /** Everything at once, for a capture (the refs first, then what goes with them, as the spec orders it). */
  read(repo: Repo, undoRefs?: Promise<SnapshotRef[]>): Promise<RefState>;
}

/**
 * The ref storage's state now, by the repository's backend. `undoRefs`: the
 * snapshot refs, when the caller listed them already (a restore lists them
 * once, for its capture and for the plan it makes meanwhile).
 */
export const readRefState = (repo: Repo, undoRefs?: Promise<SnapshotRef[]>): Promise<RefState> => storeOf(repo).read(repo, undoRefs);

/**
 * HEAD's newest reflog entry as its file says, without a Git process: a quick
 * sign that HEAD moved since a snapshot (its Undo-Reflog trailer). Null where
 * that takes Git (reftable).
 */
export const headReflogHint = (repo: Repo): ReflogEntry | undefined | null => (repo.refStorage === "files" ? newestHeadReflog(repo) : null);

const storeOf = (repo: Repo): RefStore => (repo.refStorage === "files" ? FILES : REFTABLE);

const withUnreadable = <T extends RefScan>(scan: T, unreadable: UnreadableRef[]): T => (unreadable.length ? { ...scan, unreadable } : scan);

// ---------------------------------------------------------------- files

const FILES: RefStore = {
  async read(repo, undoRefsListed) {
    const [listed, undoRefs] = await Promise.all([listRefs(repo), undoRefsListed ?? scanUndoRefs(repo, repo.snapshotPrefix)]);
    const refs = listed.refs;
    // Symbolic refs are completed from their files: for-each-ref reports the end of a chain and skips dangling ones.
    const symrefs = looseSymrefs(repo);
    if (symrefs.size > 0) {
      const byName = new Map(refs.map((r) => [r.name, r]));
      for (const [name, target] of symrefs) {
        const known = byName.get(name);
        if (known) known.symrefTarget = target;
        else refs.push({ name, object: null, type: null, symrefTarget: target, peeledObject: null, peeledType: null });
      }
    }
    refs.sort((a, b) => compareBytes(a.name, b.name));
    // With the refs (the spec's step 2), not after the files: a Git command that
    // moves HEAD meanwhile must not lend its message to a state from before it.
    const head = fileHead(repo);
    const stash = await stashAgreeing(repo, refs, fileStash(repo, refs), async () => fileStash(repo, [STASH_LINE]));
    return withUnreadable({ refs, undoRefs, head, headReflog: fileHeadReflog(repo, head, refs), stash, markers: markerFiles(repo.gitDir) }, listed.unreadable);
  },
};

function fileHead(repo: Repo): HeadState {
  const content = decodeBytes(readFileSync(join(repo.gitDir, "HEAD"))).trim();
  if (content.startsWith("ref: ")) return { kind: "symbolic", target: content.slice(5).trim() };
  return { kind: "detached", commit: content };
}

/** The last line of a file that `accept` takes, read from its end (reflogs grow for years). */
function lastLine(path: string, accept: (line: string) => boolean = () => true): string | null {
  return fromFileEnd(path, 4096, (piece) => {
    const lines = decodeBytes(piece).split("\n");
    for (let i = lines.length - 1; i >= 0; i--) if (lines[i] && accept(lines[i]!)) return lines[i]!;
    return undefined;
  });
}

/** `<new-oid>` and message of a reflog line `<old> <new> <ident> <time> <tz>\t<message>`. */
function parseReflogLine(line: string): ReflogEntry | null {
  const tab = line.indexOf("\t");
  const head = tab < 0 ? line : line.slice(0, tab);
  const [, commit] = head.split(" ");
  if (!commit) return null;
  return { commit, message: tab < 0 ? "" : line.slice(tab + 1) };
}

/** HEAD's newest reflog entry (what `git reflog -1 --format='%H %gs' HEAD` shows). */
function fileHeadReflog(repo: Repo, head: HeadState, refs: readonly RefLine[]): HeadReflogEntry | undefined {
  if (head.kind === "symbolic" && !refs.some((r) => r.name === head.target && r.object)) return undefined;
  return newestHeadReflog(repo);
}

function newestHeadReflog(repo: Repo): HeadReflogEntry | undefined {
  // Git's reflog walk skips entries with a null new id (a deletion of HEAD's branch).
  const line = lastLine(join(repo.gitDir, "logs", "HEAD"), (l) => !/^\S+ 0+ /.test(l));
  const entry = line ? parseReflogLine(line) : null;
  if (!line || !entry) return undefined;
  // `<old> <new> <name> <email> <time> <tz>`: the time is the next to last word before the tab.
  const words = line.slice(0, line.indexOf("\t") < 0 ? line.length : line.indexOf("\t")).split(" ");
  const time = Number(words.at(-2));
  return { ...entry, old: words[0] ?? null, time: Number.isSafeInteger(time) ? time : null };
}

/** The stash, newest first, from refs/stash's reflog. */
function fileStash(repo: Repo, refs: readonly RefLine[]): StashEntry[] {
  if (!refs.some((r) => r.name === "refs/stash")) return [];
  let content: string;
  try {
    content = decodeBytes(readFileSync(join(repo.commonDir, "logs", "refs", "stash")));
  } catch {
    return [];
  }
  const entries: StashEntry[] = [];
  for (const line of content.split("\n")) {
    const e = line ? parseReflogLine(line) : null;
    if (e) entries.push(e);
  }
  return entries.reverse();
}

// ---------------------------------------------------------------- the stash

/** A refs/stash line for fileStash, which only asks whether there is one. */
const STASH_LINE: RefLine = { name: "refs/stash", object: null, type: null, symrefTarget: null, peeledObject: null, peeledType: null };

/** How many times refs/stash and its reflog are read again while they disagree. */
const STASH_REREADS = 2;

/**
 * The stash, agreeing with refs/stash's line in `refs`: the refs are listed
 * first and the reflog read after, so a stash push or drop in between leaves
 * a reflog whose newest entry is not what refs/stash names (or entries with
 * no refs/stash). Then both are read again, the ref first, refs/stash's line
 * in `refs` replaced with the one read beside the entries, until they agree.
 * Past STASH_REREADS, refs/stash's line is the newest entry of the reflog
 * last read, which Git writes with the ref (and reftable as one): the format
 * has refs/stash point at the top of the stash, and a restore puts it there.
 * `readLog` reads the reflog now, as `stash` was read.
 */
async function stashAgreeing(repo: Repo, refs: RefLine[], stash: StashEntry[], readLog: () => Promise<StashEntry[]>): Promise<StashEntry[]> {
  const agree = () => {
    const line = refs.find((r) => r.name === "refs/stash");
    return !line || stash[0]?.commit === line.object;
  };
  const replace = (line: RefLine | undefined) => {
    const at = refs.findIndex((r) => r.name === "refs/stash");
    refs.splice(at, 1, ...(line ? [line] : []));
  };
  for (let i = 0; i < STASH_REREADS && !agree(); i++) {
    const [again] = (await listRefs(repo, ["refs/stash"])).refs.filter((r) => r.name === "refs/stash");
    replace(again);
    stash = again ? await readLog() : [];
  }
  // A reflog with no entries (expired) says nothing of the ref: it stays as read.
  if (!agree() && stash.length) replace({ ...STASH_LINE, object: stash[0]!.commit, type: "commit" });
  return stash;
}

// ---------------------------------------------------------------- reftable

const REFTABLE: RefStore = { read: readThroughGit };

/**
 * A ref storage without files: the refs, HEAD, HEAD's newest reflog entry and
 * the stash reflog in one wave of Git processes, then the immediate target of
 * each symbolic ref (for-each-ref gives the end of a chain). A dangling
 * symbolic ref is invisible there: no command lists it.
 */
async function readThroughGit(repo: Repo, undoRefsListed?: Promise<SnapshotRef[]>): Promise<RefState> {
  const git = repo.git;
  // -z: one NUL after each entry; %gs is the reflog message as the files hold it.
  const reflog = (ref: string, more: string[] = []) =>
    git.run(["log", "-g", "-z", "--no-show-signature", "--format=%H%x09%gs", ...more, ref, "--"], { okExit: [128] });
  const [listing, undoRefs, symbolic, detached, headLog, stashLog] = await Promise.all([
    listRefs(repo),
    undoRefsListed ?? scanUndoRefs(repo, repo.snapshotPrefix),
    git.run(["symbolic-ref", "-q", "--no-recurse", "HEAD"], { okExit: [1] }),
    // HEAD's commit when detached, and which marker refs exist: one batch.
    git.text(["cat-file", "--batch-check=%(objectname)"], { input: `HEAD\n${REF_MARKER_QUERY}` }),
    // The two newest: the second's commit is the one the newest left; `%gd` dated in seconds.
    git.run(["log", "-g", "-z", "-2", "--date=unix", "--no-show-signature", "--format=%H%x09%gd%x09%gs", "HEAD", "--"], { okExit: [128] }),
    reflog("refs/stash"),
  ]);
  const refs = listing.refs;
  const symrefs = refs.filter((r) => r.symrefTarget);
  await Promise.all(
    symrefs.map(async (r) => {
      r.symrefTarget = await git.line(["symbolic-ref", "--no-recurse", r.name]);
    }),
  );
  refs.sort((a, b) => compareBytes(a.name, b.name));
  const [headCommit = "", ...markerIds] = detached.split("\n");
  const head: HeadState =
    symbolic.exitCode === 0 ? { kind: "symbolic", target: text(symbolic.stdout).trim() } : { kind: "detached", commit: headCommit };
  const entries = (r: GitResult) => (r.exitCode === 0 ? text(r.stdout).split("\0").filter(Boolean).map(parseLogEntry) : []);
  const [newest, before] = headLog.exitCode === 0 ? text(headLog.stdout).split("\0").filter(Boolean).map(parseDatedEntry) : [];
  const unborn = head.kind === "symbolic" && !refs.some((r) => r.name === head.target && r.object);
  return withUnreadable(
    {
      refs,
      undoRefs,
      head,
      headReflog: newest && !unborn ? { ...newest, old: before?.commit ?? null } : undefined,
      stash: await stashAgreeing(repo, refs, refs.some((r) => r.name === "refs/stash") ? entries(stashLog) : [], async () => entries(await reflog("refs/stash"))),
      markers: markersWith(repo.gitDir, markerIds),
    },
    listing.unreadable,
  );
}

/** One `%H<TAB>%gd<TAB>%gs` entry of a reflog walk with `--date=unix` (`%gd` is `HEAD@{<seconds>}`). */
function parseDatedEntry(entry: string): HeadReflogEntry {
  const [commit = "", selector = "", ...message] = entry.split("\t");
  const time = Number(/@\{(\d+)\}$/.exec(selector)?.[1]);
  return { commit, message: message.join("\t"), old: null, time: Number.isSafeInteger(time) ? time : null };
}

/** One `%H<TAB>%gs` entry of a reflog walk. */
function parseLogEntry(entry: string): StashEntry {
  const tab = entry.indexOf("\t");
  return tab < 0 ? { commit: entry, message: "" } : { commit: entry.slice(0, tab), message: entry.slice(tab + 1) };
}
