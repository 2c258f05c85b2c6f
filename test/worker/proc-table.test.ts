// @pure: runs no Git, so one run of the suite covers it (test/run, GIT_UNDO_TEST_SKIP_PURE).
// The process table (core/proc/): both backends tell a process's parent,
// name, start time and zombie state alike, and the mark is read as the hooks
// write it, never hanging on what is not a regular file.
import { expect, test } from "bun:test";
import { appendFileSync, chmodSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processTable, sameProcess } from "../../core/git-data/proc/index.ts";
import { parseElapsed, parsePsLine, psBackend, PS_KNOWN_FOR_MS } from "../../core/git-data/proc/ps.ts";
import { readMark } from "../../worker/protocol.ts";
import { OWN_PROCESS, PROCESS_BACKENDS, tempDir } from "../helpers/repo.ts";

test("ps's elapsed time and lines are read in every form POSIX allows", () => {
  expect(parseElapsed("00:05")).toBe(5);
  expect(parseElapsed("12:34")).toBe(754);
  expect(parseElapsed("01:00:00")).toBe(3600);
  expect(parseElapsed("2-03:04:05")).toBe(2 * 86400 + 3 * 3600 + 4 * 60 + 5);
  expect(parseElapsed("soon")).toBeNaN();
  const now = 1_000_000;
  expect(parsePsLine("  42     1    00:10 Ss   git", now)).toEqual({ pid: 42, ppid: 1, name: "git", startMs: now - 10_000, zombie: false });
  // macOS names the program by its path; a zombie's state starts with Z.
  expect(parsePsLine("7 6 01:00 Z+ /usr/bin/git", now)).toMatchObject({ name: "git", zombie: true });
  expect(parsePsLine("7 6 01:00 S my prog", now)).toMatchObject({ name: "my prog" });
  expect(parsePsLine("PID PPID ELAPSED STAT COMM", now)).toBeNull();
  // An etime no process can have (procps, for one caught as it starts): started now.
  expect(parsePsLine("7 6 441077234-08:00:10 S sleep", now)).toMatchObject({ startMs: now });
});

for (const backend of PROCESS_BACKENDS) {
  // A system without /proc (macOS) or without ps (a minimal container; .ci/run installs it) skips that backend, saying so.
  const here = processTable(backend, OWN_PROCESS)?.backend === backend;
  test.skipIf(!here)(`the ${backend} backend: parents, names, start times, command lines, zombies${here ? "" : " (skipped: not on this system)"}`, async () => {
    const table = processTable(backend, OWN_PROCESS)!;
    expect(table.backend).toBe(backend);
    // A parent that never reaps its exited child: a zombie. Bun's children inherit an
    // ignored SIGCHLD (reaped at once), so the parent is perl, which can take it back.
    const perl = Bun.which("perl");
    const maker = perl
      ? [perl, "-e", '$SIG{CHLD}="DEFAULT"; $|=1; my $k=fork(); if(!$k){exit 0} print "$k\\n"; exec("sleep", "30")']
      : ["sh", "-c", "echo 0; exec sleep 30"];
    const p = Bun.spawn({ cmd: maker, stdout: "pipe" });
    try {
      const reader = p.stdout.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      const zombie = Number(first.trim());
      // Until the child has exited (a loaded machine may take a while) and the parent has become
      // sleep, its command line included (/proc shows it empty for an instant during the exec).
      const deadline = Date.now() + 10_000;
      let found = table.get([p.pid, zombie, 999_999_999]);
      while (!((!perl || found.get(zombie)?.zombie) && found.get(p.pid)?.name === "sleep" && table.commandLine(p.pid) === "sleep 30") && Date.now() < deadline) {
        await Bun.sleep(50);
        found = table.get([p.pid, zombie, 999_999_999]);
      }
      const sleeper = found.get(p.pid)!;
      expect(sleeper.name).toBe("sleep");
      expect(sleeper.ppid).toBe(process.pid);
      expect(sleeper.zombie).toBe(false);
      expect(Math.abs(sleeper.startMs - Date.now())).toBeLessThan(5000);
      if (perl) {
        expect(found.get(zombie)?.zombie).toBe(true);
        expect(sameProcess(table, found.get(zombie), Date.now())).toBe(false);
        // Exited, only waiting to be reaped: not alive, though its pid is taken.
        expect(table.isZombie(zombie)).toBe(true);
        expect(table.alive(zombie)).toBe(false);
      }
      expect(found.has(999_999_999)).toBe(false);
      // The one-process questions answer as the entries do.
      expect(table.alive(p.pid)).toBe(true);
      expect(table.isZombie(p.pid)).toBe(false);
      expect(table.parent(p.pid)).toBe(process.pid);
      expect(table.name(p.pid)).toBe("sleep");
      expect(Math.abs(table.startedAt(p.pid)! - sleeper.startMs)).toBeLessThanOrEqual(table.resolutionMs);
      expect(table.alive(999_999_999)).toBe(false);
      expect(table.startedAt(999_999_999)).toBeNull();
      expect(table.parent(999_999_999)).toBeNull();
      expect(table.name(999_999_999)).toBeNull();
      expect(sameProcess(table, sleeper, Date.now())).toBe(true);
      // Known alive long before it started: another process under a reused pid.
      expect(sameProcess(table, sleeper, Date.now() - 60_000)).toBe(false);
      const chain = table.ancestry(p.pid, 3);
      expect(chain.map((c) => c.pid).slice(0, 2)).toEqual([p.pid, process.pid]);
      expect(table.commandLine(p.pid)).toBe("sleep 30");
      expect(table.commandLine(999_999_999)).toBeNull();
    } finally {
      p.kill();
      await p.exited;
    }
    // Gone and reaped: no process has the pid (the ps backend answers without running ps).
    expect(table.get([p.pid]).has(p.pid)).toBe(false);
    expect(table.alive(p.pid)).toBe(false);
    expect(table.ancestry(p.pid, 3)).toEqual([]);
  });
}

