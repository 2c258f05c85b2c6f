// git undo uninstall: remove exactly what init added (hook.git-undo in the
// repository's configuration, our hook files and blocks, our info/exclude
// lines, every worktree's undo/hooks-enabled).
// Snapshots stay until gc, or --purge.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { candidateFolders } from "../../core/hooks/folder.ts";
import { CONFIG_HOOK, removeConfigHook } from "../../core/hooks/config.ts";
import { EXCLUDED_DECORATION, showSnapshotDecorations } from "../../core/hooks/decorations.ts";
import { findBlock, HOOK_NAMES } from "../../core/hooks/template.ts";
import { removeHooks } from "../../core/hooks/index.ts";
import { withLock } from "../../core/lock.ts";
import { removedText } from "./init.ts";
import type { Repo } from "../../core/repo.ts";
import { liveWorker } from "../../worker/protocol.ts";
import { removeGuard } from "../../core/guard.ts";
import type { Command } from "../command.ts";
import { dropCaches, isGuardFile, undoFile } from "../../core/undo-files.ts";

/** Every worktree's <gitdir>/undo of this repository. */
function undoDirs(repo: Repo): string[] {
  const dirs = [join(repo.commonDir, "undo")];
  const wt = join(repo.commonDir, "worktrees");
  if (existsSync(wt)) for (const name of readdirSync(wt)) dirs.push(join(wt, name, "undo"));
  return dirs.filter((d) => existsSync(d));
}

const hasOurBlock = (path: string): boolean => {
  try {
    return findBlock(readFileSync(path, "utf8")) !== null;
  } catch {
    return false;
  }
};

async function purge(repo: Repo, dirs: readonly string[]): Promise<number> {
  // Let a worker that is settling see its mark gone and stop.
  const deadline = Date.now() + 5000;
  while (dirs.some((d) => liveWorker(d) !== null) && Date.now() < deadline) await Bun.sleep(50);
  const refs = (await repo.git.text(["for-each-ref", "--format=%(refname) %(objectname)", "refs/undo/"]))
    .split("\n")
    .filter(Boolean);
  await withLock(repo.undoDir, async () => {
    if (refs.length) {
      const input = refs.map((line) => `delete ${line}\n`).join("");
      await repo.git.run(["update-ref", "--stdin"], { input });
    }
  });
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  return refs.length;
}

export const uninstall: Command = {
  name: "uninstall",
  usage: [
    "git undo uninstall [--purge] [--global-hooks]",
    "",
    "    --purge          also delete every snapshot (refs/undo/) and git-undo's files",
    "    --global-hooks   also remove the hooks from a core.hooksPath outside this",
    "                     repository (every repository using that folder loses them)",
  ].join("\n"),
  options: { purge: { type: "boolean" }, "global-hooks": { type: "boolean" } },
  async run({ values }, ctx) {
    const { out } = ctx.output;
    const repo = await ctx.openRepo();
    const folders = (await candidateFolders(repo)).filter((f) => !f.problem);
    const shared = folders.filter((f) => f.where === "outside" && HOOK_NAMES.some((n) => hasOurBlock(join(f.dir, n))));
    // A shared hooks folder serves other repositories too: without --global-hooks
    // its hooks stay, and only this repository's marker goes (recording off here).
    const keepShared = shared.length > 0 && !values["global-hooks"];
    const removed = removeHooks(repo, keepShared ? folders.filter((f) => !shared.includes(f)) : folders);
    for (const r of removed) out(removedText(r));
    const removedGuard = await removeGuard(repo);
    if (removedGuard) out(`removed the guard (core.fsmonitor) from ${join(repo.commonDir, "config")}`);
    const removedHookConfig = await removeConfigHook(repo);
    if (removedHookConfig) out(`removed hook.${CONFIG_HOOK} from ${join(repo.commonDir, "config")}`);
    const removedConfig = removedHookConfig || removedGuard;
    // Only the value init added; the user's own log.excludeDecoration values stay.
    if (await showSnapshotDecorations(repo)) out(`removed log.excludeDecoration=${EXCLUDED_DECORATION} from ${join(repo.commonDir, "config")}`);
    const dirs = undoDirs(repo);
    // Without its marker a worktree is one the hooks leave alone, even where
    // they stay installed for other repositories (a shared core.hooksPath).
    // The recorder's caches go too: the kept index alone is as big as the index.
    for (const d of dirs) {
      dropCaches(d);
      for (const f of ["hooksEnabled", "pending", "guardTicks", "guardUnanswered", "watchState"] as const) rmSync(undoFile(d, f), { force: true });
      for (const name of readdirSync(d)) if (isGuardFile(name)) rmSync(join(d, name), { force: true });
    }
    if (keepShared) {
      out(`automatic recording is off in this repository; the hooks in ${shared[0]!.dir} stay for the other repositories using that folder ('git undo uninstall --global-hooks' removes them)`);
    }
    if (values.purge) {
      const n = await purge(repo, dirs);
      out(`deleted ${n} snapshot${n === 1 ? "" : "s"} and git-undo's files`);
    } else if (keepShared) {
      out("snapshots stay until 'git undo gc' (or 'git undo uninstall --purge')");
    } else if (removed.length === 0 && !removedConfig) {
      out("git-undo's hooks are not installed here; nothing to remove");
      return 1; // nothing to do, as the README says
    } else {
      out("automatic recording is off; snapshots stay until 'git undo gc' (or 'git undo uninstall --purge')");
    }
    return 0;
  },
};
