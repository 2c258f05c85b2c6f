// Hostile snapshots: crafted in a second repository and fetched, as a snapshot
// from anyone arrives (fetch, clone, push --mirror). Each case changes one
// thing in a real snapshot's tree, message or ref name; the victim then runs
// every reader, and nothing it had may change.
import { expect } from "bun:test";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, readdirSync, readFileSync, lstatSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { copyRepo, fingerprint, makeRepo, ROOT, type RunResult, type TestRepo } from "./repo.ts";
import { previewLines } from "./preview-probe.ts";
import { errorText } from "../../cli/refusal-words.ts";

export interface Base {
  /** The victim's newest real snapshot. */
  ref: string;
  commit: string;
  tree: string;
  message: string;
  /** Ids the crafted content can name. */
  head: string;
  tagObject: string;
  tree0: string;
}

/** What a case makes: the ref it wrote in the attacker's repository. */
export interface Crafted {
  ref: string;
}

export interface HostileCase {
  name: string;
  /**
   * Which readers must refuse: `state` every reader of the state (list marks it
   * unreadable, show and restore refuse); `message` the same, from the commit
   * message; `restore` only a restore (the state reads well, but what it names
   * does not hold); `not-a-snapshot` no reader takes the ref for a snapshot.
   */
  refusedBy: "state" | "message" | "restore" | "not-a-snapshot";
  craft(x: TestRepo, base: Base): Crafted;
}

/** A victim with refs, a tag, a stash entry, an untracked and an ignored file, and two snapshots. */
export const victim = (): TestRepo => victimCopy(pristine().victim);

/**
 * The victim and a clone of it where the attacker crafts, each a fresh copy:
 * both are built once per test file (`cp -a` of a small repository is far
 * cheaper than the Git and git-undo runs that make them).
 */
export function victimAndAttacker(): { v: TestRepo; x: TestRepo } {
  const built = pristine();
  built.attacker ??= attackerOf(built.victim);
  return { v: victimCopy(built.victim), x: copyRepo(built.attacker) };
}

/**
 * victimAndAttacker, the victim's recordings run in-process (checkCase runs
 * hundreds), with the base read once from the attacker as built: a copy holds
 * the same objects and refs, so the same ids.
 */
async function victimAndAttackerIn(): Promise<{ v: TestRepo; x: TestRepo; base: Base }> {
  const built = await pristineIn();
  built.attacker ??= attackerOf(built.victim);
  built.base ??= baseOf(built.attacker);
  const v = copyRepo(built.victim);
  for (let i = 0; i < 2; i++) {
    const again = await v.run(["snapshot"]);
    if (again.code !== 1) throw new Error(`a copy of the victim recorded something: ${again.stdout}${again.stderr}`);
  }
  return { v, x: copyRepo(built.attacker), base: { ...built.base } };
}

/**
 * A copy of the victim as a fresh one is. The kept worktree index is not reused
 * in a copy (its files and HOME are new), so two recordings that find no change
 * make it again as the victim's two snapshots did: the first from the real
 * index, the second reusing it (a reader recording first then
 * changes no file of .git).
 */
function victimCopy(original: TestRepo): TestRepo {
  const v = copyRepo(original);
  for (let i = 0; i < 2; i++) {
    const again = v.undo(["snapshot"]);
    if (again.code !== 1) throw new Error(`a copy of the victim recorded something: ${again.stdout}${again.stderr}`);
  }
  return v;
}

let built: { victim: TestRepo; attacker?: TestRepo; base?: Base } | undefined;
const stale = (b: typeof built): boolean => !b || !existsSync(b.victim.dir) || (b.attacker !== undefined && !existsSync(b.attacker.dir));
/** The victim as built, never handed to a test; again after test/setup.ts removed it. */
function pristine(): { victim: TestRepo; attacker?: TestRepo; base?: Base } {
  if (stale(built)) {
    const v = victimBeforeSnapshots();
    v.ok("snapshot");
    v.write("notes.txt", "untracked, edited\n");
    v.ok("snapshot");
    built = { victim: v };
  }
  return built!;
}

