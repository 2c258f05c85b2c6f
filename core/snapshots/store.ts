// The store: a captured state committed as the next snapshot, with parents
// that keep its commits alive, its ref created under the next number, and
// the sequence kept within undo.limit. Nothing here reads the live state.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { changeBesidesHead, cut, describeChange, operationMayBeInvolved, operationSummary, SUMMARY_WIDTH } from "../describe.ts";
import { changeFacts, previousParts, rememberParts } from "../change-facts.ts";
import { operationFacts } from "../git-data/operation.ts";
import { fatal, refused } from "../errors.ts";
import { commitText, commitsToKeep, encodeMessage, FORMAT_VERSION, groupsOf, headTrailer, reflogTrailer, isReadable, KEEP_DATE, KEEP_MESSAGE, MAX_PARENTS, MAX_SNAPSHOT_NUMBER, PLACEHOLDER_EMAIL, PLACEHOLDER_NAME, snapshotRef, type HeadReflogEntry, type ObjectId, type ReflogEntry, type Snapshot, type SnapshotEntry, type SnapshotKind, type Trailers } from "../format/index.ts";
import { hasEscapedBytes } from "../bytes.ts";
import { GitError } from "../git.ts";
import { ownOnly, rememberOwn, type NumberedRef, type OwnRecordProblem } from "./history.ts";
import { beyondLimit, deleteSnapshots } from "./gc.ts";
import { asRefWriter } from "../lock.ts";
import { readJsonFile, replaceFile } from "../files.ts";
import { objectId, withScratch } from "../git-data/objects.ts";
import type { Repo } from "../repo.ts";
import { logLine } from "../worker-files.ts";
import { refFormatKept } from "../git-data/refs/migration.ts";
import { clearKilledRefWrite, clearStaleSnapshotRefLocks } from "../git-data/refs/locks.ts";
import { packSnapshotRefs } from "../git-data/refs/store.ts";
import { rememberCommit } from "../git-data/refs/snapshot-commits.ts";
import { undoFile } from "../undo-files.ts";
import { phase } from "../trace.ts";

import { CaptureTorn, type LiveCapture, unchanged } from "../capture.ts";

export interface RecordOptions {
  kind: SnapshotKind;
  /** The summary line; when absent it is derived from the reflog or the difference. */
  message?: string;
  restored?: number;
  from?: number;
  /** How many Git commands the state comes after (the worker's count): the summary says so past one. */
  commands?: number;
  /** Asked once the index and the files are read, before anything is committed: false throws CaptureTorn, and nothing is recorded. */
  intact?: () => boolean | Promise<boolean>;
  /** Record even when nothing changed since the latest snapshot (a bookmark: `snapshot -m`). */
  always?: boolean;
  /** Run once the snapshot's commit is written, before its ref names it: a quarantine's objects move into the store. */
  beforeRef?: () => void;
}

export type RecordOutcome =
  /**
   * limitProblem: why the snapshots beyond undo.limit could not be deleted this time;
   * ownProblem: why the snapshot could not be recorded as this worktree's own, so that
   * it counts as fetched (both logged in worker.log).
   */
  | { created: true; snapshot: Snapshot; capture: LiveCapture; limitProblem?: string; ownProblem?: OwnRecordProblem }
  | { created: false; latest: SnapshotEntry; capture: LiveCapture };

/** A summary for the state after `commands` Git commands (a script's, run too close together to tell apart). */
export function commandsNote(summary: string, commands: number): string {
  if (commands <= 1) return summary;
  const note = ` (${commands} commands)`;
  return cut(summary, SUMMARY_WIDTH - note.length) + note;
}

/** Steps 5 to 7: dedupe, commit, create the ref, enforce the limit. */
export function commitCapture(repo: Repo, capture: LiveCapture, opts: RecordOptions): Promise<RecordOutcome> {
  return phase("commit snapshot", async () => {
    const outcome = await commitState(repo, capture, opts);
    // The next recording of this process (the worker's) words its summary against this state.
    rememberParts(capture.tree, capture.state);
    return outcome;
  });
}

