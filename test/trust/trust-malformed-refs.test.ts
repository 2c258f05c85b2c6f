// One object Git cannot parse never stops recording. The refs are listed
// with their types, which reads only each object's header; the tags among
// them are peeled apart (core/git-data/refs/tag-peels.ts, which keeps what it peeled). A
// malformed tag cannot be peeled (the one for-each-ref that peeled every tag
// failed as a whole on it: Git 2.39+ exits 128, Git 2.31 crashes): its ref is
// recorded by its id and type without peeled fields, and doctor names it.
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultRefFormat, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { userFingerprint } from "../helpers/restore.ts";
import { blobText, entries, snapshotRefs } from "../helpers/snap.ts";

/**
 * A repository of the suite's ref storage with refs/tags/broken pointing at a
 * tag object whose header Git refuses. No Git command writes such a ref
 * (update-ref and fetch parse the object): it is written as a loose ref, and
 * the repository migrated to reftable when the suite runs on it.
 */
function withMalformedTag(header = (commit: string) => `object ${commit}\ntype commit\nnotag\n`): { r: TestRepo; bad: string } {
  const r = makeRepo({ refFormat: "files" });
  r.commit("one", { "a.txt": "1\n" });
  const commit = r.g("rev-parse", "HEAD");
  const bad = r.git(["hash-object", "-t", "tag", "--literally", "-w", "--stdin"], { input: `${header(commit)}\nmsg\n` }).stdout.trim();
  writeFileSync(join(r.gitDir(), "refs", "tags", "broken"), `${bad}\n`);
  if (defaultRefFormat() === "reftable") r.git(["refs", "migrate", "--ref-format=reftable"]);
  // The failure is real: the listing with peeled objects refuses this repository.
  expect(r.git(["for-each-ref", "--format=%(refname) %(*objectname)"], { allowFail: true }).code).not.toBe(0);
  return { r, bad };
}

/** The Git commands one `git undo snapshot` ran, past any leading "-c key=value". */
function tracedSnapshot(r: TestRepo): { code: number; commands: string[] } {
  const trace = join(r.dir, "..", `trace-${Math.random()}`);
  const res = r.undo(["snapshot"], { env: { GIT_UNDO_TRACE_SPAWNS: trace } });
  const commands = readFileSync(trace, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => l.replace(/^((-c|--config-env=)\S* ?\S+ )+/, ""));
  return { code: res.code, commands };
}

test("a ref to a malformed tag: recorded by its id without peeled fields, the tag kept whole; recording, undo and redo go on", async () => {
  const { r, bad } = withMalformedTag();
  const first = tracedSnapshot(r);
  expect(first.code).toBe(0);
  // One listing, which parses no tag; the peel of the malformed one failed.
  const listings = first.commands.filter((c) => c.startsWith("for-each-ref") && c.includes("refs/[!u]*"));
  expect(listings.length).toBe(1);
  expect(listings[0]).not.toContain("%(*objectname)");
  expect(first.commands.filter((c) => c === "cat-file --batch-check").length).toBe(1);
  const [one] = snapshotRefs(r);
  expect(blobText(r, one!.tree, "refs")).toContain(`refs/tags/broken\t${bad}\ttag\t\t\t\n`);
  // The tag object itself is held by the snapshot, byte for byte.
  expect(entries(r, `${one!.tree}:keep`)[`${bad}.tag`]).toMatch(/^100644 blob /);
  expect(r.g("cat-file", "blob", `${one!.tree}:keep/${bad}.tag`)).toBe(r.g("cat-file", "tag", bad));
  // Every reader takes the snapshot as valid.
  expect((await r.snapshotsIn())[0]!.unreadable).toBeUndefined();

  // A tag that cannot be peeled is never kept as peeled: asked about again.
  r.write("a.txt", "2\n");
  const second = tracedSnapshot(r);
  expect(second.code).toBe(0);
  expect(second.commands.filter((c) => c === "cat-file --batch-check").length).toBe(1);
  const edited = userFingerprint(r);
  expect(r.undo([]).code).toBe(0);
  expect(r.read("a.txt")).toBe("1\n");
  expect(r.g("rev-parse", "refs/tags/broken")).toBe(bad);
  expect(r.undo(["redo"]).code).toBe(0);
  expect(userFingerprint(r)).toBe(edited);
  expect((await r.snapshotsIn()).every((s) => s.unreadable === undefined)).toBe(true);
});

test("doctor names a ref whose tag cannot be read", async () => {
  const { r, bad } = withMalformedTag();
  await r.okIn("snapshot");
  const out = r.undo(["doctor"]).stdout;
  expect(out).toMatch(new RegExp(`note .*refs/tags/broken points at a tag Git cannot read or peel \\(${bad}\\); snapshots record it by its id alone`));
});

