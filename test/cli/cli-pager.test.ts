// list and show page through Git's pager on a terminal (issue 17): the pager
// Git would use (GIT_PAGER, core.pager, PAGER), pager.undo to turn it off or
// name another, --no-pager; never when stdout is a pipe or /dev/null.
import { afterEach, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadPicocolors } from "../../cli/host.ts";
import { CLI, makeRepo, tempDir, type TestRepo } from "../helpers/repo.ts";
import { hasTmux, Terminal } from "../helpers/tmux.ts";

const terminals: Terminal[] = [];
afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
});

/** A pager that saves what it is given (and its LESS) to a file, then prints a word. */
function recordingPager(name: string): { command: string; file: string } {
  const dir = tempDir("pager");
  const file = join(dir, `${name}.out`);
  const script = join(dir, name);
  writeFileSync(script, `#!/bin/sh\n{ echo "LESS=$LESS"; cat; } >'${file}'\necho "${name} done"\n`, { mode: 0o755 });
  return { command: script, file };
}

function repoWithSnapshots(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "a\n" });
  r.ok("snapshot");
  r.write("a.txt", "b\n");
  r.ok("snapshot");
  return r;
}

async function runInTerminal(r: TestRepo, args: string[], env: Record<string, string> = {}): Promise<string> {
  const t = new Terminal(r, 120, 30);
  terminals.push(t);
  t.start(args, env);
  return t.waitForText(/EXIT=\d+/);
}

test.skipIf(!hasTmux())("on a terminal, list and show go through GIT_PAGER, core.pager or pager.undo, with LESS=FRX", async () => {
  const r = repoWithSnapshots();
  const env = recordingPager("envpager");
  let s = await runInTerminal(r, ["list"], { GIT_PAGER: env.command });
  expect(s).toContain("envpager done");
  expect(s).toContain("EXIT=0");
  let paged = readFileSync(env.file, "utf8");
  expect(paged.split("\n")[0]).toBe("LESS=FRX");
  expect(paged).toMatch(/#2 .*untracked|#2 .*a\.txt|#2 /);
  expect(paged).toContain("#1");

  const core = recordingPager("corepager");
  r.git(["config", "core.pager", core.command]);
  s = await runInTerminal(r, ["show", "1"]);
  expect(s).toContain("corepager done");
  expect(readFileSync(core.file, "utf8")).toContain("snapshot #1");

  const own = recordingPager("undopager");
  r.git(["config", "pager.undo", own.command]);
  s = await runInTerminal(r, ["list"]);
  expect(s).toContain("undopager done");
  expect(existsSync(own.file)).toBe(true);
});

test.skipIf(!hasTmux())("pager.undo=false, --no-pager and GIT_PAGER=cat print straight to the terminal", async () => {
  const r = repoWithSnapshots();
  const p = recordingPager("never");
  r.git(["config", "core.pager", p.command]);
  r.git(["config", "pager.undo", "false"]);
  let s = await runInTerminal(r, ["list"]);
  expect(s).toMatch(/#1 /);
  r.git(["config", "--unset", "pager.undo"]);
  s = await runInTerminal(r, ["--no-pager", "list"]);
  expect(s).toMatch(/#1 /);
  s = await runInTerminal(r, ["list"], { GIT_PAGER: "cat" });
  expect(s).toMatch(/#1 /);
  expect(existsSync(p.file)).toBe(false);
});

test("piped, nothing is paged: the output is the list itself", () => {
  const r = repoWithSnapshots();
  const p = recordingPager("piped");
  const res = r.undo(["list"], { env: { GIT_PAGER: p.command } });
  expect(res.code).toBe(0);
  expect(res.stdout).toMatch(/#1 /);
  expect(existsSync(p.file)).toBe(false);
});

test("stdout on /dev/null is no terminal: nothing is paged, nothing printed", () => {
  const r = repoWithSnapshots();
  const p = recordingPager("devnull");
  const run = Bun.spawnSync({
    cmd: ["sh", "-c", `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} list >/dev/null`],
    cwd: r.dir,
    env: { ...r.env, GIT_PAGER: p.command },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(run.exitCode).toBe(0);
  expect(run.stdout.toString() + run.stderr.toString()).toBe("");
  expect(existsSync(p.file)).toBe(false);
});

test.skipIf(!hasTmux())("on a terminal, colours by default (color auto, NO_COLOR unset)", async () => {
  const r = repoWithSnapshots();
  r.git(["config", "pager.undo", "false"]);
  const t = new Terminal(r, 120, 30);
  terminals.push(t);
  t.start(["list"], { NO_COLOR: "" });
  expect(await t.exitCode()).toBe(0);
  expect(t.screenWithEscapes()).toMatch(/\x1b\[[0-9;]*m#1/);
});

test("loading picocolors leaves FORCE_COLOR as it was, set or not", () => {
  const before = process.env.FORCE_COLOR;
  try {
    delete process.env.FORCE_COLOR;
    expect(loadPicocolors(process.env).createColors(true).red("x")).toBe("\x1b[31mx\x1b[39m");
    expect("FORCE_COLOR" in process.env).toBe(false);
    process.env.FORCE_COLOR = "0";
    loadPicocolors(process.env);
    expect(process.env.FORCE_COLOR).toBe("0");
  } finally {
    if (before === undefined) delete process.env.FORCE_COLOR;
    else process.env.FORCE_COLOR = before;
  }
});
