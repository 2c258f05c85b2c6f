// Preloaded by bunfig.toml before the test files of every worker: when the
// worker's tests are done, delete the temporary repositories they made.
import { afterAll } from "bun:test";
import { removeTempDirs } from "./helpers/repo.ts";

afterAll(removeTempDirs);
