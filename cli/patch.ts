// `git undo show <n> -p`: Git's own diff between a base state (the current
// state, or snapshot --against <m>) and snapshot n, so it colours and pages
// exactly as `git diff` does. Lines marked + are what n has and the base lacks:
// what restoring n would bring back.
import { refuse } from "../core/errors.ts";
import type { Snapshot, SnapshotEntry } from "../core/format.ts";
import { readableSnapshot } from "../core/history.ts";
import { loadState } from "../core/read-state.ts";
import { diffArgs, treePair } from "../core/patch.ts";
import { captureLive } from "../core/capture.ts";
import type { Repo } from "../core/repo.ts";
import { colorFlagGiven, colorWhen } from "./ui.ts";
import { commandEnv } from "./io.ts";

export async function showPatch(repo: Repo, snaps: readonly SnapshotEntry[], snap: Snapshot, against: number | null): Promise<number> {
  const [base, target] = await Promise.all([
    // The current state is read as the recorder reads it (untracked files
    // included) without recording anything.
    against === null ? captureLive(repo).then((c) => c.state) : loadState(repo, readableSnapshot(snaps, against).tree, `snapshot #${against}`),
    loadState(repo, snap.tree, `snapshot #${snap.number}`),
  ]);
  const pair = treePair(base, target);
  if (!pair) throw refuse("no files to compare: this repository records refs and HEAD only");
  return gitDiff(repo, (color) => diffArgs(pair, color));
}

/**
 * Git's own diff, run for the user to see: Git decides colour and paging
 * itself, unless the user told us. `args` gets the colour to pass on.
 */
export async function gitDiff(repo: Repo, args: (color: "always" | "never" | "auto" | undefined) => string[]): Promise<number> {
  const color = colorFlagGiven() ? colorWhen() : commandEnv("NO_COLOR") ? "never" : undefined;
  const code = await repo.git.runInteractive(args(color));
  // A pager the user quit early is not an error (Git exits 141 on SIGPIPE).
  return code === 0 || code === 141 ? 0 : 128;
}
