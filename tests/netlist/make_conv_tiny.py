#!/usr/bin/python3
"""The network layer of the gate-level run (tests/netlist/run_netlist.sh): one int8
QLinearConv, 8 -> 8 channels, 3x3, stride 1, pad 1, on 4x4 (9,216 MACs; x zero point -3,
per-channel weight scales, int32 bias, y zero point 4), built as the small nets'
qlinear_conv (scripts/models/make_small_nets.py) at a size whose netlist simulation
takes minutes, not hours.

usage: make_conv_tiny.py OUT.onnx
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts", "models"))
import common  # noqa: E402
import make_small_nets as small  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__.strip().splitlines()[-1] + "\n")
        return 2
    common.require("numpy", "onnx")
    import numpy as np
    import onnx
    from onnx import helper, TensorProto
    rng = np.random.default_rng(16)
    _, inits, _, _, _, p = small.qlinear_conv_parts(np, rng, 8, 8, 4, 1, 1, np.int8(-3),
                                                    np.int8(4), "conv")
    node = small.qlinear_conv_node(onnx, "input", "output", p, 1, 1)
    graph = helper.make_graph(
        [node], "conv_tiny",
        [helper.make_tensor_value_info("input", TensorProto.INT8, [1, 8, 4, 4])],
        [helper.make_tensor_value_info("output", TensorProto.INT8, [1, 8, 4, 4])], inits)
    model = helper.make_model(graph, producer_name="loom-make_conv_tiny",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)
    path = sys.argv[1]
    onnx.save(model, path + ".tmp")
    os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
