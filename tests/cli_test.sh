#!/usr/bin/env bash
# CLI tests against the real binary: JSON documents, their agreement with
# each other and with the cost tables, exit statuses and messages for bad
# input, and no output file on failure.
#
#   LW=build/layerwise bash tests/cli_test.sh      (what `make cli-tests` runs)
#
# Prints "ok - ..." or "FAIL - ..." per check and a closing line
# "N passed, M failed"; exits non-zero if any check failed.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LW=${LW:-build/layerwise}
case $LW in /*) ;; *) LW=$ROOT/$LW ;; esac
cd "$ROOT" || exit 1
export LAYERWISE_DATA="${LAYERWISE_DATA:-$ROOT/data}"

NAME=cli . "$ROOT/tests/sh_lib.sh"

if [ ! -x "$LW" ]; then
    notok "the program $LW exists (build it with make)"
    finish
fi
if ! command -v python3 >/dev/null; then
    notok "python3 is installed (make deps)"
    finish
fi

# run ARGS...: runs the program; sets RC, OUT (stdout file), ERR (stderr file)
OUT=$TMP/stdout
ERR=$TMP/stderr
run() {
    "$LW" "$@" >"$OUT" 2>"$ERR"
    RC=$?
}

# py DESCRIPTION SCRIPT ARGS...: a python check; it fails by raising/asserting
py() {
    local desc=$1 script=$2
    shift 2
    local msg
    if msg=$(python3 -c "$script" "$@" 2>&1); then ok "$desc"; else notok "$desc" "$msg"; fi
}

# expect_ok DESCRIPTION ARGS...: exit status 0 and nothing on stderr but
# "wrote FILE" lines
expect_ok() {
    local desc=$1
    shift
    run "$@"
    if [ "$RC" -eq 0 ]; then ok "$desc"; else notok "$desc (exit $RC)" "$(cat "$ERR")"; fi
}

# expect_fail DESCRIPTION STATUS NEEDLE... -- ARGS...: the program exits with
# STATUS, prints nothing on stdout, and every NEEDLE appears on stderr
expect_fail() {
    local desc=$1 status=$2
    shift 2
    local needles=()
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
        needles+=("$1")
        shift
    done
    shift
    run "$@"
    local why=""
    [ "$RC" -eq "$status" ] || why="exit $RC, expected $status"
    [ -s "$OUT" ] && why="$why; wrote to stdout"
    [ -s "$ERR" ] || why="$why; no message on stderr"
    local n
    for n in "${needles[@]}"; do
        grep -qF -- "$n" "$ERR" || why="$why; stderr lacks \"$n\""
    done
    if [ -z "$why" ]; then ok "$desc"; else notok "$desc: ${why#; }" "$(cat "$ERR")"; fi
}

F=tests/fixtures
B=$F/bad

# ------------------------------------------------------------------ help
run --help
if [ "$RC" -eq 0 ]; then ok "--help exits 0"; else notok "--help exits 0 (exit $RC)"; fi
head -1 "$OUT" | grep -q "CNNs and transformers" && ok "--help's first line says it plans transformers too, as the README does" ||
    notok "--help's first line says it plans transformers too, as the README does" "$(head -1 "$OUT")"
missing=""
for c in tui search eval simulate compare diff scale costs export profile list; do
    grep -qE "layerwise +$c( |$)" "$OUT" || missing="$missing $c"
done
if [ -z "$missing" ]; then ok "--help lists every command"; else notok "--help lists every command: missing$missing"; fi
run help
if [ "$RC" -eq 0 ] && grep -q "search" "$OUT"; then ok "help command prints the usage"; else notok "help command prints the usage"; fi

expect_ok "list runs" list
if grep -q "lenet5" "$OUT" && grep -q "p100-4x4" "$OUT"; then ok "list names the shipped networks and clusters"; else
    notok "list names the shipped networks and clusters" "$(cat "$OUT")"
fi

# ------------------------------------------------------------- search --json
expect_ok "search --json runs" search -n lenet5 -c p100-4x4 -g 4 --json
cp "$OUT" "$TMP/search.json"
py "search --json prints one JSON document with format layerwise-strategy/1 and the design's fields" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "layerwise-strategy/1", d["format"]
for k in ["network", "cluster", "gpus", "batch", "algorithm", "nodes_left", "layers", "total_ms", "compute_ms",
          "sync_ms", "transfer_ms", "images_per_s", "bytes_per_step", "peak_memory_bytes"]:
    assert k in d, "missing " + k
assert d["network"] == "lenet5" and d["cluster"] == "p100-4x4" and d["gpus"] == 4 and d["batch"] == 128, d
assert d["algorithm"] == "elimination", d["algorithm"]
names = [l["name"] for l in d["layers"]]
assert names[0] == "data", "the input is listed first: %s" % names[:3]
assert names == ["data", "conv1", "pool1", "conv2", "pool2", "flat", "fc1", "fc2", "fc3", "prob"], names
for l in d["layers"]:
    for k in ["name", "config", "devices", "compute_ms", "sync_ms", "transfer_ms"]:
        assert k in l, "layer %s lacks %s" % (l.get("name"), k)
    tasks = 1
    for v in l["config"].values(): tasks *= v
    assert l["devices"] == list(range(tasks)), (l["name"], l["devices"])
    assert set(l["config"]) <= set("nchw"), l["config"]
assert set(d["layers"][-1]["config"]) == {"n", "c"}, "softmax names n and c only"
assert set(d["layers"][1]["config"]) == set("nchw"), "conv names n, c, h, w"
tot = d["compute_ms"] + d["sync_ms"] + d["transfer_ms"]
assert abs(d["total_ms"] - tot) <= 1e-9 * tot, (d["total_ms"], tot)
s = sum(l["compute_ms"] + l["sync_ms"] + l["transfer_ms"] for l in d["layers"])
assert abs(d["total_ms"] - s) <= 1e-9 * s, (d["total_ms"], s)
assert abs(d["images_per_s"] - d["batch"] / d["total_ms"] * 1e3) <= 0.06, d["images_per_s"]
' "$TMP/search.json"

# ---------------------------------------------------------------- search -o
rm -f "$TMP/s.json"
expect_ok "search -o FILE runs" search -n lenet5 -c p100-4x4 -g 4 -o "$TMP/s.json"
py "search -o FILE writes the same document as --json" '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a == b, "documents differ"
' "$TMP/search.json" "$TMP/s.json"
if ls "$TMP"/s.json.tmp.* >/dev/null 2>&1; then notok "search -o leaves no temporary file"; else ok "search -o leaves no temporary file"; fi
rm -f "$TMP/s2.json"
expect_ok "search --json -o FILE runs" search -n lenet5 -c p100-4x4 -g 4 --json -o "$TMP/s2.json"
if [ ! -s "$OUT" ] && cmp -s "$TMP/s.json" "$TMP/s2.json"; then ok "search --json -o FILE writes the file, not stdout"; else
    notok "search --json -o FILE writes the file, not stdout"
fi

# ----------------------------------------------------------------- eval -s
expect_ok "eval -s FILE --json runs" eval -n lenet5 -c p100-4x4 -g 4 -s "$TMP/s.json" --json
cp "$OUT" "$TMP/eval.json"
py "eval of the search's file gives the same total_ms and configs" '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert b["format"] == "layerwise-strategy/1"
assert abs(a["total_ms"] - b["total_ms"]) <= 1e-9 * a["total_ms"], (a["total_ms"], b["total_ms"])
assert [l["config"] for l in a["layers"]] == [l["config"] for l in b["layers"]]
assert [l["name"] for l in a["layers"]] == [l["name"] for l in b["layers"]]
for x, y in zip(a["layers"], b["layers"]):
    for k in ["compute_ms", "sync_ms", "transfer_ms"]:
        assert abs(x[k] - y[k]) <= 1e-9 * max(1, x[k]), (x["name"], k)
' "$TMP/search.json" "$TMP/eval.json"
expect_ok "eval -s FILE (text) runs" eval -n lenet5 -c p100-4x4 -g 4 -s "$TMP/s.json"
if grep -q "the optimum for this setting" "$OUT" && grep -q "(1.00x)" "$OUT"; then ok "eval text reports the optimum, 1.00x for the optimum itself"; else
    notok "eval text reports the optimum, 1.00x for the optimum itself" "$(tail -n 3 "$OUT")"
fi
expect_ok "eval of a hand-written strategy file" eval -n lenet5 -c p100-4x4 -g 4 -s $F/strategies/lenet5_mixed.json --json
cp "$OUT" "$TMP/mixed.json"
py "a hand-written strategy evaluates to its own configs, no better than the optimum" '
import json, sys
a = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
assert m["algorithm"] == "file", m["algorithm"]
cfg = {l["name"]: l["config"] for l in m["layers"]}
assert cfg["pool1"] == {"n": 2, "c": 1, "h": 2, "w": 1}, cfg["pool1"]
assert cfg["fc3"] == {"n": 2, "c": 2}, cfg["fc3"]
assert m["total_ms"] >= a["total_ms"] * (1 - 1e-12), (m["total_ms"], a["total_ms"])
' "$TMP/search.json" "$TMP/mixed.json"

for b in data model owt; do
    expect_ok "eval -s $b --json runs" eval -n alexnet -c p100-4x4 -g 4 -s $b --json
    cp "$OUT" "$TMP/eval_$b.json"
    py "eval -s $b: a $b-parallel document" '
import json, sys
d = json.load(open(sys.argv[1])); b = sys.argv[2]
assert d["format"] == "layerwise-strategy/1" and d["algorithm"] == b, d["algorithm"]
cfg = {l["name"]: l["config"] for l in d["layers"]}
if b == "data": assert cfg["conv1"]["n"] == 4 and cfg["fc6"] == {"n": 4, "c": 1}, cfg
if b == "model": assert cfg["conv1"]["c"] == 4 and cfg["fc6"] == {"n": 1, "c": 4}, cfg
if b == "owt": assert cfg["conv1"]["n"] == 4 and cfg["fc6"] == {"n": 1, "c": 4}, cfg
' "$TMP/eval_$b.json" $b
done
expect_ok "search alexnet -g 4 --json runs" search -n alexnet -c p100-4x4 -g 4 --json
cp "$OUT" "$TMP/alex.json"
py "no baseline beats the search on alexnet" '
import json, sys
opt = json.load(open(sys.argv[1]))["total_ms"]
for f in sys.argv[2:]:
    t = json.load(open(f))["total_ms"]
    assert t >= opt * (1 - 1e-12), (f, t, opt)
' "$TMP/alex.json" "$TMP/eval_data.json" "$TMP/eval_model.json" "$TMP/eval_owt.json"

# -------------------------------------------- eval at 256 and 1024 GPUs
# Evaluating a given strategy computes only the entries it uses (no tables,
# no search), so every shipped network at 256 GPUs runs here: on uniform
# links (the closed-form t_x) and on per-pair links (piece by piece).
C256=$F/clusters/h100-32x8.json
P256=$F/clusters/dgx1-32x8.json
for cl in "$C256" "$P256"; do
    for n in $("$LW" list | sed -n 's/^networks: //p'); do
        for b in data model owt; do
            expect_ok "eval $n -s $b at 256 GPUs on $(basename "$cl" .json)" eval -n "$n" -c "$cl" -s $b --json
            py "eval $n -s $b at 256 GPUs: a document whose total is the sum of its layers" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "layerwise-strategy/1" and d["gpus"] == 256 and d["algorithm"] == sys.argv[2]
s = sum(l["compute_ms"] + l["sync_ms"] + l["transfer_ms"] for l in d["layers"])
assert abs(s - d["total_ms"]) <= 1e-9 * d["total_ms"], (s, d["total_ms"])
assert d["total_ms"] > 0 and d["bytes_per_step"] >= 0
if sys.argv[2] == "data": assert max(len(l["devices"]) for l in d["layers"]) == 256
' "$OUT" $b
        done
    done
done
# simulate of a given strategy needs no tables either; its Eq. 1 total is eval's
for n in $("$LW" list | sed -n 's/^networks: //p'); do
    expect_ok "eval $n -s data at 256 GPUs, for simulate" eval -n "$n" -c "$C256" -s data --json
    cp "$OUT" "$TMP/eval256.json"
    expect_ok "simulate $n -s data at 256 GPUs" simulate -n "$n" -c "$C256" -s data --json
    py "simulate $n at 256 GPUs: its eq1_ms is eval's total, gpus_used 256" '
import json, sys
s = json.load(open(sys.argv[1])); e = json.load(open(sys.argv[2]))
assert s["format"] == "layerwise-sim/1" and s["gpus"] == 256 and s["gpus_used"] == e["gpus_used"] == 256
assert abs(s["eq1_ms"] - e["total_ms"]) <= 1e-9 * e["total_ms"], (s["eq1_ms"], e["total_ms"])
assert s["step_ms"] > 0 and s["strategy"] == "data", (s["step_ms"], s["strategy"])
' "$OUT" "$TMP/eval256.json"
done
expect_ok "simulate vgg16 -s owt at 256 GPUs on per-pair links" simulate -n vgg16 -c "$P256" -s owt --json
expect_ok "eval text at 256 GPUs runs" eval -n resnet50 -c "$C256" -s data
if grep -q "the optimum for this setting: not searched at 256 GPUs" "$OUT"; then ok "eval text at 256 GPUs says the optimum was not searched"; else
    notok "eval text at 256 GPUs says the optimum was not searched" "$(tail -n 3 "$OUT")"
fi
expect_ok "eval text at 1024 GPUs runs" eval -n inception_v3 -c $F/clusters/h100-128x8.json -s owt
if grep -q "the optimum for this setting: not searched at 1024 GPUs (over 64; layerwise search finds it, up to 1024 GPUs where its tables fit this machine)" "$OUT"; then
    ok "eval text at 1024 GPUs says where the search goes"
else
    notok "eval text at 1024 GPUs says where the search goes" "$(tail -n 3 "$OUT")"
fi
expect_ok "eval at 1024 GPUs runs" eval -n inception_v3 -c $F/clusters/h100-128x8.json -s owt --json
py "eval at 1024 GPUs: a document for 1024 GPUs" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["gpus"] == 1024 and d["algorithm"] == "owt", (d["gpus"], d["algorithm"])
' "$OUT"
# past 256 GPUs the search runs where its tables fit the machine (up to
# 1024: at 512 in the costs section, against its tables), and is refused up
# front, with their size, where they do not
rm -f "$TMP/s1024.json"
expect_fail "search at 1024 GPUs of Inception-v3 is refused up front, with the tables' size" 1 \
    "inception_v3 on 1024 GPUs" "entries" "MB" "choose fewer GPUs" -- \
    search -n inception_v3 -c $F/clusters/h100-128x8.json -g 1024 -o "$TMP/s1024.json"
if [ -e "$TMP/s1024.json" ]; then notok "the refused search wrote no file" "$TMP/s1024.json"; else ok "the refused search wrote no file"; fi
# GPUs really used: degrees are powers of two, so 12 GPUs run a strategy on 8
expect_ok "eval -s data on 12 GPUs runs" eval -n lenet5 -c p100-4x4 -g 12 -s data --json
py "eval on 12 GPUs says the strategy uses 8 (gpus_used)" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["gpus"] == 12 and d["gpus_used"] == 8 == max(len(l["devices"]) for l in d["layers"]), d["gpus_used"]
' "$OUT"
expect_ok "eval -s data on 12 GPUs (text)" eval -n lenet5 -c p100-4x4 -g 12 -s data
if head -n 1 "$OUT" | grep -q "12 GPUs (this strategy uses 8)"; then ok "the eval header says how many GPUs the strategy uses"; else
    notok "the eval header says how many GPUs the strategy uses" "$(head -n 1 "$OUT")"
fi
expect_ok "search lenet5 on 16 GPUs --json" search -n lenet5 -c p100-4x4 -g 16 --json
py "search: gpus_used is the most devices of any layer" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["gpus"] == 16 and d["gpus_used"] == max(len(l["devices"]) for l in d["layers"]) < 16, d["gpus_used"]
' "$OUT"
expect_ok "compare on 12 GPUs --json" compare -n lenet5 -c p100-4x4 -g 12 --json
py "compare rows carry gpus_used" '
import json, sys
d = json.load(open(sys.argv[1]))
assert all(r["gpus"] == 12 and 1 <= r["gpus_used"] <= 8 for r in d["rows"]), d["rows"]
assert [r["gpus_used"] for r in d["rows"] if r["strategy"] == "data"] == [8]
' "$OUT"
expect_ok "compare on 12 GPUs (text)" compare -n lenet5 -c p100-4x4 -g 12
if grep -q "GPUs really used: data at 12 GPUs uses 8" "$OUT"; then ok "compare text says which rows use fewer GPUs"; else
    notok "compare text says which rows use fewer GPUs" "$(tail -n 3 "$OUT")"
fi
expect_ok "scale up to 1024 GPUs runs" scale -n lenet5 -c $F/clusters/h100-128x8.json --gpus 4,512,1024 --json
py "scale above 256 GPUs: the baselines alone, evaluated without tables" '
import json, sys
d = json.load(open(sys.argv[1]))
rows = {}
for r in d["rows"]: rows.setdefault(r["gpus"], []).append(r["strategy"])
assert rows[4] == ["data", "model", "owt", "layer-wise"], rows
assert rows[512] == ["data", "model", "owt"] and rows[1024] == ["data", "model", "owt"], rows
' "$OUT"
expect_ok "scale up to 1024 GPUs (text)" scale -n lenet5 -c $F/clusters/h100-128x8.json --gpus 4,1024
if grep -q "layer-wise: not searched above 256 GPUs (a search there takes tens of seconds or more: layerwise search finds it, up to 1024 GPUs" "$OUT"; then ok "scale text says layer-wise is not searched above 256"; else
    notok "scale text says layer-wise is not searched above 256" "$(tail -n 3 "$OUT")"
fi
expect_ok "export of a given strategy at 1024 GPUs (no search, no tables)" \
    export -n resnet50 -c $F/clusters/h100-128x8.json --view graph -s data -o "$TMP/g1024.dot"
py "its graph: every edge, drawn for the given strategy at 1024 GPUs" '
import sys
t = open(sys.argv[1]).read()
assert "1024 GPUs" in t and "given strategy:" in t and "optimal strategy" not in t
assert t.count(" -> ") > 100, t.count(" -> ")
' "$TMP/g1024.dot"
expect_ok "search writes the optimum to a file" search -n inception_v3 -c h100-8x8 -g 16 -o "$TMP/opt16.json"
expect_ok "export of the optimum" export -n inception_v3 -c h100-8x8 -g 16 --view graph -o "$TMP/g_opt.dot"
expect_ok "export of the same strategy given (-s FILE)" \
    export -n inception_v3 -c h100-8x8 -g 16 --view graph -s "$TMP/opt16.json" -o "$TMP/g_given.dot"
py "the given optimum draws the same graph, its header saying given (entries computed, not read from tables)" '
import sys
a = sorted(open(sys.argv[1]).read().replace("optimal strategy:", "given strategy:").splitlines())
b = sorted(open(sys.argv[2]).read().splitlines())
assert a == b, [x for x in a if x not in b][:3]
' "$TMP/g_opt.dot" "$TMP/g_given.dot"
expect_fail "export -s with the reduced view is refused" 2 "--view reduced draws the search" -- \
    export -n lenet5 -c p100-4x4 --view reduced -s data -o "$TMP/r.dot"
expect_fail "export -s with --step is refused" 2 "takes no --pin, --step or --no-fold" -- \
    export -n lenet5 -c p100-4x4 --view graph -s data --step 1 -o "$TMP/r.dot"
expect_fail "export -s with --no-fold is refused" 2 "takes no --pin, --step or --no-fold" -- \
    export -n lenet5 -c p100-4x4 --view strategy -s owt --no-fold -o "$TMP/r.dot"
[ -e "$TMP/r.dot" ] && notok "a refused export left no file" "$TMP/r.dot" || ok "a refused export left no file"
expect_ok "compare at 1024 GPUs runs" compare -n lenet5 -c $F/clusters/h100-128x8.json --json
py "compare above 256 GPUs: the baselines alone, as scale" '
import json, sys
d = json.load(open(sys.argv[1]))
assert [(r["gpus"], r["strategy"]) for r in d["rows"]] == [(1024, "data"), (1024, "model"), (1024, "owt")], d["rows"]
' "$OUT"
expect_ok "compare at 1024 GPUs (text)" compare -n lenet5 -c $F/clusters/h100-128x8.json
if grep -q "layer-wise: not searched above 256 GPUs" "$OUT"; then ok "compare text says layer-wise is not searched above 256"; else
    notok "compare text says layer-wise is not searched above 256" "$(tail -n 3 "$OUT")"
fi
# (Inception-v3: at 64 GPUs it computes 2.5 million entries, over the 2^20 below which a build is never refused;
# ResNet-50's symmetric tables leave it under that)
LAYERWISE_MAX_BUILD_S=0 expect_fail "a search over the time limit is refused up front with its size, time and memory" 1 \
    "inception_v3 on 64 GPUs is too large for this machine" "entries" "would take about" "MB with the search" -- \
    search -n inception_v3 -c h100-8x8 -g 64 --json

# ---------------------------------------------------------- compare, scale
expect_ok "compare --json runs" compare -n alexnet -c p100-4x4 -g 4 --json
cp "$OUT" "$TMP/compare.json"
py "compare --json has 4 rows (data, model, owt, layer-wise) that agree with search and eval" '
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert len(rows) == 4, len(rows)
assert sorted(r["strategy"] for r in rows) == ["data", "layer-wise", "model", "owt"], [r["strategy"] for r in rows]
by = {r["strategy"]: r for r in rows}
for r in rows:
    assert r["gpus"] == 4
    for k in ["total_ms", "compute_ms", "sync_ms", "transfer_ms", "images_per_s", "bytes_per_step"]:
        assert k in r, k
opt = json.load(open(sys.argv[2]))["total_ms"]
assert abs(by["layer-wise"]["total_ms"] - opt) <= 1e-9 * opt
for b in ["data", "model", "owt"]:
    t = json.load(open(sys.argv[3].replace("XX", b)))["total_ms"]
    assert abs(by[b]["total_ms"] - t) <= 1e-9 * t, (b, by[b]["total_ms"], t)
    assert by[b]["total_ms"] >= opt * (1 - 1e-12)
' "$TMP/compare.json" "$TMP/alex.json" "$TMP/eval_XX.json"

expect_ok "scale --gpus 1,2,4 --json runs" scale -n lenet5 -c p100-4x4 --gpus 1,2,4 --json
cp "$OUT" "$TMP/scale.json"
expect_ok "search lenet5 -g 2 --json runs" search -n lenet5 -c p100-4x4 -g 2 --json
cp "$OUT" "$TMP/search2.json"
py "scale --gpus 1,2,4 --json has 12 rows; one GPU is the same for all; layer-wise is the search optimum" '
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert len(rows) == 12, len(rows)
assert sorted((r["gpus"], r["strategy"]) for r in rows) == sorted(
    (g, s) for g in (1, 2, 4) for s in ("data", "model", "owt", "layer-wise")), "wrong rows"
one = [r["total_ms"] for r in rows if r["gpus"] == 1]
assert max(one) - min(one) <= 1e-9 * max(one), one
for g, f in ((2, sys.argv[2]), (4, sys.argv[3])):
    lw = [r for r in rows if r["gpus"] == g and r["strategy"] == "layer-wise"][0]
    opt = json.load(open(f))["total_ms"]
    assert abs(lw["total_ms"] - opt) <= 1e-9 * opt, (g, lw["total_ms"], opt)
    for r in rows:
        if r["gpus"] == g: assert r["total_ms"] >= opt * (1 - 1e-12), r
' "$TMP/scale.json" "$TMP/search2.json" "$TMP/search.json"

# ------------------------------------- what a step achieves (issue 32 item 6)
# every throughput figure says which model made it; model FLOPs are the same
# for every strategy of a setting; TFLOPS per GPU = FLOPs / step / GPUs used;
# MFU = that over the precision's dense peak (the P100's fp32 10.6 TFLOPS)
THROUGHPUT_CHECK='
import json, sys
def check(r, step_key, est):
    assert r["estimator"] == est, (r.get("estimator"), est)
    tf = r["model_flops_per_step"] / (r[step_key] * 1e-3) / r["gpus_used"] / 1e12
    assert abs(r["tflops_per_gpu"] - tf) <= 1e-9 * tf, (r["tflops_per_gpu"], tf)
    assert abs(r["mfu"] - tf / 10.6) <= 1e-9 * tf, (r["mfu"], tf / 10.6)
'
py "compare and scale rows carry estimator eq1, model FLOPs, TFLOPS per GPU, MFU and their simulated twins" "$THROUGHPUT_CHECK"'
for f in sys.argv[1:]:
    for r in json.load(open(f))["rows"]:
        check(r, "total_ms", "eq1")
        assert r["sim_estimator"] == "simulated"
        if r["sim_step_ms"] is not None:
            k = r["total_ms"] / r["sim_step_ms"]
            assert abs(r["sim_mfu"] - r["mfu"] * k) <= 1e-9 * r["mfu"] * k, r
            assert abs(r["sim_tflops_per_gpu"] - r["tflops_per_gpu"] * k) <= 1e-9 * r["tflops_per_gpu"] * k, r
        else:
            assert r["sim_mfu"] is None and r["sim_tflops_per_gpu"] is None
    flops = {(r["gpus"], r["model_flops_per_step"]) for r in json.load(open(f))["rows"]}
    assert len(flops) == len({g for g, _ in flops}), ("one figure per GPU count", flops)
' "$TMP/compare.json" "$TMP/scale.json"
run simulate -n alexnet -c p100-4x4 -g 4 -s owt --json
cp "$OUT" "$TMP/sim_owt.json"
run eval -n alexnet -c p100-4x4 -g 4 -s owt --json
cp "$OUT" "$TMP/eval_owt_t.json"
run diff -n alexnet -c p100-4x4 -g 4 data owt --json
cp "$OUT" "$TMP/diff_t.json"
run fit -n lenet5 -c p100-4x4 -g 2 --memory-limit 1.5GiB --json
cp "$OUT" "$TMP/fit_t.json"
py "strategy, sim, diff and fit documents carry estimator and MFU; sim is simulated, the rest eq1" "$THROUGHPUT_CHECK"'
e, s, d, f = (json.load(open(x)) for x in sys.argv[1:5])
check(e, "total_ms", "eq1")
check(s, "step_ms", "simulated")
assert s["model_flops_per_step"] == e["model_flops_per_step"]
for side in (d["a"], d["b"]):
    check(side, "total_ms", "eq1")
assert f["batch_per_gpu"] is not None and f["estimator"] == "eq1" and 0 < f["mfu"] < 1, f
' "$TMP/eval_owt_t.json" "$TMP/sim_owt.json" "$TMP/diff_t.json" "$TMP/fit_t.json"
run compare -n alexnet -c p100-4x4 -g 4
if grep -q "MFU" "$OUT" && grep -Eq "owt .* [0-9.]+%" "$OUT"; then ok "compare text shows MFU per row"; else
    notok "compare text shows MFU per row" "$(head -n 8 "$OUT")"; fi
run eval -n alexnet -c p100-4x4 -g 4 -s data
if grep -q "images/s, MFU [0-9.]*%" "$OUT"; then ok "eval text shows MFU beside the throughput"; else
    notok "eval text shows MFU beside the throughput" "$(grep throughput "$OUT")"; fi
run simulate -n alexnet -c p100-4x4 -g 4
if grep -q "simulated step .*MFU" "$OUT" && grep -q "Eq. 1 estimate .*MFU" "$OUT"; then ok "simulate text shows both MFUs"; else
    notok "simulate text shows both MFUs" "$(head -n 6 "$OUT")"; fi

# ------------------------------------------- Megatron's plan (issue 32 item 4)
GPT=tests/fixtures/nets/tiny_gpt.json
expect_ok "eval -s megatron --tp 4 --json runs" eval -n $GPT -c p100-4x4 -g 8 -s megatron --tp 4 --json
cp "$OUT" "$TMP/mega.json"
expect_ok "eval -s FILE reads Megatron's plan written as a strategy file" eval -n $GPT -c p100-4x4 -g 8 -s "$TMP/mega.json" --json
cp "$OUT" "$TMP/mega_file.json"
py "Megatron as a strategy file gives the same document (algorithm aside); its configs are Megatron's" '
import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:3])
assert a.pop("algorithm") == "megatron" and b.pop("algorithm") == "file"
assert a == b, [k for k in a if a[k] != b.get(k)]
c = {l["name"]: l["config"] for l in a["layers"]}
assert c["block0.attn"] == {"n": 2, "s": 1, "c": 4}, c["block0.attn"]
assert c["block0.proj"]["r"] == 4 and c["block0.fc2"]["r"] == 4 and c["embed"]["r"] == 4
assert c["block0.fc1"]["c"] == 4 and c["lm_head"]["c"] == 4 and c["block0.ln1"]["x"] == 4
' "$TMP/mega.json" "$TMP/mega_file.json"
expect_ok "compare on a transformer --json runs" compare -n $GPT -c p100-4x4 -g 8 --sp --json
py "compare on a transformer has a megatron row (tp, sp) between owt and layer-wise, never faster than the optimum" '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert [r["strategy"] for r in rows] == ["data", "model", "owt", "megatron", "layer-wise"], [r["strategy"] for r in rows]
m, o = rows[3], rows[4]
assert m["tp"] == 4 and m["sp"] is True, m
assert o["total_ms"] <= m["total_ms"] * (1 + 1e-12), (o["total_ms"], m["total_ms"])
' "$OUT"
expect_ok "scale on a transformer runs" scale -n $GPT -c p100-4x4 --gpus 1,2,8 --tp 4 --json
py "scale: a megatron row per count, --tp capped by the count" '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["strategy"] == "megatron"]
assert [(r["gpus"], r["tp"]) for r in rows] == [(1, 1), (2, 2), (8, 4)], rows
assert abs(rows[0]["speedup"] - 1) < 1e-12
' "$OUT"
run compare -n $GPT -c p100-4x4 -g 4
if grep -q "^    4  megatron" "$OUT" && grep -q "tensor-parallel degree 4" "$OUT"; then ok "compare text has the megatron row and its degree"; else
    notok "compare text has the megatron row and its degree" "$(cat "$OUT")"; fi
expect_ok "simulate -s megatron --sp" simulate -n $GPT -c p100-4x4 -g 4 -s megatron --sp --json
expect_ok "diff megatron optimum" diff -n $GPT -c p100-4x4 -g 4 megatron optimum --tp 2
run diff -n $GPT -c p100-4x4 -g 4 megatron data --sp
if grep -Eq "^\* block0.ln1 +s4 " "$OUT"; then ok "diff names a sequence layer's sequence degree s"; else
    notok "diff names a sequence layer's sequence degree s" "$(head -n 8 "$OUT")"; fi
run eval -n $GPT -c p100-4x4 -g 4 -s megatron
if grep -Eq "^tokens +input .* s4 " "$OUT"; then ok "eval's table names a sequence layer's sequence degree s"; else
    notok "eval's table names a sequence layer's sequence degree s" "$(head -n 6 "$OUT")"; fi
expect_ok "export -s megatron" export -n $GPT -c p100-4x4 -g 4 -s megatron -o "$TMP/mega.dot"
expect_fail "--tp 3: not a power of two, exit 2" 2 "power of two" -- eval -n $GPT -c p100-4x4 -g 4 -s megatron --tp 3
expect_fail "--tp 8 on 4 heads: exit 2 naming the layer" 2 "does not divide the 4 heads" "block0.attn" "--tp 4" -- \
    eval -n $GPT -c h100-8x8 -g 8 -s megatron --tp 8 --json
expect_fail "-s megatron on a CNN: exit 2" 2 "no transformer layers" -- eval -n lenet5 -c p100-4x4 -g 4 -s megatron
expect_fail "search --tp: exit 2 (it shapes Megatron's plan)" 2 "--tp" "-s megatron" -- \
    search -n $GPT -c p100-4x4 -g 4 --tp 2
expect_fail "compare --tp on a CNN (no megatron row): exit 2" 2 "--tp" "no transformer layers" -- \
    compare -n lenet5 -c p100-4x4 -g 4 --tp 2
# a --tp the megatron row refuses is refused before the search (GPT-2 on 16 GPUs searches for
# about 16 s on one thread): at once, with the row's message
for args in "compare -n gpt2 -c p100-4x4 -g 16 --tp 3|must be a power of two" \
    "compare -n gpt2 -c p100-4x4 -g 16 --tp 8|does not divide the 12 heads" \
    "scale -n gpt2 -c p100-4x4 --gpus 16 --tp 8|does not divide the 12 heads"; do
    # shellcheck disable=SC2086
    LAYERWISE_THREADS=1 timeout 5 "$LW" ${args%%|*} >"$OUT" 2>"$ERR"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -qF "megatron: " "$ERR" && grep -qF "${args#*|}" "$ERR" && [ ! -s "$OUT" ]; then
        ok "a bad --tp is refused before any search: ${args%%|*}"
    else
        notok "a bad --tp is refused before any search: ${args%%|*} (exit $rc)" "$(cat "$ERR")"
    fi
done
expect_fail "--sp with -s data: exit 2" 2 "--sp" -- eval -n $GPT -c p100-4x4 -g 4 -s data --sp
expect_fail "--tp is not an option of the TUI" 2 "--tp" -- tui -n $GPT --tp 2

# ----------------------------------------------------------------- costs
# The search's total must be the exact minimum of the tables, and a
# strategy's total their sum for its configs.
COSTS_TOTAL='
import json, sys, itertools
c = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
assert c["format"] == "layerwise-costs/1", c.get("format")
names = [n["name"] for n in c["nodes"]]
assert names == [l["name"] for l in s["layers"]], "costs and strategy list different nodes"
assert names[0] == s["layers"][0]["name"]
idx = {n: i for i, n in enumerate(names)}
for n in c["nodes"]:
    assert len(n["configs"]) == len(n["cost_ms"]) >= 1
    assert n["configs"][0] == {k: 1 for k in n["configs"][0]}, "the single-GPU config comes first"
# the strategy total is the tables sum at its configs
pick = [c["nodes"][i]["configs"].index(l["config"]) for i, l in enumerate(s["layers"])]
def total(a):
    t = sum(c["nodes"][i]["cost_ms"][a[i]] for i in range(len(a)))
    for e in c["edges"]:
        t += e["cost_ms"][a[idx[e["from"]]]][a[idx[e["to"]]]]
    return t
t = total(pick)
assert abs(t - s["total_ms"]) <= 1e-9 * t, (t, s["total_ms"])
'
CHECK_COSTS="$COSTS_TOTAL"'
for e in c["edges"]:
    assert len(e["cost_ms"]) == len(c["nodes"][idx[e["from"]]]["configs"])
    assert all(len(r) == len(c["nodes"][idx[e["to"]]]["configs"]) for r in e["cost_ms"])
# the exact minimum: dynamic programming along a chain, else brute force
n = len(names)
ins = [[] for _ in range(n)]; outs = [[] for _ in range(n)]
for e in c["edges"]:
    ins[idx[e["to"]]].append(e); outs[idx[e["from"]]].append(e)
chain = all(len(ins[i]) == (i > 0) for i in range(n)) and all(len(o) <= 1 for o in outs) and \
    all(idx[ins[i][0]["from"]] == i - 1 for i in range(1, n))
if chain:
    best = list(c["nodes"][0]["cost_ms"])
    for i in range(1, n):
        tab = ins[i][0]["cost_ms"]; nc = c["nodes"][i]["cost_ms"]
        best = [nc[b] + min(best[a] + tab[a][b] for a in range(len(best))) for b in range(len(nc))]
    mn = min(best)
else:
    space = 1
    for x in c["nodes"]: space *= len(x["configs"])
    assert space <= 300000, "too many strategies to brute-force: %d" % space
    mn = min(total(a) for a in itertools.product(*[range(len(x["configs"])) for x in c["nodes"]]))
assert abs(mn - s["total_ms"]) <= 1e-9 * mn, ("minimum of the tables", mn, "search", s["total_ms"])
'
expect_ok "costs --json runs (lenet5, 2 GPUs)" costs -n lenet5 -c p100-4x4 -g 2 --json
cp "$OUT" "$TMP/costs2.json"
py "costs: lenet5 on 2 GPUs, the search total is the exact minimum over the tables" "$CHECK_COSTS" "$TMP/costs2.json" "$TMP/search2.json"
expect_ok "costs --json runs (lenet5, 4 GPUs)" costs -n lenet5 -c p100-4x4 -g 4 --json
cp "$OUT" "$TMP/costs4.json"
py "costs: lenet5 on 4 GPUs, the same nodes as the strategy and the exact minimum" "$CHECK_COSTS" "$TMP/costs4.json" "$TMP/search.json"
expect_ok "costs and search on a branchy network" costs -n $F/nets/branchy.json -c p100-4x4 -g 2 --json
cp "$OUT" "$TMP/costs_b.json"
run search -n $F/nets/branchy.json -c p100-4x4 -g 2 --json
cp "$OUT" "$TMP/search_b.json"
py "costs: a branchy network on 2 GPUs, brute force over the tables equals the search" "$CHECK_COSTS" "$TMP/costs_b.json" "$TMP/search_b.json"
run costs -n $F/nets/k4.json -c p100-4x4 -g 2 --json
cp "$OUT" "$TMP/costs_k.json"
run search -n $F/nets/k4.json -c p100-4x4 -g 2 --json
cp "$OUT" "$TMP/search_k.json"
py "costs: a graph that does not reduce (K4) on 2 GPUs, brute force equals the search" "$CHECK_COSTS" "$TMP/costs_k.json" "$TMP/search_k.json"
run costs -n $F/nets/tied_mini.json -c p100-4x4 -g 2 --json
cp "$OUT" "$TMP/costs_tie.json"
run search -n $F/nets/tied_mini.json -c p100-4x4 -g 2 --json
cp "$OUT" "$TMP/search_tie.json"
py "costs: a tied GPT on 2 GPUs lists the tie term (embed -> lm_head, kind tie), and brute force over the tables with it equals the search" "$CHECK_COSTS"'
tie = [e for e in c["edges"] if e.get("kind") == "tie"]
assert [(e["from"], e["to"]) for e in tie] == [("embed", "lm_head")], tie
assert max(max(r) for r in tie[0]["cost_ms"]) > 0 and tie[0]["cost_ms"][0][0] == 0, "0 on one GPU, not everywhere"
' "$TMP/costs_tie.json" "$TMP/search_tie.json"
py "search reports how many nodes the eliminations left (K4: at least 4)" '
import json, sys
assert json.load(open(sys.argv[1]))["nodes_left"] >= 4
assert json.load(open(sys.argv[2]))["nodes_left"] == 2
' "$TMP/search_k.json" "$TMP/search.json"
run search -n $F/nets/branchy.json -c p100-4x4 -g 2 --json --no-fold
cp "$OUT" "$TMP/search_b_paper.json"
py "costs: the branchy network with --no-fold (the paper's Algorithm 1), brute force equals the search" "$CHECK_COSTS" "$TMP/costs_b.json" "$TMP/search_b_paper.json"
# past 256 GPUs: the search at 512, checked against its tables
expect_ok "search at 512 GPUs runs" search -n $F/nets/mlp_branch.json -c $F/clusters/h100-128x8.json -g 512 --json \
    -o "$TMP/s512.json"
expect_ok "costs at 512 GPUs runs" costs -n $F/nets/mlp_branch.json -c $F/clusters/h100-128x8.json -g 512 --json
py "search at 512 GPUs: proven, its total the tables' sum at its configs, and no one layer's change lowers it" "$COSTS_TOTAL"'
assert s["gpus"] == 512 and s["proven_optimal"] is True, (s["gpus"], s["proven_optimal"])
assert max(len(n["configs"]) for n in c["nodes"]) > 40, "configs of 512 GPUs"
for i in range(len(pick)):
    for k in range(len(c["nodes"][i]["configs"])):
        a = list(pick); a[i] = k
        assert total(a) >= t * (1 - 1e-12), (names[i], k, total(a), t)
' "$OUT" "$TMP/s512.json"
expect_fail "costs without --json is refused" 2 "--json" -- costs -n lenet5 -c p100-4x4 -g 2

# folds (the default) and the paper's Algorithm 1 (--no-fold): one optimum, two logs
expect_ok "search --steps (folds)" search -n vgg16 -c p100-4x4 -g 4 --steps
cp "$OUT" "$TMP/steps_fold.txt"
expect_ok "search --steps --no-fold" search -n vgg16 -c p100-4x4 -g 4 --steps --no-fold
cp "$OUT" "$TMP/steps_paper.txt"
py "the chain VGG-16 folds layer by layer; --no-fold eliminates the same 39 layers as Algorithm 1 does" '
import re, sys
f = open(sys.argv[1]).read(); p = open(sys.argv[2]).read()
assert "Algorithm 1 with folds: 41 layers, 40 edges; 39 folds, 0 node and 0 edge eliminations leave 2 nodes (fc8, prob)" in f, f
assert "Algorithm 1: 41 layers, 40 edges; 39 node and 0 edge eliminations leave 2 nodes (data, prob)" in p, p
assert re.search(r"^   1  fold data +into conv1_1: e1 \(conv1_1 -> conv1_1_relu\) becomes edge e40$", f, re.M), f
assert len(re.findall(r"^ +[0-9]+  fold ", f, re.M)) == 39
assert len(re.findall(r"^ +[0-9]+  node ", p, re.M)) == 39 and " fold " not in p.split("elimination log:")[1]
tot = lambda t: re.search(r"per step ([0-9.]+) ms", t).group(1)
assert tot(f) == tot(p), (tot(f), tot(p))
' "$TMP/steps_fold.txt" "$TMP/steps_paper.txt"
expect_fail "--no-fold is refused where nothing is searched step by step" 2 "--no-fold is an option of search and export" -- \
    eval -n lenet5 -c p100-4x4 -g 2 -s data --no-fold

# --------------------------------------------------------------- profiles
rm -f "$TMP/prof.json"
expect_ok "profile at 1024 GPUs writes a template (no search: as eval, up to 1024)" \
    profile -n inception_v3 -c $F/clusters/h100-128x8.json -o "$TMP/prof1024.json"
py "the 1024-GPU template holds task shapes of 1024 GPUs, each once" '
import json, sys
d = json.load(open(sys.argv[1]))
keys = [json.dumps([e["type"], e["input"], e["output"], e.get("inputs"), e.get("kernel"), e.get("stride"), e.get("padding")]) for e in d["entries"]]
assert len(keys) == len(set(keys)) and len(keys) > 10000, (len(keys), len(set(keys)))
assert "on 1024 GPUs" in d["comment"], d["comment"]
assert any(e["input"][0] == 32 for e in d["entries"]), "no task of the 32768-sample batch split 1024 ways"
' "$TMP/prof1024.json"
expect_ok "profile -o FILE writes a template" profile -n lenet5 -c p100-4x4 -g 2 -o "$TMP/prof.json"
py "the template is a layerwise-profile/1 for the cluster's GPU" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "layerwise-profile/1", d.get("format")
assert d["gpu"] == "Tesla P100-SXM2-16GB", d["gpu"]
assert len(d["entries"]) > 0
for e in d["entries"]:
    assert len(e["input"]) == 4 and len(e["output"]) == 4 and e["forward_ms"] >= 0 and e["backward_ms"] >= 0, e
' "$TMP/prof.json"
expect_ok "search -p with the untouched template" search -n lenet5 -c p100-4x4 -g 2 -p "$TMP/prof.json" --json
py "an untouched template changes nothing: same total and configs" '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert abs(a["total_ms"] - b["total_ms"]) <= 1e-9 * a["total_ms"], (a["total_ms"], b["total_ms"])
assert [l["config"] for l in a["layers"]] == [l["config"] for l in b["layers"]]
' "$TMP/search2.json" "$OUT"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["entries"]:
    if e["type"] == "conv2d" and e["output"][0] == 64 and e["output"][1] == 6:   # conv1 on one GPU
        e["forward_ms"] = 500.0; e["backward_ms"] = 500.0
json.dump(d, open(sys.argv[2], "w"))
' "$TMP/prof.json" "$TMP/prof_slow.json"
expect_ok "search -p with a measured (slow) single-GPU conv1" search -n lenet5 -c p100-4x4 -g 2 -p "$TMP/prof_slow.json" --json
py "a profile entry overrides t_c: conv1 leaves the single GPU it was measured slow on" '
import json, sys
d = json.load(open(sys.argv[1]))
conv1 = [l for l in d["layers"] if l["name"] == "conv1"][0]
tasks = 1
for v in conv1["config"].values(): tasks *= v
assert tasks > 1, conv1
assert conv1["compute_ms"] < 1000
' "$OUT"
expect_ok "search -p with conv1 pinned to one GPU" search -n lenet5 -c p100-4x4 -g 2 -p "$TMP/prof_slow.json" --pin conv1=1 --json
py "the pinned single-GPU conv1 costs exactly the measured 500 + 500 ms" '
import json, sys
d = json.load(open(sys.argv[1]))
conv1 = [l for l in d["layers"] if l["name"] == "conv1"][0]
assert conv1["config"] == {"n": 1, "c": 1, "h": 1, "w": 1}, conv1["config"]
assert conv1["compute_ms"] == 1000.0, conv1["compute_ms"]
' "$OUT"

# a profile records its precision (issue 31): a template written at fp16 is
# refused by an fp32 run (it made the step 3.5x faster without a word),
# taken at fp16; one without the field loads with a warning
expect_ok "profile --precision fp16 writes a template" profile -n lenet5 -c dgx1-v100 -g 2 --precision fp16 -o "$TMP/prof16.json"
py "the template records its GPU and precision" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["gpu"] == "Tesla V100-SXM2-32GB" and d["precision"] == "fp16", (d["gpu"], d.get("precision"))
' "$TMP/prof16.json"
expect_fail "an fp16 profile in an fp32 search: exit 2, names the file, what it was made for and what the run uses" 2 \
    "$TMP/prof16.json" "made for Tesla V100-SXM2-32GB at fp16" "uses Tesla V100-SXM2-32GB at fp32" -- \
    search -n lenet5 -c dgx1-v100 -g 2 -p "$TMP/prof16.json"
expect_fail "an fp16 profile in the fp32 TUI: exit 2 before the terminal" 2 "$TMP/prof16.json" "at fp16" -- \
    tui -n lenet5 -c dgx1-v100 -g 2 -p "$TMP/prof16.json"
run search -n lenet5 -c dgx1-v100 -g 2 --precision fp16 -p "$TMP/prof16.json" --json
if [ "$RC" -eq 0 ] && [ ! -s "$ERR" ]; then ok "the fp16 profile in an fp16 search: used, no warning"; else
    notok "the fp16 profile in an fp16 search (exit $RC)" "$(cat "$ERR")"
fi
python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); d.pop("precision", None); json.dump(d, open(sys.argv[2], "w"))
' "$TMP/prof16.json" "$TMP/prof_old.json"
run search -n lenet5 -c dgx1-v100 -g 2 -p "$TMP/prof_old.json" --json
if [ "$RC" -eq 0 ] && grep -q "warning" "$ERR" && grep -qF "$TMP/prof_old.json" "$ERR" && grep -q "precision" "$ERR"; then
    ok "a profile without \"precision\" still loads, with a warning that it cannot be checked"
else
    notok "a profile without \"precision\" loads with a warning (exit $RC)" "$(cat "$ERR")"
fi
python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); d["entries"].append(dict(d["entries"][1])); json.dump(d, open(sys.argv[2], "w"), indent=1)
' "$TMP/prof16.json" "$TMP/prof_dup.json"
n_dup=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["entries"]) - 1)' "$TMP/prof_dup.json")
expect_fail "a profile with one task shape twice: exit 2, names both entries" 2 "$TMP/prof_dup.json" \
    "entries[$n_dup]" "entries[1]" -- search -n lenet5 -c dgx1-v100 -g 2 --precision fp16 -p "$TMP/prof_dup.json"

# ------------------------------------------------- names, paths and options
expect_ok "a network given by path" search -n data/networks/lenet5.json -c data/clusters/p100-4x4.json -g 4 --json
py "a path and a bare name give the same optimum" '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert abs(a["total_ms"] - b["total_ms"]) <= 1e-12 * a["total_ms"]
' "$OUT" "$TMP/search.json"
expect_ok "search as text" search -n lenet5 -c p100-4x4 -g 4
if grep -q "optimal strategy" "$OUT" && grep -q "Algorithm 1" "$OUT"; then ok "search text shows the strategy and the search summary"; else
    notok "search text shows the strategy and the search summary"
fi
expect_ok "--batch and --sync ring" search -n lenet5 -c p100-4x4 -g 4 --batch 64 --sync ring --json
py "--batch sets the global batch" 'import json,sys; d=json.load(open(sys.argv[1])); assert d["batch"] == 64, d["batch"]' "$OUT"
expect_ok "--pin" search -n alexnet -c p100-4x4 -g 4 --pin fc6=n4 --json
py "--pin forces the layer and costs no less than the optimum" '
import json, sys
d = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2]))
fc6 = [l for l in d["layers"] if l["name"] == "fc6"][0]
assert fc6["config"] == {"n": 4, "c": 1}, fc6["config"]
assert d["total_ms"] >= o["total_ms"] * (1 - 1e-12)
' "$OUT" "$TMP/alex.json"
expect_ok "--why-not" search -n alexnet -c p100-4x4 -g 4 --why-not conv3 --json
cp "$OUT" "$TMP/whynot.json"
for cfg in "n4" "c4" "n2 h2" "1"; do
    "$LW" search -n alexnet -c p100-4x4 -g 4 --pin "conv3=$cfg" --json >"$TMP/pin.json" 2>/dev/null
    py "--why-not conv3: config \"$cfg\" costs what --pin conv3=$cfg finds" '
import json, sys
w = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
want = {d: int(x[1:]) for x in sys.argv[3].split() for d in [x[0]]} if sys.argv[3] != "1" else {}
full = {"n": 1, "c": 1, "h": 1, "w": 1}; full.update(want)
rows = [r for r in w["configs"] if r["config"] == full]
assert len(rows) == 1, (full, [r["config"] for r in w["configs"]])
assert abs(rows[0]["total_ms"] - p["total_ms"]) <= 1e-9 * p["total_ms"], (rows[0]["total_ms"], p["total_ms"])
' "$TMP/whynot.json" "$TMP/pin.json" "$cfg"
done
py "--why-not: every config, sorted, the best one the optimum" '
import json, sys
w = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2]))
assert w["format"] == "layerwise-whynot/1" and w["layer"] == "conv3"
t = [r["total_ms"] for r in w["configs"]]
assert len(t) == 15 and t == sorted(t), t
assert abs(w["best_ms"] - o["total_ms"]) <= 1e-9 * o["total_ms"] and t[0] == w["best_ms"]
assert all(abs(r["delta_ms"] - (r["total_ms"] - w["best_ms"])) < 1e-9 for r in w["configs"])
' "$TMP/whynot.json" "$TMP/alex.json"
expect_ok "--why-not as text" search -n vgg16 -c p100-4x4 -g 4 --why-not conv5_1
if grep -q "why not? conv5_1" "$OUT" && grep -qE "^   h2 w2 +4 " "$OUT"; then ok "--why-not text lists the layer's configs"; else
    notok "--why-not text lists the layer's configs" "$(tail -20 "$OUT")"
fi

# -------------------------------------------------------------- --explain
# The issue's question: why VGG-16 on 16 GPUs splits fc6 by channel on one
# node. Every total is checked against --pin, and each crossover found is
# checked by searching again at that bandwidth or batch.
# one run: the document to -o FILE, the text on stdout
expect_ok "search --explain fc6 -o FILE" search -n vgg16 -c p100-4x4 -g 16 --explain fc6 -o "$TMP/explain.json"
cp "$OUT" "$TMP/explain.txt"
"$LW" search -n vgg16 -c p100-4x4 -g 16 --json >"$TMP/vgg16.json" 2>/dev/null
py "--explain fc6: channel split on one node, the document's fields" '
import json, sys
e = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2]))
assert e["format"] == "layerwise-explain/1" and e["model"] == "Eq. 1" and e["layer"] == "fc6", e["format"]
assert e["parameters"] == 25088 * 4096 + 4096 and e["weight_bytes"] == 4 * e["parameters"]
c = e["alternatives"][0]
assert c["role"] == "chosen" and c["config"]["c"] > 1 and c["config"]["n"] == 1, c
assert c["nodes"] == [0] and c["devices"] == list(range(c["gpus"])) and e["placement"]["inside_one_node"]
assert abs(c["total_ms"] - o["total_ms"]) <= 1e-9 * o["total_ms"]
for a in e["alternatives"]:
    s = a["compute_ms"] + a["sync_ms"] + a["transfer_in_ms"] + a["transfer_out_ms"] + a["rest_ms"]
    assert abs(s - a["total_ms"]) <= 1e-9 * a["total_ms"], a
    assert a["total_ms"] >= c["total_ms"] - 1e-9
assert e["alternatives"][1]["role"] == "runner-up"
data = [a for a in e["alternatives"] if a["config"]["n"] > 1 and a["config"]["c"] == 1]
assert data and data[0]["sync_ms"] > c["sync_ms"] + 10, data
assert e["decides"] in ("t_c", "t_s", "t_x in", "t_x out", "rest")
assert [x["parameter"] for x in e["crossovers"]] == ["inter_node_bandwidth_gbs", "batch_per_gpu"]
' "$TMP/explain.json" "$TMP/vgg16.json"
# cfg_arg JSON-CONFIG: the --pin form of a config ("c4", "n2 c2", "1")
cfg_of() { python3 -c '
import json, sys
c = json.loads(sys.argv[1]); s = " ".join("%s%d" % (d, c[d]) for d in "nchw" if c.get(d, 1) > 1)
print(s or "1")' "$1"; }
for i in 1 2 3; do
    cj=$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["alternatives"]; print(json.dumps(a[int(sys.argv[2])]["config"]) if len(a) > int(sys.argv[2]) else "")' "$TMP/explain.json" "$i")
    [ -n "$cj" ] || continue
    cfg=$(cfg_of "$cj")
    "$LW" search -n vgg16 -c p100-4x4 -g 16 --pin "fc6=$cfg" --json >"$TMP/pin.json" 2>/dev/null
    py "--explain fc6: alternative $i ($cfg) totals what --pin fc6=$cfg finds" '
import json, sys
e = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
a = e["alternatives"][int(sys.argv[3])]
assert abs(a["total_ms"] - p["total_ms"]) <= 1e-9 * p["total_ms"], (a["total_ms"], p["total_ms"])
' "$TMP/explain.json" "$TMP/pin.json" "$i"
done
# issue 36, item 1: each way to split fc6 (its best config) and data
# parallelism's: the data entry is n16, each total is what --pin finds
py "--explain fc6: the dimensions, data parallelism's n16 last" '
import json, sys
d = json.load(open(sys.argv[1]))["dimensions"]
fam = [x["family"] for x in d]
assert fam == ["sample", "channel", "data"], fam
assert d[-1]["config"].get("n") == 16 and d[1]["chosen"], d
' "$TMP/explain.json"
for i in 0 2; do
    cfg=$(cfg_of "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["dimensions"][int(sys.argv[2])]["config"]))' "$TMP/explain.json" "$i")")
    "$LW" search -n vgg16 -c p100-4x4 -g 16 --pin "fc6=$cfg" --json >"$TMP/pin.json" 2>/dev/null
    py "--explain fc6: dimension $i ($cfg) totals what --pin fc6=$cfg finds" '
import json, sys
a = json.load(open(sys.argv[1]))["dimensions"][int(sys.argv[3])]; p = json.load(open(sys.argv[2]))
assert abs(a["total_ms"] - p["total_ms"]) <= 1e-9 * p["total_ms"], (a["total_ms"], p["total_ms"])
' "$TMP/explain.json" "$TMP/pin.json" "$i"
done
chosen=$(cfg_of "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["alternatives"][0]["config"]))' "$TMP/explain.json")")
runner=$(cfg_of "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["alternatives"][1]["config"]))' "$TMP/explain.json")")
# replan PARAM VALUE: the totals with fc6 pinned to the chosen config and to
# the runner-up at that value, in $TMP/a.json and $TMP/b.json (explain's
# totals are Eq. 1's within the memory limit, the cluster's 16 GiB here, as
# the search's: at a large batch the limit binds)
replan() {
    local opt
    case $1 in
    inter_node_bandwidth_gbs) opt=(--inter-bw "$2") ;;
    batch_per_gpu) opt=(--batch-per-gpu "${2%.*}") ;;
    esac
    "$LW" search -n vgg16 -c p100-4x4 -g 16 "${opt[@]}" --pin "fc6=$chosen" --json >"$TMP/a.json" 2>/dev/null
    "$LW" search -n vgg16 -c p100-4x4 -g 16 "${opt[@]}" --pin "fc6=$runner" --json >"$TMP/b.json" 2>/dev/null
}
for k in 0 1; do
    read -r param found value lo hi <<<"$(python3 -c 'import json,sys; x=json.load(open(sys.argv[1]))["crossovers"][int(sys.argv[2])]; print(x["parameter"], x["found"], x["value"], *x["range"])' "$TMP/explain.json" "$k")"
    if [ "$found" = True ]; then
        replan "$param" "$value"
        py "--explain fc6: at $param $value the runner-up $runner beats $chosen when searched again" '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert b["total_ms"] < a["total_ms"], (b["total_ms"], a["total_ms"])
' "$TMP/a.json" "$TMP/b.json"
    else
        # "no value in [lo, hi]": at both ends the chosen config still wins
        for end in "$lo" "$hi"; do
            replan "$param" "$end"
            py "--explain fc6: no crossover in $param: at $end $chosen still beats $runner" '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert b["total_ms"] >= a["total_ms"], (b["total_ms"], a["total_ms"])
' "$TMP/a.json" "$TMP/b.json"
        done
    fi
done
py "--explain fc6: the runner-up wins at some inter-node bandwidth" '
import json, sys
assert json.load(open(sys.argv[1]))["crossovers"][0]["found"]
' "$TMP/explain.json"
py "--explain text: Eq. 1, one node, the crossovers, no line over 80 columns" '
import sys
t = open(sys.argv[1]).read(); part = t[t.index("explain fc6"):]
for need in ("Eq. 1", "stays inside one node", "102764544 parameters", "For the runner-up", "batch per GPU",
             "Why c4 and not data parallelism\x27s n16: n16 keeps 16 replicas", "Each way to split fc6"):
    assert need in part, need
long = [l for l in part.splitlines() if len(l) > 80]
assert not long, long
' "$TMP/explain.txt"
# under a memory limit that binds, the text and the document rank within it:
# every row fits, and the runner-up's total is what --pin finds under the limit
"$LW" search -n alexnet -c p100-4x4 -g 8 --memory-limit 1.3GiB --explain conv3 --json >"$TMP/xm.json" 2>/dev/null
"$LW" search -n alexnet -c p100-4x4 -g 8 --memory-limit 1.3GiB --explain conv3 >"$TMP/xm.txt" 2>/dev/null
runner=$(cfg_of "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["alternatives"][1]["config"]))' "$TMP/xm.json")")
"$LW" search -n alexnet -c p100-4x4 -g 8 --memory-limit 1.3GiB --pin "conv3=$runner" --json >"$TMP/xmpin.json" 2>/dev/null
py "--explain under a binding --memory-limit: rows within the limit, text and JSON agree, runner-up as --pin finds" '
import json, sys
e = json.load(open(sys.argv[1])); t = open(sys.argv[2]).read(); p = json.load(open(sys.argv[3]))
assert e["within_memory_limit"] and e["unlimited_optimum"]["total_ms"] < e["alternatives"][0]["total_ms"], e
alts = e["alternatives"]
assert all(a["fits"] for a in alts), [a["fits"] for a in alts]
assert all(a["total_ms"] >= alts[0]["total_ms"] - 1e-9 for a in alts)
assert abs(alts[1]["total_ms"] - p["total_ms"]) <= 1e-9 * p["total_ms"], (alts[1]["total_ms"], p["total_ms"])
part = t[t.index("explain conv3"):]
assert "within the memory limit" in part and "The memory limit binds" in part and " !" not in part, part
for a in alts:
    assert ("%.2f" % a["total_ms"]) in part, a["total_ms"]
' "$TMP/xm.json" "$TMP/xm.txt" "$TMP/xmpin.json"
expect_ok "--explain -o FILE" search -n lenet5 -c p100-4x4 -g 4 --explain conv1 -o "$TMP/x.json"
py "--explain -o FILE writes the document" '
import json, sys
assert json.load(open(sys.argv[1]))["format"] == "layerwise-explain/1"
' "$TMP/x.json"
expect_fail "--explain of an unknown layer: exit 2" 2 "nope" "lenet5" -- search -n lenet5 -c p100-4x4 -g 4 --explain nope
expect_fail "--explain outside search: exit 2" 2 "--explain" -- eval -n lenet5 -c p100-4x4 -g 4 -s data --explain fc1
expect_fail "--explain with --why-not: exit 2" 2 "--explain" -- search -n lenet5 -c p100-4x4 -g 4 --explain fc1 --why-not fc1

# ----------------------------------------------------------------- diff
expect_ok "diff optimum data --json" diff -n vgg16 -c p100-4x4 -g 16 optimum data --json
cp "$OUT" "$TMP/diff.json"
"$LW" eval -n vgg16 -c p100-4x4 -g 16 -s data --json >"$TMP/data.json" 2>/dev/null
py "diff: each side is what search and eval say, per layer and in all (Eq. 1)" '
import json, sys
d = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2])); e = json.load(open(sys.argv[3]))
assert d["format"] == "layerwise-diff/1" and d["model"] == "Eq. 1"
assert d["a"]["strategy"] == "optimum" and d["b"]["strategy"] == "data"
assert abs(d["a"]["total_ms"] - o["total_ms"]) <= 1e-9 * o["total_ms"]
assert abs(d["b"]["total_ms"] - e["total_ms"]) <= 1e-9 * e["total_ms"]
assert abs(d["delta_ms"] - (e["total_ms"] - o["total_ms"])) <= 1e-9 * e["total_ms"]
ol = {l["name"]: l for l in o["layers"]}; el = {l["name"]: l for l in e["layers"]}
n = 0
for l in d["layers"]:
    a, b = ol[l["name"]], el[l["name"]]
    assert l["a"]["config"] == a["config"] and l["b"]["config"] == b["config"], l["name"]
    assert l["changed"] == (a["config"] != b["config"]), l["name"]
    n += l["changed"]
    ta = a["compute_ms"] + a["sync_ms"] + a["transfer_ms"]; tb = b["compute_ms"] + b["sync_ms"] + b["transfer_ms"]
    assert abs(l["a"]["total_ms"] - ta) < 1e-9 and abs(l["b"]["total_ms"] - tb) < 1e-9, l["name"]
    assert abs(l["delta_ms"] - (tb - ta)) < 1e-9, l["name"]
assert d["layers_changed"] == n and n > 0
assert abs(sum(l["b"]["total_ms"] for l in d["layers"]) - d["b"]["total_ms"]) <= 1e-9 * d["b"]["total_ms"]
' "$TMP/diff.json" "$TMP/vgg16.json" "$TMP/data.json"
"$LW" search -n alexnet -c p100-4x4 -g 4 -o "$TMP/alex-opt.json" >/dev/null 2>&1
expect_ok "diff FILE optimum" diff -n alexnet -c p100-4x4 -g 4 "$TMP/alex-opt.json" optimum
if grep -qE "^B - A: \+0\.00 ms .*; 0 of [0-9]+ layers differ$" "$OUT"; then
    ok "diff of the optimum's own file: nothing differs"
else
    notok "diff of the optimum's own file: nothing differs" "$(tail -3 "$OUT")"
fi
expect_ok "diff model owt as text" diff -n alexnet -c p100-4x4 -g 4 model owt
py "diff text: Eq. 1 totals, the rows that differ marked *" '
import sys
t = open(sys.argv[1]).read()
assert "Eq. 1" in t and "total (Eq. 1)" in t
marked = [l for l in t.splitlines() if l.startswith("* ")]
n = int(t.rsplit(" of ", 1)[0].rsplit(" ", 1)[1])
assert len(marked) == n and n > 0, (len(marked), n)
' "$OUT"
expect_fail "diff with one strategy: exit 2" 2 "two strategies" -- diff -n lenet5 -c p100-4x4 -g 4 optimum
expect_fail "diff with three: exit 2" 2 "third" -- diff -n lenet5 -c p100-4x4 -g 4 optimum data model
expect_fail "diff with a missing file: exit 2, names it" 2 "$TMP/none.json" -- diff -n lenet5 -c p100-4x4 -g 4 optimum "$TMP/none.json"
expect_fail "diff with a bad strategy file: exit 2, names file and layer" 2 "$B/strategy_unknown_layer.json:16:" "fc4" -- \
    diff -n lenet5 -c p100-4x4 -g 4 "$B/strategy_unknown_layer.json" data

# -------------------------------------------------------------- bad input
expect_fail "missing network file: exit 2, names the file" 2 "$B/no_such_file.json" -- \
    search -n $B/no_such_file.json -c p100-4x4 -g 4
expect_fail "unknown network name: exit 2, lists the shipped ones" 2 "no_such_net" "vgg16" -- \
    search -n no_such_net -c p100-4x4 -g 4
expect_fail "malformed JSON: exit 2, file:line:col" 2 "$B/net_malformed.json:7:5:" "malformed JSON" -- \
    search -n $B/net_malformed.json -c p100-4x4 -g 4 --json
expect_fail "unknown layer type: exit 2, names file, line and layer" 2 "$B/net_unknown_type.json:7:" "conv2" "conv3d" -- \
    search -n $B/net_unknown_type.json -c p100-4x4 -g 4
expect_fail "a cycle: exit 2, names the file and a layer on it" 2 "$B/net_cycle.json:" "cycle" -- \
    search -n $B/net_cycle.json -c p100-4x4 -g 4
expect_fail "unknown input name: exit 2" 2 "$B/net_unknown_input.json:7:" "conv_1" -- \
    eval -n $B/net_unknown_input.json -c p100-4x4 -g 4 -s data
expect_fail "bad cluster: exit 2, names file and line" 2 "$B/cluster_negative_bw.json:8:" "bandwidth_gbs" -- \
    search -n lenet5 -c $B/cluster_negative_bw.json -g 4
expect_fail "malformed cluster: exit 2" 2 "$B/cluster_malformed.json:7:" -- \
    compare -n lenet5 -c $B/cluster_malformed.json -g 4 --json
expect_fail "malformed profile: exit 2" 2 "$B/profile_malformed.json:6:" -- \
    search -n lenet5 -c p100-4x4 -g 4 -p $B/profile_malformed.json
expect_fail "bad strategy file: exit 2, names file, line and layer" 2 "$B/strategy_unknown_layer.json:16:" "fc4" -- \
    eval -n lenet5 -c p100-4x4 -g 4 -s $B/strategy_unknown_layer.json --json
expect_fail "strategy with an invalid config: exit 2" 2 "$B/strategy_degree3.json:8:" "conv1" -- \
    eval -n lenet5 -c p100-4x4 -g 4 -s $B/strategy_degree3.json
# an unknown top-level field of a network names every field a network may have (source and description too)
printf '{"format": "layerwise-net/1", "name": "t", "sorce": "typo",\n "input": {"channels": 1, "height": 4, "width": 4},\n "layers": [{"name": "fc", "type": "linear", "inputs": ["data"], "out_features": 2}]}\n' >"$TMP/typo_net.json"
expect_fail "a network's unknown top-level field lists the fields it may have" 2 "typo_net.json:1:" 'unknown field "sorce"' \
    "comment, description and source" -- info -n "$TMP/typo_net.json"
# eval's text says whether the strategy fits the memory limit, as its document's "fits" does (it said nothing)
run eval -n vgg16 -c p100-4x4 -g 4 -s data --memory-limit 2GiB
if [ "$RC" = 0 ] && grep -q "memory: does NOT fit the limit of 2.00 GiB per GPU" "$OUT"; then ok "eval's text: data parallelism does not fit 2 GiB"
else notok "eval's text: data parallelism does not fit 2 GiB" "$(tail -5 "$OUT")"; fi
run eval -n lenet5 -c p100-4x4 -g 4 -s data
grep -q "memory: fits the limit of 16.00 GiB per GPU" "$OUT" && ok "eval's text: lenet5 fits the GPU's 16 GiB" ||
    notok "eval's text: lenet5 fits the GPU's 16 GiB" "$(tail -5 "$OUT")"
# --pin where no search runs that it could fix is refused (each ran, exit 0, with the pin ignored);
# simulate of the optimum honours it, as search does (it simulated the unpinned optimum)
expect_fail "eval -s data --pin: refused" 2 "--pin conv1=c2: eval -s" "takes no pins" -- eval -n lenet5 -c p100-4x4 -g 4 -s data --pin conv1=c2
expect_fail "simulate -s data --pin: refused" 2 "simulate -s" "takes no pins" -- simulate -n lenet5 -c p100-4x4 -g 4 -s data --pin conv1=c2
for c in compare costs; do
    expect_fail "$c --pin: refused" 2 "$c takes no pins" -- $c -n lenet5 -c p100-4x4 -g 4 --json --pin conv1=c2
done
expect_fail "scale --pin: refused" 2 "scale takes no pins" -- scale -n lenet5 -c p100-4x4 --gpus 1,4 --pin conv1=c2
# the memory limit and --time-limit where no search or fit check reads them are refused (they ran, exit 0, ignored)
expect_fail "costs --memory-limit: refused" 2 "--memory-limit: costs does not look at memory" -- costs -n lenet5 -c p100-4x4 -g 2 --json --memory-limit 1MiB
expect_fail "profile --no-memory-limit: refused" 2 "--no-memory-limit: profile does not" -- profile -n lenet5 -c p100-4x4 -g 2 --no-memory-limit
expect_fail "simulate -s data --memory-limit: refused" 2 "--memory-limit: simulate -s does not" -- simulate -n lenet5 -c p100-4x4 -g 4 -s data --memory-limit 1MiB
expect_fail "export -s data --time-limit: refused" 2 "--time-limit: export -s does not" -- export -n lenet5 -c p100-4x4 -g 4 -s data --time-limit 3 -o "$TMP/mem.dot"
[ -e "$TMP/mem.dot" ] && notok "no diagram after a refused option" || ok "no diagram after a refused option"
expect_ok "simulate of the optimum takes --memory-limit (its search does)" simulate -n lenet5 -c p100-4x4 -g 4 --memory-limit 8GiB
# --optimizer (the optimizer state's memory) likewise: refused where nothing reads memory (it ran, exit 0, ignored)
expect_fail "profile --optimizer: refused" 2 "--optimizer: profile does not look at memory" -- \
    profile -n lenet5 -c p100-4x4 -g 2 --optimizer adam
expect_fail "simulate -s data --optimizer: refused" 2 "--optimizer: simulate -s does not" -- \
    simulate -n lenet5 -c p100-4x4 -g 4 -s data --optimizer sgd
expect_fail "export -s data --optimizer: refused" 2 "--optimizer: export -s does not" -- \
    export -n lenet5 -c p100-4x4 -g 4 -s data --optimizer adam -o "$TMP/opt.dot"
[ -e "$TMP/opt.dot" ] && notok "no diagram after a refused --optimizer" || ok "no diagram after a refused --optimizer"
expect_ok "simulate of the optimum takes --optimizer (its memory search does)" \
    simulate -n lenet5 -c p100-4x4 -g 4 --optimizer adam
# compare's and scale's rows say which fit the memory limit (text and JSON said nothing)
run compare -n vgg16 -c p100-4x4 -g 4 --memory-limit 5GiB
grep -q "over the memory limit of 5.00 GiB per GPU: data at 4 GPUs" "$OUT" && ok "compare names the rows over the memory limit" ||
    notok "compare names the rows over the memory limit" "$(tail -12 "$OUT")"
run scale -n vgg16 -c p100-4x4 --gpus 4 --memory-limit 5GiB --json
py "scale --json: each row has peak_memory_bytes and fits against the limit" '
import json,sys
d=json.load(open(sys.argv[1])); r={x["strategy"]: x for x in d["rows"]}
assert r["data"]["fits"] is False and r["data"]["peak_memory_bytes"] > 5 * 2**30, r["data"]
assert r["layer-wise"]["fits"] is True and r["layer-wise"]["peak_memory_bytes"] <= 5 * 2**30, r["layer-wise"]
' "$OUT"
expect_fail "diff data model --pin: refused (no optimum to pin)" 2 "neither A nor B is optimum" -- \
    diff -n lenet5 -c p100-4x4 -g 4 data model --pin conv1=c2
run search -n lenet5 -c p100-4x4 -g 4 --pin conv1=c2 --json
cp "$OUT" "$TMP/pinned_search.json"
run simulate -n lenet5 -c p100-4x4 -g 4 --pin conv1=c2 --json
py "simulate --pin: the optimum with the pin, as search finds it (Eq. 1 total equal)" '
import json,sys
s=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2]))
assert abs(d["eq1_ms"] - s["total_ms"]) <= 1e-9 * s["total_ms"], (d["eq1_ms"], s["total_ms"])
' "$TMP/pinned_search.json" "$OUT"
# a strategy written for another network or GPU count says so (it named only the first layer that failed)
expect_fail "a strategy for lenet5 read on alexnet names the file's network" 2 \
    "lenet5_mixed.json:13:" 'the file is a strategy for network "lenet5"' -- eval -n alexnet -c p100-4x4 -g 4 -s $F/strategies/lenet5_mixed.json
expect_fail "a strategy for 4 GPUs read on 2 names the file's GPU count" 2 \
    "lenet5_mixed.json:7:" "written for 4 GPUs; this run has 2" -- eval -n lenet5 -c p100-4x4 -g 2 -s $F/strategies/lenet5_mixed.json
expect_fail "missing strategy file: exit 2" 2 "$TMP/nothing.json" -- \
    eval -n lenet5 -c p100-4x4 -g 4 -s "$TMP/nothing.json"
expect_fail "-g 0: exit 2" 2 "0" -- search -n lenet5 -c p100-4x4 -g 0
expect_fail "-g 17 on p100-4x4: exit 2, says how many there are" 2 "17" "16" "p100-4x4" -- search -n lenet5 -c p100-4x4 -g 17
expect_fail "-g abc: exit 2" 2 "abc" -- search -n lenet5 -c p100-4x4 -g abc
expect_fail "-g without a value: exit 2" 2 "-g" -- search -n lenet5 -c p100-4x4 -g
expect_fail "-g 2,4 outside scale: exit 2 (not silently all GPUs)" 2 "2,4" -- search -n lenet5 -c p100-4x4 -g 2,4 --json
expect_fail "compare -g 1,2: exit 2" 2 "1,2" -- compare -n lenet5 -c p100-4x4 -g 1,2 --json
expect_fail "scale --gpus 1,x: exit 2" 2 "1,x" -- scale -n lenet5 -c p100-4x4 --gpus 1,x --json
expect_fail "scale --gpus 1,32 on p100-4x4: exit 2" 2 "32" -- scale -n lenet5 -c p100-4x4 --gpus 1,32 --json
expect_fail "scale --gpus 1,2, (a trailing comma): exit 2, not the list 1,2" 2 '"1,2,"' -- scale -n lenet5 -c p100-4x4 --gpus 1,2, --json
expect_fail "scale --gpus '' (no count): exit 2, not the default list" 2 "names no GPU count" -- scale -n lenet5 -c p100-4x4 --gpus "" --json
expect_fail "unknown option: exit 2" 2 "--frobnicate" -- search -n lenet5 --frobnicate
expect_fail "unknown command: exit 2" 2 "frobnicate" -- frobnicate -n lenet5
expect_fail "eval without -s: exit 2" 2 "-s" -- eval -n lenet5 -c p100-4x4 -g 4
expect_fail "--pin of an unknown layer: exit 2" 2 "nope" -- search -n lenet5 -c p100-4x4 -g 4 --pin nope=n2
expect_fail "--pin with an invalid config: exit 2" 2 "fc1" -- search -n lenet5 -c p100-4x4 -g 4 --pin fc1=h2
expect_fail "--pin on a dimension the layer lacks: says why, as strategy files do" 2 "--pin fc6=h2" \
    "a linear layer cannot be split on h" -- search -n alexnet -c p100-4x4 -g 4 --pin fc6=h2
expect_fail "--why-not of an unknown layer: exit 2" 2 "nope" "lenet5" -- search -n lenet5 -c p100-4x4 -g 4 --why-not nope
expect_fail "--why-not outside search: exit 2" 2 "--why-not" -- eval -n lenet5 -c p100-4x4 -g 4 -s data --why-not fc1

# options refused, never dropped without a word (issue 31)
for v in 0 -1 1e9; do
    expect_fail "--refine $v: a range error, not \"unknown option\"" 2 "--refine \"$v\"" "0.001 to 86400" -- \
        search -n lenet5 -c p100-4x4 -g 4 --refine "$v"
done
expect_fail "--seed without --refine: exit 2" 2 "--seed" "--refine" -- search -n lenet5 -c p100-4x4 -g 4 --seed 3
expect_fail "search -s: exit 2 (search takes no strategy)" 2 "-s data" "search finds the strategy" -- \
    search -n lenet5 -c p100-4x4 -g 4 -s data
expect_fail "compare -s: exit 2" 2 "-s data" -- compare -n lenet5 -c p100-4x4 -g 4 -s data
for view in graph strategy; do
    expect_fail "export --step with --view $view: exit 2, no file" 2 "--step" "--view reduced" -- \
        export -n lenet5 -c p100-4x4 -g 4 --view $view --step 2 -o "$TMP/step_$view.dot"
    [ -e "$TMP/step_$view.dot" ] && notok "export --step --view $view wrote a file"
done
expect_fail "export --step with the default (strategy) view: exit 2" 2 "--view reduced" -- \
    export -n lenet5 -c p100-4x4 -g 4 --step 2 -o "$TMP/step_default.dot"
expect_fail "search --step: exit 2" 2 "--step" "export" -- search -n lenet5 -c p100-4x4 -g 4 --step 2
expect_ok "export --view reduced --step still works" export -n lenet5 -c p100-4x4 -g 4 --view reduced --step 2 -o "$TMP/step_reduced.dot"
expect_fail "two --pin for one layer: exit 2, names the layer and both pins" 2 "fc1=n2" "fc1=n4" "pinned twice" -- \
    search -n lenet5 -c p100-4x4 -g 4 --pin fc1=n2 --pin fc1=n4
expect_fail "two --pin for one layer, the same config: exit 2" 2 "pinned twice" -- \
    search -n lenet5 -c p100-4x4 -g 4 --pin fc1=n2 --pin fc1=n2
expect_fail "two --pin for one layer in the TUI: exit 2 before the terminal" 2 "pinned twice" -- \
    tui -n lenet5 -c p100-4x4 -g 4 --pin fc1=n2 --pin fc1=c2
expect_fail "--batch with --batch-per-gpu: exit 2, names both" 2 "--batch" "--batch-per-gpu" "give one" -- \
    search -n lenet5 -c p100-4x4 -g 4 --batch 64 --batch-per-gpu 16
expect_fail "scale --gpus 16,1,16: exit 2, names the repeated count" 2 "16,1,16" "16 twice" -- \
    scale -n lenet5 -c p100-4x4 --gpus 16,1,16 --json
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["links"] = [{"gpus": [0, 3], "bandwidth_gbs": 45, "latency_us": 5}, {"gpus": [1, 2], "bandwidth_gbs": 45, "latency_us": 5},
              {"gpus": [3, 0], "bandwidth_gbs": 20, "latency_us": 5}]
json.dump(d, open(sys.argv[2], "w"), indent=1)
' data/clusters/p100-4x4.json "$TMP/links_dup.json"
expect_fail "a cluster with one GPU pair twice in links: exit 2, names the file and both entries" 2 \
    "$TMP/links_dup.json" "links[2]" "links[0]" -- search -n lenet5 -c "$TMP/links_dup.json" -g 4
# a layer whose name has "=": --pin splits at the last "="
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for l in d["layers"]:
    if l["name"] == "fc1": l["name"] = "c=1"
    l["inputs"] = ["c=1" if i == "fc1" else i for i in l["inputs"]]
json.dump(d, open(sys.argv[2], "w"), indent=1)
' data/networks/lenet5.json "$TMP/eqname.json"
expect_ok "--pin c=1=n4 pins the layer named c=1" search -n "$TMP/eqname.json" -c p100-4x4 -g 4 --pin "c=1=n4" --json
py "the layer c=1 runs n4" '
import json, sys
d = json.load(open(sys.argv[1]))
l = [l for l in d["layers"] if l["name"] == "c=1"][0]
assert l["config"]["n"] == 4 and l["config"]["c"] == 1, l["config"]
' "$OUT"

# ------------------------------------------------- precision and buckets
expect_fail "--precision fp8: exit 2, names the choices" 2 "fp8" "fp32, tf32, fp16 or bf16" -- \
    eval -n lenet5 -c p100-4x4 -g 4 -s data --precision fp8
expect_fail "--precision without a value: exit 2" 2 "--precision" -- eval -n lenet5 -c p100-4x4 -g 4 -s data --precision
expect_fail "--precision the cluster has no figures for: exit 2, names cluster and what it has" 2 \
    "p100-4x4" "tf32" "it has fp32" -- search -n lenet5 -c p100-4x4 -g 4 --precision tf32
expect_fail "--precision the cluster lacks, in the TUI too: exit 2" 2 "p100-4x4" "bf16" -- \
    tui -n lenet5 -c p100-4x4 --precision bf16
expect_fail "--bucket-mb -1: exit 2" 2 "--bucket-mb" -- eval -n lenet5 -c p100-4x4 -g 4 -s data --bucket-mb -1
run search -n lenet5 -c p100-4x4 -g 4 --json
py "search --json says its precision (the cluster's default, fp32)" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["precision"] == "fp32", d.get("precision")' "$OUT"
run scale -n lenet5 -c p100-4x4 --gpus 1,2 --json --precision fp32
py "scale --json says its precision" '
import json, sys
assert json.load(open(sys.argv[1]))["precision"] == "fp32"' "$OUT"
run costs -n lenet5 -c p100-4x4 -g 2 --json
py "costs --json says its precision" '
import json, sys
assert json.load(open(sys.argv[1]))["precision"] == "fp32"' "$OUT"
run eval -n resnet50 -c dgx-a100 -g 8 -s data --json --bucket-mb 0
cp "$OUT" "$TMP/b0.json"
run eval -n resnet50 -c dgx-a100 -g 8 -s data --json --bucket-mb 25
py "--bucket-mb 0 (one all-reduce call per layer) syncs slower than 25 MiB buckets, same bytes" '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["sync_ms"] > b["sync_ms"] > 0, (a["sync_ms"], b["sync_ms"])
assert a["bytes_per_step"] == b["bytes_per_step"]' "$TMP/b0.json" "$OUT"

run eval -n resnet50 -c dgx-a100 -g 8 -s data --json
cp "$OUT" "$TMP/tf32.json"
run eval -n resnet50 -c dgx-a100 -g 8 -s data --json --precision fp16
py "dgx-a100 trains in tf32 by default; --precision fp16 computes faster and syncs the same fp32 gradients" '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["precision"] == "tf32" and b["precision"] == "fp16", (a["precision"], b["precision"])
# data parallel moves only the gradient sync, in fp32 at every precision (issue 34)
assert abs(b["bytes_per_step"] - a["bytes_per_step"]) < 1e-6 * a["bytes_per_step"], (a["bytes_per_step"], b["bytes_per_step"])
assert b["compute_ms"] < a["compute_ms"] and abs(b["sync_ms"] - a["sync_ms"]) < 1e-9 * a["sync_ms"]' "$TMP/tf32.json" "$OUT"
expect_fail "--precision tf32 on the V100 (no TF32 on Volta): exit 2" 2 "dgx1-v100" "tf32" "it has fp32, fp16" -- \
    eval -n lenet5 -c dgx1-v100 -g 2 -s data --precision tf32
run allreduce -c dgx-a100 --json
py "allreduce: 100 MB over one node of dgx-a100, bus bandwidth within 20% of nccl-tests (230 GB/s)" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["gpus"] == 8 and d["bytes"] == 1e8, d
assert 184 < d["busbw_gbs"] < 276, d["busbw_gbs"]
assert abs(d["busbw_gbs"] - 2 * 7 / 8 * 1e8 / (d["time_us"] * 1e-6) / 1e9) < 1e-6 * d["busbw_gbs"]' "$OUT"
run allreduce -c dgx1-v100 -g 8 --size 1e6 --json
py "allreduce: dgx1-v100 rings over NVLink pairs only; 1 MB costs tens of microseconds" '
import json, sys
d = json.load(open(sys.argv[1]))
nvlink = {frozenset(p) for p in [(0,1),(0,2),(1,3),(2,6),(3,7),(4,5),(4,6),(5,7),(0,3),(0,4),(1,2),(1,5),(2,3),(4,7),(5,6),(6,7)]}
r = d["ring"]
assert sorted(r) == list(range(8)), r
assert all(frozenset((r[i], r[(i + 1) % 8])) in nvlink for i in range(8)), r
assert 10 < d["time_us"] < 1000, d["time_us"]' "$OUT"
run allreduce -c dgx1-v100 -g 8 --json
py "allreduce: dgx1-v100 runs NCCL's six rings over its six NVLinks per GPU (135 GB/s nominal)" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rings"] == 6, d
assert 120 < d["busbw_gbs"] <= 135, d["busbw_gbs"]' "$OUT"
run allreduce -c dgx1-v100 -g 8
if [ "$RC" -eq 0 ] && grep -qF "one of 6 rings" "$OUT"; then ok "allreduce text: dgx1-v100 says its ring is one of six"; else notok "allreduce text: dgx1-v100 says its ring is one of six"; fi
run allreduce -c dgx-a100 -g 8 --json
py "allreduce: an NVSwitch node keeps one ring" '
import json, sys
assert json.load(open(sys.argv[1]))["rings"] == 1' "$OUT"
expect_fail "allreduce -g 1: exit 2" 2 "allreduce" -- allreduce -c dgx-a100 -g 1
expect_fail "allreduce --size 0: exit 2" 2 "--size" -- allreduce -c dgx-a100 --size 0

# ------------------------------------------------- no output file on failure
( cd "$TMP" && "$LW" search -n "$ROOT/$B/net_cycle.json" -c p100-4x4 -g 4 -o out.json >/dev/null 2>&1 )
rc=$?
if [ "$rc" -eq 2 ] && [ ! -e "$TMP/out.json" ] && ! ls "$TMP"/out.json.tmp.* >/dev/null 2>&1; then
    ok "a failed search -o leaves no out.json and no out.json.tmp.*"
else
    notok "a failed search -o leaves no out.json and no out.json.tmp.* (exit $rc)" "$(ls "$TMP")"
fi
echo keep >"$TMP/keep.json"
"$LW" eval -n lenet5 -c p100-4x4 -g 4 -s $B/strategy_degree3.json -o "$TMP/keep.json" >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 2 ] && [ "$(cat "$TMP/keep.json")" = keep ] && ! ls "$TMP"/keep.json.tmp.* >/dev/null 2>&1; then
    ok "a failed eval -o leaves an existing file untouched"
else
    notok "a failed eval -o leaves an existing file untouched (exit $rc)"
fi
"$LW" search -n lenet5 -c p100-4x4 -g 4 -o "$TMP/no_such_dir/out.json" >/dev/null 2>"$ERR"
rc=$?
if [ "$rc" -ne 0 ] && [ -s "$ERR" ] && [ ! -e "$TMP/no_such_dir" ]; then ok "an unwritable -o path fails with a message"; else
    notok "an unwritable -o path fails with a message (exit $rc)"
fi

# ------------------------------------------------------------------ simulate
expect_ok "simulate --json runs (vgg16, 16 GPUs, with a trace)" simulate -n vgg16 -c p100-4x4 -g 16 --json --trace "$TMP/trace.json"
cp "$OUT" "$TMP/sim.json"
py "simulate --json is a layerwise-sim/1 document with every contract field" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "layerwise-sim/1", d["format"]
for k in ("network", "cluster", "gpus", "batch", "precision", "strategy", "overlap", "step_ms", "images_per_s",
          "eq1_ms", "gpu_busy_ms", "critical_path", "tasks"):
    assert k in d, k
assert d["gpus"] == 16 and d["strategy"] == "optimum" and d["overlap"] == "ddp"  # the default (issue 34)
assert len(d["gpu_busy_ms"]) == 16
assert 0 < d["step_ms"] < d["eq1_ms"], (d["step_ms"], d["eq1_ms"])
assert abs(d["images_per_s"] - d["batch"] / (d["step_ms"] / 1000)) < 1e-6 * d["images_per_s"]
kinds = {"forward", "backward-data", "backward-weight", "transfer", "sync", "optimizer"}
assert "optimizer" in {t["kind"] for t in d["tasks"]}
assert {t["kind"] for t in d["tasks"]} <= kinds and "forward" in {t["kind"] for t in d["tasks"]}
for t in d["tasks"]:
    assert t["start_ms"] >= 0 and t["end_ms"] >= t["start_ms"] and t["end_ms"] <= d["step_ms"] + 1e-9, t
    r = t["resource"]
    assert r.startswith("gpu ") or r.startswith("link ") or r.startswith("nic node "), r
for g in range(16):
    busy = sum(t["end_ms"] - t["start_ms"] for t in d["tasks"] if t["resource"] == "gpu %d" % g)
    assert abs(busy - d["gpu_busy_ms"][g]) < 1e-6 * max(1, busy), (g, busy, d["gpu_busy_ms"][g])
assert abs(sum(c["ms"] for c in d["critical_path"]) - d["step_ms"]) < 1e-6 * d["step_ms"]
' "$TMP/sim.json"
py "the trace is Chrome trace-event JSON: complete events in microseconds, one track per GPU" '
import json, sys
d = json.load(open(sys.argv[1]))
sim = json.load(open(sys.argv[2]))
ev = d["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
assert x, "no complete events"
for e in x:
    for k in ("pid", "tid", "name", "ts", "dur"):
        assert k in e, (k, e)
    assert e["dur"] >= 0 and e["ts"] >= 0
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
gpus = sorted(v for v in names.values() if v.startswith("gpu "))
assert len(gpus) == 16 and len(set(gpus)) == 16, gpus
# a GPU track sits in its node (4 GPUs per node) and holds exactly that GPU s tasks
for (pid, tid), v in names.items():
    if v.startswith("gpu "):
        g = int(v.split()[1])
        assert pid == g // 4 + 1, (v, pid)
        n_trace = sum(1 for e in x if e["pid"] == pid and e["tid"] == tid)
        n_sim = sum(1 for t in sim["tasks"] if t["resource"] == v)
        assert n_trace == n_sim, (v, n_trace, n_sim)
end = max(e["ts"] + e["dur"] for e in x)
assert abs(end - sim["step_ms"] * 1000) < 1, (end, sim["step_ms"])
procs = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert procs == {1, 2, 3, 4}, procs
' "$TMP/trace.json" "$TMP/sim.json"
# the document reports the precision simulated, not a fixed "fp32": the
# cluster's default (dgx-a100: tf32), or --precision; and it changes the step
for prec in "" fp32 fp16 bf16; do
    run simulate -n alexnet -c dgx-a100 -g 8 --json ${prec:+--precision $prec}
    cp "$OUT" "$TMP/sim_prec_${prec:-default}.json"
done
py "simulate --json reports the precision simulated (the cluster default tf32, or --precision)" '
import json, sys
d = {p: json.load(open(sys.argv[1] % p)) for p in ("default", "fp32", "fp16", "bf16")}
assert d["default"]["precision"] == "tf32", d["default"]["precision"]
for p in ("fp32", "fp16", "bf16"):
    assert d[p]["precision"] == p, (p, d[p]["precision"])
assert d["fp16"]["step_ms"] < d["default"]["step_ms"] < d["fp32"]["step_ms"], [d[p]["step_ms"] for p in d]
' "$TMP/sim_prec_%s.json"
for net in lenet5 alexnet; do
    for s in optimum data model owt; do
        run simulate -n $net -c p100-4x4 -g 4 -s $s --overlap none --json
        py "simulate --overlap none equals Eq. 1 ($net, 4 GPUs, $s)" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["overlap"] == "none" and d["strategy"] == sys.argv[2]
assert abs(d["step_ms"] - d["eq1_ms"]) <= 0.01 * d["eq1_ms"], (d["step_ms"], d["eq1_ms"])
' "$OUT" $s
    done
done
run eval -n lenet5 -c p100-4x4 -g 4 -s "$TMP/s.json" --json
cp "$OUT" "$TMP/eval_s.json"
run simulate -n lenet5 -c p100-4x4 -g 4 -s "$TMP/s.json" --json
py "simulate -s FILE takes a strategy file; its eq1_ms is eval's total" '
import json, sys
s = json.load(open(sys.argv[1])); e = json.load(open(sys.argv[2]))
assert abs(s["eq1_ms"] - e["total_ms"]) < 1e-9 * e["total_ms"], (s["eq1_ms"], e["total_ms"])
' "$OUT" "$TMP/eval_s.json"
run simulate -n lenet5 -c p100-4x4 -g 4
if [ "$RC" -eq 0 ] && grep -q "simulated step" "$OUT" && grep -q "Eq. 1 estimate" "$OUT" && grep -q "saved by overlap" "$OUT" &&
    grep -q "busy per GPU" "$OUT" && grep -q "critical path by layer" "$OUT"; then
    ok "simulate prints the simulated step beside Eq. 1, overlap savings, busy GPUs and the critical path"
else
    notok "simulate text summary" "$(cat "$OUT" "$ERR")"
fi
expect_fail "simulate --overlap bad is refused" 2 "--overlap" -- simulate -n lenet5 -c p100-4x4 --overlap some
expect_fail "--trace outside simulate is refused" 2 "simulate" -- search -n lenet5 -c p100-4x4 --trace "$TMP/t.json"
expect_fail "simulate -s with a bad strategy file names it" 2 "strategy_degree3.json" -- simulate -n lenet5 -c p100-4x4 -g 4 -s $B/strategy_degree3.json
"$LW" simulate -n lenet5 -c p100-4x4 -g 4 --trace "$TMP/no_such_dir/t.json" >/dev/null 2>"$ERR"
rc=$?
if [ "$rc" -ne 0 ] && [ -s "$ERR" ] && [ ! -e "$TMP/no_such_dir" ]; then ok "an unwritable --trace path fails with a message"; else
    notok "an unwritable --trace path fails with a message (exit $rc)"
fi
# inputs named by path are regular files only (issue 31, finding 6): a FIFO with no writer held open() for good,
# /dev/stdin read the terminal; now refused at once, exit 2, saying what the path is
mkfifo "$TMP/in.fifo"
for args in "search -n $TMP/in.fifo -c p100-4x4" "search -n lenet5 -c $TMP/in.fifo" \
    "search -n lenet5 -c p100-4x4 -p $TMP/in.fifo" "eval -n lenet5 -c p100-4x4 -s $TMP/in.fifo" \
    "diff -n lenet5 -c p100-4x4 -g 4 optimum $TMP/in.fifo"; do
    # shellcheck disable=SC2086
    timeout 10 "$LW" $args >"$OUT" 2>"$ERR"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q "in.fifo: is a FIFO or pipe; inputs are read from regular files only" "$ERR" && [ ! -s "$OUT" ]; then
        ok "a FIFO as an input is refused at once: ${args//$TMP\//}"
    else
        notok "a FIFO as an input is refused at once: $args (exit $rc)" "$(cat "$ERR")"
    fi
done
timeout 10 "$LW" search -n /dev/stdin -c p100-4x4 < data/networks/lenet5.json >"$OUT" 2>"$ERR"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "lenet5" "$OUT"; then ok "-n /dev/stdin redirected from a regular file reads it"; else
    notok "-n /dev/stdin from a file (exit $rc)" "$(cat "$ERR")"; fi
cat data/networks/lenet5.json | timeout 10 "$LW" search -n /dev/stdin -c p100-4x4 >"$OUT" 2>"$ERR"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "/dev/stdin: is a FIFO or pipe" "$ERR"; then ok "-n /dev/stdin on a pipe is refused, said so"; else
    notok "-n /dev/stdin on a pipe (exit $rc)" "$(cat "$ERR")"; fi
expect_fail "a directory as an input is refused, said so" 2 "is a directory" -- search -n lenet5 -c "$TMP"
expect_fail "a character device as an input is refused, said so" 2 "/dev/zero: is a character device" -- search -n /dev/zero -c p100-4x4

# simulate's memory bound (issue 31, finding 13): Inception-v3 model-parallel on 256 GPUs, about 5.1e6 tasks (with its
# BatchNorm and ReLU layers) and 1.5 GB,
# under an address space of 800 MB is refused before it starts (it ran into the limit or ran for minutes), and an -o
# target is left alone
mkdir -p "$TMP/simbound"
(ulimit -v 800000; exec "$LW" simulate -n inception_v3 -c $F/clusters/h100-128x8.json -g 256 -s model \
    -o "$TMP/simbound/sim.json" --trace "$TMP/simbound/trace.json") >"$OUT" 2>"$ERR"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "too large for this machine" "$ERR" && grep -q "address space left by its limit" "$ERR" &&
    grep -q "5.1[0-9]e+06 tasks" "$ERR" && [ -z "$(ls -A "$TMP/simbound")" ] && [ ! -s "$OUT" ]; then
    ok "simulate past the memory an address-space limit leaves is refused up front, with its tasks and bytes"
else
    notok "simulate under ulimit -v (exit $rc)" "$(cat "$ERR"; ls -A "$TMP/simbound")"
fi

run compare -n alexnet -c p100-4x4 -g 4 --json
cp "$OUT" "$TMP/cmp.json"
py "compare rows carry the simulated step beside Eq. 1, equal to simulate's" '
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    assert r["sim_step_ms"] > 0 and r["sim_images_per_s"] > 0, r
    name = {"layer-wise": "optimum"}.get(r["strategy"], r["strategy"])
    s = json.loads(subprocess.run([sys.argv[2], "simulate", "-n", "alexnet", "-c", "p100-4x4", "-g", "4", "-s", name,
                                   "--overlap", "full", "--json"], capture_output=True, check=True).stdout)
    assert abs(s["step_ms"] - r["sim_step_ms"]) < 1e-9 * s["step_ms"], (name, s["step_ms"], r["sim_step_ms"])
    assert abs(s["eq1_ms"] - r["total_ms"]) < 1e-9 * s["eq1_ms"], (name, s["eq1_ms"], r["total_ms"])
' "$TMP/cmp.json" "$LW"

# ---- memory: sizes, the limit, the memory model in costs, search under the limit, fit
for v in abc 16XB 0 -1 "" 16gib "16  GiB" 1e400; do
    expect_fail "--memory-limit \"$v\" is refused" 2 "--memory-limit" -- search -n lenet5 -c p100-4x4 -g 2 --memory-limit "$v"
done
expect_fail "--optimizer bogus is refused" 2 "--optimizer" -- search -n lenet5 -c p100-4x4 -g 2 --optimizer bogus
expect_fail "--time-limit 0 is refused" 2 "--time-limit" -- search -n lenet5 -c p100-4x4 -g 2 --time-limit 0
for pair in "16GiB:17179869184" "16 GiB:17179869184" "16:17179869184" "16GB:16000000000" "1500MiB:1572864000" \
            "2000000000B:2000000000" "3KB:3000" "0.5KiB:512"; do
    v=${pair%%:*} want=${pair#*:}
    run search -n lenet5 -c p100-4x4 -g 2 --memory-limit "$v" --json
    py "--memory-limit \"$v\" is $want bytes" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["memory_limit_bytes"] == int(sys.argv[2]), d["memory_limit_bytes"]' "$OUT" "$want"
done

# costs: memory_bytes[config][gpu] add up, with the workspace, to the peak search reports
run costs -n vgg16 -c p100-4x4 -g 4 --json
cp "$OUT" "$TMP/costs_mem.json"
run search -n vgg16 -c p100-4x4 -g 4 --json
cp "$OUT" "$TMP/search_mem.json"
py "costs memory_bytes: one list per config, one entry per task, summing to the search's peak" '
import json, sys
c = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
assert c["optimizer"] == "momentum" and c["workspace_bytes"] == 1 << 30
per = [0.0] * 4
for node, layer in zip(c["nodes"], s["layers"]):
    mb = node["memory_bytes"]
    assert len(mb) == len(node["configs"])
    for cfg, row in zip(node["configs"], mb):
        tasks = 1
        for v in cfg.values(): tasks *= v
        assert len(row) == tasks and all(x >= 0 for x in row), (node["name"], cfg, row)
    k = node["configs"].index(layer["config"])
    for g, x in enumerate(mb[k]): per[g] += x
peak = max(x + c["workspace_bytes"] for x in per if x > 0)
assert abs(peak - s["peak_memory_bytes"]) <= 64, (peak, s["peak_memory_bytes"])
assert s["memory_limit_bytes"] == 16 << 30 and s["fits"] and s["proven_optimal"]
assert abs(s["lower_bound_ms"] - s["total_ms"]) < 1e-9' "$TMP/costs_mem.json" "$TMP/search_mem.json"
run costs -n vgg16 -c p100-4x4 -g 4 --json --optimizer adam
py "costs --optimizer adam: 4 more bytes a weight than momentum" '
import json, sys
a = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
fa = [n for n in a["nodes"] if n["name"] == "fc6"][0]; fm = [n for n in m["nodes"] if n["name"] == "fc6"][0]
d = fa["memory_bytes"][0][0] - fm["memory_bytes"][0][0]
assert abs(d - 4 * 102764544) <= 1, d' "$OUT" "$TMP/costs_mem.json"

# --recompute and --attention: refused when unknown; full recompute charges a block's forward again
expect_fail "--recompute bogus is refused" 2 "--recompute" "none, selective or full" -- \
    search -n tests/fixtures/nets/tiny_gpt.json -c dgx-a100 -g 2 --recompute bogus
expect_fail "--attention bogus is refused" 2 "--attention" "flash or standard" -- \
    eval -n tests/fixtures/nets/tiny_gpt.json -c dgx-a100 -g 2 -s data --attention bogus
run eval -n tests/fixtures/nets/tiny_gpt.json -c dgx-a100 -g 2 -s data --json
cp "$OUT" "$TMP/gpt_none.json"
run eval -n tests/fixtures/nets/tiny_gpt.json -c dgx-a100 -g 2 -s data --json --recompute full
cp "$OUT" "$TMP/gpt_full.json"
run eval -n tests/fixtures/nets/tiny_gpt.json -c dgx-a100 -g 2 -s data --json --attention standard
py "eval --recompute full: block layers cost more, the embedding and head the same; standard attention more" '
import json, sys
a, b, s = (json.load(open(f)) for f in sys.argv[1:4])
ta = {l["name"]: l["compute_ms"] for l in a["layers"]}; tb = {l["name"]: l["compute_ms"] for l in b["layers"]}
ts = {l["name"]: l["compute_ms"] for l in s["layers"]}
assert tb["block0.fc1"] > ta["block0.fc1"] and tb["block1.attn"] > ta["block1.attn"], (ta, tb)
assert tb["embed"] == ta["embed"] and tb["lm_head"] == ta["lm_head"]
assert ts["block0.attn"] > ta["block0.attn"] and ts["block0.fc1"] == ta["block0.fc1"]' \
    "$TMP/gpt_none.json" "$TMP/gpt_full.json" "$OUT"

# the paper settings fit: the default limit changes no optimum
for net in alexnet vgg16 inception_v3; do
    run search -n $net -c p100-4x4 --json
    cp "$OUT" "$TMP/lim.json"
    run search -n $net -c p100-4x4 --json --no-memory-limit
    py "$net, 16 GPUs, 32 per GPU: the same optimum with and without the memory limit" '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert b["memory_limit_bytes"] is None and a["memory_limit_bytes"] == 16 << 30
assert a["layers"] == b["layers"] and a["total_ms"] == b["total_ms"] and a["fits"] and a["proven_optimal"]' "$TMP/lim.json" "$OUT"
done

# VGG-16 at 137 per GPU: the paper optimum needs more than 16 GiB; the search returns one that fits
run search -n vgg16 -c p100-4x4 --batch-per-gpu 137 --json --no-memory-limit
cp "$OUT" "$TMP/free.json"
run search -n vgg16 -c p100-4x4 --batch-per-gpu 137 --json
py "VGG-16, 137 per GPU: the fastest strategy within 16 GiB, proven, slower than the one that does not fit" '
import json, sys
f = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
lim = 16 << 30
assert f["peak_memory_bytes"] > lim, f["peak_memory_bytes"]
assert c["peak_memory_bytes"] <= lim and c["fits"] and c["proven_optimal"], c
assert c["total_ms"] >= f["total_ms"] and abs(c["lower_bound_ms"] - c["total_ms"]) < 1e-9' "$TMP/free.json" "$OUT"
run search -n vgg16 -c p100-4x4 --batch-per-gpu 137
if grep -q "over the limit of 16.00 GiB" "$OUT" && grep -q "fastest that fits (proven" "$OUT"; then
    ok "search text says the paper optimum does not fit and the answer is the fastest that fits"
else notok "search text says why (memory)" "$(cat "$OUT")"; fi
run search -n vgg16 -c p100-4x4 -g 4 --memory-limit 2GiB --json
py "nothing fits 2 GiB: fits false, no lower bound, the smallest peak named" '
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["fits"] and not d["proven_optimal"] and d["lower_bound_ms"] is None
assert d["min_peak_bytes"] > 2 << 30' "$OUT"
run search -n vgg16 -c p100-4x4 -g 4 --memory-limit 2GiB
if grep -q "warning: no strategy fits 2.00 GiB per GPU; the smallest peak" "$OUT"; then ok "nothing fits: said so"; else
    notok "nothing fits: said so" "$(cat "$OUT")"; fi
run search -n lenet5 -c p100-4x4 -g 4 --memory-limit 1MiB
if grep -q "warning: no strategy fits 1.00 MiB per GPU" "$OUT"; then ok "a limit under 0.01 GiB is printed in MiB, not as 0.00 GiB"; else
    notok "a limit under 0.01 GiB is printed in MiB, not as 0.00 GiB" "$(cat "$OUT")"; fi

# fit: the batch it names fits, proven; text and JSON agree
run fit -n vgg16 -c p100-4x4 -g 4 --json
cp "$OUT" "$TMP/fit.json"
py "fit --json names a batch, its throughput and the limit" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "layerwise-fit/1" and d["memory_limit_bytes"] == 16 << 30
assert d["batch_per_gpu"] >= 32 and d["peak_memory_bytes"] <= d["memory_limit_bytes"] and d["images_per_s"] > 0' "$TMP/fit.json"
bpg=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["batch_per_gpu"])' "$TMP/fit.json")
run search -n vgg16 -c p100-4x4 -g 4 --batch-per-gpu "$bpg" --json
py "search at fit's batch ($bpg per GPU) fits" '
import json, sys
assert json.load(open(sys.argv[1]))["fits"]' "$OUT"
expect_fail "fit refuses --batch" 2 "fit chooses the batch" -- fit -n vgg16 -c p100-4x4 -g 4 --batch 64
# fit honours --pin (issue 31, finding 10): LeNet-5 on 4 GPUs fits 453024 per GPU unpinned, fewer with conv1 on one
# GPU; at fit's batch the pinned search fits and takes fit's time, one more per GPU does not fit
run fit -n lenet5 -c p100-4x4 -g 4 --pin conv1=n1 --json
cp "$OUT" "$TMP/fit_pin.json"
bpg=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["batch_per_gpu"])' "$TMP/fit_pin.json")
run search -n lenet5 -c p100-4x4 -g 4 --pin conv1=n1 --batch-per-gpu "$bpg" --json
cp "$OUT" "$TMP/fit_pin_search.json"
run search -n lenet5 -c p100-4x4 -g 4 --pin conv1=n1 --batch-per-gpu "$((bpg + 1))" --json
py "fit --pin: the largest batch for the pinned strategy, and its time is the pinned search's" '
import json, sys
f, s, s1 = (json.load(open(a)) for a in sys.argv[1:4])
assert f["pins"] == [{"layer": "conv1", "config": {"n": 1, "c": 1, "h": 1, "w": 1}}], f.get("pins")
assert f["batch_per_gpu"] < 453024 and f["largest_proven"] is True, f
conv1 = [l for l in s["layers"] if l["name"] == "conv1"][0]
assert conv1["config"] == {"n": 1, "c": 1, "h": 1, "w": 1}, conv1
assert s["fits"] is True and abs(f["total_ms"] - s["total_ms"]) < 1e-9 * s["total_ms"], (f["total_ms"], s["total_ms"])
assert s1["fits"] is False, "one more per GPU fits: %s" % s1["peak_memory_bytes"]
' "$TMP/fit_pin.json" "$TMP/fit_pin_search.json" "$OUT"
run fit -n lenet5 -c p100-4x4 -g 4 --json
unpinned=$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["total_ms"])' "$OUT")
run fit -n lenet5 -c p100-4x4 -g 4 --pin conv1=h4 --json
pinned=$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["total_ms"])' "$OUT")
run fit -n lenet5 -c p100-4x4 -g 4 --pin conv1=h4
if [ "$RC" -eq 0 ] && grep -q "with 1 layer pinned" "$OUT" && grep -q "takes $pinned ms/step" "$OUT" &&
    [ "$pinned" != "$unpinned" ]; then
    ok "fit --pin conv1=h4 says so and gives the pinned time ($pinned ms, not the unpinned $unpinned)"
else
    notok "fit --pin text ($pinned pinned, $unpinned unpinned)" "$(cat "$OUT" "$ERR")"
fi
expect_fail "fit --pin with a config the layer lacks is refused" 2 "--pin conv1" "not a config" -- fit -n lenet5 -c p100-4x4 -g 4 --pin conv1=c64
# on 128 GPUs, 10^6 per GPU passes the global batch the cost model takes:
# fit stops at the largest it takes (it failed there with "batch out of range")
expect_ok "fit of a small network on 128 GPUs stops at the largest global batch" \
    fit -n $F/nets/mlp_branch.json -c $F/clusters/h100-32x8.json -g 128 --json
py "fit on 128 GPUs: 781250 per GPU (10^8 in all), the most tried, so not proven the largest" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["batch_per_gpu"] == 781250 and d["batch"] == 100000000 and d["largest_proven"] is False, d' "$OUT"

run search -n lenet5 -c p100-4x4 -g 4 --refine 30 --seed 3 --json
cp "$OUT" "$TMP/refined.json"
py "search --refine: the refined strategy is no slower simulated, reports its changes, and simulate agrees" '
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
r = d["refine"]
assert d["format"] == "layerwise-strategy/1"
assert r["sim_ms"] <= r["start_sim_ms"] and r["sim_gain_ms"] == r["start_sim_ms"] - r["sim_ms"], r
assert r["seed"] == 3 and r["evaluations"] > 0
opt = json.loads(subprocess.run([sys.argv[2], "search", "-n", "lenet5", "-c", "p100-4x4", "-g", "4", "--json"],
                                capture_output=True, check=True).stdout)
conf = {l["name"]: l["config"] for l in opt["layers"]}
changed = {l["name"] for l in d["layers"] if l["config"] != conf[l["name"]]}
assert changed == {c["layer"] for c in r["changed"]}, (changed, r["changed"])
assert abs(r["eq1_optimum_ms"] - opt["total_ms"]) < 1e-9 * opt["total_ms"]
s = json.loads(subprocess.run([sys.argv[2], "simulate", "-n", "lenet5", "-c", "p100-4x4", "-g", "4", "-s", sys.argv[1],
                               "--overlap", "full", "--json"], capture_output=True, check=True).stdout)  # refine simulates full
assert abs(s["step_ms"] - r["sim_ms"]) < 1e-9 * r["sim_ms"], (s["step_ms"], r["sim_ms"])
assert abs(s["eq1_ms"] - d["total_ms"]) < 1e-9 * d["total_ms"]
' "$TMP/refined.json" "$LW"
run search -n lenet5 -c p100-4x4 -g 4 --refine 1
if [ "$RC" -eq 0 ] && grep -q "refined under the simulator" "$OUT" && grep -qE "simulated step [0-9.]+ -> [0-9.]+ ms" "$OUT"; then
    ok "search --refine SECONDS reports the simulated gain in text"
else
    notok "search --refine text" "$(cat "$OUT" "$ERR")"
fi
expect_fail "--refine outside search is refused" 2 "search" -- eval -n lenet5 -c p100-4x4 -s data --refine
# refinement keeps the search's pins and memory limit (issue 31, finding 7): unbounded, AlexNet on 8 GPUs
# refines fc8 from c4 to n2 c2 and its peak above the optimum's (1442116280 bytes, 1.34 GiB, for the
# complete AlexNet)
run search -n alexnet -c p100-4x4 -g 8 --no-memory-limit --refine 30 --json
py "search --refine unpinned moves fc8 (the case the pin must hold)" '
import json, sys
d = json.load(open(sys.argv[1]))
assert "fc8" in {c["layer"] for c in d["refine"]["changed"]}, d["refine"]["changed"]' "$OUT"
run search -n alexnet -c p100-4x4 -g 8 --pin fc8=c4 --refine 30 --json
py "search --refine keeps a pinned layer's config" '
import json, sys
d = json.load(open(sys.argv[1]))
fc8 = [l for l in d["layers"] if l["name"] == "fc8"][0]
assert fc8["config"] == {"n": 1, "c": 4}, fc8["config"]
assert "fc8" not in {c["layer"] for c in d["refine"]["changed"]}, d["refine"]["changed"]' "$OUT"
run search -n alexnet -c p100-4x4 -g 8 --json
peak=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["peak_memory_bytes"]))' "$OUT")
run search -n alexnet -c p100-4x4 -g 8 --memory-limit "${peak}B" --refine 30 --json
py "search --refine stays within --memory-limit and says so (memory_limit_bytes, fits)" '
import json, sys
d = json.load(open(sys.argv[1]))
lim = int(sys.argv[2])
assert d["memory_limit_bytes"] == lim, d.get("memory_limit_bytes")
assert d["peak_memory_bytes"] <= lim and d["fits"] is True, (d["peak_memory_bytes"], lim, d.get("fits"))
assert d["optimizer"] == "momentum"' "$OUT" "$peak"
run search -n alexnet -c p100-4x4 -g 8 --memory-limit "${peak}B" --pin fc8=c4 --refine 30
gib=$(python3 -c 'import sys; print("%.2f" % (int(sys.argv[1]) / 2**30))' "$peak")
if [ "$RC" -eq 0 ] && grep -q "kept the pin (1 layer)" "$OUT" && grep -q "kept within the memory limit of $gib GiB" "$OUT"; then
    ok "search --refine text says it kept the pins and the memory limit"
else
    notok "search --refine text with pins and a limit" "$(cat "$OUT" "$ERR")"
fi
run search -n alexnet -c p100-4x4 -g 8 --no-memory-limit --refine 30 --json
py "search --refine without a limit: memory_limit_bytes null, fits true" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["memory_limit_bytes"] is None and d["fits"] is True, d' "$OUT"

# an untouched profile template changes nothing, also with adds of 2 and 3 inputs
expect_ok "profile template of a net with 2- and 3-input adds" profile -n $F/nets/adds.json -c p100-4x4 -g 4 -o "$TMP/adds_prof.json"
run search -n $F/nets/adds.json -c p100-4x4 -g 4 --json
cp "$OUT" "$TMP/adds_plain.json"
run search -n $F/nets/adds.json -c p100-4x4 -g 4 -p "$TMP/adds_prof.json" --json
py "the untouched template changes no layer's t_c (add of 3 inputs included)" '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
for x, y in zip(a["layers"], b["layers"]):
    assert abs(x["compute_ms"] - y["compute_ms"]) < 1e-9, (x["name"], x["compute_ms"], y["compute_ms"])
assert abs(a["total_ms"] - b["total_ms"]) < 1e-9
' "$TMP/adds_plain.json" "$OUT"
expect_fail "a profile for another GPU is refused: exit 2, names both GPUs" 2 "$TMP/prof.json" \
    "made for Tesla P100-SXM2-16GB" "uses A100-SXM4-40GB" -- search -n lenet5 -c dgx-a100 -g 2 -p "$TMP/prof.json" --json

# the TUI refuses what cannot run before building anything: under 100 MB,
# where searching Inception-v3 on 64 GPUs runs out of memory (below), the
# refusal still comes, so nothing was built
( ulimit -v 100000 2>/dev/null && exec "$LW" tui -n inception_v3 -c h100-8x8 -g 64 ) </dev/null >"$OUT" 2>"$ERR"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "needs a terminal" "$ERR"; then ok "tui without a terminal refuses before building"; else
    notok "tui without a terminal refuses before building (exit $rc)" "$(cat "$ERR")"
fi
if command -v script >/dev/null; then
    for t in dumb ""; do
        TERM=$t script -qc "ulimit -v 100000; exec '$LW' tui -n inception_v3 -c h100-8x8 -g 64" /dev/null </dev/null >"$OUT" 2>&1
        if grep -q "cannot open the terminal" "$OUT" && ! grep -q "out of memory" "$OUT"; then ok "tui with TERM=${t:-(empty)} refuses before building"; else
            notok "tui with TERM=${t:-(empty)} refuses before building" "$(cat -v "$OUT")"
        fi
    done
else
    echo "# skipped: no script(1) for a pseudo-terminal (TERM=dumb check)"
fi

# out of memory ends by the one policy (src/util.h), with a message, never
# a crash: exit 1 (LW_EXIT_OOM) and "layerwise: out of memory (N bytes)"
# for an allocation the engine cannot do without (an abort, 134, before
# issue 30's one policy), or the search's own tables failing (exit 1).
# (cost_model_graph did not check its allocations: a segfault at 100 MB.)
# Inception-v3 at 64 GPUs fits in 100 MB since the search frees its used
# step tables and same-problem edges share one table (80 MB of address
# space is enough); at 128 GPUs its transfer tables alone are about 190 MB.
( ulimit -v 100000 2>/dev/null && exec "$LW" search -n inception_v3 -c "$F/clusters/h100-32x8.json" -g 128 ) >/dev/null 2>"$ERR"
rc=$?
if { [ "$rc" -eq 1 ] && grep -q "^layerwise: out of memory (" "$ERR"; } ||
    { [ "$rc" -eq 1 ] && grep -q "search failed: out of memory for its elimination tables" "$ERR"; }; then
    ok "search under a 100 MB memory limit: out of memory, said so (exit $rc)"
else
    notok "search under a 100 MB memory limit: out of memory, said so (exit $rc, want 1)" "$(tail -3 "$ERR")"
fi

# ------------------------------------------------ output rules (issue 15)
# A symlink is written through, a FIFO in place; a directory is refused;
# every write error, stdout included, is a message and a non-zero exit.
mkdir -p "$TMP/o"
ln -s target.json "$TMP/o/link.json"
"$LW" search -n lenet5 -c p100-4x4 -g 4 --json -o "$TMP/o/link.json" >/dev/null 2>"$ERR"
rc=$?
if [ "$rc" -eq 0 ] && [ -L "$TMP/o/link.json" ] && [ -f "$TMP/o/target.json" ] &&
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/o/target.json" 2>/dev/null; then
    ok "-o through a symlink writes its target and keeps the link"
else
    notok "-o through a symlink writes its target and keeps the link (exit $rc)" "$(ls -la "$TMP/o"; cat "$ERR")"
fi
mkfifo "$TMP/o/pipe"
timeout 20 cat "$TMP/o/pipe" >"$TMP/o/from_pipe" &
reader=$!
"$LW" costs -n lenet5 -c p100-4x4 -g 2 --json -o "$TMP/o/pipe" >/dev/null 2>"$ERR"
rc=$?
wait "$reader"
if [ "$rc" -eq 0 ] && [ -p "$TMP/o/pipe" ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/o/from_pipe" 2>/dev/null; then
    ok "-o to a FIFO writes through it and leaves the FIFO"
else
    notok "-o to a FIFO writes through it and leaves the FIFO (exit $rc)" "$(ls -la "$TMP/o"; cat "$ERR")"
fi
expect_fail "-o to a directory: exit 2, nothing printed" 2 "$TMP/o" "directory" -- search -n lenet5 -c p100-4x4 -g 4 -o "$TMP/o"
expect_fail "-o \"\": exit 2" 2 "empty" -- search -n lenet5 -c p100-4x4 -g 4 -o ""
expect_fail "search -o into a missing directory: exit 2 before the table is printed" 2 "$TMP/none/s.json" -- \
    search -n lenet5 -c p100-4x4 -g 4 -o "$TMP/none/s.json"
expect_fail "compare --json -o into a missing directory: exit 2" 2 "$TMP/none/c.json" -- \
    compare -n lenet5 -c p100-4x4 -g 4 --json -o "$TMP/none/c.json"
expect_fail "scale --json -o into a missing directory: exit 2" 2 "$TMP/none/c.json" -- \
    scale -n lenet5 -c p100-4x4 --gpus 1,2 --json -o "$TMP/none/c.json"
for c in compare scale; do
    rm -f "$TMP/o/$c.json"
    run $c -n lenet5 -c p100-4x4 --gpus 2 -o "$TMP/o/$c.json"
    [ $c = compare ] && run $c -n lenet5 -c p100-4x4 -g 2 -o "$TMP/o/$c.json"
    if [ "$RC" -eq 0 ] && grep -q "layer-wise" "$OUT" &&
        python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["rows"]' "$TMP/o/$c.json" 2>/dev/null; then
        ok "$c -o FILE without --json writes the rows to FILE and the table to stdout"
    else
        notok "$c -o FILE without --json writes the rows to FILE and the table to stdout (exit $RC)" "$(cat "$ERR")"
    fi
done

# stdout to a full device (shell redirection only; never -o /dev/full)
if [ -w /dev/full ]; then
    for args in "search -n lenet5 -c p100-4x4 -g 4" "search -n lenet5 -c p100-4x4 -g 4 --json" \
        "search -n lenet5 -c p100-4x4 -g 4 --why-not conv1" "eval -n lenet5 -c p100-4x4 -g 4 -s data" \
        "simulate -n lenet5 -c p100-4x4 -g 4" \
        "compare -n lenet5 -c p100-4x4 -g 4 --json" "scale -n lenet5 -c p100-4x4 --gpus 1,2" \
        "costs -n lenet5 -c p100-4x4 -g 2 --json" "profile -n lenet5 -c p100-4x4 -g 2" "list" "--help"; do
        # shellcheck disable=SC2086
        "$LW" $args >/dev/full 2>"$ERR"
        rc=$?
        if [ "$rc" -ne 0 ] && grep -q "standard output" "$ERR"; then ok "$args > /dev/full: exit $rc, says so"; else
            notok "$args > /dev/full: a write error must be an error (exit $rc)" "$(cat "$ERR")"
        fi
    done
else
    echo "# skipped: /dev/full is not writable here (stdout write-error checks)"
fi

# a full disk: a 64 KiB tmpfs (root, where the machine allows mounts)
FULL=$TMP/full
mkdir -p "$FULL"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k lw-full "$FULL" 2>/dev/null; then
    echo keep >"$FULL/keep.json"
    # leave about 8 KiB: every output below is larger
    dd if=/dev/zero of="$FULL/fill" bs=1k count=52 2>/dev/null
    for args in "export -n inception_v3 -c p100-4x4 -g 4 --view graph -o $FULL/g.svg" \
        "export -n inception_v3 -c p100-4x4 -g 4 --view graph -o $FULL/g.png" \
        "export -n inception_v3 -c p100-4x4 -g 4 --view graph -o $FULL/g.pdf" \
        "export -n inception_v3 -c p100-4x4 -g 4 --view graph -o $FULL/g.dot" \
        "costs -n vgg16 -c p100-4x4 -g 4 --json -o $FULL/keep.json" \
        "profile -n inception_v3 -c p100-4x4 -g 4 -o $FULL/keep.json" \
        "search -n inception_v3 -c p100-4x4 -g 16 --why-not mixed_5b/branch1x1 -o $FULL/keep.json" \
        "scale -n inception_v3 -c p100-4x4 --gpus 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --json -o $FULL/keep.json"; do
        # shellcheck disable=SC2086
        "$LW" $args >/dev/null 2>"$ERR"
        rc=$?
        file=${args##* }
        left=$(ls "$FULL" | grep -vE '^(keep.json|fill)$')
        if [ "$rc" -ne 0 ] && grep -qF "$file" "$ERR" && grep -q "No space" "$ERR" && [ -z "$left" ] &&
            [ "$(cat "$FULL/keep.json")" = keep ]; then
            ok "full disk: ${args%% *} fails naming $(basename "$file"), leaves nothing, keeps the old file"
        else
            notok "full disk: ${args%% *} -o $(basename "$file") (exit $rc; left: $left)" "$(cat "$ERR")"
        fi
    done
    umount "$FULL"
else
    echo "# skipped: cannot mount a small tmpfs here (not root, or no permission): full-disk checks"
fi

# ------------------------------------ outputs that name a descriptor or an input (issue 31)
O31=$TMP/o31
mkdir -p "$O31"
# 1. /dev/stdout, /proc/self/fd/1, "-" on a file opened for append: written
#    through the descriptor, the file's earlier and later contents kept
for target in /dev/stdout /proc/self/fd/1 -; do
    printf 'earlier\n' >"$O31/log.txt"
    ino=$(stat -c %i "$O31/log.txt")
    : >"$TMP/py.err"
    (cd "$O31" && { "$LW" search -n lenet5 -c p100-4x4 -g 4 --json -o "$target" 2>"$ERR"; echo "rc=$?"; echo later; } >>"$O31/log.txt")
    if [ "$(stat -c %i "$O31/log.txt")" = "$ino" ] && [ ! -e "$O31/-" ] &&
        python3 -c '
import json, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[0] == "earlier" and lines[-3:] == ["rc=0", "later", ""], lines[-3:]
assert json.loads("\n".join(lines[1:-3]))["format"] == "layerwise-strategy/1"' "$O31/log.txt" 2>"$TMP/py.err"; then
        ok "search --json -o $target >> log: written in place, the log's earlier and later lines kept"
    else
        notok "search --json -o $target >> log: written in place, the log's earlier and later lines kept" \
            "$(cat "$ERR" "$TMP/py.err"; head -3 "$O31/log.txt")"
    fi
done
# a descriptor that is not open, or open for reading only, is refused
expect_fail "-o /dev/fd/9 when 9 is not open: exit 2" 2 "/dev/fd/9" "not open" -- \
    search -n lenet5 -c p100-4x4 -g 4 --json -o /dev/fd/9
echo input >"$O31/in.txt"
run search -n lenet5 -c p100-4x4 -g 4 --json -o /proc/self/fd/7 7<"$O31/in.txt"
if [ "$RC" -eq 2 ] && grep -q "reading only" "$ERR" && [ ! -s "$OUT" ] && [ "$(cat "$O31/in.txt")" = input ]; then ok "-o to a descriptor open for reading: exit 2"; else
    notok "-o to a descriptor open for reading: exit 2 (exit $RC)" "$(cat "$ERR")"
fi
# --trace - is standard output too, and no file named "-" appears
(cd "$O31" && "$LW" simulate -n lenet5 -c p100-4x4 -g 2 --trace - >"$OUT" 2>"$ERR")
rc=$?
if [ "$rc" -eq 0 ] && [ ! -e "$O31/-" ] && grep -q '"traceEvents"' "$OUT" && ! grep -q "wrote" "$ERR"; then
    ok "simulate --trace - writes the trace on standard output, no file \"-\""
else
    notok "simulate --trace - writes the trace on standard output, no file \"-\" (exit $rc)" "$(cat "$ERR"; ls "$O31")"
fi

# 2. a link in a sticky world-writable directory owned by neither the
#    caller nor the directory's owner is not followed (protected_symlinks)
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir -p "$O31/sticky"
    chmod 1777 "$O31/sticky"
    echo precious >"$O31/victim"
    ln -s "$O31/victim" "$O31/sticky/link"
    chown -h nobody "$O31/sticky/link"
    expect_fail "-o through another user's link in a sticky world-writable directory: exit 2" 2 "protected_symlinks" -- \
        search -n lenet5 -c p100-4x4 -g 4 --json -o "$O31/sticky/link"
    if [ "$(cat "$O31/victim")" = precious ] && [ -L "$O31/sticky/link" ]; then ok "... and its target is untouched"; else
        notok "... and its target is untouched"
    fi
    chown -h root "$O31/sticky/link"
    expect_ok "-o through one's own link in a sticky directory is written through" \
        search -n lenet5 -c p100-4x4 -g 4 --json -o "$O31/sticky/link"
    if grep -q layerwise-strategy "$O31/victim"; then ok "... to its target"; else notok "... to its target"; fi
else
    echo "# skipped: not root (or no user nobody): protected_symlinks check"
fi

# 3. an output that is an input, or the other output, is refused, nothing written
cp data/networks/lenet5.json "$O31/net.json"
cp data/clusters/p100-4x4.json "$O31/cl.json"
ln -s net.json "$O31/netlink.json"
"$LW" search -n lenet5 -c p100-4x4 -g 4 -o "$O31/s.json" 2>/dev/null >/dev/null
"$LW" profile -n lenet5 -c p100-4x4 -g 4 -o "$O31/p.json" 2>/dev/null >/dev/null
ln -s s.json "$O31/s.dot"
same_file() {
    local desc=$1 file=$2
    shift 2
    local before
    before=$(cksum <"$file")
    expect_fail "$desc: exit 2" 2 "same file" -- "$@"
    if [ "$(cksum <"$file")" = "$before" ] && ! ls "$file".tmp.* >/dev/null 2>&1; then ok "$desc: the file is untouched"; else
        notok "$desc: the file is untouched"
    fi
}
same_file "search -n my.json -o my.json" "$O31/net.json" search -n "$O31/net.json" -c p100-4x4 -g 4 -o "$O31/net.json"
same_file "search -n my.json -o link-to-my.json" "$O31/net.json" search -n "$O31/net.json" -c p100-4x4 -g 4 -o "$O31/netlink.json"
same_file "search -c cl.json -o cl.json" "$O31/cl.json" search -n lenet5 -c "$O31/cl.json" -g 4 --json -o "$O31/cl.json"
same_file "search -p p.json -o p.json" "$O31/p.json" search -n lenet5 -c p100-4x4 -g 4 -p "$O31/p.json" -o "$O31/p.json"
same_file "profile -p p.json -o p.json" "$O31/p.json" profile -n lenet5 -c p100-4x4 -g 4 -p "$O31/p.json" -o "$O31/p.json"
same_file "eval -s s.json -o s.json" "$O31/s.json" eval -n lenet5 -c p100-4x4 -g 4 -s "$O31/s.json" -o "$O31/s.json"
same_file "export -s s.json -o a link s.dot to it" "$O31/s.json" export -n lenet5 -c p100-4x4 -g 4 -s "$O31/s.json" -o "$O31/s.dot"
same_file "diff s.json data -o s.json" "$O31/s.json" diff -n lenet5 -c p100-4x4 -g 4 "$O31/s.json" data -o "$O31/s.json"
same_file "diff data s.json -o s.json" "$O31/s.json" diff -n lenet5 -c p100-4x4 -g 4 data "$O31/s.json" -o "$O31/s.json"
same_file "simulate -s s.json --trace s.json" "$O31/s.json" simulate -n lenet5 -c p100-4x4 -g 2 -s "$O31/s.json" --trace "$O31/s.json"
same_file "allreduce -c cl.json -o cl.json" "$O31/cl.json" allreduce -c "$O31/cl.json" -g 4 -o "$O31/cl.json"
# a bare name is the file the data directory gives for it
mkdir -p "$O31/data/networks"
cp data/networks/lenet5.json "$O31/data/networks/lenet5.json"
before=$(cksum <"$O31/data/networks/lenet5.json")
LAYERWISE_DATA=$O31/data "$LW" search -n lenet5 -c p100-4x4 -g 4 -o "$O31/data/networks/lenet5.json" >"$OUT" 2>"$ERR"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "same file" "$ERR" && [ "$(cksum <"$O31/data/networks/lenet5.json")" = "$before" ]; then
    ok "search -n NAME -o the data directory's NAME.json: exit 2, untouched"
else
    notok "search -n NAME -o the data directory's NAME.json: exit 2, untouched (exit $rc)" "$(cat "$ERR")"
fi
rm -f "$O31/t.json"
expect_fail "simulate --trace X -o X: exit 2, nothing written" 2 "same file" -- \
    simulate -n lenet5 -c p100-4x4 -g 2 --trace "$O31/t.json" -o "$O31/t.json"
if [ ! -e "$O31/t.json" ]; then ok "... and no file X"; else notok "... and no file X"; fi
run simulate -n lenet5 -c p100-4x4 -g 2 --json --trace -
if [ "$RC" -eq 2 ] && grep -q "same file" "$ERR"; then ok "simulate --json --trace - (both on standard output): exit 2"; else
    notok "simulate --json --trace - (both on standard output): exit 2 (exit $RC)" "$(cat "$ERR")"
fi
expect_ok "-o /dev/null and --trace /dev/null may share a device" \
    simulate -n lenet5 -c p100-4x4 -g 2 --trace /dev/null -o /dev/null

# 5. past `ulimit -f` (SIGXFSZ): an error naming the file, exit 1, no temporary, the old file kept
echo keep >"$O31/keep.json"
for args in "costs -n lenet5 -c p100-4x4 -g 4 --json -o $O31/keep.json" \
    "export -n lenet5 -c p100-4x4 -g 4 --view graph -o $O31/g.svg" \
    "simulate -n lenet5 -c p100-4x4 -g 2 --trace $O31/keep.json"; do
    # shellcheck disable=SC2086
    (ulimit -f 1 && exec "$LW" $args) >/dev/null 2>"$ERR"
    rc=$?
    file=${args##* }
    left=$(ls "$O31" | grep -E '\.tmp\.|^g\.svg$')
    if [ "$rc" -eq 1 ] && grep -qF "$file" "$ERR" && grep -q "File too large" "$ERR" && [ -z "$left" ] &&
        [ "$(cat "$O31/keep.json")" = keep ]; then
        ok "ulimit -f: ${args%% *} fails naming $(basename "$file"), exit 1, no temporary, the old file kept"
    else
        notok "ulimit -f: ${args%% *} -o $(basename "$file") (exit $rc; left: $left)" "$(cat "$ERR")"
    fi
done
(ulimit -f 1 && exec "$LW" costs -n lenet5 -c p100-4x4 -g 4 --json) >"$O31/big.json" 2>"$ERR"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "standard output" "$ERR"; then ok "ulimit -f: standard output past the limit: exit 1, said so"; else
    notok "ulimit -f: standard output past the limit: exit 1, said so (exit $rc)" "$(cat "$ERR")"
fi

# 14. -o: honoured by allreduce without --json, refused by list; "-" is stdout
rm -f "$O31/ar.json"
run allreduce -c p100-4x4 -g 4 -o "$O31/ar.json"
if [ "$RC" -eq 0 ] && grep -q "ring all-reduce" "$OUT" &&
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["busbw_gbs"] > 0' "$O31/ar.json" 2>/dev/null; then
    ok "allreduce -o FILE without --json writes the JSON to FILE and the line to stdout"
else
    notok "allreduce -o FILE without --json writes the JSON to FILE and the line to stdout (exit $RC)" "$(cat "$ERR")"
fi
expect_fail "list -o FILE: exit 2, -o refused" 2 "-o is not an option of list" -- list -o "$O31/list.txt"
if [ ! -e "$O31/list.txt" ]; then ok "... and no file written"; else notok "... and no file written"; fi
(cd "$O31" && "$LW" allreduce -c p100-4x4 -g 4 --json -o - >"$OUT" 2>"$ERR")
rc=$?
if [ "$rc" -eq 0 ] && [ ! -e "$O31/-" ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT" 2>/dev/null; then
    ok "allreduce --json -o - prints the JSON on standard output, no file \"-\""
else
    notok "allreduce --json -o - prints the JSON on standard output, no file \"-\" (exit $rc)" "$(cat "$ERR"; ls "$O31")"
fi
(cd "$O31" && "$LW" export -n lenet5 -c p100-4x4 -g 4 -o - >"$OUT" 2>"$ERR")
rc=$?
if [ "$rc" -eq 2 ] && [ ! -s "$OUT" ] && [ ! -e "$O31/-" ] && grep -q "extension" "$ERR"; then
    ok "export -o -: exit 2 (the format comes from the extension), no file \"-\""
else
    notok "export -o -: exit 2 (the format comes from the extension), no file \"-\" (exit $rc)" "$(cat "$ERR")"
fi
# a file with two names (hard links) is not split: refused, both names untouched
echo linked >"$O31/h1.json"
ln "$O31/h1.json" "$O31/h2.json"
expect_fail "-o a file with two hard links: exit 2" 2 "hard links" -- search -n lenet5 -c p100-4x4 -g 4 -o "$O31/h1.json"
if [ "$(cat "$O31/h1.json")" = linked ] && [ "$(stat -c %h "$O31/h1.json")" = 2 ]; then ok "... both names untouched"; else
    notok "... both names untouched"
fi
# a read-only file: root replaces it keeping mode and owner; another user is refused
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
    echo ro >"$O31/ro.json"
    chown nobody "$O31/ro.json"
    chmod 444 "$O31/ro.json"
    expect_ok "root -o another user's read-only file" search -n lenet5 -c p100-4x4 -g 4 --json -o "$O31/ro.json"
    if [ "$(stat -c '%a %U' "$O31/ro.json")" = "444 nobody" ] && grep -q layerwise-strategy "$O31/ro.json"; then
        ok "... replaced, keeping mode 444 and owner nobody"
    else
        notok "... replaced, keeping mode 444 and owner nobody" "$(stat -c '%a %U' "$O31/ro.json")"
    fi
    NR=$(mktemp -d "${TMPDIR:-/tmp}/lw-nobody.XXXXXX")
    chmod 777 "$NR"
    echo ro >"$NR/ro.json"
    chown nobody "$NR/ro.json"
    chmod 444 "$NR/ro.json"
    echo theirs >"$NR/theirs.json"
    chmod 666 "$NR/theirs.json"
    for f in ro theirs; do
        (cd "$NR" && setpriv --reuid=nobody --regid=nogroup --clear-groups "$LW" search -n lenet5 -c p100-4x4 -g 4 \
            --json -o $f.json >/dev/null 2>"$NR/err")
        rc=$?
        want=$([ $f = ro ] && echo read-only || echo "another user")
        if [ "$rc" -eq 2 ] && grep -q "$want" "$NR/err" && [ "$(cat "$NR/$f.json")" = $([ $f = ro ] && echo ro || echo theirs) ]; then
            ok "a user's -o onto a file that is $want: exit 2, untouched"
        else
            notok "a user's -o onto a file that is $want: exit 2, untouched (exit $rc)" "$(cat "$NR/err")"
        fi
    done
    rm -rf "$NR"
else
    echo "# skipped: not root (or no user nobody, no setpriv): owner and read-only output checks"
fi
# ---- issue 31 #11 and #12: what reaches a terminal, NUL in names ----------
# Escape sequences from the command line are shown as \x1B in every message
# (the rest of the CLI already did); a NUL (\u0000) in any name is refused
# where it is written; format characters (U+202E, ...) are never shown raw.
ESC=$'\033'
# no_raw DESCRIPTION FILE BYTES [WANT]: FILE holds none of BYTES, and WANT if given
no_raw() {
    if grep -qF "$3" "$2"; then notok "$1" "$(cat -v "$2" | head -n 5)"
    elif [ -n "${4:-}" ] && ! grep -qF -- "$4" "$2"; then notok "$1 (no $4)" "$(cat -v "$2" | head -n 5)"
    else ok "$1"; fi
}
run search -n lenet5 -c p100-4x4 -g 4 --why-not "x${ESC}[31mred"
[ "$RC" = 2 ] && no_raw "--why-not: an unknown layer's escape sequence is escaped" "$ERR" "$ESC" '\x1B' || notok "--why-not exit 2 ($RC)"
for opt in --batch --batch-per-gpu; do
    run search -n lenet5 -c p100-4x4 -g 4 "$opt" "${ESC}[31m"
    [ "$RC" = 2 ] && no_raw "$opt: a bad value's escape sequence is escaped" "$ERR" "$ESC" '\x1B' || notok "$opt exit 2 ($RC)"
done
run search -n lenet5 -c p100-4x4 -g 4 -o "$TMP/o${ESC}[31m.json"
[ "$RC" = 0 ] && no_raw "-o: the wrote notice escapes the path" "$ERR" "$ESC" 'wrote' || notok "-o exit 0 ($RC)" "$(cat "$ERR")"
run simulate -n lenet5 -c p100-4x4 -g 4 --trace "$TMP/t${ESC}[31m.json"
[ "$RC" = 0 ] && no_raw "--trace: the wrote notice escapes the path" "$ERR" "$ESC" 'wrote' || notok "--trace exit 0 ($RC)" "$(cat "$ERR")"
for opt in -n -c -p; do
    run tui "$opt" "$TMP/${ESC}[31mmissing.json"
    [ "$RC" = 2 ] && no_raw "tui $opt: a load error escapes the path" "$ERR" "$ESC" '\x1B' || notok "tui $opt exit 2 ($RC)" "$(cat -v "$ERR")"
done
# a NUL in a name: refused with the file, line and column
python3 - "$TMP" "$ROOT" <<'PYEOF'
import sys, json
tmp, root = sys.argv[1], sys.argv[2]
net = open(root + '/data/networks/lenet5.json').read()
cl = open(root + '/data/clusters/p100-4x4.json').read()
st = open(root + '/tests/fixtures/strategies/lenet5_mixed.json').read()
N = '\\u0000hidden'
open(tmp + '/nul_layer.json', 'w').write(net.replace('"conv1"', '"conv1' + N + '"'))
open(tmp + '/nul_net.json', 'w').write(net.replace('"name": "lenet5"', '"name": "lenet5' + N + '"', 1))
open(tmp + '/nul_cluster.json', 'w').write(cl.replace('"name": "p100-4x4"', '"name": "p100' + N + '"', 1))
open(tmp + '/nul_gpu.json', 'w').write(cl.replace('"name": "Tesla P100-SXM2-16GB"', '"name": "Tesla' + N + '"', 1))
open(tmp + '/nul_strategy.json', 'w').write(st.replace('"name": "conv1"', '"name": "conv1' + N + '"', 1))
open(tmp + '/bidi.json', 'w').write(net.replace('"conv1"', '"conv1\\u202Eevil\\u200D\\u2028"'))
PYEOF
for f in nul_layer nul_net; do
    run search -n "$TMP/$f.json" -c p100-4x4 -g 4
    if [ "$RC" = 2 ] && grep -qE "$f.json:[0-9]+:[0-9]+: a string holds .u0000 \(NUL\)" "$ERR"; then ok "NUL in a name refused: $f"
    else notok "NUL in a name refused: $f (exit $RC)" "$(cat "$ERR")"; fi
done
for f in nul_cluster nul_gpu; do
    run search -n lenet5 -c "$TMP/$f.json" -g 4
    if [ "$RC" = 2 ] && grep -qE "$f.json:[0-9]+:[0-9]+: a string holds .u0000 \(NUL\)" "$ERR"; then ok "NUL in a name refused: $f"
    else notok "NUL in a name refused: $f (exit $RC)" "$(cat "$ERR")"; fi
done
run eval -n lenet5 -c p100-4x4 -g 4 -s "$TMP/nul_strategy.json"
if [ "$RC" = 2 ] && grep -qE "nul_strategy.json:[0-9]+:[0-9]+: a string holds .u0000 \(NUL\)" "$ERR"; then ok "NUL in a name refused: strategy"
else notok "NUL in a name refused: strategy (exit $RC)" "$(cat "$ERR")"; fi
# format characters: escaped on a terminal (script gives the program one), in
# messages, SVG and DOT; the JSON on a terminal still reads as the same name
RLO=$(printf '\342\200\256') ZWJ=$(printf '\342\200\215') LS=$(printf '\342\200\250')
if command -v script >/dev/null; then
    script -qc "'$LW' search -n '$TMP/bidi.json' -c p100-4x4 -g 4" /dev/null >"$OUT" 2>&1
    no_raw "a format character is escaped on a terminal (U+202E)" "$OUT" "$RLO" 'conv1\u202Eevil\u200D\u2028'
    no_raw "a format character is escaped on a terminal (U+200D)" "$OUT" "$ZWJ"
    no_raw "a format character is escaped on a terminal (U+2028)" "$OUT" "$LS"
    script -qc "'$LW' search -n '$TMP/bidi.json' -c p100-4x4 -g 4 --json" /dev/null >"$OUT" 2>&1
    py "search --json on a terminal: the escaped name is the same name" '
import json, sys
d = json.loads(open(sys.argv[1]).read().replace("\r", ""))
assert "conv1\u202eevil\u200d\u2028" in [l["name"] for l in d["layers"]], d["layers"][:3]' "$OUT"
else
    echo "# skipped: no script(1) to give the program a terminal"
fi
run search -n "$TMP/bidi.json" -c p100-4x4 -g 4 --why-not "a${RLO}b"
no_raw "a format character in a message is escaped" "$ERR" "$RLO" 'a\u202Eb'
for ext in svg dot; do
    run export -n "$TMP/bidi.json" -c p100-4x4 -g 4 -o "$TMP/bidi.$ext"
    [ "$RC" = 0 ] && no_raw "export $ext: a format character in a label is escaped" "$TMP/bidi.$ext" "$RLO" 'conv1\u202Eevil' || notok "export $ext exit 0 ($RC)" "$(cat "$ERR")"
done
# out of memory: the one policy (exit 1, one message), never a signal
run_limited() { (ulimit -v "$1"; shift; exec "$LW" "$@") >"$OUT" 2>"$ERR"; RC=$?; }
for kb in 40000 60000 90000; do
    run_limited "$kb" costs -n inception_v3 -c p100-4x4 -g 16 --json
    if [ "$RC" = 0 ] || { [ "$RC" = 1 ] && grep -q "^layerwise: out of memory (" "$ERR"; }; then ok "costs --json under ulimit -v $kb: exit $RC"
    else notok "costs --json under ulimit -v $kb: exit $RC" "$(cat "$ERR")"; fi
done
for kb in 60000 100000 140000; do
    run_limited "$kb" export -n lenet5 -c p100-4x4 -g 4 -o "$TMP/lim.svg"
    if [ "$RC" = 0 ] || { [ "$RC" = 1 ] && grep -q "out of memory" "$ERR"; }; then ok "export svg under ulimit -v $kb: exit $RC"
    else notok "export svg under ulimit -v $kb: exit $RC" "$(cat "$ERR")"; fi
done
# ---- ONNX import and info -------------------------------------------------
OX=tests/fixtures/onnx
expect_ok "import writes a network file to stdout" import $OX/small_cnn.onnx
py "import's document is layerwise-net/1 with the ONNX node names" '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["format"]=="layerwise-net/1", d["format"]
names=[l["name"] for l in d["layers"]]
assert names==["conv1","bn1","relu1","pool1","conv2","act2","gap","flat","fc","prob"], names
' "$OUT"
if grep -q "10 layers, 1,562 parameters" "$ERR" && grep -q "10 mapped to layers, 0 folded" "$ERR"; then
    ok "import prints layers, parameters, FLOPs, mapped and folded on stderr"
else notok "import's summary" "$(cat "$ERR")"; fi
expect_ok "import -o writes the file" import $OX/dynamic_reshape.onnx -o "$TMP/imported.json"
if grep -q "5 mapped to layers, 7 folded" "$OUT" && [ -s "$TMP/imported.json" ]; then
    ok "import -o: the file, and the summary on stdout"
else notok "import -o" "$(cat "$OUT" "$ERR")"; fi
expect_ok "the imported file loads as a network" info -n "$TMP/imported.json" --json
expect_ok "import of a model with a tied weight" import $OX/tied.onnx
grep -q "tied): 64 parameters in the ONNX file" "$ERR" && ok "import says a tied weight counts once in the file" ||
    notok "import's tied-weight line" "$(cat "$ERR")"
expect_fail "import refuses an unsupported op, naming file, node, op and opset" 2 \
    "$OX/bad_unsupported.onnx" 'node "upsample" (Resize, opset 13)' -- import $OX/bad_unsupported.onnx -o "$TMP/bad.json"
[ -e "$TMP/bad.json" ] && notok "no network file for a refused model" || ok "no network file for a refused model"
expect_fail "a dynamic height asks for --input-shape" 2 "--input-shape x=" -- import $OX/bad_dynamic.onnx
expect_ok "--input-shape fixes it" import $OX/bad_dynamic.onnx --input-shape x=1x3x32x32
expect_fail "a malformed --input-shape" 2 "--input-shape" -- import $OX/bad_dynamic.onnx --input-shape x=1x
expect_fail "--input-shape on a network that is not ONNX" 2 "--input-shape x=1x3x32x32 is for ONNX" -- \
    info -n alexnet --input-shape x=1x3x32x32
expect_ok "--input-shape with -n FILE.onnx on another command" info -n $OX/bad_dynamic.onnx --input-shape x=1x3x32x32
expect_fail "a truncated file" 2 "bad_truncated.onnx" "not an ONNX model" -- info -n $OX/bad_truncated.onnx
expect_fail "grouped convolution is refused" 2 "group=4" -- import $OX/bad_grouped.onnx
expect_fail "a transformer's ONNX op points to layerwise net (the layer types exist; the importer lacks them)" 2 \
    "bad_layernorm.onnx" "layerwise net gpt|llama|bert|vit" -- import $OX/bad_layernorm.onnx
grep -q "not layer types of layerwise" "$ERR" && notok "the refusal does not say transformers are missing" "$(cat "$ERR")" ||
    ok "the refusal does not say transformers are missing"
expect_fail "import needs a file" 2 "import needs" -- import
expect_ok "info on a shipped network (text)" info -n alexnet
grep -q "parameters" "$OUT" && ok "info's text names the parameters" || notok "info's text" "$(cat "$OUT")"
expect_ok "info --json on an ONNX file" info -n $OX/resnet50.onnx --json
py "ResNet-50 from ONNX: 25,557,032 parameters, 4.1 GMACs within 5%, layerwise-info/1" '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["format"]=="layerwise-info/1"
assert d["parameters"]==25557032, d["parameters"]
assert abs(d["forward_flops_per_sample"]/2-4.1e9) <= 0.05*4.1e9, d["forward_flops_per_sample"]
assert d["by_type"]["conv2d"]==53 and d["layers"]==175, d["by_type"]
for k in ("elementwise_flops_per_sample","activation_bytes_per_sample","input","per_layer"): assert k in d, k
assert d["per_layer"][0]["splits"]==["n","c","h","w"]
' "$OUT"
expect_ok "search -n FILE.onnx (ResNet-50 as PyTorch exports it) on 4 GPUs" search -n $OX/resnet50_torch.onnx -c p100-4x4 -g 4 --json
py "the ONNX ResNet-50's strategy lists every layer" '
import json,sys
d=json.load(open(sys.argv[1]))
assert len(d["layers"])==176 and d["total_ms"]>0, (len(d["layers"]), d["total_ms"])
' "$OUT"

# sequence layers: the s, r and x degrees in strategy files, tables and diagrams
TG=$F/nets/tiny_gpt.json
expect_ok "info on a transformer network" info -n $TG --json
py "info: a sequence layer's output is [sequence, features] and its splits name s, r, x" '
import json,sys
d=json.load(open(sys.argv[1]))
pl={l["name"]:l for l in d["per_layer"]}
assert pl["block0.fc1"]["output"]==[32,256], pl["block0.fc1"]
assert pl["block0.fc1"]["splits"]==["n","c","s","r"], pl["block0.fc1"]["splits"]
assert pl["block0.ln1"]["splits"]==["n","s","x"], pl["block0.ln1"]["splits"]
assert d["parameters"]==134912, d["parameters"]
' "$OUT"
expect_ok "eval of a tensor-parallel strategy file with r and x" eval -n $TG -c dgx1-v100 -g 8 -s $F/strategies/tiny_gpt_tp2.json
if grep -q "block0.fc2 .* n4 r2 " "$OUT" && grep -q "block0.ln2 .* n4 x2 " "$OUT"; then ok "eval prints r and x degrees"; else
    notok "eval prints r and x degrees" "$(cat "$OUT")"; fi
expect_ok "eval --json of it" eval -n $TG -c dgx1-v100 -g 8 -s $F/strategies/tiny_gpt_tp2.json --json
py "the strategy document names s, r and x" '
import json,sys
d=json.load(open(sys.argv[1]))
L={l["name"]:l for l in d["layers"]}
assert L["block0.fc2"]["config"]=={"n":4,"c":1,"s":1,"r":2}, L["block0.fc2"]["config"]
assert L["block0.ln2"]["config"]=={"n":4,"s":1,"x":2}, L["block0.ln2"]["config"]
assert L["block0.ln2"]["devices"]==list(range(8)), L["block0.ln2"]["devices"]
' "$OUT"
expect_ok "export of its strategy view" export -n $TG -c dgx1-v100 -g 8 -s $F/strategies/tiny_gpt_tp2.json --view strategy -o "$TMP/tg.dot"
if grep -q "&#931;2/2" "$TMP/tg.dot" && grep -q "copy 2" "$TMP/tg.dot" && grep -q "partial sums in 2" "$TMP/tg.dot"; then
    ok "the strategy view shows partial sums and replicas"; else notok "the strategy view shows partial sums and replicas" "$(head -c 600 "$TMP/tg.dot")"; fi
sed 's/"name": "block0.ln1", "config": {/&"c": 2, /' $F/strategies/tiny_gpt_tp2.json > "$TMP/tg_bad.json"
expect_fail "a layernorm split on its features is refused" 2 "block0.ln1" "cannot be split on c" -- \
    eval -n $TG -c dgx1-v100 -g 8 -s "$TMP/tg_bad.json"
# ---- transformer generators: net ---------------------------------------------
expect_ok "net gpt writes GPT-2 to stdout" net gpt
if cmp -s "$OUT" data/networks/gpt2.json; then ok "net gpt is the shipped gpt2.json byte for byte"; else
    notok "net gpt is the shipped gpt2.json byte for byte (make networks)" "$(diff "$OUT" data/networks/gpt2.json | head)"
fi
expect_ok "net gpt -o FILE" net gpt --layers 48 --hidden 1600 --heads 25 -o "$TMP/gxl.json"
if cmp -s "$TMP/gxl.json" data/networks/gpt2_xl.json && [ ! -s "$OUT" ] && grep -q "wrote" "$ERR"; then
    ok "net -o writes the file (GPT-2 XL, the shipped one), says so, prints nothing on stdout"
else
    notok "net -o writes the file (GPT-2 XL, the shipped one)" "$(cat "$ERR")"
fi
run list
for n in gpt2 gpt2_xl bert_large llama2_7b vit_b16; do
    grep -q "^networks:.* $n\b" "$OUT" && ok "list shows $n" || notok "list shows $n" "$(cat "$OUT")"
done
# the published trainable parameters, through info --json on the shipped files
for np in gpt2:124439808 gpt2_xl:1557611200 bert_large:335174458 llama2_7b:6738415616 vit_b16:86567656; do
    n=${np%%:*}
    expect_ok "info --json on the shipped $n" info -n "$n" --json
    py "$n has ${np#*:} trainable parameters (the published count)" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "layerwise-info/1" and d["network"] == sys.argv[2], d["network"]
assert d["parameters"] == int(sys.argv[3]), (d["parameters"], sys.argv[3])
' "$OUT" "$n" "${np#*:}"
    expect_ok "info (text) on the shipped $n" info -n "$n"
done
expect_ok "net llama with grouped KV heads and its own sizes" net llama --layers 2 --hidden 512 --heads 8 --kv-heads 2 \
    --seq 256 --vocab 1000 -o "$TMP/llama_small.json"
expect_ok "the generated network loads" info -n "$TMP/llama_small.json" --json
py "its name says its sizes; its attention has 2 KV heads, fc1 2 x 1536 outputs (Llama's FFN for 512)" '
import json, sys
net = json.load(open(sys.argv[1]))
assert net["name"] == "llama_l2_h512_a8_k2_f1536_s256_v1000", net["name"]
L = {l["name"]: l for l in net["layers"]}
assert L["block1.attn"]["kv_heads"] == 2 and L["block1.fc1"]["out_features"] == 3072, L["block1.attn"]
assert net["source"].startswith("written by `layerwise net llama --layers 2 --hidden 512 --heads 8 --kv-heads 2 --seq 256 --vocab 1000`")
' "$TMP/llama_small.json"
expect_ok "net vit with 10 classes and 32-pixel images" net vit --layers 1 --image 32 --patch 4 --classes 10
expect_fail "net without a family" 2 "net needs a family" -- net
expect_fail "net of an unknown family" 2 "net makes gpt, llama, bert or vit, not \"t5\"" -- net t5
expect_fail "net of two families" 2 "\"bert\" is a second family" -- net gpt bert
expect_fail "net --layers 0" 2 "--layers \"0\" must be a whole number from 1 to 1024" -- net gpt --layers 0
expect_fail "net --hidden -768" 2 "--hidden \"-768\"" -- net gpt --hidden -768
expect_fail "net --heads 12x" 2 "--heads \"12x\"" -- net bert --heads 12x
expect_fail "net --layers without a value" 2 "--layers \"\" must be a whole number" -- net gpt --layers
expect_fail "net --layers beyond the limit" 2 "--layers \"100000\" must be a whole number from 1 to 1024" -- net gpt --layers 100000
expect_fail "hidden not divisible by heads" 2 "--hidden 1000 is not divisible by --heads 12 (the default)" -- net gpt --hidden 1000
expect_fail "heads not divisible by KV heads" 2 "--heads 32 (the default) is not divisible by --kv-heads 5" -- net llama --kv-heads 5
expect_fail "an image the patches do not tile" 2 "--image 100 is not divisible by --patch 16 (the default)" -- net vit --image 100
expect_fail "--kv-heads on gpt" 2 "--kv-heads is not an option of net gpt" -- net gpt --kv-heads 4
expect_fail "--vocab on vit" 2 "--vocab is not an option of net vit" -- net vit --vocab 100
expect_fail "--patch on llama" 2 "--patch is not an option of net llama" -- net llama --patch 16
expect_fail "an embedding table past the loader's limit" 2 "--vocab 4194304" "--hidden 65536" -- \
    net gpt --hidden 65536 --heads 16 --vocab 4194304
expect_fail "a sequence whose logits pass the loader's limit" 2 "--seq 1048576" -- net gpt --seq 1048576
expect_fail "--layers on another command" 2 "--layers is an option of net" -- info -n gpt2 --layers 4
expect_fail "-n on net" 2 "-n is not an option of net" -- net gpt -n vgg16
# options a command would ignore are refused, not dropped: net, info, import and list model no step,
# allreduce reads no network (each ran with exit 0 before)
expect_fail "-g on net" 2 "-g is not an option of net" -- net gpt -g 4
expect_fail "--batch on net" 2 "--batch is not an option of net" -- net gpt --batch 8
expect_fail "-c on info" 2 "-c is not an option of info" -- info -n gpt2 -c dgx-a100
expect_fail "--precision on info" 2 "--precision is not an option of info" -- info -n gpt2 --precision bf16
expect_fail "--memory-limit on import" 2 "--memory-limit is not an option of import" -- \
    import $OX/small_cnn.onnx --memory-limit 8
expect_fail "--json on list (it prints text)" 2 "--json is not an option of list" -- list --json
expect_fail "-g on list" 2 "-g is not an option of list" -- list -g 4
expect_fail "-n on allreduce" 2 "-n is not an option of allreduce" -- allreduce -c dgx-a100 -n vgg16
expect_fail "--precision on allreduce (the bytes are given)" 2 "--precision is not an option of allreduce" -- \
    allreduce -c dgx-a100 --precision bf16
expect_ok "allreduce still takes -g, --inter-bw and --stack" allreduce -c dgx-a100 -g 8 --inter-bw 5 --stack tensorflow-ngc
expect_fail "--json on net" 2 "--json is not an option of net" -- net gpt --json
expect_fail "a bad size with -o writes no file" 2 "--heads 7" -- net gpt --heads 7 -o "$TMP/never.json"
[ -e "$TMP/never.json" ] && notok "no file after a refused net -o" || ok "no file after a refused net -o"
expect_fail "net -o into a missing directory" 2 "$TMP/nodir/x.json" -- net gpt -o "$TMP/nodir/x.json"
# ---- sharded data parallelism (issue 37): --sync zero1|zero2|zero3|fsdp|hsdp ----
expect_fail "--sync zero4: exit 2, names the choices" 2 "zero4" "zero1, zero2, zero3, fsdp or hsdp" -- \
    eval -n alexnet -c p100-4x4 -g 4 -s data --sync zero4
for s in ring zero1 zero2 zero3 fsdp hsdp; do
    expect_ok "eval -s data --sync $s" eval -n vgg16 -c p100-4x4 -g 16 -s data --sync $s --json -o "$TMP/z_$s.json"
done
py "eval --sync: zero1/2 move the bytes of ring all-reduce, zero3 (= fsdp) 1.5x; memory falls zero1 > zero2; fits said" '
import json,sys
d={s: json.load(open(sys.argv[1] + "/z_" + s + ".json")) for s in ["ring","zero1","zero2","zero3","fsdp","hsdp"]}
b={s: d[s]["bytes_per_step"] for s in d}
assert abs(b["zero1"]-b["ring"]) < 1e-6*b["ring"] and abs(b["zero2"]-b["ring"]) < 1e-6*b["ring"], b
assert abs(b["zero3"]-1.5*b["ring"]) < 1e-6*b["ring"], b
assert d["fsdp"]["total_ms"] == d["zero3"]["total_ms"] and d["fsdp"]["sync"] == "zero3", d["fsdp"]["sync"]
assert d["hsdp"]["sync"] == "hsdp" and b["ring"] < b["hsdp"] < b["zero3"], b
m={s: d[s]["peak_memory_bytes"] for s in d}
assert m["ring"] > m["zero1"] > m["zero2"], m
for s in d: assert d[s]["fits"] is True and d[s]["memory_limit_bytes"] == 16*2**30, (s, d[s].get("fits"))
' "$TMP"
expect_ok "costs --json --sync zero3" costs -n alexnet -c p100-4x4 -g 4 --sync zero3 --json -o "$TMP/zc3.json"
expect_ok "costs --json --sync ring" costs -n alexnet -c p100-4x4 -g 4 --sync ring --json -o "$TMP/zcr.json"
py "costs: zero3 divides fc6's state over its 4 replicas (n4), not over a channel split (c4); the gathered layers named" '
import json,sys
z=json.load(open(sys.argv[1])); r=json.load(open(sys.argv[2]))
assert z["sync"]=="zero3" and r["sync"]=="ring-allreduce"
fc6z=[n for n in z["nodes"] if n["name"]=="fc6"][0]; fc6r=[n for n in r["nodes"] if n["name"]=="fc6"][0]
i=fc6z["configs"].index({"n":4,"c":1}); j=fc6z["configs"].index({"n":1,"c":4})
psi=9216*4096+4096
act=fc6r["memory_bytes"][i][0]-12*psi
assert abs(fc6z["memory_bytes"][i][0] - (12*psi/4 + act)) <= 2, (fc6z["memory_bytes"][i][0], act)
assert fc6z["memory_bytes"][j] == fc6r["memory_bytes"][j]
assert z["gathered_weights_bytes"] == 4*(psi + 4096*4096+4096) and r["gathered_weights_bytes"] == 0, z["gathered_weights_bytes"]
' "$TMP/zc3.json" "$TMP/zcr.json"
expect_ok "compare --json lists every scheme's optimum" compare -n alexnet -c p100-4x4 -g 8 --json
cp "$OUT" "$TMP/zcmp.json"
for s in ps ring zero1 zero2 zero3 hsdp; do
    expect_ok "search --sync $s" search -n alexnet -c p100-4x4 -g 8 --sync $s --json -o "$TMP/zs_$s.json"
done
py "compare: one row per scheme, each the search under that scheme, beside the 4 usual rows" '
import json,sys
c=json.load(open(sys.argv[1]))
assert len(c["rows"])==4
names={"ps":"parameter-server","ring":"ring-allreduce"}
assert [x["sync"] for x in c["schemes"]]==["parameter-server","ring-allreduce","zero1","zero2","zero3","hsdp"]
for s in ["ps","ring","zero1","zero2","zero3","hsdp"]:
    d=json.load(open(sys.argv[2] + "/zs_" + s + ".json"))
    x=[x for x in c["schemes"] if x["sync"]==names.get(s,s)][0]
    assert abs(x["total_ms"]-d["total_ms"]) < 1e-9*d["total_ms"], (s, x["total_ms"], d["total_ms"])
    assert x["fits"]==d["fits"] and x["peak_memory_bytes"]==round(d["peak_memory_bytes"]), s
' "$TMP/zcmp.json" "$TMP"
expect_ok "compare text lists the schemes" compare -n alexnet -c p100-4x4 -g 8
grep -q "zero3" "$OUT" && grep -q "(in use)" "$OUT" && ok "compare text names zero3 and the scheme in use" || notok "compare text schemes" "$(cat "$OUT")"

# fit -s data: a 7.5-billion-parameter model (the ZeRO paper's example) data parallel in bf16 with Adam on
# 80 GB GPUs: 16 bytes a parameter (120 GB) does not fit replicated; sharded by zero3 it does, at 8 and 64 GPUs
for g in 8 64; do
    expect_ok "fit -s data --sync ring, 7.5B on $g GPUs" fit -n $F/nets/fc7b.json -c h100-8x8 -g $g --precision bf16 \
        --optimizer adam --sync ring -s data --json -o "$TMP/fit_ring_$g.json"
    expect_ok "fit -s data --sync zero3, 7.5B on $g GPUs" fit -n $F/nets/fc7b.json -c h100-8x8 -g $g --precision bf16 \
        --optimizer adam --sync zero3 -s data --json -o "$TMP/fit_z3_$g.json"
done
py "fit -s data: 7.5B does not fit with ring (120 GB of state), fits with zero3 on 8 and 64 GPUs" '
import json,sys
for g in (8, 64):
    r=json.load(open(sys.argv[1] + "/fit_ring_%d.json" % g)); z=json.load(open(sys.argv[1] + "/fit_z3_%d.json" % g))
    assert r["strategy"]=="data" and r["sync"]=="ring-allreduce" and r["batch_per_gpu"] is None, r
    assert r["min_peak_bytes_at_batch_1"] > 16*7.5e9, r["min_peak_bytes_at_batch_1"]
    assert z["sync"]=="zero3" and z["batch_per_gpu"] >= 1 and z["peak_memory_bytes"] <= z["memory_limit_bytes"], z
' "$TMP"
expect_fail "--pin with a degree that is not a power of two says what is allowed (issue 36)" 2 "config \"c3\" is not a config" \
    "each a power of two" -- search -n lenet5 -c p100-4x4 -g 4 --pin conv1=c3
expect_ok "explain on a transformer's input" search -n gpt2 -c dgx-a100 -g 8 --precision bf16 --batch-per-gpu 8 --explain tokens
if grep -q "best by sequence (s)" "$OUT"; then ok "explain names a sequence layer's families (sequence, not height/width)"; else
    notok "explain names a sequence layer's families" "$(grep "best by" "$OUT")"; fi
# issue 32 item 9: explain says what partial sums, heads, sequence and replicas do
expect_ok "explain a row-parallel fc2" search -n gpt2 -c dgx-a100 -g 8 --precision bf16 --batch-per-gpu 8 --pin block3.fc2=n2r4 --explain block3.fc2
if tr '\n' ' ' < "$OUT" | sed 's/  */ /g' | grep -q "block3.fc2 splits its input features across the 4 GPUs 0-3 of node 0: each holds a quarter of the 3072-wide activations and partial sums of its whole output, and one reduce-scatter of b x s x h = 32x1024x768"; then
    ok "explain: fc2 with r4 splits its input features over 4 GPUs, one reduce of b x s x h"; else
    notok "explain: fc2 with r4" "$(grep -A3 "splits" "$OUT")"; fi
