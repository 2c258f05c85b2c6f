// @pure
// The code's layout, checked: arrows point down (cli and worker into core,
// within core from a floor to the same or a lower one), no import circle
// (type imports included), core files stay small, the ref storage's kind is
// known only to core/git-data/, and the core reads neither `process` nor the
// environment (the entry points pass what it needs).
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dir, "..", "..");

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...sources(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

const files = ["core", "cli", "worker"].flatMap(sources);
const text = new Map(files.map((f) => [f, readFileSync(join(root, f), "utf8")]));

/** Every relative import of a file (static, type-only, dynamic, require), as a path from the root. */
function importsOf(file: string): string[] {
  const out: string[] = [];
  const pattern = /(?:\b(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?|\brequire\(|\bimport\()["'](\.{1,2}\/[^"']+)["']/g;
  for (const m of text.get(file)!.matchAll(pattern)) out.push(relative(root, resolve(root, dirname(file), m[1]!)));
  return out;
}
const graph = new Map(files.map((f) => [f, importsOf(f)]));

/** Floors of core, lowest first: a module imports from its own floor or one below. */
const FLOORS: readonly (readonly string[])[] = [
  // leaves: codecs, error types, the format in code, switches
  ["core/bytes.ts", "core/text.ts", "core/errors.ts", "core/mode.ts", "core/stat.ts", "core/seams.ts", "core/file-system.ts", "core/bundled.ts", "core/trace.ts", "core/repository-gone.ts", "core/file-tail.ts", "core/format/"],
  // the spawner, the repository, git-undo's own files and locks, the process table
  ["core/git.ts", "core/repo.ts", "core/monitor-setting.ts", "core/undo-files.ts", "core/files.ts", "core/lock.ts", "core/git-data/proc/"],
  // one reader per private Git format
  ["core/git-data/"],
  // the store and what writes into it
  ["core/snapshots/", "core/capture.ts", "core/record.ts", "core/describe.ts", "core/change-facts.ts", "core/patch.ts", "core/hooks/", "core/guard.ts", "core/bundle.ts", "core/worker-files.ts"],
  // the use cases over snapshots
  ["core/restore/", "core/compose.ts", "core/find/"],
];
function floorOf(file: string): number {
  // The longest prefix decides (core/git-data/proc/ before core/git-data/).
  let best = -1;
  let length = 0;
  FLOORS.forEach((prefixes, floor) => {
    for (const p of prefixes) if ((file === p || (p.endsWith("/") && file.startsWith(p))) && p.length > length) [best, length] = [floor, p.length];
  });
  return best;
}

/** Strongly connected groups of more than one file (Tarjan). */
function circles(): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** The code of a file without its comments (so that a comment may name what the code must not use). */
const codeOf = (file: string): string => text.get(file)!.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");

describe("layout", () => {
  test("every import resolves to a source file", () => {
    const missing = [...graph].flatMap(([f, ds]) => ds.filter((d) => !text.has(d) && !d.endsWith(".json") && !d.endsWith(".sh")).map((d) => `${f} -> ${d}`));
    expect(missing).toEqual([]);
  });

  test("no import circle, type imports included", () => {
    expect(circles()).toEqual([]);
  });

  test("core imports nothing from cli/ or worker/, and worker/ nothing from cli/", () => {
    const up = [...graph].flatMap(([f, ds]) =>
      ds.filter((d) => (f.startsWith("core/") && !d.startsWith("core/")) || (f.startsWith("worker/") && d.startsWith("cli/"))).map((d) => `${f} -> ${d}`),
    );
    expect(up).toEqual([]);
  });

  test("every core file has a floor, and imports only from its floor or lower", () => {
    const core = files.filter((f) => f.startsWith("core/"));
    expect(core.filter((f) => floorOf(f) < 0)).toEqual([]);
    const up = core.flatMap((f) => graph.get(f)!.filter((d) => d.startsWith("core/") && floorOf(d) > floorOf(f)).map((d) => `${f} (${floorOf(f)}) -> ${d} (${floorOf(d)})`));
    expect(up).toEqual([]);
  });

  test("no core file is over 500 lines", () => {
    const long = files.filter((f) => f.startsWith("core/")).map((f) => [f, text.get(f)!.split("\n").length - 1] as const).filter(([, n]) => n > 500);
    expect(long).toEqual([]);
  });

  test("the ref storage's kind is named only in core/git-data/", () => {
    expect(files.filter((f) => !f.startsWith("core/git-data/") && /\brefStorage\b/.test(codeOf(f)))).toEqual([]);
  });

  test("nothing loads node:crypto: it brings Node's streams, about 10 ms of CPU at each start of a worker or a command", () => {
    expect(files.filter((f) => /["'](?:node:)?crypto["']/.test(codeOf(f)))).toEqual([]);
  });

  test("core uses no `process`, and nothing below the entry points reads the environment", () => {
    expect(files.filter((f) => f.startsWith("core/") && /\bprocess\./.test(codeOf(f)))).toEqual([]);
    const entries = new Set(["cli/main.ts", "worker/main.ts"]);
    expect(files.filter((f) => !entries.has(f) && /\b(?:process|Bun)\.env\b/.test(codeOf(f)))).toEqual([]);
  });
});
