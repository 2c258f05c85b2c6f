// A capture never mixes two commands (format clarifications, "When the worker
// records"): the refs and the index are read before the files, and a reading
// that another command wrote files during is thrown away, nothing recorded;
// a command that only wrote the index leaves it whole.
import { expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { indexIdentity } from "../../core/git-data/index/file.ts";
import { CaptureTorn } from "../../core/capture.ts";
import { record } from "../../core/record.ts";
import { openRepo } from "../../core/repo.ts";
import { restoreMark, takeMark } from "../../worker/protocol.ts";
import { captureIntact } from "../../worker/main.ts";
import { markingRepo } from "../helpers/auto.ts";


test("a command that wrote files during the reading tears it; one that only wrote the index does not", async () => {
  const { r, undo, release } = markingRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  try {
    await (async () => {
      const repo = await openRepo(r.at());
      const indexFile = repo.indexFile;
      // Nothing happened: whole.
      let before = indexIdentity(indexFile);
      expect(await captureIntact(repo, undo, before)).toBe(true);
      // `git add` wrote the index, not the files.
      r.write("a.txt", "edited\n");
      r.git(["add", "a.txt"]);
      expect(await captureIntact(repo, undo, before)).toBe(true);
      // `reset --hard` wrote files.
      rmSync(join(undo, "pending"), { force: true });
      before = indexIdentity(indexFile);
      r.git(["reset", "-q", "--hard"]);
      expect(await captureIntact(repo, undo, before)).toBe(false);
      // The index written with no hook at all (another tool, hooks off): it cannot be told, so torn.
      rmSync(join(undo, "pending"), { force: true });
      before = indexIdentity(indexFile);
      r.write("b.txt", "edited\n");
      r.git(["add", "b.txt"], { env: { GIT_UNDO_INTERNAL: "1" } });
      expect(await captureIntact(repo, undo, before)).toBe(false);
    })();
  } finally {
    release();
  }
});

test("a torn reading records nothing, and its mark is put back for the next recording", async () => {
  const { r, undo, release } = markingRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  try {
    r.undo(["snapshot"]); // init recorded #1 already: "no change" is fine
    const count = r.snapshots().length;
    r.write("a.txt", "edited before\n");
    r.git(["add", "a.txt"]);
    expect(takeMark(undo)).toBe(true);
    await (async () => {
      const repo = await openRepo(r.at());
      const before = indexIdentity(repo.indexFile);
      // The next command starts while the state is read: it checks the files out again.
      const intact = async () => {
        r.git(["checkout", "-q", "--", "."]);
        r.git(["reset", "-q", "--hard"]);
        return captureIntact(repo, undo, before);
      };
      await expect(record(repo, { kind: "change", intact })).rejects.toBeInstanceOf(CaptureTorn);
    })();
    expect(r.snapshots()).toHaveLength(count);
    // The worker puts the taken mark back beside the new one: one recording covers both commands.
    restoreMark(undo);
    expect(existsSync(join(undo, "pending.taken"))).toBe(false);
    expect(readFileSync(join(undo, "pending"), "latin1").split("\n").filter(Boolean).length).toBeGreaterThanOrEqual(1);
  } finally {
    release();
  }
});
