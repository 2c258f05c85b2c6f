// The set-up the find tests share: work written, recorded, then destroyed.
import { existsSync } from "node:fs";
import { copyRepo, fingerprint, makeRepo, type TestRepo } from "./repo.ts";

/** The user's state (refs, HEAD, index, files, stash) without the snapshots themselves. */
export const userState = (r: TestRepo): string =>
  fingerprint(r)
    .split("\n")
    .filter((l) => !l.startsWith("refs/undo/"))
    .join("\n");

export const SPACED = "notes dir/ünïcödé file.txt";

/**
 * Text written, recorded, then destroyed by reset --hard, stash drop and
 * branch -D (six snapshots), with the user's state at #1, #3 and #5.
 */
export function lostWork(): { r: TestRepo; atOne: string; atThree: string; atFive: string } {
  // Built once per test file, copied for each test (its states do not depend on where it is).
  if (!built || !existsSync(built.r.dir)) built = buildLostWork();
  return { ...built, r: copyRepo(built.r) };
}

let built: ReturnType<typeof buildLostWork> | undefined;

function buildLostWork(): { r: TestRepo; atOne: string; atThree: string; atFive: string } {
  const r = makeRepo();
  r.commit("base", { "f.txt": "base\n" });
  r.write("f.txt", "base\nmy precious work\n");
  r.write(SPACED, "secret ünïcode line\n");
  r.git(["add", "--", SPACED]);
  r.ok("snapshot"); // #1
  const atOne = userState(r);
  r.git(["reset", "-q", "--hard"]);
  r.ok("snapshot"); // #2: the edit and the staged file are gone
  r.write("f.txt", "base\nstashed thought\n");
  r.ok("snapshot"); // #3
  const atThree = userState(r);
  r.git(["stash", "-q"]);
  r.git(["stash", "drop", "-q"]);
  r.ok("snapshot"); // #4
  r.git(["checkout", "-q", "-b", "feature"]);
  r.commit("feature", { "feature.txt": "branch-only idea\n" });
  r.ok("snapshot"); // #5
  const atFive = userState(r);
  r.git(["checkout", "-q", "main"]);
  r.git(["branch", "-q", "-D", "feature"]);
  r.ok("snapshot"); // #6
  return { r, atOne, atThree, atFive };
}
