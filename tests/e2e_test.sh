#!/usr/bin/env bash
# End-to-end tests of the TUI: the real binary in a tmux pane, driven with
# send-keys and read back with capture-pane. Every wait polls the pane until
# the expected text shows (or a timeout), so there are no fixed long sleeps.
# Numbers on screen are checked against the CLI's own JSON for the same
# setting. Uses a private tmux server (-L), killed on exit.
#
#   LW=build/layerwise bash tests/e2e_test.sh
set -u

NAME=e2e
WAIT=15
. "$(dirname "$0")/tmux_lib.sh"

# wait_for_re REGEX [SECONDS]
wait_for_re() {
    local deadline=$((SECONDS + ${2:-15}))
    while [ "$SECONDS" -lt "$deadline" ]; do
        capture | grep -qE -- "$1" && return 0
        sleep 0.1
    done
    return 1
}
expect() { if wait_for "$2" "${3:-15}"; then ok "$1"; else bad "$1 (waiting for: $2)"; fi; }
expect_re() { if wait_for_re "$2" "${3:-15}"; then ok "$1"; else bad "$1 (waiting for /$2/)"; fi; }

# selected_layers: the first word of every table row drawn as the selection
# (ST_SELECTED: black on yellow, \e[43m; reverse video, \e[7m, without
# colours), read from the pane with its attributes. The plain capture cannot
# tell the selected row from the others.
selected_layers() {
    "${T[@]}" capture-pane -e -p -t "$S" 2>/dev/null | python3 -c '
import re, sys
for line in sys.stdin:
    m = re.match(r"((?:\x1b\[[0-9;]*m)+)[ P*]*([^ \x1b]+) ", line)
    if m and re.search(r"\x1b\[(?:[0-9;]*;)?(?:43|7)m", m.group(1)):
        print(m.group(2))'
}
# expect_selected NAME LAYER: LAYER's row, and only it, is drawn selected
expect_selected() {
    local deadline=$((SECONDS + 15)) got=""
    while [ "$SECONDS" -lt "$deadline" ]; do
        got=$(selected_layers | tr '\n' ' ')
        [ "$got" = "$2 " ] && { ok "$1"; return; }
        sleep 0.1
    done
    bad "$1 (selected rows: '$got', wanted '$2')"
}

# start ARGS...: a fresh session running the TUI; when it exits, the pane
# records its status and says EXITED (so we can see the terminal restored).
# (A new session is made before the old one goes: killing the last session
# first would stop the server under our feet.)
N=0
S=""
start() {
    local old="$S"
    N=$((N + 1))
    S="lw$N"
    rm -f "$WORK/status"
    local env="LANG=C.UTF-8 LC_ALL=C.UTF-8 ${E2E_ENV:-}"
    "${T[@]}" new-session -d -s "$S" -x 100 -y 30 -c "$WORK" \
        "env $env '$LW' $*; echo \$? > '$WORK/status'; echo EXITED; sleep 600"
    [ -z "$old" ] || "${T[@]}" kill-session -t "$old" >/dev/null 2>&1
}


# total_ms of the optimum for a setting, as the CLI computes it, "%.2f"
cli_total() {
    "$LW" search "$@" --json | python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["total_ms"])'
}

# ---- opens on VGG-16, p100-4x4, 16 GPUs, with the optimum's totals
start
expect "opens on the strategy table" " 1 Table "
expect "the default setting" "vgg16 on p100-4x4 · 16/16 GPUs"
expect_re "table rows" "conv1_1 +conv2d"
want=$(cli_total -n vgg16 -c p100-4x4 -g 16)
expect "footer total equals the CLI's ($want ms)" "$want ms/step"

# ---- what-if: fewer GPUs changes the totals and says so
keys -- -
expect "status reports the GPU change" "16→8 GPUs:"
expect "context shows 8 GPUs" "8/16 GPUs"
want8=$(cli_total -n vgg16 -c p100-4x4 -g 8)
expect "new total equals the CLI's at 8 GPUs ($want8 ms)" "$want8 ms/step"
[ "$want8" != "$want" ] && ok "the total changed ($want -> $want8)" || bad "the total did not change"

