#!/usr/bin/env bash
# Terminal safety of the TUI: after every way out — q, Ctrl-C, SIGINT,
# SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, a key during a rebuild, an open prompt, a 20x10
# terminal, a storm of resizes — the terminal is as it was before:
#   - `stty -g` after equals `stty -g` before (echo, canonical mode, ...),
#   - tmux's view of the pane is back: no alternate screen, cursor visible,
#     keypad and mouse modes as before,
#   - the shell typed into afterwards echoes what is typed,
# and the program ends with the status it should (0, or 128 + signal).
#
# Each case runs the real binary in its own tmux session on a private server
# (-L), under `sh -c 'stty -g > before; layerwise ...; stty -g > after; sh'`.
# Every wait polls capture-pane with a timeout.
#
#   LW=build/layerwise bash tests/e2e_signals.sh
set -u

NAME=signals
WAIT=20
. "$(dirname "$0")/tmux_lib.sh"

# the terminal modes tmux tracks for the pane
modes() {
    "${T[@]}" display -p -t "$S" \
        'alternate=#{alternate_on} cursor=#{cursor_flag} keypad=#{keypad_flag} keypad_cursor=#{keypad_cursor_flag} mouse=#{mouse_any_flag}#{mouse_standard_flag}#{mouse_button_flag}#{mouse_sgr_flag}' 2>/dev/null
}

N=0
S=""
BASE_MODES=""
# start ARGS...: a fresh 80x24 session; the shell records the terminal's
# settings around the program, then stays for us to type into. It catches
# SIGINT and SIGQUIT (the program gets them back at exec) so that Ctrl-C,
# which goes to the whole foreground group, does not end it too.
start() {
    local old="$S"
    N=$((N + 1))
    S="sig$N"
    "${T[@]}" new-session -d -s "$S" -x 80 -y 24 -c "$WORK" \
        "sh -c 'trap : INT QUIT; ${PRE:-} stty -g > before.$N; env LANG=C.UTF-8 LC_ALL=C.UTF-8 \"$LW\" $*; echo \$? > status.$N; stty -g > after.$N; echo EXITED-$N; PS1=\"sh> \" exec sh'"
    [ -z "$old" ] || "${T[@]}" kill-session -t "$old" >/dev/null 2>&1
    if [ -z "$BASE_MODES" ]; then BASE_MODES="alternate=0 cursor=1 keypad=0 keypad_cursor=0 mouse=0000"; fi
}

# after_exit NAME STATUS: the checks once the program should have ended.
after_exit() {
    local name=$1 want=$2
    if ! wait_for "EXITED-$N" 30; then
        bad "$name: the program ends"
        return
    fi
    ok "$name: the program ends"
    local got
    got=$(cat "$WORK/status.$N" 2>/dev/null)
    [ "$got" = "$want" ] && ok "$name: exit status $want" || bad "$name: exit status $got, expected $want"
    if [ -s "$WORK/before.$N" ] && cmp -s "$WORK/before.$N" "$WORK/after.$N"; then
        ok "$name: stty settings restored"
    else
        bad "$name: stty settings restored (before: $(cat "$WORK/before.$N" 2>/dev/null), after: $(cat "$WORK/after.$N" 2>/dev/null))"
    fi
    local m
    m=$(modes)
    [ "$m" = "$BASE_MODES" ] && ok "$name: terminal modes restored ($m)" || bad "$name: terminal modes $m, expected $BASE_MODES"
    # the shell afterwards: what is typed shows (echo on), and it runs
    keys "echo typed-$N-\$((6*7))" Enter
    if wait_for "typed-$N-42" 10 && capture | grep -qF "echo typed-$N-"; then
        ok "$name: the shell echoes and runs what is typed"
    else
        bad "$name: the shell echoes and runs what is typed"
    fi
    [ -z "$(tui_pid)" ] && ok "$name: no layerwise process left" || bad "$name: a layerwise process is left"
}

# ready NAME: the TUI is up
ready() {
    if wait_for " 1 Table " 30 && wait_for "on p100-4x4" 5; then return 0; fi
    bad "$1: the TUI opens"
    return 1
}

