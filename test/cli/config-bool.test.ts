// Git's booleans are read in one place (core/repo.ts gitBool): every value is
// checked against what `git config --type=bool` makes of it, so undo.worktree,
// pager.undo, color.undo, hook.<name>.enabled and the core.* settings the
// recorder looks at mean what they mean to Git.
import { expect, test } from "bun:test";
import { appendFileSync } from "node:fs";
import { gitBool, parseColorWhen, parseConfig } from "../../core/repo.ts";
import { makeRepo } from "../helpers/repo.ts";

const VALUES = ["true", "TRUE", "Yes", "on", "1", "2", "-1", "1k", "false", "No", "OFF", "0", "00", "0k", "", "maybe", "truthy", "1x", "always"];

test("gitBool reads every value as git config --type=bool does, and null where Git refuses", () => {
  const r = makeRepo();
  for (const v of VALUES) {
    r.git(["config", "x.value", v]);
    const git = r.git(["config", "--type=bool", "x.value"], { allowFail: true });
    const expected = git.code === 0 ? git.stdout.trim() === "true" : null;
    expect([v, gitBool(v)]).toEqual([v, expected]);
  }
  // A key with no value at all ("[x] flag") is true.
  r.git(["config", "--unset", "x.value"]);
  appendFileSync(`${r.gitDir()}/config`, "[x]\n\tflag\n");
  expect(r.git(["config", "--type=bool", "x.flag"]).stdout.trim()).toBe("true");
  expect(gitBool(null)).toBe(true);
});

test("an undo.* boolean Git would refuse is a reported problem, the default in force; a colour falls back to booleans", () => {
  const worktree = (v: string) => parseConfig(new Map([["undo.worktree", v]]));
  expect(worktree("off")).toMatchObject({ worktree: false, problems: [] });
  expect(worktree("2")).toMatchObject({ worktree: true, problems: [] });
  expect(worktree("maybe")).toMatchObject({ worktree: true, problems: [{ key: "undo.worktree", value: "maybe", expected: { kind: "boolean" } }] });
  expect(parseColorWhen("always")).toBe("always");
  expect(parseColorWhen("yes")).toBe("auto");
  expect(parseColorWhen("0")).toBe("never");
  expect(parseColorWhen(null)).toBe("auto");
  expect(parseColorWhen("sometimes")).toBeNull();
});
