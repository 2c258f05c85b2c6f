// Text read from a snapshot reaches the terminal with its control characters
// escaped: a summary, a stash message or a path crafted elsewhere cannot move
// the cursor, clear the screen or retitle the window (the format's
// "untrusted input" rules).
import { expect, test } from "bun:test";
import { baseOf, blob, commitSnapshot, victimAndAttacker, withEntry } from "./helpers/hostile.ts";

const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/;

test("a summary, a stash message and a path with escape sequences are shown escaped everywhere", () => {
  const { v, x } = victimAndAttacker();
  const base = baseOf(x);
  const evil = "\x1b]0;pwned\x07\x1b[2J";
  const stash = x.git(["cat-file", "blob", `${base.tree}:stash`]).stdout;
  const tab = stash.indexOf("\t");
  let tree = withEntry(x, base.tree, "stash", blob(x, `${stash.slice(0, tab)}\tmessage ${evil}\n`));
  // A path with a newline and an escape in it: valid for Git, hostile for a terminal.
  const wt = x.g("rev-parse", `${base.tree}:worktree`);
  const wtEntries = x.git(["ls-tree", "-z", wt]).stdout;
  const path = `new${evil}\nline.txt`;
  const newWt = x.git(["mktree", "-z"], { input: `${wtEntries}100644 blob ${blob(x, "x\n")}\t${path}\0` }).stdout.trim();
  tree = withEntry(x, tree, "worktree", newWt, "40000");
  commitSnapshot(x, base, tree, { message: `summary ${evil}\n\nUndo-Format: 1\nUndo-Kind: manual\nUndo-Head: main\n` });
  v.git(["fetch", "-q", x.dir, "+refs/undo/*:refs/undo/*"]);

  for (const args of [["list"], ["show", "3"], ["restore", "--dry-run", "3"]]) {
    const r = v.undo(args);
    expect({ args, code: r.code }).toEqual({ args, code: 0 });
    expect({ args, raw: RAW_CONTROL.test(r.stdout + r.stderr) }).toEqual({ args, raw: false });
  }
  expect(v.undo(["list"]).stdout).toContain("summary \\e]0;pwned\\x07\\e[2J");
  expect(v.undo(["show", "3"]).stdout).toContain("message \\e]0;pwned");
  // Restoring it creates the file under its real name; the report names it escaped.
  const restored = v.undo(["restore", "3"]);
  expect(restored.code).toBe(0);
  expect(RAW_CONTROL.test(restored.stdout + restored.stderr)).toBe(false);
  expect(v.git(["ls-files", "-z", "--others", "--exclude-standard"]).stdout.split("\0")).toContain(path);
});
