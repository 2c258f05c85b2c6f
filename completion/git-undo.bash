# bash completion for git-undo. Git's own bash completion runs _git_undo for
# `git undo <TAB>` (and loads this file by the name git-undo when it finds no
# such function); `git-undo <TAB>` works too. Commands and options are read
# from `git undo -h` and `git undo <command> -h`, so they are always the
# installed version's; snapshot numbers come straight from the refs.
# shellcheck disable=SC2154  # cur, prev, words, cword, __git_cmd_idx: set by Git's completion

# This worktree's snapshot numbers, newest first.
__git_undo_snapshots ()
{
	local dirs gitdir common prefix ref n
	dirs=$(__git rev-parse --absolute-git-dir --path-format=absolute --git-common-dir 2>/dev/null) || return
	gitdir=${dirs%%$'\n'*} common=${dirs#*$'\n'}
	prefix=refs/undo/snapshots/
	[ "$gitdir" = "$common" ] || prefix=refs/undo/worktrees/${gitdir##*/}/snapshots/
	__git for-each-ref --sort=-refname --format='%(refname)' "$prefix" 2>/dev/null |
	while read -r ref; do
		n=${ref#"$prefix"}
		# Exactly ten digits (the format); anything else there is no snapshot.
		[[ $n =~ ^[0-9]{10}$ ]] && printf '%s\n' "$((10#$n))"
	done
}

# The long options `git undo <command> -h` lists, "--name=" for those taking a value.
__git_undo_options ()
{
	__git undo "$1" -h 2>/dev/null |
	sed -n 's/^ \{1,\}\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\) <.*/\2=/p; s/^ \{1,\}\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\)\( .*\)\{0,1\}$/\2/p'
}

_git_undo ()
{
	local commands command="" i
	commands=$(__git undo -h 2>/dev/null | sed -n 's/^    \([a-z][a-z-]*\)  .*/\1/p')
	# The first word after `undo` (or `git-undo`) that is no option; not
	# __git_find_on_cmdline, which would take the `undo` of `git undo` for one.
	for ((i = ${__git_cmd_idx:-1} + 1; i < cword; i++)); do
		case "${words[i]}" in
		-C) ((i++)) ;;
		-*) ;;
		*) command=${words[i]}; break ;;
		esac
	done
	[ "$command" = log ] && command=list
	case "$command,$prev,$cur" in
	,*,-*)
		__gitcomp "$(__git_undo_options undo) --version --help"
		return ;;
	,*)
		__gitcomp "$commands"
		return ;;
	help,*)
		__gitcomp "$commands"
		return ;;
	show,--against,*)
		__gitcomp_nl "$(__git_undo_snapshots)"
		return ;;
	show,*,--against=*)
		__gitcomp_nl "$(__git_undo_snapshots)" "" "${cur#--against=}"
		return ;;
	*,*,-*)
		__gitcomp "$(__git_undo_options "$command")"
		return ;;
	restore,*|revert,*|show,*|diff,*)
		# The snapshot numbers these take: one, two for diff (i is the command's word).
		local given=0 most=1
		[ "$command" = diff ] && most=2
		for ((i++; i < cword; i++)); do
			case "${words[i]}" in -*) ;; [0-9]*) ((given++)) ;; esac
		done
		((given < most)) || return
		__gitcomp_nl "$(__git_undo_snapshots)"
		return ;;
	esac
}

# `git-undo <TAB>` as a command of its own, when Git's completion is loaded.
if declare -F __git_complete >/dev/null 2>&1; then
	__git_complete git-undo _git_undo
fi
