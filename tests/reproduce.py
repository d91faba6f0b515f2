#!/usr/bin/env python3
"""Regenerates the "Reproducing the paper" tables of data/doc/reproduce.md (make reproduce).

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
HERE = os.path.dirname(os.path.abspath(__file__))
DATADIR = os.path.join(HERE, "..", "data")
FIXTURES = os.path.join(HERE, "fixtures")
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


def alexnet_sizes():
    """Weight bytes of AlexNet's convolutions, and activation bytes per sample
    entering its fully-connected layers, from the shipped network file."""
    with open(os.path.join(DATADIR, "networks", "alexnet.json")) as f:
        doc = json.load(f)
    shape = {doc["input"]["name"]: (doc["input"]["channels"], doc["input"]["height"], doc["input"]["width"])}
    conv_params, fc_in = 0, 0
    for l in doc["layers"]:
        c, h, w = shape[l["inputs"][0]]
        t = l["type"]
        if t in ("conv2d", "pool2d"):
            (kh, kw), (sh, sw) = l["kernel"], l.get("stride", [1, 1])
            ph, pw = l.get("padding", [0, 0])
            oc = l["out_channels"] if t == "conv2d" else c
            if t == "conv2d":
                conv_params += oc * c * kh * kw + oc
            shape[l["name"]] = (oc, (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1)
        elif t == "flatten":
            shape[l["name"]] = (c * h * w, 1, 1)
        elif t == "linear":
            fc_in += c * h * w
            shape[l["name"]] = (l["out_features"], 1, 1)
        else:
            shape[l["name"]] = (c, h, w)
    return 4 * conv_params, 4 * fc_in


def bounds(params):
    """What the paper's own Figure 7 allows under its Eq. 1 (see data/doc/reproduce.md)."""
    err = 0.05  # Figure 7 is read to about +-5%
    print("### What the paper's own figures allow under its cost model\n")
    w = params["alexnet"] * 4
    conv_w, act = alexnet_sizes()
    act *= 32 * 16  # global batch at 16 GPUs
    # every reading error taken in the paper's favour: the slowest data-parallel step, the fastest
    # one-GPU step, the slowest OWT compute and the fastest layer-wise
    t1_fast, t1_slow = 32 / (PAPER_1["alexnet"] * (1 + err)), 32 / (PAPER_1["alexnet"] * (1 - err))
    dp_over = 512 / (PAPER_16["alexnet"]["data"] * (1 - err)) - t1_fast
    rate = dp_over / w
    owt_over = rate * (conv_w + act)
    owt_min = 512 / (t1_slow + owt_over)
    lw_max = PAPER_16["alexnet"]["layer-wise"] * (1 + err)
    p_ratio = PAPER_16["alexnet"]["layer-wise"] / PAPER_16["alexnet"]["owt"]
    print(f"- AlexNet, data parallelism at 16 GPUs: at most {dp_over * 1e3:.0f} ms per step more than one "
          f"GPU's, to synchronise {w / 1e6:.1f} MB of weights ({rate * 1e9:.3f} ms per MB).")
    print(f"- OWT moves the fully-connected layers' inputs ({act / 1e6:.1f} MB per step) in the same pattern "
          f"(gathered to every GPU forward, reduced back backward) and synchronises the convolutions' "
          f"{conv_w / 1e6:.1f} MB as data parallelism does: at that rate at most {owt_over * 1e3:.1f} ms, so "
          f"OWT runs at least {owt_min:.0f} images/s (paper: ~{PAPER_16['alexnet']['owt']}).")
    print(f"- Layer-wise over OWT is then at most {lw_max / owt_min:.2f}, even with the paper's own layer-wise "
          f"figure (paper: {p_ratio:.2f}; 25% below that is {0.75 * p_ratio:.2f}).")
    inc_over = 512 / PAPER_16["inception_v3"]["layer-wise"] - 32 / PAPER_1["inception_v3"]
    inc_max = (512 / (PAPER_16["inception_v3"]["layer-wise"] * (1 - err))
               - 32 / (PAPER_1["inception_v3"] * (1 + err)))
    dp_inc = 512 / PAPER_16["inception_v3"]["data"] - 32 / PAPER_1["inception_v3"]
    print(f"- Inception-v3, layer-wise at 16 GPUs: {inc_over * 1e3:+.1f} ms per step against one GPU's "
          f"(at most {inc_max * 1e3:+.0f} ms within reading error), while data parallelism pays "
          f"{dp_inc * 1e3:.0f} ms to synchronise {params['inception_v3'] * 4 / 1e6:.1f} MB.")
    print()


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
    with open(os.path.join(FIXTURES, "expected_networks.json")) as f:
        params = {n["name"]: n["params"] for n in json.load(f)}
    bounds(params)
    print("### Table 5: the optimal strategy for VGG-16 on 4 GPUs of one node\n")
    print(f"Command: `layerwise search -n vgg16 -c {CLUSTER} -g 4`.\n")
    doc = json.loads(run("search", "-n", "vgg16", "-c", CLUSTER, "-g", "4", "--json"))
    cfg = {l["name"]: l["config"] for l in doc["layers"]}

    def fmt(c):
        s = " ".join(f"{k}={v}" for k, v in c.items() if v > 1)
        return "{" + (s or "1 GPU") + "}"

    # each convolution with its ReLU, fc6 and fc7 with their ReLU and Dropout
    # (the paper's table lists the layers that have weights, and the pools)
    def with_relu(names):
        return [x for n in names for x in ([n, n + "_relu"] if n.startswith("conv") else [n])]
    groups = [
        ("conv+pool blocks 1-4", with_relu(["conv1_1", "conv1_2", "pool1", "conv2_1", "conv2_2", "pool2", "conv3_1",
                                            "conv3_2", "conv3_3", "pool3", "conv4_1", "conv4_2", "conv4_3", "pool4"]),
         "{n=4}"),
        ("block 5 (conv5_1-3, pool5)", with_relu(["conv5_1", "conv5_2", "conv5_3", "pool5"]), "{h=2 w=2}"),
        ("fc6, fc7", ["fc6", "fc6_relu", "fc6_dropout", "fc7", "fc7_relu", "fc7_dropout"], "{c=4}"),
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
                            *[a for n in groups[1][1] for a in ("--pin", n + "=h2 w2")],
                            "--pin", "fc8=c2", "--pin", "prob=1"))
    print(f"The paper's Table 5 strategy, evaluated by layerwise's model (`--pin` each differing layer): "
          f"{pinned['total_ms']:.2f} ms per step against the optimum's {doc['total_ms']:.2f} ms "
          f"({pct(pinned['total_ms'], doc['total_ms'])}).")
    parts = []
    for layer, want in (("conv5_1", {"n": 1, "c": 1, "h": 2, "w": 2}), ("fc8", {"n": 1, "c": 2})):
        w = json.loads(run("search", "-n", "vgg16", "-c", CLUSTER, "-g", "4", "--why-not", layer, "--json"))
        rows = [r for r in w["configs"] if r["config"] == want]
        rank = w["configs"].index(rows[0]) + 1
        parts.append(f"{layer} {fmt(want)} alone costs {rows[0]['delta_ms']:+.2f} ms "
                     f"(rank {rank} of {len(w['configs'])})")
    print(f"Asked one layer at a time (`--why-not conv5_1`, `--why-not fc8`): {'; '.join(parts)}.")


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        sys.stderr.write(f"reproduce: {' '.join(e.cmd)} failed:\n{e.stderr}")
        sys.exit(1)
