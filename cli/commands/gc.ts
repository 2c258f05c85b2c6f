// git undo gc: forget snapshots older than undo.expire, never the newest, and
// those that need objects the repository lost.
import { refuse } from "../../core/errors.ts";
import { problemText } from "../config-words.ts";
import { listSnapshots } from "../../core/snapshots/history.ts";
import { parseAge, type Repo } from "../../core/repo.ts";
import { dropDamagedSnapshots, expireSnapshots, type DamagedDrop } from "../../core/snapshots/gc.ts";
import { recordLocked } from "../../core/record.ts";
import { objectStoreSize, snapshotSpace, spaceFreedBy } from "../../core/snapshots/space.ts";
import { str, type Command } from "../command.ts";
import { sizeText } from "../ui.ts";
import { withSpinner } from "../progress.ts";

export const gc: Command = {
  name: "gc",
  usage: [
    "git undo gc [--expire <age>] [--dry-run]",
    "",
    "    --expire <age>   forget snapshots older than <age> (90d, 2.weeks, never, now);",
    "                     default: undo.expire, or 90 days",
    "    -n, --dry-run    say what would be deleted and what that would free,",
    "                     delete nothing",
    "",
    "Also deletes the snapshots that need objects missing from the repository",
    "(a disk fault, a pack deleted by hand), on which Git's own gc and fsck fail,",
    "and says how much of .git's objects only snapshots hold. Objects only",
    "deleted snapshots held stay in .git until 'git gc' prunes them.",
  ].join("\n"),
  options: { expire: { type: "string" }, "dry-run": { type: "boolean", short: "n" } },
  async run({ values }, ctx) {
    const { out } = ctx.output;
    const given = str(values.expire);
    const ageGiven = given === undefined ? undefined : parseAge("--expire", given);
    // Without --expire, gc acts on undo.expire: a value it cannot read is its refusal, not a warning.
    if (given === undefined) ctx.configWarnings.wordedByCommand(["undo.expire"]);
    const repo = await ctx.openRepo();
    const bad = repo.config.problems.find((p) => p.key === "undo.expire");
    if (given === undefined && bad) throw refuse(`${problemText(bad)}; git undo gc deletes nothing until it is fixed (or is given --expire <age>)`);
    const age = ageGiven !== undefined ? ageGiven : repo.config.expireSeconds;
    const dryRun = Boolean(values["dry-run"]);
    // Snapshots that need objects the repository lost go first, whatever their age: Git's own gc fails on them.
    const damaged = await withSpinner(ctx.output, "checking the snapshots' objects", async () => dropDamagedSnapshots(repo, await listSnapshots(repo), recordLocked, { dryRun }));
    if (damaged.doomed.length) for (const line of damagedLines(damaged, dryRun)) out(line);
    const gone = new Set(damaged.doomed.map((s) => s.number));
    const doomed = await withSpinner(ctx.output, dryRun ? "finding expired snapshots" : "deleting expired snapshots", async () =>
      expireSnapshots(repo, (await listSnapshots(repo)).filter((s) => !gone.has(s.number)), age, { dryRun }),
    );
    if (doomed.length === 0 && damaged.doomed.length) {
      out(await withSpinner(ctx.output, "measuring the snapshots' space", () => spaceLine(repo)));
      return 0;
    }
    if (doomed.length === 0) {
      out(age === null ? "nothing to delete: snapshots never expire" : "nothing to delete");
      out(await withSpinner(ctx.output, "measuring the snapshots' space", () => spaceLine(repo)));
      return 1; // nothing to do, as the README says
    }
    const numbers = numberRuns(doomed.map((s) => s.number));
    const n = `${doomed.length} snapshot${doomed.length === 1 ? "" : "s"}`;
    out(dryRun ? `would delete ${n}: ${numbers}` : `deleted ${n}: ${numbers}`);
    if (dryRun) {
      const freed = await withSpinner(ctx.output, "measuring what they hold", () => measured(() => spaceFreedBy(repo, doomed)));
      if (typeof freed === "string") out(`what that would free is unknown: ${freed}`);
      else out(`that would free ${sizeText(freed.bytes)} (${objectCount(freed.objects)} only ${doomed.length === 1 ? "it holds" : "they hold"}; 'git gc' then prunes them)`);
    }
    out(await withSpinner(ctx.output, "measuring the snapshots' space", () => spaceLine(repo)));
    return 0;
  },
};

/** What gc did (or would do) about snapshots that need objects the repository lost. */
function damagedLines(d: DamagedDrop, dryRun: boolean): string[] {
  const n = `${d.doomed.length} snapshot${d.doomed.length === 1 ? "" : "s"}`;
  const objects = `${d.missing.length === 1 ? "an object" : "objects"} missing from the repository (${d.missing.slice(0, 3).join(", ")}${d.missing.length > 3 ? ", ..." : ""})`;
  const lines = [`${dryRun ? "would delete" : "deleted"} ${n} that need${d.doomed.length === 1 ? "s" : ""} ${objects}, on which Git's gc and fsck fail: ${numberRuns(d.doomed.map((s) => s.number))}`];
  if (d.newestDamaged) {
    lines.push(
      d.recordedFirst
        ? `the newest was among them: the current state was recorded first as #${d.recordedFirst.number}, so numbers keep growing`
        : "the newest is among them: the current state would be recorded first, so numbers keep growing",
    );
  }
  if (d.currentDamaged) lines.push("the current state itself needs a missing object (the index names one): 'git fsck' says which");
  return lines;
}

/** `#1-#40, #42, #44`: runs of three or more as ranges, so a big gc stays one readable line. */
export function numberRuns(numbers: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < numbers.length; ) {
    let j = i;
    while (j + 1 < numbers.length && numbers[j + 1] === numbers[j]! + 1) j++;
    if (j - i >= 2) parts.push(`#${numbers[i]}-#${numbers[j]}`);
    else for (let k = i; k <= j; k++) parts.push(`#${numbers[k]}`);
    i = j + 1;
  }
  return parts.join(", ");
}

/** A measurement, or why it failed: the report of space never fails a gc (a snapshot may name objects that are gone). */
async function measured<T>(f: () => Promise<T>): Promise<T | string> {
  try {
    return await f();
  } catch (e) {
    return (e as Error).message.split("\n")[0] ?? "";
  }
}

const objectCount = (n: number) => `${n.toLocaleString("en-US")} object${n === 1 ? "" : "s"}`;

/** `snapshots alone hold 48 MiB (1,200 objects) of the 49 MiB of .git's objects`: what the history costs. */
export async function spaceLine(repo: Repo): Promise<string> {
  const r = await measured(() => Promise.all([snapshotSpace(repo), objectStoreSize(repo)]));
  if (typeof r === "string") return `the space snapshots hold is unknown: ${r}`;
  const [held, total] = r;
  return `snapshots alone hold ${sizeText(held.bytes)} (${objectCount(held.objects)}) of the ${sizeText(total)} of .git's objects`;
}