# ---- undo and redo: z puts the 16 GPUs and their total back, Z the 8
keys z
expect "z undoes the GPU change" "undo 1/1: 16→8 GPUs:"
expect "undo: back to 16 GPUs" "16/16 GPUs"
expect "undo: the total it opened with ($want ms)" "$want ms/step"
keys Z
expect "Z redoes it" "redo 1/1: 16→8 GPUs:"
expect "redo: the total at 8 GPUs ($want8 ms)" "$want8 ms/step"
keys Z
expect "nothing more to redo" "nothing to redo"

# ---- why not + pin: fc6 pinned to its second-best config, marked P
keys Home
for _ in $(seq 1 33); do keys Down; done # data .. fc6 is row 34 of VGG-16 (its conv and fc layers each followed by a ReLU)
expect_selected "fc6 selected" fc6
keys w
expect "why-not list for fc6" "why not? fc6"
expect "optimum first" "optimum"
if wait_for_re "computing [0-9]+/" 1; then wait_for "why not? fc6" 30; fi
sleep 0.2
keys Down Enter
expect "status reports the pin" "pin fc6 = "
expect_re "pinned row marked P" "^P fc6 "
expect "context counts the pin" "1 pinned"
keys x
expect "x clears the pin" "unpin fc6:"

# ---- search: / in the table, n and N; in the graph the match is selected
keys / c o n v 4 Enter
expect "search finds the first conv4 layer" "/conv4: layer 1 of 6"
keys n n
expect "n goes to the third" "/conv4: layer 3 of 6"
keys N
expect "N goes back" "/conv4: layer 2 of 6"
keys 2 / F C 7 Enter
expect "the graph: fc7 found, ignoring case" "/FC7: layer 1 of 3"
expect "the graph: fc7 selected" "selected fc7:"
keys / n o p e Enter
expect "no match says so" "/nope: no layer matches"
keys 1

# ---- the elimination stepper
keys 3
expect "stepper opens at the start" "the graph as loaded"
expect "names the first node to fold" "Next: fold of data into conv1_1"
expect "counts the folds" "39 folds, 0 node and 0 edge"
keys Right
expect "step 1" "Step 1/"
expect "step 1 is a fold" "fold (not in the paper)"
expect "step 1 folds data" "data has a single edge, e0"
keys Right Right
expect "step 3" "Step 3/"
keys Left
expect "back to step 2" "Step 2/"
keys End
expect "End: the undo assigns every layer" "Every layer has its config"

# ---- export: strategy JSON, then a diagram when Graphviz export works
keys J
expect "JSON prompt with a default name" "layerwise-vgg16-8gpu-strategy.json"
keys Enter
expect "status says where the JSON went" "wrote strategy JSON: $WORK/layerwise-vgg16-8gpu-strategy.json"
if [ -s "$WORK/layerwise-vgg16-8gpu-strategy.json" ] &&
    grep -q '"layerwise-strategy/1"' "$WORK/layerwise-vgg16-8gpu-strategy.json"; then
    ok "JSON file written"
else
    bad "JSON file written"
fi
if "$LW" export -n vgg16 -c p100-4x4 -g 8 --view graph -o "$WORK/probe.svg" >/dev/null 2>&1; then
    keys 2 e
    expect "export prompt names the graph view" "layerwise-vgg16-8gpu-graph.svg"
    keys Enter
    expect "status says where the SVG went" "wrote graph diagram"
    if [ -s "$WORK/layerwise-vgg16-8gpu-graph.svg" ] && grep -q "<svg" "$WORK/layerwise-vgg16-8gpu-graph.svg"; then
        ok "SVG file written"
    else
        bad "SVG file written"
    fi
else
    echo "skip SVG export: \`layerwise export\` does not work in this build"
fi

