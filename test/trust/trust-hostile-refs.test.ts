// Hostile snapshots, part 1: the refs blob and HEAD. A name that is not a ref
// under refs/ could make update-ref write anywhere in .git (commondir, hooks,
// MERGE_HEAD), a NUL would cut an -z transaction in two: each is refused, and
// nothing the victim had changes (the format's "untrusted input" rules).
import { describe, test } from "bun:test";
import { blobCase, checkCase, refLineCase, type HostileCase } from "../helpers/hostile.ts";

const line = (name: string, oid: string, type = "commit", target = "", peeled = "", peeledType = "") => `${name}\t${oid}\t${type}\t${target}\t${peeled}\t${peeledType}\n`;

const CASES: HostileCase[] = [
  // Names outside refs/: each of these, written by update-ref, would be a file of Git's own.
  ...["commondir", "packed-refs", "shallow", "info/grafts", "objects/info/alternates", "hooks/post-checkout", "rebase-merge/x", "MERGE_HEAD", "HEAD", "refs"].map((name) =>
    refLineCase(`a ref named ${name}`, (b) => line(name, b.head)),
  ),
  refLineCase("a NUL in a name", (b) => line("refs/heads/x\0refs/heads/main", b.head)),
  refLineCase("a name with ..", (b) => line("refs/heads/../../config", b.head)),
  refLineCase("a name ending in .lock", (b) => line("refs/heads/main.lock", b.head)),
  refLineCase("a name with a control character", (b) => line("refs/heads/\x1b]0;pwned\x07", b.head)),
  refLineCase("a name under refs/undo/", (b) => line("refs/undo/snapshots/0000000001", b.head)),
  refLineCase("the same ref twice", (b) => line("refs/heads/feature", b.tree0, "tree")),
  refLineCase("a symbolic target outside refs/", (b) => line("refs/heads/sym", b.head, "commit", "MERGE_HEAD")),
  refLineCase("a symbolic target under refs/undo/", (b) => line("refs/heads/sym", b.head, "commit", "refs/undo/snapshots/0000000001")),
  refLineCase("five fields", (b) => `refs/heads/five\t${b.head}\tcommit\t\t\n`),
  refLineCase("a short object id", (b) => line("refs/heads/short", b.head.slice(0, 7))),
  refLineCase("an unknown type", (b) => line("refs/heads/odd", b.head, "commitx")),
  refLineCase("a peeled object on a commit", (b) => line("refs/heads/peel", b.head, "commit", "", b.head, "commit")),
  blobCase("refs without the final newline", "refs", (_, old) => old.replace(/\n$/, "")),
  // The refs blob reads well, but what it names is not what it says.
  refLineCase("a ref whose object is not of the recorded type", (b) => line("refs/heads/liar", b.tree0, "commit"), "restore"),
  // HEAD.
  blobCase("HEAD on a snapshot ref", "HEAD", () => "ref: refs/undo/snapshots/0000000001\n"),
  blobCase("HEAD on refs/stash", "HEAD", () => "ref: refs/stash\n"),
  blobCase("HEAD on a path outside refs/", "HEAD", () => "ref: ../../config\n"),
  blobCase("HEAD on a tag", "HEAD", () => "ref: refs/tags/v1\n"),
  blobCase("HEAD of two lines", "HEAD", (b) => `${b.head}\n${b.head}\n`),
  blobCase("HEAD with a short id", "HEAD", (b) => `${b.head.slice(0, 12)}\n`),
  blobCase("a detached HEAD on a tree", "HEAD", (b) => `${b.tree0}\n`, "restore"),
];

describe("hostile refs and HEAD: refused in one line, nothing changed", () => {
  for (const c of CASES) test(c.name, () => checkCase(c));
});
