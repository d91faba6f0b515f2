#!/usr/bin/env python3
"""Fits each shipped GPU's efficiency constants to published single-GPU
training throughputs (make calibrate), and prints every row's error.

Only data/published/single-gpu.json rows with "fit" not false are used, and
only single-GPU ones: multi-GPU figures judge the model (make validate), they
never tune it. One constant set per GPU and precision; nothing per network.
The physical constants (peak per precision, memory bandwidth) come from
datasheets and are not touched. Every evaluation runs the real program
(LW, default build/layerwise): eval -s data -g 1 on a copy of the cluster
file with the trial constants.

What is fitted per (cluster, precision) group is listed in GROUPS. Every
group has one network (ResNet-50) at one or two batch sizes, which pins one
number: the GEMM (conv and linear) efficiency, found by bisection where the
largest over- and under-prediction balance. The P100 (PAPER_GROUP) is
fitted as issue 3 fitted it, to the paper's three one-GPU figures alone
(rows labelled "paper "), which make reproduce and tests/test_paper.c hold
within 10%: a grid over the convolution efficiency, the Winograd saving and
the half-saturation work (PAPER_GRID), with the per-step overhead solved for
each point (it adds the same milliseconds to every one-GPU step), keeping
the point whose largest |log error| is least. Its TensorFlow rows are
printed beside them, not fitted: no constant set of this roofline puts both
the paper's and TensorFlow 1.x's Inception-v3 within 15% (TensorFlow's is
slower than its VGG-16 per FLOP by far more than any per-kernel term
explains), so fitting them would trade the paper's figures for TensorFlow's.

  python3 tests/calibrate.py            fit, print rows and constants, and
                                        exit 1 if a shipped file differs
  python3 tests/calibrate.py --write    fit and write the constants into
                                        data/clusters/*.json
  ... [CLUSTER...]                      only these clusters' groups
"""
import concurrent.futures
import copy
import json
import math
import os
import subprocess
import sys
import tempfile

LW = os.environ.get("LW", "build/layerwise")
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
ROWS = os.path.join(DATA, "published", "single-gpu.json")

# Cluster files of the same GPU chip with another memory part: a sibling
# shares every fitted constant of its reference (the efficiencies belong to
# the chip; memory size and bandwidth to the part, from its datasheet), and
# its rows fit and judge the reference's groups, each priced on its own
# file. NVIDIA's and Lambda's A100 figures are of the 80 GB part (2,039 GB/s),
# the shipped dgx-a100 is the 40 GB one (1,555 GB/s).
SIBLINGS = {"dgx-a100-80g": "dgx-a100"}
# What a sibling takes from its reference's gpu block (the rest is its own).
SHARED_GPU_KEYS = ("efficiency", "winograd_speedup", "kernel_overhead_us", "saturation_gflop", "step_overhead_ms",
                   "memory_efficiency", "precisions")


def chip(cluster):
    """The cluster whose constants a row's cluster uses (itself unless a sibling)."""
    return SIBLINGS.get(cluster, cluster)


def sibling_doc(name, ref):
    """The sibling cluster file name with the reference document's constants."""
    doc = json.load(open(os.path.join(DATA, "clusters", name + ".json")))
    for k in SHARED_GPU_KEYS:
        if k in ref["gpu"]:
            doc["gpu"][k] = copy.deepcopy(ref["gpu"][k])
    return doc


