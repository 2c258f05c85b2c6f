// Config-defined hooks (Git 2.54 and newer): `hook.<name>.command` run for each
// `hook.<name>.event`. There git-undo is one entry in the repository's own
// configuration, running hooks/<event> straight from the toolkit, so no file in
// the hooks folder is written and no hook manager or same-named file is touched.
import { join } from "node:path";
import { gitBool, type Repo } from "../repo.ts";
import { HOOK_NAMES, HOOK_TEMPLATE, shq } from "./template.ts";

/** The name git-undo's config hook goes by: hook.git-undo.command, .event, .enabled. */
export const CONFIG_HOOK = "git-undo";
/** The first Git that runs hooks the configuration defines. */
export const CONFIG_HOOKS_SINCE: readonly [number, number] = [2, 54];

/**
 * The command of git-undo's config hook. Git runs a command with shell syntax
 * as `sh -c '<command> "$@"'` with the hook's arguments, so the template gets
 * them as a file hook would; stdin goes on to it untouched. The template finds
 * the toolkit from its own path and Bun in GIT_UNDO_HOOK_BUN.
 */
export function configHookCommand(root: string, bun: string): string {
  // A toolkit deleted since leaves Git silent and unharmed: no file, no call (a
  // failing reference-transaction hook would abort the command), and sh's words nowhere.
  const hook = shq(`${root}/hooks/${HOOK_TEMPLATE}`);
  return `[ ! -f ${hook} ] || GIT_UNDO_HOOK_BUN=${shq(bun)} exec sh ${hook} 2>/dev/null`;
}

