// The snapshot sequence of a worktree: numbers, the position, the navigation
// streak, and the targets of undo and redo.
import { appendToFile, readUndoFile, replaceFile } from "../files.ts";
import { refused, fatal } from "../errors.ts";
import { decodeMessage, isReadable, snapshotNumber, type ObjectId, type Snapshot, type SnapshotEntry } from "../format/index.ts";
import { loadStates } from "./read-state.ts";
import { SnapshotRefused } from "../format/validate.ts";
import type { Repo } from "../repo.ts";
import { scanUndoRefs, type SnapshotRef } from "../git-data/refs/index.ts";
import { ensureUndoDir, undoFile } from "../undo-files.ts";
import { phase } from "../trace.ts";

/** A snapshot ref of one sequence with its number, its message not decoded yet. */
export interface NumberedRef extends SnapshotRef {
  number: number;
  /** Not recorded by this worktree (see OwnSnapshots). */
  foreign?: true;
}

/**
 * The snapshots a worktree recorded itself, by ref and commit, as the
 * recorder wrote them to <gitdir>/undo/own-snapshots: nothing in a snapshot
 * can say so (a fetched one could say anything). Null when there is no such
 * record yet: then every snapshot is the worktree's own, as they all were
 * before git-undo kept one (and the first recording writes them all into it).
 */
export type OwnSnapshots = ReadonlyMap<string, ObjectId> | null;

/** The own-snapshots record of the worktree whose undo folder is `undoDir`. */
export function readOwnSnapshots(undoDir: string): OwnSnapshots {
  // Missing: none yet. Anything else (a folder planted there, no permission): unknown, so all are own.
  const bytes = readUndoFile(undoFile(undoDir, "ownSnapshots"));
  if (bytes === null) return null;
  const text = bytes.toString("latin1");
  const own = new Map<string, ObjectId>();
  for (const line of text.split("\n")) {
    const m = /^([0-9a-f]{40,64}) (refs\/undo\/\S+)$/.exec(line);
    if (m) own.set(m[2]!, m[1]!);
  }
  return own;
}

/** Whether `r` is a snapshot this worktree recorded. */
export const isOwn = (own: OwnSnapshots, r: Pick<SnapshotRef, "ref" | "commit">): boolean => own === null || own.get(r.ref) === r.commit;

/**
 * Add a snapshot just created to the own-snapshots record. The first time,
 * the record starts with every snapshot of the sequence before it
 * (`sequence`): those of an older git-undo were all this worktree's own. Lines
 * of snapshots that are gone are dropped when they outnumber the others.
 * When appending fails (a read-only file, a torn one), the record is written
 * anew beside and renamed over. Returns why it could not be written at all
 * (a folder planted there, a full disk), else null: the caller must say it.
 */
export function rememberOwn(undoDir: string, sequence: readonly NumberedRef[], created: Pick<SnapshotRef, "ref" | "commit">): OwnRecordProblem | null {
  const path = undoFile(undoDir, "ownSnapshots");
  const line = (r: Pick<SnapshotRef, "ref" | "commit">) => `${r.commit} ${r.ref}\n`;
  const own = readOwnSnapshots(undoDir);
  const live = own === null ? [...sequence] : sequence.filter((r) => isOwn(own, r));
  const rewrite = () => replaceFile(path, [...live, created].map(line).join(""));
  try {
    if (own === null || own.size > 2 * live.length + 64) rewrite();
    else {
      try {
        appendToFile(path, line(created));
      } catch {
        rewrite();
      }
    }
    return null;
  } catch (e) {
    // A record that cannot be read (a folder there) counts every snapshot as own; one that can, lacks this one.
    return { reason: (e as Error).message, countsAs: readOwnSnapshots(undoDir) === null ? "all-own" : "fetched" };
  }
}

/** Why a snapshot just recorded could not be added to the own-snapshots record, and how readers now count it. */
export interface OwnRecordProblem {
  reason: string;
  /** "fetched": this snapshot, the record being readable without it; "all-own": every snapshot, fetched ones too, the record being unreadable. */
  countsAs: "fetched" | "all-own";
}

