"""Small ONNX models for the importer's tests, built with onnx.helper at test time (no .onnx
file is committed). Usage: models.py NAME OUT.onnx; models.py --list prints the names.
Weights are seeded random values, so the files (and the imported weights) are reproducible."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def rand(name, shape, seed, lo=-1.0, hi=1.0):
    data = np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)
    return numpy_helper.from_array(data, name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits, opset=13, name="g", check=True):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="tdsl-tests")
    m.ir_version = 8
    if check:
        onnx.checker.check_model(m)
    return m


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


MODELS = {}


def register(f):
    MODELS[f.__name__] = f
    return f


@register
def mlp():
    """Gemm (transB) + Relu + Gemm with a symbolic batch dimension; odd names to sanitise."""
    nodes = [
        helper.make_node("Gemm", ["input.1", "fc1.weight", "fc1.bias"], ["/fc1/Gemm_output_0"],
                         name="/fc1/Gemm", transB=1),
        helper.make_node("Relu", ["/fc1/Gemm_output_0"], ["/relu/Relu_output_0"], name="/relu/Relu"),
        helper.make_node("Gemm", ["/relu/Relu_output_0", "fc2.weight", "fc2.bias"], ["output"],
                         name="/fc2/Gemm", transB=1),
    ]
    inits = [rand("fc1.weight", (32, 64), 1), rand("fc1.bias", (32,), 2),
             rand("fc2.weight", (10, 32), 3), rand("fc2.bias", (10,), 4)]
    return model(nodes, [vi("input.1", ["batch", 64])], [vi("output", ["batch", 10])], inits)


@register
def convnet():
    """Conv (asymmetric pads, stride 2, dilation), BatchNormalization, Relu, depthwise Conv,
    Clip (ReLU6), MaxPool with ceil_mode, GlobalAveragePool, Flatten, Gemm."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 0, 2, 1],
                         strides=[2, 2], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"],
                         name="bn1", epsilon=1e-3),
        helper.make_node("Relu", ["bn"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="dw", group=8, pads=[1, 1, 1, 1],
                         dilations=[2, 2], kernel_shape=[3, 3]),
        helper.make_node("Clip", ["c2", "zero", "six"], ["r2"], name="relu6"),
        helper.make_node("MaxPool", ["r2"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2], ceil_mode=1),
        helper.make_node("GlobalAveragePool", ["p"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], name="fc", transB=1),
    ]
    inits = [rand("w1", (8, 3, 3, 3), 1), rand("b1", (8,), 2),
             rand("bn_s", (8,), 3, 0.5, 1.5), rand("bn_b", (8,), 4), rand("bn_m", (8,), 5),
             rand("bn_v", (8,), 6, 0.5, 2.0), rand("w2", (8, 1, 3, 3), 7),
             numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero"),
             numpy_helper.from_array(np.array(6.0, dtype=np.float32), "six"),
             rand("fc_w", (5, 8), 8), rand("fc_b", (5,), 9)]
    return model(nodes, [vi("x", [1, 3, 17, 15])], [vi("y", [1, 5])], inits)