# ---- help, resize, the other screens
keys '?'
expect "help lists the keys" "Everywhere"
keys Escape
"${T[@]}" resize-window -t "$S" -x 50 -y 15
expect "a small terminal gets a message" "Terminal too small"
"${T[@]}" resize-window -t "$S" -x 100 -y 30
expect "back to full size" " 1 Table "
keys 4
expect "scaling screen draws the chart" "like Figure 7"
expect_re "scaling rows computed" "L layer-wise +[0-9]"
keys 5
expect "cluster screen" "intra-node GB/s"
keys 6
# the TUI simulates with full overlap (the CLI's default is ddp since issue 34)
sim=$("$LW" simulate -n vgg16 -c p100-4x4 -g 8 --overlap full --json | python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["step_ms"])')
expect "timeline: the simulated step equals the CLI's ($sim ms)" "simulated step $sim ms"
expect_re "timeline: a Gantt row per GPU" "gpu 7 +[FBWXS.]+"
keys ']'
expect_re "timeline: the cursor names a task" "gpu 0: [a-z0-9_]+ forward"
keys / p r o b Enter
expect_re "timeline: / finds the layer's tasks" ": prob [a-z ]+ · "
keys -- +
sim16=$("$LW" simulate -n vgg16 -c p100-4x4 -g 16 --overlap full --json | python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["step_ms"])')
expect "timeline follows a what-if ($sim16 ms at 16 GPUs)" "simulated step $sim16 ms"
# e on the timeline draws the step with cairo (SVG by default, PNG typed)
keys e
expect "timeline export prompt names the drawing" "layerwise-vgg16-16gpu-timeline.svg"
keys Enter
expect "status says where the timeline drawing went" "wrote simulated step drawing: $WORK/layerwise-vgg16-16gpu-timeline.svg"
if head -c 200 "$WORK/layerwise-vgg16-16gpu-timeline.svg" 2>/dev/null | grep -q "<svg"; then
    ok "timeline SVG written"
else
    bad "timeline SVG written"
fi
keys e C-u
keys -l "step.png"
keys Enter
expect "status says where the timeline PNG went" "wrote simulated step drawing: $WORK/step.png"
if [ "$(head -c 4 "$WORK/step.png" 2>/dev/null | tail -c 3)" = PNG ]; then ok "timeline PNG written"; else bad "timeline PNG written"; fi

# ---- open: a bad network file keeps the plan; a shipped network from the picker
printf '{"name": "x",\n "layers": [' > "$WORK/bad.json"
keys O
expect "O lists the shipped networks" "network   alexnet"
expect "and marks the one open" "network   vgg16  (open)"
keys / f i l e Enter
expect "the picker's search finds the path row" "network   a file: type its path"
keys Enter
expect "a path prompt" "Network file:"
keys "$WORK/bad.json" Enter
expect "a bad file's error names the file and place" "$WORK/bad.json:2:"
expect "the plan stays" "vgg16 on p100-4x4 · 16/16 GPUs"
keys / a l e x Enter Enter
expect "alexnet opened" "opened network alexnet"
expect "the context names it" "alexnet on p100-4x4 · 16/16 GPUs"
want_alex=$(cli_total -n alexnet -c p100-4x4 -g 16)
expect "alexnet's total equals the CLI's ($want_alex ms)" "$want_alex ms/step"

# ---- q leaves: the process is gone and the terminal restored
keys q
expect "q exits" "EXITED"
if [ "$(cat "$WORK/status" 2>/dev/null)" = 0 ]; then ok "exit status 0"; else bad "exit status $(cat "$WORK/status" 2>/dev/null)"; fi
if capture | grep -qF " 1 Table "; then bad "screen restored after q"; else ok "screen restored after q"; fi
capture | grep -qF "building the cost tables" && bad "the start-up line is wiped" || ok "the start-up line is wiped"
[ -z "$(tui_pid)" ] && ok "no layerwise process left" || bad "a layerwise process is left"