/** The refs of one sequence (ten-digit names under `prefix` only), oldest first; those `own` lacks marked foreign. */
export function numberedRefs(undoRefs: readonly SnapshotRef[], prefix: string, own: OwnSnapshots = null): NumberedRef[] {
  const out: NumberedRef[] = [];
  for (const r of undoRefs) {
    const number = snapshotNumber(prefix, r.ref);
    if (number !== null) out.push(isOwn(own, r) ? { ...r, number } : { ...r, number, foreign: true });
  }
  return out.sort((a, b) => a.number - b.number);
}

/** One snapshot's message decoded; an unreadable one is kept, marked with the reason. */
export function decodeSnapshot(r: NumberedRef): SnapshotEntry {
  const { number } = r;
  const base = { number, ref: r.ref, commit: r.commit, tree: r.tree, date: r.date, ...(r.foreign ? { foreign: true as const } : {}) };
  try {
    const message = decodeMessage(r.message, `snapshot #${number}`);
    // A restore names earlier snapshots only: a later one would make the position run ahead of the sequence.
    for (const [key, n] of [["Undo-Restored", message.trailers.restored], ["Undo-From", message.trailers.from]] as const) {
      if (n !== undefined && n >= number) throw fatal(`snapshot #${number} has ${key} ${n}, which is not an earlier snapshot`);
    }
    return { ...base, ...message };
  } catch (e) {
    return { ...base, reason: (e as Error).message };
  }
}

/** Decode the snapshot refs of one sequence, oldest first. Unreadable ones are kept, marked. */
export function decodeSnapshots(undoRefs: readonly SnapshotRef[], prefix: string, own: OwnSnapshots = null): SnapshotEntry[] {
  return numberedRefs(undoRefs, prefix, own).map(decodeSnapshot);
}

/**
 * decodeSnapshots of only the `count` highest-numbered refs of the sequence:
 * what `list -n <count>` shows, and all the position needs (the newest).
 * Decoding every message of a long history costs ~5 µs each.
 */
export function decodeNewest(undoRefs: readonly SnapshotRef[], prefix: string, count: number, own: OwnSnapshots = null): SnapshotEntry[] {
  return numberedRefs(undoRefs, prefix, own).slice(-count).map(decodeSnapshot);
}

/** This worktree's snapshots, oldest first, each one's state checked (invalid ones marked unreadable), fetched ones marked. */
export async function listSnapshots(repo: Repo): Promise<SnapshotEntry[]> {
  return checkStates(repo, decodeSnapshots(await scanUndoRefs(repo, repo.snapshotPrefix), repo.snapshotPrefix, readOwnSnapshots(repo.undoDir)));
}

/** The snapshots this worktree recorded itself, in order: the only ones undo, redo, undo.limit and gc consider. */
export const ownOnly = <T extends { foreign?: true }>(snaps: readonly T[]): T[] => snaps.filter((s) => !s.foreign);

/**
 * Check the state tree of every readable snapshot (core/format/validate.ts through
 * loadState) and mark those that fail as unreadable, with the reason. A tree
 * is immutable, so one that passed once passes for ever: their ids are kept
 * in <gitdir>/undo/valid-trees, and only new trees are read.
 */
export function checkStates(repo: Repo, snaps: readonly SnapshotEntry[]): Promise<SnapshotEntry[]> {
  return phase("check snapshots", () => checkTrees(repo, snaps));
}

async function checkTrees(repo: Repo, snaps: readonly SnapshotEntry[]): Promise<SnapshotEntry[]> {
  const known = readValidTrees(repo);
  const fresh = [...new Set(snaps.filter((s) => isReadable(s) && !known.has(s.tree)).map((s) => s.tree))];
  if (!fresh.length) return [...snaps];
  const problems = new Map<ObjectId, string>();
  const passed: ObjectId[] = [];
  // Many trees to one cat-file: a first look at 5,000 snapshots is a few processes, not 5,000.
  for (let i = 0; i < fresh.length; i += 1000) {
    const batch = fresh.slice(i, i + 1000);
    (await loadStates(repo, batch)).forEach((state, j) => {
      if (state instanceof SnapshotRefused) problems.set(batch[j]!, state.problem);
      else passed.push(batch[j]!);
    });
  }
  addValidTrees(repo, passed);
  return snaps.map((s) => {
    const why = isReadable(s) ? problems.get(s.tree) : undefined;
    if (why === undefined) return s;
    return { number: s.number, ref: s.ref, commit: s.commit, tree: s.tree, date: s.date, ...(s.foreign ? { foreign: true as const } : {}), reason: `snapshot #${s.number} is not a valid snapshot: ${why}` };
  });
}


