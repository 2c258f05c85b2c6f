// git undo restore <n>: put snapshot n's state back, whole or in part.
import { PARTS, type Part, type PartialSelection } from "../../core/compose.ts";
import { usage } from "../../core/errors.ts";
import { resolveSnapshotArg } from "../../core/snapshots/history.ts";
import type { Command, Parsed } from "../command.ts";
import { RESTORE_FLAGS, RESTORE_OPTIONS, runRestore } from "./undo.ts";

export const restore: Command = {
  name: "restore",
  usage: [
    "git undo restore <n> [--force] [--dry-run] [--skip-missing]",
    "   or: git undo restore <n> [--staged | --worktree] [--dry-run] [--] <pathspec>...",
    "   or: git undo restore <n> [--ref <ref>]... [--stash] [--only <parts>] [--dry-run]",
    "",
    "Restores snapshot <n> (as 'git undo list' numbers it), or @{<date>}: the",
    "newest snapshot recorded at or before <date> (@{yesterday}, @{2.hours.ago}).",
    "",
    "With pathspecs, --ref, --stash or --only, only those parts come back from <n>",
    "and everything else stays as it is now; the result is recorded as a new",
    "change, which plain 'git undo' undoes.",
    "",
    RESTORE_FLAGS,
    "    --skip-missing  when objects the snapshot needs are gone (pruned by git gc",
    "                    after the snapshots holding them were deleted), restore",
    "                    everything else and list the refs, HEAD and stash entries",
    "                    left as they are; exits 0 with a warning line. Without it",
    "                    such a restore is refused (exit 1) and changes nothing",
    "    <pathspec>...   just these files and their index entries, as <n> had them",
    "                    (created, changed, or removed where <n> lacked them)",
    "    -S, --staged    with pathspecs: only the index entries",
    "    -W, --worktree  with pathspecs: only the files on disk",
    "    --ref <ref>     just this ref (feature, v1, origin/main), created, moved or",
    "                    deleted as in <n>; may be given more than once",
    "    --stash         just the stash list",
    "    --only <parts>  just these parts, comma-separated: refs, head, index,",
    "                    worktree, stash (with pathspecs, index and worktree are",
    "                    limited to them)",
  ].join("\n"),
  options: {
    ...RESTORE_OPTIONS,
    "skip-missing": { type: "boolean" },
    staged: { type: "boolean", short: "S" },
    worktree: { type: "boolean", short: "W" },
    ref: { type: "string", multiple: true },
    stash: { type: "boolean" },
    only: { type: "string", multiple: true },
  },
  takesArguments: true,
  async run({ values, positionals }, ctx) {
    if (positionals.length === 0) throw usage("git undo restore takes a snapshot number, such as 'git undo restore 12'");
    const [arg, ...paths] = positionals as [string, ...string[]];
    const selection = partialSelection(values, paths);
    // A number needs no repository yet; a date is resolved against this worktree's snapshots.
    const n = await resolveSnapshotArg(() => ctx.openRepo(), arg);
    if (selection === null) return runRestore({ kind: "restore", number: n }, values, ctx);
    return runRestore({ kind: "partial", number: n, selection }, values, ctx);
  },
};

/** The parts `restore` was limited to, or null for the whole state. */
export function partialSelection(values: Parsed["values"], paths: readonly string[]): PartialSelection | null {
  const only = ((values.only as string[] | undefined) ?? []).flatMap((v) => v.split(",")).map((p) => p.trim());
  const refs = (values.ref as string[] | undefined) ?? [];
  const staged = Boolean(values.staged);
  const worktree = Boolean(values.worktree);
  for (const p of only) {
    if (!(PARTS as readonly string[]).includes(p)) throw usage(`--only takes ${PARTS.join(", ")} (got '${p}')`);
  }
  if ((staged || worktree) && !paths.length) throw usage(`--${staged ? "staged" : "worktree"} limits a restore of pathspecs: name the files after the snapshot number`);
  if (!paths.length && !refs.length && !only.length && !values.stash) return null;
  if (values["skip-missing"]) throw usage("--skip-missing is for restoring a whole snapshot");
  const parts = new Set(only as Part[]);
  if (values.stash) parts.add("stash");
  if (paths.length) {
    // Pathspecs name files: both sides by default, as the index and the files had them.
    const index = staged || (!worktree && (parts.has("index") || !parts.has("worktree")));
    const files = worktree || (!staged && (parts.has("worktree") || !parts.has("index")));
    if (index) parts.add("index");
    if (files) parts.add("worktree");
    if (!index) parts.delete("index");
    if (!files) parts.delete("worktree");
  }
  return { parts: [...parts], paths: [...paths], refs: [...refs] };
}