# (cluster, precision) -> [(constant, lo, hi)], one constant; a constant is a key of the
# precision's block (fp32: the gpu's own fields), "conv" and "linear" are
# efficiency.conv and efficiency.linear, and "gemm" sets both (cuDNN's and
# cuBLAS's GEMMs run on the same units; ResNet-50 alone cannot tell them
# apart).
GROUPS = {
    ("dgx1-v100", "fp32"): [("gemm", 0.2, 1.0)],
    ("dgx1-v100", "fp16"): [("gemm", 0.1, 1.0)],
    ("dgx-a100", "tf32"): [("gemm", 0.1, 1.0)],
    ("dgx-a100", "fp16"): [("gemm", 0.1, 1.0)],
    ("h100-8x8", "tf32"): [("gemm", 0.05, 1.0)],
    ("workstation-4x-pcie", "tf32"): [("gemm", 0.1, 1.0)],
    ("workstation-4x-pcie", "fp16"): [("gemm", 0.1, 1.0)],
}
PAPER_GROUP = ("p100-4x4", "fp32")
# conv efficiency (fraction of FP32 peak), Winograd saving on 3x3 stride-1
# convolutions (none, up to F(4x4,3x3)'s arithmetic 4), half-saturation
# GFLOP; the per-step overhead is solved on a 0.1 ms grid from 0 to 60 ms.
PAPER_GRID = ([0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95],
              [1.0, 1.5, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0],
              [0.5, 1.0, 1.75, 2.5, 3.5])
PAPER_CONSTANTS = ("conv", "winograd_speedup", "saturation_gflop", "step_overhead_ms")
# Groups without a published figure (or whose only figure is held) derive
# their GEMM efficiency from fitted groups, at the datasheet ratio of the
# peaks (each file's sources say so): target -> (numerator groups,
# denominator groups), efficiency = product(numerators) / product(denominators).
# - bf16 runs at the fp16 Tensor Core rate: fp16's efficiency.
# - H100 fp16: CONV_FROM, below.
# - plain fp32 on Ampere and Hopper, which nobody publishes (frameworks run
#   TF32): the A100's FP32 units are Volta's at the datasheet's 19.5 vs 15.7
#   TFLOPS (the V100's efficiency); the H100 loses against its datasheet what
#   its TF32 loses against the A100's (fitted TF32 efficiencies' ratio); the
#   RTX A6000's 38.7 TFLOPS is dual-issue FP32 that GEMMs do not reach, so its
#   TF32 efficiency (FP32 at the datasheet's half of TF32; a tf32 convolution
#   takes the faster of its Tensor Core and FP32 algorithms, as cuDNN does).
DERIVED = {
    ("dgx-a100", "fp32"): ([("dgx1-v100", "fp32")], []),
    ("dgx-a100", "bf16"): ([("dgx-a100", "fp16")], []),
    ("h100-8x8", "fp32"): ([("dgx1-v100", "fp32"), ("h100-8x8", "tf32")], [("dgx-a100", "tf32")]),
    ("h100-8x8", "bf16"): ([("h100-8x8", "fp16")], []),
    ("workstation-4x-pcie", "fp32"): ([("workstation-4x-pcie", "tf32")], []),
    ("workstation-4x-pcie", "bf16"): ([("workstation-4x-pcie", "fp16")], []),
}
# Transformer rows ("family": "transformer" in single-gpu.json, issue 32)
# fit the GPU's linear efficiency alone: a transformer's time is its cuBLAS
# GEMMs (QKV, projection, MLP, head: efficiency.linear, which attention's
# matmuls share), which on Tensor Cores run far nearer the datasheet than
# cuDNN's implicit-GEMM convolutions do (BERT-large trains at about 0.6 of
# the A100's TF32 rate where ResNet-50 reaches 0.33). The conv efficiency is
# fitted first ("gemm", on the CNN rows), then linear on the transformer rows.
LINEAR_FIT = {("dgx-a100", "tf32"), ("dgx-a100", "fp16"), ("dgx1-v100", "fp32"), ("dgx1-v100", "fp16")}
# Groups with no transformer figure: their linear efficiency is the A100's
# at the same precision times the ratio of the two GPUs' fitted TF32 conv
# efficiencies (the GPU's GEMMs lose or gain against the A100's what its
# ResNet-50 does on NVIDIA-comparable stacks). TF32, not each
# precision's own conv figure: the RTX A6000's only AMP figure is Lambda's
# stack, which runs 31-36% below NVIDIA's, and taking it would make the
# A6000's transformer GEMMs slower in fp16 than in tf32; the H100's fp16 conv
# efficiency is fitted under Lambda's stack, whose scale moves with every refit
# of the V100's and A100's AMP rows, so its TF32 ratio is the steadier guide too.
# A derived efficiency is capped at 1, the datasheet peak (the RTX A6000's
# TF32 conv efficiency is 1.5 times the A100's, whose linear one is 0.7).
# target -> (reference group, [numerator groups], [denominator groups]).
LINEAR_FROM = {
    ("h100-8x8", "tf32"): (("dgx-a100", "tf32"), [("h100-8x8", "tf32")], [("dgx-a100", "tf32")]),
    ("workstation-4x-pcie", "tf32"): (("dgx-a100", "tf32"), [("workstation-4x-pcie", "tf32")], [("dgx-a100", "tf32")]),
    ("workstation-4x-pcie", "fp16"): (("dgx-a100", "fp16"), [("workstation-4x-pcie", "tf32")], [("dgx-a100", "tf32")]),
    ("h100-8x8", "fp16"): (("dgx-a100", "fp16"), [("h100-8x8", "tf32")], [("dgx-a100", "tf32")]),
}
# The H100's fp16 GEMM efficiency: its only AMP row is Lambda's, whose runs
# keep NCHW tensors (the stack's "conv_layout") and whose fp16 scale
# Lambda's V100 and A100 rows fit. Fitted on that row, the efficiency fell to
# 0.18 (an H100 slower than an A100 in fp16 under NVIDIA's stack, which
# test_precision refuses): one row under a layout the model prices only
# roughly cannot pin it. So it is the A100's fp16 efficiency times the ratio
# of the H100's and the A100's fitted TF32 efficiencies (both datasheets give
# dense fp16 Tensor Cores twice the TF32 rate: 989 vs 494.7, 312 vs 156
# TFLOPS), and Lambda's H100 AMP row judges the model (make validate: not
# fitted). The RTX A6000's fp16, whose only row is Lambda's too, stays
# fitted (GROUPS): it orders correctly. Its linear efficiency is
# LINEAR_FROM's. target -> (numerator groups, denominator groups).
CONV_FROM = {
    ("h100-8x8", "fp16"): ([("h100-8x8", "tf32"), ("dgx-a100", "fp16")], [("dgx-a100", "tf32")]),
}
DIGITS = 3  # constants are written with this many significant digits
SATURATION_US = 20  # a GEMM reaches half its efficiency at the work of this many microseconds


