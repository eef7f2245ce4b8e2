#!/usr/bin/python3
"""make-onnx-seeds.py - writes the small ONNX models of tests/fuzz/corpus/onnx/.

Each model is a few hundred bytes and exercises one importer path: initializers
(raw_data and typed fields), Constant nodes of every attribute form, opset 11
Clip attributes, opset 11 Softmax, opset 13 Unsqueeze/Squeeze axes inputs,
BatchNormalization folding, QDQ and QLinear ops, value_info; the opset 7 and 9
forms the importer rewrites (Slice/TopK/Split attributes, Upsample, Scatter),
host-kernel ops, int64 token ids with a named dynamic dimension, shape
arithmetic and NonZero's data-dependent shape.  Regenerate with
/usr/bin/python3 tests/fuzz/make-onnx-seeds.py (needs python3-onnx, numpy).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "onnx")
rng = np.random.default_rng(1)


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def save(name, nodes, inputs, outputs, inits=(), opset=13, value_info=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits), value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def f32(name, shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


F = TensorProto.FLOAT
os.makedirs(OUT, exist_ok=True)

save("conv_relu", [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                   helper.make_node("Relu", ["c"], ["y"])],
     [vi("x", F, [1, 2, 4, 4])], [vi("y", F, [1, 3, 4, 4])], [f32("w", [3, 2, 3, 3]), f32("b", [3])],
     value_info=[vi("c", F, [1, 3, 4, 4])])

save("conv_bn_pool", [helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2], auto_pad="SAME_UPPER"),
                      helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"], epsilon=1e-5),
                      helper.make_node("MaxPool", ["n"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                      helper.make_node("GlobalAveragePool", ["p"], ["y"])],
     [vi("x", F, [1, 2, 8, 8])], [vi("y", F, [1, 2, 1, 1])],
     [f32("w", [2, 2, 3, 3]), f32("s", [2]), f32("bb", [2]), f32("m", [2]),
      numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "v")])

typed = helper.make_tensor("w", F, [4, 3], rng.standard_normal(12).astype(np.float32).tolist())
save("gemm_typed", [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, alpha=0.5, beta=2.0)],
     [vi("x", F, [2, 3])], [vi("y", F, [2, 4])], [typed, f32("b", [4])])

save("matmul_add_softmax11", [helper.make_node("MatMul", ["x", "w"], ["m"]),
                              helper.make_node("Add", ["m", "b"], ["a"]),
                              helper.make_node("Softmax", ["a"], ["y"], axis=1)],
     [vi("x", F, [2, 4])], [vi("y", F, [2, 3])], [f32("w", [4, 3]), f32("b", [3])], opset=11)

save("clip11_attrs", [helper.make_node("Clip", ["x"], ["y"], min=-1.0, max=1.0)],
     [vi("x", F, [3])], [vi("y", F, [3])], opset=11)

save("constants", [helper.make_node("Constant", [], ["k1"], value_float=2.0),
                   helper.make_node("Constant", [], ["k2"], value_floats=[1.0, 2.0, 3.0]),
                   helper.make_node("Constant", [], ["ax"], value_ints=[0]),
                   helper.make_node("Constant", [], ["k3"], value=numpy_helper.from_array(np.ones(3, np.float32))),
                   helper.make_node("Mul", ["x", "k1"], ["a"]),
                   helper.make_node("Add", ["a", "k2"], ["b"]),
                   helper.make_node("Mul", ["b", "k3"], ["c"]),
                   helper.make_node("Unsqueeze", ["c", "ax"], ["u"]),
                   helper.make_node("Squeeze", ["u", "ax"], ["y"])],
     [vi("x", F, [3])], [vi("y", F, [3])])

save("shape_reshape", [helper.make_node("Shape", ["x"], ["s"]),
                       helper.make_node("Constant", [], ["i"], value_int=0),
                       helper.make_node("Gather", ["s", "i"], ["n"]),
                       helper.make_node("Flatten", ["x"], ["f"], axis=1),
                       helper.make_node("Transpose", ["f"], ["t"], perm=[1, 0]),
                       helper.make_node("Reshape", ["t", "r"], ["y"])],
     [vi("x", F, [2, 3, 2])], [vi("y", F, [2, 6])],
     [numpy_helper.from_array(np.array([2, 6], np.int64), "r")])

save("concat_avgpool", [helper.make_node("Concat", ["x", "x"], ["c"], axis=1),
                        helper.make_node("AveragePool", ["c"], ["y"], kernel_shape=[2, 2], pads=[0, 0, 1, 1],
                                         count_include_pad=0)],
     [vi("x", F, [1, 1, 3, 3])], [vi("y", F, [1, 2, 2, 2])])

q = [numpy_helper.from_array(np.array(0.1, np.float32), "s"),
     numpy_helper.from_array(np.array(3, np.int8), "z"),
     numpy_helper.from_array(rng.integers(-20, 20, [2, 1, 3, 3]).astype(np.int8), "wq"),
     numpy_helper.from_array(np.array([0.05, 0.02], np.float32), "ws"),
     numpy_helper.from_array(np.zeros(2, np.int8), "wz"),
     numpy_helper.from_array(np.array([5, -5], np.int32), "bq")]
save("qdq_conv", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
                  helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
                  helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
                  helper.make_node("Conv", ["xd", "wd"], ["c"]),
                  helper.make_node("Relu", ["c"], ["y"])],
     [vi("x", F, [1, 1, 4, 4])], [vi("y", F, [1, 2, 2, 2])], q)

u8 = TensorProto.UINT8
ql = [numpy_helper.from_array(np.array(0.1, np.float32), "xs"),
      numpy_helper.from_array(np.array(128, np.uint8), "xz"),
      numpy_helper.from_array(rng.integers(0, 255, [2, 1, 2, 2]).astype(np.uint8), "w"),
      numpy_helper.from_array(np.array(0.05, np.float32), "ws"),
      numpy_helper.from_array(np.array(120, np.uint8), "wz"),
      numpy_helper.from_array(np.array(0.2, np.float32), "ys"),
      numpy_helper.from_array(np.array(100, np.uint8), "yz")]
save("qlinearconv", [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"])],
     [vi("x", u8, [1, 1, 3, 3])], [vi("y", u8, [1, 2, 2, 2])], ql)

# Format 1.3 era: the older op versions the importer rewrites, the generic
# (host kernel) ops, int64 token ids, data-dependent shapes and a named
# dynamic dimension.
I64 = TensorProto.INT64
save("legacy_opset9", [helper.make_node("Slice", ["x"], ["s"], starts=[0, 1], ends=[2, 1000], axes=[0, 1]),
                       helper.make_node("TopK", ["s"], ["v", "i"], k=2, axis=1),
                       helper.make_node("Scatter", ["s", "i", "v"], ["c"], axis=1),
                       helper.make_node("Upsample", ["c", "sc"], ["u"], mode="nearest"),
                       helper.make_node("Dropout", ["u"], ["y"], ratio=0.2)],
     [vi("x", F, [2, 4])], [vi("y", F, [4, 6])],
     [numpy_helper.from_array(np.array([2.0, 2.0], np.float32), "sc")], opset=9)

save("legacy_opset7", [helper.make_node("Upsample", ["x"], ["u"], scales=[1.0, 1.0, 2.0, 2.0]),
                       helper.make_node("BatchNormalization", ["u", "s", "bb", "m", "v"], ["n"], spatial=1),
                       helper.make_node("Split", ["n"], ["a", "b"], axis=1, split=[1, 1]),
                       helper.make_node("Sum", ["a", "b"], ["y"])],
     [vi("x", F, [1, 2, 2, 2])], [vi("y", F, [1, 1, 4, 4])],
     [f32("s", [2]), f32("bb", [2]), f32("m", [2]), numpy_helper.from_array(np.ones(2, np.float32), "v")], opset=7)

save("embedding_layernorm", [helper.make_node("Gather", ["emb", "ids"], ["e"]),
                             helper.make_node("ReduceMean", ["e"], ["mu"], axes=[-1]),
                             helper.make_node("Sub", ["e", "mu"], ["d"]),
                             helper.make_node("Pow", ["d", "two"], ["p"]),
                             helper.make_node("ReduceMean", ["p"], ["var"], axes=[-1]),
                             helper.make_node("Sqrt", ["var"], ["sd"]),
                             helper.make_node("Div", ["d", "sd"], ["n"]),
                             helper.make_node("Erf", ["n"], ["y"])],
     [helper.make_tensor_value_info("ids", I64, ["batch", 3])], [vi("y", F, ["batch", 3, 4])],
     [f32("emb", [10, 4]), numpy_helper.from_array(np.array(2.0, np.float32), "two")])

save("shape_arith_nonzero", [helper.make_node("Shape", ["x"], ["s"]),
                             helper.make_node("ConstantOfShape", ["s"], ["z"],
                                              value=numpy_helper.from_array(np.array([0.5], np.float32))),
                             helper.make_node("Greater", ["x", "z"], ["g"]),
                             helper.make_node("Where", ["g", "x", "z"], ["w"]),
                             helper.make_node("NonZero", ["g"], ["nz"]),
                             helper.make_node("Range", ["r0", "r1", "r2"], ["r"]),
                             helper.make_node("Expand", ["w", "s"], ["y"])],
     [vi("x", F, [2, 3])], [vi("y", F, [2, 3]), helper.make_tensor_value_info("nz", I64, [2, None]),
                           helper.make_tensor_value_info("r", I64, [None])],
     [numpy_helper.from_array(np.array(0, np.int64), "r0"), numpy_helper.from_array(np.array(5, np.int64), "r1"),
      numpy_helper.from_array(np.array(2, np.int64), "r2")])
