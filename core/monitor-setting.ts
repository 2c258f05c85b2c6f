// What core.fsmonitor is to git-undo: its guard (the command core/guard.ts
// guardCommand writes, or the form an earlier version wrote), Git's own
// daemon, a hook of the user's, or none. Configuration, read by the guard's
// installer and doctor, the worker, and the kept index (a monitor of the
// user's stops its reuse), so it sits below all of them. The patterns read exactly what guardCommand
// writes: a change to one is a change to the other.
import { join } from "node:path";

/** The first argument hooks/hook.sh is given when it runs as the guard. */
export const GUARD_ARG = "guard";

const SHQ = `'((?:[^']|'\\\\'')*)'`;
const GUARD_COMMAND = new RegExp(
  `^git_undo_guard\\(\\) \\{ \\[ -f ${SHQ} \\] \\|\\| return 1; GIT_UNDO_HOOK_BUN=${SHQ} GIT_UNDO_HOOK_ROOT=${SHQ}; set -- ${GUARD_ARG} "\\$@"; \\. ${SHQ}; \\}; git_undo_guard 2>/dev/null$`,
);

/** The form an earlier version wrote (two shells). */
const EARLIER_GUARD_COMMAND = new RegExp(`^GIT_UNDO_HOOK_BUN=${SHQ} exec sh ${SHQ} ${GUARD_ARG} 2>/dev/null$`);

/** The toolkit and Bun a core.fsmonitor value written by guardCommand (or an earlier version) names; null for any other value. */
export function parseGuardCommand(value: string | null | undefined): { root: string; bun: string } | null {
  const unq = (s: string) => s.replaceAll("'\\''", "'");
  const earlier = value == null ? null : EARLIER_GUARD_COMMAND.exec(value);
  if (earlier) {
    const hook = unq(earlier[2]!);
    return hook.endsWith("/hooks/hook.sh") ? { root: hook.slice(0, -"/hooks/hook.sh".length), bun: unq(earlier[1]!) } : null;
  }
  const m = value == null ? null : GUARD_COMMAND.exec(value);
  if (!m) return null;
  const root = unq(m[3]!);
  if (unq(m[1]!) !== join(root, "hooks", "hook.sh") || unq(m[4]!) !== unq(m[1]!)) return null;
  return { root, bun: unq(m[2]!) };
}

/** What a core.fsmonitor value is to git-undo. */
export type MonitorSetting =
  | { kind: "none" }
  | { kind: "guard"; root: string; bun: string }
  /** Git's own daemon (core.fsmonitor=true, Git 2.36 and newer). */
  | { kind: "builtin" }
  /** A hook of the user's (Watchman's, say). */
  | { kind: "hook"; command: string };

export function monitorSetting(value: string | null | undefined, boolOf: (v: string | null) => boolean | null): MonitorSetting {
  if (value === undefined) return { kind: "none" };
  const guard = parseGuardCommand(value);
  if (guard) return { kind: "guard", ...guard };
  const b = boolOf(value);
  if (b === false || value === "") return { kind: "none" };
  if (b === true) return { kind: "builtin" };
  return { kind: "hook", command: value ?? "" };
}