# ---- Ctrl-C and SIGTERM restore the terminal too
start -n alexnet
expect "alexnet opens" "alexnet on p100-4x4"
keys C-c
expect "Ctrl-C exits" "EXITED"
[ "$(cat "$WORK/status" 2>/dev/null)" = 130 ] && ok "Ctrl-C: status 130" || bad "Ctrl-C: status $(cat "$WORK/status" 2>/dev/null)"
capture | grep -qF " 1 Table " && bad "screen restored after Ctrl-C" || ok "screen restored after Ctrl-C"

start -n alexnet
expect "alexnet opens again" "alexnet on p100-4x4"
pid=$(tui_pid)
if [ -n "$pid" ]; then kill -TERM "$pid"; fi
expect "SIGTERM exits" "EXITED"
[ "$(cat "$WORK/status" 2>/dev/null)" = 143 ] && ok "SIGTERM: status 143" || bad "SIGTERM: status $(cat "$WORK/status" 2>/dev/null)"
capture | grep -qF " 1 Table " && bad "screen restored after SIGTERM" || ok "screen restored after SIGTERM"

# ---- without colour: attributes only
E2E_ENV="NO_COLOR=1" start -n alexnet -g 4
expect "NO_COLOR opens" "alexnet on p100-4x4 · 4/16 GPUs"
sgr=$("${T[@]}" capture-pane -p -e -t "$S")
if printf '%s' "$sgr" | grep -qE $'\e\\[[0-9;]*(3[0-7]|4[0-7]|38;|48;)[0-9;]*m'; then
    bad "NO_COLOR: no colour codes"
else
    ok "NO_COLOR: no colour codes"
fi
printf '%s' "$sgr" | grep -qF $'\e[7m' && ok "NO_COLOR: selection and bars in reverse video" || bad "NO_COLOR: reverse video used"
keys q
expect "NO_COLOR run exits" "EXITED"

# ---- explain (i): VGG-16 on 16 GPUs at 80x24, ASCII, no colour: why fc6
# is split by channel on one node, and a convolution by sample
E2E_ENV="NO_COLOR=1 LAYERWISE_ASCII=1" start -n vgg16 -g 16
"${T[@]}" resize-window -t "$S" -x 80 -y 24
expect "explain run opens" "vgg16 on p100-4x4"
keys Home
for _ in $(seq 1 33); do keys Down; done # fc6
keys i
expect "i explains fc6" "explain fc6: c4 (Eq. 1)"
expect "its weights" "102764544 parameters"
expect "explain: by sample or by channel, the bytes that decide, on the first screen" "Why c4 and not data parallelism's n16: n16 keeps 16"
expect "the chosen row" "* c4 "
keys NPage
keys NPage
fc6_tc=$("$LW" search -n vgg16 -c p100-4x4 -g 16 --json | python3 -c 'import json,sys; print("%.2f" % [l for l in json.load(sys.stdin)["layers"] if l["name"] == "fc6"][0]["compute_ms"])')
expect "explain: each way to split fc6 (fc6's t_c as search computes it)" "- by channel (c): c4: t_c $fc6_tc ms"
expect "the placement: inside one node" "It stays inside one node"
keys End
expect_re "the runner-up's crossover, searched in the background" "inter-node bandwidth (at or|: no value)" 60
capture | grep -q '[^ -~]' && bad "explain at 80x24 in ASCII: only ASCII on screen" || ok "explain at 80x24 in ASCII: only ASCII on screen"
keys Escape
expect "Esc goes back to the table" " moved "
keys Home Down
keys i
expect "i on a convolution" "explain conv1_1: n16 (Eq. 1)"
keys Escape
expect "back to the table" " moved "
keys C
opt16=$(cli_total -n vgg16 -c p100-4x4 -g 16)
expect "C compares the current strategy with data parallelism (the optimum as search computes it)" "A: current $opt16 ms vs B: data"
expect_re "the compare view's totals say Eq. 1" "total +Eq\\. 1"
keys b
expect "b: B is the model-parallel baseline" "B: model"
capture | grep -q '[^ -~]' && bad "compare at 80x24 in ASCII: only ASCII on screen" || ok "compare at 80x24 in ASCII: only ASCII on screen"
keys q
expect "q closes the compare view" " moved "
keys q
expect "explain run exits" "EXITED"

