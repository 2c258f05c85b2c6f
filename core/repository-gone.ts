// A worker lingers and records after its command has ended, so `rm -rf repo`
// or `git worktree remove` can run while it works. Whatever it would create
// in a folder being removed makes the removal fail ("Directory not empty")
// and leaves parts of the repository behind. So, once told how to tell that
// its repository is still there, this process starts no Git and writes no
// file of its own without asking first. The CLI sets nothing: it is the
// user's own command in a repository they are using.

/** The repository this process works for was deleted or replaced: nothing more is written there. */
export class RepositoryGone extends Error {
  constructor() {
    super("the repository was deleted or replaced");
  }
}

let stillThere: (() => boolean) | null = null;

/** From now on, every Git started and every file written first asks `check` (the worker's hold on its git dir). */
export function writeOnlyWhile(check: () => boolean): void {
  stillThere = check;
}

/** Throws RepositoryGone when the repository this process works for is gone. */
export function checkRepositoryThere(): void {
  if (stillThere !== null && !stillThere()) throw new RepositoryGone();
}
