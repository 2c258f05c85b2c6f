// git undo init: turn on automatic recording in this repository. Installs the
// two hooks where Git runs hooks from (adding a marked block to hooks the user
// already has), writes <gitdir>/undo/hooks-enabled, which the hooks look for
// before doing anything, and records a first snapshot.
import { applyInstall, enableHooks, hookBun, planInstall, type HookAction } from "../../core/hooks.ts";
import { record } from "../../core/record.ts";
import { openRepo } from "../../core/repo.ts";
import type { Command } from "../command.ts";
import { out } from "../ui.ts";

const SAID: Record<HookAction, string> = {
  create: "installed",
  insert: "added git-undo's block to your hook",
  update: "updated git-undo's block in",
  unchanged: "already up to date:",
};

export const init: Command = {
  name: "init",
  usage: [
    "git undo init [--global-hooks]",
    "",
    "    --global-hooks   install into core.hooksPath even when it is a folder outside",
    "                     this repository (hooks there run in every repository using it;",
    "                     they only act where 'git undo init' ran)",
  ].join("\n"),
  options: { "global-hooks": { type: "boolean" } },
  async run({ values }) {
    const repo = await openRepo();
    const plan = await planInstall(repo, { bun: hookBun(), globalHooks: Boolean(values["global-hooks"]) });
    applyInstall(repo, plan);
    enableHooks(repo.undoDir);
    for (const c of plan.changes) out(`${SAID[c.action]} ${c.path}`);
    for (const rel of plan.exclude) out(`added /${rel} to info/exclude`);
    const result = await record(repo, { kind: "change" });
    if (result.created) out(`#${result.snapshot.number} ${result.snapshot.summary}`);
    else out(`no change since #${result.latest.number}`);
    out("git-undo now records a snapshot after every Git command in this repository.");
    return 0;
  },
};
