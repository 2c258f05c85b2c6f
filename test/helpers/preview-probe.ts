// The picker's preview code (cli/pick/preview.ts) for one snapshot, in the
// repository of the current directory, as the picker runs it. Run as a
// script: prints "ok" and the preview's lines, or exits 1 with the error's message.
import { listSnapshots, readableSnapshot } from "../../core/snapshots/history.ts";
import { captureLive, unchanged } from "../../core/capture.ts";
import { openRepo, type Place } from "../../core/repo.ts";
import { planPreviews } from "../../cli/pick/preview.ts";
import { fixedPalette } from "../../cli/ui.ts";
import { errorText } from "../../cli/refusal-words.ts";
import { processesFor, useProcesses } from "../../core/git-data/proc/index.ts";
import { OWN_PROCESS } from "./repo.ts";

/** The preview's lines for snapshot n; throws what the picker would show as the error. */
export async function previewLines(n: number, at: Place = { cwd: process.cwd(), env: process.env }): Promise<string[]> {
  const repo = await openRepo(at);
  const snap = readableSnapshot(await listSnapshots(repo), n);
  const capture = await captureLive(repo);
  // As the picker does (cli/commands/pick.ts): the state left is a snapshot when nothing changed since.
  const previews = planPreviews(repo, { number: unchanged(capture)?.number ?? null, tree: capture.tree, state: capture.state }, fixedPalette(false));
  return [...(await previews.summary(snap)), ...(await previews.diff(snap))];
}

if (import.meta.main) {
  // Run as a script it is its own entry point, with no test setup before it (test/setup.ts).
  useProcesses(processesFor(process.env.GIT_UNDO_PROCESS_TABLE, OWN_PROCESS));
  try {
    const lines = await previewLines(Number(process.argv[2]));
    process.stdout.write(`ok\n${lines.join("\n")}\n`);
  } catch (e) {
    process.stderr.write(`${errorText(e)}\n`);
    process.exit(1);
  }
}
