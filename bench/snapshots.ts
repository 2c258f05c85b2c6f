// A long history of snapshots, built in seconds rather than by thousands of
// recordings. One real snapshot of the working copy's state is recorded with
// `git undo snapshot`; the others are snapshot commits made from it with
// `git fast-import`: the same parents (the commits the state keeps), the same
// author and committer, a message in the format (core/format/index.ts
// encodeMessage, with the real one's trailers), and each its own state tree:
// the real one with one file of its `worktree` changed, as after an edit.
// They are numbered 1 to count-1 and dated a minute apart before the real
// one, which moves to number `count`: the newest snapshot is what a recording
// made, so the next recording compares with it as it would in use.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { decodeMessage, encodeMessage, snapshotRef, type SnapshotMessage } from "../core/format/index.ts";
import { gitOut, type Cli } from "./common.ts";
import type { WorkingCopy } from "./fixture.ts";

const PREFIX = "refs/undo/snapshots/";

interface SnapshotCommit {
  id: string;
  tree: string;
  parents: string[];
  committer: { ident: string; seconds: number; zone: string };
  message: SnapshotMessage;
}

function readSnapshot(wc: WorkingCopy, id: string): SnapshotCommit {
  const raw = gitOut(wc.repo, wc.env, ["cat-file", "commit", id]) + "\n";
  const end = raw.indexOf("\n\n");
  const headers = raw.slice(0, end).split("\n");
  const field = (name: string) => headers.filter((h) => h.startsWith(`${name} `)).map((h) => h.slice(name.length + 1));
  const m = /^(.*) (\d+) ([+-]\d{4})$/.exec(field("committer")[0] ?? "");
  if (!m) throw new Error(`snapshot ${id} has no committer line`);
  return {
    id,
    tree: field("tree")[0]!,
    parents: field("parent"),
    committer: { ident: m[1]!, seconds: Number(m[2]), zone: m[3]! },
    message: decodeMessage(raw.slice(end + 2), `commit ${id}`),
  };
}

/**
 * Give a working copy with no snapshots a history of `count` (at least 1)
 * valid snapshots; returns how long it took, in seconds.
 */
export function buildHistory(wc: WorkingCopy, cli: Cli, count: number): number {
  const started = performance.now();
  if (gitOut(wc.repo, wc.env, ["for-each-ref", "--count=1", PREFIX])) throw new Error("buildHistory: the copy has snapshots already");
  cli.run(["snapshot", "-m", "the state the history ends in"], wc.repo);
  const realRef = snapshotRef(PREFIX, 1);
  const real = readSnapshot(wc, gitOut(wc.repo, wc.env, ["rev-parse", realRef]));
  if (count === 1) return (performance.now() - started) / 1000;

  // The real snapshot becomes the newest, so numbers 1 to count-1 are free.
  gitOut(wc.repo, wc.env, ["update-ref", "--stdin"], `create ${snapshotRef(PREFIX, count)} ${real.id}\ndelete ${realRef} ${real.id}\n`);

  const original = new Map<string, { content: string; mode: string }>();
  const chunks: string[] = [];
  for (let n = 1; n < count; n++) {
    // One tracked file edited per snapshot, spread over the tree (some files more than once).
    const path = wc.tracked[(n * 7919) % wc.tracked.length]!;
    let file = original.get(path);
    if (!file) {
      const abs = join(wc.repo, path);
      file = { content: readFileSync(abs, "utf8"), mode: statSync(abs).mode & 0o111 ? "100755" : "100644" };
      original.set(path, file);
    }
    const content = `${file.content}// edit recorded in snapshot ${n}\n`;
    const manual = n % 50 === 0;
    const message = encodeMessage({
      summary: manual ? `checkpoint ${n / 50}` : `edited: ${path}`,
      trailers: { ...real.message.trailers, kind: manual ? "manual" : "change" },
    });
    const date = `${real.committer.seconds - (count - n) * 60} ${real.committer.zone}`;
    const [first, ...merges] = real.parents;
    chunks.push(
      `commit ${snapshotRef(PREFIX, n)}\n`,
      `author git-undo <git-undo@localhost> ${date}\n`,
      `committer ${real.committer.ident} ${date}\n`,
      `data ${Buffer.byteLength(message)}\n${message}`,
      first ? `from ${first}\n` : "",
      ...merges.map((p) => `merge ${p}\n`),
      // The real state tree as the root, then one file of its worktree changed.
      `M 040000 ${real.tree} ""\n`,
      `M ${file.mode} inline worktree/${path}\n`,
      `data ${Buffer.byteLength(content)}\n${content}\n`,
    );
  }
  gitOut(wc.repo, wc.env, ["fast-import", "--quiet"], chunks.join(""));
  const made = gitOut(wc.repo, wc.env, ["for-each-ref", "--format=x", PREFIX]).split("\n").length;
  if (made !== count) throw new Error(`buildHistory: ${made} snapshots, expected ${count}`);
  return (performance.now() - started) / 1000;
}
