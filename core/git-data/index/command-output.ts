// What Git's commands on the kept index print, read exactly: the records of
// `git status --porcelain -z` and the lines of `git add -A --verbose`. Output
// that is not what they expect reads as null: the kept index is not reused.
import { join } from "node:path";
import { decodeBytes, hasEscapedBytes } from "../../bytes.ts";
import { lstatOrNull } from "../../stat.ts";

/** One path `git status --porcelain -z` shows changed in the working tree. */
export interface WorktreeRecord {
  /** Without the slash of an untracked folder. */
  path: Uint8Array;
  /** Not in the index status ran on (`??`). */
  untracked: boolean;
  /** An untracked folder (`?? dir/`): nothing under it is in that index. */
  dir: boolean;
}

/**
 * The paths `git status --porcelain -z` shows changed in the working tree
 * (an untracked folder without its slash), or null when a record is not one
 * it expects: a conflict, which the kept index never has, or anything else.
 */
export function worktreeRecords(out: Uint8Array): WorktreeRecord[] | null {
  const records: WorktreeRecord[] = [];
  for (let at = 0; at < out.length; ) {
    const end = out.indexOf(0, at);
    if (end < 0) return null;
    const record = out.subarray(at, end);
    at = end + 1;
    if (record[0] === 0x23) continue; // "## branch", with status.branch set
    if (record.length < 4 || record[2] !== 0x20) return null;
    const xy = String.fromCharCode(record[0]!, record[1]!);
    if (xy[1] === " ") continue; // staged only: the kept index against HEAD
    if (xy.includes("U") || xy === "DD" || xy === "AA" || !/^(\?\?|[ MADT][MDT])$/.test(xy)) return null;
    const path = record.subarray(3);
    const dir = path[path.length - 1] === 0x2f;
    records.push({ path: dir ? path.subarray(0, -1) : path, untracked: xy === "??", dir });
  }
  return records;
}

/** The paths an `add -A --verbose` run changed, or null when its output cannot be read exactly. */
export function changedPaths(stdout: Uint8Array, workTree: string): string[] | null {
  const out = decodeBytes(stdout);
  const paths: string[] = [];
  for (const line of out.split("\n")) {
    if (!line) continue;
    const m = /^(add|remove) '(.*)'$/s.exec(line);
    if (!m) return null;
    const path = m[2]!;
    // A name that is not UTF-8 cannot be looked at through a JS string.
    if (hasEscapedBytes(path)) return null;
    // Git prints paths raw: a name with a newline in it would split. What the
    // line says must then match the disk, or the list is not trusted.
    const st = lstatOrNull(join(workTree, path));
    if (m[1] === "add" ? st === null || st.isDirectory() : st !== null) return null;
    paths.push(path);
  }
  return paths;
}
