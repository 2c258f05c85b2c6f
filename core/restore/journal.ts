// The journal of a restore: each step that changed something leaves the way
// to undo it, and a failure plays them backwards. Ref transactions, HEAD and
// the stash are written here, as the steps and their rollback both need.
import type { HeadState, ObjectId } from "../format/index.ts";
import type { RefMove } from "./plan.ts";
import type { Repo } from "../repo.ts";

/** Undo actions of the steps done so far; played backwards on failure. */
export class Journal {
  private entries: { step: string; undo: () => Promise<void> }[] = [];
  push(step: string, undo: () => Promise<void>): void {
    this.entries.push({ step, undo });
  }
  get empty(): boolean {
    return this.entries.length === 0;
  }
  async rollback(): Promise<string[]> {
    const failures: string[] = [];
    for (const e of this.entries.reverse()) {
      try {
        await e.undo();
      } catch (err) {
        failures.push(`${e.step}: ${(err as Error).message}`);
      }
    }
    this.entries = [];
    return failures;
  }
}

/**
 * One ref of an update-ref -z command: its name, then ids. Only plain refs
 * get here, and a plain ref always has an object (core/format/validate.ts checkRefs).
 */
export const refLine = (name: string, ...ids: (ObjectId | null)[]) =>
  `${name}\0${ids
    .map((id) => {
      if (id === null) throw new Error(`internal error: the plain ref ${name} has no object`);
      return `${id}\0`;
    })
    .join("")}`;

/** Run one update-ref -z transaction; `lines` are complete commands. */
export async function transaction(repo: Repo, message: string, commands: string[]): Promise<void> {
  if (!commands.length) return;
  await repo.git.run(["update-ref", "--no-deref", "-m", message, "--stdin", "-z"], { input: commands.join("") });
}

/**
 * Put plain refs the restore moved back where they were, those only that are
 * where it put them now (one that did not move, or that someone moved since,
 * stays). One cat-file tells where each is.
 */
export async function putRefsBack(repo: Repo, message: string, moves: readonly RefMove[]): Promise<void> {
  if (!moves.length) return;
  const out = await repo.git.text(["cat-file", "--batch-check=%(objectname)"], { input: moves.map((m) => `${m.name}\n`).join("") });
  const now = out.split("\n");
  const commands: string[] = [];
  moves.forEach((m, i) => {
    const line = now[i] ?? "";
    const current = line.endsWith(" missing") || line === "" ? null : line;
    if (current !== (m.new?.object ?? null)) return;
    if (m.old === null) commands.push(`delete ${refLine(m.name, current!)}`);
    else if (current === null) commands.push(`create ${refLine(m.name, m.old.object)}`);
    else commands.push(`update ${refLine(m.name, m.old.object, current)}`);
  });
  await transaction(repo, message, commands);
}

/** Set a ref (symbolic or not) to a recorded line, or delete it (null). Used for symbolic refs and their rollback. */
export async function setRef(repo: Repo, name: string, line: RefMove["old"], message: string): Promise<void> {
  // Deleting a ref that does not exist succeeds; --no-deref removes a symbolic ref itself.
  await repo.git.run(["update-ref", "--no-deref", "-d", name]);
  if (!line) return;
  if (line.symrefTarget) await repo.git.run(["symbolic-ref", "-m", message, name, line.symrefTarget]);
  else if (line.object) await repo.git.run(["update-ref", "--no-deref", "-m", message, name, line.object, ""]);
}

export async function setHead(repo: Repo, head: HeadState, message: string): Promise<void> {
  if (head.kind === "symbolic") await repo.git.run(["symbolic-ref", "-m", message, "HEAD", head.target]);
  else await repo.git.run(["update-ref", "--no-deref", "-m", message, "HEAD", head.commit]);
}

export async function storeStash(repo: Repo, entries: readonly { commit: ObjectId; message: string }[], hadStash: boolean, message: string): Promise<void> {
  if (hadStash) await repo.git.run(["update-ref", "-m", message, "-d", "refs/stash"]);
  for (const e of [...entries].reverse()) await repo.git.run(["stash", "store", "-q", "-m", e.message, e.commit]);
}
