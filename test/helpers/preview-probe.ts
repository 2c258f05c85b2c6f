// Runs the picker's preview code (cli/pick/preview.ts) for one snapshot, in
// the repository of the current directory, as the picker would: prints "ok"
// and the preview's lines, or exits 1 with the error's message.
import { listSnapshots, readableSnapshot } from "../../core/history.ts";
import { captureLive, unchanged } from "../../core/record.ts";
import { openRepo } from "../../core/repo.ts";
import { planPreviews } from "../../cli/pick/preview.ts";

const n = Number(process.argv[2]);
try {
  const repo = await openRepo();
  const snap = readableSnapshot(await listSnapshots(repo), n);
  const capture = await captureLive(repo);
  // As the picker does (cli/commands/pick.ts): the state left is a snapshot when nothing changed since.
  const previews = planPreviews(repo, { number: unchanged(capture)?.number ?? null, tree: capture.tree, state: capture.state });
  const lines = [...(await previews.summary(snap)), ...(await previews.diff(snap))];
  process.stdout.write(`ok\n${lines.join("\n")}\n`);
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(1);
}
