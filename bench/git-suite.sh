#!/bin/sh
# Git's own test suite as a client of git-undo's hooks.
#
#   sh bench/git-suite.sh [-o <folder>] [-t <seconds>] [-r exit0|undo] <built Git source tree> <test>...
#
# <test> is a script's number or name (t1400, t1400-update-ref.sh). Each test
# script runs twice with the tree's built Git (its bin-wrappers, as `make
# test` runs them): first with hooks that only `exit 0` in the template every
# test repository is made from (`git init` copies the tree's templates/blt/),
# then with git-undo's hooks there, as `git undo init --file-hooks` writes
# them for this checkout, and `undo/hooks-enabled`, so that every repository
# the tests make records. The template is put back as it was at the end
# (also when interrupted). Then a table of every test whose outcome differs
# between the two runs: the script, the test's number and title, and its
# outcome (ok, not-ok, skip, todo, fixed, or absent when the script died or
# timed out before it) in each run. Exits 0 when none differs, 1 when some
# do, 2 on a usage or setup error.
#
# -o <folder>  where the logs go (default: a new folder under $TMPDIR): for
#              each script and run, the TAP output (<run>/<script>.tap), its
#              stderr and Git's --verbose-log (<run>/<script>.out); times.txt
#              has each script's seconds in each run.
# -t <seconds> each script's time limit (default 1800).
# -r <run>     only that run (exit0 or undo), no table: to look into one test,
#              GIT_SUITE_ARGS='-v -i -d --run=1-<n>' sh bench/git-suite.sh -r undo ...
#              keeps its repository in <tree>/t/trash directory.<script>.
# GIT_SUITE_ARGS  the options of every script (default: --verbose-log); for
#              instance `--verbose-log -d` keeps the trash directories.
# GIT_SUITE_NICE  the scripts' niceness (default 10).
#
# The worker is left with the defaults users get (it lingers 30 s after the
# last command of a repository), so runs with git-undo are slower. Build Git
# outside this checkout (docs/development.md); nothing of Git is kept here.
set -u

out=''
limit=1800
runs='exit0 undo'

while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2 && shift 2 ;;
    -t) limit=$2 && shift 2 ;;
    -r) runs=$2 && shift 2 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' && exit 0 ;;
    --) shift && break ;;
    -*) echo "git-suite: unknown option $1" >&2 && exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "usage: sh bench/git-suite.sh [-o <folder>] [-t <seconds>] [-r exit0|undo] <built Git source tree> <test>..." >&2; exit 2; }
case $runs in exit0 | undo | 'exit0 undo') ;; *) echo "git-suite: -r takes exit0 or undo" >&2 && exit 2 ;; esac

case $0 in
  */*) toolkit=$(cd "${0%/*}/.." && pwd -P) ;;
  *) toolkit=$(cd .. && pwd -P) ;;
esac
git_tree=$(cd "$1" && pwd -P) || exit 2
shift
template=$git_tree/templates/blt
if [ ! -x "$git_tree/bin-wrappers/git" ] || [ ! -d "$template" ] || [ ! -d "$git_tree/t" ]; then
  echo "git-suite: $git_tree is not a built Git source tree (no bin-wrappers/git or templates/blt)" >&2
  exit 2
fi
if [ ! -f "$toolkit/hooks/hook.sh" ] || [ ! -x "$toolkit/cli/git-undo" ]; then
  echo "git-suite: no git-undo checkout at $toolkit" >&2
  exit 2
fi
command -v timeout >/dev/null 2>&1 || { echo "git-suite: needs timeout (coreutils)" >&2; exit 2; }

[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/git-suite.XXXXXX") || exit 2
mkdir -p "$out/exit0" "$out/undo" || exit 2
out=$(cd "$out" && pwd -P)

# The scripts, by name.
scripts=''
for t in "$@"; do
  t=${t%.sh}
  found=''
  for f in "$git_tree/t/$t.sh" "$git_tree/t/$t"-*.sh; do [ -f "$f" ] && found=${f##*/} && break; done
  [ -n "$found" ] || { echo "git-suite: no test script $t in $git_tree/t" >&2; exit 2; }
  scripts="$scripts ${found%.sh}"
done

# The hooks as `git undo init --file-hooks` writes them for this checkout,
# rendered in a scratch repository with the built Git and a HOME of its own.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/git-suite-hooks.XXXXXX") || exit 2
backup=$scratch/template
cp -a "$template" "$backup" || exit 2
restore() {
  if [ -d "$backup" ]; then
    rm -rf "$template" && cp -a "$backup" "$template" && rm -rf "$scratch"
  fi
}
trap 'restore' EXIT
trap 'exit 130' INT TERM HUP

