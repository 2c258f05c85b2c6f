// Preloaded by bunfig.toml before the test files of every worker: when the
// worker's tests are done, delete the temporary repositories they made.
import { afterAll } from "bun:test";
import { OWN_PROCESS, removeTempDirs, VERIFY_KEPT } from "./helpers/repo.ts";
import { seams } from "../core/seams.ts";
import { processesFor, useProcesses } from "../core/git-data/proc/index.ts";

// Core functions called in the tests' own process check every reuse of the
// kept worktree index as spawned commands do (GIT_UNDO_VERIFY_KEPT).
seams.verifyKept = VERIFY_KEPT;

// Core functions called in the tests' own process see the process table the
// suite runs with (GIT_UNDO_PROCESS_TABLE), given as the entry points give it;
// a command run in-process (test/helpers/in-process.ts) gives its own.
useProcesses(processesFor(process.env.GIT_UNDO_PROCESS_TABLE, OWN_PROCESS));

afterAll(removeTempDirs);
