// `git undo show <n> -p`: Git's own diff between a base state (the current
// state, or snapshot --against <m>) and snapshot n, so it colours and pages
// exactly as `git diff` does. Lines marked + are what n has and the base lacks:
// what restoring n would bring back.
import { refuse } from "../core/errors.ts";
import type { Snapshot, SnapshotEntry } from "../core/format/index.ts";
import { readableSnapshot } from "../core/snapshots/history.ts";
import { loadState } from "../core/snapshots/read-state.ts";
import { diffArgs, stateDiffArgs, treePair, type DiffFormat } from "../core/patch.ts";
import { decodeBytes } from "../core/bytes.ts";
import type { ObjectId } from "../core/format/index.ts";
import { captureLive } from "../core/capture.ts";
import type { Repo } from "../core/repo.ts";
import { outputColumns } from "./wrap.ts";
import type { CommandContext } from "./context.ts";

export async function showPatch(ctx: CommandContext, repo: Repo, snaps: readonly SnapshotEntry[], snap: Snapshot, against: number | null): Promise<number> {
  const [base, target] = await Promise.all([
    // The current state is read as the recorder reads it (untracked files
    // included) without recording anything.
    against === null ? captureLive(repo).then((c) => c.state) : loadState(repo, readableSnapshot(snaps, against).tree, `snapshot #${against}`),
    loadState(repo, snap.tree, `snapshot #${snap.number}`),
  ]);
  const pair = treePair(base, target);
  if (!pair) throw refuse("no files to compare: this repository records refs and HEAD only");
  return gitDiff(ctx, repo, (color) => diffArgs(pair, color));
}

/**
 * Git's own diff, run for the user to see: Git decides colour and paging
 * itself, unless the user told us. `args` gets the colour to pass on.
 */
export async function gitDiff(ctx: CommandContext, repo: Repo, args: (color: "always" | "never" | "auto" | undefined) => string[]): Promise<number> {
  const { output } = ctx;
  const color = output.colorFlagGiven() ? output.colorWhen() : ctx.io.env.NO_COLOR ? "never" : undefined;
  const code = await repo.git.runInteractive(args(color));
  // A pager the user quit early is not an error (Git exits 141 on SIGPIPE).
  return code === 0 || code === 141 ? 0 : 128;
}

const SGR = /\x1b\[[0-9;:]*m/g;
/** A `diff --git` line of a file under index/ or worktree/ (Git quotes a path with unusual bytes). */
const FILE_SECTION = /^diff --git "?a\/(?:index|worktree)\//;

/**
 * `git undo diff`: Git's diff of two state trees, printed by us rather than by
 * Git, because the refs, HEAD and stash records are a snapshot's text (a
 * fetched one's stash message may hold terminal sequences): every line from
 * them, every header and path, and every --stat or --name-only line goes
 * through the escaping every other output has (cli/ui.ts Output.write). The lines of
 * the files themselves are written as Git prints them, as `git diff` would
 * show them. Paged as `git undo show` is.
 */
export async function printStateDiff(ctx: CommandContext, repo: Repo, from: ObjectId, to: ObjectId, format: DiffFormat): Promise<number> {
  const { write, writeBytes } = ctx.output;
  await ctx.pager.start(repo);
  const columns = outputColumns(ctx.io, 1);
  const { stdout } = await repo.git.run(stateDiffArgs(from, to, format, ctx.output.colorEnabled() ? "always" : "never"), columns === null ? {} : { env: { COLUMNS: String(columns) } });
  let fileSection = false; // a file's diff (index/, worktree/), not a record's
  let inHunks = false; // past its header
  let start = 0;
  while (start < stdout.length) {
    const nl = stdout.indexOf(10, start);
    const end = nl < 0 ? stdout.length : nl + 1;
    const bytes = stdout.subarray(start, end);
    start = end;
    const line = decodeBytes(bytes);
    // A line of a file's hunk starts with +, - or a space (after its colour): never with these.
    const bare = format === "patch" ? line.replace(SGR, "") : "";
    if (bare.startsWith("diff --git ")) [fileSection, inHunks] = [FILE_SECTION.test(bare), false];
    else if (bare.startsWith("@@")) inHunks = true;
    if (fileSection && inHunks && !bare.startsWith("@@")) writeBytes(1, bytes);
    else write(1, line);
  }
  return 0;
}
