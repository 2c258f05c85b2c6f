// git undo show <n>: the trailers and what a snapshot holds.
import { encodeMessage } from "../../core/format.ts";
import { usage } from "../../core/errors.ts";
import { listSnapshots, resolveSnapshotArg, readableSnapshot, position } from "../../core/history.ts";
import { inspectSnapshot, headCommit } from "../../core/inspect.ts";
import { refLabel } from "../../core/describe.ts";
import { escapeControls } from "../../core/validate.ts";
import { openRepo } from "../../core/repo.ts";
import { recordingPending } from "../../core/settle.ts";
import { type Command } from "../command.ts";
import { startPager } from "../pager.ts";
import { showPatch } from "../patch.ts";
import { snapshotJson } from "./list.ts";
import { color, json, out, relativeAge, short } from "../ui.ts";

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export const show: Command = {
  name: "show",
  usage: [
    "git undo show <n> [--json]      (<n>: a number, or @{<date>} such as @{yesterday}:",
    "                                  the newest snapshot recorded at or before it)",
    "   or: git undo show <n> -p [--against <m>]",
    "",
    "    --json           machine-readable output",
    "    -p, --patch      Git's diff from the current state to snapshot <n>",
    "                     (+ lines are what restoring <n> brings back)",
    "    --against <m>    diff from snapshot <m> instead of the current state",
  ].join("\n"),
  options: { json: { type: "boolean" }, patch: { type: "boolean", short: "p" }, against: { type: "string" } },
  takesArguments: true,
  async run({ values, positionals }) {
    if (positionals.length !== 1) throw usage("git undo show takes one snapshot number, such as 'git undo show 12'");
    const repo = await openRepo();
    const snaps = await listSnapshots(repo);
    const snap = readableSnapshot(snaps, await resolveSnapshotArg(repo, positionals[0]!, snaps));
    if (values.patch || values.against !== undefined) {
      const against = values.against === undefined ? null : await resolveSnapshotArg(repo, String(values.against), snaps);
      return showPatch(repo, snaps, snap, against);
    }
    const d = await inspectSnapshot(repo, snap);
    const { state } = d;
    if (values.json) {
      json({
        ...snapshotJson(snap, position(snaps)),
        trailers: snap.trailers,
        HEAD: state.head.kind === "symbolic" ? { symbolic: state.head.target, commit: headCommit(state) } : { detached: state.head.commit },
        refs: state.refs.map((r) => ({
          name: r.name,
          object: r.object || null,
          type: r.type || null,
          symref: r.symrefTarget || null,
          peeled: r.peeledObject || null,
          peeledType: r.peeledType || null,
        })),
        stash: state.stash,
        staged: d.staged,
        unstaged: d.unstaged,
        untracked: d.untracked,
        conflicts: d.conflicts,
        inProgress: state.state,
        worktreeRecorded: state.worktree !== undefined,
      });
      return 0;
    }
    await startPager(repo);
    out(`${color.yellow(`snapshot #${snap.number}`)}  ${snap.trailers.kind}  ${relativeAge(snap.date)}  ${color.dim(snap.commit)}`);
    out(encodeMessage(snap).trimEnd());
    out();
    const head = headCommit(state);
    const headText =
      state.head.kind === "detached"
        ? `detached at ${short(state.head.commit)}`
        : `${state.head.target.replace(/^refs\/heads\//, "")}${head ? ` (${short(head)})` : " (unborn)"}`;
    out(`HEAD       ${headText}`);
    for (const r of state.refs) {
      if (r.name === "refs/stash") continue;
      const where = r.symrefTarget ? `-> ${r.symrefTarget}` : `${short(r.object)} ${r.type}`;
      const peel = r.peeledObject ? ` (peels to ${r.peeledType} ${short(r.peeledObject)})` : "";
      out(`           ${refLabel(r.name)}  ${where}${peel}`);
    }
    if (state.index !== undefined) {
      out(`staged     ${plural(d.staged.length, "path")}`);
      if (state.worktree !== undefined) {
        out(`unstaged   ${plural(d.unstaged.length, "path")}`);
        out(`untracked  ${plural(d.untracked.length, "path")}`);
      } else {
        out(`worktree   not recorded (undo.worktree=false)`);
      }
    }
    if (d.conflicts.length) out(`conflicts  ${d.conflicts.map(escapeControls).join(", ")}`);
    if (state.stash.length) {
      out(`stash      ${plural(state.stash.length, "entry", "entries")}`);
      state.stash.forEach((s, i) => out(`           stash@{${i}} ${short(s.commit)} ${s.message}`));
    }
    if (state.state.length) out(`in progress ${state.state.join(", ")}`);
    const latest = snaps[snaps.length - 1];
    if (latest?.number === snap.number && recordingPending(repo.undoDir, latest.date)) {
      out(color.yellow("recording… a newer change is being recorded (git undo records it first)"));
    }
    return 0;
  },
};
