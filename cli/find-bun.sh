# The one place that finds Bun and starts it. Sourced by the launcher, the
# hooks' cli/start-worker, the test runner and install.sh: sets $bun to a Bun
# that can run the toolkit, or leaves it empty, and defines start_bun. The Bun
# the caller names in $bun_wanted comes first when it runs (the one init wrote
# into the hooks), then GIT_UNDO_BUN, then the toolkit's own copy (from the npm
# registry, under .tools/ in a checkout, or the npm package's own dependency),
# which wins over one on PATH so versions match. Shell built-ins only where it
# can: the launcher pays for every process here on every command.
# shellcheck shell=sh disable=SC2034,SC2154  # sourced: $root comes from the caller, $bun goes back to it
bun=""
if [ -n "${bun_wanted:-}" ] && [ -x "$bun_wanted" ]; then
  bun=$bun_wanted
elif [ -n "${GIT_UNDO_BUN:-}" ] && [ -x "$GIT_UNDO_BUN" ]; then
  bun=$GIT_UNDO_BUN
elif [ -x "$root/.tools/node_modules/.bin/bun" ]; then
  bun=$root/.tools/node_modules/.bin/bun
else
  # Installed with npm (`npm install -g git-undo`), Bun came in as the
  # package's dependency: the `bun` package and its platform package
  # (@oven/bun-<os>-<cpu>, the one npm picked for this machine), in the
  # package's node_modules or, as someone else's dependency, beside it. Bun's
  # postinstall moves the platform binary over bin/bun.exe, a placeholder
  # script until then; with --ignore-scripts the binary stays where it came.
  git_undo_bun_in() { # <node_modules folder>: sets $bun when Bun is there
    bun_first=""
    [ -f "$1/bun/bin/bun.exe" ] && { IFS= read -r bun_first <"$1/bun/bin/bun.exe" || :; }
    case $bun_first in
      # The placeholder is a script; the binary starts with ELF or Mach-O bytes.
      '' | echo* | '#!'* | '@'* | ':'*) ;;
      *) [ -x "$1/bun/bin/bun.exe" ] && bun=$1/bun/bin/bun.exe && return ;;
    esac
    # One platform package: its binary. More (npm may take both the glibc and
    # the musl build for linux-x64): the first that runs here.
    bun_n=0
    for bun_try in "$1"/@oven/bun-*/bin/bun; do [ -x "$bun_try" ] && bun_n=$((bun_n + 1)) && bun=$bun_try; done
    [ "$bun_n" -gt 1 ] || return 0
    bun=""
    for bun_try in "$1"/@oven/bun-*/bin/bun; do
      [ -x "$bun_try" ] && "$bun_try" --version >/dev/null 2>&1 && bun=$bun_try && return
    done
    return 0
  }
  git_undo_bun_in "$root/node_modules"
  case $root in */node_modules/*) [ -n "$bun" ] || git_undo_bun_in "${root%/node_modules/*}/node_modules" ;; esac
  unset -f git_undo_bun_in
  unset bun_first bun_n bun_try
  if [ -n "$bun" ]; then
    :
  elif command -v bun >/dev/null 2>&1; then
    bun=$(command -v bun)
  elif [ -x "$HOME/.bun/bin/bun" ]; then
    bun=$HOME/.bun/bin/bun
  fi
fi

# How every git-undo process starts (`start_bun <script> <args>...`, in place
# of the shell): no transpiler cache in $HOME (a dotfiles repository's working
# tree; the cache saves nothing measurable here), no bunfig.toml or .env from
# the current folder (the user's repository: a preload there would run as
# git-undo), and nothing installed.
start_bun() {
  BUN_RUNTIME_TRANSPILER_CACHE_PATH=0
  export BUN_RUNTIME_TRANSPILER_CACHE_PATH
  exec "$bun" --config=/dev/null --no-env-file --no-install "$@"
}
