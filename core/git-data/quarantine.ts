// A recording's objects in quarantine, as Git's receive-pack keeps a push's
// (tmp-objdir.c): Git writes them into a temporary object directory under
// <gitdir>/undo/, with the repository's store as an alternate. Git's own
// commands never see a capture in flight (`git fsck` lists no dangling
// objects of ours, a `git prune` cannot take one away halfway), and a capture
// that records nothing, is torn, fails or is killed leaves nothing in the
// store: its folder goes (a killed one's with the next run's sweep,
// core/git-data/objects.ts). The objects move into the store only just before the
// snapshot's ref is made (moveIn), once they are about to be reachable.
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { ownerTag } from "../files.ts";
import { checkRepositoryThere } from "../repository-gone.ts";
import type { Repo } from "../repo.ts";
import { dropCaches, ensureUndoDir } from "../undo-files.ts";

/**
 * Run `work` with every object Git writes for `repo` going into a quarantine;
 * `moveIn` moves them into the store (the caller does so right before it
 * makes a ref name them). What is left in quarantine when `work` ends is
 * removed. `repo.git` is the quarantined Git meanwhile: the caller holds
 * capture.lock, and nothing else in this process writes objects then.
 */
export async function withQuarantine<T>(repo: Repo, work: (moveIn: () => void) => Promise<T>, opts: { dropCachesIfLeft?: boolean } = {}): Promise<T> {
  ensureUndoDir(repo.undoDir);
  // Named as the scratch folders are: a killed recording's is swept by the next run.
  const dir = mkdtempSync(join(repo.undoDir, `tmp-${ownerTag()}-`));
  const store = join(repo.commonDir, "objects");
  const git = repo.git;
  const alternates = [quoteAlternate(store), git.envValue("GIT_ALTERNATE_OBJECT_DIRECTORIES")].filter(Boolean).join(":");
  repo.git = git.withEnv({ GIT_OBJECT_DIRECTORY: dir, GIT_ALTERNATE_OBJECT_DIRECTORIES: alternates });
  try {
    return await work(() => moveObjects(dir, store));
  } finally {
    repo.git = git;
    // Objects still here were never moved in (a dry run, a refused restore):
    // the caches this run wrote may name them (the kept index's trees), and
    // they go with the folder. A recording leaves them: the next one that
    // meets a missing object drops the caches and goes again (core/record.ts).
    if (opts.dropCachesIfLeft && holdsObjects(dir)) dropCaches(repo.undoDir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether a quarantine holds an object: a loose one, or a pack. */
function holdsObjects(dir: string): boolean {
  try {
    return readdirSync(dir).some((name) => {
      if (name === "pack") return readdirSync(join(dir, name)).some((n) => PACK_NAME.test(n));
      return LOOSE_FOLDER.test(name) && readdirSync(join(dir, name)).some((n) => LOOSE_NAME.test(n));
    });
  } catch {
    return true; // unreadable: assume the worst
  }
}

/**
 * The variables for a Git that writes its objects into `dir` and reads every
 * object `repo.git` reads: for objects only a scratch step needs (a restore's
 * merge trees), which go with the scratch folder and never reach the store.
 */
export function asideObjects(repo: Repo, dir: string): Record<string, string> {
  const git = repo.git;
  const reading = git.envValue("GIT_OBJECT_DIRECTORY") ?? join(repo.commonDir, "objects");
  const alternates = [quoteAlternate(reading), git.envValue("GIT_ALTERNATE_OBJECT_DIRECTORIES")].filter(Boolean).join(":");
  return { GIT_OBJECT_DIRECTORY: dir, GIT_ALTERNATE_OBJECT_DIRECTORIES: alternates };
}

/** An alternate's path as GIT_ALTERNATE_OBJECT_DIRECTORIES takes it: quoted C-style where it holds a colon or starts with a quote. */
function quoteAlternate(path: string): string {
  return /[:"]/.test(path) || path.startsWith('"') ? `"${path.replace(/[\\"]/g, (c) => `\\${c}`)}"` : path;
}

const LOOSE_FOLDER = /^[0-9a-f]{2}$/;
const LOOSE_NAME = /^[0-9a-f]{38}(?:[0-9a-f]{24})?$/;
const PACK_NAME = /^pack-[0-9a-f]+\.(pack|rev|bitmap|idx)$/;
/** Git's order (tmp-objdir.c pack_copy_priority): a pack's index last, so no reader finds an index before its pack. */
const PACK_ORDER = ["pack", "rev", "bitmap", "idx"];

/**
 * Move every object of the quarantine `from` into the store `to`: loose
 * objects into their folders, packs before their indexes. An object the store
 * has already stays as it is. The store's folders are made one level deep at
 * most: a store that is gone (its repository deleted) is not made again.
 */
function moveObjects(from: string, to: string): void {
  for (const folder of readdirSync(from)) {
    if (!LOOSE_FOLDER.test(folder)) continue;
    const names = readdirSync(join(from, folder)).filter((n) => LOOSE_NAME.test(n));
    if (!names.length) continue;
    makeFolder(join(to, folder));
    for (const name of names) place(join(from, folder, name), join(to, folder), name);
  }
  let packs: string[];
  try {
    packs = readdirSync(join(from, "pack")).filter((n) => PACK_NAME.test(n));
  } catch {
    return;
  }
  if (!packs.length) return;
  makeFolder(join(to, "pack"));
  const rank = (n: string) => PACK_ORDER.indexOf(PACK_NAME.exec(n)![1]!);
  for (const name of packs.sort((a, b) => rank(a) - rank(b))) place(join(from, "pack", name), join(to, "pack"), name);
}

function makeFolder(path: string): void {
  checkRepositoryThere();
  try {
    mkdirSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
}

/**
 * Into the store's `folder` as Git finalizes an object: a hard link (an
 * existing one is the same object), else a rename or a copy. A folder that a
 * concurrent `git prune` removed (it removes the ones it empties) is made again.
 */
function place(source: string, folder: string, name: string): void {
  const target = join(folder, name);
  for (let tries = 0; ; tries++) {
    try {
      linkSync(source, target);
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EEXIST") break;
      if (code === "ENOENT" && tries < 3) {
        makeFolder(folder);
        continue;
      }
      try {
        renameSync(source, target);
      } catch {
        copyFileSync(source, target);
      }
      break;
    }
  }
  try {
    unlinkSync(source);
  } catch {
    /* renamed, or the folder goes anyway */
  }
}