expect_ok "explain attention by heads" search -n gpt2 -c dgx-a100 -g 8 --precision bf16 --batch-per-gpu 8 --pin block3.attn=n2c4 --explain block3.attn
if grep -q "block3.attn splits its heads 4 ways: each task computes 3 of the 12 heads" "$OUT"; then ok "explain: attention split by heads"; else
    notok "explain: attention split by heads" "$(grep "splits" "$OUT")"; fi
expect_ok "explain a replicated layernorm" search -n gpt2 -c dgx-a100 -g 8 --precision bf16 --batch-per-gpu 8 --pin block3.ln2=n2x4 --explain block3.ln2
if tr '\n' ' ' < "$OUT" | sed 's/  */ /g' | grep -q "block3.ln2 runs replicated on the 4 GPUs 0-3"; then ok "explain: replicas"; else
    notok "explain: replicas" "$(grep -A2 "replicated on" "$OUT")"; fi
expect_ok "explain a sequence split" search -n gpt2 -c dgx-a100 -g 8 --precision bf16 --batch-per-gpu 8 --pin block3.drop2=n2s4 --explain block3.drop2
if grep -q "block3.drop2 splits the sequence 4 ways: each task holds 256 of the 1024" "$OUT"; then ok "explain: sequence split"; else
    notok "explain: sequence split" "$(grep "sequence" "$OUT")"; fi