def transformer(row):
    return row.get("family") == "transformer"


def tolerance(row):
    return 0.10 if row["label"].startswith("paper ") else 0.15


def block(doc, prec):
    g = doc["gpu"]
    return g if prec == "fp32" else g["precisions"][prec]


def get(doc, prec, name):
    b = block(doc, prec)
    if name in ("conv", "linear", "gemm"):
        key = "conv" if name == "gemm" else name
        return b.get("efficiency", {}).get(key, doc["gpu"]["efficiency"][key])
    return b.get(name, doc["gpu"].get(name))


def put(doc, prec, name, value):
    b = block(doc, prec)
    if name in ("conv", "linear", "gemm"):
        eff = b.setdefault("efficiency", {})
        for key in ("conv", "linear"):
            if name in (key, "gemm"):
                eff[key] = value
        if name == "gemm":
            # half-saturation work: what the GPU does in SATURATION_US at the
            # fitted GEMM rate, so a small GEMM pays about SATURATION_US more
            # whatever the precision's peak
            b["saturation_gflop"] = rounded(b["peak_tflops"] * value * SATURATION_US * 1e-3)
    else:
        b[name] = value


def stack_args(r, stacks):
    """--stack for a row: its stack's trial document (stacks, written to a
    temporary file by predict) or the shipped file; none for a row without."""
    if "stack" not in r:
        return []
    if stacks and r["stack"] in stacks:
        return ["--stack", stacks[r["stack"]]]
    return ["--stack", os.path.join(DATA, "stacks", r["stack"] + ".json")]