/** pristine, the victim's two snapshots recorded in-process. */
async function pristineIn(): Promise<{ victim: TestRepo; attacker?: TestRepo; base?: Base }> {
  if (stale(built)) {
    const v = victimBeforeSnapshots();
    await v.okIn("snapshot");
    v.write("notes.txt", "untracked, edited\n");
    await v.okIn("snapshot");
    built = { victim: v };
  }
  return built!;
}

/** The victim before its two snapshots (pristine and pristineIn record them, then edit notes.txt and record again). */
function victimBeforeSnapshots(): TestRepo {
  const v = makeRepo();
  // Git 2.47+ runs its automatic maintenance detached after a fetch; a repack
  // finishing after the test's "before" writes info/refs into what it compares.
  v.git(["config", "maintenance.auto", "false"]);
  v.git(["config", "gc.auto", "0"]);
  v.write(".gitignore", "*.log\n");
  v.commit("one", { "a.txt": "a\n", "dir/b.txt": "b\n" });
  v.git(["branch", "feature"]);
  v.git(["tag", "-a", "-m", "version one", "v1"]);
  v.write("a.txt", "stashed\n");
  v.git(["stash", "push", "-q", "-m", "work in progress"]);
  v.write("notes.txt", "untracked\n");
  v.write("build.log", "ignored\n");
  return v;
}

/** A clone of the victim holding its snapshots, where the attacker crafts. */
export function attackerOf(v: TestRepo): TestRepo {
  const x = makeRepo({ bare: true });
  x.git(["fetch", "-q", v.dir, "+refs/*:refs/*"]);
  return x;
}

export function baseOf(x: TestRepo): Base {
  const ref = x.g("for-each-ref", "--sort=-refname", "--count=1", "--format=%(refname)", "refs/undo/snapshots/");
  const commit = x.g("rev-parse", ref);
  return {
    ref,
    commit,
    tree: x.g("rev-parse", `${commit}^{tree}`),
    message: x.git(["cat-file", "commit", commit]).stdout.replace(/^[\s\S]*?\n\n/, ""),
    head: x.g("rev-parse", "refs/heads/main"),
    tagObject: x.g("rev-parse", "refs/tags/v1"),
    tree0: x.g("rev-parse", "refs/heads/main^{tree}"),
  };
}

/** Write a blob; returns its id. */
export const blob = (x: TestRepo, content: string | Uint8Array): string => x.git(["hash-object", "-w", "--stdin"], { input: content }).stdout.trim();

/** A tree from `ls-tree`-style lines, written without Git's checks on names (as an attacker can). */
export function rawTree(x: TestRepo, entries: { mode: string; name: string; oid: string }[]): string {
  const sorted = [...entries].sort((a, b) => {
    const key = (e: { mode: string; name: string }) => Buffer.from(e.mode.startsWith("4") ? `${e.name}/` : e.name);
    return Buffer.compare(key(a), key(b));
  });
  const parts = sorted.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.oid, "hex")]));
  return x.git(["hash-object", "-t", "tree", "-w", "--literally", "--stdin"], { input: Buffer.concat(parts) }).stdout.trim();
}

/** The entries of a tree as raw records. */
export function treeEntries(x: TestRepo, tree: string): { mode: string; name: string; oid: string }[] {
  return x
    .git(["ls-tree", "-z", tree])
    .stdout.split("\0")
    .filter(Boolean)
    .map((rec) => {
      const [meta = "", name = ""] = rec.split("\t");
      const [mode = "", , oid = ""] = meta.split(" ");
      return { mode: mode === "040000" ? "40000" : mode, name, oid };
    });
}

/** The base tree with entry `name` replaced (or added), or removed when `oid` is null. */
export function withEntry(x: TestRepo, tree: string, name: string, oid: string | null, mode = "100644"): string {
  const rest = treeEntries(x, tree).filter((e) => e.name !== name);
  if (oid !== null) rest.push({ mode, name, oid });
  return rawTree(x, rest);
}