# issue 32: explain names the tie term of a tied table (the embedding's and the lm_head's layouts)
expect_ok "explain a tied embedding" search -n $F/nets/tied_mini.json -c p100-4x4 -g 4 --pin lm_head=c4 --explain embed
if tr '\n' ' ' < "$OUT" | sed 's/  */ /g' | grep -q "Tied table: lm_head keeps the 512 x 64 token table it shares with embed.*The tie term moves the table between the two"; then
    ok "explain: a tied embedding names the tie term"; else notok "explain: the tie term" "$(grep -A6 "Tied" "$OUT")"; fi
"$LW" search -n $F/nets/tied_mini.json -c p100-4x4 -g 4 --pin lm_head=c4 --pin embed=n4 --explain lm_head --json >"$TMP/xtie.json" 2>/dev/null
py "explain --json: the tied lm_head's tie_ms is within its transfer_in_ms, and > 0 where embed (n4) and lm_head (c4) disagree" '
import json, sys
a = json.load(open(sys.argv[1]))["alternatives"][0]
assert a["tie_ms"] > 0 and a["tie_bytes"] > 0, a
assert a["transfer_in_ms"] >= a["tie_ms"], a
' "$TMP/xtie.json"
# issue 37's check on the shipped Llama-2-7B: replicated it does not fit 80 GB, ZeRO-3 does (README)
expect_ok "fit llama2_7b -s data --sync ring on 8 H100s" fit -n llama2_7b -c h100-8x8 -g 8 --precision bf16 --optimizer adam -s data --sync ring --json
cp "$OUT" "$TMP/llama_ring.json"
expect_ok "fit llama2_7b -s data --sync zero3 on 8 H100s" fit -n llama2_7b -c h100-8x8 -g 8 --precision bf16 --optimizer adam -s data --sync zero3 --json
py "Llama-2-7B: ring does not fit at batch 1, zero3 fits a few sequences a GPU" '
import json,sys
r=json.load(open(sys.argv[1])); z=json.load(open(sys.argv[2]))
assert r["batch_per_gpu"] is None and r["min_peak_bytes_at_batch_1"] > 80*2**30, r
assert z["sync"]=="zero3" and z["batch_per_gpu"] >= 1 and z["peak_memory_bytes"] <= z["memory_limit_bytes"], z
' "$TMP/llama_ring.json" "$OUT"
expect_fail "fit -s FILE is refused: a baseline only" 2 "fit takes a baseline" -- fit -n lenet5 -c p100-4x4 -g 4 -s "$TMP/s.json"
expect_fail "fit -s megatron is refused as Megatron's plan, not as a file" 2 "not Megatron's plan" -- \
    fit -n $F/nets/tiny_gpt.json -c h100-8x8 -g 8 -s megatron
