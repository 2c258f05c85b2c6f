// Many pairs of trees compared in one Git process: `git diff-tree --stdin`.
import { fatal } from "../errors.ts";
import type { ObjectId } from "../format/index.ts";
import type { Repo } from "../repo.ts";

/** One changed path of a pair: the `--raw` fields (`<mode> <mode> <id> <id> <status>`) and the path's bytes. */
export interface RawChange {
  meta: string[];
  path: Uint8Array;
}

/**
 * Every pair's changes in one `git diff-tree --stdin -r --raw`. A pair of
 * trees `[a, b]` is keyed `<a> <b>`; a commit `[c, parent]` (`[c, null]` for
 * a root commit) is compared with that parent and keyed by its own id. The
 * output is a header per pair that differs (`<a> <b>\n` for trees, `<c>\0`
 * for a commit), then `:<modes> <ids> <status>\0<path>\0` records; a record
 * starts with ':', so no path is taken for a header. `flags` are further
 * diff options (-S, -G); pairs of one id twice are skipped.
 */
export async function diffTreePairs(
  repo: Repo,
  pairs: readonly (readonly [ObjectId, ObjectId | null])[],
  opts: { pathspecs?: readonly string[]; flags?: readonly string[] } = {},
): Promise<Map<string, RawChange[]>> {
  const result = new Map<string, RawChange[]>();
  const todo = pairs.filter(([a, b]) => a !== b);
  if (!todo.length) return result;
  const input = [...new Set(todo.map(([a, b]) => (b === null ? `${a}\n` : `${a} ${b}\n`)))].join("");
  const args = ["diff-tree", "--stdin", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", ...(pairs.some(([, b]) => b === null) ? ["--root"] : []), ...(opts.flags ?? [])];
  if (opts.pathspecs?.length) args.push("--", ...opts.pathspecs);
  const buf = (await repo.git.run(args, { input })).stdout;
  let i = 0;
  let current: RawChange[] | null = null;
  const nul = (from: number) => {
    const j = buf.indexOf(0, from);
    if (j === -1) throw fatal("git diff-tree --stdin: truncated output");
    return j;
  };
  while (i < buf.length) {
    if (buf[i] === 0x3a /* ':' */) {
      const end = nul(i);
      const meta = Buffer.from(buf.subarray(i + 1, end)).toString("latin1").split(" ");
      const pathEnd = nul(end + 1);
      const path = buf.subarray(end + 1, pathEnd);
      i = pathEnd + 1;
      current?.push({ meta, path });
    } else {
      // A header ends at a newline (trees) or a NUL (a commit).
      let nl = i;
      while (nl < buf.length && buf[nl] !== 0x0a && buf[nl] !== 0) nl++;
      if (nl === buf.length) throw fatal("git diff-tree --stdin: truncated output");
      const header = Buffer.from(buf.subarray(i, nl)).toString("latin1");
      current = result.get(header) ?? [];
      result.set(header, current);
      i = nl + 1;
    }
  }
  return result;
}

/**
 * The blob a `--raw` record leaves at its path: null where the path was
 * removed, or holds no file content to search (a submodule, 160000).
 */
export function blobAfter(meta: readonly string[]): ObjectId | null {
  const status = meta[4] ?? "";
  const mode = meta[1] ?? "";
  return status.startsWith("D") || !/^10[0-7]{4}$|^120000$/.test(mode) ? null : meta[3]!;
}

/** The empty tree's id in each object format (by hash length in bytes). */
export const EMPTY_TREE: Record<number, ObjectId> = {
  20: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
  32: "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
};
