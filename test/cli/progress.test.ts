// Long work shows @clack/prompts' spinner on stderr (cli/progress.ts): on a
// terminal only, cleared when the work ends so the output is the same as
// without it, leaving the keyboard alone (what is typed ahead reaches the
// shell), and Ctrl-C interrupts with 130 as it does any command.
import { afterAll, expect, test } from "bun:test";
import { makeRepo, type TestRepo } from "../helpers/repo.ts";
import { hasTmux, Terminal } from "../helpers/tmux.ts";

const terminals: Terminal[] = [];
afterAll(() => terminals.forEach((t) => t.kill()));

/** A repository with three snapshots whose files hold "needle". */
async function history(): Promise<TestRepo> {
  const r = makeRepo();
  for (const i of [1, 2, 3]) {
    r.commit(`c${i}`, { "a.txt": `needle ${i}\n` });
    expect((await r.run(["snapshot"])).code).toBe(0);
  }
  return r;
}

const SPINNER = "searching every snapshot";
const slow = (ms: number) => ({ GIT_UNDO_TEST_SLOW_WORK_MS: String(ms) });

test.skipIf(!hasTmux())("grep --all on a terminal: the spinner shows while it searches, then is gone; what was typed meanwhile reaches the shell", async () => {
  const r = await history();
  const t = new Terminal(r, 100, 20);
  terminals.push(t);
  t.start(["grep", "needle", "--all"], slow(1500), 'IFS= read -r typed; echo "TYPED=$typed"');
  await t.waitFor(() => t.printedText().includes(SPINNER), "the spinner");
  t.type("echo typed-ahead");
  expect(await t.exitCode()).toBe(0);
  t.keys("Enter");
  const screen = await t.waitForText("TYPED=");
  expect(screen).toContain("TYPED=echo typed-ahead");
  expect(screen).toContain("a.txt:1:needle 3");
  // Cleared: no line of the final screen is the spinner's.
  expect(screen).not.toContain(SPINNER);
});

test.skipIf(!hasTmux())("CI=true on a terminal: no spinner, and the output as without one", async () => {
  const r = await history();
  const t = new Terminal(r, 100, 20);
  terminals.push(t);
  t.start(["grep", "needle", "--all"], { ...slow(900), CI: "true" });
  expect(await t.exitCode()).toBe(0);
  expect(t.printedText()).not.toContain(SPINNER);
  expect(t.screen()).toMatch(/^#3 a\.txt:1:needle 3\n#2 a\.txt:1:needle 2\n#1 a\.txt:1:needle 1\nEXIT=0/);
});

test.skipIf(!hasTmux())("Ctrl-C while gc's spinner runs: exit 130, every snapshot still there", async () => {
  const r = await history();
  const before = (await r.snapshotsIn()).length;
  const t = new Terminal(r, 100, 20);
  terminals.push(t);
  t.start(["gc", "--expire", "now"], slow(20_000));
  await t.waitFor(() => t.printedText().includes("checking the snapshots' objects"), "the spinner");
  t.keys("C-c");
  expect(await t.exitCode()).toBe(130);
  expect((await r.snapshotsIn()).length).toBe(before);
});

test("not a terminal: no spinner, whatever the work takes", async () => {
  const r = await history();
  const res = await r.run(["grep", "needle", "--all"], { env: slow(600) });
  expect(res.code).toBe(0);
  expect(res.stdout).toContain("a.txt:1:needle 3");
  expect(res.stderr).toBe("");
});