test("the refs are listed once; a tag is peeled once, then from what was kept; a damaged file is peeled again", async () => {
  const r = makeRepo();
  r.commit("one", { "a.txt": "1\n" });
  r.git(["tag", "-a", "-m", "v1", "v1"]);
  r.git(["tag", "-a", "-m", "v1 of v1", "v1-again", "v1"]); // a tag of a tag: peeled to the commit
  const peels = (commands: string[]) => commands.filter((c) => c === "cat-file --batch-check").length;
  const first = tracedSnapshot(r);
  expect(first.code).toBe(0);
  const listings = first.commands.filter((c) => c.startsWith("for-each-ref") && c.includes("refs/[!u]*"));
  expect(listings.length).toBe(1);
  expect(listings[0]).not.toContain("%(*objectname)");
  expect(peels(first.commands)).toBe(1);
  const commit = r.g("rev-parse", "HEAD");
  const refsBlob = (tree: string) => blobText(r, tree, "refs");
  const firstRefs = refsBlob(snapshotRefs(r)[0]!.tree);
  expect(firstRefs).toContain(`refs/tags/v1\t${r.g("rev-parse", "v1")}\ttag\t\t${commit}\tcommit\n`);
  expect(firstRefs).toContain(`refs/tags/v1-again\t${r.g("rev-parse", "v1-again")}\ttag\t\t${commit}\tcommit\n`);

  r.write("a.txt", "2\n");
  const second = tracedSnapshot(r);
  expect(second.code).toBe(0);
  expect(peels(second.commands)).toBe(0);
  expect(refsBlob(snapshotRefs(r).at(-1)!.tree)).toContain(`refs/tags/v1-again\t${r.g("rev-parse", "v1-again")}\ttag\t\t${commit}\tcommit\n`);

  // A kept peel that is not what the tag says is never there to be used: the
  // file holds only what cat-file answered, line by line; a damaged one is peeled again.
  const cache = join(r.gitDir(), "undo", "tag-peels");
  expect(readFileSync(cache, "utf8").split("\n").filter(Boolean).length).toBe(2);
  writeFileSync(cache, "garbage\n");
  r.git(["tag", "-a", "-m", "v2", "v2"]);
  const third = tracedSnapshot(r);
  expect(third.code).toBe(0);
  expect(peels(third.commands)).toBe(1);
  expect(refsBlob(snapshotRefs(r).at(-1)!.tree)).toContain(`refs/tags/v2\t${r.g("rev-parse", "v2")}\ttag\t\t${commit}\tcommit\n`);
  expect(readFileSync(cache, "utf8").split("\n").filter(Boolean).length).toBe(3);
});

test("a tag whose header names the wrong type (a commit called a blob): init, recording, undo and a restore of it all work", async () => {
  // What a clone can bring in: `git mktag` refuses the object, Git's peel fails on it.
  const { r, bad } = withMalformedTag((commit) => `object ${commit}\ntype blob\ntag wrong\ntagger T <t@example.com> 1000000000 +0000\n`);
  expect(r.git(["mktag"], { input: r.g("cat-file", "tag", bad) + "\n", allowFail: true }).code).not.toBe(0);
  const init = await r.run(["init"]);
  expect(init.stderr).toBe("");
  expect(init.code).toBe(0);
  const [one] = snapshotRefs(r);
  // Recorded by its id with no peeled fields where Git refuses the peel (2.39 does; 2.31 peels it to
  // the commit, by its real type); keep holds the tag object and nothing under the commit's id.
  const line = new RegExp(`refs/tags/broken\\t${bad}\\ttag\\t\\t(\\t|${r.g("rev-parse", "HEAD")}\\tcommit)\\n`).exec(blobText(r, one!.tree, "refs"));
  expect(line).not.toBeNull();
  const unpeeled = line![1] === "\t";
  expect(Object.keys(entries(r, `${one!.tree}:keep`))).toEqual([`${bad}.tag`]);
  // The ref deleted (unseen by the hooks: the recordings here are the test's) and a file edited; undo puts both back.
  const quiet = { env: { GIT_UNDO_INTERNAL: "1" } };
  r.git(["update-ref", "-d", "refs/tags/broken"], quiet);
  r.write("a.txt", "2\n");
  expect((await r.run(["snapshot"])).code).toBe(0);
  const undone = await r.run([]);
  expect(undone.stderr).toBe("");
  expect(undone.code).toBe(0);
  expect(r.read("a.txt")).toBe("1\n");
  expect(r.g("rev-parse", "refs/tags/broken")).toBe(bad);
  // A restore by number of the snapshot holding it, from a state without the ref.
  r.git(["update-ref", "-d", "refs/tags/broken"], quiet);
  expect((await r.run(["restore", String(one!.ref.slice(-10))])).code).toBe(0);
  expect(r.g("rev-parse", "refs/tags/broken")).toBe(bad);
  const doctor = await r.run(["doctor"]);
  const note = new RegExp(`refs/tags/broken points at a tag Git cannot read or peel \\(${bad}\\); snapshots record it by its id alone`);
  if (unpeeled) expect(doctor.stdout).toMatch(note);
  else expect(doctor.stdout).not.toMatch(note);
});
