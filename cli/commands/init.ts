// git undo init: turn on automatic recording in this repository. On Git 2.54
// and newer it registers git-undo's hooks in the repository's configuration
// (hook.git-undo.*); with --file-hooks, or on older Git, it installs the two
// hooks where Git runs hooks from (adding a marked block to hooks the user
// already has). Either way it writes <gitdir>/undo/hooks-enabled, which the
// hooks look for before doing anything, and records a first snapshot.
// A hook file it cannot add its block to (not a shell script, a symbolic
// link) is chained with --chain: kept as <hook>.local and run by git-undo's
// hook with the same arguments, stdin and exit status; or left alone when the
// user's hook calls git-undo's itself.
import { applyInstall, planInstall, removeHooks, type HookAction, type HookChange, type RemovedHook, type Unchained } from "../../core/hooks/index.ts";
import { candidateFolders } from "../../core/hooks/folder.ts";
import { CONFIG_HOOK, CONFIG_HOOKS_SINCE, installConfigHook, removeConfigHook, type ConfigHookAction } from "../../core/hooks/config.ts";
import { enableHooks } from "../../core/hooks/enabled.ts";
import { EXCLUDED_DECORATION, hideSnapshotDecorations } from "../../core/hooks/decorations.ts";
import { gitVersion, versionAtLeast } from "../../core/git.ts";
import { hookBun, hookCallLine, TOOLKIT_ROOT } from "../../core/hooks/template.ts";
import { refuse } from "../../core/errors.ts";
import { record } from "../../core/record.ts";
import type { Command } from "../command.ts";
import type { Output } from "../ui.ts";
import { escapeControls } from "../../core/text.ts";
import { withSpinner } from "../progress.ts";
import { installGuard, type GuardInstall } from "../../core/guard.ts";
import { join } from "node:path";

const SAID: Record<HookAction, (c: HookChange) => string> = {
  create: (c) => `installed ${c.path}`,
  insert: (c) => `added git-undo's block to your hook ${c.path}`,
  update: (c) => `updated git-undo's block in ${c.path}`,
  unchanged: (c) => `already up to date: ${c.path}`,
  chain: (c) => `installed git-undo's hook at ${c.path}; yours is kept as ${c.local} and runs after it`,
  called: (c) => `your hook calls git-undo's hook itself: ${c.path}${c.calls !== TOOLKIT_ROOT ? ` (from ${c.calls})` : ""}`,
};

/** What uninstall (or init switching to config hooks) did to one hook file. */
export const removedText = (r: RemovedHook): string =>
  r.restored ? `put your hook back at ${r.path} (from ${r.path}.local)` : `${r.deleted ? "removed" : "removed git-undo's block from"} ${r.path}`;

/** Why init left these hooks alone, and the ways on: chain them, call git-undo's hook from them, or (Git 2.54+) config hooks. */
export function unchainedText(hooks: readonly Unchained[], opts: { configHooks: boolean; bun: string }): string {
  const what = hooks.map((u) =>
    u.why === "symlink"
      ? `${u.path} is a symbolic link (to ${u.detail}), which may be shared: git-undo does not edit it`
      : `${u.path} is not a shell script (${u.detail}): git-undo can add its lines only to a shell hook`,
  );
  // The error line joins these lines with spaces: each ends its clause itself.
  return [
    `cannot install the hooks:\n  ${what.join(";\n  ")}.`,
    `Either run 'git undo init --chain': it keeps ${hooks.length === 1 ? "that hook" : "each"} as <hook>.local and installs git-undo's hook in its place,`,
    "which runs yours with the same arguments and stdin and ends with its exit status ('git undo uninstall' puts yours back);",
    "or have your hook run this with the hook's arguments, then run 'git undo init' again:",
    `    ${hookCallLine(TOOLKIT_ROOT, opts.bun)} <arguments>${opts.configHooks ? ";" : ""}`,
    ...(opts.configHooks ? ["or drop --file-hooks: this Git runs hooks from the configuration, which leaves your hook files alone."] : []),
  ].join("\n");
}

/** What init says about the guard; null when there is nothing to say (off, a bare repository). */
export function guardInstallText(g: GuardInstall, commonDir: string): string | null {
  const config = join(commonDir, "config");
  switch (g.action) {
    case "create":
    case "update":
      return `${g.action === "create" ? "registered" : "updated"} the guard as core.fsmonitor in ${config}: before a Git command can throw away changes no snapshot holds, they are recorded`;
    case "unchanged":
      return `the guard is already core.fsmonitor in ${config}`;
    case "off":
      // Turned off by the user (undo.guard false): init says nothing of it.
      return null;
    case "unwatchable":
      return [
        `note: the guard is off here (${g.why}): every Git command would look at every file and rewrite its index;`,
        "so changes no Git command has seen are not recorded before a command throws them away.",
        "'git config undo.guard true', then 'git undo init', turns it on all the same",
      ].join("\n");
    case "kept":
      return [
        `note: core.fsmonitor is yours (${g.monitor === "builtin" ? "Git's own monitor" : escapeControls(g.command)}), and stays; so git-undo's guard is off here:`,
        "changes no Git command has seen are not recorded before a command throws them away,",
        "an earlier command may share a snapshot with the next on a busy machine,",
        "and clean, restore and checkout -- <path> get no snapshot of their own",
      ].join("\n");
    case "bare":
      return null;
  }
}