grep -q "not a file" "$ERR" && notok "fit -s megatron: no word of a file" "$(cat "$ERR")" || ok "fit -s megatron: no word of a file"
expect_fail "fit -s optimum is refused: fit searches for it without -s" 2 "fit without -s searches for it" -- \
    fit -n lenet5 -c p100-4x4 -g 4 -s optimum
expect_fail "fit -s data with --pin is refused" 2 "leave out --pin" -- fit -n lenet5 -c p100-4x4 -g 4 -s data --pin conv1=n4

# software stacks (issue 34, item 2): --stack on every command that prices a step
expect_ok "eval --stack lambda-pytorch" eval -n resnet50 -c dgx-a100 -g 1 --batch-per-gpu 256 --precision fp16 -s data --stack lambda-pytorch --json
cp "$OUT" "$TMP/st_lambda.json"
expect_ok "eval without a stack" eval -n resnet50 -c dgx-a100 -g 1 --batch-per-gpu 256 --precision fp16 -s data --json
py "Lambda's stack (GEMM scale fitted below 1) is slower than the cluster's own constants" '
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
assert a["images_per_s"] < 0.9 * b["images_per_s"], (a["images_per_s"], b["images_per_s"])
' "$TMP/st_lambda.json" "$OUT"
expect_ok "simulate --stack paper takes the stack's overlap (none: Eq. 1)" simulate -n lenet5 -c p100-4x4 -g 4 --stack paper --json
py "the paper's stack simulates without overlap, equal to Eq. 1" '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["overlap"] == "none" and abs(d["step_ms"] - d["eq1_ms"]) < 1e-6 * d["eq1_ms"], (d["overlap"], d["step_ms"], d["eq1_ms"])
' "$OUT"
expect_ok "allreduce takes --stack" allreduce -c dgx-a100 --stack tensorflow-ngc --json
expect_fail "an unknown stack is refused, naming the shipped ones" 2 "no stack of that name" "pytorch-ngc" -- eval -n lenet5 -c p100-4x4 -s data --stack nosuch
printf '{"format": "layerwise-stack/1", "name": "x",\n "grad_sync": "fp8"}\n' > "$TMP/badstack.json"
expect_fail "a bad stack file names its line, writes nothing" 2 "badstack.json:2" "\"grad_sync\" must be" -- eval -n lenet5 -c p100-4x4 -s data --stack "$TMP/badstack.json" -o "$TMP/never.json"
if [ ! -e "$TMP/never.json" ]; then ok "no output file after a bad stack"; else notok "no output file after a bad stack" ""; fi