async function commitState(repo: Repo, capture: LiveCapture, opts: RecordOptions): Promise<RecordOutcome> {
  const same = unchanged(capture);
  if (same && opts.kind !== "restore" && !opts.always) {
    noteSeenReflog(repo, capture, same);
    return { created: false, latest: same, capture };
  }
  // The parents and the committer do not depend on the summary: ask Git for them meanwhile.
  const pending = Promise.all([keepParents(repo, commitsToKeep(capture.state)), committerOf(repo, capture.configDigest)]);
  pending.catch(() => {}); // awaited below; a failing summary must not leave it unhandled
  const commands = opts.commands ?? 1;
  const summary = opts.message ?? commandsNote(await summarize(repo, capture, commands), commands);
  const trailers: Trailers = { format: FORMAT_VERSION, kind: opts.kind, head: headTrailer(capture.state.head) };
  if (opts.restored !== undefined) trailers.restored = opts.restored;
  if (opts.from !== undefined) trailers.from = opts.from;
  if (capture.reflog !== undefined) trailers.reflog = reflogTrailer(capture.reflog);
  const message = encodeMessage({ summary, trailers });

  const [parents, committer] = await pending;
  const committedAt = Math.floor(Date.now() / 1000);
  const commit = await commitTree(repo, capture.tree, parents, message, identEnv(committer));
  // A `git refs migrate` since the capture began: what it read may be half of each format. Taken again once it is done.
  if (!refFormatKept(repo)) throw new CaptureTorn();
  opts.beforeRef?.();
  // A ref transaction of git-undo's killed halfway left its locks: they go before ours starts.
  clearKilledRefWrite(repo);
  const snapshot = await createRef(repo, capture.sequence, commit);
  const ownProblem = rememberOwn(repo.undoDir, capture.sequence, { ref: snapshot.ref, commit });
  if (ownProblem !== null) {
    const counted = ownProblem.countsAs === "fetched" ? "so it counts as fetched (plain undo passes over it)" : "which cannot be read, so every snapshot counts as own, fetched ones too";
    logLine(repo.undoDir, `could not add snapshot #${snapshot.number} to the record of this worktree's own snapshots, ${counted}: ${ownProblem.reason}`);
  }
  const limitProblem = await keepLimit(repo, capture.sequence, { ...snapshot, commit });
  const created: Snapshot = {
    number: snapshot.number,
    ref: snapshot.ref,
    commit,
    tree: capture.tree,
    // Dated by Git when `date` is null: its clock read after ours, within the same second or the next.
    date: committer.date === null ? committedAt : Number(committer.date.split(" ")[0]),
    // As stored: what a later read of this snapshot sees.
    summary: commitText(message.split("\n", 1)[0]!),
    trailers: storedTrailers(trailers),
  };
  // Its commit as the next reader would read it: exactly known only when we dated it, and
  // when the message is UTF-8 (commit-tree rewrites other bytes as if Latin-1).
  if (committer.date !== null && !hasEscapedBytes(message)) rememberCommit(repo, { ref: snapshot.ref, commit, tree: capture.tree, date: created.date, message });
  if (snapshot.number % PACK_REFS_EVERY === 0) await asRefWriter(repo.undoDir, () => packSnapshotRefs(repo));
  return { created: true, snapshot: created, capture, ...(limitProblem === null ? {} : { limitProblem }), ...(ownProblem === null ? {} : { ownProblem }) };
}

/** Every this many snapshots their refs are packed (core/git-data/refs/store.ts packSnapshotRefs). */
const PACK_REFS_EVERY = 100;

/** Trailers as commit-tree stored them (non-UTF-8 bytes read as Latin-1). */
function storedTrailers(t: Trailers): Trailers {
  const stored: Trailers = { ...t, head: commitText(t.head) };
  if (t.reflog !== undefined) stored.reflog = commitText(t.reflog);
  return stored;
}