const realPs = Bun.which("ps");
test.skipIf(!realPs)(`the ps backend asks ps about a running process at most once while what it said stands, and sees it end at once${realPs ? "" : " (skipped: no ps here)"}`, async () => {
  // A ps in front of the real one that counts its runs.
  const dir = tempDir("ps");
  const count = join(dir, "count");
  writeFileSync(join(dir, "ps"), `#!/bin/sh\necho >>'${count}'\nexec '${realPs}' "$@"\n`);
  chmodSync(join(dir, "ps"), 0o755);
  // What ps said stands for a minute here, however slow the machine; then for the usual PS_KNOWN_FOR_MS.
  const lasting = psBackend(OWN_PROCESS, join(dir, "ps"), 60_000)!;
  const usual = psBackend(OWN_PROCESS, join(dir, "ps"))!;
  expect(lasting).not.toBeNull();
  expect(usual).not.toBeNull();
  writeFileSync(count, "");
  const runs = () => readFileSync(count, "utf8").length;
  const sleeper = Bun.spawn(["sleep", "30"]);
  try {
    expect(lasting.get([sleeper.pid]).get(sleeper.pid)?.name).toBe("sleep");
    expect(lasting.get([sleeper.pid]).has(sleeper.pid)).toBe(true);
    expect(runs()).toBe(1);
    // The ancestry read takes in the whole table: a look right after needs no ps of its own.
    expect(lasting.ancestry(sleeper.pid, 2).map((p) => p.pid)).toEqual([sleeper.pid, process.pid]);
    expect(lasting.get([sleeper.pid]).has(sleeper.pid)).toBe(true);
    expect(runs()).toBe(2);
    // Past PS_KNOWN_FOR_MS, ps is asked again.
    expect(usual.get([sleeper.pid]).has(sleeper.pid)).toBe(true);
    await Bun.sleep(PS_KNOWN_FOR_MS + 20);
    const before = runs();
    expect(usual.get([sleeper.pid]).has(sleeper.pid)).toBe(true);
    expect(runs()).toBe(before + 1);
    // Ended and reaped: gone at once, whatever ps said a moment ago, and no ps asked.
    sleeper.kill();
    await sleeper.exited;
    const after = runs();
    expect(lasting.get([sleeper.pid]).has(sleeper.pid)).toBe(false);
    expect(usual.get([sleeper.pid]).has(sleeper.pid)).toBe(false);
    expect(runs()).toBe(after);
  } finally {
    sleeper.kill();
  }
});

test("the mark is read line by line from where the worker left off; a mark written over starts over", () => {
  const dir = tempDir("undo");
  const pending = join(dir, "pending");
  expect(readMark(dir, null)).toBeNull();
  writeFileSync(pending, "101\n102\n");
  const first = readMark(dir, null)!;
  expect(first.pids).toEqual([101, 102]);
  // A line still being written is left for the next look.
  appendFileSync(pending, "103\n10");
  const second = readMark(dir, first.cursor)!;
  expect(second.pids).toEqual([103]);
  appendFileSync(pending, "4\n");
  expect(readMark(dir, second.cursor)!.pids).toEqual([104]);
  // Earlier hooks wrote the mark over (several pids on a line, some as "pid:start"):
  // a mark shorter than what was read is read from its start; nonsense is skipped.
  writeFileSync(pending, "7 8:12 x 9\n");
  expect(readMark(dir, second.cursor)!.pids).toEqual([7, 8, 9]);
});

test("a FIFO or a link planted at the mark is not read: the worker neither hangs nor follows it", () => {
  const dir = tempDir("undo");
  const pending = join(dir, "pending");
  expect(Bun.spawnSync(["mkfifo", pending]).exitCode).toBe(0);
  expect(readMark(dir, null)).toBeNull();
  rmSync(pending);
  const target = join(tempDir("elsewhere"), "secret");
  writeFileSync(target, "55\n");
  symlinkSync(target, pending);
  expect(readMark(dir, null)).toBeNull();
});