/** Commit a crafted state tree as the next snapshot (or under `ref`), with the base's message unless given. */
export function commitSnapshot(x: TestRepo, base: Base, tree: string, opts: { message?: string; ref?: string } = {}): Crafted {
  const env = { GIT_AUTHOR_NAME: "git-undo", GIT_AUTHOR_EMAIL: "git-undo@localhost", GIT_COMMITTER_NAME: "M", GIT_COMMITTER_EMAIL: "m@x" };
  const commit = x.git(["commit-tree", tree, "-p", base.head], { input: opts.message ?? base.message, env }).stdout.trim();
  const next = Number(base.ref.slice(-10)) + 1;
  const ref = opts.ref ?? `refs/undo/snapshots/${String(next).padStart(10, "0")}`;
  x.git(["update-ref", ref, commit]);
  return { ref };
}

/** A case that changes one blob of the state tree. */
export function blobCase(name: string, entry: string, content: (base: Base, old: string) => string | Uint8Array, refusedBy: HostileCase["refusedBy"] = "state"): HostileCase {
  return {
    name,
    refusedBy,
    craft(x, base) {
      const old = x.git(["cat-file", "blob", `${base.tree}:${entry}`], { allowFail: true }).stdout;
      return commitSnapshot(x, base, withEntry(x, base.tree, entry, blob(x, content(base, old))));
    },
  };
}

/** A case that adds one line to the refs blob. */
export const refLineCase = (name: string, line: (b: Base) => string, refusedBy: HostileCase["refusedBy"] = "state"): HostileCase =>
  blobCase(name, "refs", (b, old) => old + line(b), refusedBy);

/** A case that changes the commit message. */
export const messageCase = (name: string, message: (b: Base) => string): HostileCase => ({
  name,
  refusedBy: "message",
  craft: (x, base) => commitSnapshot(x, base, base.tree, { message: message(base) }),
});

// ---------------------------------------------------------------- the victim's side

/** Every file under a directory with its content's hash, paths relative to it; `skip` prunes subtrees. */
export function listing(dir: string, skip: (rel: string) => boolean = () => false): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names.sort()) {
      const p = join(d, n);
      const rel = relative(dir, p);
      if (skip(rel)) continue;
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else out.push(`${rel} ${st.isFile() ? createHash("sha1").update(readFileSync(p)).digest("hex") : "special"}`);
    }
  };
  walk(dir);
  return out;
}

/**
 * Files under .git that a reader may change: its own snapshot refs and their
 * reflogs, its folder, and new objects (content-addressed: adding one changes
 * nothing that was there; record-first writes the state it saves).
 */
const mayChange = (rel: string) => /^(refs\/undo|logs\/refs\/undo|undo|objects)(\/|$)/.test(rel);

/** The user's state without the snapshot refs (which record-first may add to). */
export const userState = (v: TestRepo): string =>
  fingerprint(v)
    .split("\n")
    .filter((l) => !l.startsWith("refs/undo/"))
    .join("\n");

export interface Observation {
  state: string;
  gitDir: string[];
  outside: string[];
}

/** What must stay the same: the user's state, .git outside what readers may change, everything beside the repository. */
export function observe(v: TestRepo): Observation {
  const base = dirname(v.dir);
  return {
    state: userState(v),
    gitDir: listing(join(v.dir, ".git"), mayChange),
    // The tests start Bun on the CLI themselves, not through the launcher that
    // turns Bun's caches off: its cache under $HOME/.bun is the test harness's (test/trust/trust-internal.test.ts covers the launcher).
    outside: listing(base, (rel) => rel === relative(base, v.dir) || rel === "home/.bun"),
  };
}

