// What Git's reflogs say about lost commits: which refs still reach them, and
// the branch they were on (a branch's own reflog, or the branch HEAD was on
// as its checkout and rebase messages tell).
import type { ObjectId } from "../format/index.ts";
import { decodeBytes } from "../bytes.ts";
import type { Repo } from "../repo.ts";

/** One entry of a reflog: the ref, the commit it took, and Git's message for it. */
export interface ReflogLine {
  ref: string;
  commit: ObjectId;
  message: string;
}

/** Every reflog entry (snapshot refs left out), newest first per ref, in one Git process, whatever the ref storage. */
export async function readReflogs(repo: Repo): Promise<ReflogLine[]> {
  // A reflog naming a pruned commit stops Git's walk with an error: what it printed stands.
  const r = await repo.git.run(["reflog", "show", "--exclude=refs/undo/*", "--all", "--format=%H%x00%gD%x00%gs"], { okExit: [128] });
  const lines: ReflogLine[] = [];
  for (const line of decodeBytes(r.stdout).split("\n")) {
    const [commit, selector, message] = line.split("\0");
    if (!commit || selector === undefined || message === undefined) continue;
    const at = selector.lastIndexOf("@{");
    lines.push({ commit, ref: at < 0 ? selector : selector.slice(0, at), message });
  }
  return lines;
}

/** The refs whose reflogs hold a commit, HEAD first. */
export function reflogNames(lines: readonly ReflogLine[] | undefined): string[] {
  return [...new Set((lines ?? []).map((l) => l.ref))].sort((a, b) => (a === "HEAD" ? -1 : b === "HEAD" ? 1 : a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The branch HEAD was on at each of its reflog entries, as Git's messages say
 * (`checkout: moving from a to b`, `rebase (finish): returning to refs/heads/b`),
 * keyed by the entry; null where HEAD was detached or nothing says.
 */
export function headBranchAt(reflogs: readonly ReflogLine[]): Map<ReflogLine, string | null> {
  const head = reflogs.filter((l) => l.ref === "HEAD").reverse(); // oldest first
  const at = new Map<ReflogLine, string | null>();
  const moving = (m: string) => /^checkout: moving from (.+) to (.+)$/.exec(m);
  const branch = (name: string) => (/^[0-9a-f]{40,64}$/.test(name) ? null : name);
  // Before the first checkout, HEAD was on the branch that checkout left.
  const first = head.map((l) => moving(l.message)).find(Boolean);
  let on: string | null = first ? branch(first[1]!) : null;
  for (const l of head) {
    const move = moving(l.message);
    const back = /^rebase(?: -i)? \(finish\): returning to refs\/heads\/(.+)$/.exec(l.message);
    if (move) on = branch(move[2]!);
    else if (back) on = back[1]!;
    else if (/^rebase(?: -i)? \(start\)/.test(l.message)) on = null;
    at.set(l, on);
  }
  return at;
}

/** The branch the reflog entries naming a commit suggest: a branch's own reflog first, then the branch HEAD was on. */
export function branchOf(lines: readonly ReflogLine[], headBranches: ReadonlyMap<ReflogLine, string | null>): string | null {
  const own = lines.find((l) => l.ref.startsWith("refs/heads/"));
  if (own) return own.ref.slice("refs/heads/".length);
  for (const l of lines) {
    const b = l.ref === "HEAD" ? headBranches.get(l) : null;
    if (b) return b;
  }
  const other = lines.find((l) => l.ref !== "HEAD");
  return other ? other.ref.replace(/^refs\/(remotes\/)?/, "") : null;
}

