// The words for the core's typed refusals (core/errors.ts Refusal): each kind
// once, for the error line, the picker's preview, doctor and the worker's log.
import { Refused, type Refusal } from "../core/errors.ts";
import { escapeControls } from "../core/text.ts";

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
    case "pathspec-outside":
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
  }
}

/** What an error says to the user: a typed refusal in its words, anything else its own message. */
export const errorText = (e: unknown): string => (e instanceof Refused ? refusalText(e.refusal) : e instanceof Error ? e.message : String(e));