/**
 * The summary of a change: HEAD's reflog message when it describes the change,
 * otherwise what differs. After several commands (a script's), the reflog
 * message is followed by what the others changed besides.
 */
async function summarize(repo: Repo, capture: LiveCapture, commands: number): Promise<string> {
  const latest = capture.latest;
  const previousReflog = latest && isReadable(latest) ? latest.trailers.reflog : undefined;
  // New when its trailer, as commit-tree would store it, differs from the newest snapshot's.
  const fresh = capture.reflog !== undefined && commitText(reflogTrailer(capture.reflog)) !== previousReflog ? capture.reflog : undefined;
  if (!latest) {
    const reflogMessage = fresh?.message ?? "";
    // `git worktree add` checks the new worktree out with a reset (HEAD's one reflog line), or detached with none.
    if (repo.worktreeName !== null && (!reflogMessage || reflogMessage === "reset: moving to HEAD")) return cut(`worktree ${repo.worktreeName} added`);
    return reflogMessage ? cut(reflogMessage) : "first snapshot";
  }
  const reflogMessage = fresh !== undefined && describesChange(repo, fresh, latest, capture) ? fresh.message : "";
  // An operation started, stopped, ended or in progress: said in its own words (core/describe.ts).
  if (operationMayBeInvolved(capture.state, reflogMessage)) {
    const prev = await previousParts(repo, latest.tree);
    const operation = operationSummary(capture.state, reflogMessage, prev, operationFacts(repo.gitDir, capture.state.state));
    if (operation !== null) {
      if ("text" in operation) return operation.text;
      return operation.during(describeChange(await changeFacts(repo, latest.tree, capture.state, capture.tree, prev), capture.state, { duringOperation: true }));
    }
  }
  // `git stash` writes "reset: moving to HEAD" to HEAD's reflog without moving
  // HEAD; then the stash, not that message, says what happened. Only in that
  // case is the difference read although the reflog has news.
  const maybeStash = capture.state.stash.length > 0 && sameCommit(capture.reflog, previousReflog);
  if (reflogMessage && !maybeStash) {
    if (commands <= 1) return cut(reflogMessage);
    // A script's commands: the reflog line speaks for HEAD's move, the rest is named (one more diff).
    const facts = await changeFacts(repo, latest.tree, capture.state, capture.tree, undefined, { allIndexPaths: true });
    const besides = changeBesidesHead(facts, capture.state);
    return cut(besides ? `${reflogMessage}; ${besides}` : reflogMessage);
  }
  const described = describeChange(await changeFacts(repo, latest.tree, capture.state, capture.tree), capture.state);
  return reflogMessage && !described.includes("stash: ") ? cut(reflogMessage) : described;
}

/**
 * Whether HEAD's newest reflog entry, new since the latest snapshot, describes
 * the change since: HEAD moved (its commit or its branch), or the entry moved
 * nothing itself (`reset --hard` at HEAD, `reset` of the index), was written no
 * earlier than the latest snapshot, and no capture since found it with nothing
 * else changed. A commit and a reset that were never recorded leave HEAD where
 * it was: their lines say nothing of what differs now.
 */
function describesChange(repo: Repo, entry: HeadReflogEntry, latest: SnapshotEntry, capture: LiveCapture): boolean {
  if (!isReadable(latest)) return true;
  const trailer = latest.trailers.reflog;
  if (trailer === undefined || !sameCommit(entry, trailer) || latest.trailers.head !== commitText(headTrailer(capture.state.head))) return true;
  if (entry.old !== entry.commit) return false;
  if (entry.time !== null && entry.time < latest.date) return false;
  return seenReflog(repo) !== commitText(reflogTrailer(entry));
}

/**
 * A capture that found nothing to record keeps HEAD's reflog entry when it is
 * new (a `reset --hard` that changed nothing): the next change is not that one.
 */
