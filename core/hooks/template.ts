// The one hook template, hooks/hook.sh, as git-undo writes it: rendered with
// this toolkit's path and Bun, and its marked block found in, added to and
// taken out of a hook file (a user's hook keeps everything else byte for
// byte). Also how a hook names the template: the line a user's own hook runs,
// and the toolkit such a call names.
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { toolkitRoot } from "../bundle.ts";

export const HOOK_NAMES = ["reference-transaction", "post-index-change"] as const;
export type HookName = (typeof HOOK_NAMES)[number];

/** The checkout this code runs from: the hooks start its worker. */
export const TOOLKIT_ROOT = toolkitRoot();

export const BEGIN = "# >>> git-undo >>>";
export const END = "# <<< git-undo <<<";
/** Line 2 of a hook git-undo created: uninstall deletes such a file rather than editing it. */
export const CREATED_NOTE = "# git-undo: 'git undo init' created this file; 'git undo uninstall' deletes it.";

const HOOK_PATH_END = /\/hooks\/(?:hook\.sh|reference-transaction|post-index-change)(?![\w.-])/g;

/** The toolkit paths a hook names in a call of git-undo's hook (hooks/hook.sh, or the older hooks/<event>), absolute ones only. */
export function toolkitsNamed(content: string): string[] {
  const roots: string[] = [];
  for (const m of content.matchAll(HOOK_PATH_END)) {
    // The path runs back to a quote, whitespace, `=`, `(` or `[`.
    const before = content.slice(0, m.index);
    const start = Math.max(...["'", '"', " ", "\t", "\n", "=", "(", "["].map((c) => before.lastIndexOf(c))) + 1;
    const root = before.slice(start);
    if (root.startsWith("/")) roots.push(root);
  }
  return roots;
}

/**
 * The toolkit a hook calls git-undo's hook from: a path it names whose folder
 * holds a git-undo toolkit. The call is trusted to pass the hook's arguments
 * on; only the user's hook shows that.
 */
export const toolkitCalledBy = (content: string): string | null =>
  toolkitsNamed(content).find((root) => existsSync(join(root, "worker", "main.ts"))) ?? null;

/** The line a user's own hook can run to record with git-undo (its arguments follow). */
export function hookCallLine(root: string, bun: string): string {
  return `GIT_UNDO_HOOK_BUN=${shq(bun)} sh ${shq(join(root, "hooks", HOOK_TEMPLATE))}`;
}

/** Quote for sh: single quotes, with embedded ones closed and escaped. */
export const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export interface RenderedHook {
  /** A whole hook file, for when the user has none. */
  file: string;
  /** The marked block alone, for adding to the user's hook. */
  block: string;
}

/** Every hook, file or config-defined, is this one template (its block tells the events apart by their arguments). */
export const HOOK_TEMPLATE = "hook.sh";

/** The hook for `name` (hooks/hook.sh) with this checkout's path and Bun written in. */
export function renderHook(name: HookName, root: string, bun: string, template?: string): RenderedHook {
  const text = template ?? readFileSync(join(TOOLKIT_ROOT, "hooks", HOOK_TEMPLATE), "utf8");
  const file = text
    .replace(/^(\s*)git_undo_root=.*$/m, (_, sp: string) => `${sp}git_undo_root=${shq(root)}`)
    .replace(/^(\s*)git_undo_bun=.*$/m, (_, sp: string) => `${sp}git_undo_bun=${shq(bun)}`);
  const span = findBlock(file);
  if (!span) throw new Error(`hooks/${name} has no git-undo block`);
  return { file, block: file.slice(span.start, span.end) };
}

/** Where our block is: from the start of its BEGIN line to just after its END line. */
export function findBlock(content: string): { start: number; end: number } | null {
  let begin = content.startsWith(BEGIN) ? 0 : content.indexOf(`\n${BEGIN}`);
  if (begin < 0) return null;
  if (begin > 0) begin++;
  const endAt = content.indexOf(`\n${END}`, begin);
  if (endAt < 0) return null;
  const nl = content.indexOf("\n", endAt + 1 + END.length);
  return { start: begin, end: nl < 0 ? content.length : nl + 1 };
}

/** Put our block right after the #! line, so it runs before anything that could exit. */
export function insertBlock(content: string, block: string): string {
  if (!content.startsWith("#!")) return block + content;
  const nl = content.indexOf("\n");
  if (nl < 0) return `${content}\n${block}`;
  return content.slice(0, nl + 1) + block + content.slice(nl + 1);
}

/** The hook without our block; null when the whole file was ours and should go. */
export function removeBlock(content: string): string | null {
  const span = findBlock(content);
  if (!span) return content;
  const rest = content.slice(0, span.start) + content.slice(span.end);
  const lines = rest.split("\n");
  if (lines[1] === CREATED_NOTE) {
    lines.splice(1, 1);
    const left = lines.join("\n");
    return /^#![^\n]*\n?$/.test(left) ? null : left;
  }
  return rest;
}

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "posh", "busybox"]);

/** Whether a hook is run by a POSIX-style shell (no #! line: Git runs it with sh). */
export function shellInterpreter(content: string): string | null {
  if (!content.startsWith("#!")) return "sh";
  const words = content.slice(2, content.indexOf("\n") < 0 ? undefined : content.indexOf("\n")).trim().split(/\s+/);
  let prog = basename(words[0] ?? "");
  if (prog === "env") prog = basename(words.slice(1).find((w) => !w.startsWith("-")) ?? "");
  return SHELLS.has(prog) ? prog : null;
}

/** The Bun the hooks should start the worker with: GIT_UNDO_BUN when it names one, else the Bun `running` this command. */
export function hookBun(env: Readonly<Record<string, string | undefined>>, running: string): string {
  const chosen = env.GIT_UNDO_BUN;
  return chosen && existsSync(chosen) ? chosen : running;
}
