// git undo rescue: the work no ref and no snapshot holds (dropped stash
// entries, lost commits, file contents staged and never committed), and
// bringing one back through the same path as every restore.
import { posix, relative } from "node:path";
import { usage } from "../../core/errors.ts";
import { findLost, lostPreviews, stashFiles, type LostFile, type LostStash } from "../../core/find/lost.ts";
import { rescueTarget } from "../../core/find/rescue.ts";
import type { Repo } from "../../core/repo.ts";
import { escapeControls } from "../../core/text.ts";
import { count, str, type Command } from "../command.ts";
import { lostLines } from "../lost-words.ts";
import { isoDate } from "../ui.ts";
import type { CommandContext } from "../context.ts";
import { RESTORE_OPTIONS, runRestore } from "./undo.ts";

export const rescue: Command = {
  name: "rescue",
  usage: [
    "git undo rescue [-n <count>] [--json]",
    "   or: git undo rescue <id> [--dry-run]",
    "   or: git undo rescue <id> [--dry-run] -- <path>",
    "",
    "Lists, newest first, what the repository's objects still hold that no ref",
    "and no snapshot reaches: dropped stash entries with their files, lost",
    "commits (amended, reset away, on a deleted branch) with the branch a reflog",
    "or the message suggests, and file contents that were staged and never",
    "committed, with their first lines. Where only a reflog still holds",
    "something (git gc expires it), it says so.",
    "",
    "With an <id>, brings that one back: a stash entry as a stash entry, a",
    "commit as the branch rescued/<id>, a file content as a new file at <path>",
    "(refused when anything is there). It checks and records like every restore,",
    "and plain 'git undo' takes it back.",
    "",
    "    -n, --max-count <count>   list at most <count> items",
    "    --json                    machine-readable output",
    "    --dry-run                 with an <id>: print what would change, change nothing",
    "    -f, --force               with an <id>: bring it back even while a rebase,",
    "                              merge, cherry-pick, revert, am or bisect is in",
    "                              progress (ended first with Git's own --quit)",
  ].join("\n"),
  // -n counts the list here, as in `git undo list`; --dry-run has no short form.
  options: { force: RESTORE_OPTIONS.force!, "dry-run": { type: "boolean" }, "max-count": { type: "string", short: "n" }, json: { type: "boolean" } },
  takesArguments: true,
  async run({ values, positionals }, ctx) {
    const limit = count("-n", str(values["max-count"]));
    if (positionals.length > 2) throw usage("git undo rescue takes one id, and a path for a file's content: git undo rescue <id> -- <path>");
    const repo = await ctx.openRepo();
    const [id, path] = positionals;
    if (id === undefined) {
      if (values["dry-run"] || values.force) throw usage("--dry-run and --force go with an id: git undo rescue <id> --dry-run");
      return list(ctx, repo, limit, Boolean(values.json));
    }
    if (limit !== undefined || values.json) throw usage("-n and --json are for the list: git undo rescue [-n <count>] [--json]");
    const work = await findLost(repo);
    const target = rescueTarget(work, id, path === undefined ? null : fromTop(repo, path));
    return runRestore({ kind: "rescue", rescue: target }, values, ctx);
  },
};

/** A path typed from the current directory, as a path from the top of the working tree. */
function fromTop(repo: Repo, path: string): string {
  if (repo.workTree === null) throw usage("a bare repository has no files to write");
  const prefix = relative(repo.workTree, repo.cwd).split("\\").join("/");
  if (prefix.startsWith("..")) throw usage("run git undo rescue <id> -- <path> inside the working tree");
  const rel = posix.normalize(posix.isAbsolute(path) ? relative(repo.workTree, path).split("\\").join("/") : posix.join(prefix, path));
  if (rel === "." || rel === "" || rel === ".." || rel.startsWith("../") || rel.endsWith("/")) throw usage(`'${escapeControls(path)}' is not a file path inside the working tree`);
  return rel;
}

async function list(ctx: CommandContext, repo: Repo, limit: number | undefined, asJson: boolean): Promise<number> {
  const { color, json, out } = ctx.output;
  const work = await findLost(repo);
  const shown = work.items.slice(0, limit ?? work.items.length);
  await Promise.all([
    stashFiles(repo, shown.filter((i): i is LostStash => i.kind === "stash")),
    lostPreviews(repo, shown.filter((i): i is LostFile => i.kind === "file")),
  ]);
  const shortId = (id: string) => id.slice(0, work.abbrev);
  if (asJson) {
    json(shown.map((i) => ({ ...i, shortId: shortId(i.id), date: i.date === null ? null : isoDate(i.date) })));
    return 0;
  }
  if (!shown.length) {
    out("nothing lost: every object is held by a ref, a snapshot, the index or the stash list");
    return 0;
  }
  await ctx.pager.start(repo);
  for (const line of lostLines(color, shown, work.abbrev)) out(line);
  if (work.items.length > shown.length) out(color.dim(`… ${work.items.length - shown.length} more (without -n)`));
  out(color.dim("'git undo rescue <id>' brings one back; a file's content: 'git undo rescue <id> -- <path>'"));
  return 0;
}