function noteSeenReflog(repo: Repo, capture: LiveCapture, latest: SnapshotEntry): void {
  if (capture.reflog === undefined || !isReadable(latest)) return;
  const trailer = commitText(reflogTrailer(capture.reflog));
  if (trailer === latest.trailers.reflog || trailer === seenReflog(repo)) return;
  try {
    replaceFile(undoFile(repo.undoDir, "seenReflog"), JSON.stringify({ reflog: trailer }));
  } catch {
    /* a cache: the next summary may name that entry */
  }
}

function seenReflog(repo: Repo): string | null {
  const known = readJsonFile(undoFile(repo.undoDir, "seenReflog")) as { reflog?: unknown } | null;
  return typeof known?.reflog === "string" ? known.reflog : null;
}

/** Whether HEAD's reflog entry moved to the commit the previous snapshot's Undo-Reflog trailer names. */
const sameCommit = (entry: ReflogEntry | undefined, trailer: string | undefined): boolean =>
  entry !== undefined && trailer !== undefined && trailer.slice(0, trailer.indexOf(" ")) === entry.commit;

/** Who commits a snapshot; a null date lets Git date it: now, in the local time zone. */
interface Committer {
  name: string;
  email: string;
  date: string | null;
}

/**
 * The identity variables of a snapshot's commit-tree: the committer, and the
 * placeholder author with the committer's date. With no date given, Git reads
 * the clock once for both (ident.c keeps the first reading), and no date
 * variable of the user's is passed on. (Asking the JS runtime for the local
 * offset costs ~8 ms: its time-zone data is loaded on first use.)
 */
const identEnv = (c: Committer): Record<string, string | undefined> => ({
  GIT_COMMITTER_NAME: c.name,
  GIT_COMMITTER_EMAIL: c.email,
  GIT_COMMITTER_DATE: c.date ?? undefined,
  GIT_AUTHOR_NAME: PLACEHOLDER_NAME,
  GIT_AUTHOR_EMAIL: PLACEHOLDER_EMAIL,
  GIT_AUTHOR_DATE: c.date ?? undefined,
});

/**
 * The committer: the configured identity (never Git's host-name guess), else
 * the placeholder. `git var` answers from the configuration and five variables;
 * its answer is kept in <gitdir>/undo/committer.json under their digest, so a
 * recording with the same inputs needs no `git var`. The date is now, with
 * the local offset Git gave (kept for the quarter of an hour it is sure to
 * hold, then asked again); with no identity, the date is left to Git.
 */
async function committerOf(repo: Repo, configDigest: string | undefined): Promise<Committer> {
  const cache = undoFile(repo.undoDir, "committer");
  const key = configDigest && !repo.env.GIT_COMMITTER_DATE ? JSON.stringify([configDigest, ...IDENT_VARS.map((v) => repo.env[v] ?? null)]) : null;
  const now = Date.now();
  if (key) {
    const known = readJsonFile(cache) as KnownCommitter | null;
    // With no identity Git is not asked again (it would fail again) and dates the commit itself.
    if (known?.key === key && "none" in known) return { name: PLACEHOLDER_NAME, email: PLACEHOLDER_EMAIL, date: null };
    if (known?.key === key && !("none" in known) && typeof known.offset === "string" && typeof known.until === "number" && now < known.until) {
      return { name: known.name, email: known.email, date: `${Math.floor(now / 1000)} ${known.offset}` };
    }
  }
  const r = await repo.git.run(["-c", "user.useConfigOnly=true", "var", "GIT_COMMITTER_IDENT"], { okExit: [128] });
  const m = r.exitCode === 0 ? /^(.*) <(.*)> ((\d+) ([+-]\d{4}))$/.exec(new TextDecoder().decode(r.stdout).trim()) : null;
  if (key) {
    // Git's offset holds until the next quarter of an hour: every time zone changes its offset on one.
    const dated = m ? { offset: m[5]!, until: (Math.floor(Number(m[4]) / 900) + 1) * 900_000 } : {};
    try {
      replaceFile(cache, JSON.stringify(m ? { key, name: m[1], email: m[2], ...dated } : { key, none: true }));
    } catch {
      /* answered by Git this time; the next recording asks again */
    }
  }
  if (m) return { name: m[1]!, email: m[2]!, date: m[3]! };
  return { name: PLACEHOLDER_NAME, email: PLACEHOLDER_EMAIL, date: null };
}

