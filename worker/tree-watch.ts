// What changed in the working tree since a point in time: the guard's answers
// to Git (core.fsmonitor, protocol 2), and whether anything changed since the
// last recording. One inotify watch per folder (worker/inotify.ts), the whole
// tree but .git; every event is a numbered entry in a journal. A token is
// `git-undo:<this watch's id>:<entry number>`; the answer to one is every path
// of the entries after it, or "/" (look at everything) where that cannot be
// told for sure: a folder created, moved or deleted (what it held is not
// listed), a queue overflow, a watch lost, a token of another watch, or too
// many paths. Every answer first reads the whole queue (drain): whatever
// happened before the guard asked (the user's edits come before the Git
// command that runs the guard) is in it.
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { Inotify, IN, type InotifyEvent } from "./inotify.ts";
import { writeWatchState } from "../core/guard.ts";
import { gitBool, type Repo } from "../core/repo.ts";
import { unwatchableTree } from "../core/file-system.ts";

/** Beyond this many paths in one answer, "/" costs Git less than the list. */
const MAX_ANSWER_PATHS = 5000;
/** The journal keeps this many entries; a token older than what it holds gets "/". */
const MAX_JOURNAL = 100_000;

export interface GuardAnswer {
  token: string;
  /** The paths that may have changed since the token Git gave (bytes, relative to the top); null: anything may have. */
  paths: Buffer[] | null;
}

/** An entry: a path that changed, or null for "anything may have". */
interface Entry {
  seq: number;
  path: Buffer | null;
}

const SLASH = Buffer.from("/");
const DOT_GIT = Buffer.from(".git");

export class TreeWatch {
  // Web Crypto, a global: node:crypto would load Node's streams, 10 ms of CPU at every worker's start.
  readonly id = Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("hex");
  private folders = new Map<number, Buffer>();
  private journal: Entry[] = [];
  /** Tokens older than this have lost entries. */
  private floor = 0;
  private seq = 0;
  /** Why no answer can be trusted any more (a watch refused, reading failed); null while it can. */
  broken: string | null = null;

  private constructor(
    private readonly top: string,
    private readonly ino: Inotify,
  ) {}

  /** Watch the tree under `top`; null where inotify is not there. */
  static start(top: string): TreeWatch | null {
    let real: string;
    try {
      // A watch never follows a link: the top is watched where it really is.
      real = realpathSync(top);
    } catch {
      return null;
    }
    const ino = Inotify.open();
    if (!ino) return null;
    const w = new TreeWatch(real, ino);
    w.watchTree(Buffer.alloc(0));
    // No answer can come from it: its watches go back to the system (an editor needs them too).
    if (w.broken !== null) w.ino.close();
    return w;
  }

  /** Whether `path` (a work tree's top, as a command saw it) is the folder this watch watches. */
  watches(path: string): boolean {
    if (path === this.top) return true;
    try {
      return realpathSync(path) === this.top;
    } catch {
      return false;
    }
  }

  /** How many folders are watched. */
  get folderCount(): number {
    return this.folders.size;
  }

  close(): void {
    this.ino.close();
    this.folders.clear();
    this.broken ??= "closed";
  }

  /** The number of the last entry, every event queued up to now read. */
  now(): number {
    this.drain();
    return this.seq;
  }

  /** Whether anything in the tree changed after entry `seq` (or cannot be told). */
  changedSince(seq: number): boolean {
    const last = this.now();
    return this.broken !== null || seq < this.floor || last > seq;
  }

  /** The answer to a guard that was given `token`. */
  answer(token: string): GuardAnswer {
    const last = this.now();
    const fresh = `git-undo:${this.id}:${last}`;
    const m = /^git-undo:([0-9a-f]+):(\d+)$/.exec(token);
    if (this.broken !== null || !m || m[1] !== this.id) return { token: fresh, paths: null };
    const since = Number(m[2]);
    if (since < this.floor || since > last) return { token: fresh, paths: null };
    const seen = new Set<string>();
    const paths: Buffer[] = [];
    // Entries are in number order: those after `since` are at the end.
    for (let i = this.journal.length - 1; i >= 0 && this.journal[i]!.seq > since; i--) {
      const e = this.journal[i]!;
      if (e.path === null) return { token: fresh, paths: null };
      const key = e.path.toString("latin1");
      if (seen.has(key)) continue;
      seen.add(key);
      // A line of the answer file holds one path: a newline in one cannot be said.
      if (e.path.includes(10)) return { token: fresh, paths: null };
      paths.push(e.path);
      if (paths.length > MAX_ANSWER_PATHS) return { token: fresh, paths: null };
    }
    return { token: fresh, paths };
  }

  /** Read every queued event into the journal. */
  private drain(): void {
    if (this.broken !== null) return;
    const events = this.ino.drain();
    if (events === null) this.broken = "the watch could not be read";
    else for (const e of events) this.take(e);
    if (this.broken !== null) this.ino.close();
  }

