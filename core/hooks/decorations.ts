// Snapshots in other tools: `git log --decorate`, gitk and tig would label
// every commit a snapshot holds with refs/undo/... names. init adds one
// log.excludeDecoration value to the repository's configuration (unless one
// the user set already hides them) and leaves a mark that it did, so
// uninstall takes out that value and never one the user set.
import { existsSync, mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Repo } from "../repo.ts";
import { undoFile } from "../undo-files.ts";

/** The value init adds to log.excludeDecoration. */
export const EXCLUDED_DECORATION = "refs/undo/";

/** Whether a log.excludeDecoration value hides refs/undo/snapshots/…, matched as Git's log-tree.c matches it. */
export function hidesSnapshots(value: string): boolean {
  // normalize_glob_ref: "refs/" put in front when missing, a trailing "/" dropped.
  const pattern = (value.startsWith("refs/") ? value : `refs/${value}`).replace(/\/$/, "");
  const ref = "refs/undo/snapshots/0000000001";
  if (!/[*?[\\]/.test(pattern)) return ref.startsWith(`${pattern}/`);
  // wildmatch without WM_PATHNAME: * and ? cross "/" too.
  const re = pattern.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*+/g, ".*").replace(/\?/g, ".");
  try {
    return new RegExp(`^${re}$`).test(ref);
  } catch {
    return false;
  }
}

const decorationMark = (repo: Repo): string => undoFile(join(repo.commonDir, "undo"), "excludedDecoration");

async function excludedDecorations(repo: Repo, scope: string[]): Promise<string[]> {
  // Exit 1: no value (and no output).
  return (await repo.git.text(["config", ...scope, "--get-all", "log.excludeDecoration"], { okExit: [1] })).split("\n").filter(Boolean);
}

export type DecorationAction = "added" | "unchanged" | "user's";

/** Hide snapshots from log decorations: add EXCLUDED_DECORATION unless a value already hides them. */
export async function hideSnapshotDecorations(repo: Repo): Promise<DecorationAction> {
  const mark = decorationMark(repo);
  const values = await excludedDecorations(repo, []);
  if (existsSync(mark) && values.includes(EXCLUDED_DECORATION)) return "unchanged";
  if (values.some(hidesSnapshots)) return "user's";
  await repo.git.run(["config", "--local", "--add", "log.excludeDecoration", EXCLUDED_DECORATION]);
  mkdirSync(dirname(mark), { recursive: true });
  writeFileSync(mark, `${EXCLUDED_DECORATION}\n`);
  return "added";
}

/** Take out the value hideSnapshotDecorations added (one copy: the user may have put in the same). Returns whether one was removed. */
export async function showSnapshotDecorations(repo: Repo): Promise<boolean> {
  const mark = decorationMark(repo);
  if (!existsSync(mark)) return false;
  const copies = (await excludedDecorations(repo, ["--local"])).filter((v) => v === EXCLUDED_DECORATION).length;
  if (copies > 0) {
    await repo.git.run(["config", "--local", "--unset-all", "log.excludeDecoration", `^${EXCLUDED_DECORATION}$`]);
    for (let i = 1; i < copies; i++) await repo.git.run(["config", "--local", "--add", "log.excludeDecoration", EXCLUDED_DECORATION]);
    const left = await repo.git.run(["config", "--local", "--get-regexp", "^log\\."], { okExit: [1] });
    if (left.exitCode === 1) await repo.git.run(["config", "--local", "--remove-section", "log"], { okExit: [128] });
  }
  unlinkSync(mark);
  return copies > 0;
}