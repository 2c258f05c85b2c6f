// Core functions called in-process read the environment (HOME, Git's
// configuration variables): run them as if from inside a test repository.
import type { TestRepo } from "./repo.ts";

/** Run `fn` with `r`'s isolated environment in process.env, restored afterwards. */
export async function useRepoEnv<T>(r: TestRepo, fn: () => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  for (const [k, v] of Object.entries(r.env)) process.env[k] = v;
  try {
    return await fn();
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}