# trust marks (issue 36, item 4): explain says when an unfitted constant decides
expect_ok "explain where t_c decides at bf16 (GEMM efficiency derived)" search -n alexnet -c dgx-a100 -g 8 --precision bf16 --explain fc7
if grep -q "t_c decides" "$OUT" && tr '\n' ' ' < "$OUT" | tr -s ' ' | grep -q "GEMM efficiency at bf16 is derived, not fitted"; then
    ok "explain names the derived GEMM efficiency behind t_c"; else notok "explain names the derived GEMM efficiency" "$(cat "$OUT")"; fi
expect_ok "explain where t_c decides at fp16 (fitted)" search -n alexnet -c dgx-a100 -g 8 --precision fp16 --explain fc7
if ! grep -q "not fitted" "$OUT"; then ok "a fitted constant is not flagged"; else notok "a fitted constant is not flagged" "$(cat "$OUT")"; fi

# ------------------------------------------------------------------ pipelines (issue 35)
expect_ok "search --pp 1 --json runs" search -n vgg16 -c p100-4x4 -g 16 --pp 1 --json
cp "$OUT" "$TMP/pp1.json"
expect_ok "search vgg16 --json runs (for --pp 1)" search -n vgg16 -c p100-4x4 -g 16 --json
py "search --pp 1 is the ordinary search: the same total, bit for bit, and the same configs" '
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
assert a["total_ms"] == b["total_ms"], (a["total_ms"], b["total_ms"])
pl=a["pipeline"]; assert pl["stages"] == 1 and a["microbatches"] == 1 and pl["bubble_fraction"] == 0, pl
cfg={l["name"]: l["config"] for l in a["stages"][0]["layers"]}
for l in b["layers"]: assert cfg[l["name"]] == l["config"], l["name"]
assert a["estimator"] == "eq1" and a["algorithm"] == "pipeline-dp"
' "$TMP/pp1.json" "$OUT"
expect_ok "search --pp 2 --microbatches 8 --json on tiny GPT" search -n $GPT -c dgx-a100 -g 8 --pp 2 --microbatches 8 --json
py "a pipeline document: stages tile the layers on disjoint groups; the step is Alpa's sum + (m-1) max" '
import json,sys
d=json.load(open(sys.argv[1])); pl=d["pipeline"]
assert d["schedule"] == "1f1b" and d["microbatches"] == 8 and len(d["stages"]) == 2, d
gpus=[g for s in d["stages"] for g in s["gpus"]]; assert len(gpus) == len(set(gpus)), gpus
t=[s["time_ms"] for s in d["stages"]]
tie=pl["tie_allreduce_ms"]; assert tie > 0, pl  # tiny GPT is tied: the embedding group across the stages, once a step
assert abs(pl["step_ms"] - (sum(t) + 7*max(t) + tie)) <= 1e-9*pl["step_ms"], (pl["step_ms"], t)
assert d["total_ms"] == pl["step_ms"]
assert d["stages"][0]["held_microbatches"] == 2 and d["stages"][1]["held_microbatches"] == 1
bub=1-sum(8*x for x in t)/(2*(pl["step_ms"]-tie)); assert abs(bub-pl["bubble_fraction"]) < 1e-12
' "$OUT"
expect_ok "search --pp 2 (text) runs" search -n $GPT -c dgx-a100 -g 8 --pp 2
if grep -q "bubble" "$OUT" && grep -q "^  2 " "$OUT"; then ok "the text lists the stages and the bubble"; else notok "the text lists the stages and the bubble" "$(cat "$OUT")"; fi
run search -n $GPT -c dgx-a100 -g 8 --pp 2 --precision bf16 --sync zero1
if head -1 "$OUT" | grep -q "batch 256, bf16 (zero1): optimal pipeline"; then ok "the pipeline's header names the precision and sync, as search's does"
else notok "the pipeline's header names the precision and sync, as search's does" "$(head -3 "$OUT")"; fi
expect_ok "search --pp 2 --schedule interleaved --vp 2 runs" search -n $GPT -c dgx-a100 -g 8 --pp 2 --schedule interleaved --vp 2 --microbatches 4 --json
py "interleaved: 4 chunks, chunk j on group j mod 2; T = sum T_g / v + (m - 1/v) max T_g over the groups' loads" '
import json,sys
d=json.load(open(sys.argv[1])); pl=d["pipeline"]; st=d["stages"]
assert d["schedule"] == "interleaved" and d["virtual_stages"] == 2 and pl["stages"] == 2 and pl["chunks"] == 4
assert [s["chunk"] for s in st] == [0,1,2,3] and [s["group"] for s in st] == [0,1,0,1], st
assert st[2]["gpus"] == st[0]["gpus"] and st[3]["gpus"] == st[1]["gpus"] and st[0]["gpus"] != st[1]["gpus"]
T=[sum(s["time_ms"] for s in st if s["group"] == g) for g in (0,1)]
assert abs(pl["step_ms"] - (sum(T)/2 + (4-0.5)*max(T) + pl["tie_allreduce_ms"])) <= 1e-9*pl["step_ms"], (pl["step_ms"], T)
assert st[3]["p2p_ms"] == 0 and st[1]["p2p_ms"] > 0
assert st[0]["memory_bytes"] == st[2]["memory_bytes"]
' "$OUT"
expect_ok "search interleaved under a memory limit runs" search -n gpt2 -c dgx-a100 -g 8 --pp 2 --schedule interleaved --vp 2 --microbatches 8 --memory-limit 7GiB --json
py "interleaved under 7GiB: a plan that fits, its groups holding the embedding copy of the table counted by the search (it once took a 7.41 GiB plan for fitting; then ran out of rounds)" '
import json,sys
d=json.load(open(sys.argv[1])); pl=d["pipeline"]
assert d["fits"] and pl["fits"] and pl["proven_optimal"], pl
assert d["peak_memory_bytes"] <= 7*2**30 and max(s["memory_bytes"] for s in d["stages"]) == d["peak_memory_bytes"], d["peak_memory_bytes"]
' "$OUT"
expect_ok "search --pp 2 interleaved (text) runs" search -n $GPT -c dgx-a100 -g 8 --pp 2 --schedule interleaved --vp 2 --microbatches 4
py "the text lists each chunk with its group" '
import sys,re
rows=[l.split() for l in open(sys.argv[1]) if re.match(r"^  [1-4] +[12] ", l)]
assert [(r[0], r[1]) for r in rows] == [("1","1"),("2","2"),("3","1"),("4","2")], rows
assert "chunk j on group j mod 2" in open(sys.argv[1]).read()
' "$OUT"
expect_ok "search interleaved --explain runs" search -n $GPT -c dgx-a100 -g 8 --pp 2 --schedule interleaved --vp 2 --microbatches 4 --explain block0.ln2
if grep -q "Chunk 2 runs on group 2" "$OUT" && grep -q "max T_g = .* (group [12])" "$OUT"; then ok "interleaved explain names the chunk's group and the slowest group"; else notok "interleaved explain names the chunk's group and the slowest group" "$(cat "$OUT")"; fi
expect_ok "search interleaved -o FILE writes the chunks" search -n $GPT -c dgx-a100 -g 8 --pp 2 --schedule interleaved --vp 2 --microbatches 4 -o "$TMP/il.json"
expect_ok "eval -s FILE reads the chunks back" eval -n $GPT -c dgx-a100 -g 8 -s "$TMP/il.json" --json
py "eval -s of an interleaved file: the same chunks, groups and step" '
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
assert a["pipeline"]["step_ms"] == b["pipeline"]["step_ms"], (a["pipeline"]["step_ms"], b["pipeline"]["step_ms"])
assert [(s["group"], s["gpus"], [l["name"] for l in s["layers"]]) for s in a["stages"]] == [(s["group"], s["gpus"], [l["name"] for l in s["layers"]]) for s in b["stages"]]
' "$TMP/il.json" "$OUT"
expect_ok "simulate -s FILE runs the chunks" simulate -n $GPT -c dgx-a100 -g 8 -s "$TMP/il.json" --json
py "simulate -s of an interleaved file: eq1 the file's step, a task per chunk and micro-batch each way" '
import json,sys
a=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2]))
assert d["eq1_ms"] == a["pipeline"]["step_ms"]
ks=[t for t in d["tasks"] if t["kind"] in ("forward","backward")]
assert sorted(set(t["network_chunk"] for t in ks)) == [0,1,2,3] and len(ks) == 2*4*4
assert all(t["network_chunk"] % 2 == t["stage"] - 1 for t in ks)
' "$TMP/il.json" "$OUT"
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
for s in d["stages"]: s.pop("group"); s.pop("chunk")
json.dump(d, open(sys.argv[2], "w"))
' "$TMP/il.json" "$TMP/il_old.json"
expect_fail "an interleaved file without groups (from before chunks) is refused, naming the stage" 2 "stages[0] has no \"group\"" -- eval -n $GPT -c dgx-a100 -g 8 -s "$TMP/il_old.json"
python3 -c '
import json,sys
d=json.load(open(sys.argv[1])); d["stages"][2]["gpus"] = d["stages"][1]["gpus"]
json.dump(d, open(sys.argv[2], "w"))
' "$TMP/il.json" "$TMP/il_bad.json"
expect_fail "an interleaved chunk on other GPUs than its group's is refused" 2 "stages[2] is chunk 2, on group 0" -- eval -n $GPT -c dgx-a100 -g 8 -s "$TMP/il_bad.json"
expect_ok "eval -s megatron --pp 2 --vp 2 on gpt2 runs" eval -n gpt2 -c dgx-a100 -g 8 -s megatron --tp 4 --pp 2 --schedule interleaved --vp 2 --microbatches 4 --json
py "Megatron interleaved: 12 blocks in 4 chunks of 3, chunk j on group j mod 2" '
import json,sys
d=json.load(open(sys.argv[1])); st=d["stages"]
assert [s["group"] for s in st] == [0,1,0,1] and [s["gpus"] for s in st] == [[0,1,2,3],[4,5,6,7]]*2
assert [s["layers"][0]["name"] for s in st[1:]] == ["block3.ln1", "block6.ln1", "block9.ln1"], [s["layers"][0]["name"] for s in st]
' "$OUT"
expect_fail "an interleaved chunk search past PIPE_MAX_DP_WORK is refused up front, naming -s megatron" 2 "the chunk search over 100 segments" -- search -n gpt2_xl -c h100-8x8 -g 32 --pp 4 --schedule interleaved --vp 2 --microbatches 8
expect_fail "--pp 5 --vp 2 (10 chunks) on 8 segments is refused" 2 "at most 8 chunks" -- search -n $GPT -c dgx-a100 -g 8 --pp 5 --schedule interleaved --vp 2
expect_ok "eval -s megatron --tp 2 --pp 2 --json runs" eval -n $GPT -c dgx-a100 -g 8 -s megatron --tp 2 --pp 2 --microbatches 4 --json
py "Megatron with --pp 2: two equal groups of 4, the blocks split evenly" '
import json,sys
d=json.load(open(sys.argv[1])); pl=d["pipeline"]
assert d["algorithm"] == "megatron"
assert [s["gpus"] for s in d["stages"]] == [[0,1,2,3],[4,5,6,7]], [s["gpus"] for s in d["stages"]]
assert d["stages"][1]["layers"][0]["name"] == "block1.ln1", d["stages"][1]["layers"][0]
' "$OUT"
expect_ok "simulate --pp 2 --json --trace runs" simulate -n $GPT -c dgx-a100 -g 8 --pp 2 --microbatches 4 --json --trace "$TMP/pp_trace.json"
py "simulate --pp: a task per (stage, micro-batch, forward/backward), syncs last; the trace names the micro-batch" '
import json,sys
d=json.load(open(sys.argv[1])); tr=json.load(open(sys.argv[2]))
assert d["format"] == "layerwise-sim/1" and d["estimator"] == "simulated" and d["microbatches"] == 4
ks=[t for t in d["tasks"] if t["kind"] in ("forward","backward")]
assert len(ks) == 2*2*4 and sorted(set(t["microbatch"] for t in ks)) == [0,1,2,3]
assert max(t["end_ms"] for t in d["tasks"]) == d["step_ms"]
assert 0 < d["bubble_fraction"] < 1 and len(d["gpu_busy_ms"]) == sum(len(s["gpus"]) for s in d["stages"])
names=[e["name"] for e in tr["traceEvents"]]
assert any(n.startswith("forward mb3 stage 2") for n in names) and any(n.startswith("backward mb0 stage 1") for n in names), names[:5]
' "$OUT" "$TMP/pp_trace.json"
expect_fail "simulate --pp with -s data is refused" 2 "pipeline option" -- simulate -n $GPT -c dgx-a100 -g 8 --pp 2 -s data
expect_ok "simulate --pp 2 interleaved --vp 2 runs" simulate -n $GPT -c dgx-a100 -g 8 --pp 2 --schedule interleaved --vp 2 --microbatches 4 --json --trace "$TMP/pp_trace2.json"
py "simulate interleaved: v chunks per group, each named in the trace" '
import json,sys
d=json.load(open(sys.argv[1])); tr=json.load(open(sys.argv[2]))
ks=[t for t in d["tasks"] if t["kind"] in ("forward","backward")]
assert len(ks) == 2*2*4*2 and sorted(set(t["chunk"] for t in ks)) == [1,2]
assert any(e["name"].startswith("backward mb3 stage 1 chunk 2") for e in tr["traceEvents"])
assert any(e["name"] == "backward mb3 stage 1 chunk 2 (network chunk 3)" for e in tr["traceEvents"])
' "$OUT" "$TMP/pp_trace2.json"
expect_ok "search --pp 2 -o FILE writes a strategy file with stages" search -n $GPT -c dgx-a100 -g 8 --pp 2 --microbatches 4 -o "$TMP/pp2.json"
expect_ok "eval -s FILE with stages reads it back" eval -n $GPT -c dgx-a100 -g 8 -s "$TMP/pp2.json" --json
py "a layerwise-strategy/2 file: stages, microbatches, schedule; eval gives the same step bit for bit" '
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
assert a["format"] == "layerwise-strategy/2" and a["microbatches"] == 4 and a["schedule"] == "1f1b"
assert all(set(s) >= {"layers","gpus"} for s in a["stages"]) and "layers" not in a
assert b["total_ms"] == a["total_ms"] and b["algorithm"] == "file", (a["total_ms"], b["total_ms"])
assert [s["gpus"] for s in a["stages"]] == [s["gpus"] for s in b["stages"]]
' "$TMP/pp2.json" "$OUT"
expect_ok "simulate -s FILE with stages runs" simulate -n $GPT -c dgx-a100 -g 8 -s "$TMP/pp2.json" --json
expect_ok "search --pp 2 --explain LAYER --json runs" search -n $GPT -c dgx-a100 -g 8 --pp 2 --microbatches 4 --explain block0.ln1 --json
py "search --pp --explain: the layer's stage, each boundary move one cut earlier and later priced, none faster" '
import json,sys
d=json.load(open(sys.argv[1])); x=d["explain"]
assert x["layer"] == "block0.ln1" and x["stage"] == 1 and x["step_ms"] == d["total_ms"]
ms=[m for m in x["moves"] if m["allowed"]]
assert [m["direction"] for m in x["moves"]] == ["earlier","later"] and ms
tie=d["pipeline"]["tie_allreduce_ms"]  # the moves keep the embedding in stage 1, the LM head in stage 2
for m in ms:
    assert abs(m["sum_t_ms"] + 3*m["max_t_ms"] + tie - m["step_ms"]) < 1e-9 and m["step_ms"] >= d["total_ms"] * (1 - 1e-12), m
