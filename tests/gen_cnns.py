#!/usr/bin/env python3
"""Writes the shipped CNNs that follow torchvision's definitions:
data/networks/alexnet.json, vgg16.json and inception_v3.json.

  python3 tests/gen_cnns.py            write the three files
  python3 tests/gen_cnns.py --check    exit 1 if a shipped file differs from
                                       what this script writes (nothing is
                                       written)

Each network is built as torchvision.models builds it (torchvision 0.15+,
vision/torchvision/models/{alexnet,vgg,inception}.py), layer for layer,
with every activation, normalisation and dropout the reference runs in
training:

- AlexNet (torchvision's, from "One weird trick", Krizhevsky 2014: 64, 192,
  384, 256, 256 filters): each convolution followed by a ReLU; the
  classifier is Dropout, fc6, ReLU, Dropout, fc7, ReLU, fc8.
  61,100,840 parameters.
- VGG-16 (configuration D, no batch norm): each convolution followed by a
  ReLU; the classifier is fc6, ReLU, Dropout, fc7, ReLU, Dropout, fc8.
  138,357,544 parameters.
- Inception-v3 without the auxiliary classifier (aux_logits=False, the
  network as it runs at inference and as the paper's figures count it):
  every convolution is torchvision's BasicConv2d, a convolution without
  bias, BatchNorm (eps 0.001) and ReLU; average pooling, Dropout, fc.
  23,834,568 parameters (27,161,264 with the auxiliary classifier, which
  this file leaves out).

torchvision's adaptive average pools before the classifiers of AlexNet
(6x6 to 6x6) and VGG-16 (7x7 to 7x7) are identities at 224x224 and are
left out, as the softmax-free logits are not: each network ends in a
softmax ("prob"), as the paper's do.

Names: the layers the files had before keep their names (VGG-16 conv1_1 ..
fc8, AlexNet conv1 .. fc8, Inception-v3 conv1 .. pool3 and
mixed_5b/branch1x1 ..; tests, the README and the screenshots use them).
A layer added after one of them is named after it with "_" and what it
is, "bn", "relu" or "dropout": conv1_1_relu, fc6_relu, fc6_dropout (the
dropout after fc6's ReLU), AlexNet's flat_dropout (torchvision's classifier
opens with a dropout), Inception-v3's mixed_5b/branch1x1_bn and
mixed_5b/branch1x1_relu, conv1_bn, conv1_relu, pool3_dropout. An
underscore, not "/": a module is what comes before the first "/" (the
diagrams draw mixed_5b as one box), and conv1_bn is no module of its own.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NETDIR = os.path.join(HERE, "..", "data", "networks")


class Net:
    """Layers in file order; each helper returns the name of its output."""

    def __init__(self, name, source, channels, size, sep):
        self.doc = {"format": "layerwise-net/1", "name": name, "source": source,
                    "input": {"name": "data", "channels": channels, "height": size, "width": size}}
        self.layers = []
        self.sep = sep

    def add(self, layer):
        self.layers.append(layer)
        return layer["name"]

    def conv(self, name, x, out, kernel, stride=1, padding=0, bias=True):
        pair = (lambda v: list(v) if isinstance(v, (list, tuple)) else [v, v])
        l = {"name": name, "type": "conv2d", "inputs": [x], "out_channels": out, "kernel": pair(kernel),
             "stride": pair(stride), "padding": pair(padding)}
        if not bias:
            l["bias"] = False
        return self.add(l)

    def pool(self, name, x, mode, kernel, stride, padding=None):
        l = {"name": name, "type": "pool2d", "mode": mode, "inputs": [x], "kernel": [kernel, kernel],
             "stride": [stride, stride]}
        if padding is not None:
            l["padding"] = [padding, padding]
        return self.add(l)

    def after(self, x, kind, base=None):
        """relu, batchnorm or dropout of x, named after base (default x)."""
        suffix = {"relu": "relu", "batchnorm": "bn", "dropout": "dropout"}[kind]
        return self.add({"name": (base or x) + self.sep + suffix, "type": kind, "inputs": [x]})

    def simple(self, name, kind, inputs, **extra):
        l = {"name": name, "type": kind, "inputs": list(inputs)}
        l.update(extra)
        return self.add(l)

    def text(self):
        d = dict(self.doc)
        head = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in d.items())
        body = ",\n".join("    " + json.dumps(l) for l in self.layers)
        return "{\n" + head + ',\n  "layers": [\n' + body + "\n  ]\n}\n"


def alexnet():
    n = Net("alexnet", "torchvision.models.alexnet (AlexNet as in Krizhevsky 2014, 'One weird trick'); "
            "written by tests/gen_cnns.py", 3, 224, "_")

    def conv_relu(name, x, out, k, s, p):
        return n.after(n.conv(name, x, out, k, s, p), "relu")
    x = conv_relu("conv1", "data", 64, 11, 4, 2)
    x = n.pool("pool1", x, "max", 3, 2)
    x = conv_relu("conv2", x, 192, 5, 1, 2)
    x = n.pool("pool2", x, "max", 3, 2)
    x = conv_relu("conv3", x, 384, 3, 1, 1)
    x = conv_relu("conv4", x, 256, 3, 1, 1)
    x = conv_relu("conv5", x, 256, 3, 1, 1)
    x = n.pool("pool3", x, "max", 3, 2)
    x = n.simple("flat", "flatten", [x])
    x = n.after(x, "dropout")
    x = n.after(n.simple("fc6", "linear", [x], out_features=4096), "relu")
    x = n.after(x, "dropout", "fc6")
    x = n.after(n.simple("fc7", "linear", [x], out_features=4096), "relu")
    x = n.simple("fc8", "linear", [x], out_features=1000)
    n.simple("prob", "softmax", [x])
    return n


def vgg16():
    n = Net("vgg16", "torchvision.models.vgg16 (VGG configuration D, Simonyan and Zisserman 2015); "
            "written by tests/gen_cnns.py", 3, 224, "_")
    x = "data"
    for block, (convs, out) in enumerate([(2, 64), (2, 128), (3, 256), (3, 512), (3, 512)], start=1):
        for i in range(1, convs + 1):
            x = n.after(n.conv(f"conv{block}_{i}", x, out, 3, 1, 1), "relu")
        x = n.pool(f"pool{block}", x, "max", 2, 2)
    x = n.simple("flat", "flatten", [x])
    for fc in ("fc6", "fc7"):
        x = n.after(n.simple(fc, "linear", [x], out_features=4096), "relu")
        x = n.after(x, "dropout", fc)
    x = n.simple("fc8", "linear", [x], out_features=1000)
    n.simple("prob", "softmax", [x])
    return n


def inception_v3():
    n = Net("inception_v3", "torchvision.models.inception_v3 with aux_logits=False (Szegedy et al. 2016); "
            "each convolution is BasicConv2d: no bias, BatchNorm (eps 0.001), ReLU; written by tests/gen_cnns.py",
            3, 299, "_")

    def basic(name, x, out, kernel, stride=1, padding=0):
        c = n.conv(name, x, out, kernel, stride, padding, bias=False)
        return n.after(n.after(c, "batchnorm"), "relu", c)

    def concat(m, parts):
        return n.simple(m + "/concat", "concat", parts)

    def avg_branch(m, x, out):
        p = n.pool(m + "/branch_pool", x, "avg", 3, 1, 1)
        return basic(m + "/branch_pool_conv", p, out, 1)

    def block_a(m, x, pool_features):  # InceptionA
        b1 = basic(m + "/branch1x1", x, 64, 1)
        b5 = basic(m + "/branch5x5_1", x, 48, 1)
        b5 = basic(m + "/branch5x5_2", b5, 64, 5, 1, 2)
        b3 = basic(m + "/branch3x3dbl_1", x, 64, 1)
        b3 = basic(m + "/branch3x3dbl_2", b3, 96, 3, 1, 1)
        b3 = basic(m + "/branch3x3dbl_3", b3, 96, 3, 1, 1)
        return concat(m, [b1, b5, b3, avg_branch(m, x, pool_features)])

    def block_b(m, x):  # InceptionB
        b3 = basic(m + "/branch3x3", x, 384, 3, 2)
        bd = basic(m + "/branch3x3dbl_1", x, 64, 1)
        bd = basic(m + "/branch3x3dbl_2", bd, 96, 3, 1, 1)
        bd = basic(m + "/branch3x3dbl_3", bd, 96, 3, 2)
        return concat(m, [b3, bd, n.pool(m + "/branch_pool", x, "max", 3, 2)])

    def block_c(m, x, c7):  # InceptionC
        b1 = basic(m + "/branch1x1", x, 192, 1)
        b7 = basic(m + "/branch7x7_1", x, c7, 1)
        b7 = basic(m + "/branch7x7_2", b7, c7, (1, 7), 1, (0, 3))
        b7 = basic(m + "/branch7x7_3", b7, 192, (7, 1), 1, (3, 0))
        bd = basic(m + "/branch7x7dbl_1", x, c7, 1)
        bd = basic(m + "/branch7x7dbl_2", bd, c7, (7, 1), 1, (3, 0))
        bd = basic(m + "/branch7x7dbl_3", bd, c7, (1, 7), 1, (0, 3))
        bd = basic(m + "/branch7x7dbl_4", bd, c7, (7, 1), 1, (3, 0))
        bd = basic(m + "/branch7x7dbl_5", bd, 192, (1, 7), 1, (0, 3))
        return concat(m, [b1, b7, bd, avg_branch(m, x, 192)])

    def block_d(m, x):  # InceptionD
        b3 = basic(m + "/branch3x3_1", x, 192, 1)
        b3 = basic(m + "/branch3x3_2", b3, 320, 3, 2)
        b7 = basic(m + "/branch7x7x3_1", x, 192, 1)
        b7 = basic(m + "/branch7x7x3_2", b7, 192, (1, 7), 1, (0, 3))
        b7 = basic(m + "/branch7x7x3_3", b7, 192, (7, 1), 1, (3, 0))
        b7 = basic(m + "/branch7x7x3_4", b7, 192, 3, 2)
        return concat(m, [b3, b7, n.pool(m + "/branch_pool", x, "max", 3, 2)])

    def block_e(m, x):  # InceptionE
        b1 = basic(m + "/branch1x1", x, 320, 1)
        b3 = basic(m + "/branch3x3_1", x, 384, 1)
        b3a = basic(m + "/branch3x3_2a", b3, 384, (1, 3), 1, (0, 1))
        b3b = basic(m + "/branch3x3_2b", b3, 384, (3, 1), 1, (1, 0))
        bd = basic(m + "/branch3x3dbl_1", x, 448, 1)
        bd = basic(m + "/branch3x3dbl_2", bd, 384, 3, 1, 1)
        bda = basic(m + "/branch3x3dbl_3a", bd, 384, (1, 3), 1, (0, 1))
        bdb = basic(m + "/branch3x3dbl_3b", bd, 384, (3, 1), 1, (1, 0))
        return concat(m, [b1, b3a, b3b, bda, bdb, avg_branch(m, x, 192)])

    x = basic("conv1", "data", 32, 3, 2)          # Conv2d_1a_3x3
    x = basic("conv2", x, 32, 3)                  # Conv2d_2a_3x3
    x = basic("conv3", x, 64, 3, 1, 1)            # Conv2d_2b_3x3
    x = n.pool("pool1", x, "max", 3, 2)           # maxpool1
    x = basic("conv4", x, 80, 1)                  # Conv2d_3b_1x1
    x = basic("conv5", x, 192, 3)                 # Conv2d_4a_3x3
    x = n.pool("pool2", x, "max", 3, 2)           # maxpool2
    x = block_a("mixed_5b", x, 32)
    x = block_a("mixed_5c", x, 64)
    x = block_a("mixed_5d", x, 64)
    x = block_b("mixed_6a", x)
    for m, c7 in (("mixed_6b", 128), ("mixed_6c", 160), ("mixed_6d", 160), ("mixed_6e", 192)):
        x = block_c(m, x, c7)
    x = block_d("mixed_7a", x)
    x = block_e("mixed_7b", x)
    x = block_e("mixed_7c", x)
    x = n.pool("pool3", x, "avg", 8, 8)           # avgpool (adaptive, 8x8 at 299x299)
    x = n.after(x, "dropout")                     # dropout
    x = n.simple("flat", "flatten", [x])
    x = n.simple("fc", "linear", [x], out_features=1000)
    n.simple("prob", "softmax", [x])
    return n


NETWORKS = [alexnet, vgg16, inception_v3]


def main():
    check = "--check" in sys.argv[1:]
    differs = []
    for make in NETWORKS:
        net = make()
        path = os.path.join(NETDIR, net.doc["name"] + ".json")
        text = net.text()
        try:
            with open(path) as f:
                old = f.read()
        except OSError:
            old = None
        if old == text:
            continue
        if check:
            differs.append(path)
            continue
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
        print(f"wrote {os.path.relpath(path)} ({len(net.layers)} layers)")
    if differs:
        for p in differs:
            sys.stderr.write(f"gen_cnns: {os.path.relpath(p)} differs from what tests/gen_cnns.py writes\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
