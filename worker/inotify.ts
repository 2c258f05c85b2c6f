// Linux's inotify, called through bun:ffi: Bun's own fs.watch cannot back the
// guard's answers (its recursive watch registers folders in the background,
// skips names that begin with "." or "~", and watches files one by one). One
// descriptor, non-blocking: whoever needs every event that happened up to now
// reads the queue until it is empty (drain). Null anywhere else, or when libc
// cannot be loaded: the guard then answers "/" every time.
import { dlopen, FFIType, ptr, read as readPointer } from "bun:ffi";

export const IN = {
  MODIFY: 0x2,
  ATTRIB: 0x4,
  CLOSE_WRITE: 0x8,
  MOVED_FROM: 0x40,
  MOVED_TO: 0x80,
  CREATE: 0x100,
  DELETE: 0x200,
  DELETE_SELF: 0x400,
  MOVE_SELF: 0x800,
  UNMOUNT: 0x2000,
  Q_OVERFLOW: 0x4000,
  IGNORED: 0x8000,
  ONLYDIR: 0x1000000,
  DONT_FOLLOW: 0x2000000,
  ISDIR: 0x40000000,
} as const;

/** What a watch on a folder asks for: every change to what it holds, and to itself. */
export const FOLDER_EVENTS =
  IN.MODIFY | IN.ATTRIB | IN.CLOSE_WRITE | IN.MOVED_FROM | IN.MOVED_TO | IN.CREATE | IN.DELETE | IN.DELETE_SELF | IN.MOVE_SELF | IN.ONLYDIR | IN.DONT_FOLLOW;

export interface InotifyEvent {
  wd: number;
  mask: number;
  /** The entry's name in the watched folder (bytes, as the file system has them); empty for the folder itself. */
  name: Buffer;
}

const EAGAIN = 11;
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;

type Libc = ReturnType<typeof load>;
function load(path: string) {
  return dlopen(path, {
    inotify_init1: { args: [FFIType.i32], returns: FFIType.i32 },
    inotify_add_watch: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    read: { args: [FFIType.i32, FFIType.ptr, FFIType.u64], returns: FFIType.i64 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
    __errno_location: { args: [], returns: FFIType.ptr },
  });
}

let libc: Libc | null | undefined;
function libcOnce(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform !== "linux") return libc;
  for (const name of ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"]) {
    try {
      libc = load(name);
      break;
    } catch {
      /* the next name */
    }
  }
  return libc;
}

export class Inotify {
  private readonly buf = Buffer.alloc(256 * 1024);
  private closed = false;

  private constructor(
    private readonly lib: Libc,
    readonly fd: number,
  ) {}

  /** A new inotify descriptor; null where there is none. */
  static open(): Inotify | null {
    const lib = libcOnce();
    if (!lib) return null;
    const fd = lib.symbols.inotify_init1(O_NONBLOCK | O_CLOEXEC);
    return fd < 0 ? null : new Inotify(lib, fd);
  }

  /** Watch a folder (never through a link); its watch descriptor, or the errno as a negative number. */
  addWatch(path: Buffer): number {
    const z = Buffer.concat([path, Buffer.from([0])]);
    const wd = this.lib.symbols.inotify_add_watch(this.fd, ptr(z), FOLDER_EVENTS);
    return wd >= 0 ? wd : -this.errno();
  }

  /** Every event queued now, in order; null when reading failed (anything but "nothing more"). */
  drain(): InotifyEvent[] | null {
    const events: InotifyEvent[] = [];
    for (;;) {
      const n = Number(this.lib.symbols.read(this.fd, ptr(this.buf), this.buf.length));
      if (n < 0) return this.errno() === EAGAIN ? events : null;
      if (n === 0) return null;
      let at = 0;
      while (at + 16 <= n) {
        const len = this.buf.readUInt32LE(at + 12);
        const raw = this.buf.subarray(at + 16, at + 16 + len);
        const end = raw.indexOf(0);
        events.push({ wd: this.buf.readInt32LE(at), mask: this.buf.readUInt32LE(at + 4), name: Buffer.from(end < 0 ? raw : raw.subarray(0, end)) });
        at += 16 + len;
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.lib.symbols.close(this.fd);
  }

  private errno(): number {
    const p = this.lib.symbols.__errno_location();
    return p === null ? 0 : readPointer.i32(p, 0);
  }
}
