// Bytes that are not UTF-8 (a Latin-1 commit subject, a ref name with byte
// 0xE9) must reach the snapshot exactly as Git wrote them, so that another
// implementation of the format produces the same objects (spec: The state
// tree, refs and stash; the Undo-Reflog trailer), and a restore must move
// such refs by their real names.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, tempDir, type TestRepo } from "../helpers/repo.ts";
import { commitText, compareBytes } from "../../core/format/index.ts";
import { decodeBytes, encodeBytes } from "../../core/bytes.ts";
import { gitBytes, snapIn } from "../helpers/snap.ts";

const CAFE = Buffer.from("caf\xe9", "latin1"); // "café" in Latin-1: not valid UTF-8
const BRANCH = Buffer.concat([Buffer.from("refs/heads/"), CAFE]);
const REPLACEMENT = Buffer.from("\uFFFD");

/** Run git and return stdout as raw bytes; `sh` lets a script build arguments from bytes. */
function raw(r: TestRepo, args: string[], input?: Uint8Array): Buffer {
  const p = Bun.spawnSync({ cmd: ["git", ...args], cwd: r.dir, env: r.env, stdin: input ?? "ignore", stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${p.stderr.toString()}`);
  return Buffer.from(p.stdout);
}
function sh(r: TestRepo, script: string): void {
  const p = Bun.spawnSync({ cmd: ["sh", "-c", script], cwd: r.dir, env: { ...r.env, LC_ALL: "C" }, stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${script} failed: ${p.stderr.toString()}`);
}
const withoutNewline = (b: Buffer) => (b[b.length - 1] === 10 ? b.subarray(0, b.length - 1) : b);
const setBranch = (r: TestRepo, oid: string) => raw(r, ["update-ref", "--stdin"], Buffer.concat([Buffer.from("update "), BRANCH, Buffer.from(` ${oid}\n`)]));
/** The object the non-UTF-8 branch points at, found by its exact bytes. */
function branchObject(r: TestRepo): string | undefined {
  for (const line of raw(r, ["for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/"]).toString("latin1").split("\n")) {
    if (line.endsWith(` ${BRANCH.toString("latin1")}`)) return line.split(" ")[0];
  }
  return undefined;
}

describe("non-UTF-8 bytes in snapshots", () => {
  test("a Latin-1 commit subject: summary and Undo-Reflog are the reflog's bytes as commit-tree stores them", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n" });
    const msg = join(tempDir("msg"), "msg");
    writeFileSync(msg, Buffer.concat([CAFE, Buffer.from("\n")]));
    r.write("a.txt", "2\n");
    r.git(["-c", "i18n.commitEncoding=latin1", "commit", "-q", "-a", "-F", msg]);
    const reflog = withoutNewline(raw(r, ["reflog", "-1", "--format=%H %gs", "HEAD"]));
    expect(reflog.includes(CAFE)).toBe(true); // Git itself kept the Latin-1 byte

    const s = await snapIn(r);
    // Spec: Recording step 6 gives commit-tree the message with the reflog's
    // exact bytes; Git stores a UTF-8 message, reading a stray byte as Latin-1.
    // The same message through plain commit-tree is the oracle.
    const subject = reflog.subarray(reflog.indexOf(0x20) + 1);
    const input = Buffer.concat([subject, Buffer.from("\n\nUndo-Reflog: "), reflog, Buffer.from("\n")]);
    const oracle = raw(r, ["-c", "i18n.commitEncoding=UTF-8", "commit-tree", s.tree], input).toString().trim();
    const messageOf = (oid: string) => {
      const c = raw(r, ["cat-file", "commit", oid]);
      return c.subarray(c.indexOf("\n\n") + 2);
    };
    const lines = (b: Buffer) => b.toString("latin1").split("\n");
    const recorded = lines(messageOf(s.commit));
    const expected = lines(messageOf(oracle));
    expect(recorded[0]).toBe(expected[0]!); // the summary quotes the reflog message
    const trailer = (ls: string[]) => ls.find((l) => l.startsWith("Undo-Reflog: "));
    expect(trailer(recorded)).toBe(trailer(expected)!);
    expect(Buffer.from(recorded[0]!, "latin1").equals(Buffer.from("commit: caf\u00e9"))).toBe(true);
    expect(messageOf(s.commit).includes(REPLACEMENT)).toBe(false);

    // Nothing changed since: no new snapshot.
    expect(await r.run(["snapshot"])).toEqual({ code: 1, stdout: "no change since #1\n", stderr: "" });
    // A change outside HEAD's reflog is phrased from the difference: the
    // trailer read back compares equal to the live reflog entry.
    r.git(["branch", "other"]);
    const second = await r.okIn("snapshot");
    expect(second).toMatch(/^#2 /);
    expect(second).not.toContain("commit:");
    expect(second).toContain("other");
  });

  test("a stash message in Latin-1: the stash blob is git stash list's bytes", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "1\n" });
    r.write("a.txt", "changed\n");
    sh(r, `git stash push -q -m "$(printf 'caf\\351')"`);
    const expected = raw(r, ["stash", "list", "--format=%H%x09%gs"]);
    expect(expected.includes(CAFE)).toBe(true);
    const s = await snapIn(r);
    expect(raw(r, ["cat-file", "blob", `${s.tree}:stash`]).equals(expected)).toBe(true);

    // Dropped and brought back by undo: `git stash store -m` gets the exact bytes.
    r.git(["stash", "drop", "-q"]);
    await r.okIn("snapshot");
    await r.okIn("undo");
    expect(raw(r, ["stash", "list", "--format=%H%x09%gs"]).equals(expected)).toBe(true);
  });

  test("a ref name with byte 0xE9 and a symbolic ref to it: the refs blob is for-each-ref's bytes", async () => {
    const r = makeRepo();
    const c1 = r.commit("one", { "a.txt": "1\n" });
    sh(r, `git check-ref-format "$(printf 'refs/heads/caf\\351')"`); // Git accepts the name
    setBranch(r, c1);
    expect(branchObject(r)).toBe(c1);
    sh(r, `git symbolic-ref refs/heads/alias "$(printf 'refs/heads/caf\\351')"`);
    const s = await snapIn(r);
    const expected = raw(r, ["for-each-ref", "--format=%(refname)%09%(objectname)%09%(objecttype)%09%(symref)%09%09"])
      .toString("latin1")
      .split("\n")
      .filter((l) => l && !l.startsWith("refs/undo/"))
      .map((l) => `${l}\n`)
      .join("");
    const blob = raw(r, ["cat-file", "blob", `${s.tree}:refs`]);
    expect(blob.equals(Buffer.from(expected, "latin1"))).toBe(true);
    expect(blob.includes(Buffer.concat([Buffer.from("refs/heads/alias\t"), Buffer.from(`${c1}\tcommit\t`), BRANCH, Buffer.from("\t\t\n")]))).toBe(true);
  });

  test("undo and redo move a non-UTF-8 branch and HEAD on it by their real names", async () => {
    const r = makeRepo();
    const c1 = r.commit("one", { "a.txt": "1\n" });
    setBranch(r, c1);
    await r.okIn("snapshot"); // #1: HEAD on main, both at c1
    const c2 = r.commit("two", { "a.txt": "2\n" });
    setBranch(r, c2);
    sh(r, `git symbolic-ref HEAD "$(printf 'refs/heads/caf\\351')"`);
    await r.okIn("snapshot"); // #2: HEAD on café, both at c2
    // HEAD's bytes as its file holds them, read through Git (with reftable that file is a placeholder).
    const readHead = () => Buffer.concat([Buffer.from("ref: "), gitBytes(r, ["symbolic-ref", "HEAD"])]);

    await r.okIn("undo");
    expect(branchObject(r)).toBe(c1);
    expect(readHead().toString()).toBe("ref: refs/heads/main\n");
    expect(r.g("rev-parse", "main")).toBe(c1);

    await r.okIn("redo");
    expect(branchObject(r)).toBe(c2);
    expect(readHead().equals(Buffer.concat([Buffer.from("ref: "), BRANCH, Buffer.from("\n")]))).toBe(true);
    expect(r.read("a.txt")).toBe("2\n");
    // No stray ref with U+FFFD in its name was created on the way.
    expect(raw(r, ["for-each-ref", "--format=%(refname)"]).includes(REPLACEMENT)).toBe(false);
  });
});

describe("decodeBytes / encodeBytes", () => {
  test("valid UTF-8 reads as before; any bytes come back exactly", async () => {
    const utf8 = Buffer.from("refs/heads/café-😀\tcommit: naïve\n");
    expect(decodeBytes(utf8)).toBe(new TextDecoder().decode(utf8));
    const samples = [CAFE, Buffer.from([0xc3]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf4, 0x90, 0x80, 0x80, 0x41]), Buffer.from([0xe2, 0x82])];
    let seed = 7;
    for (let n = 0; n < 200; n++) {
      const b = Buffer.alloc(1 + (n % 13));
      for (let i = 0; i < b.length; i++) b[i] = (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
      samples.push(b);
    }
    for (const b of samples) expect(Buffer.from(encodeBytes(decodeBytes(b))).equals(b)).toBe(true);
    expect(commitText(decodeBytes(CAFE))).toBe("caf\u00e9");
    // Byte order: 0xE9 sorts before U+E000 (0xEE 0x80 0x80), as for-each-ref sorts them.
    expect(compareBytes(decodeBytes(BRANCH), "refs/heads/caf\uE000")).toBeLessThan(0);
  });
});