# ---- sweeps (S on the scaling screen): images/s against the inter-node
# bandwidth at the plan's GPU count; G: GPUs needed for X images/s
start -n alexnet -g 8
expect "sweep run opens" "alexnet on p100-4x4"
keys 4
expect_re "scaling rows in (the speed-ups)" "L layer-wise .* [0-9.]+x" 90
keys G C-u 1 e 1 2 Enter
expect "G: no GPU count reaches 1e12 images/s" "layer-wise none"
keys S
expect "S sweeps the inter-node bandwidth" "against the inter-node bandwidth (S)"
expect "the current bandwidth is a value" "11.5 GB/s"
expect_re "the sweep's rows in (the ratios)" "L layer-wise .* [0-9.]+x" 90
keys e
expect "the sweep's export prompt" "layerwise-alexnet-scaling.svg"
keys Escape
keys q
expect "sweep run exits" "EXITED"

# ---- lecture (L): per layer, weights synced by sample against activations
# moved by channel, at 80x24 in ASCII; e draws it for slides
E2E_ENV="NO_COLOR=1 LAYERWISE_ASCII=1" start -n vgg16 -g 16
"${T[@]}" resize-window -t "$S" -x 80 -y 24
expect "lecture run opens" "vgg16 on p100-4x4"
keys Home
for _ in $(seq 1 33); do keys Down; done # fc6
keys L
expect "L opens the lecture view" "lecture: by sample or by channel?"
expect_re "the lecture's fc6 row: its chosen c4 and both bars" "#+ +[0-9.]+ GB fc6 +c4 +[0-9.]+ GB #+"
expect "the foot says fc6's bytes in words" "fc6: as n16 it syncs"
capture | grep -q '[^ -~]' && bad "lecture at 80x24 in ASCII: only ASCII on screen" || ok "lecture at 80x24 in ASCII: only ASCII on screen"
keys e
expect "lecture export prompt names the chart" "layerwise-vgg16-lecture.svg"
keys Enter
expect "status says where the lecture chart went" "wrote lecture chart"
if head -c 200 "$WORK/layerwise-vgg16-lecture.svg" 2>/dev/null | grep -q "<svg"; then
    ok "lecture SVG written"
else
    bad "lecture SVG written"
fi
keys Escape
expect "Esc goes back to the table" " moved "
keys q
expect "lecture run exits" "EXITED"

# ---- bad input never reaches the terminal UI
out=$("$LW" tui -n no-such-net 2>&1 </dev/null)
rc=$?
[ "$rc" = 2 ] && printf '%s' "$out" | grep -q "no-such-net" && ok "bad network: status 2 and a message" ||
    bad "bad network: status $rc, '$out'"

# ---- Inception-v3: a what-if redraws with the new optimum
start -n inception_v3
expect "inception opens" "inception_v3 on p100-4x4 · 16/16 GPUs" 30
t0=$(date +%s.%N)
keys -- -
# (the global batch halves with the GPUs: images/s lead, ms/step follow)
expect_re "inception what-if 16→8" "16→8 GPUs: [0-9]+ → [0-9]+ img/s \\([-+][0-9.]+%\\), [0-9.]+ → [0-9.]+ ms/step" 30
t1=$(date +%s.%N)
echo "     (inception 16→8 GPUs what-if, keypress to new frame: $(python3 -c "print('%.2f' % ($t1 - $t0))") s incl. polling)"
keys q
expect "inception run exits" "EXITED"

# ---- a long rebuild (Inception-v3, 64 GPUs, a batch change: seconds) is
# cancelled by Esc, and the previous optimum stays
start -n inception_v3 -c h100-8x8
expect "64-GPU inception opens" "inception_v3 on h100-8x8 · 64/64 GPUs" 60
before=$(capture | grep -oE "[0-9.]+ ms/step" | head -n 1)
keys '>'
expect "the rebuild says Esc cancels" "(Esc cancels)" 10
keys Escape
expect "Esc cancels the rebuild" "batch 32→64 per GPU: cancelled (kept the previous setting)" 10
after=$(capture | grep -oE "[0-9.]+ ms/step" | head -n 1)
[ -n "$before" ] && [ "$before" = "$after" ] && ok "the previous optimum stays ($after)" ||
    bad "the previous optimum stays ($before, then $after)"
