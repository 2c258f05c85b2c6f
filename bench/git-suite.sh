#!/bin/sh
# Git's own test suite as a client of git-undo's hooks.
#
#   sh bench/git-suite.sh [-o <folder>] [-t <seconds>] [-r <runs>] [-c] <built Git source tree> <test>...
#
# <test> is a script's number or name (t1400, t1400-update-ref.sh). Each test
# script runs with the tree's built Git (its bin-wrappers, as `make test`
# runs them) once in each run, by default two: exit0, with hooks that only
# `exit 0` in the template every test repository is made from (`git init`
# copies the tree's templates/blt/), then undo, with git-undo's hooks there,
# as `git undo init --file-hooks` writes them for this checkout, and
# `undo/hooks-enabled`, so that every repository the tests make records. A
# third run, guard, has the template of the undo run and git-undo's guard as
# every repository's monitor: GIT_TEST_FSMONITOR set to the core.fsmonitor
# value `git undo init` writes for this checkout (core/guard.ts
# guardCommand), which Git's test-lib lets through and Git uses where no
# core.fsmonitor is set (checked once before the run: Git must ask the guard
# and get its answer). The other runs have no GIT_TEST_FSMONITOR. The
# template is put back as it was at the end (also when interrupted). Then a
# table of every test whose outcome in another run differs from the exit0
# run: the script, the test's number and title, and its outcome (ok, not-ok,
# skip, todo, fixed, or absent when the script died or timed out before it)
# in each run. Exits 0 when none differs, 1 when some do, 2 on a usage or
# setup error.
#
# -o <folder>  where the logs go (default: a new folder under $TMPDIR): for
#              each script and run, the TAP output (<run>/<script>.tap), its
#              stderr and Git's --verbose-log (<run>/<script>.out); times.txt
#              has each script's seconds in each run.
# -t <seconds> each script's time limit (default 1800).
# -r <runs>    the runs, in order: exit0, undo, guard, or several joined by
#              commas (default exit0,undo; exit0,guard compares the guard with
#              a stock run). One run alone gives no table: to look into one test,
#              GIT_SUITE_ARGS='-v -i -d --run=1-<n>' sh bench/git-suite.sh -r undo ...
#              keeps its repository in <tree>/t/trash directory.<script>.
# -c           check the snapshots the last run left (bench/snapshot-check.sh,
#              plain Git: every object there, refs/stash and the stash list
#              agreeing, no dangling capture) in each script's trash
#              directory, which the scripts keep (-d) then; the findings go
#              to snapshot-check.txt, and any makes the exit status 1.
# GIT_SUITE_ARGS  the options of every script (default: --verbose-log; with -c,
#              --verbose-log -d); for
#              instance `--verbose-log -d` keeps the trash directories.
# GIT_SUITE_NICE  the scripts' niceness (default 10).
# GIT_TRACE_FSMONITOR  (Git's) an absolute file name: every query of the guard
#              and the token Git keeps (git-undo:<watch>:<n> when the worker
#              answered from its watch) are written there.
#
# The worker is left with the defaults users get (it lingers 30 s after the
# last command of a repository), so runs with git-undo are slower. Build Git
# outside this checkout (docs/development.md); nothing of Git is kept here.
set -u

out=''
limit=1800
runs='exit0,undo'
check=''

while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2 && shift 2 ;;
    -t) limit=$2 && shift 2 ;;
    -r) runs=$2 && shift 2 ;;
    -c) check=1 && shift ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' && exit 0 ;;
    --) shift && break ;;
    -*) echo "git-suite: unknown option $1" >&2 && exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "usage: sh bench/git-suite.sh [-o <folder>] [-t <seconds>] [-r <runs>] [-c] <built Git source tree> <test>..." >&2; exit 2; }
[ -z "$check" ] || GIT_SUITE_ARGS=${GIT_SUITE_ARGS:---verbose-log -d}
# The runs, each once; those compared with exit0 (when it is one of them).
list=''
for run in $(printf '%s' "$runs" | tr ',' ' '); do
  case $run in exit0 | undo | guard) ;; *) echo "git-suite: -r takes exit0, undo or guard, or several joined by commas" >&2 && exit 2 ;; esac
  case " $list " in *" $run "*) ;; *) list="$list $run" ;; esac
