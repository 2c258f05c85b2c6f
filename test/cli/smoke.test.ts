import { expect, test } from "bun:test";
import { makeRepo } from "../helpers/repo.ts";

test("snapshot then list shows it with the position marked", () => {
  const r = makeRepo();
  r.commit("one", { "a.c": "a\n" });
  expect(r.ok("snapshot")).toMatch(/^#1 commit \(initial\): one\n$/);
  const list = r.snapshots();
  expect(list).toHaveLength(1);
  expect(list[0]!.current).toBe(true);
});