# (the context line gives the batch per GPU and global, or at this width the global one alone)
capture | grep -qE "batch (32/GPU \(2048\)|2048)( |$)" && ok "the previous batch stays" || bad "the previous batch stays"
# explain at 64 GPUs takes seconds (issue 36, bug 4): worked out on a thread,
# the status says so, Esc cancels it and goes back to the table
keys / mixed_7c/branch1x1 Enter
expect "search selects mixed_7c/branch1x1" "/mixed_7c/branch1x1: layer 1 of"
keys i
expect "explain at 64 GPUs says Esc cancels" "explaining mixed_7c/branch1x1" 10
keys Escape
expect "Esc cancels the explanation" "explain mixed_7c/branch1x1: cancelled" 10
keys q
expect "64-GPU inception run exits" "EXITED"

# ---- F refines the optimum under the simulator: progress and Esc on VGG-16,
# then on AlexNet (8 GPUs, seconds of search) the refined strategy, labelled
start -n vgg16 -g 16
expect "vgg16 opens for refine" "vgg16 on p100-4x4 · 16/16 GPUs" 30
expect_re "the totals row sets the simulated step beside Eq. 1" "total \(Eq\. 1\) · simulated [0-9.]+ ms" 30
keys F
expect "F: the search runs, and Esc stops it" "Esc stops" 10
keys Escape
expect "Esc stops the refine, the optimum stays" "refine stopped after" 10
keys q
expect "refine run exits" "EXITED"
start -n alexnet -g 8
expect "alexnet opens for refine" "alexnet on p100-4x4 · 8/16 GPUs" 30
keys F
expect "F ends with the refined strategy and its simulated gain" "refined (simulated):" 60
expect "the table's totals say refined" "total, refined"
expect "the context line says refined" "refined: Eq. 1"
keys 6
expect "the timeline header says refined" "img/s refined" 10
keys F
expect "F goes back to the Eq. 1 optimum" "showing the Eq. 1 optimum"
keys q
expect "refine run exits" "EXITED"

# ---- tui takes the shared what-ifs: a link bandwidth and a pin
start -g 8 --inter-bw 1.5 --pin fc6=n8
expect "tui --pin pins the layer" "8/16 GPUs · 1 pinned"
keys 5
expect "tui --inter-bw reaches the cluster screen" " 1.5 GB/s"
keys q
expect "the run with options exits" "EXITED"
[ "$(cat "$WORK/status" 2>/dev/null)" = 0 ] && ok "exit status 0 after q" || bad "exit status after q"
out=$("$LW" tui --pin nosuchlayer=n4 2>&1 </dev/null)
rc=$?
[ "$rc" = 2 ] && printf '%s' "$out" | grep -q '"nosuchlayer" is not a layer' && ok "tui --pin of no layer: status 2" ||
    bad "tui --pin of no layer: status $rc, '$out'"

# ---- keys typed while a what-if is computed are kept: `R` (reset the
# cluster, a rebuild) and `6` in one go end on the Timeline
start -n vgg16 -g 16
expect "vgg16 opens for type-ahead" "vgg16 on p100-4x4 · 16/16 GPUs" 30
keys 5 Down Down Down Down Down Left
expect "the halved inter-node bandwidth is shown" "* was 11.5" 30
keys R 6
expect "R then 6 at once: the reset is done and the Timeline opens" " simulated step " 30
capture | grep -qF "* was 11.5" && bad "the reset was not done" || ok "the reset was done before the Timeline opened"
keys q
expect "type-ahead run exits" "EXITED"

