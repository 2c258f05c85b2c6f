// git undo show <n>: the trailers and what a snapshot holds.
import { branchName, encodeMessage } from "../../core/format/index.ts";
import { usage } from "../../core/errors.ts";
import { listSnapshots, resolveSnapshotArg, readableSnapshot, position } from "../../core/snapshots/history.ts";
import { inspectSnapshot, headCommit } from "../../core/snapshots/read-state.ts";
import { refLabel, userSummary } from "../../core/describe.ts";
import { escapeControls } from "../../core/text.ts";
import { recordingPending } from "../../worker/protocol.ts";
import { type Command } from "../command.ts";
import { operationName } from "../plan-words.ts";
import { showPatch } from "../patch.ts";
import { snapshotJson } from "./list.ts";
import { relativeAge, short } from "../ui.ts";

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
  async run({ values, positionals }, ctx) {
    const { color, json, out } = ctx.output;
    if (positionals.length !== 1) throw usage("git undo show takes one snapshot number, such as 'git undo show 12'");
    const repo = await ctx.openRepo();
    const snaps = await listSnapshots(repo);
    const snap = readableSnapshot(snaps, await resolveSnapshotArg(repo, positionals[0]!, snaps));
    if (values.patch || values.against !== undefined) {
      const against = values.against === undefined ? null : await resolveSnapshotArg(repo, String(values.against), snaps);
      return showPatch(ctx, repo, snaps, snap, against);
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
    await ctx.pager.start(repo);
    // What the user had first, under labels; the raw message and its trailers last.
    const label = (name: string) => color.bold(name.padEnd(11));
    const item = (name: string, text: string) => out(`${label(name)}${text}`);
    const more = (text: string) => out(`${" ".repeat(11)}${text}`);
    out(`${color.yellow(`snapshot #${snap.number}`)}  ${snap.trailers.kind}  ${relativeAge(snap.date)}  ${color.dim(snap.commit)}`);
    item("summary", userSummary(snap.summary));
    const head = headCommit(state);
    item(
      "HEAD",
      state.head.kind === "detached" ? `detached at ${short(state.head.commit)}` : `${escapeControls(branchName(state.head.target))}${head ? ` (${short(head)})` : " (unborn)"}`,
    );
    // Refs by kind, each group under its own label.
    const groups: [string, (name: string) => boolean][] = [
      ["branches", (n) => n.startsWith("refs/heads/")],
      ["tags", (n) => n.startsWith("refs/tags/")],
      ["remotes", (n) => n.startsWith("refs/remotes/")],
      ["other refs", () => true],
    ];
    const refs = state.refs.filter((r) => r.name !== "refs/stash");
    const shown = new Set<string>();
    for (const [name, belongs] of groups) {
      const mine = refs.filter((r) => !shown.has(r.name) && belongs(r.name));
      mine.forEach((r, i) => {
        shown.add(r.name);
        const where = r.symrefTarget ? `-> ${escapeControls(r.symrefTarget)}` : `${short(r.object ?? "")} ${r.type ?? ""}`;
        const peel = r.peeledObject ? ` (peels to ${r.peeledType} ${short(r.peeledObject)})` : "";
        const text = `${escapeControls(refLabel(r.name).replace(/^(branch|tag|remote branch) /, ""))}  ${where}${peel}`;
        if (i === 0) item(name, text);
        else more(text);
      });
    }
    if (state.index !== undefined) {
      item("index", `${plural(d.staged.length, "path")} staged${d.conflicts.length ? `, conflicts in ${d.conflicts.map(escapeControls).join(", ")}` : ""}`);
      if (state.worktree !== undefined) item("files", `${plural(d.unstaged.length, "path")} unstaged, ${plural(d.untracked.length, "path")} untracked`);
      else item("files", "not recorded (undo.worktree=false)");
    }
    if (state.stash.length) {
      item("stash", plural(state.stash.length, "entry", "entries"));
      state.stash.forEach((s, i) => more(`stash@{${i}} ${short(s.commit)} ${escapeControls(s.message)}`));
    }
    if (state.state.length) item("operation", `${state.state.map((m) => operationName(m).replace(/^an? /, "")).join(", ")} in progress`);
    const trailers = encodeMessage(snap).trimEnd().split("\n").slice(snap.summary.split("\n").length).filter((l) => l.trim());
    trailers.map(escapeControls).forEach((l, i) => (i === 0 ? item("trailers", l) : more(l)));
    const latest = snaps[snaps.length - 1];
    if (latest?.number === snap.number && recordingPending(repo.undoDir, latest.date)) {
      out(color.yellow("recording… a newer change is being recorded (git undo records it first)"));
    }
    return 0;
  },
};
