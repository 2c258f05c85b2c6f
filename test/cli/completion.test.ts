// Shell completion (completion/): bash through Git's own completion, which
// calls _git_undo for `git undo …`, driven non-interactively (COMP_WORDS and
// COMP_CWORD set, COMPREPLY printed); the zsh and fish scripts parse, and
// fish's answers are checked with `complete -C`; install.sh links them where
// each shell looks.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readlinkSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { COMMANDS } from "../../cli/commands/index.ts";
import { gitBinDir, makeRepo, ROOT, tempDir, type TestRepo } from "../helpers/repo.ts";

const COMPLETION = join(ROOT, "completion");

/** Git's bash completion: the Git on PATH's own, else the system's. */
const gitBashCompletion: string | null =
  [
    join(dirname(gitBinDir()), "share", "bash-completion", "completions", "git"),
    "/usr/share/bash-completion/completions/git",
    "/usr/share/git/completion/git-completion.bash",
    "/etc/bash_completion.d/git",
  ].find((p) => existsSync(p)) ?? null;
const noBash = !Bun.which("bash") ? " (skipped: bash is not installed)" : gitBashCompletion === null ? " (skipped: Git's bash completion script is not installed)" : "";
if (noBash) console.log(`completion.test.ts: bash tests${noBash}`);

/** A folder with `git-undo` in it, first on PATH, so `git undo` runs the toolkit. */
const binDir = (() => {
  let dir: string | null = null;
  return (): string => {
    if (dir) return dir;
    dir = tempDir("bin");
    symlinkSync(join(ROOT, "cli", "git-undo"), join(dir, "git-undo"));
    return dir;
  };
})();

const shellEnv = (r: TestRepo): Record<string, string> => ({ ...r.env, PATH: `${binDir()}:${r.env.PATH ?? ""}`, GIT_UNDO_BUN: process.execPath });

/** Git's completion, then ours; the line split into COMP_WORDS (an empty last word after a space); COMPREPLY printed. */
const DRIVER = `
source "$1"
source "$2"
line=$3
read -ra COMP_WORDS <<<"$line"
[[ $line == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
COMP_LINE=$line COMP_POINT=\${#line}
if [[ \${COMP_WORDS[0]} == git ]]; then __git_func_wrap __git_main; else __git_func_wrap _git_undo; fi
printf '%s\\n' "\${COMPREPLY[@]}"
`;

