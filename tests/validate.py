#!/usr/bin/env python3
"""Prints every published figure held in the repo beside the model's
prediction and their ratio (make validate), as Markdown tables for
data/doc/calibration.md:

1. single-GPU training throughputs (data/published/single-gpu.json): the
   rows calibrate.py fits to, and the rows held but not fitted;
2. multi-GPU training throughputs (data/published/multi-gpu.json): never
   fitted, they judge the model (data parallel, the cluster's ring
   all-reduce, the precision the row gives);
3. the bus bandwidth the model implies for one all-reduce of 100 MB over
   one node of each shipped ring cluster, beside nccl-tests figures
   (data/published/nccl.json), and the time of a 1 MB all-reduce.

Runs the real program (LW, default build/layerwise). Exit status 0 unless a
run fails.
"""
import json
import os
import subprocess
import sys

LW = os.environ.get("LW", "build/layerwise")
HERE = os.path.dirname(os.path.abspath(__file__))
PUB = os.path.join(HERE, "..", "data", "published")


def run(*args):
    return subprocess.run([LW, *args], check=True, capture_output=True, text=True).stdout


def throughput(r):
    doc = json.loads(run("eval", "-n", r["net"], "-c", r["cluster"], "-g", str(r["gpus"]), "--batch-per-gpu",
                         str(r["batch_per_gpu"]), "--precision", r["precision"], "-s", "data", "--json"))
    return doc["images_per_s"]


def table(rows, title):
    print(f"### {title}\n")
    print("| figure | cluster | GPUs | batch/GPU | precision | published | model | model / published |")
    print("|---|---|---:|---:|---|---:|---:|---:|")
    worst = 0.0
    for r in rows:
        p = throughput(r)
        ratio = p / r["published"]
        worst = max(worst, abs(ratio - 1))
        print(f"| {r['label']} | {r['cluster']} | {r['gpus']} | {r['batch_per_gpu']} | {r['precision']} | "
              f"{r['published']:.0f} | {p:.0f} | {ratio:.2f} |")
    print(f"\n{len(rows)} rows; largest deviation {worst * 100:.0f}%\n")


def collectives():
    nccl = json.load(open(os.path.join(PUB, "nccl.json")))
    print("### All-reduce on one node: implied bus bandwidth (100 MB) and the time of 1 MB\n")
    print("| cluster | GPUs | model busbw 100 MB (GB/s) | nccl-tests busbw (GB/s) | model / nccl-tests | model 1 MB (us) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in ("dgx-a100", "h100-8x8", "dgx1-v100", "workstation-4x-pcie"):
        cl = json.loads(run("allreduce", "-c", name, "--json"))
        gpus = cl["gpus"]
        big = json.loads(run("allreduce", "-c", name, "-g", str(gpus), "--size", "100000000", "--json"))
        small = json.loads(run("allreduce", "-c", name, "-g", str(gpus), "--size", "1000000", "--json"))
        ref = next((x for x in nccl["rows"] if x["cluster"] == name and x["gpus"] == gpus), None)
        refs = f"{ref['busbw_gbs']:.0f}" if ref else "—"
        ratio = f"{big['busbw_gbs'] / ref['busbw_gbs']:.2f}" if ref else "—"
        print(f"| {name} | {gpus} | {big['busbw_gbs']:.0f} | {refs} | {ratio} | {small['time_us']:.0f} |")
    print()
    for x in nccl["rows"]:
        print(f"- {x['cluster']}, {x['gpus']} GPUs: {x['source']}")
    print()


def main():
    single = json.load(open(os.path.join(PUB, "single-gpu.json")))["rows"]
    multi = json.load(open(os.path.join(PUB, "multi-gpu.json")))["rows"]
    table([r for r in single if r.get("fit", True)], "Single GPU, fitted (make calibrate)")
    held = [r for r in single if not r.get("fit", True)]
    if held:
        table(held, "Single GPU, held but not fitted")
        for r in held:
            print(f"- {r['label']}: {r['why']}")
        print()
    table(multi, "Several GPUs, data parallel (never fitted)")
    collectives()
    return 0


if __name__ == "__main__":
    sys.exit(main())
