// Leftovers of killed processes clean themselves: a restore SIGKILLed right
// after each of its steps leaves index.lock, capture.lock and its scratch
// folder; the next `git undo` then runs with no manual step, removes them all,
// and every snapshot is still restorable to exactly the state it recorded.
// What a live process, another host or a real Git command holds stays.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { STEPS } from "../../core/restore/index.ts";
import { backdate, deadPid, killAfter } from "../helpers/kill.ts";
import { copyRepo, makeRepo, type TestRepo } from "../helpers/repo.ts";
import { userFingerprint } from "../helpers/restore.ts";

/** Three snapshots that differ in refs, HEAD, index, working tree and stash; their fingerprints by number. */
async function buildHistory(): Promise<{ r: TestRepo; prints: Map<number, string> }> {
  const r = makeRepo();
  const prints = new Map<number, string>();
  // Recorded in-process (TestRepo.okIn): the history is the fixture, not what is tested.
  const snap = async () => {
    const n = Number(/#(\d+)/.exec(await r.okIn("snapshot"))![1]);
    prints.set(n, userFingerprint(r));
  };
  r.commit("one", { "a.txt": "1\n", "keep.txt": "k\n" });
  await snap();
  r.commit("two", { "a.txt": "2\n", "b.txt": "b\n" });
  r.write("a.txt", "wip\n");
  r.git(["stash", "push", "-q", "-m", "wip"]);
  r.git(["branch", "side"]);
  await snap();
  r.git(["switch", "-q", "side"]);
  r.write("a.txt", "3\n");
  r.git(["add", "a.txt"]);
  r.write("c.txt", "untracked\n");
  await snap();
  return { r, prints };
}

let built: { r: TestRepo; prints: Map<number, string> } | undefined;
/** A copy of the history, built once per file: what each test kills is the restore, not the making. */
async function history(): Promise<{ r: TestRepo; prints: Map<number, string> }> {
  if (!built || !existsSync(built.r.dir)) built = await buildHistory();
  return { r: copyRepo(built.r), prints: built.prints };
}

const leftovers = (r: TestRepo): string[] => {
  const undo = join(r.gitDir(), "undo");
  const names = readdirSync(undo).filter((n) => n.startsWith("tmp-") || n === "index-lock.owner" || n === "capture.lock" || n.includes(".git-undo-"));
  if (existsSync(join(r.gitDir(), "index.lock"))) names.push("index.lock");
  return names.sort();
};

STEPS.forEach((step, i) => {
  const args = i % 2 === 0 ? [] : ["restore", "1"];
  test(`SIGKILL after '${step}' (git undo${args.length ? ` ${args.join(" ")}` : ""}): the next restore cleans up and completes; every snapshot restores exactly`, async () => {
    const { r, prints } = await history();
    await killAfter(r, step, args);
    // The kill left the locks and the scratch folder behind.
    const left = leftovers(r);
    expect(left).toContain("index.lock");
    expect(left).toContain("capture.lock");
    expect(left.some((n) => n.startsWith("tmp-"))).toBe(true);

    // The killed command may have gone all the way to its restore snapshot: then plain undo could be at the bottom.
    const next = await r.run(args.length ? ["restore", "2"] : []);
    expect(next.stderr).toBe("");
    expect(next.code).toBe(0);
    expect(leftovers(r)).toEqual([]);

    for (const [n, print] of [...prints].sort(([a], [b]) => a - b)) {
      const res = await r.run(["restore", String(n)]);
      expect(res.stderr).toBe("");
      expect(res.code).toBe(0);
      expect(userFingerprint(r)).toBe(print);
    }
    expect(leftovers(r)).toEqual([]);
  });
});

test("leftovers: a dead owner's scratch folders and half-written files go; a live owner's, another host's and unknown files stay", async () => {
  const { r } = await history();
  const undo = join(r.gitDir(), "undo");
  const dead = await deadPid();
  const host = hostname().replace(/[^A-Za-z0-9._-]/g, "_");
  const sleeper = Bun.spawn({ cmd: ["sleep", "30"] });
  try {
    const gone = [`tmp-${dead}@${host}-Ab12Cd`, `.blobs.json.git-undo-${dead}@${host}`];
    const stay = [`tmp-${sleeper.pid}@${host}-Zz99Yy`, `tmp-${dead}@other-host.example-Qq11Ww`, "notes.txt"];
    mkdirSync(join(undo, gone[0]!));
    writeFileSync(join(undo, gone[0]!, "spare"), Buffer.alloc(1 << 20));
    writeFileSync(join(undo, gone[1]!), "{");
    mkdirSync(join(undo, stay[0]!));
    mkdirSync(join(undo, stay[1]!));
    writeFileSync(join(undo, stay[2]!), "mine");
    r.write("a.txt", "4\n");
    expect((await r.run(["snapshot"])).code).toBe(0);
    const names = readdirSync(undo);
    for (const n of gone) expect(names).not.toContain(n);
    for (const n of stay) expect(names).toContain(n);
  } finally {
    sleeper.kill();
  }
});

test("index.lock: a killed restore's is removed; a Git command's, a live restorer's or another host's is never", async () => {
  const { r } = await history();
  const undo = join(r.gitDir(), "undo");
  const lock = join(r.gitDir(), "index.lock");
  const owner = join(undo, "index-lock.owner");
  const dead = await deadPid();
  const sleeper = Bun.spawn({ cmd: ["sleep", "30"] });
  const refusedWith = async (what: string) => {
    const before = userFingerprint(r);
    const res = await r.run([]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("index.lock");
    expect(userFingerprint(r)).toBe(before);
    expect(existsSync(lock)).toBe(true);
    expect(readFileSync(lock, "utf8")).toBe(what);
  };
  try {
    // A Git command's (no owner file), empty as Git's is while it works.
    writeFileSync(lock, "");
    await refusedWith("");
    // The owner file names a dead git-undo, but index.lock was made long after it (a Git command's since).
    writeFileSync(owner, `${dead} ${hostname()}\n`);
    backdate(owner, 600);
    await refusedWith("");
    // The owner file names a dead git-undo, but index.lock has content: Git is writing it.
    writeFileSync(owner, `${dead} ${hostname()}\n`);
    writeFileSync(lock, "DIRC");
    await refusedWith("DIRC");
    // A live restorer's, and another host's.
    writeFileSync(lock, "");
    writeFileSync(owner, `${sleeper.pid} ${hostname()}\n`);
    await refusedWith("");
    writeFileSync(lock, "");
    writeFileSync(owner, `${dead} build-box.example.org\n`);
    await refusedWith("");
    // A killed restore's: a dead owner on this host, index.lock the empty file made with the owner file.
    writeFileSync(owner, `${dead} ${hostname()}\n`);
    writeFileSync(lock, "");
    const res = await r.run([]);
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(owner)).toBe(false);
  } finally {
    sleeper.kill();
  }
});
