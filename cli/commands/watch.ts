// git undo watch: record edits made outside Git as they happen. Watches the
// working tree (not .git; paths Git ignores trigger nothing), waits for quiet
// like the worker, records change snapshots, prints one line per snapshot,
// and never records while a Git command holds index.lock.
import { watch as fsWatch, type FSWatcher } from "node:fs";
import { refuse } from "../../core/errors.ts";
import { record } from "../../core/record.ts";
import type { Repo } from "../../core/repo.ts";
import { indexLocked, operationMarker } from "../../core/git-data/operation.ts";
import { settleDelay, type SettleView } from "../../worker/settle.ts";
import type { Command } from "../command.ts";
import { leftOutLine } from "./snapshot.ts";
import { escapeControls } from "../../core/text.ts";

/** Paths inside a git directory (ours, or a submodule's) are Git's business, not edits. */
const inGitDir = (rel: string): boolean => rel === ".git" || rel.startsWith(".git/") || rel.includes("/.git/") || rel.endsWith("/.git");

/** The paths among `paths` (relative to the worktree top) that Git ignores; tracked files never are. */
async function ignoredPaths(repo: Repo, paths: readonly string[]): Promise<Set<string>> {
  if (paths.length === 0) return new Set();
  const r = await repo.git.run(["check-ignore", "-z", "--stdin"], { input: paths.join("\0") + "\0", okExit: [1] });
  return new Set(new TextDecoder().decode(r.stdout).split("\0").filter(Boolean));
}

export const watch: Command = {
  name: "watch",
  usage: "git undo watch\n\nRecords a change snapshot once edits have been quiet for undo.settle ms.",
  options: {},
  async run(_, ctx) {
    const { out, write } = ctx.output;
    const repo = await ctx.openRepo();
    if (repo.workTree === null) throw refuse("git undo watch needs a working tree; this repository is bare");
    const top = repo.workTree;
    const { settleMs, settleMaxMs } = repo.config;

    const seen = new Set<string>();
    let unclassified = false;
    let lastEdit: number | null = null; // the newest edit that counts (not ignored)
    let firstEdit: number | null = null;
    let stopping = false;
    let wake: (() => void) | null = null;
    const poke = () => {
      wake?.();
      wake = null;
    };

    const watcher: FSWatcher = fsWatch(top, { recursive: true }, (_event, filename) => {
      const rel = filename === null ? null : String(filename);
      if (rel !== null && inGitDir(rel)) return;
      if (rel === null) unclassified = true;
      else seen.add(rel);
      poke();
    });

    const onSigint = () => {
      stopping = true;
      poke();
    };
    const stopListening = ctx.io.host?.onInterrupt(onSigint) ?? (() => {});

    // Files left out for their size are named when that list changes, not at every recording.
    let leftOutSaid = "";
    const recordNow = async () => {
      const result = await record(repo, { kind: "change" });
      if (result.created) out(`#${result.snapshot.number} ${escapeControls(result.snapshot.summary)}`);
      const leftOut = result.capture.leftOut ?? [];
      const said = leftOut.map((f) => f.path).join("\0");
      if (said !== leftOutSaid && leftOut.length) write(2, `${leftOutLine(leftOut, repo.config.maxNewFileSize)}\n`);
      leftOutSaid = said;
    };

    out(`watching ${top} (Ctrl-C stops)`);
    await recordNow();
    try {
      while (!stopping) {
        // Which of the new events count: Git decides what is ignored, in one batch.
        if (seen.size || unclassified) {
          const paths = [...seen];
          seen.clear();
          const counted = unclassified || paths.length > (await ignoredPaths(repo, paths)).size;
          unclassified = false;
          if (counted) {
            lastEdit = Date.now();
            firstEdit ??= lastEdit;
          }
        }
        let wait = 1000;
        if (lastEdit !== null) {
          const now = Date.now();
          // The worker's policy as for a mark with no processes to see: the edits quiet for undo.settle alone.
          const view: SettleView = { now, markMs: lastEdit, firstSeenMs: firstEdit!, running: null, endedMs: null, operation: false, indexLocked: false, settleMs, settleMaxMs, blindQuietMs: 0 };
          wait = settleDelay(view);
          // A few ms past the quiet's end: woken sooner, the loop would only wait again.
          if (wait > 0) wait += 5;
          // Whether Git is busy matters only once the edits are quiet (with reftable it may take Git).
          else wait = settleDelay({ ...view, operation: (await operationMarker(repo)) !== null, indexLocked: indexLocked(repo) });
          // Past settleMax the worker records anyway; watch still never records under a live index.lock.
          if (wait === 0 && indexLocked(repo)) wait = 50;
          if (wait === 0) {
            lastEdit = firstEdit = null;
            await recordNow();
            continue;
          }
        }
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, wait);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
    } finally {
      watcher.close();
      stopListening();
    }
    write(2, "stopped watching\n");
    return 0;
  },
};
