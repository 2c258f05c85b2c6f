// `git grep` over trees and blob ids, its records read by name: the one
// search of content that grep, the picker's filter and lost work share.
import type { ObjectId } from "../format/index.ts";
import type { Repo } from "../repo.ts";

export interface GrepOptions {
  ignoreCase?: boolean;
  fixedStrings?: boolean;
  extendedRegexp?: boolean;
}

function grepFlags(opts: GrepOptions): string[] {
  const flags = ["-n", "-z", "-I", "--no-color", "--full-name"];
  if (opts.ignoreCase) flags.push("-i");
  if (opts.fixedStrings) flags.push("-F");
  else if (opts.extendedRegexp) flags.push("-E");
  return flags;
}

/** `git grep -z` records: `<name>\0<line>\0<text>\n`, by name (latin1). */
function grepRecords(buf: Uint8Array): Map<string, { line: number; text: string }[]> {
  const found = new Map<string, { line: number; text: string }[]>();
  const decoder = new TextDecoder();
  let at = 0;
  while (at < buf.length) {
    const a = buf.indexOf(0, at);
    const b = a === -1 ? -1 : buf.indexOf(0, a + 1);
    const nl = b === -1 ? -1 : buf.indexOf(0x0a, b + 1);
    if (nl === -1) break;
    const name = Buffer.from(buf.subarray(at, a)).toString("latin1");
    const line = Number(Buffer.from(buf.subarray(a + 1, b)).toString("latin1"));
    const text = decoder.decode(buf.subarray(b + 1, nl));
    let list = found.get(name);
    if (!list) found.set(name, (list = []));
    list.push({ line, text });
    at = nl + 1;
  }
  return found;
}

/** The matching lines of each file of a tree, by path (latin1): Git names them `<tree-ish>:<path>`. */
export async function grepTree(repo: Repo, treeish: string, pattern: string, opts: GrepOptions): Promise<Map<string, { line: number; text: string }[]>> {
  const r = await repo.git.run(["grep", ...grepFlags(opts), "-e", pattern, treeish], { okExit: [1] });
  const out = new Map<string, { line: number; text: string }[]>();
  const prefix = `${treeish}:`;
  for (const [name, lines] of grepRecords(r.stdout)) if (name.startsWith(prefix)) out.set(name.slice(prefix.length), lines);
  return out;
}

/** The matching lines of each blob: `git grep` takes blob ids as it takes trees. Binary files are skipped. */
export async function grepBlobs(repo: Repo, blobs: readonly ObjectId[], pattern: string, opts: GrepOptions): Promise<Map<ObjectId, { line: number; text: string }[]>> {
  const found = new Map<ObjectId, { line: number; text: string }[]>();
  // A few thousand ids per process keeps the command line well under the system's limit.
  for (let i = 0; i < blobs.length; i += 2000) {
    const r = await repo.git.run(["grep", ...grepFlags(opts), "-e", pattern, ...blobs.slice(i, i + 2000)], { okExit: [1] });
    for (const [blob, lines] of grepRecords(r.stdout)) found.set(blob, lines);
  }
  return found;
}
