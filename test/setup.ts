// Preloaded by bunfig.toml before the test files of every worker: when the
// worker's tests are done, delete the temporary repositories they made.
import { afterAll } from "bun:test";
import { removeTempDirs, VERIFY_KEPT } from "./helpers/repo.ts";
import { seams } from "../core/seams.ts";

// Core functions called in the tests' own process check every reuse of the
// kept worktree index as spawned commands do (GIT_UNDO_VERIFY_KEPT).
seams.verifyKept = VERIFY_KEPT;

afterAll(removeTempDirs);