@register
def shapes():
    """The shape arithmetic PyTorch exports for x.view(x.size(0), -1) and friends: Shape,
    Gather, Unsqueeze, Concat, Cast, Mul, ConstantOfShape, Range, Slice, Equal, Where — all
    folded; then Reshape, Transpose, Softmax, Slice, Concat, Pad on tensors."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "i0"], ["n"], name="g0", axis=0),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="unsq"),
        helper.make_node("Slice", ["s", "st", "en"], ["chw"], name="slice_shape"),
        helper.make_node("Gather", ["chw", "i0"], ["c"], name="g1", axis=0),
        helper.make_node("Gather", ["chw", "i1"], ["h"], name="g2", axis=0),
        helper.make_node("Gather", ["chw", "i2"], ["w"], name="g3", axis=0),
        helper.make_node("Mul", ["h", "w"], ["hw"], name="mul_hw"),
        helper.make_node("Mul", ["hw", "hw"], ["hw2"], name="square_hw"),
        helper.make_node("Div", ["hw2", "hw"], ["hw3"], name="div_hw"),
        helper.make_node("Cast", ["hw3"], ["hwf"], name="cast_f", to=TensorProto.FLOAT),
        helper.make_node("Cast", ["hwf"], ["hwi"], name="cast_i", to=TensorProto.INT64),
        helper.make_node("Mul", ["c", "hwi"], ["prod"], name="mul"),
        helper.make_node("Concat", ["n1", "prod"], ["newshape"], name="cat_shape", axis=0),
        helper.make_node("Reshape", ["x", "newshape"], ["flat"], name="reshape"),
        helper.make_node("Transpose", ["x"], ["xt"], name="transpose", perm=[0, 2, 3, 1]),
        helper.make_node("Softmax", ["xt"], ["sm"], name="softmax", axis=-1),
        helper.make_node("Slice", ["flat", "s1", "e1", "a1", "p1"], ["sl"], name="slice"),
        helper.make_node("Concat", ["sl", "flat"], ["cat"], name="cat", axis=1),
        helper.make_node("Pad", ["cat", "pads", "pv"], ["padded"], name="pad"),
    ]
    inits = [ints("i0", 0), ints("ax0", [0]), ints("st", [1]), ints("i1", [1]), ints("i2", [2]), ints("en", [4]),
             ints("s1", [1]), ints("e1", [100]), ints("a1", [1]), ints("p1", [3]),
             ints("pads", [0, 2, 0, 1]),
             numpy_helper.from_array(np.array(0.5, dtype=np.float32), "pv")]
    return model(nodes, [vi("x", [2, 3, 4, 5])],
                 [vi("sm", [2, 4, 5, 3]), vi("padded", [2, 83])], inits)


@register
def concat_tree():
    """Concat of six inputs along axis 1 (channel counts 1 to 6): tdsl-import joins them by a
    tree, nn.concat4 of the first four and nn.concat2 of the last two, then nn.concat2."""
    names = ["x%d" % k for k in range(6)]
    nodes = [helper.make_node("Concat", names, ["cat"], name="cat", axis=1)]
    return model(nodes, [vi(n, [2, k + 1, 3]) for k, n in enumerate(names)],
                 [vi("cat", [2, 21, 3])], [])


@register
def broadcast():
    """Add/Sub/Mul/Div/Pow with broadcasting: same shape, bias, per-channel, both sides
    broadcast, scalar constants on either side."""
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"], name="same"),
        helper.make_node("Add", ["s", "bias"], ["t"], name="bias"),
        helper.make_node("Mul", ["t", "chan"], ["u"], name="per_channel"),
        helper.make_node("Sub", ["col", "row"], ["outer"], name="outer"),
        helper.make_node("Div", ["u", "two"], ["v"], name="div_scalar"),
        helper.make_node("Sub", ["one", "v"], ["w"], name="rsub_scalar"),
        helper.make_node("Pow", ["w", "two"], ["sq"], name="square"),
        helper.make_node("Div", ["sq", "chan"], ["q"], name="div_chan"),
    ]
    inits = [rand("bias", (5,), 1), rand("chan", (3, 1, 1), 2, 0.5, 1.5),
             numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two"),
             numpy_helper.from_array(np.array([1.0], dtype=np.float32), "one")]
    return model(nodes, [vi("a", [2, 3, 4, 5]), vi("b", [2, 3, 4, 5]), vi("col", [3, 1]),
                         vi("row", [1, 4])],
                 [vi("q", [2, 3, 4, 5]), vi("outer", [3, 4])], inits)


@register
def ops13():
    """The rest of the operator table at opset 13: unary functions, Split, the reductions,
    Squeeze, Expand, Pow of tensors, Gemm with alpha, beta, a 1-D Conv with SAME_UPPER,
    GlobalMaxPool, AveragePool without the padding in the divisor, Gather of a constant index
    and of a constant run (from a folded Range), a Constant node's tensor, an identity Cast."""
    one = numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")
    nodes = [
        helper.make_node("Abs", ["x"], ["ax"], name="abs"),
        helper.make_node("Exp", ["x"], ["ex"], name="exp"),
        helper.make_node("Log", ["ex"], ["lx"], name="log"),
        helper.make_node("Sqrt", ["ax"], ["sx"], name="sqrt"),
        helper.make_node("Neg", ["sx"], ["nx"], name="neg"),
        helper.make_node("Add", ["ax", "one"], ["ax1"], name="add_one"),
        helper.make_node("Reciprocal", ["ax1"], ["rx"], name="reciprocal"),
        helper.make_node("Pow", ["ax1", "lx"], ["px"], name="pow"),
        helper.make_node("Mul", ["px", "rx"], ["m1"], name="mul"),
        helper.make_node("Sub", ["m1", "nx"], ["u"], name="sub"),
        helper.make_node("Split", ["u", "parts"], ["s1", "s2"], name="split", axis=1),
        helper.make_node("ReduceMean", ["s2"], ["rmean"], name="rmean", axes=[1], keepdims=1),
        helper.make_node("ReduceSum", ["s2", "ax2"], ["rsum"], name="rsum", keepdims=0),
        helper.make_node("ReduceMax", ["s1"], ["rmax"], name="rmax", axes=[1, 2], keepdims=0),
        helper.make_node("Squeeze", ["rmean", "ax1i"], ["sq"], name="squeeze"),
        helper.make_node("Expand", ["rmean", "eshape"], ["expanded"], name="expand"),
        helper.make_node("Gemm", ["sq", "gw", "gc"], ["gemm"], name="gemm", alpha=0.5, beta=2.0),
        helper.make_node("Conv", ["x", "cw"], ["conv1d"], name="conv1d", auto_pad=b"SAME_UPPER",
                         kernel_shape=[2]),
        helper.make_node("Reshape", ["x", "shape4"], ["x4"], name="reshape4"),
        helper.make_node("GlobalMaxPool", ["x4"], ["gmp"], name="gmp"),
        helper.make_node("AveragePool", ["x4"], ["avg"], name="avg", kernel_shape=[2, 2],
                         pads=[1, 1, 0, 0], count_include_pad=0),
        helper.make_node("Range", ["r0", "r4", "r1"], ["range"], name="range"),
        helper.make_node("Gather", ["x", "range"], ["gall"], name="gather_run", axis=2),
        helper.make_node("Gather", ["gall", "i3"], ["g3"], name="gather_one", axis=1),
        helper.make_node("Constant", [], ["cst"], name="constant",
                         value=numpy_helper.from_array(
                             np.array([0.5, -1.0, 2.0, 0.25], dtype=np.float32))),
        helper.make_node("Add", ["g3", "cst"], ["g3c"], name="add_constant"),
        helper.make_node("Cast", ["g3c"], ["gout"], name="cast", to=TensorProto.FLOAT),
    ]
    inits = [one, ints("parts", [2, 4]), ints("ax2", [2]), ints("ax1i", [1]),
             ints("eshape", [2, 3, 4]), rand("gw", (4, 3), 1), rand("gc", (3,), 2),
             rand("cw", (3, 6, 2), 3), ints("shape4", [2, 6, 2, 2]), ints("r0", 0),
             ints("r4", 4), ints("r1", 1), ints("i3", 3)]
    return model(nodes, [vi("x", [2, 6, 4])],
                 [vi("rsum", [2, 4]), vi("rmax", [2]), vi("expanded", [2, 3, 4]),
                  vi("gemm", [2, 3]), vi("conv1d", [2, 3, 4]), vi("gmp", [2, 6, 1, 1]),
                  vi("avg", [2, 6, 2, 2]), vi("gout", [2, 4])], inits)


