#!/usr/bin/env python3
"""Prints every published figure held in the repo beside the model's
prediction and their ratio (make validate), as Markdown tables for
data/doc/calibration.md:

1. every single-GPU training throughput (data/published/single-gpu.json),
   each saying whether calibrate.py fits to it;
2. every multi-GPU training throughput (data/published/multi-gpu.json):
   never fitted, they judge the model (data parallel, the cluster's ring
   all-reduce, the precision the row gives);
each with Eq. 1's figure (eval) and the simulator's (simulate, overlap ddp),
their ratios to the published figure, and per group (fitted, not fitted,
all) the count within 15% and 25% and the geometric-mean error;
3. the bus bandwidth the model implies for one all-reduce of 100 MB over
   one node of each shipped ring cluster, beside nccl-tests figures
   (data/published/nccl.json), and the time of a 1 MB all-reduce; then
   each small all-reduce held there, with the algorithm and protocol the
   model picks for it.

Runs the real program (LW, default build/layerwise). Exit status 0 unless a
run fails.
"""
import json
import math
import os
import subprocess
import sys

LW = os.environ.get("LW", "build/layerwise")
HERE = os.path.dirname(os.path.abspath(__file__))
PUB = os.path.join(HERE, "..", "data", "published")


def run(*args):
    return subprocess.run([LW, *args], check=True, capture_output=True, text=True).stdout


sys.path.insert(0, HERE)
from calibrate import GROUPS, LINEAR_FIT, PAPER_GROUP, attention_args, chip, stack_fitted  # noqa: E402  (which rows make calibrate fits)


def fitted(r):
    """Whether make calibrate fits constants to this row: single-GPU rows of
    a fitted (cluster, precision) group or of a fitted stack, not held; on
    the P100 the paper's rows and TensorFlow 1.x's (its stack's)."""
    if r["gpus"] != 1 or not r.get("fit", True):
        return False
    if stack_fitted(r):
        return True
    if (chip(r["cluster"]), r["precision"]) == PAPER_GROUP:
        return r["label"].startswith("paper ")
    if r.get("family") == "transformer":  # the linear efficiency, where calibrate fits it
        return (chip(r["cluster"]), r["precision"]) in LINEAR_FIT
    return (chip(r["cluster"]), r["precision"]) in GROUPS


def throughput(r, cmd):
    """images/s by Eq. 1 (eval) or the simulator, under the row's stack
    (its overheads, GEMM scale, gradient-sync precision and overlap)."""
    stack = ["--stack", r["stack"]] if "stack" in r else []
    doc = json.loads(run(cmd, "-n", r["net"], "-c", r["cluster"], "-g", str(r["gpus"]), "--batch-per-gpu",
                         str(r["batch_per_gpu"]), "--precision", r["precision"], "-s", "data", "--json", *stack,
                         *attention_args(r)))
    return doc["images_per_s"]


def summary(name, ratios):
    n = len(ratios)
    if not n:
        return f"| {name} | 0 | | | |"
    w15 = sum(1 for x in ratios if abs(x - 1) <= 0.15)
    w25 = sum(1 for x in ratios if abs(x - 1) <= 0.25)
    gm = math.exp(sum(abs(math.log(x)) for x in ratios) / n) - 1
    return f"| {name} | {n} | {w15} | {w25} | {gm * 100:.1f}% |"


