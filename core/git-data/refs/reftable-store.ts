// The reftable ref storage (Git 2.45 and newer): refs, HEAD, two of the
// operation markers and the reflogs in tables, with no files to read. A state
// is asked of Git, all of it in one wave of processes.
import { statSync } from "node:fs";
import { join } from "node:path";
import { compareBytes, type HeadState, type HeadReflogEntry, type StashEntry } from "../../format/index.ts";
import { text, type GitResult } from "../../git.ts";
import type { Repo } from "../../repo.ts";
import { markersWith, REF_MARKER_QUERY } from "../operation-markers.ts";
import { listRefs, scanUndoRefs, type SnapshotRef } from "./index.ts";
import { stashAgreeing, withUnreadable, type RefState, type RefStore } from "./ref-store.ts";

/** Longest ref name reftable takes: a block (4 KiB) less a reflog record's other fields. */
const NAME_BYTES_LIMIT = 3800;

export const REFTABLE: RefStore = {
  name: "reftable",
  read: readThroughGit,
  headReflogHint: () => null,
  markers: async (repo) => markersWith(repo.gitDir, (await repo.git.text(["cat-file", "--batch-check=%(objectname)"], { input: REF_MARKER_QUERY })).split("\n")),
  markerRefs: true,
  writeStamp: tablesListStamp,
  packSnapshotRefs: async () => {}, // reftable compacts its tables itself
  refLockFiles: false,
  nameTooLong: (_repo, name) => new TextEncoder().encode(name).length > NAME_BYTES_LIMIT,
};

/**
 * A ref storage without files: the refs, HEAD, HEAD's newest reflog entry and
 * the stash reflog in one wave of Git processes, then the immediate target of
 * each symbolic ref (for-each-ref gives the end of a chain). A dangling
 * symbolic ref is invisible there: no command lists it.
 */
async function readThroughGit(repo: Repo, undoRefsListed?: Promise<SnapshotRef[]>): Promise<RefState> {
  const git = repo.git;
  // -z: one NUL after each entry; %gs is the reflog message as the files hold it.
  const reflog = (ref: string, more: string[] = []) =>
    git.run(["log", "-g", "-z", "--no-show-signature", "--format=%H%x09%gs", ...more, ref, "--"], { okExit: [128] });
  const [listing, undoRefs, symbolic, detached, headLog, stashLog] = await Promise.all([
    listRefs(repo),
    undoRefsListed ?? scanUndoRefs(repo, repo.snapshotPrefix),
    git.run(["symbolic-ref", "-q", "--no-recurse", "HEAD"], { okExit: [1] }),
    // HEAD's commit when detached, and which marker refs exist: one batch.
    git.text(["cat-file", "--batch-check=%(objectname)"], { input: `HEAD\n${REF_MARKER_QUERY}` }),
    // The two newest: the second's commit is the one the newest left; `%gd` dated in seconds.
    git.run(["log", "-g", "-z", "-2", "--date=unix", "--no-show-signature", "--format=%H%x09%gd%x09%gs", "HEAD", "--"], { okExit: [128] }),
    reflog("refs/stash"),
  ]);
  const refs = listing.refs;
  const symrefs = refs.filter((r) => r.symrefTarget);
  await Promise.all(
    symrefs.map(async (r) => {
      r.symrefTarget = await git.line(["symbolic-ref", "--no-recurse", r.name]);
    }),
  );
  refs.sort((a, b) => compareBytes(a.name, b.name));
  const [headCommit = "", ...markerIds] = detached.split("\n");
  const head: HeadState =
    symbolic.exitCode === 0 ? { kind: "symbolic", target: text(symbolic.stdout).trim() } : { kind: "detached", commit: headCommit };
  const entries = (r: GitResult) => (r.exitCode === 0 ? text(r.stdout).split("\0").filter(Boolean).map(parseLogEntry) : []);
  const [newest, before] = headLog.exitCode === 0 ? text(headLog.stdout).split("\0").filter(Boolean).map(parseDatedEntry) : [];
  const unborn = head.kind === "symbolic" && !refs.some((r) => r.name === head.target && r.object);
  return withUnreadable(
    {
      refs,
      undoRefs,
      head,
      headReflog: newest && !unborn ? { ...newest, old: before?.commit ?? null } : undefined,
      stash: await stashAgreeing(repo, refs, refs.some((r) => r.name === "refs/stash") ? entries(stashLog) : [], async () => entries(await reflog("refs/stash"))),
      markers: markersWith(repo.gitDir, markerIds),
    },
    listing.unreadable,
  );
}

/** One `%H<TAB>%gd<TAB>%gs` entry of a reflog walk with `--date=unix` (`%gd` is `HEAD@{<seconds>}`). */
function parseDatedEntry(entry: string): HeadReflogEntry {
  const [commit = "", selector = "", ...message] = entry.split("\t");
  const time = Number(/@\{(\d+)\}$/.exec(selector)?.[1]);
  return { commit, message: message.join("\t"), old: null, time: Number.isSafeInteger(time) ? time : null };
}

/** One `%H<TAB>%gs` entry of a reflog walk. */
function parseLogEntry(entry: string): StashEntry {
  const tab = entry.indexOf("\t");
  return tab < 0 ? { commit: entry, message: "" } : { commit: entry.slice(0, tab), message: entry.slice(tab + 1) };
}

/**
 * A sign of every write to this worktree's reftable refs: its table list,
 * which reftable replaces (a new file renamed over) on each. Null without
 * one. What was read of the refs since it last changed still holds.
 */
function tablesListStamp(repo: Repo): string | null {
  try {
    const st = statSync(join(repo.gitDir, "reftable", "tables.list"), { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return null;
  }
}