signal_tui() {
    local pid
    pid=$(tui_pid)
    [ -n "$pid" ] && kill "-$1" "$pid"
}

# ---- the terminal a fresh pane has, for comparison
N=0
"${T[@]}" new-session -d -s base -x 80 -y 24 "sh -c 'echo BASE; exec sleep 600'"
S=base
wait_for BASE 10 >/dev/null
BASE_MODES=$(modes)
echo "     (a fresh pane: $BASE_MODES)"

# ---- q
start -n lenet5 -g 4
ready q && { keys q; after_exit q 0; }

# ---- Ctrl-C from the keyboard, and each signal sent to the process
start -n lenet5 -g 4
ready ctrl-c && { keys C-c; after_exit "Ctrl-C" 130; }
for sig in INT TERM HUP QUIT; do
    start -n lenet5 -g 4
    case $sig in INT) num=2 ;; TERM) num=15 ;; HUP) num=1 ;; QUIT) num=3 ;; esac
    ready "SIG$sig" && { signal_tui "$sig"; after_exit "SIG$sig" $((128 + num)); }
done

# ---- a fatal error (a crash; out of memory ends by util.h's one policy,
# tests/test_oom.c): the terminal is restored first, then the default
# action gives the usual status
for sig in ABRT SEGV; do
    start -n lenet5 -g 4
    case $sig in ABRT) num=6 ;; SEGV) num=11 ;; esac
    ready "SIG$sig" && { signal_tui "$sig"; after_exit "SIG$sig (fatal)" $((128 + num)); }
done

# ---- a 20x10 terminal: drawn without a crash, usable again when larger
start -n lenet5 -g 4
if ready resize; then
    "${T[@]}" resize-window -t "$S" -x 20 -y 10
    sleep 0.5
    if [ -n "$(tui_pid)" ] && [ -n "$(capture | tr -d ' \n')" ]; then
        ok "20x10: still running, something drawn"
    else
        bad "20x10: still running, something drawn"
    fi
    keys '?'
    sleep 0.2
    keys Escape
    "${T[@]}" resize-window -t "$S" -x 80 -y 24
    if wait_for "on p100-4x4" 10; then ok "back to 80x24: the screen is redrawn"; else bad "back to 80x24: the screen is redrawn"; fi
    keys q
    after_exit "q after 20x10" 0
fi

# ---- a storm of resizes, some tiny, while keys arrive
start -n alexnet -g 4
if ready storm; then
    for i in $(seq 1 15); do
        "${T[@]}" resize-window -t "$S" -x $((10 + i * 7 % 90)) -y $((3 + i * 5 % 40))
        keys Down
        "${T[@]}" resize-window -t "$S" -x 20 -y 10
        keys 2
        "${T[@]}" resize-window -t "$S" -x 1 -y 1
        keys 1
    done
    "${T[@]}" resize-window -t "$S" -x 80 -y 24
    if wait_for "on p100-4x4" 10 && [ -n "$(tui_pid)" ]; then ok "resize storm: still running and redrawn"; else bad "resize storm: still running and redrawn"; fi
    keys C-c
    after_exit "Ctrl-C after a resize storm" 130
fi