function readValidTrees(repo: Repo): Set<ObjectId> {
  const bytes = readUndoFile(undoFile(repo.undoDir, "validTrees"));
  return new Set(bytes === null ? [] : bytes.toString("latin1").split("\n").filter(Boolean));
}

function addValidTrees(repo: Repo, trees: readonly ObjectId[]): void {
  if (!trees.length) return;
  try {
    ensureUndoDir(repo.undoDir);
    appendToFile(undoFile(repo.undoDir, "validTrees"), trees.map((t) => `${t}\n`).join(""));
  } catch {
    /* checked again next time */
  }
}

/** The restore snapshots at the end of the sequence (of this worktree's own snapshots). */
export function streak(all: readonly SnapshotEntry[]): SnapshotEntry[] {
  const snaps = ownOnly(all);
  let i = snaps.length;
  while (i > 0) {
    const s = snaps[i - 1]!;
    if (!isReadable(s) || s.trailers.kind !== "restore") break;
    i--;
  }
  return snaps.slice(i);
}

/**
 * Where the user was before the streak: the state its first restore left
 * (that restore's Undo-From); null outside a streak. `git undo restore <it>`
 * returns there, however far undo and redo have walked since.
 */
export function streakOrigin(snaps: readonly SnapshotEntry[]): number | null {
  const first = streak(snaps)[0];
  return first && isReadable(first) ? (first.trailers.from ?? null) : null;
}

/**
 * The position: the latest snapshot's number, or, when the latest is a restore,
 * the number it restored. Null for an empty sequence.
 */
export function position(snaps: readonly SnapshotEntry[]): number | null {
  const own = ownOnly(snaps);
  const latest = own[own.length - 1];
  if (!latest) return null;
  if (isReadable(latest) && latest.trailers.kind === "restore" && latest.trailers.restored !== undefined) {
    return latest.trailers.restored;
  }
  return latest.number;
}

/** Snapshots undo and redo can land on: readable ones outside the streak, recorded here (a fetched one only by its number). */
export function candidates(snaps: readonly SnapshotEntry[]): Snapshot[] {
  const inStreak = new Set(streak(snaps).map((s) => s.number));
  return ownOnly(snaps).filter((s): s is Snapshot => isReadable(s) && !inStreak.has(s.number));
}

export type Direction = "undo" | "redo";

/** The snapshot `git undo N` (or `git undo redo N`) would restore; refuses when there are too few. */
export function navigationTarget(snaps: readonly SnapshotEntry[], direction: Direction, steps: number): Snapshot {
  const p = position(snaps);
  if (p === null) throw refused({ kind: "nothing-to-step", direction, empty: true });
  const all = candidates(snaps);
  const pool = direction === "undo" ? all.filter((s) => s.number < p).reverse() : all.filter((s) => s.number > p);
  const target = pool[steps - 1];
  if (!target) {
    if (pool.length === 0) {
      const before = streakOrigin(snaps);
      throw refused({ kind: "nothing-to-step", direction, empty: false, ...(before === null ? {} : { before }) });
    }
    throw refused({ kind: "too-few-steps", direction, steps, available: pool.length });
  }
  return target;
}

/** Snapshot number n of the sequence, or a clear error. */
export function findSnapshot(snaps: readonly SnapshotEntry[], n: number): SnapshotEntry {
  const s = snaps.find((x) => x.number === n);
  if (!s) throw refused({ kind: "no-such-snapshot", number: n, range: snaps.length ? [snaps[0]!.number, snaps[snaps.length - 1]!.number] : null }, "fatal");
  return s;
}