done
runs=${list# }
[ -n "$runs" ] || { echo "git-suite: -r takes exit0, undo or guard, or several joined by commas" >&2; exit 2; }
compared=''
case " $runs " in *" exit0 "*) for run in $runs; do [ "$run" = exit0 ] || compared="$compared $run"; done ;; esac
compared=${compared# }

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
for run in $runs; do mkdir -p "$out/$run" || exit 2; done
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

# The guard's core.fsmonitor value for this checkout and the Bun its hooks
# start, as init writes it; then a check, in the scratch repository (which
# init enabled), that the built Git takes it from GIT_TEST_FSMONITOR, runs
# it and gets the worker's token back (not only the guard's fallback).
guard=''
case " $runs " in
  *" guard "*)
    # shellcheck disable=SC1091,SC2034 # find-bun.sh reads root and bun_wanted, sets bun
    guard=$(root=$toolkit bun_wanted='' && . "$toolkit/cli/find-bun.sh" && [ -n "$bun" ] &&
      GIT_SUITE_ROOT=$toolkit "$bun" -e 'const { guardCommand } = await import(process.env.GIT_SUITE_ROOT + "/core/guard.ts");
        process.stdout.write(guardCommand(process.env.GIT_SUITE_ROOT, process.execPath));')
    [ -n "$guard" ] || { echo "git-suite: no guard command (core/guard.ts guardCommand) from this checkout" >&2; exit 2; }
    # shellcheck disable=SC2016 # the script's own variables
    HOME=$scratch/home GIT_CONFIG_NOSYSTEM=1 GIT_TEST_FSMONITOR=$guard GIT_TRACE_FSMONITOR=$scratch/fsmonitor.trace \
      sh -c 'PATH=$2/bin-wrappers:$PATH && cd "$1/repo" && echo one >file && git add file &&
        git -c user.name=A -c user.email=a@b commit -qm one && echo two >file && git status --porcelain >/dev/null &&
        git status --porcelain >"$1/status" && grep -q "^ M file\$" "$1/status" &&
        grep -q "returned success" "$1/fsmonitor.trace" && grep -q "extension successful .git-undo:" "$1/fsmonitor.trace"' \
      sh "$scratch" "$git_tree" ||
      { cp "$scratch/fsmonitor.trace" "$out/guard-check.trace" 2>/dev/null
        echo "git-suite: the built Git does not run the guard from GIT_TEST_FSMONITOR, or the worker does not answer it ($out/guard-check.trace)" >&2; exit 2; }
    ;;
esac

install_template() { # exit0 | undo | guard
  rm -rf "$template" && cp -a "$backup" "$template" && mkdir -p "$template/hooks" "$template/undo" &&
    : >"$template/undo/hooks-enabled" || return 1
  for h in reference-transaction post-index-change; do
    if [ "$1" != exit0 ]; then cp "$scratch/undo-hooks/$h" "$template/hooks/$h"; else cp "$scratch/exit0-hook" "$template/hooks/$h"; fi
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
  if [ "$run" = guard ]; then export GIT_TEST_FSMONITOR="$guard"; else unset GIT_TEST_FSMONITOR; fi
  for s in $scripts; do run_script "$run" "$s"; done
done
unset GIT_TEST_FSMONITOR
restore
trap - EXIT
checked=0
if [ -n "$check" ]; then
  set --
  for s in $scripts; do [ -d "$git_tree/t/trash directory.$s" ] && set -- "$@" "$git_tree/t/trash directory.$s"; done
  if [ $# -gt 0 ]; then
    sh "$toolkit/bench/snapshot-check.sh" "$@" >"$out/snapshot-check.txt" || checked=1
    echo "snapshot check ($(tail -n 1 "$out/snapshot-check.txt")): $out/snapshot-check.txt"
  else
    echo "snapshot check: no trash directory kept (GIT_SUITE_ARGS needs -d)"
  fi
fi
if [ -z "$compared" ]; then
  awk -F '\t' '{ s += $3 } END { printf "seconds: %d\n", s }' "$out/times.txt"
  echo "logs: $out" >&2
  exit "$checked"
fi

# Outcome of each test: "<number>\t<outcome>\t<title>" from the TAP lines.
outcomes() { # <tap file>
  [ -f "$1" ] || return 0
  # A skipped test is "ok <n> # skip <title> (<why>)", with no " - ".
  awk '/^(not )?ok [0-9]+( - | # skip )/ {
    o = "ok"; t = $0
    if (sub(/^not ok /, "", t)) o = "not-ok"; else sub(/^ok /, "", t)
    n = t; sub(/[^0-9].*$/, "", n)
    if (sub(/^[0-9]+ # skip /, "", t)) { o = "skip"; sub(/ \([^()]*\)$/, "", t) }
    else {
      sub(/^[0-9]+ - /, "", t)
      if (t ~ / # TODO known breakage vanished/) o = "fixed"
      else if (t ~ / # TODO known breakage/) o = "todo"
      sub(/ # TODO.*$/, "", t)
    }
    print n "\t" o "\t" t
  }' "$1"
}

differ=0
nruns=1
for run in $compared; do nruns=$((nruns + 1)); done
label() { case $1 in exit0) echo exit-0 ;; undo) echo git-undo ;; *) echo "$1" ;; esac; }
printf '%-32s %5s  %-8s' script test exit-0
for run in $compared; do printf ' %-8s' "$(label "$run")"; done
printf ' %s\n' title
for s in $scripts; do
  # Each run's outcomes, f=<its place> before its file.
  set --
  for run in exit0 $compared; do
    outcomes "$out/$run/$s.tap" >"$out/$run/$s.outcomes"
    set -- "$@" "f=$(($# / 2 + 1))" "$out/$run/$s.outcomes"
  done
  # Every test number some run printed, with each run's outcome, where one differs from exit0's.
  rows=$(awk -F '\t' -v runs="$nruns" '
    { o[$1, f] = $2; if (!($1 in title)) title[$1] = $3; n[$1] = 1 }
    END {
      for (k in n) {
        x = ((k, 1) in o) ? o[k, 1] : "absent"; row = k "\t" x; d = 0
        for (i = 2; i <= runs; i++) { y = ((k, i) in o) ? o[k, i] : "absent"; row = row "\t" y; if (y != x) d = 1 }
        if (d) print row "\t" title[k]
      }
    }' "$@" | sort -n)
  [ -n "$rows" ] || continue
  differ=1
  printf '%s\n' "$rows" | awk -F '\t' -v s="$s" '{
    printf "%-32s %5s ", s, $1
    for (i = 2; i < NF; i++) printf " %-8s", $i
    printf " %s\n", $NF
  }'
done
[ "$differ" = 0 ] && echo "(no test's outcome differs)"
awk -F '\t' -v runs="$runs" '{ s[$1] += $3 } END {
  n = split(runs, r, " "); line = "seconds:"
  for (i = 1; i <= n; i++) line = line (i > 1 ? "," : "") " " (r[i] == "exit0" ? "exit-0 hooks" : r[i] == "undo" ? "git-undo hooks" : "guard") " " s[r[i]] + 0
  print line
}' "$out/times.txt"
echo "logs and times: $out" >&2
[ "$checked" = 0 ] || differ=1
exit "$differ"
