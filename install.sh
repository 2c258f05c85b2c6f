#!/bin/sh
# Set up git-undo: Bun (from the npm registry when it is not on PATH), the
# locked dependencies, and a `git-undo` command in a bin folder so `git undo`
# works. With a repository argument, or run inside a repository, it also runs
# `git undo init` there. Running it again is harmless.
set -eu

BUN_VERSION=1.4.5
root=$(cd "$(dirname "$0")" && pwd)
prefix=${HOME:?HOME is not set}/.local/bin
repo=""

usage() {
  cat <<USAGE
usage: ./install.sh [--prefix <dir>] [<repository>]

Sets git-undo up from this checkout, and prints one line for each thing it writes.

    --prefix <dir>   the folder to put the git-undo command in (default:
                     ~/.local/bin); the man page is linked into
                     <dir>/../share/man/man1, where man looks for the pages
                     of the commands in <dir>
    <repository>     also run 'git undo init' in that repository
                     (default: the repository the shell is in, if any)

Inside the checkout it writes .tools/ (Bun from the npm registry when none is
found, and Bun's download cache), node_modules/ (the locked dependencies) and
dist/ (the bundle); nothing else outside --prefix and the completion folders.
Shell completion is linked where each installed shell looks for yours:
~/.local/share/bash-completion/completions (bash, with the bash-completion
package), ~/.zsh/completions (zsh) and ~/.config/fish/completions (fish).
Running it again is harmless.
USAGE
}

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { usage >&2; exit 129; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "install.sh: unknown option '$1'" >&2; usage >&2; exit 129 ;;
    *) repo=$1; shift ;;
  esac
done

say() { printf '%s\n' "$*"; }

. "$root/cli/find-bun.sh"
if [ -z "$bun" ]; then
  command -v npm >/dev/null 2>&1 || { echo "install.sh: neither bun nor npm is on PATH; install Node.js and npm first" >&2; exit 1; }
  say "Installing Bun $BUN_VERSION from the npm registry into $root/.tools/"
  npm install --prefix "$root/.tools" --no-save --no-audit --no-fund --loglevel=error "bun@$BUN_VERSION" >/dev/null
  bun=$root/.tools/node_modules/.bin/bun
  # Some npm versions skip install scripts; the package's own installer links the binary.
  if ! "$bun" --version >/dev/null 2>&1; then
    (cd "$root/.tools/node_modules/bun" && node install.js >/dev/null)
  fi
fi
"$bun" --version >/dev/null 2>&1 || { echo "install.sh: $bun does not run" >&2; exit 1; }

# Bun itself is an optional dependency for `npm install -g`; a checkout has it
# already. Bun's download cache stays in the checkout too, not in ~/.bun.
(cd "$root" && BUN_INSTALL_CACHE_DIR="$root/.tools/bun-cache" "$bun" install --frozen-lockfile --omit=optional --silent)
say "Installed the locked dependencies into $root/node_modules/"

# The CLI and the worker start from one bundle rather than every module
# (core/bundle.ts); when it cannot be built they run from the sources.
# (No transpiler cache into ~/.bun either, as the launcher runs.)
if BUN_RUNTIME_TRANSPILER_CACHE_PATH=0 "$bun" "$root/build/bundle.ts" >/dev/null; then
  say "Built the bundle into $root/dist/"
else
  say "Note: could not build the bundle; git-undo runs from its sources"
fi

# The command: a script naming this checkout (cli/write-command says why).
mkdir -p "$prefix"
sh "$root/cli/write-command" "$root" "$prefix/git-undo"
say "Wrote $prefix/git-undo (the command)"

# The man page, so that `git undo --help` (which Git turns into `man git-undo`)
# works: man looks in <folder on PATH>/../share/man.
if [ -f "$root/docs/git-undo.1" ]; then
  mandir=$(cd "$(dirname "$prefix")" && pwd)/share/man/man1
  mkdir -p "$mandir"
  ln -sf "$root/docs/git-undo.1" "$mandir/git-undo.1"
  say "Linked $mandir/git-undo.1 (the man page, for git undo --help)"
fi

# Shell completion, where each shell looks for a user's own, for the shells
# installed (bash's through Git's completion, which loads it for `git undo`).
sh "$root/cli/install-completion" home || :

case ":$PATH:" in
  *":$prefix:"*) ;;
  *) say "Note: $prefix is not on your PATH; add it, e.g. in ~/.profile:"
     say "    export PATH=\"$prefix:\$PATH\"" ;;
esac

# Which repository to set up: the argument, or the one we are in (not the toolkit's own).
if [ -z "$repo" ]; then
  top=$(git rev-parse --show-toplevel 2>/dev/null || true)
  if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" != "$(cd "$root" && pwd -P)" ]; then repo=$top; fi
fi
if [ -n "$repo" ]; then
  say "Setting up $repo"
  (cd "$repo" && "$root/cli/git-undo" init)
fi
say "git-undo is ready."
