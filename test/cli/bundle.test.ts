// The bundle (core/bundle.ts, built by build/bundle.ts) is a cache of the sources: the launcher runs it
// while it matches them, and the sources as soon as any has changed, so an
// edited checkout never runs old code; a rebuild brings it back into use.
import { expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyToolkit, makeRepo } from "../helpers/repo.ts";

/** `git undo -h` through the toolkit's launcher, traced: what it printed and what it ran. */
function help(toolkit: string, cwd: string, env: Record<string, string>): { out: string; ran: string } {
  const r = Bun.spawnSync({ cmd: [join(toolkit, "cli", "git-undo"), "-h"], cwd, env: { ...env, GIT_UNDO_TRACE: "1", GIT_UNDO_BUN: process.execPath }, stdout: "pipe", stderr: "pipe" });
  expect(r.exitCode).toBe(0);
  const ran = /phase start \(Bun and modules, (\w+)(?:: \w+)?\)/.exec(r.stderr.toString())?.[1] ?? "";
  return { out: r.stdout.toString(), ran };
}

/** What `git undo doctor` prints through the toolkit's launcher. */
function doctor(toolkit: string, cwd: string, env: Record<string, string>): string {
  return Bun.spawnSync({ cmd: [join(toolkit, "cli", "git-undo"), "doctor"], cwd, env: { ...env, GIT_UNDO_BUN: process.execPath }, stdout: "pipe", stderr: "pipe" }).stdout.toString();
}

function build(toolkit: string): void {
  const r = Bun.spawnSync({ cmd: [process.execPath, join(toolkit, "build", "bundle.ts")], cwd: toolkit, stdout: "pipe", stderr: "pipe" });
  expect(r.stderr.toString()).toBe("");
  expect(r.exitCode).toBe(0);
}

test("the launcher runs the bundle while it matches the sources, the sources once one changed, the bundle again after a rebuild", () => {
  const toolkit = copyToolkit();
  const r = makeRepo();
  const index = join(toolkit, "cli", "commands", "index.ts");
  const original = readFileSync(index, "utf8");
  expect(original).toContain("list snapshots, newest first");

  // No bundle: the sources, and doctor says so with what it costs and how to build one.
  expect(help(toolkit, r.dir, r.env).ran).toBe("sources");
  expect(doctor(toolkit, r.dir, r.env)).toMatch(/note\s+git-undo runs from its sources, with no bundle .* about 10 ms slower; .*build\/bundle\.ts' builds it/);
  build(toolkit);
  expect(existsSync(join(toolkit, "dist", "cli", "main.js"))).toBe(true);
  expect(existsSync(join(toolkit, "dist", "worker", "main.js"))).toBe(true);
  const fresh = help(toolkit, r.dir, r.env);
  expect(fresh.ran).toBe("bundle");
  expect(fresh.out).toContain("list snapshots, newest first");
  expect(doctor(toolkit, r.dir, r.env)).not.toMatch(/the bundle in|no bundle/);

  // An edit: the bundle hands over to the sources, which print the new text.
  writeFileSync(index, original.replace("list snapshots, newest first", "list the snapshots (edited)"));
  const edited = help(toolkit, r.dir, r.env);
  expect(edited.ran).toBe("sources");
  expect(edited.out).toContain("list the snapshots (edited)");
  // doctor says so, and how to build it again.
  expect(doctor(toolkit, r.dir, r.env)).toContain(`the bundle in ${join(toolkit, "dist")} is older than the sources`);

  // The same content back under a new mtime (a checkout, an npm install): the
  // bundle matches again, and the manifest takes the new mtime.
  writeFileSync(index, original);
  const later = new Date(Date.now() + 60_000);
  utimesSync(index, later, later);
  const restored = help(toolkit, r.dir, r.env);
  expect(restored.ran).toBe("bundle");
  expect(restored.out).toContain("list snapshots, newest first");
  expect(readFileSync(join(toolkit, "dist", "sources.json"), "utf8")).toContain(String(later.getTime()));

  // A rebuild after the edit runs the edit from the bundle, each entry one
  // file with its bytecode beside it.
  writeFileSync(index, original.replace("list snapshots, newest first", "list the snapshots (rebuilt)"));
  build(toolkit);
  for (const e of ["cli", "worker"]) {
    expect(readFileSync(join(toolkit, "dist", e, "main.js"), "utf8")).toStartWith("// @bun @bytecode");
    expect(existsSync(join(toolkit, "dist", e, "main.js.jsc"))).toBe(true);
  }
  const rebuilt = help(toolkit, r.dir, r.env);
  expect(rebuilt.ran).toBe("bundle");
  expect(rebuilt.out).toContain("list the snapshots (rebuilt)");

  // Bytecode that is not main.js's (a pair caught half-replaced) or none at all: Bun parses main.js.
  const jsc = join(toolkit, "dist", "cli", "main.js.jsc");
  writeFileSync(jsc, readFileSync(join(toolkit, "dist", "worker", "main.js.jsc")));
  expect(help(toolkit, r.dir, r.env)).toEqual(rebuilt);
  rmSync(jsc);
  expect(help(toolkit, r.dir, r.env)).toEqual(rebuilt);

  // Chunks a build from before bytecode left: kept a day, for a process started from it; then removed.
  const chunk = join(toolkit, "dist", "list-0ld0chnk.js");
  writeFileSync(chunk, "");
  build(toolkit);
  expect(existsSync(chunk)).toBe(true);
  const dayAgo = new Date(Date.now() - 25 * 60 * 60 * 1000);
  utimesSync(chunk, dayAgo, dayAgo);
  build(toolkit);
  expect(existsSync(chunk)).toBe(false);

  // A bundle without its list of sources is never trusted.
  rmSync(join(toolkit, "dist", "sources.json"));
  expect(help(toolkit, r.dir, r.env).ran).toBe("sources");
});

/** `git undo <args>` through the toolkit's launcher, traced: the bundle or part each start ran ("bundle: list", "bundle", "sources"), and stdout. */
function starts(toolkit: string, args: string[], cwd: string, env: Record<string, string>, launcher = join(toolkit, "cli", "git-undo")): { ran: string[]; out: string; code: number } {
  const cmd = launcher.endsWith(".js") ? [process.execPath, launcher, ...args] : [launcher, ...args];
  const r = Bun.spawnSync({ cmd, cwd, env: { ...env, GIT_UNDO_TRACE: "1", GIT_UNDO_BUN: process.execPath }, stdout: "pipe", stderr: "pipe" });
  const ran = [...r.stderr.toString().matchAll(/phase start \(Bun and modules, ([^)]+)\)/g)].map((m) => m[1]!);
  return { ran, out: r.stdout.toString(), code: r.exitCode ?? -1 };
}