/** The picker's preview of snapshot n, run in the victim's environment: "ok" or the error's message. */
export function previewOf(v: TestRepo, n: number): RunResult {
  const probe = join(ROOT, "test", "helpers", "preview-probe.ts");
  const r = Bun.spawnSync({ cmd: [process.execPath, probe, String(n)], cwd: v.dir, env: v.env, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** previewOf, in-process. */
async function previewIn(v: TestRepo, n: number): Promise<RunResult> {
  try {
    const lines = await previewLines(n, v.at());
    return { code: 0, stdout: `ok\n${lines.join("\n")}\n`, stderr: "" };
  } catch (e) {
    return { code: 1, stdout: "", stderr: `${errorText(e)}\n` };
  }
}

/** A refusal: a non-zero exit and exactly one line on stderr. */
export function expectOneLineRefusal(r: RunResult, what: string): void {
  if (r.code === 0) throw new Error(`${what}: expected a refusal, got exit 0\n${r.stdout}`);
  const lines = r.stderr.trimEnd().split("\n");
  expect({ what, lines: lines.length, stderr: r.stderr }).toEqual({ what, lines: 1, stderr: r.stderr });
  // The one line names no raw control character.
  expect(/[\x00-\x08\x0b-\x1f\x7f]/.test(r.stderr)).toBe(false);
}

const numberOf = (ref: string): number => Number(ref.slice(-10));

/**
 * The whole check of one case: craft, fetch, then every reader; each refuses
 * in one line (or, for a name that is no snapshot's, ignores it), and the
 * victim's state, its .git outside git-undo's own files, and everything beside
 * the repository stay byte-identical.
 */
export async function checkCase(c: HostileCase): Promise<void> {
  const { v, x, base } = await victimAndAttackerIn();
  const crafted = c.craft(x, base);
  v.git(["fetch", "-q", x.dir, "+refs/undo/*:refs/undo/*"]);
  // Fetched, it is no target of plain undo or redo (test/trust/trust-fetched-snapshots.test.ts); written
  // down as the victim's own (a snapshot damaged in place), undo and redo walk onto it and must refuse too.
  // (makeRepo's repository: its git dir is .git, where observe reads too.)
  appendFileSync(join(v.dir, ".git", "undo", "own-snapshots"), `${v.g("rev-parse", crafted.ref)} ${crafted.ref}\n`);
  const n = numberOf(crafted.ref);
  const before = observe(v);
  const listed = async () => (await v.snapshotsIn()).map((s) => ({ number: s.number, unreadable: s.unreadable !== undefined }));

  if (c.refusedBy === "not-a-snapshot") {
    // No reader takes it for a snapshot: the list is the real one, and recording goes on.
    expect(await listed()).toEqual([
      { number: 2, unreadable: false },
      { number: 1, unreadable: false },
    ]);
    expect((await v.snapshotsIn())[0]!.commit).toBe(v.g("rev-parse", "refs/undo/snapshots/0000000002"));
    const doctor = await v.run(["doctor"]);
    expect(doctor.stdout).toContain(crafted.ref);
    expect(observe(v)).toEqual(before);
    v.write("notes.txt", "edited again\n");
    const made = await v.run(["snapshot"]);
    expect({ code: made.code, out: made.stdout.split(" ")[0] }).toEqual({ code: 0, out: "#3" });
    expect(v.g("rev-parse", "--verify", "refs/undo/snapshots/0000000003")).toMatch(/^[0-9a-f]{40,64}$/);
    return;
  }

  const readerRefuses = c.refusedBy !== "restore";
  const row = (await v.snapshotsIn()).find((s) => s.number === n);
  if (c.refusedBy === "message" || c.refusedBy === "state") {
    expect(row?.unreadable ?? "").not.toBe("");
    const human = await v.run(["list"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`#${n} +unreadable`));
  } else {
    expect(row?.unreadable).toBeUndefined();
  }
  if (readerRefuses) {
    expectOneLineRefusal(await v.run(["show", String(n)]), "show");
    expectOneLineRefusal(await v.run(["show", "-p", String(n)]), "show -p");
  }
  expectOneLineRefusal(await v.run(["restore", "--dry-run", String(n)]), "restore --dry-run");
  expectOneLineRefusal(await v.run(["restore", String(n)]), "restore");
  expectOneLineRefusal(await previewIn(v, n), "the picker's preview");
  expectOneLineRefusal(await v.run(["redo"]), "redo");
  expect(observe(v)).toEqual(before);

  const undo = await v.run(["undo"]);
  if (c.refusedBy === "message") {
    // The snapshot is unreadable, so undo passes over it to #2: the state the user has.
    expect(undo.code).toBe(0);
    expect(userState(v)).toBe(before.state);
  } else {
    expectOneLineRefusal(undo, "undo");
    expect(observe(v)).toEqual(before);
  }
}