' "$OUT"
expect_ok "search --pp 2 --explain LAYER (text)" search -n $GPT -c dgx-a100 -g 8 --pp 2 --microbatches 4 --explain block0.ln1
py "the text says the stage and the step of each move" '
import sys
t=open(sys.argv[1]).read()
assert "block0.ln1 sits in stage 1 of 2" in t and "one allowed cut earlier" in t and "T = " in t, t
' "$OUT"
expect_fail "search --pp --explain of no layer is refused" 2 "is not a layer" -- search -n $GPT -c dgx-a100 -g 8 --pp 2 --explain nosuch
expect_ok "export --pp 2 draws the stages as clusters" export -n $GPT -c dgx-a100 -g 8 --pp 2 --microbatches 4 -o "$TMP/pp2.dot"
py "export --pp: a cluster per stage with its GPUs and t_i, an edge between them, the step in the title" '
import json,re,sys
dot=open(sys.argv[1]).read(); a=json.load(open(sys.argv[2]))
for i,s in enumerate(a["stages"]):
    assert "subgraph cluster_stage%d" % (i+1) in dot, i
    assert "stage %d: GPUs %d-%d, t%d = " % (i+1, s["gpus"][0], s["gpus"][-1], i+1) in dot, i
assert "stage1 -> stage2" in dot and "pipeline of 2 stages x 4 micro-batches (1f1b): %.2f ms" % a["total_ms"] in dot
' "$TMP/pp2.dot" "$TMP/pp2.json"
expect_ok "export -s megatron --tp 2 --pp 2 draws Megatron's equal stages" export -n $GPT -c dgx-a100 -g 8 -s megatron --tp 2 --pp 2 --microbatches 4 -o "$TMP/pp2m.dot"
py "export -s megatron --pp 2: two clusters of 4 GPUs" '
import sys
dot=open(sys.argv[1]).read()
assert "stage 1: GPUs 0-3" in dot and "stage 2: GPUs 4-7" in dot
' "$TMP/pp2m.dot"
expect_fail "export --pp with --view graph is refused" 2 "view strategy" -- export -n $GPT -c dgx-a100 -g 8 --pp 2 --view graph -o "$TMP/x.dot"
expect_fail "export --pp with a strategy file is refused" 2 "pipeline option" -- export -n lenet5 -c p100-4x4 -g 4 --pp 2 -s $F/strategies/lenet5_mixed.json -o "$TMP/x.dot"
expect_ok "an old layerwise-strategy/1 file still loads beside them" eval -n lenet5 -c p100-4x4 -g 4 -s $F/strategies/lenet5_mixed.json --json
python3 - "$TMP/pp2.json" "$TMP/pp_bad_cut.json" "$TMP/pp_bad_gpus.json" "$TMP/pp_bad_cfg.json" <<'PYEOF'
import json,sys
a=json.load(open(sys.argv[1]))
b=json.loads(json.dumps(a)); s0,s1=b["stages"]
# move block0.add1's successor across the cut so the stage ends inside a residual branch
s1["layers"].insert(0, s0["layers"].pop())
while not s0["layers"][-1]["name"].endswith("attn"): s1["layers"].insert(0, s0["layers"].pop())
json.dump(b, open(sys.argv[2],"w"))
c=json.loads(json.dumps(a)); c["stages"][1]["gpus"]=[3,4,5]; json.dump(c, open(sys.argv[3],"w"))
d=json.loads(json.dumps(a)); d["stages"][0]["layers"][1]["config"]={"q": 2}; json.dump(d, open(sys.argv[4],"w"))
PYEOF
expect_fail "a stage ending where two tensors cross is refused" 2 "pp_bad_cut.json" "more than one tensor crosses" -- eval -n $GPT -c dgx-a100 -g 8 -s "$TMP/pp_bad_cut.json"
expect_fail "a stage on an unaligned group is refused" 2 "pp_bad_gpus.json" "stages[1].gpus" -- eval -n $GPT -c dgx-a100 -g 8 -s "$TMP/pp_bad_gpus.json"
expect_fail "a bad config in a stage is refused, naming the stage" 2 "stages[0]" "unknown dimension" -- eval -n $GPT -c dgx-a100 -g 8 -s "$TMP/pp_bad_cfg.json"
expect_fail "a pipeline search this machine cannot finish is refused up front" 2 "more than this machine finishes" -- search -n gpt2_xl -c $F/clusters/h100-128x8.json --pp 64
expect_fail "--pp 0 is refused" 2 "--pp" -- search -n $GPT -c dgx-a100 -g 8 --pp 0
expect_fail "--pp larger than the GPU count is refused" 2 "more stages than GPUs" -- search -n $GPT -c dgx-a100 -g 4 --pp 8
expect_fail "--pp larger than the segments is refused" 2 "at most" -- search -n lenet5 -c p100-4x4 -g 16 --pp 16
expect_fail "--microbatches not dividing the batch is refused" 2 "does not divide the batch" -- search -n $GPT -c dgx-a100 -g 8 --pp 2 --microbatches 3
expect_fail "--microbatches without --pp is refused" 2 "give the stages with --pp" -- search -n $GPT -c dgx-a100 -g 8 --microbatches 4
expect_fail "--schedule with a bad name is refused" 2 "gpipe, 1f1b or interleaved" -- search -n $GPT -c dgx-a100 -g 8 --pp 2 --schedule zigzag
expect_fail "--vp without interleaved is refused" 2 "--schedule interleaved" -- search -n $GPT -c dgx-a100 -g 8 --pp 2 --vp 2
expect_fail "interleaved without --vp is refused" 2 "--vp" -- search -n $GPT -c dgx-a100 -g 8 --pp 2 --schedule interleaved
expect_ok "search --pp 2 at 8 GPUs (for scale --pp)" search -n $GPT -c dgx-a100 -g 8 --pp 2 --microbatches 4 --json
cp "$OUT" "$TMP/pp8.json"
expect_ok "scale --pp 2 --json runs" scale -n $GPT -c dgx-a100 --gpus 1,4,8 --pp 2 --microbatches 4 --json
py "scale --pp: a pipeline row after each count, search --pp's step at 8, why not at 1" '
import json,sys
d=json.load(open(sys.argv[1])); s=json.load(open(sys.argv[2])); rows=d["rows"]
ps=[i for i,r in enumerate(rows) if r["strategy"] == "pipeline"]
assert [rows[i]["gpus"] for i in ps] == [1,4,8], ps
for i in ps: assert rows[i-1]["gpus"] == rows[i]["gpus"] and rows[i-1]["strategy"] == "layer-wise" and rows[i]["pp"] == 2
one=rows[ps[0]]
assert one["total_ms"] is None and "2 stages do not divide 1 GPU" in one["why_not"], one
eight=rows[ps[2]]
assert eight["microbatches"] == 4 and eight["schedule"] == "1f1b" and eight["fits"] is True, eight
assert abs(eight["total_ms"] - s["total_ms"]) <= 1e-9 * s["total_ms"], (eight["total_ms"], s["total_ms"])
base=[r for r in rows if r["gpus"] == 1 and r["strategy"] == "layer-wise"][0]["images_per_s"]
assert abs(eight["speedup"] - eight["images_per_s"] / base) < 1e-9 and eight["estimator"] == "eq1" and 0 < eight["mfu"] < 1
' "$OUT" "$TMP/pp8.json"
expect_ok "scale --pp 2 (text) runs" scale -n $GPT -c dgx-a100 --gpus 1,8 --pp 2 --microbatches 3 --schedule gpipe
if grep -q "^    1  pipeline  .*(2 stages do not divide 1 GPU)" "$OUT" && grep -q "^  8 GPUs: none: --microbatches 3 does not divide the batch" "$OUT"; then
    ok "scale's text says why a count has no pipeline"
