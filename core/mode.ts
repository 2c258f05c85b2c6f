// The modes Git writes for tree and index entries, and the "no entry" of
// `git diff --raw`, in one place. A module of its own, importing nothing.
export const MODE = {
  file: "100644",
  executable: "100755",
  symlink: "120000",
  gitlink: "160000",
  tree: "040000",
  absent: "000000",
} as const;
