#!/bin/sh
# git-undo: 'git undo init' created this file; 'git undo uninstall' deletes it.
# >>> git-undo >>>
# Tells git-undo's worker that Git changed something: appends the pid of the
# Git process running this hook and the hook's first argument (post-index-change:
# 1 when Git wrote files) to <gitdir>/undo/pending, and starts the worker when
# none runs. The worker works out which command that was and records once
# it has ended. Shell built-ins only; reads no stdin, prints nothing, never
# exits, never waits, and leaves the hook's status at 0. One template for every
# hook (reference-transaction, post-index-change, config-defined hooks): a
# reference transaction counts once committed. Run with 'guard' first it is
# the guard, Git's core.fsmonitor hook: it leaves a request, undo/guard.<its
# pid>, holding the Git process's pid, waits (bounded) until the worker has
# taken it away (having recorded what the command could throw away), and
# prints the worker's answer: the paths changed since Git's token, or "/"
# (anything may have changed, so Git looks at every file) when there is none.
case ${GIT_UNDO_INTERNAL:-}:${1:-} in
?*:* | *:prepar* | *:aborted) ;;
*)
  git_undo_root=''
  git_undo_bun=''
  # Run by a config-defined hook straight from the toolkit: it is where this
  # file lies (or, read into the guard's shell, GIT_UNDO_HOOK_ROOT), and the
  # command names Bun.
  [ -n "$git_undo_root" ] || git_undo_root=${GIT_UNDO_HOOK_ROOT:-${0%/hooks/*}}
  [ -n "$git_undo_bun" ] || git_undo_bun=${GIT_UNDO_HOOK_BUN:-}
  # The worktree's git dir: GIT_DIR in linked worktrees and bare repositories,
  # otherwise .git at the top, where hooks run (a file in submodules).
  git_undo_dir=${GIT_DIR:-.git}
  case $git_undo_dir in /*) ;; *) git_undo_dir=$PWD/$git_undo_dir ;; esac
  if [ -f "$git_undo_dir" ]; then
    IFS= read -r git_undo_x <"$git_undo_dir"
    case $git_undo_x in
      "gitdir: /"*) git_undo_dir=${git_undo_x#gitdir: } ;;
      "gitdir: "*) git_undo_dir=${git_undo_dir%/*}/${git_undo_x#gitdir: } ;;
    esac
  fi
  git_undo_u=$git_undo_dir/undo
  # Only where 'git undo init' ran (a hooks folder may serve many
  # repositories); a linked worktree records when its repository does.
  if [ ! -f "$git_undo_u/hooks-enabled" ] && [ -f "$git_undo_dir/commondir" ]; then
    IFS= read -r git_undo_x <"$git_undo_dir/commondir"
    case $git_undo_x in /*) ;; *) git_undo_x=$git_undo_dir/$git_undo_x ;; esac
    [ -f "$git_undo_x/undo/hooks-enabled" ] && mkdir "$git_undo_u" && : >>"$git_undo_u/hooks-enabled"
  fi
  # Only with the toolkit there, and into nothing but a regular file: a FIFO
  # would hang Git, a link write elsewhere.
  git_undo_m=$git_undo_u/pending
  git_undo_l="$PPID ${1:-}"
  [ "${1:-}" = guard ] && git_undo_m=$git_undo_u/guard.$$ && git_undo_l="$PPID
${3:-}
$PWD"
  if [ -f "$git_undo_u/hooks-enabled" ] && [ -f "$git_undo_root/cli/start-worker" ] && [ ! -h "$git_undo_m" ] && { [ -f "$git_undo_m" ] || [ ! -e "$git_undo_m" ]; }; then
    printf '%s\n' "$git_undo_l" >>"$git_undo_m"
    git_undo_p=$git_undo_u/worker.pid
    git_undo_x='' git_undo_w=''
    [ -f "$git_undo_p" ] && [ ! -h "$git_undo_p" ] && IFS= read -r git_undo_x <"$git_undo_p"
    # Writes a file of undo/ (the probe below, guard-unanswered), a line ($2, or empty): a regular file or nothing, as the mark.
    git_undo_touch() { [ ! -h "$git_undo_u/$1" ] && { [ -f "$git_undo_u/$1" ] || [ ! -e "$git_undo_u/$1" ]; } && printf '%s\n' "${2:-}" >|"$git_undo_u/$1"; }
    # A worker keeps worker.pid's time a few seconds ahead of the clock (its
    # lease). A mark newer than that means no worker of ours is alive under
    # that pid (a crash, a reboot, a pid given to another program): start one
    # to check and take over, once per lease (a probe no older than worker.pid
    # says it was tried; file times are coarse, so "no older", not "newer").
    # (-nt: POSIX since 2024, and in every sh Git runs hooks with before that.)
    # shellcheck disable=SC3013,SC2209
    case $git_undo_x in
      '' | 0* | *[!0-9]*) ;;
      *) kill -0 "$git_undo_x" && { [ ! "$git_undo_m" -nt "$git_undo_p" ] || { [ -f "$git_undo_u/probe" ] && [ ! "$git_undo_p" -nt "$git_undo_u/probe" ]; } || { git_undo_touch probe && false; }; } && git_undo_x=wait ;;
    esac
    # The Bun init named; when it is gone, one as the launcher finds it
    # (cli/find-bun.sh), in a subshell so that nothing there can end this
    # hook or touch its variables. Looked up only when a worker is to start.
    if [ "$git_undo_x" != wait ] && [ ! -x "$git_undo_bun" ]; then
      git_undo_bun=$(bun_wanted='' root=$git_undo_root && . "$git_undo_root/cli/find-bun.sh" && printf '%s' "$bun")
    fi
    if [ "$git_undo_x" != wait ] && [ -x "$git_undo_bun" ]; then
      # Of two hooks finding no worker, only one starts it: the pid file is
      # created exclusively (noclobber) with this shell's pid, then the
      # worker's; the probe after each write keeps other hooks from checking
      # a reservation as they would a worker whose lease ran out.
      git_undo_x=
      if [ ! -e "$git_undo_p" ]; then
        (set -C && echo $$ >"$git_undo_p") && { git_undo_touch probe || :; } && git_undo_x=reserved || git_undo_x='wait'
      fi
      # Detached, in its own session where there is setsid, holding none of
      # Git's streams: neither Git nor `out=$(git ...)` waits for it.
      # cli/start-worker starts Bun as every git-undo process starts, and
      # becomes the worker. The folder is the work tree's top only where Git
      # set one up for the command (GIT_PREFIX): a clone runs its hooks from
      # the folder it was started in, and the worker asks the git dir then.
      if [ "$git_undo_x" != wait ]; then
        $(command -v setsid) sh "$git_undo_root/cli/start-worker" "$git_undo_bun" "$git_undo_dir" "${GIT_PREFIX+$PWD}" </dev/null >/dev/null 2>&1 & git_undo_w=$!
        [ "$git_undo_x" != reserved ] || { echo "$git_undo_w" >|"$git_undo_p" && git_undo_touch probe; }
      fi
    fi
    # The guard waits while its request is there and a worker lives (the one
    # worker.pid names, or the one this hook started in place of a dead one
    # that file still names, while it takes the file over), at most
    # undo.guardTimeout: ticks of 0.01 s, as the worker wrote them down. The
    # worker answers most requests 1 to 5 ms after they are written: three
    # thousand quick looks (about 6 ms, no process started) come before the
    # first sleep, which costs a process and 10 ms.
    if [ "${1:-}" = guard ]; then
      git_undo_n=500
      [ -f "$git_undo_u/guard-ticks" ] && IFS= read -r git_undo_n <"$git_undo_u/guard-ticks"
      case $git_undo_n in '' | *[!0-9]*) git_undo_n=500 ;; esac
      git_undo_l=3000
      while [ -f "$git_undo_m" ] && [ "$git_undo_l" -gt 0 ]; do git_undo_l=$((git_undo_l - 1)); done
      # A worker alive but deaf (stopped, stuck) would cost every command the
      # whole bound: once a guard has waited it out, it names that worker in
      # guard-unanswered, and the next ones wait no longer than the quick
      # looks while worker.pid still names it, until it reads a request again
      # (it then removes the file, and this guard waits as before).
      [ ! -f "$git_undo_u/guard-unanswered" ] || { IFS= read -r git_undo_x <"$git_undo_u/guard-unanswered" && [ -f "$git_undo_p" ] && IFS= read -r git_undo_l <"$git_undo_p" && [ "$git_undo_x" = "$git_undo_l" ] && kill -0 "$git_undo_x" && git_undo_n=0; }
      while [ -f "$git_undo_m" ] && [ "$git_undo_n" -gt 0 ] && { { [ -f "$git_undo_p" ] && IFS= read -r git_undo_x <"$git_undo_p" && kill -0 "$git_undo_x"; } || kill -0 "${git_undo_w:-x}"; }; do
        sleep 0.01 || git_undo_n=1
        git_undo_n=$((git_undo_n - 1))
      done
      [ ! -f "$git_undo_m" ] || { rm -f "$git_undo_m" && [ "$git_undo_n" -gt 0 ]; } || git_undo_touch guard-unanswered "$git_undo_x"
      # The worker's answer for this Git process: its token, then each path that
      # may have changed since Git's, or "/" (a line each; Git reads them NUL-ended).
      git_undo_m=$git_undo_u/answer.$$
      if [ -f "$git_undo_m" ] && [ ! -h "$git_undo_m" ] && { IFS= read -r git_undo_l && [ "$git_undo_l" = "$PPID" ] && IFS= read -r git_undo_l && [ -n "$git_undo_l" ]; } <"$git_undo_m"; then
        { IFS= read -r git_undo_l && while IFS= read -r git_undo_l; do printf '%s\0' "$git_undo_l"; done; } <"$git_undo_m" && git_undo_said=1
      fi
    fi
  fi
  unset git_undo_root git_undo_bun git_undo_dir git_undo_u git_undo_p git_undo_x git_undo_m git_undo_l git_undo_n git_undo_w GIT_UNDO_HOOK_BUN GIT_UNDO_HOOK_ROOT
  unset -f git_undo_touch
  ;;
esac 2>/dev/null
# The guard's answer when the worker gave none: a token, then "/" (look at everything).
[ "${1:-}" != guard ] || [ -n "${git_undo_said:-}" ] || printf 'git-undo\0/'
unset git_undo_said
# <<< git-undo <<<
