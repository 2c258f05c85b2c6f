// The command line behaves as Git's does: --version, help <command>, "did you
// mean" by Git's similarity rule, -C <path>, exact numbers, the exit codes the
// README names, and one line per error.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { mostSimilar, parse, type Command } from "../../cli/command.ts";
import { COMMANDS } from "../../cli/commands/index.ts";
import { UndoError } from "../../core/errors.ts";
import { fingerprint, gitBinDir, makeRepo, ROOT, tempDir, type RunResult, type TestRepo } from "../helpers/repo.ts";
import { snap, snapshotRefs } from "../helpers/snap.ts";

/** The first line of gc's output: the space snapshots hold follows it (cli/commands/gc.ts). */
const gcFirstLine = (r: { code: number; stdout: string; stderr: string }) => ({ ...r, stdout: `${r.stdout.split("\n")[0]}\n` });

/** A failure as Git reports one: this exit code, nothing on stdout, one line on stderr. */
function oneLineError(res: RunResult, code: number): string {
  expect({ code: res.code, stdout: res.stdout }).toEqual({ code, stdout: "" });
  const lines = res.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

/** Two snapshots: a commit, then an edit. */
function twoSnapshots(): TestRepo {
  const r = makeRepo();
  r.commit("one", { "a.txt": "one\n" });
  snap(r);
  r.write("a.txt", "edited\n");
  snap(r);
  return r;
}

const COMMAND_NAMES = COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]);

describe("--version", () => {
  test("prints git-undo and package.json's version, needing no repository", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const r = makeRepo();
    const res = await r.run(["--version"], { cwd: tempDir("not-a-repo") });
    expect(res).toEqual({ code: 0, stdout: `git-undo ${version}\n`, stderr: "" });
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    // Through Git and the launcher, as users type it: Git passes --version on to git-undo.
    const bin = join(tempDir("bin"), "bin");
    mkdirSync(bin);
    symlinkSync(join(ROOT, "cli", "git-undo"), join(bin, "git-undo"));
    const viaGit = Bun.spawnSync({ cmd: ["git", "undo", "--version"], cwd: r.dir, env: { ...r.env, PATH: `${bin}:${gitBinDir()}:/usr/bin:/bin` }, stdout: "pipe", stderr: "pipe" });
    expect({ code: viaGit.exitCode, stdout: viaGit.stdout.toString() }).toEqual({ code: 0, stdout: `git-undo ${version}\n` });
  });
});

