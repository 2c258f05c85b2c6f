// Reports say what was undone and what only the state left holds; list and
// show say when a recording is still on its way (issue 12).
import { expect, test } from "bun:test";
import { autoRepo, list, settled, waitFor } from "../helpers/auto.ts";
import { fingerprint, makeRepo } from "../helpers/repo.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { liveWorker } from "../../worker/protocol.ts";

test("git undo names the change it undid before where it went; redo the one it did again", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  await r.okIn("snapshot");
  r.git(["branch", "feature"]);
  await r.okIn("snapshot");
  r.git(["branch", "-D", "feature"]);
  const deleted = Number(/#(\d+)/.exec(await r.okIn("snapshot"))![1]);

  const dry = r.ok("undo", "--dry-run").split("\n");
  expect(dry[0]).toBe(`Would undo #${deleted} · branch feature deleted`);
  expect(dry[1]).toStartWith(`Would restore #${deleted - 1} · branch feature created`);

  const lines = r.ok("undo").split("\n");
  expect(lines[0]).toBe(`Undid #${deleted} · branch feature deleted`);
  expect(lines[1]).toStartWith(`Restored #${deleted - 1} · branch feature created`);
  expect(r.g("branch", "--list", "feature")).toContain("feature");

  const redo = r.ok("redo").split("\n");
  expect(redo[0]).toBe(`Redid #${deleted} · branch feature deleted`);
  expect(r.g("branch", "--list", "feature")).toBe("");

  // A restore by number names no undone change.
  expect(r.ok("restore", String(deleted - 1)).split("\n")[0]).toStartWith(`Restored #${deleted - 1}`);
});

test("the report lists a new file only the state left holds, and how to get it back", async () => {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  await r.okIn("snapshot");
  // Created outside Git, then added: no snapshot before this one has it.
  r.write("new.txt", "made outside git\n");
  r.git(["add", "new.txt"]);
  r.write("a.txt", "fresh edit\n");
  const before = fingerprint(r);

  const dry = await r.okIn("undo", "--dry-run");
  expect(dry).toMatch(/only the state left has these files: a\.txt, new\.txt; to get them back: git undo redo/);
  expect(fingerprint(r)).toBe(before);

  const report = await r.okIn("undo");
  const line = report.split("\n").find((l) => l.includes("only the state left has"));
  expect(line).toBeDefined();
  expect(line!).toContain("new.txt");
  expect(line!).toMatch(/to get them back: git undo redo/);
  expect(existsSync(r.path("new.txt"))).toBe(false);
  expect(r.read("a.txt")).toBe("a\n");

  // As the report says: redo brings both back.
  await r.okIn("redo");
  expect(r.read("new.txt")).toBe("made outside git\n");
  expect(r.read("a.txt")).toBe("fresh edit\n");

  // Now snapshot #2 holds them too: undoing again lists nothing, though both go again.
  const again = await r.okIn("undo");
  expect(again).not.toMatch(/only the state left has/);
  expect(existsSync(r.path("new.txt"))).toBe(false);
});

test("list and show say recording… while the worker has a change still to record", async () => {
  const r = autoRepo();
  const gitDir = r.gitDir();
  await settled(gitDir);
  // A long settle keeps the worker waiting, the change unrecorded.
  r.git(["config", "undo.settle", "4000"]);
  r.git(["branch", "pending-one"]);
  // Started and holding its lease (until then worker.pid may name the hook's shell).
  await waitFor(() => liveWorker(join(gitDir, "undo")) !== null, "the worker to start");
  expect(await r.okIn("list")).toContain("recording…");
  const latest = list(r)[0]!.number;
  expect(await r.okIn("show", String(latest))).toContain("recording…");
  await settled(gitDir);
  expect(list(r)[0]!.summary).toBe("branch pending-one created");
  expect(await r.okIn("list")).not.toContain("recording…");
}, 60_000);