else notok "scale's text says why a count has no pipeline" "$(grep -i pipeline "$OUT")"; fi
if grep -q "batch 32 per GPU" "$OUT" && ! grep -q "batch 0 per GPU" "$OUT"; then
    ok "scale's header names the default batch per GPU (32, was printed 0)"
else notok "scale's header names the default batch per GPU (32, was printed 0)" "$(head -n 1 "$OUT")"; fi
expect_ok "scale --pp 2 --microbatches 4 (text) runs" scale -n $GPT -c dgx-a100 --gpus 8 --pp 2 --microbatches 4
if grep -q "^    8  pipeline " "$OUT" && grep -q "^  8 GPUs: 2 stages x 4 micro-batches (1f1b), bubble" "$OUT"; then
    ok "scale's text has the pipeline row"; else notok "scale's text has the pipeline row" "$(grep -i pipeline "$OUT")"; fi
expect_ok "scale --pp 2 at 1024 GPUs runs" scale -n $GPT -c $F/clusters/h100-128x8.json --gpus 1024 --pp 2 --microbatches 4 --json
py "scale --pp: stages past 256 GPUs are not searched, and it says so" '
import json,sys
r=[r for r in json.load(open(sys.argv[1]))["rows"] if r["strategy"] == "pipeline"]
assert len(r) == 1 and r[0]["total_ms"] is None and "stages of 512 GPUs, past the 256 that scale searches" in r[0]["why_not"], r
' "$OUT"
expect_fail "scale --microbatches without --pp is refused" 2 "give the stages with --pp" -- scale -n $GPT -c dgx-a100 --gpus 8 --microbatches 4
expect_ok "compare --pp 2 --tp 2 --json runs" compare -n $GPT -c dgx-a100 -g 8 --pp 2 --tp 2 --json
py "compare --pp: the optimal pipeline and Megatron's beside the rows, the search never slower" '
import json,sys
d=json.load(open(sys.argv[1])); ps={r["strategy"]: r for r in d["pipelines"]}
assert set(ps) == {"pipeline","megatron"} and all(r["pp"] == 2 and r["estimator"] == "eq1" for r in ps.values())
assert ps["pipeline"]["total_ms"] <= ps["megatron"]["total_ms"] * (1 + 1e-12), ps
assert [r["strategy"] for r in d["rows"]][-1] == "layer-wise"
' "$OUT"
expect_ok "compare --pp 2 (text) runs" compare -n $GPT -c dgx-a100 -g 8 --pp 2 --tp 2
if grep -q "^megatron .* 2 " "$OUT" && grep -q "^pipeline " "$OUT"; then ok "compare's text lists the pipelines"; else notok "compare's text lists the pipelines" "$(tail -5 "$OUT")"; fi
# compare --pp P where Megatron's P equal stages do not exist (2 blocks, P = 8): the optimal pipeline still, and why
# Megatron's is missing (the whole command failed, exit 2, after its searches)
expect_ok "compare --pp 8 on 2 blocks runs" compare -n $GPT -c dgx-a100 -g 8 --pp 8 --json
py "compare --pp 8: the optimal pipeline, and Megatron's row says why there is none" '
import json,sys
d=json.load(open(sys.argv[1])); ps={r["strategy"]: r for r in d["pipelines"]}
assert ps["pipeline"]["pp"] == 8 and ps["pipeline"]["total_ms"] > 0, ps
assert ps["megatron"]["total_ms"] is None and "not a multiple of 8" in ps["megatron"]["why_not"], ps
' "$OUT"
expect_fail "--pp with --pin is refused" 2 "--pp goes without" -- search -n $GPT -c dgx-a100 -g 8 --pp 2 --pin embed=n8
expect_fail "eval -s megatron --pp 3 on 2 blocks is refused" 2 "not a multiple of 3" -- eval -n $GPT -c dgx-a100 -g 6 -s megatron --tp 2 --pp 3 --microbatches 4

finish