/**
 * committer.json: the identity `git var` gave under `key`, and the local
 * time-zone offset it dated with, good until `until` (ms since the epoch).
 */
type KnownCommitter = ({ key: string; name: string; email: string } | { key: string; none: true }) & { offset?: unknown; until?: unknown };

/**
 * The blob ids of the last state tree written here (HEAD, refs, stash,
 * state), in <gitdir>/undo/: between two recordings most of them stay the
 * same, and a blob the newest snapshot holds is in the repository for sure
 * (that snapshot's ref keeps it), so it need not be written again.
 */

/** The environment `git var GIT_COMMITTER_IDENT` reads besides the configuration. */
const IDENT_VARS = ["GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL", "GIT_COMMITTER_DATE", "TZ"];

async function commitTree(
  repo: Repo,
  tree: ObjectId,
  parents: readonly ObjectId[],
  message: string,
  env: Record<string, string | undefined>,
): Promise<ObjectId> {
  // i18n.commitEncoding would add an `encoding` header: messages are UTF-8, and identical states must hash identically.
  const args = ["-c", "i18n.commitEncoding=UTF-8", "commit-tree", tree];
  for (const p of parents) args.push("-p", p);
  return repo.git.line(args, { input: message, env });
}

/** The snapshot's parents: the kept commits themselves, or keep commits grouping them 64 at a time. */
export async function keepParents(repo: Repo, ids: readonly ObjectId[]): Promise<ObjectId[]> {
  let level = [...ids];
  if (level.length <= MAX_PARENTS) return level;
  const emptyTree = objectId("tree", new Uint8Array(), repo.objectFormat);
  while (level.length > MAX_PARENTS) level = (await writeKeepCommits(repo, emptyTree, groupsOf(level))).sort();
  return level;
}

/**
 * Keep commits are fixed (identity, date, message, the empty tree): each one's
 * bytes are what `git commit-tree` would write, so they are built and hashed
 * here, and only those the repository lacks are written, all in one
 * `hash-object`. A group that did not change since the last recording has the
 * same id as then and costs nothing; two Git processes at most per level,
 * whatever the number of groups.
 */
async function writeKeepCommits(repo: Repo, emptyTree: ObjectId, groups: readonly ObjectId[][]): Promise<ObjectId[]> {
  const ident = `${PLACEHOLDER_NAME} <${PLACEHOLDER_EMAIL}> ${KEEP_DATE}`;
  const bodies = groups.map((g) =>
    Buffer.from(`tree ${emptyTree}\n${g.map((p) => `parent ${p}\n`).join("")}author ${ident}\ncommitter ${ident}\n\n${KEEP_MESSAGE}`),
  );
  const ids = bodies.map((b) => objectId("commit", b, repo.objectFormat));
  const known = await repo.git.text(["cat-file", "--batch-check=%(objectname) %(objecttype)"], { input: ids.map((id) => `${id}\n`).join("") });
  const present = new Set(known.split("\n").filter((l) => l.endsWith(" commit")).map((l) => l.split(" ")[0]!));
  const missing = ids.map((id, i) => i).filter((i) => !present.has(ids[i]!));
  if (missing.length) {
    await withScratch(repo, async (scratch) => {
      const paths = missing.map((i) => {
        const p = join(scratch, `keep-${i}`);
        writeFileSync(p, bodies[i]!);
        return p;
      });
      const written = (await repo.git.text(["hash-object", "-t", "commit", "-w", "--stdin-paths"], { input: paths.join("\n") + "\n" })).split("\n");
      // Git hashes what it stores: an id that differs would mean the bytes are not a commit as Git writes one.
      missing.forEach((i, k) => {
        if (written[k] !== ids[i]) throw fatal(`a keep commit was written as ${written[k]}, not ${ids[i]}`);
      });
    });
  }
  return ids;
}