  private note(path: Buffer | null): void {
    this.journal.push({ seq: ++this.seq, path });
    if (this.journal.length > MAX_JOURNAL) {
      const dropped = this.journal.splice(0, MAX_JOURNAL / 2);
      this.floor = dropped[dropped.length - 1]!.seq;
    }
  }

  private take(e: InotifyEvent): void {
    if (e.mask & IN.Q_OVERFLOW) return this.note(null);
    const folder = this.folders.get(e.wd);
    if (folder === undefined) return this.note(null);
    if (e.mask & IN.IGNORED) {
      this.folders.delete(e.wd);
      return this.note(null);
    }
    if (e.mask & (IN.DELETE_SELF | IN.MOVE_SELF | IN.UNMOUNT)) return this.note(null);
    if (e.name.length === 0 || e.name.equals(DOT_GIT)) return;
    const path = folder.length ? Buffer.concat([folder, SLASH, e.name]) : e.name;
    if (e.mask & IN.ISDIR) {
      // What a folder held as it came or went is in no event of its own.
      if (e.mask & (IN.CREATE | IN.MOVED_TO)) this.watchTree(path);
      if (e.mask & (IN.CREATE | IN.MOVED_TO | IN.DELETE | IN.MOVED_FROM)) return this.note(null);
    }
    this.note(path);
  }

  /** Watch the folder at `rel` (relative to the top) and every folder under it, but .git. */
  private watchTree(rel: Buffer): void {
    const abs = rel.length ? Buffer.concat([Buffer.from(this.top), SLASH, rel]) : Buffer.from(this.top);
    const wd = this.ino.addWatch(abs);
    if (wd < 0) {
      // ENOSPC: the kernel's watch limit (fs.inotify.max_user_watches). A folder
      // gone meanwhile (ENOENT, ENOTDIR) is an event of its parent's already.
      if (rel.length === 0 || (wd !== -2 && wd !== -20)) this.broken = wd === -28 ? "the kernel's inotify watch limit (fs.inotify.max_user_watches) is reached" : `a folder could not be watched (errno ${-wd})`;
      return;
    }
    this.folders.set(wd, rel);
    for (const name of subfolders(abs)) {
      if (name.equals(DOT_GIT)) continue;
      this.watchTree(rel.length ? Buffer.concat([rel, SLASH, name]) : name);
      if (this.broken !== null) return;
    }
  }
}

/**
 * The folders in `abs` (not links to folders: Git does not follow them), by
 * their names' bytes. Names are read as text with their types; a folder
 * holding a name that is not UTF-8 is read again as bytes, each entry looked at.
 */
function subfolders(abs: Buffer): Buffer[] {
  try {
    const entries = readdirSync(abs.toString(), { withFileTypes: true });
    if (!entries.some((d) => d.name.includes("\uFFFD"))) return entries.filter((d) => d.isDirectory()).map((d) => Buffer.from(d.name));
  } catch {
    /* as bytes, below */
  }
  const found: Buffer[] = [];
  try {
    for (const name of readdirSync(abs, { encoding: "buffer" })) {
      try {
        if (lstatSync(Buffer.concat([abs, SLASH, name])).isDirectory()) found.push(name);
      } catch {
        /* gone meanwhile: an event says so */
      }
    }
  } catch {
    /* gone meanwhile */
  }
  return found;
}

/**
 * The worker's one watch: made the first time it is asked for, where the
 * guard is not off (undo.guard=false), the repository has a work tree and
 * does not fold case (Git matches the paths a monitor lists exactly); what
 * became of it is said in watch-state for doctor.
 */
export class WatchKeeper {
  private current: TreeWatch | null | undefined;
  private said: string | null | undefined;

  constructor(private readonly undoDir: string) {}

  /** Whether a watch was made (it may have broken since). */
  get started(): boolean {
    return this.current != null;
  }

  watch(repo: Repo): TreeWatch | null {
    if (this.current !== undefined) return this.current;
    const foldsCase = repo.settings.has("core.ignorecase") && gitBool(repo.settings.get("core.ignorecase")!) !== false;
    const on = repo.config.guard !== false && repo.workTree !== null;
    const why = !on ? null : foldsCase ? "core.ignorecase is set (Git matches the paths a monitor lists exactly)" : unwatchableTree(repo.workTree!, process.platform);
    this.current = on && why === null ? TreeWatch.start(repo.workTree!) : null;
    if (this.current !== null) this.noteChange(this.current);
    else if (on) writeWatchState(this.undoDir, `off: ${why ?? "no inotify on this system"}`);
    return this.current;
  }

  /**
   * The watch if one was started: a recording notes where it stands, but
   * never starts one (that is the guard's: a registered monitor, or its
   * first request), so a worker without the guard watches no folder.
   */
  existing(): TreeWatch | null {
    return this.current ?? null;
  }

  /** Say in watch-state what the watch is now, when that changed. */
  noteChange(w: TreeWatch): void {
    if (this.said === w.broken) return;
    this.said = w.broken;
    writeWatchState(this.undoDir, w.broken === null ? `on: ${w.folderCount} folder${w.folderCount === 1 ? "" : "s"} watched` : `off: ${w.broken}`);
  }

  close(): void {
    this.current?.close();
  }
}
