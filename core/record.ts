// Recording, the use case: capture the state, skip it when nothing changed,
// store it (core/snapshots/store.ts); and the words for a configuration Git dies on.
import { refused, type Refused } from "./errors.ts";
import { GitError } from "./git.ts";
import { withLock } from "./lock.ts";
import type { Repo } from "./repo.ts";
import { clearStaleReservation } from "./worker-files.ts";
import { withQuarantine } from "./git-data/quarantine.ts";
import { dropCaches } from "./undo-files.ts";

import { captureLive } from "./capture.ts";
import { type RecordOptions, type RecordOutcome, commitCapture } from "./snapshots/store.ts";

/** Record a snapshot, taking capture.lock. Restore snapshots are always created. */
export async function record(repo: Repo, opts: RecordOptions): Promise<RecordOutcome> {
  clearStaleReservation(repo.undoDir);
  try {
    // Its objects reach the store only once its snapshot is about to name them (core/git-data/quarantine.ts).
    return await againWithoutCaches(repo, () => withLock(repo.undoDir, () => withQuarantine(repo, (moveIn) => recordLocked(repo, { ...opts, beforeRef: moveIn }))), REF_TO_MISSING_OBJECT);
  } catch (e) {
    throw (await configRefusal(repo, e)) ?? e;
  }
}

/** Git's words for an object it cannot find (mktree, write-tree, commit-tree), wherever its own wording varies. */
const MISSING_OBJECT = /\b(?:is unavailable|invalid object|not a valid object|missing object|unable to read|bad object)\b/i;

/**
 * update-ref's words (every Git, both ref formats) for a new value naming an
 * object that is gone: a `git prune --expire=now` that ran between a
 * recording's objects reaching the store and its ref naming them. The ref
 * was not written; a recording can simply go again.
 */
const REF_TO_MISSING_OBJECT = /\bnonexistent object\b/i;

/**
 * Run `attempt`; when Git fails on an object a cache named that is gone (a
 * prune, a pack deleted by hand, a capture thrown away with its quarantine),
 * or on what `also` matches, drop the caches and run it once more, at once.
 * For a recording and for a restore, whose Git errors that reach here come
 * before any change.
 */
export async function againWithoutCaches<T>(repo: Repo, attempt: () => Promise<T>, also?: RegExp): Promise<T> {
  try {
    return await attempt();
  } catch (e) {
    if (!(e instanceof GitError) || !(MISSING_OBJECT.test(e.stderr) || also?.test(e.stderr))) throw e;
    dropCaches(repo.undoDir);
    return await attempt();
  }
}

/** A configuration value Git dies on, as its error names it. */
export interface BadConfig {
  /** The key as Git prints it (lower case), or null when only a file and line are named. */
  key: string | null;
  value: string | null;
  /** The file and line of a line Git cannot parse at all. */
  where: string | null;
}

/**
 * The configuration problem in Git's error output, if that is what it is.
 * Git words these "bad <type> config value '<value>' for '<key>'", "bad config
 * variable '<key>' in file ...", "bad config line <n> in file <f>": the quoted
 * parts are read, the rest of the wording is not relied on.
 */
export function badConfigIn(stderr: string): BadConfig | null {
  for (const line of stderr.split("\n")) {
    if (!/\bconfig\b/i.test(line)) continue;
    const valueFor = /'([^']*)' for '([^']+)'/.exec(line);
    if (valueFor) return { key: valueFor[2]!, value: valueFor[1]!, where: null };
    const variable = /config variable '([^']+)'/.exec(line);
    if (variable) return { key: variable[1]!, value: null, where: null };
    const unparsed = /config line (\d+) in (?:file |blob |standard input|command line)?(.*)$/.exec(line);
    if (unparsed) return { key: null, value: null, where: `${unparsed[2]!.trim() || "the configuration"}, line ${unparsed[1]}` };
  }
  return null;
}

/** The scopes `git config` can edit (the others: the command line, the environment). */
const EDITABLE_SCOPES = ["local", "global", "system", "worktree"] as const;

/**
 * A recording that failed because Git refuses a configuration value (Git 2.55's
 * `git add` dies on a bad color.ui, every Git on a bad core.autocrlf), worded
 * with the key and how to fix it; null for any other failure.
 */
export async function configRefusal(repo: Repo, e: unknown): Promise<Refused | null> {
  const stderr = e instanceof GitError ? e.stderr : e instanceof Error ? e.message : "";
  const bad = badConfigIn(stderr);
  if (!bad) return null;
  if (bad.key === null) return refused({ kind: "config-unreadable", where: bad.where ?? "the configuration" }, "fatal");
  // Where the value is set, for the right `git config` (a lookup only on this failure path).
  let scope = "local";
  let origin = "";
  try {
    const r = await repo.git.run(["config", "-z", "--show-scope", "--show-origin", "--get-all", bad.key], { okExit: [1] });
    const parts = new TextDecoder().decode(r.stdout).split("\0");
    if (parts.length >= 3) {
      scope = parts[parts.length - 4] ?? parts[0]!;
      origin = (parts[parts.length - 3] ?? parts[1]!).replace(/^file:/, "");
    }
  } catch {
    /* the lookup is a courtesy */
  }
  const editable = EDITABLE_SCOPES.find((s) => s === scope) ?? null;
  return refused({ kind: "config-value", key: bad.key, value: bad.value, scope: editable, origin }, "fatal");
}

/** Record with capture.lock already held by the caller. */
export async function recordLocked(repo: Repo, opts: RecordOptions): Promise<RecordOutcome> {
  const capture = await captureLive(repo, opts.intact ? { lockHeld: true, intact: opts.intact } : { lockHeld: true });
  return commitCapture(repo, capture, opts);
}