/**
 * Create the next snapshot ref: the highest number this worktree recorded
 * plus one, past numbers that exist (fetched snapshots, which never use up
 * the sequence), retrying with the next free number when that ref appeared
 * meanwhile or a live Git holds its lock.
 * A lock a killed git-undo left on it (older than a few seconds; the caller
 * holds capture.lock) is removed and the same number tried again. Deleting
 * old snapshots is not part of it (keepLimit): nothing there can stop a recording.
 */
async function createRef(repo: Repo, snaps: readonly NumberedRef[], commit: ObjectId): Promise<{ number: number; ref: string }> {
  const own = ownOnly(snaps);
  const highest = own.length ? own[own.length - 1]!.number : 0;
  const taken = new Set(snaps.map((s) => s.number));
  const free = (n: number) => {
    while (taken.has(n)) n++;
    return n;
  };
  let swept = false;
  let failure: GitError | undefined;
  for (let number = free(highest + 1), attempt = 0; attempt < 10; attempt++) {
    if (number > MAX_SNAPSHOT_NUMBER) {
      // Ten digits are all a snapshot name has: a ref at the end (fetched from elsewhere, most likely) ends the sequence.
      throw refused({ kind: "numbers-used-up", ref: snapshotRef(repo.snapshotPrefix, MAX_SNAPSHOT_NUMBER) });
    }
    const ref = snapshotRef(repo.snapshotPrefix, number);
    try {
      await asRefWriter(repo.undoDir, () => repo.git.run(["update-ref", "--stdin"], { input: `create ${ref} ${commit}\n` }));
      return { number, ref };
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      failure = e;
      // Told apart by what is there, not by Git's wording (which varies between versions).
      if (await refExists(repo, ref)) {
        number = free(number + 1); // another recorder (or a fetch) got there first
      } else if (!swept && clearStaleSnapshotRefLocks(repo).length > 0) {
        swept = true; // a killed git-undo's lock was on it: the same number again
      } else if (snapshotRefLocked(repo, ref)) {
        number = free(number + 1); // a live Git holds that name
      } else {
        throw e;
      }
    }
  }
  throw fatal(`could not create a snapshot ref under ${repo.snapshotPrefix}: ${failure?.message ?? "every number tried is taken"}`);
}

/** Whether `ref` exists (whatever its object). */
async function refExists(repo: Repo, ref: string): Promise<boolean> {
  return (await repo.git.text(["for-each-ref", "--format=%(refname)", ref])).split("\n").includes(ref);
}

/** Whether Git's lock on a snapshot ref exists (files storage; reftable locks the whole table list). */
const snapshotRefLocked = (repo: Repo, ref: string): boolean =>
  existsSync(join(repo.commonDir, `${ref}.lock`)) || existsSync(join(repo.commonDir, "reftable", "tables.list.lock"));

/**
 * Delete the snapshots beyond undo.limit, in a transaction of its own once the
 * new one exists: a failure (a lock a user's Git holds or left) is logged and
 * the recording stands; the next recording deletes what is still beyond it.
 * Returns the error, if any.
 */
async function keepLimit(repo: Repo, sequence: readonly NumberedRef[], created: { number: number; ref: string; commit: ObjectId }): Promise<string | null> {
  // Only this worktree's own snapshots count: fetched ones are neither counted nor deleted.
  const doomed = beyondLimit([...ownOnly(sequence), created], repo.config.limit);
  try {
    await deleteSnapshots(repo, doomed);
    return null;
  } catch (e) {
    // Git's first line names the lock; its last is advice.
    const why = e instanceof GitError ? (e.stderr.trim().split("\n")[0] ?? e.message) : e instanceof Error ? e.message : String(e);
    logLine(repo.undoDir, `could not delete ${doomed.length} snapshot${doomed.length === 1 ? "" : "s"} beyond undo.limit (the next recording tries again): ${why}`);
    return why;
  }
}
