// Reading recorded snapshots back with plain Git, so tests compare what
// git-undo wrote against what Git itself reports about the repository.
import { expect } from "bun:test";
import type { TestRepo } from "./repo.ts";

export interface RecordedSnapshot {
  ref: string;
  commit: string;
  tree: string;
}

/** The snapshot refs under `prefix`, oldest first. */
export function snapshotRefs(r: TestRepo, prefix = "refs/undo/snapshots/"): RecordedSnapshot[] {
  const out = r.g("for-each-ref", "--format=%(refname) %(objectname) %(tree)", prefix);
  return out
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [ref = "", commit = "", tree = ""] = l.split(" ");
      return { ref, commit, tree };
    });
}

/** The newest snapshot under `prefix`; fails the test when there is none. */
export function latest(r: TestRepo, prefix = "refs/undo/snapshots/"): RecordedSnapshot {
  const all = snapshotRefs(r, prefix);
  expect(all.length).toBeGreaterThan(0);
  return all[all.length - 1]!;
}

/** `git undo snapshot` expecting a new snapshot; returns it. */
export function snap(r: TestRepo, args: string[] = [], opts: { cwd?: string; env?: Record<string, string> } = {}): RecordedSnapshot & { out: string } {
  const res = r.undo(["snapshot", ...args], opts);
  if (res.code !== 0) throw new Error(`git undo snapshot exited ${res.code}: ${res.stderr}`);
  expect(res.stdout).toMatch(/^#\d+ /);
  const prefix = opts.cwd ? r.git(["rev-parse", "--git-path", "x"], { cwd: opts.cwd }).stdout : "";
  const linked = /\/worktrees\/([^/]+)\/x\n?$/.exec(prefix);
  return { ...latest(r, linked ? `refs/undo/worktrees/${linked[1]}/snapshots/` : "refs/undo/snapshots/"), out: res.stdout };
}

/** `snap`, the command run in-process (TestRepo.run). */
export async function snapIn(r: TestRepo, args: string[] = [], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<RecordedSnapshot & { out: string }> {
  const res = await r.run(["snapshot", ...args], opts);
  if (res.code !== 0) throw new Error(`git undo snapshot exited ${res.code}: ${res.stderr}`);
  expect(res.stdout).toMatch(/^#\d+ /);
  const prefix = opts.cwd ? r.git(["rev-parse", "--git-path", "x"], { cwd: opts.cwd }).stdout : "";
  const linked = /\/worktrees\/([^/]+)\/x\n?$/.exec(prefix);
  return { ...latest(r, linked ? `refs/undo/worktrees/${linked[1]}/snapshots/` : "refs/undo/snapshots/"), out: res.stdout };
}

/** Raw bytes of `<tree>:<name>`. */
export function blobBytes(r: TestRepo, tree: string, name: string): Buffer {
  const res = Bun.spawnSync({ cmd: ["git", "cat-file", "blob", `${tree}:${name}`], cwd: r.dir, env: r.env, stdout: "pipe", stderr: "pipe" });
  if (res.exitCode !== 0) throw new Error(`no ${name} in ${tree}: ${res.stderr.toString()}`);
  return Buffer.from(res.stdout);
}

export const blobText = (r: TestRepo, tree: string, name: string): string => blobBytes(r, tree, name).toString("utf8");

/** Raw stdout bytes of a git command. */
export function gitBytes(r: TestRepo, args: string[], env: Record<string, string> = {}): Buffer {
  const res = Bun.spawnSync({ cmd: ["git", ...args], cwd: r.dir, env: { ...r.env, ...env }, stdout: "pipe", stderr: "pipe" });
  if (res.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${res.stderr.toString()}`);
  return Buffer.from(res.stdout);
}

/** The top-level entries of a state tree: name -> "<mode> <type> <oid>". */
export function entries(r: TestRepo, tree: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rec of r.git(["ls-tree", "-z", tree]).stdout.split("\0")) {
    if (!rec) continue;
    const tab = rec.indexOf("\t");
    out[rec.slice(tab + 1)] = rec.slice(0, tab);
  }
  return out;
}

/** `git ls-tree -r -z` of a tree: path -> "<mode> <type> <oid>". */
export function treeFiles(r: TestRepo, tree: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const rec of r.git(["ls-tree", "-r", "-z", tree]).stdout.split("\0")) {
    if (!rec) continue;
    const tab = rec.indexOf("\t");
    out.set(rec.slice(tab + 1), rec.slice(0, tab));
  }
  return out;
}

/** The raw commit object (`git cat-file commit`). */
export const commitText = (r: TestRepo, commit: string): string => gitBytes(r, ["cat-file", "commit", commit]).toString("utf8");

/** The message part of a commit object, byte for byte. */
export function commitMessage(r: TestRepo, commit: string): string {
  const raw = commitText(r, commit);
  return raw.slice(raw.indexOf("\n\n") + 2);
}

/** The parents of a commit, in order. */
export function parents(r: TestRepo, commit: string): string[] {
  return commitText(r, commit)
    .split("\n\n", 1)[0]!
    .split("\n")
    .filter((l) => l.startsWith("parent "))
    .map((l) => l.slice(7));
}

/** A header line of a commit (`author`, `committer`) without its date. */
export function ident(r: TestRepo, commit: string, field: "author" | "committer"): string {
  const line = commitText(r, commit)
    .split("\n")
    .find((l) => l.startsWith(`${field} `))!;
  return line.slice(field.length + 1).replace(/ \d+ [+-]\d{4}$/, "");
}

/** The line `refs` would hold for a ref, built from fields. */
export const refLine = (name: string, object: string, type: string, symref = "", peeled = "", peeledType = ""): string =>
  `${name}\t${object}\t${type}\t${symref}\t${peeled}\t${peeledType}\n`;

/** The empty tree's id in this repository's object format. */
export const emptyTree = (r: TestRepo): string => r.git(["hash-object", "-t", "tree", "--stdin"], { input: "" }).stdout.trim();
