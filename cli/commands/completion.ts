// git undo completion install: shell completion set up afterwards, as the
// installer of this toolkit would have set it up (npm's postinstall under
// npm's prefix; install.sh in your own folders). For an npm install that ran
// no install scripts (--ignore-scripts, npm 11.19 and newer by default), or
// a shell installed since. cli/install-completion knows the places; install.sh,
// cli/npm-postinstall and doctor run it too.
import { join } from "node:path";
import { usage } from "../../core/errors.ts";
import { TOOLKIT_ROOT } from "../../core/hooks/template.ts";
import type { Command } from "../command.ts";
import type { CommandIO } from "../io.ts";

/** cli/install-completion run with `args`, in the command's folder and environment. */
export function runInstallCompletion(io: CommandIO, args: readonly string[]): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync({ cmd: ["sh", join(TOOLKIT_ROOT, "cli", "install-completion"), ...args], cwd: io.cwd, env: { ...io.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? 1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

export const completion: Command = {
  name: "completion",
  usage: [
    "git undo completion install",
    "",
    "Sets up shell completion for git undo in bash, zsh and fish, where each looks for it:",
    "for an npm install, under npm's prefix (as its install script does, which npm may skip);",
    "for a checkout, in your own folders (as install.sh does), for the shells installed.",
    "Prints each file it writes; running it again is harmless. 'git undo doctor' says when it is missing.",
  ].join("\n"),
  options: {},
  takesArguments: true,
  async run({ positionals }, ctx) {
    const { write } = ctx.output;
    if (positionals.length !== 1 || positionals[0] !== "install") {
      throw usage(`git undo completion takes one word, install${positionals.length ? ` (got '${positionals.join(" ")}')` : ""}: git undo completion install`);
    }
    const r = runInstallCompletion(ctx.io, []);
    write(1, r.stdout);
    write(2, r.stderr);
    return r.code === 0 ? 0 : 1;
  },
};