/** Snapshot n, readable; the error names why it cannot be read. */
export function readableSnapshot(snaps: readonly SnapshotEntry[], n: number): Snapshot {
  const s = findSnapshot(snaps, n);
  if (!isReadable(s)) throw fatal(s.reason);
  return s;
}

/**
 * Parse a snapshot number as the user typed it: `12` or `#12`; exact (no
 * spaces, no sign), so at most the ten digits a snapshot ref has.
 */
export function parseSnapshotNumber(arg: string): number | null {
  const m = /^#?0*([0-9]{1,10})$/.exec(arg);
  return m ? Number(m[1]) : null;
}

/**
 * A date as Git reads one (`yesterday`, `10.minutes.ago`, `2026-12-01 17:00`,
 * `@1700000000`), in unix seconds. One Git process: an expiry-date config
 * value goes through Git's own careful date parser, which, unlike --since,
 * refuses what is not a date. `now` and `all` are the end of time, `never` 0.
 */
export async function parseGitDate(repo: Repo, date: string): Promise<number> {
  const r = await repo.git.run(["-c", `undo.date=${date}`, "config", "--type=expiry-date", "undo.date"], { okExit: [1, 128, 129] });
  const answer = new TextDecoder().decode(r.stdout).trim();
  if (r.exitCode !== 0 || !/^[0-9]+$/.test(answer)) throw refused({ kind: "not-a-git-date", date }, "usage");
  const t = Number(answer);
  return Number.isSafeInteger(t) ? t : Infinity;
}

const AT_DATE = /^@\{(.*)\}$/s;