const SHQ = `'((?:[^']|'\\\\'')*)'`;
/** As configHookCommand writes it, or as earlier versions did (no check, no redirection). */
const OUR_COMMAND = new RegExp(`^(?:\\[ ! -f ${SHQ} \\] \\|\\| )?GIT_UNDO_HOOK_BUN=${SHQ} exec sh ${SHQ}(?: 2>/dev/null)?$`);
/** The command earlier versions registered: one script per event, picked by the number of arguments. */
const EARLIER_COMMAND = new RegExp(`^case \\$# in 1\\) h=reference-transaction ;; \\*\\) h=post-index-change ;; esac; GIT_UNDO_HOOK_BUN=${SHQ} exec sh ${SHQ}"\\$h"$`);
const unq = (s: string): string => s.replace(/'\\''/g, "'");

/** The toolkit and Bun a command written by configHookCommand (or an earlier version's) names; null for any other command. */
export function parseConfigHookCommand(command: string): { root: string; bun: string } | null {
  const m = OUR_COMMAND.exec(command);
  if (m) {
    const script = unq(m[3]!);
    const suffix = `/hooks/${HOOK_TEMPLATE}`;
    if (m[1] !== undefined && unq(m[1]) !== script) return null;
    return script.endsWith(suffix) ? { root: script.slice(0, -suffix.length), bun: unq(m[2]!) } : null;
  }
  const e = EARLIER_COMMAND.exec(command);
  if (!e) return null;
  const dir = unq(e[2]!);
  return dir.endsWith("/hooks/") ? { root: dir.slice(0, -"/hooks/".length), bun: unq(e[1]!) } : null;
}

/** One hook the configuration defines, all scopes merged the way Git merges them. */
export interface ConfigHook {
  name: string;
  /** The last command (Git uses the last one), or null when only events are set. */
  command: string | null;
  /** Where that command comes from: `file:<path>`, `command line:`. */
  commandOrigin: string | null;
  /** Its events, every scope. */
  events: string[];
  /** hook.<name>.enabled, last value; null when unset. */
  enabled: boolean | null;
  enabledOrigin: string | null;
  /** Entries in the repository's own configuration (scope local). */
  local: { command: string | null; events: string[]; others: number };
}

/** Every hook the configuration defines (read on any Git: older ones just never run them). */
export async function configHooks(repo: Repo): Promise<ConfigHook[]> {
  const r = await repo.git.run(["config", "-z", "--show-scope", "--show-origin", "--get-regexp", "^hook\\."], { okExit: [1] });
  const parts = new TextDecoder().decode(r.stdout).split("\0");
  const byName = new Map<string, ConfigHook>();
  for (let i = 0; i + 2 < parts.length; i += 3) {
    const scope = parts[i]!;
    const origin = parts[i + 1]!;
    const rec = parts[i + 2]!;
    const nl = rec.indexOf("\n");
    const key = nl < 0 ? rec : rec.slice(0, nl);
    const value = nl < 0 ? null : rec.slice(nl + 1);
    const m = /^hook\.(.+)\.([^.]+)$/s.exec(key);
    if (!m) continue;
    const name = m[1]!;
    let h = byName.get(name);
    if (!h) {
      h = { name, command: null, commandOrigin: null, events: [], enabled: null, enabledOrigin: null, local: { command: null, events: [], others: 0 } };
      byName.set(name, h);
    }
    const local = scope === "local";
    if (m[2] === "command") {
      h.command = value ?? "";
      h.commandOrigin = origin;
      if (local) h.local.command = value ?? "";
    } else if (m[2] === "event") {
      if (value !== null) h.events.push(value);
      if (local && value !== null) h.local.events.push(value);
    } else {
      if (m[2] === "enabled") {
        h.enabled = gitBool(value) ?? false; // Git refuses such a value; it runs nothing then
        h.enabledOrigin = origin;
      }
      if (local) h.local.others++;
    }
  }
  return [...byName.values()];
}

export type ConfigHookAction = "create" | "update" | "unchanged";

export interface ConfigHookInstall {
  action: ConfigHookAction;
  /** The configuration file written: <common dir>/config. */
  file: string;
  /** hook.git-undo.enabled=false as the user set it (init leaves it): Git then runs nothing of ours. */
  disabledIn: string | null;
}

/** Register git-undo in the repository's configuration: the command and both events. */
export async function installConfigHook(repo: Repo, root: string, bun: string): Promise<ConfigHookInstall> {
  const ours = (await configHooks(repo)).find((h) => h.name === CONFIG_HOOK);
  const command = configHookCommand(root, bun);
  let action: ConfigHookAction = "unchanged";
  if (ours?.local.command !== command) {
    await repo.git.run(["config", "--local", "--replace-all", `hook.${CONFIG_HOOK}.command`, command]);
    action = ours?.local.command == null ? "create" : "update";
  }
  for (const event of HOOK_NAMES) {
    if (ours?.local.events.includes(event)) continue;
    await repo.git.run(["config", "--local", "--add", `hook.${CONFIG_HOOK}.event`, event]);
    if (action === "unchanged") action = "update";
  }
  const disabledIn = ours && ours.enabled === false ? (ours.enabledOrigin ?? "").replace(/^file:/, "") : null;
  return { action, file: join(repo.commonDir, "config"), disabledIn };
}

/**
 * Take out what installConfigHook added: its command (when git-undo wrote it)
 * and its two events, and the section when nothing else is left in it, so the
 * configuration file is as it was. Returns whether anything was removed.
 */
export async function removeConfigHook(repo: Repo): Promise<boolean> {
  const ours = (await configHooks(repo)).find((h) => h.name === CONFIG_HOOK);
  if (!ours) return false;
  const key = (v: string) => `hook.${CONFIG_HOOK}.${v}`;
  let removed = false;
  if (ours.local.command !== null && parseConfigHookCommand(ours.local.command)) {
    await repo.git.run(["config", "--local", "--unset-all", key("command")]);
    removed = true;
  }
  if (removed && ours.local.events.some((e) => (HOOK_NAMES as readonly string[]).includes(e))) {
    await repo.git.run(["config", "--local", "--unset-all", key("event"), `^(${HOOK_NAMES.join("|")})$`]);
  }
  if (!removed) return false;
  const left = await repo.git.run(["config", "--local", "--get-regexp", `^hook\\.${CONFIG_HOOK}\\.`], { okExit: [1] });
  if (left.exitCode === 1) await repo.git.run(["config", "--local", "--remove-section", `hook.${CONFIG_HOOK}`], { okExit: [128] });
  return true;
}
