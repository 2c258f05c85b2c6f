// What each annotated tag a ref names peels to. Peeling means reading the
// tag object, and a recording lists every ref: in a repository with a
// thousand signed tags that was a quarter of a recording, repeated for tags
// that never move. A tag's id names its content for ever, so what it peels
// to is kept in <gitdir>/undo/tag-peels and only tags not seen before are
// peeled, in one cat-file. The file is this module's alone; deleting it
// costs one peel of every tag.
//
// One line per tag: `<tag id> <peeled id> <peeled type>`. The file is
// written anew, with the tags of this listing only, whenever a new tag was
// peeled or it holds more tags than the refs name.
import { readFileSync } from "node:fs";
import { replaceFile, withUndoFile } from "../../files.ts";
import { hashLengthOf, type Repo } from "../../repo.ts";
import { undoFile } from "../../undo-files.ts";
import type { ObjectId } from "../../format/index.ts";

/** The object a tag points at in the end (through tags of tags), and its type. */
export interface Peeled {
  object: ObjectId;
  type: "commit" | "tree" | "blob";
}

/** A file larger than this is not read (no listing writes one: a thousand tags take about 100 KB). */
const MAX_FILE = 16 * 1024 * 1024;
const PEELED_TYPES = new Set(["commit", "tree", "blob"]);

/**
 * What each of `tags` (ids of tag objects) peels to, as `<id>^{}` says; a tag
 * that cannot be peeled (malformed, or pointing at a missing object) is not
 * in the map, and is never kept, so it is asked about again next time.
 */
export async function peelTags(repo: Repo, tags: readonly ObjectId[]): Promise<Map<ObjectId, Peeled>> {
  const file = undoFile(repo.undoDir, "tagPeels");
  const idLength = hashLengthOf(repo) * 2;
  const kept = readKept(file, idLength);
  const found = new Map<ObjectId, Peeled>();
  const unknown: ObjectId[] = [];
  for (const t of tags) {
    const k = kept.get(t);
    if (k) found.set(t, k);
    else unknown.push(t);
  }
  let added = 0;
  if (unknown.length) {
    const out = await repo.git.text(["cat-file", "--batch-check"], { input: unknown.map((t) => `${t}^{}\n`).join("") });
    const rows = out.split("\n");
    unknown.forEach((t, i) => {
      const [object = "", type = ""] = (rows[i] ?? "").split(" ");
      if (object.length === idLength && PEELED_TYPES.has(type)) {
        found.set(t, { object, type: type as Peeled["type"] });
        added++;
      }
    });
  }
  if (added > 0 || kept.size > found.size) {
    try {
      replaceFile(file, [...found].map(([t, p]) => `${t} ${p.object} ${p.type}\n`).join(""));
    } catch {
      /* peeled again next time */
    }
  }
  return found;
}

/** The kept peels by tag id; a line that is not exactly the shape written (torn, edited) is skipped. */
function readKept(file: string, idLength: number): Map<ObjectId, Peeled> {
  const kept = new Map<ObjectId, Peeled>();
  // Never through a link, never waiting on a FIFO; an oversized file is not read.
  let bytes: Buffer | null;
  try {
    bytes = withUndoFile(file, (fd, st) => (st.size > MAX_FILE ? null : readFileSync(fd)));
  } catch {
    return kept;
  }
  if (!bytes) return kept;
  const text = bytes.toString("latin1");
  const hex = new RegExp(`^[0-9a-f]{${idLength}}$`);
  for (const line of text.split("\n")) {
    const [tag = "", object = "", type = "", extra] = line.split(" ");
    if (extra === undefined && hex.test(tag) && hex.test(object) && PEELED_TYPES.has(type)) kept.set(tag, { object, type: type as Peeled["type"] });
  }
  return kept;
}
