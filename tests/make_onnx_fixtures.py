#!/usr/bin/python3
"""Writes the ONNX fixtures of tests/fixtures/onnx/ (checked in).

Needs Debian's python3-onnx (apt-get install python3-onnx) only to make them (and python3-torchvision for
the one PyTorch export):
the build and the tests read the .onnx files, not this script. Each model is
small and built with onnx.helper, so the numbers the tests expect can be
worked by hand (they are in tests/test_onnx.c beside each check).

    /usr/bin/python3 tests/make_onnx_fixtures.py [DIR]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures", "onnx")
F = TensorProto.FLOAT
I64 = TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_onnx_fixtures")
    m.ir_version = 7
    return m


def save(m, fname, check=True):
    if check:
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, fname))


def w(name, *shape):
    """A weight initializer of zeros (values never matter to layerwise)."""
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def ints(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def inp(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def out(name):
    """A graph output; its shape is not read (the importer infers every shape)."""
    return helper.make_tensor_value_info(name, F, ["d0", "d1"])


def small_cnn():
    """conv(3->8, 3x3, pad 1, bias) bn relu maxpool(2) conv(8->16, 3x3, SAME_UPPER, no bias) sigmoid
    globalavgpool flatten gemm(16->10) softmax, on a symbolic batch of 3x32x32."""
    nodes = [
        helper.make_node("Conv", ["x", "c1.w", "c1.b"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn.s", "bn.b", "bn.m", "bn.v"], ["b1"], name="bn1"),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2.w"], ["c2"], name="conv2", kernel_shape=[3, 3], auto_pad="SAME_UPPER"),
        helper.make_node("Sigmoid", ["c2"], ["s2"], name="act2"),
        helper.make_node("GlobalAveragePool", ["s2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flat"),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["fc"], name="fc", transB=1),
        helper.make_node("Softmax", ["fc"], ["prob"], name="prob", axis=1),
    ]
    inits = [w("c1.w", 8, 3, 3, 3), w("c1.b", 8), w("bn.s", 8), w("bn.b", 8), w("bn.m", 8), w("bn.v", 8),
             w("c2.w", 16, 8, 3, 3), w("fc.w", 10, 16), w("fc.b", 10)]
    return nodes, inits


def make_small_cnn():
    nodes, inits = small_cnn()
    save(model(nodes, [inp("x", ["N", 3, 32, 32])], [out("prob")], inits), "small_cnn.onnx")
    # the same without initializers: the weights are graph inputs with their shapes only
    ins = [inp("x", ["N", 3, 32, 32])] + [inp(t.name, list(t.dims)) for t in inits]
    save(model(nodes, ins, [out("prob")]), "small_cnn_noinit.onnx")


def make_dynamic_reshape():
    """conv then x.view(x.size(0), -1) as torch exports it: Shape, Gather, Unsqueeze, Concat, Reshape;
    then MatMul + Add (a linear layer with a bias), Dropout, Identity, Tanh."""
    nodes = [
        helper.make_node("Conv", ["x", "c.w", "c.b"], ["c"], name="conv", kernel_shape=[5, 5], strides=[2, 2]),
        helper.make_node("Shape", ["c"], ["sh"], name="shape"),
        helper.make_node("Constant", [], ["zero"], name="zero", value=helper.make_tensor("z", I64, [], [0])),
        helper.make_node("Gather", ["sh", "zero"], ["n"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="unsq"),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], name="cat_shape", axis=0),
        helper.make_node("Reshape", ["c", "target"], ["flat"], name="view"),
        helper.make_node("MatMul", ["flat", "fc.w"], ["mm"], name="fc"),
        helper.make_node("Add", ["mm", "fc.b"], ["fcb"], name="fc_bias"),
        helper.make_node("Dropout", ["fcb"], ["d"], name="drop"),
        helper.make_node("Identity", ["d"], ["i"], name="ident"),
        helper.make_node("Tanh", ["i"], ["y"], name="tanh"),
    ]
    inits = [w("c.w", 4, 1, 5, 5), w("c.b", 4), ints("axes0", [0]), ints("minus1", [-1]), w("fc.w", 576, 7), w("fc.b", 7)]
    save(model(nodes, [inp("x", ["batch", 1, 28, 28])], [out("y")], inits), "dynamic_reshape.onnx")


def make_branches():
    """A residual Add of two activations, a Concat on channels, element-wise ops with constants folded,
    the decomposed GELU x * 0.5 * (1 + erf(x / sqrt 2)), and Squeeze/Unsqueeze of size-1 dimensions."""
    nodes = [
        helper.make_node("Conv", ["x", "a.w"], ["a"], name="stem", kernel_shape=[1, 1]),
        helper.make_node("Conv", ["a", "b.w"], ["b"], name="branch", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["a", "b"], ["s"], name="residual"),
        helper.make_node("Mul", ["s", "half"], ["s2"], name="scale"),
        helper.make_node("Div", ["s2", "sqrt2"], ["g0"], name="gelu_div"),
        helper.make_node("Erf", ["g0"], ["g1"], name="gelu_erf"),
        helper.make_node("Add", ["g1", "one"], ["g2"], name="gelu_add1"),
        helper.make_node("Mul", ["s2", "g2"], ["g3"], name="gelu_mul"),
        helper.make_node("Sub", ["g3", "one"], ["g4"], name="shift"),
        helper.make_node("Concat", ["g4", "a"], ["cat"], name="mix", axis=1),
        helper.make_node("AveragePool", ["cat"], ["ap"], name="avg", kernel_shape=[8, 8], strides=[8, 8]),
        helper.make_node("Squeeze", ["ap", "axes23"], ["sq"], name="squeeze"),
        helper.make_node("Unsqueeze", ["sq", "axes23"], ["us"], name="unsqueeze"),
        helper.make_node("Flatten", ["us"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.w"], ["y"], name="fc"),
    ]
    inits = [w("a.w", 4, 2, 1, 1), w("b.w", 4, 4, 3, 3), numpy_helper.from_array(np.array(0.5, np.float32), "half"),
             numpy_helper.from_array(np.array(1.4142135, np.float32), "sqrt2"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"), ints("axes23", [2, 3]), w("fc.w", 8, 3)]
    save(model(nodes, [inp("x", [1, 2, 8, 8])], [out("y")], inits), "branches.onnx")


def make_opset9():
    """Opset 9: Slice's starts and ends, Split's sizes and Unsqueeze's axes are attributes; Reshape's
    shape is an input (since opset 5). A shape computed from constants: [1, 6*6*6] from Split/Slice."""
    nodes = [
        helper.make_node("Conv", ["x", "c.w"], ["c"], name="conv", kernel_shape=[3, 3]),
        helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
        helper.make_node("Shape", ["p"], ["sh"], name="shape"),
        helper.make_node("Slice", ["sh"], ["hw"], name="slice_hw", starts=[2], ends=[4]),
        helper.make_node("Split", ["hw"], ["h", "wd"], name="split", axis=0, split=[1, 1]),
        helper.make_node("Mul", ["h", "wd"], ["hxw"], name="mul_hw"),
        helper.make_node("Slice", ["sh"], ["ch"], name="slice_c", starts=[1], ends=[2]),
        helper.make_node("Mul", ["ch", "hxw"], ["feat"], name="mul_c"),
        helper.make_node("Concat", ["one", "feat"], ["target"], name="cat", axis=0),
        helper.make_node("Reshape", ["p", "target"], ["f"], name="reshape"),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["y"], name="fc"),
    ]
    inits = [w("c.w", 6, 3, 3, 3), ints("one", [1]), w("fc.w", 216, 5), w("fc.b", 5)]
    save(model(nodes, [inp("x", [1, 3, 8, 8])], [out("y")], inits, opset=9), "opset9.onnx")


def make_tied():
    """One weight used by two layers (as tied embeddings are): fc1 and fc2 share w (8x8, 64 values)."""
    nodes = [helper.make_node("Gemm", ["x", "w"], ["a"], name="fc1"),
             helper.make_node("Relu", ["a"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "w"], ["y"], name="fc2")]
    save(model(nodes, [inp("x", [1, 8])], [out("y")], [w("w", 8, 8)]), "tied.onnx")


def make_bad():
    # an operator layerwise has no layer for
    nodes = [helper.make_node("Conv", ["x", "c.w"], ["c"], name="conv", kernel_shape=[1, 1]),
             helper.make_node("Resize", ["c", "", "scales"], ["y"], name="upsample", mode="nearest")]
    inits = [w("c.w", 2, 3, 1, 1), numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    save(model(nodes, [inp("x", [1, 3, 8, 8])], [out("y")], inits), "bad_unsupported.onnx")
    # grouped convolution
    nodes = [helper.make_node("Conv", ["x", "c.w"], ["y"], name="depthwise", kernel_shape=[3, 3], group=4)]
    save(model(nodes, [inp("x", [1, 4, 8, 8])], [out("y")], [w("c.w", 4, 1, 3, 3)]), "bad_grouped.onnx")
    # a dynamic height and width: needs --input-shape
    nodes, inits = small_cnn()
    save(model(nodes, [inp("x", ["N", 3, "H", "W"])], [out("prob")], inits), "bad_dynamic.onnx")
    # layer normalisation (opset 17): a transformer layer, refused until those exist
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], name="ln", axis=-1)]
    save(model(nodes, [inp("x", [1, 16, 64])], [out("y")], [w("g", 64), w("b", 64)], opset=17), "bad_layernorm.onnx")
    # attention's product of two activations
    nodes = [helper.make_node("Gemm", ["x", "x"], ["y"], name="scores", transB=1)]
    save(model(nodes, [inp("x", [4, 4])], [out("y")]), "bad_matmul_acts.onnx")
    # truncated: the first half of a valid model
    with open(os.path.join(OUT, "small_cnn.onnx"), "rb") as f:
        data = f.read()
    with open(os.path.join(OUT, "bad_truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])


def make_resnet50():
    """torchvision's resnet50 (He et al. 2016, v1.5: stride on the 3x3 conv) as torch.onnx.export writes it in
    training mode: Conv without bias, BatchNormalization, Relu, residual Add, GlobalAveragePool, Flatten, Gemm.
    The weights are graph inputs with their shapes (no data), so the file stays small. torchvision's
    parameter count is 25,557,032; its multiply-adds 4.09 G (torchvision's model table: 4.09 GFLOPS, which are
    multiply-adds)."""
    nodes, ins = [], [inp("input", ["batch", 3, 224, 224])]

    def conv(x, name, cin, cout, k, s=1, p=0):
        ins.append(inp(name + ".weight", [cout, cin, k, k]))
        nodes.append(helper.make_node("Conv", [x, name + ".weight"], [name], name=name, kernel_shape=[k, k],
                                      strides=[s, s], pads=[p] * 4))
        return name

    def bn(x, name, c):
        ps = [name + "." + t for t in ("weight", "bias", "running_mean", "running_var")]
        ins.extend(inp(q, [c]) for q in ps)
        nodes.append(helper.make_node("BatchNormalization", [x] + ps, [name], name=name))
        return name

    def relu(x, name):
        nodes.append(helper.make_node("Relu", [x], [name], name=name))
        return name

    x = relu(bn(conv("input", "conv1", 3, 64, 7, 2, 3), "bn1", 64), "relu")
    nodes.append(helper.make_node("MaxPool", [x], ["maxpool"], name="maxpool", kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]))
    x, cin = "maxpool", 64
    for li, (blocks, width, stride) in enumerate([(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)], 1):
        for b in range(blocks):
            pre = "layer%d.%d" % (li, b)
            s = stride if b == 0 else 1
            y = relu(bn(conv(x, pre + ".conv1", cin, width, 1), pre + ".bn1", width), pre + ".relu1")
            y = relu(bn(conv(y, pre + ".conv2", width, width, 3, s, 1), pre + ".bn2", width), pre + ".relu2")
            y = bn(conv(y, pre + ".conv3", width, width * 4, 1), pre + ".bn3", width * 4)
            sc = x
            if b == 0:
                sc = bn(conv(x, pre + ".downsample.0", cin, width * 4, 1, s), pre + ".downsample.1", width * 4)
            nodes.append(helper.make_node("Add", [y, sc], [pre + ".add"], name=pre + ".add"))
            x = relu(pre + ".add", pre + ".relu3")
            cin = width * 4
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["avgpool"], name="avgpool"))
    nodes.append(helper.make_node("Flatten", ["avgpool"], ["flatten"], name="flatten", axis=1))
    ins += [inp("fc.weight", [1000, 2048]), inp("fc.bias", [1000])]
    nodes.append(helper.make_node("Gemm", ["flatten", "fc.weight", "fc.bias"], ["fc"], name="fc", transB=1))
    save(model(nodes, ins, [out("fc")], name="main_graph"), "resnet50.onnx")


def make_resnet50_torch():
    """torchvision's resnet50 exported by PyTorch itself (Debian's python3-torch and python3-torchvision, when
    installed; skipped otherwise, the checked-in file stays): random weights, exported without them
    (export_params=False, so they are graph inputs with shapes) and in training mode, so BatchNorm stays a
    node rather than folded into the convolutions as an eval-mode export does."""
    try:
        import warnings
        import torch
        import torchvision
    except ImportError:
        print("make_onnx_fixtures: no torch/torchvision: resnet50_torch.onnx left as it is", file=sys.stderr)
        return
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    m = torchvision.models.resnet50()
    assert sum(p.numel() for p in m.parameters() if p.requires_grad) == 25557032
    torch.onnx.export(m, torch.zeros(1, 3, 224, 224), os.path.join(OUT, "resnet50_torch.onnx"), export_params=False,
                      opset_version=13, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["input"], output_names=["logits"], dynamic_axes={"input": {0: "batch"}})


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    make_small_cnn()
    make_dynamic_reshape()
    make_branches()
    make_opset9()
    make_tied()
    make_bad()
    make_resnet50()
    make_resnet50_torch()