def attention_args(r):
    """--attention for a row that names the attention kernel its code ran
    (standard: unfused, the scores through memory; flash: fused)."""
    return ["--attention", r["attention"]] if "attention" in r else []


def predict(cluster_doc, rows, stacks=None):
    """images/s of each row with these constants (the rows share a cluster),
    each under its stack (stacks: name -> trial document, else the file)."""
    paths, cpaths = {}, {}
    for cn in {r["cluster"] for r in rows}:  # the reference's own file, or a sibling's with its constants
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(cluster_doc if cn == cluster_doc["name"] else sibling_doc(cn, cluster_doc), f)
            cpaths[cn] = f.name
    for name, doc in (stacks or {}).items():
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(doc, f)
            paths[name] = f.name
    try:
        def one(r):
            out = subprocess.run([LW, "eval", "-n", r["net"], "-c", cpaths[r["cluster"]], "-g", "1", "--batch-per-gpu",
                                  str(r["batch_per_gpu"]), "--precision", r["precision"], "-s", "data", "--json",
                                  *stack_args(r, paths), *attention_args(r)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"calibrate: {r['label']}: layerwise eval failed: {out.stderr.strip()}")
            return json.loads(out.stdout)["images_per_s"]
        with concurrent.futures.ThreadPoolExecutor(4) as ex:
            return list(ex.map(one, rows))
    finally:
        for p in [*cpaths.values(), *paths.values()]:
            os.unlink(p)


def predict_across(clusters, rows, stacks=None):
    """predict over rows of several clusters (clusters: name -> document)."""
    out = [None] * len(rows)
    for cn in {chip(r["cluster"]) for r in rows}:
        idx = [i for i, r in enumerate(rows) if chip(r["cluster"]) == cn]
        for i, p in zip(idx, predict(clusters[cn], [rows[i] for i in idx], stacks)):
            out[i] = p
    return out


def score(doc, rows, stacks=None):
    pred = predict(doc, rows, stacks)
    return max(abs(math.log(p / r["published"])) / tolerance(r) for p, r in zip(pred, rows)), pred


def rounded(x):
    return float(f"{x:.{DIGITS}g}")


def bisect(lo, hi, balance):
    """The value in [lo, hi] where balance (growing with it) crosses 0."""
    a, b = lo, hi
    for _ in range(14):
        m = math.sqrt(a * b)
        if balance(m) > 0:
            b = m
        else:
            a = m
    return rounded(math.sqrt(a * b))


def spread(pred, rows):
    logs = [math.log(p / r["published"]) for p, r in zip(pred, rows)]
    return max(logs) + min(logs)


def fit_one(doc, prec, name, lo, hi, rows, tied=(), stacks=None):
    """One constant that throughput grows with (an efficiency): bisection
    for the value where the largest over- and under-prediction balance,
    which minimises the largest |log error|. Each row runs under its stack."""
    doc = copy.deepcopy(doc)

    def set_all(v):
        put(doc, prec, name, v)
        for p in tied:  # a same-GPU precision that copies this one moves with it (a tf32 conv may run fp32's kernels)
            put(doc, p, name, v)
    v = bisect(lo, hi, lambda v: (set_all(v), spread(predict(doc, rows, stacks), rows))[1])
    set_all(v)
    return doc, score(doc, rows, stacks)[0]


# Software stacks (data/stacks/): a GPU's constants are its reference
# stack's (NVIDIA's containers; the paper's framework for the P100), and a
# stack's own constants are fitted on its own single-GPU rows only:
# - STACK_GROUPS: (stack, precision) -> its GEMM scale at that precision,
#   fitted by bisection on the stack's rows on GPUs whose constants at that
#   precision other stacks' rows fit (so the two are not fitted to the same
#   rows); tied precisions copy it. A GPU group whose only rows are such a
#   stack's (H100 and RTX A6000 fp16: Lambda's alone) is fitted after it,
#   on those rows under the fitted stack.
# - STACK_GRID: a stack fitted like the paper's P100, on a grid: its
#   per-kernel overhead and fp32 GEMM scale, the per-step overhead solved
#   for each point (TensorFlow 1.x on its P100 rows; the P100's constants
#   stay the paper's).
STACK_GROUPS = {
    ("lambda-pytorch", "fp16"): (0.2, 2.0, ("bf16",)),
}
STACK_GRID = {
    ("tensorflow-1.x", "fp32"): {"kernel_overhead_us": [4, 8, 16, 24, 32, 48, 64],
                                 "winograd_speedup": [1.0, 1.5, 2.0, 2.25, 2.5, 2.75, 3.0, 3.5],
                                 "gemm_scale": [0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2]},
}


def stack_doc(name):
    return json.load(open(os.path.join(DATA, "stacks", name + ".json")))


def stack_fitted(r):
    """A row that fits its stack's constants: a STACK_GRID stack's, or a
    STACK_GROUPS stack's on a GPU whose constants at that precision other
    stacks' rows fit (GROUPS); on a GPU whose constants are derived there
    (CONV_FROM) the stack's row judges the model."""
    key = (r.get("stack"), r["precision"])
    return key in STACK_GRID or (key in STACK_GROUPS and (chip(r["cluster"]), r["precision"]) in GROUPS)


def fit_stack_scale(stacks, clusters, key, rows):
    """The GEMM scale of STACK_GROUPS[key] on rows (several GPUs): stacks
    (name -> document) gets the fitted value. Prints the line."""
    name, prec = key
    lo, hi, tied = STACK_GROUPS[key]
    doc = stacks.setdefault(name, stack_doc(name))
    old = doc.get("gemm_scale", {}).get(prec, 1)

    def set_all(v):
        for p in (prec, *tied):
            doc.setdefault("gemm_scale", {})[p] = v
    v = bisect(lo, hi, lambda v: (set_all(v), spread(predict_across(clusters, rows, stacks), rows))[1])
    set_all(v)
    print(f"{'stack ' + name + ' ' + prec:28} {'gemm_scale':18} {old:9.4g} {v:9.4g}{'' if old == v else '   <- differs'}")
    return old == v


def best_with_overhead(points, steps, rows):
    """The grid point and per-step overhead (0 to 60 ms by 0.1) that
    minimise the largest |log error| / tolerance, given each point's step
    times without overhead: (error, point + (overhead,))."""
    best = None
    for point, t in zip(points, steps):
        for k in range(601):
            s = k / 10
            err = max(abs(math.log(r["batch_per_gpu"] * 1e3 / (ti + s) / r["published"])) / tolerance(r)
                      for r, ti in zip(rows, t))
            if best is None or err < best[0] - 1e-12:
                best = (err, point + (s,))
    return best


def fit_stack_grid(stacks, doc, key, rows):
    """STACK_GRID[key]: every point of its grid (gemm_scale is the
    precision's), the per-step overhead solved on a 0.1 ms grid, least
    largest |log error| / tolerance. stacks gets the fitted document; True
    if it equals the shipped one."""
    name, prec = key
    sdoc = stacks.setdefault(name, stack_doc(name))
    axes = list(STACK_GRID[key])

    def val(d, n):
        return d.get("gemm_scale", {}).get(prec, 1) if n == "gemm_scale" else d.get(n)

    def put_val(d, n, v):
        if n == "gemm_scale":
            d.setdefault("gemm_scale", {})[prec] = v
        else:
            d[n] = v
    old = [val(sdoc, n) for n in axes + ["step_overhead_ms"]]
    points = [()]
    for n in axes:
        points = [p + (v,) for p in points for v in STACK_GRID[key][n]]

    def step_ms(point):
        trial = copy.deepcopy(sdoc)
        for n, v in zip(axes + ["step_overhead_ms"], point + (0,)):
            put_val(trial, n, v)
        return [r["batch_per_gpu"] * 1e3 / p for r, p in zip(rows, predict(doc, rows, {name: trial}))]
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        steps = list(ex.map(step_ms, points))
    best = best_with_overhead(points, steps, rows)
    for n, v in zip(axes + ["step_overhead_ms"], best[1]):
        put_val(sdoc, n, v)
    new = [val(sdoc, n) for n in axes + ["step_overhead_ms"]]
    for n, a, b in zip(axes + ["step_overhead_ms"], old, new):
        print(f"{'stack ' + name + ' ' + prec:28} {n:18} {a if a is not None else -1:9.4g} {b:9.4g}"
              f"{'' if a == b else '   <- differs'}")
    return old == new


def fit_paper_grid(doc, prec, rows):
    """Issue 3's joint fit of the P100's constants to the paper's one-GPU
    rows: every point of PAPER_GRID run with no per-step overhead, then the
    overhead that minimises the largest |log error| / tolerance added (at one
    GPU it adds the same time to every step). Returns the fitted document."""
    points = [(c, w, h) for c in PAPER_GRID[0] for w in PAPER_GRID[1] for h in PAPER_GRID[2]]
    # the paper's stack is the P100's reference: its overheads are the
    # GPU's (main copies the fitted per-step overhead into data/stacks/paper.json)
    rows = [{k: v for k, v in r.items() if k != "stack"} for r in rows]

    def step_ms(point):
        d = copy.deepcopy(doc)
        for name, v in zip(PAPER_CONSTANTS, point + (0.0,)):
            put(d, prec, name, v)
        return [r["batch_per_gpu"] * 1e3 / p for r, p in zip(rows, predict(d, rows))]
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        steps = list(ex.map(step_ms, points))
    best = best_with_overhead(points, steps, rows)
    new = copy.deepcopy(doc)
    for name, v in zip(PAPER_CONSTANTS, best[1]):
        put(new, prec, name, rounded(v))
    return new


def derive(clusters, fitted, write):
    """The DERIVED groups' efficiencies from the fitted ones (or the shipped
    ones of groups not fitted in this run), and the LINEAR_FROM groups'
    linear efficiency. fitted: group -> {"conv": v, "linear": v}. A derived
    group's conv is the product of conv ratios; its linear the first
    numerator's linear times the other conv ratios. True if the files agree."""
    ok = True

    def doc_of(cn):
        if cn not in clusters:
            clusters[cn] = json.load(open(os.path.join(DATA, "clusters", cn + ".json")))
        return clusters[cn]

    def eff(group, key="conv"):
        return fitted[group][key] if group in fitted else get(doc_of(group[0]), group[1], key)

    def check(cn, pr, key, v, what):
        a = get(doc_of(cn), pr, key)
        print(f"{cn + ' ' + pr:28} {what:18} {a:9.4g} {v:9.4g}{'' if a == v else '   <- differs'}")
        if write:
            put(clusters[cn], pr, key, v)
        return a == v
    for (cn, pr), (num, den) in CONV_FROM.items():  # first: "gemm" sets linear too (LINEAR_FROM's, next); bf16 copies it (DERIVED)
        conv = rounded(math.prod(eff(g) for g in num) / math.prod(eff(g) for g in den))
        ok = check(cn, pr, "gemm", conv, "gemm (derived)") and ok
        fitted.setdefault((cn, pr), {"linear": eff((cn, pr), "linear")})["conv"] = conv
    for (cn, pr), (ref, num, den) in LINEAR_FROM.items():
        v = min(1.0, rounded(eff(ref, "linear") * math.prod(eff(g) for g in num) / math.prod(eff(g) for g in den)))
        ok = check(cn, pr, "linear", v, "linear (derived)") and ok
        fitted.setdefault((cn, pr), {"conv": eff((cn, pr)), "linear": v})["linear"] = v
    for (cn, pr), (num, den) in DERIVED.items():
        ratio = math.prod(eff(g) for g in num[1:]) / math.prod(eff(g) for g in den)
        conv = rounded(eff(num[0]) * ratio)
        lin = min(1.0, rounded(eff(num[0], "linear") * ratio))
        ok = check(cn, pr, "gemm", conv, "gemm (derived)") and ok
        ok = check(cn, pr, "linear", lin, "linear (derived)") and ok
    return ok


def dump_cluster(doc):
    """JSON with one key per line at the top and in gpu, small objects inline."""
    def inline(v):
        return json.dumps(v, ensure_ascii=False)

    def obj(d, ind):
        pad = " " * ind
        items = []
        for k, v in d.items():
            s = inline(v)
            if isinstance(v, dict) and (len(s) > 100 or k in ("gpu", "sources", "precisions")):
                s = obj(v, ind + 2)
            elif isinstance(v, list) and len(s) > 100:
                s = "[\n" + ",\n".join(pad + "  " + inline(x) for x in v) + "\n" + pad + "]"
            items.append(f'{pad}  {json.dumps(k)}: {s}')
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    return obj(doc, 0) + "\n"


def main():
    write = "--write" in sys.argv[1:]
    only = [a for a in sys.argv[1:] if not a.startswith("--")]  # cluster names: fit only those
    rows = [r for r in json.load(open(ROWS))["rows"] if r.get("fit", True) and r["gpus"] == 1]
    clusters = {}
    ok = True
    print(f"{'group':28} {'constant':18} {'shipped':>9} {'fitted':>9}")
    fitted_rows = []
    fitted = {}
    stacks = {}
    for cname in {cn for cn, _ in GROUPS} | {PAPER_GROUP[0]}:
        clusters[cname] = json.load(open(os.path.join(DATA, "clusters", cname + ".json")))

    def fit_group(cname, prec, grows):
        nonlocal ok
        params = GROUPS[(cname, prec)]
        doc = clusters[cname]
        trows = [r for r in grows if transformer(r)]
        grows = [r for r in grows if not transformer(r)]
        tied = [pr for (cn, pr), (num, den) in DERIVED.items() if cn == cname and num == [(cname, prec)] and not den]
        new, names = doc, []
        if grows:  # the conv (GEMM) efficiency on the CNN rows
            new, best = fit_one(doc, prec, *params[0], grows, tied, stacks)
            names = [n for n, _, _ in params]
        if (cname, prec) in LINEAR_FIT and trows:  # the linear efficiency on the transformer rows
            new, _ = fit_one(new, prec, "linear", 0.1, 1.0, trows, tied, stacks)
            names.append("linear")
        elif names:  # the gemm fit set linear too: keep the file's until derive() derives it (LINEAR_FROM)
            for p in (prec, *tied):
                put(new, p, "linear", get(doc, p, "linear"))
        for n in names:
            a, b = get(doc, prec, n), get(new, prec, n)
            if a != b:
                ok = False
            print(f"{cname + ' ' + prec:28} {n:18} {a:9.4g} {b:9.4g}{'' if a == b else '   <- differs'}")
        clusters[cname] = new  # later groups (stacks) price with it; written only with --write
        fitted[(cname, prec)] = {"conv": get(new, prec, "gemm"), "linear": get(new, prec, "linear")}
    # 1. GPU groups on the rows of stacks not fitted at that precision;
    # 2. the stacks' scales on their rows on those GPUs; 3. GPU groups with
    # no other rows, on a fitted stack's rows under it.
    later = []
    for (cname, prec) in GROUPS:
        if only and cname not in only:
            continue
        grows = [r for r in rows if chip(r["cluster"]) == cname and r["precision"] == prec]
        own = [r for r in grows if not stack_fitted(r)]
        if own:
            fit_group(cname, prec, own)
        elif grows:
            later.append((cname, prec, grows))
    for key in STACK_GROUPS:
        srows = [r for r in rows if (r.get("stack"), r["precision"]) == key and (chip(r["cluster"]), r["precision"]) in fitted]
        if srows:
            ok = fit_stack_scale(stacks, clusters, key, srows) and ok
    for cname, prec, grows in later:
        fit_group(cname, prec, grows)
    ok = derive(clusters, fitted, write) and ok
    judged = []
    for (cname, prec) in fitted:  # every row of a fitted group, under the constants as fitted
        grows = [r for r in rows if chip(r["cluster"]) == cname and r["precision"] == prec
                 and (not transformer(r) or (cname, prec) in LINEAR_FIT)]
        pairs = [(r, p) for r, p in zip(grows, predict(clusters[cname], grows, stacks))]
        if (cname, prec) in CONV_FROM:  # derived: its rows judge the constants
            judged += pairs
        else:
            fitted_rows += pairs
    cname, prec = PAPER_GROUP
    if not only or cname in only:
        grows = [r for r in rows if r["cluster"] == cname and r["precision"] == prec]
        doc = clusters[cname]
        new = fit_paper_grid(doc, prec, [r for r in grows if r["label"].startswith("paper ")])
        for n in PAPER_CONSTANTS:
            a, b = get(doc, prec, n), get(new, prec, n)
            if a != b:
                ok = False
            print(f"{cname + ' ' + prec:28} {n:18} {a:9.4g} {b:9.4g}{'' if a == b else '   <- differs'}")
        clusters[cname] = new
        paper = stacks.setdefault("paper", stack_doc("paper"))
        a, b = paper.get("step_overhead_ms"), get(new, prec, "step_overhead_ms")
        print(f"{'stack paper ' + prec:28} {'step_overhead_ms':18} {a:9.4g} {b:9.4g}{'' if a == b else '   <- differs'}")
        ok = ok and a == b
        paper["step_overhead_ms"] = b
        for key in STACK_GRID:  # TensorFlow 1.x's constants on its own P100 rows, the P100 the paper's
            ok = fit_stack_grid(stacks, new, key, [r for r in grows if r.get("stack") == key[0]]) and ok
        fitted_rows += [(r, p) for r, p in zip(grows, predict(new, grows, stacks))]
    print()
    print(f"{'row':52} {'published':>9} {'model':>9} {'error':>7}")
    worst = 0
    for r, p in fitted_rows:
        err = p / r["published"] - 1
        worst = max(worst, abs(err))
        print(f"{r['label']:52} {r['published']:9.0f} {p:9.1f} {err * 100:+6.1f}%")
    print(f"\n{len(fitted_rows)} rows; largest error {worst * 100:.1f}%")
    if judged:
        print("\nrows of derived groups (CONV_FROM), not fitted:")
        for r, p in judged:
            print(f"{r['label']:52} {r['published']:9.0f} {p:9.1f} {(p / r['published'] - 1) * 100:+6.1f}%")
    for sib, ref in SIBLINGS.items():  # a sibling's file carries its reference's constants
        if ref not in clusters or (only and ref not in only):
            continue
        want = sibling_doc(sib, clusters[ref])
        have = json.load(open(os.path.join(DATA, "clusters", sib + ".json")))
        same = all(want["gpu"].get(k) == have["gpu"].get(k) for k in SHARED_GPU_KEYS)
        print(f"{sib:28} {'constants of ' + ref:28}{'' if same else '   <- differ'}")
        ok = ok and same
        if write:
            clusters[sib] = want
    if write:
        for cname, doc in clusters.items():
            with open(os.path.join(DATA, "clusters", cname + ".json"), "w") as f:
                f.write(dump_cluster(doc))
        for name, doc in stacks.items():
            with open(os.path.join(DATA, "stacks", name + ".json"), "w") as f:
                f.write(dump_cluster(doc))
        print("wrote the fitted constants into data/clusters/ and data/stacks/")
        return 0
    if not ok:
        print("the shipped constants differ from the fit: run python3 tests/calibrate.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
