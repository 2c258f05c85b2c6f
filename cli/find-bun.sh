# Sourced by the launcher, the test runner and install.sh: sets $bun to a Bun
# that can run the toolkit, or leaves it empty. The toolkit's own copy (from
# the npm registry, under .tools/ in a checkout, or the npm package's own
# dependency) wins over one on PATH so versions match.
# shellcheck shell=sh disable=SC2034,SC2154  # sourced: $root comes from the caller, $bun goes back to it
bun=""
if [ -n "${GIT_UNDO_BUN:-}" ] && [ -x "$GIT_UNDO_BUN" ]; then
  bun=$GIT_UNDO_BUN
elif [ -x "$root/.tools/node_modules/.bin/bun" ]; then
  bun=$root/.tools/node_modules/.bin/bun
elif [ -x "$root/node_modules/bun/bin/bun.exe" ] && "$root/node_modules/bun/bin/bun.exe" --version >/dev/null 2>&1; then
  # Installed with npm (`npm install -g git-undo`): Bun came in as the package's dependency.
  bun=$root/node_modules/bun/bin/bun.exe
elif command -v bun >/dev/null 2>&1; then
  bun=$(command -v bun)
elif [ -x "$HOME/.bun/bin/bun" ]; then
  bun=$HOME/.bun/bin/bun
fi
