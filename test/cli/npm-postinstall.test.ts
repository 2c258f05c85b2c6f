// cli/npm-postinstall: after `npm install -g`, shell completion under npm's
// prefix as copies (npm runs no script on uninstall, so links into the package
// would be left dangling); each works while the package is there and, once
// it is gone, does nothing and deletes itself when its shell loads it. The
// real npm install and uninstall are in .ci/npm-install.
import { expect, test } from "bun:test";
import { cpSync, existsSync, lstatSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { copyToolkit, ROOT, tempDir } from "../helpers/repo.ts";

const FILES = {
  bash: ["share/bash-completion/completions/git-undo", "git-undo.bash"],
  zsh: ["share/zsh/site-functions/_git-undo", "_git-undo"],
  fish: ["share/fish/vendor_completions.d/git-undo.fish", "git-undo.fish"],
} as const;

function run(cmd: string[], env: Record<string, string> = {}): { code: number; out: string } {
  const r = Bun.spawnSync({ cmd, env: { PATH: process.env.PATH ?? "", HOME: tempDir("home"), ...env }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? -1, out: r.stdout.toString() + r.stderr.toString() };
}

test("completion copies under the prefix work while the package is there, and delete themselves once it is gone", () => {
  // A prefix and a package path with a quote and a space: the checks quote them for each shell.
  const toolkit = join(tempDir("pkg"), "it's here", "git-undo");
  cpSync(copyToolkit(), toolkit, { recursive: true });
  cpSync(join(ROOT, "completion"), join(toolkit, "completion"), { recursive: true });
  const prefix = join(tempDir("prefix"), "npm prefix");
  cpSync(join(ROOT, "LICENSE"), join(prefix, "LICENSE")); // makes the folder
  const post = run(["sh", join(toolkit, "cli", "npm-postinstall")], { npm_config_global: "true", npm_config_prefix: prefix });
  expect(post).toEqual({ code: 0, out: "" });

  for (const [shell, [rel, source]] of Object.entries(FILES)) {
    const path = join(prefix, rel);
    expect([shell, lstatSync(path).isFile()]).toEqual([shell, true]);
    const original = readFileSync(join(ROOT, "completion", source), "utf8");
    const copy = readFileSync(path, "utf8");
    // The original, with two lines (a note and the check) after its #compdef line (zsh) or at the top.
    const kept = shell === "zsh" ? 1 : 0;
    const lines = copy.split("\n");
    expect(lines.slice(0, kept).concat(lines.slice(kept + 2)).join("\n")).toBe(original);
  }
  const bashFile = join(prefix, FILES.bash[0]);
  expect(run(["bash", "-c", `. "$1" && declare -F _git_undo`, "bash", bashFile])).toEqual({ code: 0, out: "_git_undo\n" });
  const fish = Bun.which("fish");
  const fishFile = join(prefix, FILES.fish[0]);
  if (fish) expect(run([fish, "--no-config", "-c", "source $argv[1]; and functions -q __git_undo_command; and echo defined", fishFile])).toEqual({ code: 0, out: "defined\n" });

  // npm uninstall -g: the package folder goes; npm runs nothing of ours.
  renameSync(toolkit, `${toolkit}.gone`);
  expect(run(["bash", "-c", `. "$1"; echo "status $?"; declare -F _git_undo`, "bash", bashFile])).toEqual({ code: 1, out: "status 0\n" });
  expect(existsSync(bashFile)).toBe(false);
  const zsh = Bun.which("zsh");
  const zshFile = join(prefix, FILES.zsh[0]);
  if (zsh) {
    const dir = join(prefix, "share", "zsh", "site-functions");
    expect(run([zsh, "-fc", `fpath=("$1" $fpath); autoload -Uz _git-undo; _git-undo; echo "status $?"`, "zsh", dir])).toEqual({ code: 0, out: "status 1\n" });
    expect(existsSync(zshFile)).toBe(false);
  } else console.log("npm-postinstall test: zsh part skipped (zsh is not installed)");
  if (fish) {
    expect(run([fish, "--no-config", "-c", "source $argv[1]; functions -q __git_undo_command; or echo none", fishFile])).toEqual({ code: 0, out: "none\n" });
    expect(existsSync(fishFile)).toBe(false);
  } else console.log("npm-postinstall test: fish part skipped (fish is not installed)");
});

test("a local install or a checkout's bun install writes nothing", () => {
  const prefix = tempDir("prefix");
  expect(run(["sh", join(ROOT, "cli", "npm-postinstall")], { npm_config_prefix: prefix })).toEqual({ code: 0, out: "" });
  expect(existsSync(join(prefix, "share"))).toBe(false);
});
