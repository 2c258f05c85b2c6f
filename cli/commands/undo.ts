// git undo [N]: go back N snapshots (default 1), skipping the navigation streak.
import { existsSync } from "node:fs";
import { fatal, refuse, usage } from "../../core/errors.ts";
import { hooksEnabled } from "../../core/hooks/enabled.ts";
import { scanNewestUndoRefs } from "../../core/git-data/refs/index.ts";
import { reportLines } from "../report.ts";
import { restore, type RestoreRequest } from "../../core/restore/index.ts";
import { parseCount, type Command, type Options, type Parsed } from "../command.ts";
import { RECORDING_OFF, relativeAge } from "../ui.ts";
import { fitToOutput } from "../wrap.ts";
import type { CommandContext } from "../context.ts";

export const RESTORE_OPTIONS: Options = {
  force: { type: "boolean", short: "f" },
  "dry-run": { type: "boolean", short: "n" },
};

export const RESTORE_FLAGS = [
  "    -f, --force     restore even while a rebase, merge, cherry-pick, revert, am or",
  "                    bisect is in progress (ended first with Git's own --quit), and",
  "                    move branches other worktrees have checked out",
  "    -n, --dry-run   print what would change, change nothing",
].join("\n");

/** A step count such as the 3 of `git undo 3`. */
export function steps(positionals: string[], command: string): number {
  if (positionals.length > 1) throw usage(`${command} takes at most one number, such as '${command} 2'`);
  const arg = positionals[0];
  if (arg === undefined) return 1;
  return parseCount("the number of steps", arg);
}

/** Shared by undo, redo and restore: run the restore and print its report. */
export async function runRestore(request: RestoreRequest, values: Parsed["values"], ctx: CommandContext): Promise<number> {
  const { out, color } = ctx.output;
  const repo = await ctx.openRepo();
  // Where init has not run and nothing was ever recorded, say so before the
  // restore reads the state (which would fill <gitdir>/undo with its caches).
  // A <gitdir>/undo folder says something was: no need to list the snapshots.
  if (!hooksEnabled(repo) && !existsSync(repo.undoDir) && !(await scanNewestUndoRefs(repo, repo.snapshotPrefix, 1)).length) {
    if ("steps" in request) throw refuse(`nothing to ${request.kind}: ${RECORDING_OFF}`);
    if ("number" in request) throw fatal(`no snapshot #${request.number}: ${RECORDING_OFF}`);
  }
  const force = Boolean(values.force);
  const result = await restore(repo, request, { force, dryRun: Boolean(values["dry-run"]), skipMissing: Boolean(values["skip-missing"]), ...(ctx.io.guard ? { guard: ctx.io.guard } : {}) });
  const lines = reportLines(result, { age: (t) => relativeAge(t), strong: color.bold, dim: color.dim }, force);
  for (const l of fitToOutput(ctx.io, lines, 1)) out(l);
  return result.dryRun && result.plan.blockers.length ? 1 : 0;
}

/** `git undo [N]` or `git undo redo [N]`: N snapshots back or forward from the position. */
export function stepCommand(kind: "undo" | "redo"): Command {
  const invokedAs = kind === "undo" ? "git undo" : "git undo redo";
  return {
    name: kind,
    usage: [`${invokedAs} [<N>] [--force] [--dry-run]`, "", `Restores the state N snapshots ${kind === "undo" ? "before" : "after"} the current position (default 1).`, "", RESTORE_FLAGS].join("\n"),
    options: RESTORE_OPTIONS,
    takesArguments: true,
    run: ({ values, positionals }, ctx) => runRestore({ kind, steps: steps(positionals, invokedAs) }, values, ctx),
  };
}

export const undo = stepCommand("undo");
