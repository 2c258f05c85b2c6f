// Whether the worker can watch a working tree (worker/tree-watch.ts): only with
// inotify (Linux), and only on a file system every change to which passes
// through this kernel. Where it cannot, every answer of the guard is "look at
// every file", and Git then rewrites its index on every status: so, unless the
// user asks for the guard (undo.guard), init leaves it out there
// (core/guard.ts guardWanted).
import { statfsSync } from "node:fs";
import { seams } from "./seams.ts";

/**
 * File systems whose every change passes through this kernel, so inotify
 * reports it (statfs's f_type, from linux/magic.h): local disks, memory, and
 * the overlays containers use. Anything else may change where this kernel
 * does not see it (NFS, SMB, 9p as WSL's /mnt/c and VM shares use, FUSE,
 * cluster file systems), and an answer from the watch would then hide a
 * change from Git: there the guard answers "/".
 */
const LOCAL_FILE_SYSTEMS: ReadonlySet<number> = new Set([
  0xef53, // ext2, ext3, ext4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x858458f6, // ramfs
  0x794c7630, // overlayfs
  0xf2f52010, // f2fs
  0x2fc12fc1, // zfs
  0xca451a4e, // bcachefs
  0x52654973, // reiserfs
  0x3153464a, // jfs
  0x3434, // nilfs
  0xf15f, // ecryptfs
]);

/** Some well-known others, to say which one it is. */
const OTHER_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x6969, "NFS"],
  [0x517b, "SMB"],
  [0xff534d42, "CIFS"],
  [0xfe534d42, "SMB2"],
  [0x01021997, "9p"],
  [0x65735546, "FUSE"],
  [0x786f4256, "VirtualBox shared folder"],
  [0x00c36400, "Ceph"],
  [0x5346414f, "AFS"],
  [0x0bd00bd0, "Lustre"],
  [0x01161970, "GFS2"],
  [0x7461636f, "OCFS2"],
]);

/**
 * Why the watch cannot be trusted on the file system with this f_type; null
 * for a local one (LOCAL_FILE_SYSTEMS).
 */
export function fileSystemRefusal(type: number): string | null {
  const t = type >>> 0;
  if (LOCAL_FILE_SYSTEMS.has(t)) return null;
  const name = OTHER_FILE_SYSTEMS.get(t) ?? `type 0x${t.toString(16)}`;
  return `the working tree is on a file system (${name}) that may change where this system's inotify does not see it`;
}

/**
 * Why the worker cannot watch the working tree at `top` on `platform`
 * (process.platform, given by the caller); null where it can. A file system
 * that cannot be read counts as one that cannot be watched.
 */
export function unwatchableTree(top: string, platform: string): string | null {
  if (platform !== "linux") return "no inotify on this system";
  try {
    return fileSystemRefusal(seams.fileSystemType ?? statfsSync(top).type);
  } catch {
    return "the working tree's file system cannot be read (statfs)";
  }
}