test("the launcher starts the part of the bundle holding the command; a part holds only its commands' code and hands any other to the whole bundle", async () => {
  const toolkit = copyToolkit();
  build(toolkit);
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  await r.okIn("snapshot");
  const cases: [string[], string][] = [
    [["snapshot"], "bundle: snapshot"],
    [["--no-pager", "list", "-n", "1"], "bundle: list"],
    [["-C", r.dir, "list"], "bundle: list"],
    [[], "bundle: restore"],
    [["3", "--dry-run"], "bundle: restore"],
    [["redo", "--dry-run"], "bundle: restore"],
    [["show", "1"], "bundle"],
    [["log", "-n", "1"], "bundle"],
    [["help", "list"], "bundle"],
  ];
  for (const [args, part] of cases) expect({ args, ran: starts(toolkit, args, r.dir, r.env).ran }).toEqual({ args, ran: [part] });

  // A part's file: its commands only (the picker's code is in the whole bundle alone).
  const dist = join(toolkit, "dist", "cli");
  expect(readFileSync(join(dist, "main.js"), "utf8")).toContain("Ctrl-R");
  for (const part of ["restore", "snapshot", "list"]) {
    expect(readFileSync(join(dist, `${part}.js`), "utf8")).toStartWith("// @bun @bytecode");
    expect(readFileSync(join(dist, `${part}.js`), "utf8")).not.toContain("Ctrl-R");
    expect(existsSync(join(dist, `${part}.js.jsc`))).toBe(true);
  }
  // Every start of a command makes the JIT reluctant (cli/jit-policy.ts); the worker, which lives on, does not.
  for (const file of ["main", "restore", "snapshot", "list"]) expect(readFileSync(join(dist, `${file}.js`), "utf8")).toContain("setJITPolicy");
  expect(readFileSync(join(toolkit, "dist", "worker", "main.js"), "utf8")).not.toContain("setJITPolicy");
  // Given a command it does not hold, a part hands over to the whole bundle in the same process: the same output.
  // (The two runs may fall either side of a second: the snapshot's age is left out.)
  const ageless = (run: { ran: string[]; out: string; code: number }) => ({ ...run, out: run.out.replace(/\d+ seconds? ago/g, "seconds ago") });
  const viaWhole = starts(toolkit, ["list"], r.dir, r.env, join(dist, "main.js"));
  const handedOver = starts(toolkit, ["list"], r.dir, r.env, join(dist, "snapshot.js"));
  expect(ageless(handedOver)).toEqual({ ran: ["bundle: snapshot", "bundle"], out: ageless(viaWhole).out, code: 0 });
  expect(viaWhole.out).toContain("#1");
  const unknown = starts(toolkit, ["bogus"], r.dir, r.env, join(dist, "list.js"));
  expect(unknown.code).toBe(1);
}, 60_000);