describe("help", () => {
  test("'git undo help <command>' is 'git undo <command> --help'; plain 'help' is the general help", async () => {
    const r = makeRepo();
    for (const name of COMMAND_NAMES) {
      const viaHelp = await r.run(["help", name]);
      expect({ name, code: viaHelp.code }).toEqual({ name, code: 0 });
      expect(viaHelp.stdout).toBe(r.undo([name, "--help"]).stdout);
      expect(viaHelp.stdout).toMatch(/^usage: git undo /);
    }
    expect(await r.okIn("help", "restore")).toMatch(/^usage: git undo restore <n>/);
    expect(await r.okIn("help")).toBe(await r.okIn("--help"));
    expect(await r.okIn("help")).toContain("-C <path>");
  });

  test("help help describes help itself, as the man page lists it (issue #30.12); a mistyped help is suggested", async () => {
    const r = makeRepo();
    for (const args of [["help", "help"], ["help", "-h"]]) {
      const res = await r.run(args);
      expect({ args, code: res.code, stderr: res.stderr }).toEqual({ args, code: 0, stderr: "" });
      expect(res.stdout).toStartWith("usage: git undo help [<command>]\n");
    }
    expect(r.undo(["hepl"]).stderr).toEndWith("\nThe most similar command is\n\thelp\n");
  });

  test("help for a command that does not exist: Git's answer, exit 1", async () => {
    const r = makeRepo();
    const res = await r.run(["help", "lst"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe("git undo: 'lst' is not a git undo command. See 'git undo --help'.\n\nThe most similar command is\n\tlist\n");
  });
});

describe("did you mean", () => {
  test("a mistyped command: Git's wording and exit 1, the most similar command listed", async () => {
    const r = twoSnapshots();
    const before = fingerprint(r);
    const res = await r.run(["lst"]);
    expect(res).toEqual({
      code: 1,
      stdout: "",
      stderr: "git undo: 'lst' is not a git undo command. See 'git undo --help'.\n\nThe most similar command is\n\tlist\n",
    });
    // What starts like a command is that command (issue #30.13: 'restor' got no suggestion).
    expect(r.undo(["restor", "3"]).stderr).toEndWith("\nThe most similar command is\n\trestore\n");
    // A swap costs nothing: 'shwo' is next to 'show' only.
    expect(r.undo(["shwo"]).stderr).toEndWith("\nThe most similar command is\n\tshow\n");
    // Nothing similar enough: the one line only.
    expect(oneLineError(await r.run(["frobnicate"]), 1)).toBe("git undo: 'frobnicate' is not a git undo command. See 'git undo --help'.");
    expect(fingerprint(r)).toBe(before);
    expect(snapshotRefs(r)).toHaveLength(2);
  });

  test("Git's rule: weighted distance (swap 0, substitution 2, insertion 1, deletion 3), prefix matches first, a floor", async () => {
    expect(mostSimilar("lst", COMMAND_NAMES)).toEqual(["list"]);
    expect(mostSimilar("restroe", COMMAND_NAMES)).toEqual(["restore"]);
    // An insertion is cheap, a deletion dear: 'lis' is a prefix of 'list'; 'listt' needs a deletion.
    expect(mostSimilar("listt", COMMAND_NAMES)).toEqual(["list"]);
    // Prefix matches, when there are some, are the suggestion, alone (issue #30.13: Git adds
    // the best of the others, and drops them all when those are too far, as for 'restor').
    expect(mostSimilar("l", COMMAND_NAMES)).toEqual(["list", "log"]);
    expect(mostSimilar("ab", ["ax", "ay", "abc", "zzzz"])).toEqual(["abc"]);
    for (const typed of ["restor", "rest", "resto"]) expect({ typed, similar: mostSimilar(typed, COMMAND_NAMES) }).toEqual({ typed, similar: ["restore"] });
    expect(mostSimilar("res", COMMAND_NAMES)).toEqual(["rescue", "restore"]);
    expect(mostSimilar("resore", COMMAND_NAMES)).toEqual(["restore"]);
    expect(mostSimilar("re", COMMAND_NAMES)).toEqual(["redo", "rescue", "restore", "revert"]);
    // Everything a prefix match is too ambiguous to suggest anything.
    expect(mostSimilar("", ["list", "log"])).toEqual([]);
    // Ties are all listed, in name order.
    expect(mostSimilar("xb", ["ab", "cb"])).toEqual(["ab", "cb"]);
    // Substitutions at 2 each: three reach the floor (3 * 2 + 1 = 7), two stay under it.
    expect(mostSimilar("xyzt", ["abzt"])).toEqual(["abzt"]);
    expect(mostSimilar("xyzt", ["abct"])).toEqual([]);
  });

  test("a mistyped option: the most similar one, in one line naming the right command's -h", async () => {
    const r = twoSnapshots();
    const before = fingerprint(r);
    expect(oneLineError(await r.run(["--dryrun"]), 129)).toBe("error: unknown option '--dryrun'; did you mean '--dry-run'? (see 'git undo -h')");
    expect(oneLineError(await r.run(["restore", "1", "--dryrun"]), 129)).toBe(
      "error: unknown option '--dryrun'; did you mean '--dry-run'? (see 'git undo restore -h')",
    );
    expect(oneLineError(await r.run(["list", "--jsno"]), 129)).toContain("did you mean '--json'?");
    expect(oneLineError(await r.run(["--versoin"]), 129)).toContain("did you mean '--version'?");
    // One dash for a long option, as Git says it.
    expect(oneLineError(await r.run(["list", "-json"]), 129)).toContain("did you mean '--json' (with two dashes)?");
    // Nothing similar: no suggestion.
    expect(oneLineError(await r.run(["list", "--bogus"]), 129)).toBe("error: unknown option '--bogus' (see 'git undo list -h')");
    expect(fingerprint(r)).toBe(before);
  });

  test("errors name the -h of the command as typed: plain git undo, an alias", async () => {
    const r = twoSnapshots();
    expect(oneLineError(await r.run(["--bogus"]), 129)).toEndWith("(see 'git undo -h')");
    expect(oneLineError(await r.run(["-x"]), 129)).toEndWith("(see 'git undo -h')");
    expect(oneLineError(await r.run(["undo", "--bogus"]), 129)).toEndWith("(see 'git undo undo -h')");
    expect(oneLineError(await r.run(["log", "--bogus"]), 129)).toEndWith("(see 'git undo log -h')");
    expect(oneLineError(await r.run(["gc", "--bogus"]), 129)).toEndWith("(see 'git undo gc -h')");
    expect(await r.okIn("-h")).toMatch(/^usage: git undo /);
  });

  test("a long option may be shortened to a prefix only it has, as in Git", async () => {
    const r = twoSnapshots();
    const before = fingerprint(r);
    const dry = await r.run(["--dry"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^Would restore #1 /m);
    expect(fingerprint(r)).toBe(before);
    expect(JSON.parse(await r.okIn("list", "--js"))).toHaveLength(2);
    const fake: Command = { name: "fake", usage: "git undo fake", options: { alpha: { type: "boolean" }, also: { type: "boolean" } }, run: async () => 0 };
    expect(() => parse(fake, ["--al"])).toThrow("ambiguous option: --al (could be --alpha or --also) (see 'git undo fake -h')");
    expect(parse(fake, ["--alp"])).toEqual({ values: { alpha: true }, positionals: [], afterDashes: 0 });
  });

  test("options as Git parses them: values joined or next, clusters of switches, repeated values kept, words after --", async () => {
    const fake: Command = {
      name: "fake",
      usage: "git undo fake",
      takesArguments: true,
      options: {
        force: { type: "boolean", short: "f" },
        quiet: { type: "boolean", short: "q" },
        "max-count": { type: "string", short: "n" },
        ref: { type: "string", multiple: true },
      },
      run: async () => 0,
    };
    const ok = (...argv: string[]) => parse(fake, argv);
    const refused = (argv: string[], message: string) => expect(() => parse(fake, argv)).toThrow(message);
    expect(ok("-fq", "3")).toEqual({ values: { force: true, quiet: true }, positionals: ["3"], afterDashes: 0 });
    expect(ok("-n", "-5")).toEqual({ values: { "max-count": "-5" }, positionals: [], afterDashes: 0 });
    expect(ok("-n5", "--max-count=7")).toEqual({ values: { "max-count": "7" }, positionals: [], afterDashes: 0 });
    expect(ok("-fn", "2")).toEqual({ values: { force: true, "max-count": "2" }, positionals: [], afterDashes: 0 });
    expect(ok("-fn2", "x")).toEqual({ values: { force: true, "max-count": "2" }, positionals: ["x"], afterDashes: 0 });
    expect(ok("--ref", "a", "--ref=b", "--re", "c")).toEqual({ values: { ref: ["a", "b", "c"] }, positionals: [], afterDashes: 0 });
    expect(ok("a", "--", "-f", "--ref", "-")).toEqual({ values: {}, positionals: ["a", "-f", "--ref", "-"], afterDashes: 3 });
    expect(ok("-")).toEqual({ values: {}, positionals: ["-"], afterDashes: 0 });
    refused(["--force=yes"], "option '--force' takes no value (see 'git undo fake -h')");
    refused(["-fx"], "unknown switch 'x' (see 'git undo fake -h')");
    refused(["-fn"], "switch 'n' requires a value (see 'git undo fake -h')");
    refused(["--max-count"], "option '--max-count' requires a value (see 'git undo fake -h')");
    refused(["--bogus"], "unknown option '--bogus' (see 'git undo fake -h')");
  });
});

describe("-C <path>", () => {
  test("before the command, several, each relative to the one before; an empty one changes nothing", async () => {
    const r = twoSnapshots();
    const outside = tempDir("elsewhere");
    mkdirSync(join(r.dir, "sub", "deeper"), { recursive: true });
    const rel = join(r.dir, "sub");
    const fromOutside = await r.run(["-C", rel, "-C", "deeper", "-C", "", "list", "--json"], { cwd: outside });
    expect(fromOutside.code).toBe(0);
    expect((JSON.parse(fromOutside.stdout) as unknown[]).length).toBe(2);
    // With the implicit undo, and its options after -C.
    const before = fingerprint(r);
    const dry = await r.run(["-C", r.dir, "--dry-run"], { cwd: outside });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^Would restore #1 /m);
    expect(fingerprint(r)).toBe(before);
    r.write("b.txt", "new\n");
    expect(r.undo(["-C", r.dir, "snapshot"], { cwd: outside }).stdout).toMatch(/^#3 /);
    expect(snapshotRefs(r)).toHaveLength(3);
  });

  test("`link/..` is the link target's parent, as chdir and Git's own -C find it, not the folder the link is in", async () => {
    const r = twoSnapshots();
    mkdirSync(join(r.dir, "sub"));
    const outside = tempDir("elsewhere");
    symlinkSync(join(r.dir, "sub"), join(outside, "link"));
    const viaLink = await r.run(["-C", "link/..", "list", "--json"], { cwd: outside });
    expect(viaLink.code).toBe(0);
    expect((JSON.parse(viaLink.stdout) as unknown[]).length).toBe(2);
    expect(r.git(["-C", "link/..", "rev-parse", "--show-toplevel"], { cwd: outside }).stdout.trim()).toBe(realpathSync(r.dir));
  });

  test("a missing directory is fatal (128), no directory a usage error (129), each in one line", async () => {
    const r = makeRepo();
    expect(oneLineError(await r.run(["-C", "no-such-dir", "list"]), 128)).toBe("fatal: cannot change to 'no-such-dir': No such file or directory");
    expect(oneLineError(await r.run(["-C"]), 129)).toContain("-C");
  });
});

describe("numbers", () => {
  test("parsed exactly and alike everywhere: no spaces, no sign, nothing rounded", async () => {
    const r = twoSnapshots();
    const before = fingerprint(r);
    // git undo " 1" and restore " 5" agree: neither is a number.
    for (const args of [[" 1"], ["1 "], ["redo", " 1"], ["restore", " 1"], ["restore", "1 "], ["show", " 1"], ["show", "1", "--against", " 2"], ["list", "-n", " 1"], ["+1"], ["restore", "+1"]]) {
      const line = oneLineError(await r.run(args), 129);
      expect({ args, line }).toEqual({ args, line: expect.stringContaining(`'${args[args.length - 1]}'`) });
    }
    // Beyond ten digits no snapshot can exist: refused as such, never rounded to a neighbour.
    const huge = oneLineError(await r.run(["restore", "9007199254740993"]), 129);
    expect(huge).toContain("'9007199254740993' is not a snapshot number");
    expect(huge).not.toContain("9007199254740992");
    expect(oneLineError(await r.run(["show", "9007199254740993"]), 129)).not.toContain("9007199254740992");
    const steps = oneLineError(await r.run(["9007199254740993"]), 129);
    expect(steps).toContain("too large");
    expect(steps).not.toContain("9007199254740992");
    expect(oneLineError(await r.run(["list", "-n", "99999999999999999999"]), 129)).toContain("too large");
    expect(fingerprint(r)).toBe(before);
    // Leading zeros and '#' are still the same number.
    expect(JSON.parse(await r.okIn("show", "#001", "--json")).number).toBe(1);
    expect(await r.okIn("restore", "--dry-run", "0001")).toMatch(/^Would restore #1 /m);
    expect(fingerprint(r)).toBe(before);
  });

  test("list -n -5: a value option takes the next word, and the count says what is wrong", async () => {
    const r = twoSnapshots();
    const line = oneLineError(await r.run(["list", "-n", "-5"]), 129);
    expect(line).toBe("error: -n must be a whole number of at least 1, not '-5'");
    expect(line).not.toContain("ambiguous");
    expect(oneLineError(await r.run(["list", "--max-count", "-5"]), 129)).toContain("'-5'");
    expect(oneLineError(await r.run(["list", "-n"]), 129)).toBe("error: option '-n' requires a value (see 'git undo list -h')");
    expect(JSON.parse(await r.okIn("list", "-n", "1", "--json"))).toHaveLength(1);
    expect(JSON.parse(await r.okIn("list", "-n1", "--json"))).toHaveLength(1);
    // A value may itself look like an option: snapshot -m -h is a message, not a request for help.
    r.write("c.txt", "c\n");
    expect(await r.okIn("snapshot", "-m", "-h")).toMatch(/^#3 -h\n$/);
  });
});

describe("exit codes as the README says", () => {
  test("the README's promise: 0 done, 1 refused or nothing to do, 128 fatal, 129 usage", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8").replace(/\s+/g, " ");
    expect(readme).toContain("0 done, 1 refused or nothing to do (`nothing to undo`, `no change since`, `nothing to delete`, `nothing to remove`) or an unknown command, 128 fatal, 129 usage");
  });

  test("nothing to do exits 1: snapshot with no change, gc with nothing to delete, uninstall with nothing to remove", async () => {
    const r = twoSnapshots();
    const before = fingerprint(r);
    expect(await r.run(["snapshot"])).toEqual({ code: 1, stdout: "no change since #2\n", stderr: "" });
    expect(gcFirstLine(await r.run(["gc"]))).toEqual({ code: 1, stdout: "nothing to delete\n", stderr: "" });
    expect(gcFirstLine(await r.run(["gc", "--dry-run"]))).toEqual({ code: 1, stdout: "nothing to delete\n", stderr: "" });
    const un = await r.run(["uninstall"]);
    expect({ code: un.code, stderr: un.stderr }).toEqual({ code: 1, stderr: "" });
    expect(un.stdout).toContain("nothing to remove");
    expect(fingerprint(r)).toBe(before);
    expect(snapshotRefs(r)).toHaveLength(2);
    // Done is 0: a new snapshot, a deletion, an uninstall that removed something.
    r.write("b.txt", "b\n");
    expect(r.undo(["snapshot"]).code).toBe(0);
    expect(r.undo(["gc", "--expire", "now"]).code).toBe(0);
    expect(r.undo(["init"]).code).toBe(0);
    expect(r.undo(["uninstall"]).code).toBe(0);
    expect(r.undo(["uninstall"]).code).toBe(1);
  });

  test("init with core.hooksPath=/dev/null for hook files: one line, exit 1; doctor never sends the user to an init that refuses", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "one\n" });
    r.git(["config", "core.hooksPath", "/dev/null"]);
    const before = fingerprint(r);
    const line = oneLineError(await r.run(["init", "--file-hooks"]), 1);
    expect(line).toMatch(/^error: core\.hooksPath is \/dev\/null/);
    expect(fingerprint(r)).toBe(before);
    const doctor = await r.run(["doctor"]);
    expect(doctor.code).toBe(1);
    // Each line that names init either says what to change first or names an init that works here.
    const advice = doctor.stdout.split("\n").filter((l) => l.includes("git undo init"));
    expect(advice.length).toBeGreaterThan(0);
    if (advice.some((l) => !l.includes("core.hooksPath"))) expect(r.undo(["init"]).code).toBe(0);
  });

  test("doctor with a hooks folder outside the repository names --global-hooks where plain init refuses", async () => {
    const r = makeRepo();
    r.commit("one", { "a.txt": "one\n" });
    const shared = tempDir("shared-hooks");
    r.git(["config", "core.hooksPath", shared]);
    const plain = await r.run(["init", "--file-hooks"]);
    expect(plain.code).toBe(1);
    const doctor = r.undo(["doctor"]).stdout;
    const advice = doctor.split("\n").filter((l) => l.includes("git undo init"));
    expect(advice.length).toBeGreaterThan(0);
    // Where init installs hook files (Git before 2.54) the advice is --global-hooks; otherwise init itself works.
    if (advice.every((l) => l.includes("--global-hooks"))) expect(r.undo(["init", "--file-hooks", "--global-hooks"]).code).toBe(0);
    else expect(r.undo(["init"]).code).toBe(0);
  });
});

describe("every error is one line", () => {
  test("usage errors, refusals and fatal errors alike", async () => {
    const r = twoSnapshots();
    const before = fingerprint(r);
    const cases: [string[], number][] = [
      [["restore"], 129],
      [["show", "1", "2"], 129],
      [["help", "a", "b"], 129],
      [["snapshot", "extra"], 129],
      [["--force=yes"], 129],
      [["redo"], 1],
      [["restore", "99"], 128],
    ];
    for (const [args, code] of cases) {
      const line = oneLineError(await r.run(args), code);
      expect({ args, line }).toEqual({ args, line: expect.stringMatching(/^(error|fatal): \S/) });
    }
    expect(fingerprint(r)).toBe(before);
  });

  test("the CLI's own errors are thrown as one-line UndoErrors", async () => {
    const fake: Command = { name: "fake", usage: "git undo fake", options: { count: { type: "string", short: "c" } }, run: async () => 0 };
    for (const argv of [["--bogus"], ["-c"], ["-z"], ["extra"]]) {
      let error: unknown;
      try {
        parse(fake, argv);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UndoError);
      expect((error as UndoError).message).not.toContain("\n");
      expect((error as UndoError).exitCode).toBe(129);
    }
  });
});
