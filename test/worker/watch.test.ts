// git undo watch (spec: Automatic recording — edits outside Git are captured
// by git undo watch): an outside edit is recorded after the settle time; an
// edit in an ignored folder records nothing; Ctrl-C stops it cleanly.
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, makeRepo, tempDir } from "../helpers/repo.ts";
import { list, SETTLE_MS, waitFor } from "../helpers/auto.ts";

test("watch records an outside edit, ignores an ignored folder, and stops on SIGINT", async () => {
  const r = makeRepo();
  r.git(["config", "undo.settle", String(SETTLE_MS)]);
  r.commit("base", { "a.txt": "a\n", ".gitignore": "build/\n" });
  const spawns = join(tempDir("trace"), "spawns");
  writeFileSync(spawns, "");
  const p = Bun.spawn({ cmd: [process.execPath, CLI, "watch"], cwd: r.dir, env: { ...r.env, GIT_UNDO_TRACE_SPAWNS: spawns }, stdout: "pipe", stderr: "pipe" });
  let output = "";
  const reader = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of p.stdout) output += decoder.decode(chunk);
  })();
  await waitFor(() => /#1 commit \(initial\): base\n/.test(output), "watch to start and record the current state");

  r.write("notes.txt", "outside Git\n");
  await waitFor(() => /#2 untracked: notes\.txt\n/.test(output), "the edit to be recorded");
  const snaps = list(r);
  expect(snaps).toHaveLength(2);
  expect(r.g("cat-file", "-p", `${snaps[0]!.commit}:worktree/notes.txt`)).toBe("outside Git");

  // Ignored paths trigger nothing: Git is asked whether they are ignored, and nothing more.
  const seen = readFileSync(spawns, "utf8").length;
  r.write("build/out.bin", "generated\n");
  r.write("build/deep/more.bin", "generated\n");
  await Bun.sleep(SETTLE_MS * 4);
  const after = readFileSync(spawns, "utf8").slice(seen).split("\n").filter(Boolean);
  expect(after.length).toBeGreaterThan(0);
  for (const cmd of after) expect(cmd).toStartWith("check-ignore");
  r.write("a.txt", "edited\n");
  await waitFor(() => /#3 edited: a\.txt\n/.test(output), "the second edit to be recorded");
  expect(list(r)).toHaveLength(3);
  expect(output).not.toContain("#4");

  p.kill("SIGINT");
  expect(await p.exited).toBe(0);
  await reader;
  expect(await new Response(p.stderr).text()).toBe("stopped watching\n");
}, 60_000);
