// The files ref storage: loose refs and packed-refs, HEAD, the operation
// markers and the reflogs as plain files. A state is read from those files
// where it can be (HEAD, the markers, the reflogs, loose symbolic refs), which
// is both safe (Git replaces them by a rename) and measurably faster than a
// Git process each.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fromFileEnd } from "../../file-tail.ts";
import { compareBytes, type HeadState, type HeadReflogEntry, type ReflogEntry, type RefLine, type StashEntry } from "../../format/index.ts";
import { decodeBytes } from "../../bytes.ts";
import { gitBool, type Repo } from "../../repo.ts";
import { markerFiles } from "../operation-markers.ts";
import { listRefs, looseSymrefs, scanUndoRefs } from "./index.ts";
import { STASH_LINE, stashAgreeing, withUnreadable, type RefStore } from "./ref-store.ts";

/** Longest ref name the files storage takes: a file name's 255 bytes less `.lock`, and the whole path under the common dir. */
const NAME_LIMIT = { fileNameBytes: 250, pathBytes: 4000 } as const;

export const FILES: RefStore = {
  name: "files",
  async read(repo, undoRefsListed) {
    const [listed, undoRefs] = await Promise.all([listRefs(repo), undoRefsListed ?? scanUndoRefs(repo, repo.snapshotPrefix)]);
    const refs = listed.refs;
    // Symbolic refs are completed from their files: for-each-ref reports the end of a chain and skips dangling ones.
    const symrefs = looseSymrefs(repo);
    if (symrefs.size > 0) {
      const byName = new Map(refs.map((r) => [r.name, r]));
      for (const [name, target] of symrefs) {
        const known = byName.get(name);
        if (known) known.symrefTarget = target;
        else refs.push({ name, object: null, type: null, symrefTarget: target, peeledObject: null, peeledType: null });
      }
    }
    refs.sort((a, b) => compareBytes(a.name, b.name));
    // With the refs (the spec's step 2), not after the files: a Git command that
    // moves HEAD meanwhile must not lend its message to a state from before it.
    const head = fileHead(repo);
    const stash = await stashAgreeing(repo, refs, fileStash(repo, refs), async () => fileStash(repo, [STASH_LINE]));
    return withUnreadable({ refs, undoRefs, head, headReflog: fileHeadReflog(repo, head, refs), stash, markers: markerFiles(repo.gitDir) }, listed.unreadable);
  },
  headReflogHint: (repo) => newestHeadReflog(repo),
  markers: async (repo) => markerFiles(repo.gitDir),
  markerRefs: false,
  writeStamp: () => null,
  packSnapshotRefs,
  refLockFiles: true,
  nameTooLong(repo, name) {
    const enc = new TextEncoder();
    return name.split("/").some((part) => enc.encode(part).length > NAME_LIMIT.fileNameBytes) || enc.encode(repo.commonDir).length + enc.encode(name).length > NAME_LIMIT.pathBytes;
  },
};

function fileHead(repo: Repo): HeadState {
  const content = decodeBytes(readFileSync(join(repo.gitDir, "HEAD"))).trim();
  if (content.startsWith("ref: ")) return { kind: "symbolic", target: content.slice(5).trim() };
  return { kind: "detached", commit: content };
}

/** The last line of a file that `accept` takes, read from its end (reflogs grow for years). */
function lastLine(path: string, accept: (line: string) => boolean = () => true): string | null {
  return fromFileEnd(path, 4096, (piece) => {
    const lines = decodeBytes(piece).split("\n");
    for (let i = lines.length - 1; i >= 0; i--) if (lines[i] && accept(lines[i]!)) return lines[i]!;
    return undefined;
  });
}

/** `<new-oid>` and message of a reflog line `<old> <new> <ident> <time> <tz>\t<message>`. */
function parseReflogLine(line: string): ReflogEntry | null {
  const tab = line.indexOf("\t");
  const head = tab < 0 ? line : line.slice(0, tab);
  const [, commit] = head.split(" ");
  if (!commit) return null;
  return { commit, message: tab < 0 ? "" : line.slice(tab + 1) };
}

/** HEAD's newest reflog entry (what `git reflog -1 --format='%H %gs' HEAD` shows). */
function fileHeadReflog(repo: Repo, head: HeadState, refs: readonly RefLine[]): HeadReflogEntry | undefined {
  if (head.kind === "symbolic" && !refs.some((r) => r.name === head.target && r.object)) return undefined;
  return newestHeadReflog(repo);
}

function newestHeadReflog(repo: Repo): HeadReflogEntry | undefined {
  // Git's reflog walk skips entries with a null new id (a deletion of HEAD's branch).
  const line = lastLine(join(repo.gitDir, "logs", "HEAD"), (l) => !/^\S+ 0+ /.test(l));
  const entry = line ? parseReflogLine(line) : null;
  if (!line || !entry) return undefined;
  // `<old> <new> <name> <email> <time> <tz>`: the time is the next to last word before the tab.
  const words = line.slice(0, line.indexOf("\t") < 0 ? line.length : line.indexOf("\t")).split(" ");
  const time = Number(words.at(-2));
  return { ...entry, old: words[0] ?? null, time: Number.isSafeInteger(time) ? time : null };
}

/** The stash, newest first, from refs/stash's reflog. */
function fileStash(repo: Repo, refs: readonly RefLine[]): StashEntry[] {
  if (!refs.some((r) => r.name === "refs/stash")) return [];
  let content: string;
  try {
    content = decodeBytes(readFileSync(join(repo.commonDir, "logs", "refs", "stash")));
  } catch {
    return [];
  }
  const entries: StashEntry[] = [];
  for (const line of content.split("\n")) {
    const e = line ? parseReflogLine(line) : null;
    if (e) entries.push(e);
  }
  return entries.reverse();
}

/**
 * Pack the snapshot refs. Loose, each is a file that every listing of refs
 * opens, the other refs' included: 1,000 of them cost a recording 40 ms or
 * more. `--include` (Git 2.42+) packs ours along with
 * what Git packs by default (tags, refs already packed); an older Git refuses
 * the option, and packs them with `--all`, every ref, as `git gc` does (a
 * branch packed reads and moves as before; Git waits for the lock of a ref
 * being packed). Not where gc.packRefs says `git gc` must not pack refs.
 * Never fails: a recording does not depend on it.
 */
async function packSnapshotRefs(repo: Repo): Promise<void> {
  const setting = repo.settings.get("gc.packrefs");
  if (setting !== undefined && (gitBool(setting) === false || (repo.bare && setting?.trim().toLowerCase() === "notbare"))) return;
  // Refused (a lock held by the user's Git): next time.
  for (const which of ["--include=refs/undo/*", "--all"]) {
    if (await repo.git.succeeds(["pack-refs", which]).catch(() => false)) return;
  }
}
