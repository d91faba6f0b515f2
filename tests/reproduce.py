#!/usr/bin/env python3
"""Regenerates the "Reproducing the paper" tables of the README (make reproduce).

Runs the real program (LW, default build/layerwise) on the paper's cluster
(p100-4x4) and prints Markdown: Figure 7 (1 and 16 GPUs, four strategies,
three networks) beside the paper's figures, the speed-ups, the ratios of
layer-wise over the best other strategy, the data moved, and Table 5.
The paper's numbers are read off its Figure 7 and Table 5 (Jia et al.,
ICML 2018), as restated in the project's paper notes.
"""
import json
import os
import subprocess
import sys

LW = os.environ.get("LW", "build/layerwise")
CLUSTER = "p100-4x4"
NETS = [("alexnet", "AlexNet"), ("vgg16", "VGG-16"), ("inception_v3", "Inception-v3")]
STRATS = ["data", "model", "owt", "layer-wise"]
# images/s read off Figure 7 (about +-5%)
PAPER_1 = {"alexnet": 720, "vgg16": 175, "inception_v3": 150}
PAPER_16 = {
    "alexnet": {"data": 3200, "model": 3270, "owt": 4230, "layer-wise": 9000},
    "vgg16": {"data": 1650, "model": 1040, "owt": 1980, "layer-wise": 2700},
    "inception_v3": {"data": 1680, "model": 150, "owt": 1740, "layer-wise": 2425},
}
PAPER_SPEEDUP = {"alexnet": (12.2, 6.1), "vgg16": (14.8, 10.2), "inception_v3": (15.5, 11.2)}


def run(*args):
    cmd = [LW, *args]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return out


def scale(net):
    doc = json.loads(run("scale", "-n", net, "-c", CLUSTER, "--gpus", "1,2,4,8,16", "--json"))
    rows = {}
    for r in doc["rows"]:
        rows[(r["gpus"], r["strategy"])] = r
    return rows


def pct(a, b):
    return f"{(a / b - 1) * 100:+.0f}%"


def main():
    data = {net: scale(net) for net, _ in NETS}
    cmd = f"layerwise scale -n NET -c {CLUSTER} --gpus 1,2,4,8,16"
    print("### Figure 7: training throughput (images/s)\n")
    print(f"Command: `{cmd}` (per-GPU batch 32, global batch 32 x GPUs).\n")
    print("| network | GPUs | strategy | paper | layerwise | difference |")
    print("|---|---|---|---|---|---|")
    for net, label in NETS:
        r = data[net]
        one = r[(1, "layer-wise")]["images_per_s"]
        print(f"| {label} | 1 | (all equal) | ~{PAPER_1[net]} | {one:.0f} | {pct(one, PAPER_1[net])} |")
        for s in STRATS:
            v = r[(16, s)]["images_per_s"]
            p = PAPER_16[net][s]
            print(f"| {label} | 16 | {s} | ~{p} | {v:.0f} | {pct(v, p)} |")
    print()
    print("### Speed-up from 1 to 16 GPUs, and layer-wise over the best other strategy at 16 GPUs\n")
    print("| network | layer-wise speed-up (paper / layerwise) | best other speed-up (paper / layerwise) "
          "| layer-wise / best other (paper / layerwise) | best other here |")
    print("|---|---|---|---|---|")
    for net, label in NETS:
        r = data[net]
        lw16 = r[(16, "layer-wise")]
        others = [(r[(16, s)]["images_per_s"], s) for s in STRATS[:3]]
        best_v, best_s = max(others)
        p_lw = PAPER_16[net]["layer-wise"]
        p_best = max(PAPER_16[net][s] for s in STRATS[:3])
        print(f"| {label} | {PAPER_SPEEDUP[net][0]:.1f}x / {lw16['speedup']:.1f}x "
              f"| {PAPER_SPEEDUP[net][1]:.1f}x / {r[(16, best_s)]['speedup']:.1f}x "
              f"| {p_lw / p_best:.2f} / {lw16['images_per_s'] / best_v:.2f} | {best_s} |")
    print()
    print("### Data moved per step at 16 GPUs (bytes between GPUs: transfers + parameter sync)\n")
    print("| network | data | model | OWT | layer-wise | data / layer-wise | model / layer-wise |")
    print("|---|---|---|---|---|---|---|")
    for net, label in NETS:
        r = data[net]
        b = {s: r[(16, s)]["bytes_per_step"] for s in STRATS}
        gb = lambda x: f"{x / 1e9:.2f} GB"
        print(f"| {label} | {gb(b['data'])} | {gb(b['model'])} | {gb(b['owt'])} | {gb(b['layer-wise'])} "
              f"| {b['data'] / b['layer-wise']:.1f}x | {b['model'] / b['layer-wise']:.1f}x |")
    print()
    print("### Table 5: the optimal strategy for VGG-16 on 4 GPUs of one node\n")
    print(f"Command: `layerwise search -n vgg16 -c {CLUSTER} -g 4`.\n")
    doc = json.loads(run("search", "-n", "vgg16", "-c", CLUSTER, "-g", "4", "--json"))
    cfg = {l["name"]: l["config"] for l in doc["layers"]}

    def fmt(c):
        s = " ".join(f"{k}={v}" for k, v in c.items() if v > 1)
        return "{" + (s or "1 GPU") + "}"

    groups = [
        ("conv+pool blocks 1-4", ["conv1_1", "conv1_2", "pool1", "conv2_1", "conv2_2", "pool2", "conv3_1", "conv3_2",
                                  "conv3_3", "pool3", "conv4_1", "conv4_2", "conv4_3", "pool4"], "{n=4}"),
        ("block 5 (conv5_1-3, pool5)", ["conv5_1", "conv5_2", "conv5_3", "pool5"], "{h=2 w=2}"),
        ("fc6, fc7", ["fc6", "fc7"], "{c=4}"),
        ("fc8", ["fc8"], "{c=2}"),
        ("softmax (prob)", ["prob"], "{c=1}"),
    ]
    print("| layers | paper | layerwise |")
    print("|---|---|---|")
    for label, names, paper in groups:
        got = sorted({fmt(cfg[n]) for n in names})
        print(f"| {label} | {paper} | {', '.join(got)} |")
    print()
    pinned = json.loads(run("search", "-n", "vgg16", "-c", CLUSTER, "-g", "4", "--json",
                            "--pin", "conv5_1=h2 w2", "--pin", "conv5_2=h2 w2", "--pin", "conv5_3=h2 w2",
                            "--pin", "pool5=h2 w2", "--pin", "fc8=c2", "--pin", "prob=1"))
    print(f"The paper's Table 5 strategy, evaluated by layerwise's model (`--pin` each differing layer): "
          f"{pinned['total_ms']:.2f} ms per step against the optimum's {doc['total_ms']:.2f} ms "
          f"({pct(pinned['total_ms'], doc['total_ms'])}).")


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        sys.stderr.write(f"reproduce: {' '.join(e.cmd)} failed:\n{e.stderr}")
        sys.exit(1)
