// git undo diff <n> [<m>]: what snapshot n changed, or how two snapshots differ, in Git's diff format.
import { EMPTY_TREE } from "../../core/git-data/tree-diff.ts";
import { usage } from "../../core/errors.ts";
import { isReadable, type Snapshot, type SnapshotEntry } from "../../core/format/index.ts";
import { listSnapshots, readableSnapshot, resolveSnapshotArg } from "../../core/snapshots/history.ts";
import { loadState } from "../../core/snapshots/read-state.ts";
import type { DiffFormat } from "../../core/patch.ts";
import { hashLengthOf } from "../../core/repo.ts";
import type { Command } from "../command.ts";
import { printStateDiff } from "../patch.ts";

export const diff: Command = {
  name: "diff",
  usage: [
    "git undo diff <n> [<m>] [--stat | --name-only]",
    "",
    "What snapshot <n> changed against the snapshot before it, or with <m>, how",
    "<m> differs from <n> (numbers, or @{<date>}), in Git's diff format, paged",
    "and coloured as git undo show is. A state is shown as git-undo records it:",
    "'refs' (one line a ref: name, id, type...), 'HEAD', 'stash' (one line an",
    "entry), 'state' (an operation in progress), and the files under 'index/'",
    "(what was staged) and 'worktree/' (the files on disk).",
    "",
    "    --stat        a diffstat instead of the patch",
    "    --name-only   only the names of what changed",
  ].join("\n"),
  options: { stat: { type: "boolean" }, "name-only": { type: "boolean" } },
  takesArguments: true,
  async run({ values, positionals }, ctx) {
    if (positionals.length < 1 || positionals.length > 2) throw usage("git undo diff takes one or two snapshot numbers, such as 'git undo diff 12' or 'git undo diff 10 12'");
    if (values.stat && values["name-only"]) throw usage("--stat and --name-only cannot be used together");
    const format: DiffFormat = values.stat ? "stat" : values["name-only"] ? "name-only" : "patch";
    const repo = await ctx.openRepo();
    const snaps = await listSnapshots(repo);
    const numbers = await Promise.all(positionals.map((arg) => resolveSnapshotArg(repo, arg, snaps)));
    const first = readableSnapshot(snaps, numbers[0]!);
    const [from, to] = numbers.length === 2 ? [first.tree, readableSnapshot(snaps, numbers[1]!).tree] : [before(snaps, first)?.tree ?? EMPTY_TREE[hashLengthOf(repo)]!, first.tree];
    // Each state is checked as every reader checks a snapshot before use.
    await Promise.all(
      numbers.map((n) => {
        const s = readableSnapshot(snaps, n);
        return loadState(repo, s.tree, `snapshot #${s.number}`);
      }),
    );
    return printStateDiff(ctx, repo, from, to, format);
  },
};

/** The readable snapshot before `snap` in the sequence (null for the first): what `snap` changed is measured from it. */
function before(snaps: readonly SnapshotEntry[], snap: Snapshot): Snapshot | null {
  const earlier = snaps.filter((s): s is Snapshot => isReadable(s) && s.number < snap.number);
  return earlier[earlier.length - 1] ?? null;
}
