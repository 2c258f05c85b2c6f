// Text read from a snapshot reaches the terminal with its control characters
// escaped: a summary, a stash message or a path crafted elsewhere cannot move
// the cursor, clear the screen or retitle the window (the format's
// "untrusted input" rules).
import { expect, test } from "bun:test";
import { baseOf, blob, commitSnapshot, victimAndAttacker, withEntry } from "../helpers/hostile.ts";

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

test("git undo diff escapes what comes from the snapshot: the stash message, refs, paths; the files' lines stay as Git prints them", async () => {
  const { v, x } = victimAndAttacker();
  const base = baseOf(x);
  // OSC (retitle), a C1 control and a right-to-left override.
  const evil = "\x1b]0;PWNED\x07 \u009b2J \u202eevil";
  const stash = x.git(["cat-file", "blob", `${base.tree}:stash`]).stdout;
  const tab = stash.indexOf("\t");
  let tree = withEntry(x, base.tree, "stash", blob(x, `${stash.slice(0, tab)}\tOn main: st${evil}\n`));
  const wt = x.g("rev-parse", `${base.tree}:worktree`);
  const wtEntries = x.git(["ls-tree", "-z", wt]).stdout;
  const newWt = x.git(["mktree", "-z"], { input: `${wtEntries}100644 blob ${blob(x, "tab\there\r\n")}\tname${evil}.txt\0` }).stdout.trim();
  tree = withEntry(x, tree, "worktree", newWt, "40000");
  commitSnapshot(x, base, tree);
  v.git(["fetch", "-q", x.dir, "+refs/undo/*:refs/undo/*"]);
  v.git(["config", "core.quotePath", "false"]); // Git then prints the path's bytes as they are
  const unsafe = /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u202e]/;
  for (const args of [["diff", "3"], ["diff", "3", "--stat"], ["diff", "3", "--name-only"], ["diff", "--color=always", "3"]]) {
    const r = await v.run(args);
    expect({ args, code: r.code }).toEqual({ args, code: 0 });
    const shown = args.includes("--color=always") ? r.stdout.replace(/\x1b\[[0-9;]*m/g, "") : r.stdout;
    expect({ args, raw: unsafe.test(shown) }).toEqual({ args, raw: false });
  }
  const patch = (await v.run(["diff", "3"])).stdout;
  expect(patch).toContain("\tOn main: st\\e]0;PWNED\\x07 \\x9b2J \\u{202e}evil\n");
  // Git quotes the path's C0 controls itself; the rest is escaped as everywhere.
  expect(patch).toContain('+++ "b/worktree/name\\033]0;PWNED\\a \\x9b2J \\u{202e}evil.txt"');
  // The file's own line, tab and carriage return included, as git diff shows it.
  expect(patch).toContain("+tab\there\r\n");
});
