// Hostile snapshots, part 2: the stash, the conflicts, the trees, the keep
// entry and the message. A path with a `.git` or `..` component must never
// reach update-index, a stash line naming a tree never reach stash store.
import { describe, test } from "bun:test";
import { blob, blobCase, checkCase, commitSnapshot, messageCase, rawTree, treeEntries, withEntry, type HostileCase } from "../helpers/hostile.ts";

const unmerged = (records: string[]) => records.map((r) => `${r}\0`).join("");

/** A conflict recorded with `index-unmerged` and a matching `index-blobs`. */
function conflictCase(name: string, records: (blobId: string) => string[], refusedBy: HostileCase["refusedBy"] = "state"): HostileCase {
  return {
    name,
    refusedBy,
    craft(x, base) {
      const b = blob(x, "conflict side\n");
      let tree = withEntry(x, base.tree, "index-unmerged", blob(x, unmerged(records(b))));
      tree = withEntry(x, tree, "index-blobs", rawTree(x, [{ mode: "100644", name: b, oid: b }]), "40000");
      return commitSnapshot(x, base, tree);
    },
  };
}

/** A worktree tree holding one more path (a `.git` directory, say). */
function worktreeCase(name: string, path: string[]): HostileCase {
  return {
    name,
    refusedBy: "restore",
    craft(x, base) {
      const wt = x.g("rev-parse", `${base.tree}:worktree`);
      let inner = rawTree(x, [{ mode: "100755", name: path[path.length - 1]!, oid: blob(x, "#!/bin/sh\necho pwned > /tmp/pwned\n") }]);
      for (let i = path.length - 2; i >= 0; i--) inner = rawTree(x, [{ mode: "40000", name: path[i]!, oid: inner }]);
      const entries = treeEntries(x, wt).filter((e) => e.name !== path[0]);
      entries.push({ mode: "40000", name: path[0]!, oid: inner });
      return commitSnapshot(x, base, withEntry(x, base.tree, "worktree", rawTree(x, entries), "40000"));
    },
  };
}

/** A worktree tree holding one more file at the top. */
function worktreeFileCase(name: string, file: string): HostileCase {
  return {
    name,
    refusedBy: "restore",
    craft(x, base) {
      const wt = x.g("rev-parse", `${base.tree}:worktree`);
      const entries = [...treeEntries(x, wt), { mode: "100644", name: file, oid: blob(x, "x\n") }];
      return commitSnapshot(x, base, withEntry(x, base.tree, "worktree", rawTree(x, entries), "40000"));
    },
  };
}