def table(rows, title):
    """Every row with Eq. 1's and the simulator's figure; then per group
    (fitted, not fitted, all) each estimator's count within 15% and 25% and
    its geometric-mean error, exp(mean |ln(model / published)|) - 1."""
    print(f"### {title}\n")
    print("| figure | cluster | stack | GPUs | batch/GPU | precision | fitted | published | Eq. 1 | Eq. 1 / pub. "
          "| simulated | sim. / pub. |")
    print("|---|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|")
    res = []
    for r in rows:
        e, s = throughput(r, "eval"), throughput(r, "simulate")
        res.append((r, e / r["published"], s / r["published"]))
        print(f"| {r['label']} | {r['cluster']} | {r.get('stack', '—')} | {r['gpus']} | {r['batch_per_gpu']} | {r['precision']} | "
              f"{'yes' if fitted(r) else 'no'} | {r['published']:.0f} | {e:.0f} | {e / r['published']:.2f} | "
              f"{s:.0f} | {s / r['published']:.2f} |")
    print("\n| rows, estimator | rows | within 15% | within 25% | geometric-mean error |")
    print("|---|---:|---:|---:|---:|")
    for gname, sel in (("fitted", lambda r: fitted(r)), ("not fitted", lambda r: not fitted(r)),
                       ("all", lambda r: True)):
        part = [(a, b) for r, a, b in res if sel(r)]
        if not part:
            continue
        print(summary(f"{gname}, Eq. 1", [a for a, _ in part]))
        print(summary(f"{gname}, simulated", [b for _, b in part]))
    print()


def collectives():
    nccl = json.load(open(os.path.join(PUB, "nccl.json")))
    print("### All-reduce on one node: implied bus bandwidth (100 MB) and the time of 1 MB\n")
    print("| cluster | GPUs | model busbw 100 MB (GB/s) | nccl-tests busbw (GB/s) | model / nccl-tests | model 1 MB (us) "
          "| 1 MB: algorithm, protocol |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name in ("dgx-a100", "h100-8x8", "dgx1-v100", "workstation-4x-pcie"):
        cl = json.loads(run("allreduce", "-c", name, "--json"))
        gpus = cl["gpus"]
        big = json.loads(run("allreduce", "-c", name, "-g", str(gpus), "--size", "100000000", "--json"))
        small = json.loads(run("allreduce", "-c", name, "-g", str(gpus), "--size", "1000000", "--json"))
        ref = next((x for x in nccl["rows"] if x["cluster"] == name and x["gpus"] == gpus), None)
        refs = f"{ref['busbw_gbs']:.0f}" if ref else "—"
        ratio = f"{big['busbw_gbs'] / ref['busbw_gbs']:.2f}" if ref else "—"
        print(f"| {name} | {gpus} | {big['busbw_gbs']:.0f} | {refs} | {ratio} | {small['time_us']:.0f} "
              f"| {small['algorithm']}, {small['protocol']} |")
    print()
    for x in nccl["rows"]:
        print(f"- {x['cluster']}, {x['gpus']} GPUs: {x['source']}")
    print()
    print("### Small all-reduces: the model's time (with the algorithm and protocol it picks) beside nccl-tests\n")
    print("| cluster | GPUs | bytes | model (us) | algorithm, protocol | nccl-tests (us) | model / nccl-tests |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for x in nccl.get("small", []):
        d = json.loads(run("allreduce", "-c", x["cluster"], "-g", str(x["gpus"]), "--size", str(x["bytes"]), "--json"))
        print(f"| {x['cluster']} | {x['gpus']} | {x['bytes']} | {d['time_us']:.1f} | {d['algorithm']}, {d['protocol']} | "
              f"{x['time_us']:.1f} | {d['time_us'] / x['time_us']:.2f} |")
    print()
    for x in nccl.get("small", []):
        print(f"- {x['cluster']}, {x['gpus']} GPUs, {x['bytes']} bytes: {x['source']}")
    print()


def main():
    single = json.load(open(os.path.join(PUB, "single-gpu.json")))["rows"]
    multi = json.load(open(os.path.join(PUB, "multi-gpu.json")))["rows"]
    print("Eq. 1: `layerwise eval` (the paper's additive model, no overlap); simulated: `layerwise simulate`\n"
          "(the stack's overlap, ddp where it names none). Data parallel at the row's GPUs, batch, precision\n"
          "and software stack (`--stack`). \"fitted\": make calibrate fits constants (the GPU's or its stack's)\n"
          "to the row; every other row judges the model.\n")
    table(single, "Single GPU, every published row")
    held = [r for r in single if not r.get("fit", True)]
    for r in held:
        print(f"- {r['label']}: {r['why']}")
    if held:
        print()
    table(multi, "Several GPUs, data parallel (never fitted)")
    collectives()
    return 0


if __name__ == "__main__":
    sys.exit(main())
