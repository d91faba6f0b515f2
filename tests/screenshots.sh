#!/usr/bin/env bash
# Regenerates screenshots/*.png: each TUI screen run in a tmux pane, captured
# with its colours (capture-pane -e) and drawn by tests/render_screen.py.
#
#   LW=build/layerwise bash tests/screenshots.sh [OUTDIR]
set -eu

LW=${LW:-build/layerwise}
case "$LW" in /*) ;; *) LW="$PWD/$LW" ;; esac
OUT=${1:-screenshots}
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3
COLS=120
ROWS=36
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"

SOCK="lw-shots-$$"
T=(tmux -L "$SOCK" -f /dev/null)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lw-shots.XXXXXX")
cleanup() { "${T[@]}" kill-server >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT

capture() { "${T[@]}" capture-pane -p -t "$S"; }
wait_for() {
    local deadline=$((SECONDS + ${2:-30}))
    while [ "$SECONDS" -lt "$deadline" ]; do
        capture | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    echo "screenshots: timed out waiting for '$1'" >&2
    capture >&2
    return 1
}
keys() { "${T[@]}" send-keys -t "$S" "$@"; }
# start ARGS...: a new session; the previous one goes after it (killing the
# last session first would stop the server under our feet)
N=0
S=""
start() {
    local old="$S"
    N=$((N + 1))
    S="lw$N"
    "${T[@]}" new-session -d -s "$S" -x "$COLS" -y "$ROWS" -c "$WORK" \
        "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=tmux-256color '$LW' $*; sleep 600"
    [ -z "$old" ] || "${T[@]}" kill-session -t "$old" >/dev/null 2>&1 || true
}
# shot NAME WAIT-TEXT: settle, capture with colours, render
shot() {
    wait_for "$2"
    sleep 0.3
    "${T[@]}" capture-pane -p -e -N -t "$S" >"$WORK/$1.ans"
    "$PY" "$HERE/render_screen.py" "$WORK/$1.ans" "$OUT/$1.png" --cols "$COLS" --rows "$ROWS" \
        --title "layerwise — $3"
    echo "wrote $OUT/$1.png"
}

start
wait_for "vgg16 on p100-4x4"
keys b
for _ in $(seq 1 33); do keys Down; done # fc6: each conv and fc6 with its ReLU
shot table "data cfg" "strategy table, VGG-16 on 16 GPUs, data parallelism beside it"

keys w
wait_for "why not? fc6"
wait_for "optimum"
sleep 0.5
shot whynot "why not? fc6" "why not? every config of fc6"

keys Escape i
wait_for "Why c4 and not c8"
wait_for "more below"
shot explain "Why c4 and not c8" "explain: why fc6 splits by channel on one node"

keys Escape C
shot compare "layers differ" "compare: the optimum against data parallelism"

keys Escape 3
for _ in 1 2 3 4 5; do keys Right; done
shot steps "Step 5/" "elimination stepper: step 5, a fold"

keys 4
wait_for "L layer-wise"
shot scale "like Figure 7" "scaling: images/s against GPUs (Figure 7)"

keys 5 Down Down Down Down Down Left
shot cluster "* was 11.5" "cluster what-if: inter-node bandwidth halved"

keys R 6
wait_for "simulated step"
keys ']' ']' ']'
shot timeline "simulated step" "timeline: one step simulated, VGG-16 on 16 GPUs"

keys '?'
shot help "Everywhere" "help: every key"

start -n inception_v3
wait_for "inception_v3 on p100-4x4"
keys 2
keys / m i x e d _ 5 b Enter # the first module, past the stem's convolutions with their BatchNorm and ReLU
shot graph "mixed_5b" "computation graph: Inception-v3"

start -n gpt2 -c dgx-a100 -g 8 --precision bf16 --batch-per-gpu 8
wait_for "gpt2 on dgx-a100"
keys End # the last layer: the tied language-model head, split by vocabulary and features
shot transformer "lm_head" "strategy table, GPT-2 on one DGX A100: data parallel blocks, the head split"

start -n gpt2 -c dgx-a100 -g 8 --precision bf16 --batch-per-gpu 8 --pp 2 --microbatches 8
wait_for "stage 2"
shot pipeline "stage 2" "strategy table, GPT-2 in two pipeline stages on one DGX A100, 8 micro-batches"
keys 6
wait_for "bubble"
shot pipeline-timeline "bubble" "timeline: GPT-2's 1F1B step, two stages, the bubble"