const CASES: HostileCase[] = [
  blobCase("a stash line without a tab", "stash", (b) => `${b.head}\n`),
  blobCase("a stash line with a short id", "stash", (b) => `${b.head.slice(0, 8)}\tshort\n`),
  blobCase("a stash line naming a tree", "stash", (b, old) => `${b.tree0}\tnot a commit\n${old}`, "restore"),
  blobCase("an unknown operation in state", "state", () => "rebase-merge\n../../hooks\n"),
  conflictCase("an unmerged path inside .git", (b) => [`100644 ${b} 1\t.git/hooks/post-checkout`]),
  conflictCase("an unmerged path .GIT in another case", (b) => [`100644 ${b} 2\tsub/.GiT/config`]),
  conflictCase("an unmerged path with ..", (b) => [`100644 ${b} 1\ta/../../outside`]),
  conflictCase("an absolute unmerged path", (b) => [`100644 ${b} 3\t/etc/passwd`]),
  conflictCase("an unmerged path with an empty component", (b) => [`100644 ${b} 3\ta//b`]),
  conflictCase("an unmerged entry at stage 0", (b) => [`100644 ${b} 0\ta.txt`]),
  conflictCase("an unmerged entry with a mode Git does not use", (b) => [`100666 ${b} 1\ta.txt`]),
  {
    name: "index-blobs holding a tree",
    refusedBy: "state",
    craft(x, base) {
      const b = blob(x, "side\n");
      let tree = withEntry(x, base.tree, "index-unmerged", blob(x, unmerged([`100644 ${b} 1\ta.txt`])));
      tree = withEntry(x, tree, "index-blobs", rawTree(x, [{ mode: "40000", name: base.tree0, oid: base.tree0 }]), "40000");
      return commitSnapshot(x, base, tree);
    },
  },
  {
    name: "a HEAD entry that is a tree",
    refusedBy: "state",
    craft: (x, base) => commitSnapshot(x, base, withEntry(x, base.tree, "HEAD", base.tree0, "40000")),
  },
  {
    name: "no refs entry",
    refusedBy: "state",
    craft: (x, base) => commitSnapshot(x, base, withEntry(x, base.tree, "refs", null)),
  },
  {
    name: "a keep entry not named by its id",
    refusedBy: "state",
    craft(x, base) {
      const b = blob(x, "kept\n");
      const keep = rawTree(x, [{ mode: "100644", name: "0".repeat(40), oid: b }]);
      return commitSnapshot(x, base, withEntry(x, base.tree, "keep", keep, "40000"));
    },
  },
  {
    name: "a keep tree with a forged .tag blob",
    refusedBy: "restore",
    craft(x, base) {
      // A tag the victim lacks, "kept" as the content of another tag: writing it back must not pass.
      const missing = "1".repeat(40);
      const forged = blob(x, x.git(["cat-file", "tag", base.tagObject]).stdout);
      const keep = rawTree(x, [{ mode: "100644", name: `${missing}.tag`, oid: forged }]);
      const refs = x.git(["cat-file", "blob", `${base.tree}:refs`]).stdout + `refs/tags/forged\t${missing}\ttag\t\t${base.head}\tcommit\n`;
      const sorted = refs.split("\n").filter(Boolean).sort().map((l) => `${l}\n`).join("");
      let tree = withEntry(x, base.tree, "refs", blob(x, sorted));
      tree = withEntry(x, tree, "keep", keep, "40000");
      return commitSnapshot(x, base, tree);
    },
  },
  worktreeCase("a worktree with a .git folder", [".git", "hooks", "post-checkout"]),
  // Names Git itself refuses to write (its NTFS rules): the restore must not report them created.
  worktreeFileCase("a worktree file named git~1", "git~1"),
  worktreeFileCase("a worktree file named '.git '", ".git "),
  worktreeCase("a worktree with a .Git folder in a subfolder", ["dir", ".Git", "config"]),
  // The commit message: trailers.
  messageCase("a newer format", (b) => b.message.replace("Undo-Format: 1", "Undo-Format: 2")),
  messageCase("a format that is not a number", (b) => b.message.replace("Undo-Format: 1", "Undo-Format: 1x")),
  messageCase("no format", (b) => b.message.replace("Undo-Format: 1\n", "")),
  messageCase("an unknown kind", (b) => b.message.replace(/Undo-Kind: \w+/, "Undo-Kind: evil\x1b[2J")),
  messageCase("a restore without Undo-Restored", (b) => b.message.replace(/Undo-Kind: \w+/, "Undo-Kind: restore")),
  messageCase("Undo-Restored as a float", (b) => b.message.replace(/Undo-Kind: \w+/, "Undo-Kind: restore\nUndo-Restored: 1e3")),
  messageCase("Undo-Restored past exact integers", (b) => b.message.replace(/Undo-Kind: \w+/, "Undo-Kind: restore\nUndo-Restored: 99999999999999999999")),
  messageCase("Undo-Restored naming a later snapshot", (b) => b.message.replace(/Undo-Kind: \w+/, "Undo-Kind: restore\nUndo-Restored: 7")),
];

describe("hostile stash, conflicts, trees and trailers: refused in one line, nothing changed", () => {
  for (const c of CASES) test(c.name, () => checkCase(c));
});