# ---- issue 32 item 9: GPT-2 XL's 48 blocks group in the table and fold in the graph
start -n gpt2_xl -c dgx-a100 -g 4
expect "gpt2_xl opens" "gpt2_xl on dgx-a100" 60
expect "the table groups the 48 blocks under one header" "block 0-47 x48: 11 layers, t "
keys 2
expect "the graph folds them into one box" "block 0-47 x48"
keys ] ] f
expect "f unfolds the first block into its layers" "block0.attn"
expect "the graph has 16 boxes: block 0's 11 layers, then blocks 1-47" "532 layers in 16 boxes"
keys f
expect "f folds it again" "selected block 0-47 x48 of 11 layers"
capture | grep -qF "block0.attn" && bad "block 0 still unfolded" || ok "block 0's layers gone"
keys q
expect "gpt2_xl run exits" "EXITED"

# ---- a terminal without an alternate screen (vt100, linux): q leaves no frame behind
for term in vt100 linux; do
    E2E_ENV="TERM=$term" start -n lenet5
    expect "TERM=$term opens" " 1 Table "
    keys q
    expect "TERM=$term exits" "EXITED"
    if capture | grep -qF "ms/step"; then bad "TERM=$term: the last frame stays after q"; else ok "TERM=$term: the screen is blank after q"; fi
done

# ---- a pipeline (issue 35): | sets it, the status and the context line say
# so with the CLI's step, the Timeline has a row per stage, z undoes it
start -n "$PWD/tests/fixtures/nets/tiny_gpt.json" -c dgx-a100 -g 8
expect "tiny_gpt opens" "tiny_gpt on dgx-a100 · 8/8 GPUs" 30
keys '|'
expect "| opens the pipeline prompt" "pipeline: stages"
keys C-u "2 4 gpipe" Enter
wantp=$(cli_total -n "$PWD/tests/fixtures/nets/tiny_gpt.json" -c dgx-a100 -g 8 --pp 2 --microbatches 4 --schedule gpipe)
if wait_for_words "pipelined, 2 stages x 4 (gpipe): $wantp ms/step" 30; then ok "the status has the CLI's pipelined step ($wantp ms)"
else bad "the status has the CLI's pipelined step ($wantp ms)"; fi
expect "the context line shows the bubble" "bubble"
keys 6
expect "the Timeline shows the pipelined step" "pipelined step: simulated"
expect_re "a row per stage, labelled" "s2 gpu [0-9]"
expect_re "bars named by micro-batch" "F0f*F1"
keys z
if wait_for_words "one stage (not pipelined)" 30; then ok "z undoes the pipeline"; else bad "z undoes the pipeline"; fi
expect "the Timeline is the step simulator's again" " simulated step " 30
keys q
expect "the pipelined run exits" "EXITED"

# ---- the Scale screen of a pipelined session (issue 35): | there computes
# the rows again (in the background process) with the P series, the 8-GPU
# figure the CLI's scale --pp one, and the footnote says why 1 GPU has none
start -n "$PWD/tests/fixtures/nets/tiny_gpt.json" -c dgx-a100 -g 8
expect "tiny_gpt opens for the Scale screen" "tiny_gpt on dgx-a100 · 8/8 GPUs" 30
keys 4
expect_re "the scaling rows are in" "L layer-wise .* [0-9.]+x" 90
keys '|' C-u "2 4" Enter
wantips=$("$LW" scale -n "$PWD/tests/fixtures/nets/tiny_gpt.json" -c dgx-a100 --gpus 8 --pp 2 --microbatches 4 --json |
    python3 -c 'import json,sys; print("%.1f" % [r for r in json.load(sys.stdin)["rows"] if r["strategy"] == "pipeline"][0]["images_per_s"])')
expect_re "the P row: scale --pp's images/s at 8 GPUs ($wantips), and a speed-up" "P pipeline .* $wantips +[0-9.]+x" 90
expect "the footnote says why 1 GPU has none" "- at 1 GPU: 2 stages do not divide 1 GPU"
keys q
expect "the pipelined Scale run exits" "EXITED"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
