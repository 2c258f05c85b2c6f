// Object ids computed in-process, exactly as Git computes them, so the
// recorder can tell that a state equals the latest snapshot without writing
// (and spawning Git for) objects that the snapshot already holds.
import type { ObjectId } from "./format.ts";
import type { TreeEntry } from "./objects.ts";
import type { ObjectFormat } from "./repo.ts";

const encoder = new TextEncoder();
const bytes = (b: string | Uint8Array): Uint8Array => (typeof b === "string" ? encoder.encode(b) : b);

/** The id of a loose object: the hash of `<type> <size>\0<body>`. */
export function objectId(format: ObjectFormat, type: "blob" | "tree", body: string | Uint8Array): ObjectId {
  const content = bytes(body);
  const hasher = new Bun.CryptoHasher(format === "sha256" ? "sha256" : "sha1");
  hasher.update(`${type} ${content.length}\0`);
  hasher.update(content);
  return hasher.digest("hex");
}

/** Git's tree order: names compared bytewise, a tree's name as if it ended in "/". */
function treeOrder(a: TreeEntry, b: TreeEntry): number {
  const ka = Buffer.from(a.type === "tree" ? `${a.name}/` : a.name);
  const kb = Buffer.from(b.type === "tree" ? `${b.name}/` : b.name);
  return Buffer.compare(ka, kb);
}

/** A tree object's body as mktree writes it: `<octal mode> <name>\0<raw id>` per entry, sorted. */
export function treeBody(entries: readonly TreeEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of [...entries].sort(treeOrder)) {
    // mktree prints the mode with %o, so 040000 becomes 40000.
    parts.push(encoder.encode(`${parseInt(e.mode, 8).toString(8)} ${e.name}\0`), Buffer.from(e.oid, "hex"));
  }
  return Buffer.concat(parts);
}

export const treeId = (format: ObjectFormat, entries: readonly TreeEntry[]): ObjectId => objectId(format, "tree", treeBody(entries));