/** A snapshot date for messages: local time, as `git log --date=iso` prints it. */
export function snapshotTime(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  const p = (n: number) => String(n).padStart(2, "0");
  const off = -d.getTimezoneOffset();
  const zone = `${off < 0 ? "-" : "+"}${p(Math.floor(Math.abs(off) / 60))}${p(Math.abs(off) % 60)}`;
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${zone}`;
}

/**
 * The snapshot number an argument names: `12`, `#12`, or `@{<date>}`, the
 * newest snapshot recorded at or before that date (its committer date). The
 * one parser of snapshot arguments; `snaps` is read only for a date (the
 * dates of the refs, no state checked), when not given. The repository may be
 * given as a function opening it: a plain number needs none.
 */
export async function resolveSnapshotArg(repoOrOpen: Repo | (() => Promise<Repo>), arg: string, snaps?: readonly SnapshotEntry[]): Promise<number> {
  const at = AT_DATE.exec(arg);
  if (!at) {
    const n = parseSnapshotNumber(arg);
    if (n === null) throw refused({ kind: "not-a-snapshot-number", arg }, "usage");
    return n;
  }
  // Git's @{1} (an earlier value of a ref) and @{-1} (the branch before) are no dates:
  // its date parser would read a time of day from the digits. Refused, not guessed. More
  // than eight digits are a unix time, as Git's date parser reads them (@{1700000000}).
  if (/^\s*(-\s*[0-9]+|\+?[0-9]{1,8})\s*$/.test(at[1]!)) {
    throw refused({ kind: "not-a-date", arg }, "usage");
  }
  const repo = typeof repoOrOpen === "function" ? await repoOrOpen() : repoOrOpen;
  const t = await parseGitDate(repo, at[1]!);
  const all = snaps ?? decodeSnapshots(await scanUndoRefs(repo, repo.snapshotPrefix), repo.snapshotPrefix);
  let best: SnapshotEntry | undefined;
  // Dates need not grow with the numbers (a clock set back): the latest date wins, then the higher number.
  for (const s of all) if (s.date <= t && (!best || s.date > best.date || (s.date === best.date && s.number > best.number))) best = s;
  if (best) return best.number;
  if (!all.length) throw refused({ kind: "no-snapshots" });
  const first = all.reduce((a, b) => (b.date < a.date ? b : a));
  throw refused({ kind: "none-at-date", date: at[1]!, first: first.number, firstDate: first.date });
}

/** A ref under refs/undo/ that is not a snapshot, and why. */
export interface StrayUndoRef {
  ref: string;
  why: "name" | "symbolic" | "not-a-commit" | "missing";
}

const SNAPSHOT_NAME = /^refs\/undo\/(?:worktrees\/[^/]+\/)?snapshots\/[0-9]{10}$/;

/**
 * Refs under refs/undo/ that no reader takes for a snapshot: a name that is
 * not a sequence's prefix and ten digits, a symbolic ref, a ref to something
 * other than a commit, or to an object that is missing. Readers skip them;
 * `doctor` lists them. Types come from cat-file, not for-each-ref, which
 * fails as a whole on one missing object.
 */
export async function strayUndoRefs(repo: Repo): Promise<StrayUndoRef[]> {
  const out = await repo.git.records(["for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)%00", "refs/undo/"]);
  const listed: { ref: string; id: string; symref: string }[] = [];
  for (let i = 0; i + 2 < out.length; i += 3) listed.push({ ref: out[i]!.replace(/^\n/, ""), id: out[i + 1]!, symref: out[i + 2]! });
  const types = listed.length ? (await repo.git.text(["cat-file", "--batch-check=%(objecttype)"], { input: listed.map((l) => `${l.id}\n`).join("") })).split("\n") : [];
  const stray: StrayUndoRef[] = [];
  listed.forEach(({ ref, symref }, i) => {
    const type = types[i] ?? "";
    if (!SNAPSHOT_NAME.test(ref)) stray.push({ ref, why: "name" });
    else if (symref) stray.push({ ref, why: "symbolic" });
    else if (type.endsWith(" missing") || type === "") stray.push({ ref, why: "missing" });
    else if (type !== "commit") stray.push({ ref, why: "not-a-commit" });
  });
  return stray;
}

/** What damaged snapshots lack: every object missing, and the snapshots (by commit) that need each. */
export interface MissingObjects {
  missing: ObjectId[];
  /** The snapshot commits whose history or state tree reaches a missing object, with the ones each needs. */
  needing: Map<ObjectId, ObjectId[]>;
}

/**
 * Objects this worktree's snapshots hold that the repository has lost (a
 * damaged repository, a pack deleted by hand, snapshots fetched from a
 * shallow or partial clone): the commits they keep (and those commits'
 * history), and every object of their state trees; and which snapshots need
 * them. Two Git processes whatever the number of snapshots; only when some
 * are missing, two more per snapshot at most, to tell which snapshots need
 * them (Git's walk does not say where it met an object). Git's own gc, repack
 * and fsck fail on such a snapshot; a restore that needs one refuses and
 * names it.
 */
export async function missingSnapshotObjects(repo: Repo, snaps: readonly Pick<SnapshotEntry, "commit">[]): Promise<MissingObjects> {
  const commits = [...new Set(snaps.map((s) => s.commit))];
  const found = (out: string) => new Set(out.split("\n").flatMap((line) => (line.startsWith("?") ? [line.slice(1).trim()] : [])));
  // The commits and their history (parents keep the refs' commits), then each state tree's objects.
  const history = ["rev-list", "--missing=print", "--stdin"];
  const trees = ["rev-list", "--objects", "--no-walk", "--missing=print", "--stdin"];
  const walk = async (args: string[], ids: readonly ObjectId[]) => (ids.length ? found(await repo.git.text(args, { input: ids.map((c) => `${c}\n`).join(""), okExit: [128] })) : new Set<ObjectId>());
  const [lostHistory, lostTrees] = [await walk(history, commits), await walk(trees, commits)];
  const needing = new Map<ObjectId, ObjectId[]>();
  if (lostHistory.size || lostTrees.size) {
    for (const c of commits) {
      const lost = new Set([...(lostHistory.size ? await walk(history, [c]) : []), ...(lostTrees.size ? await walk(trees, [c]) : [])]);
      if (lost.size) needing.set(c, [...lost]);
    }
  }
  return { missing: [...new Set([...lostHistory, ...lostTrees])], needing };
}
