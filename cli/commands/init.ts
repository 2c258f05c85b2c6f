// git undo init: turn on automatic recording in this repository. On Git 2.54
// and newer it registers git-undo's hooks in the repository's configuration
// (hook.git-undo.*); with --file-hooks, or on older Git, it installs the two
// hooks where Git runs hooks from (adding a marked block to hooks the user
// already has). Either way it writes <gitdir>/undo/hooks-enabled, which the
// hooks look for before doing anything, and records a first snapshot.
import {
  applyInstall,
  candidateFolders,
  CONFIG_HOOK,
  CONFIG_HOOKS_SINCE,
  enableHooks,
  EXCLUDED_DECORATION,
  gitVersion,
  hideSnapshotDecorations,
  hookBun,
  installConfigHook,
  planInstall,
  removeConfigHook,
  removeHooks,
  TOOLKIT_ROOT,
  versionAtLeast,
  type ConfigHookAction,
  type HookAction,
} from "../../core/hooks.ts";
import { record } from "../../core/record.ts";
import { openRepo } from "../../core/repo.ts";
import type { Command } from "../command.ts";
import { out } from "../ui.ts";
import { escapeControls } from "../../core/validate.ts";

const SAID: Record<HookAction, string> = {
  create: "installed",
  insert: "added git-undo's block to your hook",
  update: "updated git-undo's block in",
  unchanged: "already up to date:",
};

const SAID_CONFIG: Record<ConfigHookAction, string> = {
  create: "registered git-undo's hooks in",
  update: "updated git-undo's hooks in",
  unchanged: "git-undo's hooks are already registered in",
};

export const init: Command = {
  name: "init",
  usage: [
    "git undo init [--file-hooks] [--global-hooks]",
    "",
    "    --file-hooks     install hook files in the hooks folder, as on Git before 2.54,",
    "                     instead of registering hook.git-undo in .git/config",
    "    --global-hooks   install into core.hooksPath even when it is a folder outside",
    "                     this repository (hooks there run in every repository using it;",
    "                     they only act where 'git undo init' ran)",
  ].join("\n"),
  options: { "global-hooks": { type: "boolean" }, "file-hooks": { type: "boolean" } },
  async run({ values }) {
    const repo = await openRepo();
    const viaConfig = !values["file-hooks"] && versionAtLeast(await gitVersion(repo), CONFIG_HOOKS_SINCE);
    if (viaConfig) {
      const done = await installConfigHook(repo, TOOLKIT_ROOT, hookBun());
      // One way at a time: hook files of an earlier init would make every Git command start the hooks twice.
      const folders = (await candidateFolders(repo)).filter((f) => !f.problem && f.where !== "outside");
      for (const r of removeHooks(repo, folders)) out(`${r.deleted ? "removed" : "removed git-undo's block from"} ${r.path} (the configuration runs the hooks now)`);
      // A fresh listing switches the new hook off for git-undo's own Git calls too (core/git.ts).
      await repo.git.run(["config", "-z", "--list"]);
      enableHooks(repo.undoDir);
      out(`${SAID_CONFIG[done.action]} ${done.file}`);
      if (done.disabledIn !== null) {
        out(`note: hook.${CONFIG_HOOK}.enabled is false${done.disabledIn ? ` (in ${done.disabledIn})` : ""}, so Git runs none of them: git config --unset hook.${CONFIG_HOOK}.enabled turns them on`);
      }
    } else {
      const plan = await planInstall(repo, { bun: hookBun(), globalHooks: Boolean(values["global-hooks"]) });
      applyInstall(repo, plan);
      if (await removeConfigHook(repo)) out(`removed hook.${CONFIG_HOOK} from ${repo.commonDir}/config (hook files run the hooks now)`);
      enableHooks(repo.undoDir);
      for (const c of plan.changes) out(`${SAID[c.action]} ${c.path}`);
      for (const rel of plan.exclude) out(`added /${rel} to info/exclude`);
    }
    // Snapshot refs would label commits in `git log --decorate`, gitk and tig.
    if ((await hideSnapshotDecorations(repo)) === "added") {
      out(`added log.excludeDecoration=${EXCLUDED_DECORATION} to ${repo.commonDir}/config (git log does not label commits with snapshot refs)`);
    }
    const result = await record(repo, { kind: "change" });
    if (result.created) out(`#${result.snapshot.number} ${escapeControls(result.snapshot.summary)}`);
    else out(`no change since #${result.latest.number}`);
    out("git-undo now records a snapshot after every Git command in this repository.");
    return 0;
  },
};
