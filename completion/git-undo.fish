# fish completion for git-undo: `git-undo <TAB>`, and `git undo <TAB>` through
# fish's own git completion (which hands a git-* command's arguments to its
# completions). Commands and options are read from `git undo -h` and
# `git undo <command> -h`, so they are always the installed version's;
# snapshots come from the refs.

# The subcommand on the command line, or nothing.
function __git_undo_command
    set -l tokens (commandline -opc)
    set -e tokens[1]
    while set -q tokens[1]
        switch $tokens[1]
            case -C
                set -e tokens[1]
            case '-*'
            case log
                echo list
                return
            case '*'
                echo $tokens[1]
                return
        end
        set -e tokens[1]
    end
end

function __git_undo_commands
    git undo -h 2>/dev/null | string replace -rf '^    ([a-z][a-z-]*)  +(.*)$' '$1\t$2'
end

function __git_undo_options
    set -l command (__git_undo_command)
    test -n "$command"; or set command undo
    git undo $command -h 2>/dev/null | string replace -rf '^ +(?:-[a-zA-Z], )?(--[a-z][a-z-]*)(?: <[^>]*>)? +(.*)$' '$1\t$2'
    test "$command" = undo; and printf '%s\t%s\n' --version 'print the version' --help 'describe the commands'
end

# This worktree's snapshots, newest first, as number<TAB>summary.
function __git_undo_snapshots
    set -l dirs (git rev-parse --absolute-git-dir --path-format=absolute --git-common-dir 2>/dev/null)
    test (count $dirs) -eq 2; or return
    set -l prefix refs/undo/snapshots/
    test "$dirs[1]" = "$dirs[2]"; or set prefix refs/undo/worktrees/(string replace -r '.*/' '' -- $dirs[1])/snapshots/
    # Exactly ten digits (the format); no control characters reach the terminal.
    git for-each-ref --sort=-refname '--format=%(refname)%09%(contents:subject)' $prefix 2>/dev/null |
        string replace -rf '^'(string escape --style=regex -- $prefix)'([0-9]{10})\t' '$1\t' |
        string replace -r '^0+(?=[0-9])' '' |
        string replace -ra '[\x00-\x08\x0a-\x1f\x7f]' '?'
end

# Whether the word being completed is the snapshot number of restore, revert, show or diff.
function __git_undo_wants_snapshot
    set -l tokens (commandline -opc)
    set -l command (__git_undo_command)
    test "$tokens[-1]" = --against; and test "$command" = show; and return 0
    contains -- "$command" restore revert show diff; or return 1
    string match -q -- '-*' (commandline -ct); and return 1
    # Not when the numbers are there already: one, two for diff.
    set -l most 1
    test "$command" = diff; and set most 2
    set -l given 0
    for t in $tokens[2..-1]
        string match -qr '^[0-9]+$' -- $t; and set given (math $given + 1)
    end
    test $given -lt $most
end

complete -c git-undo -f
function __git_undo_needs_command
    set -l command (__git_undo_command)
    test -z "$command"; and not string match -q -- '-*' (commandline -ct)
end

complete -c git-undo -n __git_undo_needs_command -a '(__git_undo_commands)'
complete -c git-undo -n '__fish_seen_subcommand_from help' -a '(__git_undo_commands)'
complete -c git-undo -n 'string match -q -- "-*" (commandline -ct)' -a '(__git_undo_options)'
complete -c git-undo -n __git_undo_wants_snapshot -k -a '(__git_undo_snapshots)'