(
  export HOME="$scratch/home" GIT_CONFIG_NOSYSTEM=1 GIT_TEMPLATE_DIR="$backup"
  PATH=$git_tree/bin-wrappers:$PATH
  mkdir "$HOME" && git init -q "$scratch/repo" && cd "$scratch/repo" &&
    "$toolkit/cli/git-undo" init --file-hooks >/dev/null
) || { echo "git-suite: git undo init --file-hooks failed" >&2; exit 2; }
mkdir "$scratch/undo-hooks" &&
  cp "$scratch/repo/.git/hooks/reference-transaction" "$scratch/repo/.git/hooks/post-index-change" "$scratch/undo-hooks/" || exit 2
printf '#!/bin/sh\nexit 0\n' >"$scratch/exit0-hook"

install_template() { # exit0 | undo
  rm -rf "$template" && cp -a "$backup" "$template" && mkdir -p "$template/hooks" "$template/undo" &&
    : >"$template/undo/hooks-enabled" || return 1
  for h in reference-transaction post-index-change; do
    if [ "$1" = undo ]; then cp "$scratch/undo-hooks/$h" "$template/hooks/$h"; else cp "$scratch/exit0-hook" "$template/hooks/$h"; fi
    chmod +x "$template/hooks/$h" || return 1
  done
}

# One script in one run: its TAP lines, its stderr, its verbose log, its time.
run_script() { # <run> <script>
  start=$(date +%s)
  # shellcheck disable=SC2086 # GIT_SUITE_ARGS: words
  (cd "$git_tree/t" && nice -n "${GIT_SUITE_NICE:-10}" timeout -k 10 "$limit" sh "./$2.sh" ${GIT_SUITE_ARGS:---verbose-log}) \
    </dev/null >"$out/$1/$2.tap" 2>"$out/$1/$2.err"
  status=$?
  end=$(date +%s)
  [ -f "$git_tree/t/test-results/$2.out" ] && cp "$git_tree/t/test-results/$2.out" "$out/$1/$2.out"
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$((end - start))" "$status" >>"$out/times.txt"
  printf '%-6s %-40s %5ss exit %s\n' "$1" "$2" "$((end - start))" "$status" >&2
}

: >"$out/times.txt"
for run in $runs; do
  install_template "$run" || { echo "git-suite: cannot write $template" >&2; exit 2; }
  for s in $scripts; do run_script "$run" "$s"; done
done
restore
trap - EXIT
if [ "$runs" != 'exit0 undo' ]; then
  awk -F '\t' '{ s += $3 } END { printf "seconds: %d\n", s }' "$out/times.txt"
  echo "logs: $out" >&2
  exit 0
fi

# Outcome of each test: "<number>\t<outcome>\t<title>" from the TAP lines.
outcomes() { # <tap file>
  [ -f "$1" ] || return 0
  awk '/^(not )?ok [0-9]+ - / {
    o = "ok"; t = $0
    if (sub(/^not ok /, "", t)) o = "not-ok"; else sub(/^ok /, "", t)
    n = t; sub(/ - .*$/, "", n); sub(/^[0-9]+ - /, "", t)
    if (t ~ / # skip/) o = "skip"
    else if (t ~ / # TODO known breakage vanished/) o = "fixed"
    else if (t ~ / # TODO known breakage/) o = "todo"
    sub(/ # (skip|TODO).*$/, "", t)
    print n "\t" o "\t" t
  }' "$1"
}

differ=0
printf '%-32s %5s  %-8s %-8s %s\n' script test exit-0 git-undo title
for s in $scripts; do
  outcomes "$out/exit0/$s.tap" >"$out/exit0/$s.outcomes"
  outcomes "$out/undo/$s.tap" >"$out/undo/$s.outcomes"
  # Every test number either run printed, with both outcomes.
  rows=$(awk -F '\t' '
    FNR == 1 { f++ }
    f == 1 { a[$1] = $2; title[$1] = $3; n[$1] = 1 }
    f == 2 { b[$1] = $2; if (!($1 in title)) title[$1] = $3; n[$1] = 1 }
    END {
      for (k in n) {
        x = (k in a) ? a[k] : "absent"; y = (k in b) ? b[k] : "absent"
        if (x != y) printf "%d\t%s\t%s\t%s\n", k, x, y, title[k]
      }
    }' "$out/exit0/$s.outcomes" "$out/undo/$s.outcomes" | sort -n)
  [ -n "$rows" ] || continue
  differ=1
  printf '%s\n' "$rows" | while IFS="$(printf '\t')" read -r n x y title; do
    printf '%-32s %5s  %-8s %-8s %s\n' "$s" "$n" "$x" "$y" "$title"
  done
done
[ "$differ" = 0 ] && echo "(no test's outcome differs)"
awk -F '\t' '{ s[$1] += $3 } END { printf "seconds: exit-0 hooks %d, git-undo hooks %d\n", s["exit0"], s["undo"] }' "$out/times.txt"
echo "logs and times: $out" >&2
exit "$differ"
