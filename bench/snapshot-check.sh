#!/bin/sh
# Checks every snapshot a test run left behind, with plain Git only (none of
# git-undo's code reads them here, so a fault of its reader hides nothing):
#
#   sh bench/snapshot-check.sh <folder>...
#
# Every git dir under the folders that holds refs/undo/ (Git's kept trash
# directories, `GIT_SUITE_ARGS='--verbose-log -d' sh bench/git-suite.sh ...`)
# is checked, once no worker of git-undo's runs there any more:
#   missing  an object a snapshot needs is not in the repository
#            (`rev-list --objects --missing=print` over refs/undo/);
#   stash    a snapshot's `refs` blob names a refs/stash that is not the
#            first line of its `stash` blob, or one of the two is there
#            without the other;
#   dangling `git fsck` reports a dangling commit carrying Undo- trailers or
#            a dangling state tree (HEAD and refs entries): a capture of
#            git-undo's that no snapshot names (an object seen only through an
#            alternate, or linked in by a local clone from its source, where a
#            snapshot names it, is not one);
#   fsck     any other error line `git fsck` prints that names refs/undo/.
# A line per finding: <kind> <git dir> <detail>; then "N repositories, M
# snapshots, K findings". Exits 1 when there are findings, 2 on a usage error.
# Tests that delete objects by hand (t1450, t7700, t7900) leave `missing`
# findings by design: docs/development.md lists them.
set -u
[ $# -ge 1 ] || { echo "usage: sh bench/snapshot-check.sh <folder>..." >&2; exit 2; }
repos=0
snapshots=0
found() { # <kind> <git dir> <detail>
  printf '%s\t%s\t%s\n' "$1" "$2" "$3"
}
# Whether an object is this repository's own: in its own store (not only
# through an alternate), and not linked in by a local clone from a source
# where a snapshot names it (a loose file or a pack with more than one name).
own() { # <git dir> <id>
  f=$1/objects/$(printf '%s' "$2" | cut -c1-2)/$(printf '%s' "$2" | cut -c3-)
  if [ -f "$f" ]; then
    [ -z "$(find "$f" -links +1)" ]
    return
  fi
  for idx in "$1"/objects/pack/*.idx; do
    [ -f "$idx" ] || continue
    if git show-index <"$idx" 2>/dev/null | grep -q " $2"; then
      [ -z "$(find "${idx%.idx}.pack" -links +1)" ]
      return
    fi
  done
  return 1
}
# The git dirs: a HEAD beside objects/ (or a commondir, for linked worktrees).
list=$(mktemp) || exit 2
trap 'rm -f "$list"' EXIT
find "$@" -name HEAD -type f 2>/dev/null | while IFS= read -r head; do
  d=${head%/HEAD}
  [ -d "$d/objects" ] && [ -d "$d/refs" ] && printf '%s\n' "$d"
done >"$list"
while IFS= read -r gd; do
  refs=$(git --git-dir="$gd" for-each-ref --format='%(objectname)' refs/undo/ 2>/dev/null)
  [ -n "$refs" ] || continue
  repos=$((repos + 1))
  # Wait (at most a minute) for a worker still recording or lingering there.
  n=0
  while [ -f "$gd/undo/worker.pid" ] && IFS= read -r pid <"$gd/undo/worker.pid" && [ -n "$pid" ] &&
    kill -0 "$pid" 2>/dev/null && [ $n -lt 60 ]; do
    sleep 1 && n=$((n + 1))
  done
  refs=$(git --git-dir="$gd" for-each-ref --format='%(objectname)' refs/undo/snapshots/ 2>/dev/null)
  for c in $refs; do
    snapshots=$((snapshots + 1))
    r=$(git --git-dir="$gd" cat-file -p "$c:refs" 2>/dev/null | awk -F '\t' '$1 == "refs/stash" { print $2 }')
    s=$(git --git-dir="$gd" cat-file -p "$c:stash" 2>/dev/null | awk -F '\t' 'NR == 1 { print $1 }')
    [ "$r" = "$s" ] || found stash "$gd" "$c: refs/stash '$r', stash list's first '$s'"
  done
  # shellcheck disable=SC2086 # ids
  missing=$(git --git-dir="$gd" rev-list --objects --no-object-names --missing=print $refs 2>&1 | grep -v '^[0-9a-f]*$' | head -3 | tr '\n' ' ')
  [ -z "$missing" ] || found missing "$gd" "$missing"
  git --git-dir="$gd" fsck --no-progress --no-reflogs 2>&1 | while IFS= read -r line; do
    case $line in
      "dangling commit "*)
        id=${line#dangling commit }
        own "$gd" "$id" || continue
        git --git-dir="$gd" cat-file commit "$id" 2>/dev/null | grep -q '^Undo-' && echo "dangling	$gd	$line" ;;
      "dangling tree "*)
        id=${line#dangling tree }
        own "$gd" "$id" || continue
        t=$(git --git-dir="$gd" ls-tree --name-only "$id" 2>/dev/null)
        case $t in *HEAD*) case $t in *refs*) echo "dangling	$gd	$line" ;; esac ;; esac ;;
      *refs/undo/*) echo "fsck	$gd	$line" ;;
    esac
  done
done <"$list" >"$list.found"
cat "$list.found"
findings=$(wc -l <"$list.found" | tr -d ' ')
rm -f "$list.found"
echo "$repos repositories, $snapshots snapshots, $findings findings"
[ "$findings" -eq 0 ]