/** What bash offers for `line` (its last word is being completed), trailing spaces trimmed. */
function bashComplete(r: TestRepo, line: string, cwd = r.dir): string[] {
  const p = Bun.spawnSync({
    cmd: ["bash", "--norc", "--noprofile", "-c", DRIVER, "driver", gitBashCompletion!, join(COMPLETION, "git-undo.bash"), line],
    cwd,
    env: shellEnv(r),
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(p.stderr.toString()).toBe("");
  expect(p.exitCode).toBe(0);
  return p.stdout.toString().split("\n").filter(Boolean).map((w) => w.replace(/ +$/, ""));
}

function repoWithSnapshots(): TestRepo {
  const r = makeRepo();
  r.commit("base", { "a.txt": "a\n" });
  r.ok("snapshot", "-m", "first");
  r.write("a.txt", "b\n");
  r.ok("snapshot", "-m", "second: edited a.txt");
  r.write("a.txt", "c\n");
  r.ok("snapshot", "-m", "third");
  return r;
}

const numbers = (r: TestRepo, cwd?: string): string[] =>
  (JSON.parse(r.undo(["list", "--json"], cwd ? { cwd } : {}).stdout) as { number: number }[]).map((s) => String(s.number));

test.skipIf(noBash !== "")(`bash: git undo rest<TAB> is restore; git undo <TAB> is every command${noBash}`, () => {
  const r = repoWithSnapshots();
  expect(bashComplete(r, "git undo rest")).toEqual(["restore"]);
  expect(bashComplete(r, "git undo res").sort()).toEqual(["rescue", "restore"]);
  // Read from `git undo -h` at run time: every command the CLI has, a new one too.
  expect(bashComplete(r, "git undo ").sort()).toEqual(COMMANDS.map((c) => c.name).sort());
  expect(bashComplete(r, "git undo help sh")).toEqual(["show"]);
  // git-undo as a command of its own.
  expect(bashComplete(r, "git-undo rest")).toEqual(["restore"]);
});

test.skipIf(noBash !== "")(`bash: options per command, with = for those that take a value${noBash}`, () => {
  const r = repoWithSnapshots();
  expect(bashComplete(r, "git undo restore --").sort()).toEqual(["--dry-run", "--force", "--only=", "--ref=", "--skip-missing", "--staged", "--stash", "--worktree"]);
  expect(bashComplete(r, "git undo list --max")).toEqual(["--max-count="]);
  expect(bashComplete(r, "git undo log --js")).toEqual(["--json"]);
  expect(bashComplete(r, "git undo --dr")).toEqual(["--dry-run"]);
  expect(bashComplete(r, "git undo init --")).toContain("--file-hooks");
  expect(bashComplete(r, "git undo init --")).not.toContain("--purge");
});

test.skipIf(noBash !== "")(`bash: snapshot numbers for restore <TAB> and show --against${noBash}`, () => {
  const r = repoWithSnapshots();
  const all = numbers(r);
  expect(all.length).toBeGreaterThanOrEqual(3);
  expect(bashComplete(r, "git undo restore ")).toEqual(all);
  expect(bashComplete(r, "git undo show ")).toEqual(all);
  expect(bashComplete(r, "git undo show 2 --against ")).toEqual(all);
  expect(bashComplete(r, "git undo show 2 --against=")).toEqual(all);
  expect(bashComplete(r, `git undo restore -n ${all[0]!.slice(0, 1)}`)).toEqual(all.filter((n) => n.startsWith(all[0]!.slice(0, 1))));
  // One number only (two for diff); undo and redo take a count, not a snapshot.
  expect(bashComplete(r, "git undo restore 2 ")).toEqual([]);
  expect(bashComplete(r, "git undo diff ")).toEqual(all);
  expect(bashComplete(r, "git undo diff 1 ")).toEqual(all);
  expect(bashComplete(r, "git undo diff 1 2 ")).toEqual([]);
  expect(bashComplete(r, "git undo redo ")).toEqual([]);
  // A ref that is not ten digits is no snapshot.
  r.git(["update-ref", "refs/undo/snapshots/77", "HEAD"]);
  expect(bashComplete(r, "git undo restore ")).toEqual(all);
});

test.skipIf(noBash !== "")(`bash: in a linked worktree, that worktree's snapshots${noBash}`, () => {
  const r = repoWithSnapshots();
  const wt = join(tempDir("wt"), "linked");
  r.git(["worktree", "add", "-q", wt]);
  r.ok("-C", wt, "snapshot", "-m", "in the worktree");
  const inWorktree = numbers(r, wt);
  expect(inWorktree).not.toEqual(numbers(r));
  expect(bashComplete(r, "git undo restore ", wt)).toEqual(inWorktree);
});

test.skipIf(!Bun.which("zsh"))(`zsh: _git-undo parses, and lists snapshots with their summaries${Bun.which("zsh") ? "" : " (skipped: zsh is not installed)"}`, () => {
  const r = repoWithSnapshots();
  const file = join(COMPLETION, "_git-undo");
  const parse = Bun.spawnSync({ cmd: ["zsh", "-n", file], stdout: "pipe", stderr: "pipe" });
  expect(parse.stderr.toString()).toBe("");
  expect(parse.exitCode).toBe(0);
  // The completion system's own functions stood in for: what _describe gets.
  const script = `
_call_program() { shift; eval "$@"; }
_describe() { print -l -- "\${(@P)\${@[-1]}}"; }
PREFIX=$2
source <(sed '$d' "$1")
shift 2
words=("$@" ""); CURRENT=$#words
_git-undo`;
  const run = (prefix: string, ...words: string[]) => {
    const p = Bun.spawnSync({ cmd: ["zsh", "-f", "-c", script, "zsh", file, prefix, ...words], cwd: r.dir, env: shellEnv(r), stdout: "pipe", stderr: "pipe" });
    expect(p.stderr.toString()).toBe("");
    return p.stdout.toString().split("\n").filter(Boolean);
  };
  const snaps = r.snapshots();
  expect(run("", "undo", "restore")).toEqual(snaps.map((s) => `${s.number}:${s.summary}`));
  expect(run("", "git-undo", "show", "--against")).toEqual(snaps.map((s) => `${s.number}:${s.summary}`));
  expect(run("", "undo", "diff", "2")).toEqual(snaps.map((s) => `${s.number}:${s.summary}`));
  expect(run("", "undo", "diff", "2", "1")).toEqual([]);
  expect(run("", "undo")).toContain("restore:restore the state of snapshot <n>");
  expect(run("--", "undo", "restore").map((l) => l.split(":")[0])).toEqual(["--force", "--dry-run", "--skip-missing", "--staged", "--worktree", "--ref", "--stash", "--only"]);
});

const fish = Bun.which("fish");
test.skipIf(!fish)(`fish: git-undo.fish parses, and completes commands, options and snapshots${fish ? "" : " (skipped: fish is not installed)"}`, () => {
  const r = repoWithSnapshots();
  const file = join(COMPLETION, "git-undo.fish");
  const parse = Bun.spawnSync({ cmd: ["fish", "-n", file], stdout: "pipe", stderr: "pipe" });
  expect(parse.stderr.toString()).toBe("");
  expect(parse.exitCode).toBe(0);
  const complete = (line: string): string[] => {
    const p = Bun.spawnSync({ cmd: ["fish", "--no-config", "-c", `source $argv[1]; complete -C $argv[2]`, file, line], cwd: r.dir, env: shellEnv(r), stdout: "pipe", stderr: "pipe" });
    expect(p.stderr.toString()).toBe("");
    return p.stdout.toString().split("\n").filter(Boolean);
  };
  expect(complete("git-undo rest")).toEqual(["restore\trestore the state of snapshot <n>"]);
  expect(complete("git-undo restore --").map((l) => l.split("\t")[0]).sort()).toEqual(["--dry-run", "--force", "--only", "--ref", "--skip-missing", "--staged", "--stash", "--worktree"]);
  // Newest first, as `git undo list` shows them.
  expect(complete("git-undo restore ")).toEqual(r.snapshots().map((s) => `${s.number}\t${s.summary}`));
  expect(complete("git-undo restore 2 ")).toEqual([]);
  expect(complete("git-undo diff 2 ")).toEqual(r.snapshots().map((s) => `${s.number}\t${s.summary}`));
  expect(complete("git-undo diff 2 1 ")).toEqual([]);
});

test("install.sh links the completion scripts where each installed shell looks", () => {
  const home = tempDir("home");
  const r = makeRepo();
  const env = { ...r.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local", "share"), GIT_UNDO_BUN: process.execPath };
  mkdirSync(join(home, "elsewhere"));
  const p = Bun.spawnSync({ cmd: ["sh", join(ROOT, "install.sh"), "--prefix", join(home, "bin")], cwd: join(home, "elsewhere"), env, stdout: "pipe", stderr: "pipe" });
  expect(p.stderr.toString()).toBe("");
  expect(p.exitCode).toBe(0);
  const out = p.stdout.toString();
  const linked = (path: string, file: string) => {
    expect(readlinkSync(path)).toBe(join(COMPLETION, file));
    expect(out).toContain(`Linked ${path} (completion)`);
  };
  linked(join(home, ".local", "share", "bash-completion", "completions", "git-undo"), "git-undo.bash");
  if (Bun.which("zsh")) {
    linked(join(home, ".zsh", "completions", "_git-undo"), "_git-undo");
    expect(out).toContain("fpath=(~/.zsh/completions $fpath)");
  } else console.log("install.sh test: zsh part skipped (zsh is not installed)");
  if (fish) linked(join(home, ".config", "fish", "completions", "git-undo.fish"), "git-undo.fish");
  else console.log("install.sh test: fish part skipped (fish is not installed)");
}, 60_000);
