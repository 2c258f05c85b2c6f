// Round trip (spec: Restoring; clarifications: "Restoring", "Position, undo and
// redo"): a repository built by a seeded random sequence of everyday Git work,
// a snapshot after each step, then restores in a seeded random order with
// `git undo`, `git undo redo` and `git undo restore <n>`. Every restore must
// give back exactly what the user saw when its target was recorded, the
// restore snapshot must be that state (recording again finds nothing new), and
// at the end every file content any snapshot saw is still reachable from
// refs/undo/.
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, readFileSync, readlinkSync, symlinkSync } from "node:fs";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { userFingerprint } from "../helpers/restore.ts";
import { rng } from "../helpers/rng.ts";


/** Git's blob id of some content. */
const blobId = (content: Uint8Array | string) => {
  const body = typeof content === "string" ? Buffer.from(content) : Buffer.from(content);
  return createHash("sha1").update(Buffer.concat([Buffer.from(`blob ${body.length}\0`), body])).digest("hex");
};

class Script {
  private n = 0;
  constructor(
    readonly r: TestRepo,
    readonly random: () => number,
  ) {}

  pick<T>(list: readonly T[]): T | undefined {
    return list.length ? list[Math.floor(this.random() * list.length)] : undefined;
  }
  fresh(prefix: string): string {
    return `${prefix}${++this.n}`;
  }
  text(): string {
    const lines = 1 + Math.floor(this.random() * 4);
    return Array.from({ length: lines }, () => `line ${Math.floor(this.random() * 1e6)}`).join("\n") + "\n";
  }
  /** Paths on disk Git shows (tracked or untracked, not ignored). */
  visible(): string[] {
    const out = this.r.git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"]).stdout;
    return [...new Set(out.split("\0").filter(Boolean))].filter((p) => this.kind(p) !== null);
  }
  kind(p: string): "file" | "link" | null {
    try {
      const st = lstatSync(this.r.path(p));
      return st.isSymbolicLink() ? "link" : st.isFile() ? "file" : null;
    } catch {
      return null;
    }
  }
  regular(): string[] {
    return this.visible().filter((p) => this.kind(p) === "file");
  }
  tracked(): string[] {
    return this.r.g("ls-files").split("\n").filter((p) => p && this.kind(p) === "file");
  }
  clean(): boolean {
    return this.r.git(["status", "--porcelain"]).stdout === "";
  }
  branches(): string[] {
    return this.r.g("for-each-ref", "--format=%(refname:short)", "refs/heads/").split("\n").filter(Boolean);
  }
  current(): string {
    return this.r.git(["symbolic-ref", "-q", "--short", "HEAD"], { allowFail: true }).stdout.trim();
  }
  commitAll(message: string): void {
    this.r.git(["add", "-A"]);
    this.r.git(["commit", "-q", "--allow-empty", "-m", message]);
  }
}

type Op = (s: Script) => string;