@register
def ops11():
    """Opset 11 forms: Unsqueeze, Squeeze, Split and ReduceSum with attribute axes, Softmax's
    2-D coercion (axis 1 of a rank-3 tensor), Pad with inputs, Clip with only a minimum,
    LogSoftmax, HardSigmoid, LeakyRelu, a Transpose of a rank-3 tensor, MatMul with a vector."""
    nodes = [
        helper.make_node("Softmax", ["x"], ["sm"], name="softmax", axis=1),
        helper.make_node("Unsqueeze", ["sm"], ["us"], name="unsqueeze", axes=[0]),
        helper.make_node("Squeeze", ["us"], ["sq"], name="squeeze", axes=[0]),
        helper.make_node("Split", ["sq"], ["a", "b"], name="split", axis=2, split=[1, 3]),
        helper.make_node("ReduceSum", ["b"], ["rs"], name="rsum", axes=[2], keepdims=1),
        helper.make_node("Pad", ["rs", "pads", "pv"], ["padded"], name="pad"),
        helper.make_node("Clip", ["x", "lo"], ["clipped"], name="clip_min"),
        helper.make_node("LeakyRelu", ["clipped"], ["lr"], name="leaky", alpha=0.3),
        helper.make_node("HardSigmoid", ["lr"], ["hs"], name="hsig", alpha=0.25, beta=0.4),
        helper.make_node("Transpose", ["hs"], ["tr"], name="rotate", perm=[1, 2, 0]),
        helper.make_node("LogSoftmax", ["tr"], ["ls"], name="logsoftmax", axis=2),
        helper.make_node("MatMul", ["x", "vec"], ["mv"], name="matvec"),
    ]
    inits = [ints("pads", [0, 1, 0, 0, 0, 2]),
             numpy_helper.from_array(np.array(-0.5, dtype=np.float32), "pv"),
             numpy_helper.from_array(np.array(-0.2, dtype=np.float32), "lo"),
             rand("vec", (4,), 4)]
    return model(nodes, [vi("x", [2, 3, 4])],
                 [vi("a", [2, 3, 1]), vi("padded", [2, 4, 3]), vi("ls", [3, 4, 2]),
                  vi("mv", [2, 3])], inits, opset=11)