const SAID_CONFIG: Record<ConfigHookAction, string> = {
  create: "registered git-undo's hooks in",
  update: "updated git-undo's hooks in",
  unchanged: "git-undo's hooks are already registered in",
};

/**
 * On a terminal, ask whether to chain the hooks init cannot add its block to
 * (@clack/prompts' confirm); anywhere else (a script, a pipe) never: init
 * then refuses with the ways on, and --chain says yes in advance.
 */
async function askToChain(output: Output, hooks: readonly Unchained[]): Promise<boolean> {
  if (!(await output.isTerminal(0)) || !(await output.isTerminal(1))) return false;
  const { confirm, isCancel } = await import("@clack/prompts");
  const which = hooks.map((u) => `${u.path} is ${u.why === "symlink" ? `a symbolic link (to ${u.detail})` : `not a shell script (${u.detail})`}`);
  const answer = await confirm({
    message: [
      ...which,
      `Keep ${hooks.length === 1 ? "it" : "each"} as <hook>.local and put git-undo's hook in its place?`,
      "Yours then runs after git-undo's, with the same arguments, input and exit status; 'git undo uninstall' puts it back.",
    ].join("\n"),
    active: "Yes, chain",
    inactive: "No",
  });
  return !isCancel(answer) && answer;
}

export const init: Command = {
  name: "init",
  usage: [
    "git undo init [--file-hooks] [--global-hooks] [--chain]",
    "",
    "    --file-hooks     install hook files in the hooks folder, as on Git before 2.54,",
    "                     instead of registering hook.git-undo in .git/config",
    "    --global-hooks   install into core.hooksPath even when it is a folder outside",
    "                     this repository (hooks there run in every repository using it;",
    "                     they only act where 'git undo init' ran)",
    "    --chain          where a hook file is not a shell script or is a symbolic link,",
    "                     keep it as <hook>.local and install git-undo's hook in its place;",
    "                     it runs yours with the same arguments and stdin, and ends with",
    "                     its exit status ('git undo uninstall' puts yours back)",
    "",
    "Init also registers the guard as core.fsmonitor, which records an edit no Git",
    "command has seen before a command throws it away: on Linux, with the working",
    "tree on a local file system, unless undo.guard is false; elsewhere only with",
    "undo.guard true. A core.fsmonitor of your own is kept, and the guard is then off.",
  ].join("\n"),
  options: { "global-hooks": { type: "boolean" }, "file-hooks": { type: "boolean" }, chain: { type: "boolean" } },
  async run({ values }, ctx) {
    const { out } = ctx.output;
    const repo = await ctx.openRepo();
    const bun = hookBun(ctx.io.env, ctx.io.runtime);
    const configHooks = versionAtLeast(await gitVersion(repo.git), CONFIG_HOOKS_SINCE);
    const viaConfig = !values["file-hooks"] && configHooks;
    if (viaConfig) {
      const done = await installConfigHook(repo, TOOLKIT_ROOT, bun);
      // One way at a time: hook files of an earlier init would make every Git command start the hooks twice.
      const folders = (await candidateFolders(repo)).filter((f) => !f.problem && f.where !== "outside");
      for (const r of removeHooks(repo, folders)) out(`${removedText(r)} (the configuration runs the hooks now)`);
      // A fresh listing switches the new hook off for git-undo's own Git calls too (core/git.ts).
      await repo.git.run(["config", "-z", "--list"]);
      enableHooks(repo.undoDir);
      out(`${SAID_CONFIG[done.action]} ${done.file}`);
      if (done.disabledIn !== null) {
        out(`note: hook.${CONFIG_HOOK}.enabled is false${done.disabledIn ? ` (in ${done.disabledIn})` : ""}, so Git runs none of them: git config --unset hook.${CONFIG_HOOK}.enabled turns them on`);
      }
    } else {
      const options = { bun, globalHooks: Boolean(values["global-hooks"]) };
      let plan = await planInstall(repo, { ...options, chain: Boolean(values.chain) });
      if (plan.unchained.length) {
        if (!(await askToChain(ctx.output, plan.unchained))) throw refuse(unchainedText(plan.unchained, { configHooks, bun }));
        plan = await planInstall(repo, { ...options, chain: true });
      }
      applyInstall(repo, plan);
      if (await removeConfigHook(repo)) out(`removed hook.${CONFIG_HOOK} from ${repo.commonDir}/config (hook files run the hooks now)`);
      enableHooks(repo.undoDir);
      for (const c of plan.changes) out(SAID[c.action](c));
      for (const rel of plan.exclude) out(`added /${rel} to info/exclude`);
    }
    const guard = await installGuard(repo, TOOLKIT_ROOT, bun, process.platform);
    const guardText = guardInstallText(guard, repo.commonDir);
    if (guardText) out(guardText);
    // Snapshot refs would label commits in `git log --decorate`, gitk and tig.
    if ((await hideSnapshotDecorations(repo)) === "added") {
      out(`added log.excludeDecoration=${EXCLUDED_DECORATION} to ${repo.commonDir}/config (git log does not label commits with snapshot refs)`);
    }
    const result = await withSpinner(ctx.output, "recording the first snapshot", () => record(repo, { kind: "change" }));
    if (result.created) out(`#${result.snapshot.number} ${escapeControls(result.snapshot.summary)}`);
    else out(`no change since #${result.latest.number}`);
    out("git-undo now records a snapshot after every Git command in this repository.");
    return 0;
  },
};