/** Everyday Git work. Each returns what it did, for the failure message. */
const OPS: Record<string, Op> = {
  commit(s) {
    for (let i = 0; i < 2; i++) s.r.write(s.pick(s.tracked()) ?? s.fresh("f") + ".txt", s.text());
    s.commitAll(s.fresh("commit "));
    return "commit";
  },
  edit(s) {
    const p = s.pick(s.regular()) ?? "new.txt";
    s.r.write(p, s.text());
    return `edit ${p}`;
  },
  untracked(s) {
    const p = s.pick(["", "dir/", "dir/sub/"]) + s.fresh("u") + ".txt";
    s.r.write(p, s.text());
    return `untracked ${p}`;
  },
  remove(s) {
    const p = s.pick(s.visible());
    if (!p) return "remove (nothing)";
    if (s.random() < 0.5 && s.tracked().includes(p)) s.r.git(["rm", "-q", "-f", "--", p]);
    else s.r.remove(p);
    return `remove ${p}`;
  },
  rename(s) {
    const p = s.pick(s.tracked());
    if (!p) return "rename (nothing)";
    const to = s.pick(["", "dir/", "moved/"]) + s.fresh("r") + ".txt";
    s.r.git(["mv", "-k", p, to]);
    return `rename ${p} ${to}`;
  },
  exec(s) {
    const p = s.pick(s.regular());
    if (!p) return "exec (nothing)";
    const mode = lstatSync(s.r.path(p)).mode & 0o777;
    chmodSync(s.r.path(p), mode & 0o100 ? 0o644 : 0o755);
    return `chmod ${p}`;
  },
  symlink(s) {
    const to = s.pick(s.regular()) ?? "nowhere";
    const p = s.fresh("link");
    symlinkSync(to.split("/").pop()!, s.r.path(p));
    return `symlink ${p} -> ${to}`;
  },
  stage(s) {
    const p = s.pick(s.regular()) ?? s.fresh("s") + ".txt";
    s.r.write(p, s.text());
    s.r.git(["add", "--", p]);
    if (s.random() < 0.5) s.r.write(p, s.text()); // staged and unstaged changes both
    return `stage ${p}`;
  },
  branch(s) {
    const b = s.fresh("topic-");
    s.r.git(["branch", b, s.pick(["HEAD", "HEAD~1", "main"]) ?? "HEAD"], { allowFail: true });
    return `branch ${b}`;
  },
  deleteBranch(s) {
    const b = s.pick(s.branches().filter((x) => x !== s.current() && x !== "main"));
    if (!b) return "delete branch (none)";
    s.r.git(["branch", "-q", "-D", b]);
    return `delete branch ${b}`;
  },
  tag(s) {
    const t = s.fresh("v");
    if (s.random() < 0.5) s.r.git(["tag", t]);
    else s.r.git(["tag", "-a", "-m", `release ${t}`, t]);
    return `tag ${t}`;
  },
  switch(s) {
    const b = s.pick(s.branches().filter((x) => x !== s.current()));
    if (!b) {
      const fresh = s.fresh("work-");
      s.r.git(["checkout", "-q", "-b", fresh]);
      return `switch to new ${fresh}`;
    }
    // Local changes come along; Git refuses when they would be overwritten.
    const r = s.r.git(["checkout", "-q", b], { allowFail: true });
    return `switch ${b} (${r.code})`;
  },
  stashPush(s) {
    const args = ["stash", "push", "-q"];
    if (s.random() < 0.5) args.push("-u");
    const r = s.r.git(args, { allowFail: true });
    return `stash push (${r.code})`;
  },
  stashPop(s) {
    if (!s.r.g("stash", "list")) return "stash pop (empty)";
    // Git refuses over local changes, or stops on a conflict and keeps the entry: both are states to record.
    const r = s.r.git(["stash", "pop", "-q"], { allowFail: true });
    return `stash pop (${r.code})`;
  },
  stashDrop(s) {
    if (!s.r.g("stash", "list")) return "stash drop (empty)";
    s.r.git(["stash", "drop", "-q"]);
    return "stash drop";
  },
};

let conflictSnapshot = 0;

/** A merge stopped on a conflict in conflict.txt; recorded, then aborted (restores then need no --force). */
async function conflict(s: Script, snap: () => Promise<number>): Promise<string> {
  if (!s.clean()) s.commitAll(s.fresh("before conflict "));
  const base = s.current() || "HEAD";
  const side = s.fresh("side-");
  s.r.write("conflict.txt", "base\n");
  s.commitAll("conflict base");
  s.r.git(["checkout", "-q", "-b", side]);
  s.r.write("conflict.txt", "side\n");
  s.commitAll("side change");
  s.r.git(["checkout", "-q", base]);
  s.r.write("conflict.txt", "ours\n");
  s.commitAll("our change");
  expect(s.r.git(["merge", "-q", side], { allowFail: true }).code).not.toBe(0);
  expect(s.r.g("ls-files", "-u")).not.toBe("");
  const n = await snap(); // the conflicted index and the file with markers
  s.r.git(["merge", "--abort"]);
  conflictSnapshot = n;
  return `conflict with ${side}`;
}

// ROUNDTRIP_SEED tries another sequence (the failure message shows the last steps).
const SEED = Number(process.env.ROUNDTRIP_SEED ?? 20240611);
const BUILD_STEPS = 30;
const RESTORES = 36;

