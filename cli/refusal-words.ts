// The words for the core's typed refusals (core/errors.ts Refusal): each kind
// once, for the error line, the picker's preview, doctor and the worker's log.
import { Refused, type HookProblem, type Refusal } from "../core/errors.ts";
import { snapshotTime } from "../core/snapshots/history.ts";
import { escapeControls, nameList } from "../core/text.ts";

/** The state a run of restores left, and the one command back to it (the report says it too). */
export const beforeRestoresPhrase = (n: number): string => `where you were before: git undo restore ${n}`;

/** A path as one sh word. */
const shellQuoted = (path: string): string => `'${path.replace(/'/g, "'\\''")}'`;

const setIn = (origin: string | null) => (origin ? ` (set in ${origin})` : "");

/** The `git config` option that edits a scope. */
const SCOPE_OPTION = { local: "", global: " --global", system: " --system", worktree: " --worktree" } as const;

export function refusalText(r: Refusal): string {
  switch (r.kind) {
    case "hooks-folder-unusable":
      return (
        `${r.problem}${setIn(r.origin)}.\n` +
        "Automatic recording needs Git to run hooks: unset core.hooksPath or point it at a folder, then run 'git undo init' again.\n" +
        "Snapshots can still be taken by hand with 'git undo snapshot'."
      );
    case "hooks-folder-outside":
      return (
        `core.hooksPath points at ${r.dir}, outside this repository${setIn(r.origin)}.\n` +
        "Hooks there run in every repository that uses that folder. git-undo's hooks only act in repositories\n" +
        "where 'git undo init' ran; to install them there anyway, run 'git undo init --global-hooks'."
      );
    case "ref-not-by-name":
      return r.ref === "HEAD" ? "HEAD is not restored by name: use --only head" : `${r.ref} is not restored by name${r.ref === "refs/stash" ? ": use --stash" : ""}`;
    case "config-unreadable":
      return `Git cannot read its configuration (${r.where}): fix that line`;
    case "config-value": {
      const shown = `${r.key}${r.value !== null ? `=${r.value}` : ""}`;
      const fix = r.scope !== null ? `git config${SCOPE_OPTION[r.scope]} --unset ${r.key}, or fix it` : `it is given ${r.origin ? `as ${r.origin}` : "on the command line"}: fix it there`;
      return `Git refuses the configuration value ${shown}${r.origin && r.scope !== null ? ` in ${r.origin}` : ""} (${fix})`;
    }
    case "not-a-date":
      return `'${r.arg}' is not a date: git undo takes a snapshot number (such as 12, from 'git undo list') or @{<date>} (such as @{yesterday}); 'git undo <N>' goes back N steps`;
    case "no-snapshots":
      return "no snapshots yet (git undo snapshot records one)";
    case "run-outside-tree":
      return "run git undo log -- <pathspec> inside the working tree";
    case "rescue-not-an-id":
      return `'${escapeControls(r.id)}' is not an object id (4 to 64 hex digits, as 'git undo rescue' lists them)`;
    case "rescue-not-lost":
      return `nothing lost has the id ${r.prefix}: 'git undo rescue' lists what is lost (what a ref or a snapshot holds is not)`;
    case "rescue-needs-path":
      return `${r.id} is a file's content: name the file to write it to, 'git undo rescue ${r.id} -- <path>'`;
    case "rescue-stash-part":
      return `${r.id} is part of the stash entry ${r.entry}: 'git undo rescue ${r.entry}' brings the entry back`;
    case "rescue-path-exists":
      return `'${escapeControls(r.path)}' exists: git undo rescue writes only where nothing is (choose another path)`;
    case "rescue-in-stash":
      return `the stash list already has ${r.id} (git stash list)`;
    case "undo-file-blocked":
      return r.what === "lock"
        ? `${r.path} is a ${r.is}, not git-undo's lock; nothing is recorded or restored while it is there: rm -r ${shellQuoted(r.path)}`
        : `${r.path} is a ${r.is}, not git-undo's file; nothing is restored while it is there: rm -r ${shellQuoted(r.path)}`;
    case "lock-foreign":
      return `${r.path} is held by git-undo on another host (${r.host ?? "?"}, pid ${r.pid ?? "?"}), sharing this repository; if no git-undo runs there, remove it: rm ${shellQuoted(r.path)}`;
    case "lock-busy":
      return `another git-undo is recording or restoring in this worktree (${r.path}${r.pid !== null ? ` held by pid ${r.pid}` : ""}); try again`;
    case "numbers-used-up":
      return `no snapshot number is left after ${r.ref}; delete it if you did not make it (git update-ref -d ${r.ref})`;
    case "bad-age":
      return `bad age '${r.value}' for '${r.key}': use forms like 90d, 2.weeks, 6.months or never`;
    case "nothing-to-step":
      if (r.direction === "undo" && r.empty) return "nothing to undo: no snapshots yet";
      return r.before === undefined ? `nothing to ${r.direction}` : `nothing to ${r.direction}; ${beforeRestoresPhrase(r.before)}`;
    case "too-few-steps":
      return `cannot ${r.direction} ${r.steps} steps: only ${r.available} ${r.available === 1 ? "is" : "are"} available`;
    case "not-a-snapshot-number":
      return `'${r.arg}' is not a snapshot number (such as 12, or @{yesterday})`;
    case "not-a-git-date":
      return `'${r.date}' is not a date Git understands`;
    case "none-at-date":
      return `no snapshot was recorded at or before ${r.date}; the first is #${r.first} from ${snapshotTime(r.firstDate)}`;
    case "hooks-in-the-way":
      // Joined into one error line: the problems stay apart.
      return `cannot install the hooks:\n  ${r.problems.map(hookProblemText).join(";\n  ")}`;
    case "pathspec-magic":
      return `pathspec magic is not supported here: '${r.spec}'`;
    case "pathspec-outside-tree":
      return `'${r.spec}' is outside the working tree`;
    case "bad-regex":
      return `not a regular expression Git can use: '${escapeControls(r.pattern)}'${r.reason ? ` (${escapeControls(r.reason)})` : ""}`;
    case "no-such-ref":
      return `no ref '${r.ref}' in snapshot #${r.number} or now`;
    case "pathspec-no-match":
      return `pathspec '${r.spec}' did not match any file in snapshot #${r.number} or now`;
    case "bare-no-index":
      return "a bare repository has no index";
    case "files-not-recorded":
      return r.number === null
        ? "the files are not recorded here (undo.worktree is false)"
        : `snapshot #${r.number} has no record of the files (${r.why === "no-work-tree" ? "it was recorded without a work tree" : "undo.worktree was false"})`;
    case "revert-oldest":
      return `snapshot #${r.number} is the oldest one: there is no state before it to revert to`;
    case "nothing-to-change":
      return r.revert ? `nothing to revert: what #${r.number} changed is not in the current state` : `nothing to restore: ${r.what} already as in #${r.number}`;
    case "keep-entry-damaged":
      return `snapshot #${r.number} is damaged: its keep entry does not give back tag ${r.tag}`;
    case "paths-git-refuses":
      return `snapshot #${r.number} records ${r.paths.length === 1 ? "a path" : "paths"} Git refuses to write: ${nameList(r.paths)}`;
    case "rescue-ambiguous":
      return `the id ${r.prefix} is ambiguous: ${r.ids.join(", ")}`;
    case "rescue-not-a-file":
      return `${r.id} is a ${r.is}, not a file's content: it comes back without a path`;
    case "rescue-own-commit":
      return `${r.id} is one of git-undo's own commits (a snapshot deleted since), not lost work`;
    case "rescue-branch-exists":
      return `${r.ref.replace(/^refs\/heads\//, "branch ")} exists: the rescue would replace it (delete or rename it first)`;
    case "rescue-bad-branch":
      return `${r.ref} is not a valid branch name`;
    case "rescue-no-files":
      return r.bare ? "a bare repository has no files to write" : "the files are not recorded here (undo.worktree is false), so a written file could not be taken back";
    case "rescue-bad-path":
      return `'${escapeControls(r.path)}' is not a path Git would write`;
    case "rescue-not-a-folder":
      return `'${escapeControls(r.path)}' is a ${r.is}, not a folder: choose another path`;
    case "no-such-snapshot":
      return `no snapshot #${r.number}${r.range ? ` (this worktree has #${r.range[0]} to #${r.range[1]})` : ""}`;
    case "restore-not-started":
      return `could not restore: ${r.diskFull ? "no space left on the device" : errorText(r.cause)}; nothing was changed`;
    case "operation-not-ended":
      return `could not end the operation in progress (${r.markers.join(", ")} still there)`;
    case "restore-rolled-back":
      return `restore of #${r.number} failed and was rolled back, nothing changed: ${errorText(r.cause)}`;
    case "rollback-failed":
      return `restore of #${r.number} failed (${errorText(r.cause)}) and rolling it back failed too (${r.failures.join("; ")}); the state before the restore is snapshot #${r.before ?? "?"} (git undo restore ${r.before ?? "?"})`;
  }
}

function hookProblemText(p: HookProblem): string {
  switch (p.why) {
    case "tracked":
      return `${p.path} is tracked by this repository; git-undo does not change tracked files (add its block yourself, or use another core.hooksPath)`;
    case "local-exists":
      return `${p.path} exists already; git-undo keeps your ${p.hook ?? "own"} hook there when it chains it: move that file away`;
    case "not-regular":
      return `${p.path} is not a regular file`;
    case "not-executable":
      return `${p.path} exists but is not executable, so Git does not run it; make it executable or remove it`;
  }
}

/**
 * A message the worker logged, in words: a refusal is logged as its kind and
 * facts (core/errors.ts `Refused`), which are worded here; anything else, or
 * facts that cannot be worded, stays as it is.
 */
export function wordedLogMessage(text: string): string {
  const m = /^([a-z][a-z-]*) (\{.*\})$/.exec(text);
  if (!m) return text;
  try {
    const facts = JSON.parse(m[2]!) as { kind?: unknown };
    return facts.kind === m[1] ? (refusalTextOrNull(facts as Refusal) ?? text) : text;
  } catch {
    return text;
  }
}

/** A refusal's words, or null for facts that cannot be worded (kept by another version of git-undo). */
export function refusalTextOrNull(refusal: Refusal): string | null {
  try {
    return refusalText(refusal);
  } catch {
    return null;
  }
}

/** What an error says to the user: a typed refusal in its words, anything else its own message. */
export const errorText = (e: unknown): string => (e instanceof Refused ? refusalText(e.refusal) : e instanceof Error ? e.message : String(e));
