# Shared by the tmux-driven tests (e2e_test.sh, e2e_signals.sh): a private
# tmux server, a scratch folder, pass/fail counting, and polling the pane.
# The caller sets NAME (for messages and temporary names) and WAIT (default
# seconds of wait_for), then sources this file; S names the current session.
LW=${LW:-build/layerwise}
case "$LW" in /*) ;; *) LW="$PWD/$LW" ;; esac
[ -x "$LW" ] || { echo "$NAME: $LW is not built" >&2; exit 1; }
command -v tmux >/dev/null || { echo "$NAME: tmux is not installed (make deps)" >&2; exit 1; }

SOCK="lw-$NAME-$$"
T=(tmux -L "$SOCK" -f /dev/null)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lw-$NAME.XXXXXX")
cleanup() { "${T[@]}" kill-server >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
    fail=$((fail + 1))
    echo "FAIL $1"
    echo "---- pane:"
    capture | sed 's/^/    /'
    echo "----"
}

capture() { "${T[@]}" capture-pane -p -t "$S" 2>/dev/null; }

# wait_for TEXT [SECONDS]: true once TEXT is on the pane
wait_for() {
    local deadline=$((SECONDS + ${2:-$WAIT}))
    while [ "$SECONDS" -lt "$deadline" ]; do
        capture | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    return 1
}
# wait_for_words TEXT [SECONDS]: as wait_for, for a message the TUI may
# wrap over lines (the status line breaks at spaces): the pane's lines are
# joined with one space, leading and repeated blanks squeezed.
wait_for_words() {
    local deadline=$((SECONDS + ${2:-$WAIT}))
    while [ "$SECONDS" -lt "$deadline" ]; do
        capture | tr '\n' ' ' | tr -s ' ' | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    return 1
}
keys() { "${T[@]}" send-keys -t "$S" "$@"; }

# The layerwise process under the pane's shell, if any.
tui_pid() {
    local sh
    sh=$("${T[@]}" display -p -t "$S" '#{pane_pid}' 2>/dev/null) || return 1
    ps -o pid= -o comm= --ppid "$sh" 2>/dev/null | awk '$2 == "layerwise" { print $1 }'
}