test(`round trip: ${BUILD_STEPS} seeded operations, ${RESTORES} seeded restores (seed ${SEED})`, async () => {
  const random = rng(SEED);
  const r = makeRepo();
  const s = new Script(r, random);
  r.commit("start", { "a.txt": "a\n", "b.txt": "b\n", "dir/c.txt": "c\n" });

  /** The user's view of each snapshot, and every blob any of them saw (files, index entries). */
  const seen = new Map<number, string>();
  const blobs = new Map<string, string>();
  const log: string[] = [];
  /** The user's view now, as last computed: nothing but the restores below changes it. */
  let current = "";
  const snap = async () => {
    const made = await r.run(["snapshot"]);
    const out = made.stdout.trim();
    const m = /^#(\d+) /.exec(out) ?? /no change since #(\d+)/.exec(out);
    // A new snapshot exits 0, "no change" 1 (nothing to do).
    expect(made.code).toBe(out.startsWith("#") ? 0 : 1);
    expect(m).not.toBeNull();
    const n = Number(m![1]);
    const fp = userFingerprint(r);
    if (seen.has(n)) expect(fp).toBe(seen.get(n)!);
    seen.set(n, fp);
    current = fp;
    for (const p of s.visible()) {
      const abs = r.path(p);
      const id = s.kind(p) === "link" ? blobId(readlinkSync(abs)) : blobId(readFileSync(abs));
      blobs.set(id, `${p} at #${n}`);
    }
    for (const line of r.g("ls-files", "-s").split("\n").filter(Boolean)) blobs.set(line.split(" ")[1]!, `index ${line} at #${n}`);
    log.push(`#${n}`);
    return n;
  };
  await snap();

  // Every kind of work at least once, in a seeded order, then seeded extras; the conflict in the middle.
  const kinds = Object.keys(OPS);
  const order = [...kinds].sort(() => random() - 0.5);
  while (order.length < BUILD_STEPS - 1) order.push(kinds[Math.floor(random() * kinds.length)]!);
  order.splice(Math.floor(order.length / 2), 0, "conflict");
  for (const kind of order) {
    log.push(kind === "conflict" ? await conflict(s, snap) : OPS[kind]!(s));
    await snap();
  }
  const recorded = [...seen.keys()];
  expect(recorded.length).toBeGreaterThan(20);

  expect(conflictSnapshot).toBeGreaterThan(0);
  for (let i = 0; i < RESTORES; i++) {
    const x = random();
    const steps = random() < 0.3 ? [String(2 + Math.floor(random() * 3))] : [];
    const n = i === 0 ? conflictSnapshot : random() < 0.6 ? s.pick(recorded)! : s.pick([...seen.keys()])!;
    const args = i === 0 || x >= 0.6 ? ["restore", String(n)] : x < 0.35 ? steps : ["redo", ...steps];
    // What the last check computed (the end of the build, a restore, or a refusal): a
    // refusal must leave exactly that, so the refused command and the recording
    // after the last restore are both held to it.
    const before = current;
    const res = await r.run(args);
    const what = `git undo ${args.join(" ")}`.trim();
    if (res.code !== 0) {
      // Only running out of snapshots to step to is a fair refusal here; it changes nothing.
      expect(args[0] === "restore" ? `${what}: ${res.stderr}` : res.stderr).toMatch(/nothing to (undo|redo)|only \d+ (is|are) available/);
      expect(userFingerprint(r)).toBe(before);
      log.push(`${what}: refused`);
      continue;
    }
    const latest = (await r.snapshotsIn())[0]!;
    expect(latest.kind).toBe("restore");
    const target = latest.restored!;
    log.push(`${what} -> #${latest.number} restored #${target}`);
    const context = log.slice(-12).join("\n");
    current = userFingerprint(r);
    expect(`${context}\n${current}`).toBe(`${context}\n${seen.get(target)!}`);
    // The restore snapshot is the state on disk: recording again finds nothing new.
    const again = await r.run(["snapshot"]);
    expect(`${context}\n${again.code} ${again.stdout.trim()}`).toBe(`${context}\n1 no change since #${latest.number}`);
    seen.set(latest.number, seen.get(target)!);
  }

  // Nothing any snapshot saw is lost: every blob is reachable from refs/undo/.
  const reachable = new Set(
    r
      .g("rev-list", "--objects", "--glob=refs/undo/*")
      .split("\n")
      .map((l) => l.split(" ")[0]!),
  );
  const lost = [...blobs].filter(([id]) => !reachable.has(id)).map(([id, where]) => `${id} (${where})`);
  if (process.env.SHOW_LOG) console.log(log.join("\n"));
  expect(lost).toEqual([]);
}, 180_000);