# ---- Ctrl-C with the export prompt open (text entry)
start -n lenet5 -g 4
if ready prompt; then
    keys J
    if wait_for ".json" 10; then ok "the JSON prompt opens"; else bad "the JSON prompt opens"; fi
    keys C-c
    after_exit "Ctrl-C in a prompt" 130
    ls "$WORK"/*.json >/dev/null 2>&1 && bad "prompt: nothing written" || ok "prompt: nothing written"
fi

# ---- past a file-size limit (`ulimit -f`, SIGXFSZ): the export fails with
# a message naming the reason, no temporary is left, and the TUI goes on
PRE='ulimit -f 1;'
start -n lenet5 -g 4
PRE=''
if ready ulimit; then
    keys J
    wait_for ".json" 10 >/dev/null
    keys Enter
    if wait_for_words "File too large (the file-size limit, ulimit -f)" 10; then ok "ulimit -f: the export's error shows"; else bad "ulimit -f: the export's error shows"; fi
    keys q
    after_exit "q after an export past ulimit -f" 0
    left=$(cd "$WORK" && ls | grep -E '\.json' | tr '\n' ' ')
    [ -z "$left" ] && ok "ulimit -f: no file and no temporary left" || bad "ulimit -f: no file and no temporary left ($left)"
fi

# ---- SIGTERM and Ctrl-C while the first build runs (before the screen is
# taken; Inception-v3 on 64 GPUs takes seconds): the "building" line is wiped
start -n inception_v3 -c h100-8x8
if wait_for "building the cost tables" 10; then
    signal_tui TERM
    after_exit "SIGTERM while loading" 143
    capture | grep -qF "building the cost tables" && bad "SIGTERM while loading: the line is wiped" ||
        ok "SIGTERM while loading: the line is wiped"
else
    bad "loading: the building line shows"
fi
start -n inception_v3 -c h100-8x8
if wait_for "building the cost tables" 10; then
    keys C-c
    after_exit "Ctrl-C while loading" 130
    capture | grep -qF "building the cost tables" && bad "Ctrl-C while loading: the line is wiped" ||
        ok "Ctrl-C while loading: the line is wiped"
else
    bad "loading: the building line shows"
fi

# ---- Ctrl-C and SIGTERM during a rebuild (a what-if on Inception-v3)
start -n inception_v3
if ready rebuild; then
    keys -- -
    keys C-c
    after_exit "Ctrl-C during a rebuild" 130
fi
start -n inception_v3
if ready rebuild-term; then
    keys -- -
    signal_tui TERM
    after_exit "SIGTERM during a rebuild" 143
fi

# ---- Ctrl-C just after a what-if, several times: a signal that
# lands between the loop's check of its flag and the blocking read of the
# next key must still end the program (not wait for another key)
lost=0
for k in 1 2 3 4 5 6; do
    start -n inception_v3
    ready "redraw-$k" || continue
    keys -- -
    keys C-c
    # (the session is left to the next start, which kills it after making
    # its own: killing the only session here stops the server, and the next
    # new-session can race its exit: "server exited unexpectedly")
    if wait_for "EXITED-$N" 3; then
        :
    else
        lost=$((lost + 1))
        keys Down # the key that wakes it
        wait_for "EXITED-$N" 10 >/dev/null
    fi
done
[ "$lost" = 0 ] && ok "Ctrl-C right after a what-if ends the program (6 tries)" ||
    bad "Ctrl-C right after a what-if ends the program: $lost of 6 tries waited for another key"

# ---- nothing the TUI reads or writes holds it (issue 31, finding 6)
# /dev/stdin typed in the open picker: it read the terminal (q, Esc and every
# key went into the "file"; Ctrl-C and SIGTERM were not seen). Refused now,
# said so, and the TUI answers keys.
start -n lenet5 -g 4
if ready "open /dev/stdin"; then
    keys O
    wait_for "a file: type its path" 10 >/dev/null
    # the row after the shipped networks: "network  a file: type its path..."
    keys Home
    for _ in $("$LW" list | sed -n 's/^networks: //p'); do keys Down; done
    keys Enter
    keys C-u
    keys -l "/dev/stdin"
    keys Enter
    if wait_for "regular files only" 10; then ok "open /dev/stdin: refused, said so"; else bad "open /dev/stdin: refused, said so"; fi
    keys Escape
    keys C-c
    after_exit "Ctrl-C after open /dev/stdin" 130
fi
# SIGTERM while an export is held in write() by a FIFO whose reader does not
# read (VGG-16's strategy SVG, 77 KB, is more than the pipe holds): the
# watchdog ends it within seconds, the terminal restored, status 143
FIFO="$WORK/slow.svg"
mkfifo "$FIFO"
sleep 300 3<>"$FIFO" &
holder=$!
start -n vgg16 -g 4
if ready "blocked export"; then
    keys e
    wait_for ".svg" 10 >/dev/null
    keys C-u
    keys -l "$FIFO"
    keys Enter
    sleep 1
    signal_tui TERM
    after_exit "SIGTERM during an export held by a FIFO" 143
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
