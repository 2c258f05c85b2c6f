// git undo pick: choose any snapshot in an interactive list with a live preview
// of what restoring it would do, then restore it the way `git undo restore` does.
import { isCancel } from "@clack/core";
import { refuse } from "../../core/errors.ts";
import { snapshotsHolding } from "../../core/find/index.ts";
import { isReadable } from "../../core/format/index.ts";
import { listSnapshots, position } from "../../core/snapshots/history.ts";
import { changedPaths } from "../../core/patch.ts";
import type { StateSide } from "../../core/restore/plan.ts";
import { captureLive, unchanged } from "../../core/capture.ts";
import type { Repo } from "../../core/repo.ts";
import type { Command } from "../command.ts";
import { RECORDING_OFF, type Palette } from "../ui.ts";
import { hooksEnabled } from "../../core/hooks/enabled.ts";
import { PickModel, rowsOf } from "../pick/model.ts";
import { planPreviews, type PreviewSource } from "../pick/preview.ts";
import { PickPrompt, type PickChoice } from "../pick/prompt.ts";
import { actionDoing } from "../pick/render.ts";
import type { Part } from "../../core/compose.ts";
import { runRestore } from "./undo.ts";
import { findLost, lostPreviews, stashFiles, type LostFile, type LostStash } from "../../core/find/lost.ts";
import { rescueTarget } from "../../core/find/rescue.ts";
import { lostRowsOf } from "../pick/model.ts";

/** The most lost items the picker lists (`git undo rescue` lists them all). */
const LOST_SHOWN = 500;

export const pick: Command = {
  name: "pick",
  usage: [
    "git undo pick",
    "",
    "    up/down, j/k, PgUp/PgDn, Home/End   move",
    "    typing                              filter by number, summary, branch or file",
    "    ?text                               only the snapshots whose files hold text",
    "    Tab                                 preview: what changes / Git's diff",
    "    Enter                               restore (after confirming); on lost work",
    "                                        (listed after the snapshots): rescue it",
    "    Ctrl-R                              revert: take out only the highlighted change",
    "    Ctrl-F                              in Git's diff: restore only the file in view",
    "    Esc                                 back: confirmation, then filter, then leave",
    "    Ctrl-C                              leave, changing nothing",
  ].join("\n"),
  options: {},
  async run(_, ctx) {
    const { color, out } = ctx.output;
    // The picker is a conversation with a person: refuse before touching anything.
    const terminal = ctx.io.terminal();
    if (!terminal) {
      throw refuse("git undo pick needs a terminal; use 'git undo list' to see the snapshots and 'git undo restore <n>' to restore one");
    }
    const repo = await ctx.openRepo();
    const snaps = await listSnapshots(repo);
    if (!snaps.length) throw refuse(`nothing to pick: ${hooksEnabled(repo) ? "no snapshots yet (git undo snapshot records one)" : RECORDING_OFF}`);
    const model = new PickModel(rowsOf(snaps, position(snaps)));

    // The state being left, read as the restore reads it; the list is drawn before it is known.
    const from: Promise<StateSide> = captureLive(repo).then((c) => ({
      number: unchanged(c)?.number ?? null,
      tree: c.tree,
      state: c.state,
    }));
    const readable = snaps.filter(isReadable);
    const search = (text: string) => snapshotsHolding(repo, readable, text);
    const prompt = new PickPrompt({
      model,
      color: ctx.output.color,
      previews: lazyPreviews(repo, from, ctx.output.color),
      search,
      input: terminal.input,
      output: terminal.output,
      ...(ctx.io.host ? { atExit: ctx.io.host.atExit } : {}),
    });

    // Lost work (what no ref or snapshot holds) is found in the background and listed after the snapshots.
    const lost = findLost(repo).then(async (work) => {
      const shown = work.items.slice(0, LOST_SHOWN);
      await Promise.all([
        stashFiles(repo, shown.filter((i): i is LostStash => i.kind === "stash")),
        lostPreviews(repo, shown.filter((i): i is LostFile => i.kind === "file")),
      ]);
      model.setLost(lostRowsOf(shown, work.abbrev));
      prompt.redraw();
      return work;
    });
    lost.catch(() => {}); // no section then: the snapshots are the picker's business

    // File paths for the filter arrive in the background; the list does not wait for them.
    void changedPaths(repo, snaps)
      .then((paths) => {
        for (const row of model.rows) row.paths = paths.get(row.number) ?? [];
        model.refilter();
        prompt.redraw();
      })
      .catch(() => {});

    const chosen = await prompt.run();
    // Let the capture of the state left finish, so its scratch files are gone when we exit.
    await from.catch(() => {});
    if (isCancel(chosen) || typeof chosen !== "object") {
      out(`${color.red("■")}  git undo pick: nothing changed`);
      return 1;
    }
    const { number, action } = chosen as PickChoice;
    out(`${color.green("◇")}  ${actionDoing(action, number)}`);
    if (action.kind === "rescue") {
      // Exactly `git undo rescue <id>`: a named content goes back to its path.
      const work = await lost;
      const item = work.items.find((i) => i.id.startsWith(action.id))!;
      return runRestore({ kind: "rescue", rescue: rescueTarget(work, action.id, item.kind === "file" ? item.path : null) }, {}, ctx);
    }
    // Exactly `git undo restore <n>`, `revert <n>` or `restore <n> -- <path>`: the same checks, restore and report.
    if (action.kind === "revert") return runRestore({ kind: "revert", number }, {}, ctx);
    if (action.kind === "file") {
      const selection = { parts: ["index", "worktree"] as Part[], paths: [`:(top,literal)${action.path}`], refs: [] };
      return runRestore({ kind: "partial", number, selection }, {}, ctx);
    }
    return runRestore({ kind: "restore", number }, {}, ctx);
  },
};

/** The session's previews, built once the state left is known (only previews wait for it). */
function lazyPreviews(repo: Repo, from: Promise<StateSide>, color: Palette): PreviewSource {
  const source = from.then((f) => planPreviews(repo, f, color));
  // A failure reaches the user through each preview; it must not also end the process.
  source.catch(() => {});
  return {
    summary: async (s) => (await source).summary(s),
    diff: async (s) => (await source).diff(s),
    gist: async (s) => (await source).gist(s),
  };
}