@register
def unsupported_op():
    """Hardmax is not supported: the error names the operator and the node."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Hardmax", ["r"], ["y"], name="the_hardmax")]
    return model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], [])


@register
def unsupported_attr():
    """AveragePool with ceil_mode = 1 is not supported."""
    nodes = [helper.make_node("AveragePool", ["x"], ["y"], name="avg", kernel_shape=[2, 2],
                              strides=[2, 2], ceil_mode=1)]
    return model(nodes, [vi("x", [1, 1, 5, 5])], [vi("y", [1, 1, 3, 3])], [])


@register
def trilu_two_k():
    """Trilu with two values of k: ONNX's k is one integer."""
    nodes = [helper.make_node("Trilu", ["x", "k"], ["y"], name="tri")]
    return model(nodes, [vi("x", [3, 4])], [vi("y", [3, 4])], [ints("k", [1, 2])], opset=14)


@register
def names():
    """Names to sanitise (spec §12): characters outside [A-Za-z0-9_], a leading digit, keywords,
    clashes; a value used twice, a constant scalar on either side, Identity and Dropout."""
    nodes = [
        helper.make_node("MatMul", ["in:put", "1"], ["func"], name="mm"),
        helper.make_node("Add", ["func", "a.b"], ["a_b"], name="add"),
        helper.make_node("Identity", ["a_b"], ["id"], name="identity"),
        helper.make_node("Dropout", ["id"], ["drop"], name="dropout"),
        helper.make_node("Mul", ["drop", "drop"], ["sq"], name="square"),
        helper.make_node("Add", ["sq", "intrinsic"], ["graph"], name="shift"),
    ]
    inits = [rand("1", (4, 4), 1), rand("a.b", (4,), 2)]
    return model(nodes, [vi("in:put", [2, 4]), vi("intrinsic", [2, 4])],
                 [vi("graph", [2, 4]), vi("a_b", [2, 4])], inits)


@register
def const_output():
    """Outputs that are constants: a Constant node's and an initializer's, beside a computed one."""
    table = np.arange(6, dtype=np.float32).reshape(2, 3)
    nodes = [
        helper.make_node("Constant", [], ["table"], name="/table",
                         value=numpy_helper.from_array(table, "table_value")),
        helper.make_node("Relu", ["x"], ["y"], name="/relu"),
    ]
    inits = [rand("bias", (3,), 5)]
    return model(nodes, [vi("x", [2, 3])], [vi("table", [2, 3]), vi("y", [2, 3]), vi("bias", [3])],
                 inits)


@register
def old_opset():
    """Opset 6: older than ONNX's version converter takes (7)."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], [], opset=6)


@register
def convnet9():
    """An opset 9 CNN (ONNX Model Zoo's era): Clip's bounds as attributes, MaxPool without
    ceil_mode, BatchNormalization, Flatten, Gemm; imported through ONNX's version converter."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1],
                         strides=[2, 2], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"],
                         name="bn1", epsilon=1e-3),
        helper.make_node("Clip", ["bn"], ["r1"], name="relu6", min=0.0, max=6.0),
        helper.make_node("MaxPool", ["r1"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], name="fc", transB=1),
    ]
    inits = [rand("w1", (8, 3, 3, 3), 1), rand("b1", (8,), 2),
             rand("bn_s", (8,), 3, 0.5, 1.5), rand("bn_b", (8,), 4), rand("bn_m", (8,), 5),
             rand("bn_v", (8,), 6, 0.5, 2.0), rand("fc_w", (5, 8 * 4 * 4), 8),
             rand("fc_b", (5,), 9)]
    return model(nodes, [vi("x", [1, 3, 16, 16])], [vi("y", [1, 5])], inits, opset=9)


@register
def mlp7():
    """An opset 7 MLP: Gemm, Relu, Softmax (2-D coercion)."""
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["z"], name="fc2", transB=1),
        helper.make_node("Softmax", ["z"], ["y"], name="softmax", axis=1),
    ]
    inits = [rand("w1", (16, 12), 1), rand("b1", (16,), 2), rand("w2", (4, 16), 3),
             rand("b2", (4,), 4)]
    return model(nodes, [vi("x", [3, 12])], [vi("y", [3, 4])], inits, opset=7)


@register
def invalid():
    """Not valid ONNX: Relu reads a value nothing defines (onnx.checker rejects it)."""
    nodes = [helper.make_node("Relu", ["nope"], ["y"], name="relu")]
    return model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], [], check=False)


@register
def unsupported_transpose():
    """A permutation that is not one swap of two blocks of axes: an error at the node."""
    nodes = [helper.make_node("Transpose", ["x"], ["y"], name="reverse", perm=[2, 1, 0])]
    return model(nodes, [vi("x", [2, 3, 4])], [vi("y", [4, 3, 2])], [])


if __name__ == "__main__":
    if sys.argv[1] == "--list":
        print(" ".join(MODELS))
    else:
        onnx.save(MODELS[sys.argv[1]](), sys.argv[2])
