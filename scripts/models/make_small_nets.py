#!/usr/bin/python3
"""Tiny single-feature ONNX models with seeded inputs and reference outputs for compiler tests.

Float models are exported from PyTorch and their reference outputs computed by PyTorch.
Quantized models (qdq_conv, qlinear_*) are built with onnx.helper; onnx 1.12 has no
reference evaluator, so their outputs are computed here with numpy following the ONNX
spec (round half to even, saturate to int8).

Output: <out>/small/<name>.onnx, <name>_in.npy, <name>_out.npy and small/manifest.json.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SEED = 0
FLOAT_NETS = ("conv3x3", "conv_stride2", "dwconv", "gemm", "residual", "maxpool", "avgpool",
              "concat", "conv_bn_relu")
QUANT_NETS = ("qdq_conv", "qlinear_conv", "qlinear_matmul", "qlinear_conv_matmul")
NAMES = FLOAT_NETS + QUANT_NETS


# --------------------------------------------------------------------------- float models
def float_model(torch, name):
    nn = torch.nn

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(16, 16, 3, padding=1)
            self.c2 = nn.Conv2d(16, 16, 3, padding=1)

        def forward(self, x):
            return torch.relu(self.c2(torch.relu(self.c1(x))) + x)

    class Concat(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(16, 8, 3, padding=1)
            self.b = nn.Conv2d(16, 8, 1)

        def forward(self, x):
            return torch.cat([self.a(x), self.b(x)], dim=1)

    class ConvBnRelu(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(16, 16, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(16)

        def forward(self, x):
            return torch.relu(self.bn(self.conv(x)))

    shape = (1, 16, 8, 8)
    keep_bn = False
    if name == "conv3x3":
        m, desc = nn.Conv2d(16, 16, 3, 1, 1), "Conv 16->16 3x3 s1 p1 on 8x8, with bias"
    elif name == "conv_stride2":
        m, desc = nn.Conv2d(16, 16, 3, 2, 1), "Conv 16->16 3x3 s2 p1 on 8x8 -> 4x4"
    elif name == "dwconv":
        m, desc = nn.Conv2d(16, 16, 3, 1, 1, groups=16), "depthwise Conv 3x3 (group=16)"
    elif name == "gemm":
        m, desc, shape = nn.Linear(64, 32), "Linear 64->32 (ONNX Gemm, transB=1)", (1, 64)
    elif name == "residual":
        m, desc = Residual(), "Conv-ReLU-Conv + identity Add, ReLU"
    elif name == "maxpool":
        m, desc = nn.MaxPool2d(2), "MaxPool 2x2 s2 on [1,16,8,8]"
    elif name == "avgpool":
        # count_include_pad=False: otherwise torch 1.13 emits a no-op Pad before AveragePool
        m, desc = nn.AvgPool2d(2, count_include_pad=False), "AveragePool 2x2 s2 on [1,16,8,8]"
    elif name == "concat":
        m, desc = Concat(), "Concat(Conv3x3 16->8, Conv1x1 16->8) on channels"
    elif name == "conv_bn_relu":
        m, desc, keep_bn = ConvBnRelu(), "Conv (no bias) + BatchNormalization (kept) + ReLU", True
        # non-trivial BN parameters / statistics
        g = torch.Generator().manual_seed(SEED + 99)
        with torch.no_grad():
            m.bn.weight.copy_(torch.rand(16, generator=g) + 0.5)
            m.bn.bias.copy_(torch.randn(16, generator=g) * 0.2)
            m.bn.running_mean.copy_(torch.randn(16, generator=g) * 0.1)
            m.bn.running_var.copy_(torch.rand(16, generator=g) * 0.5 + 0.25)
    else:
        raise ValueError(name)
    return m.eval(), desc, shape, keep_bn


# --------------------------------------------------------------------------- numpy ONNX semantics
def conv2d_nchw(np, x, w, stride=1, pad=0, group=1):
    """Plain NCHW conv (no bias) in x's dtype (use int64 or float64)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, m, oh, ow), dtype=np.result_type(x, w))
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * mg:(g + 1) * mg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                out[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, ws[:, :, i, j])
    return out


def check_conv(np, x, w, stride, pad, group=1):
    """Cross-check conv2d_nchw against torch (float64; exact for int operands < 2**53)."""
    import torch
    ref = torch.nn.functional.conv2d(torch.from_numpy(np.asarray(x, np.float64)),
                                     torch.from_numpy(np.asarray(w, np.float64)),
                                     stride=stride, padding=pad, groups=group).numpy()
    got = conv2d_nchw(np, x, w, stride, pad, group)
    if not np.allclose(got, ref, rtol=0, atol=1e-9 * max(1.0, np.abs(ref).max())):
        raise AssertionError("numpy conv reference disagrees with torch")
    return got


def quantize(np, x, scale, zp, axis=None):
    """ONNX QuantizeLinear to int8: saturate(round_half_even(x / scale) + zp), in float32."""
    x = np.asarray(x, np.float32)
    scale = np.asarray(scale, np.float32)
    zp = np.asarray(zp, np.int32)
    if axis is not None and scale.ndim == 1:
        shp = [1] * x.ndim
        shp[axis] = -1
        scale, zp = scale.reshape(shp), zp.reshape(shp)
    q = np.rint(x / scale).astype(np.int64) + zp
    return np.clip(q, -128, 127).astype(np.int8)


def dequantize(np, q, scale, zp, axis=None):
    """ONNX DequantizeLinear: (q - zp) * scale in float32."""
    scale = np.asarray(scale, np.float32)
    zp = np.asarray(zp, np.int64)
    if axis is not None and scale.ndim == 1:
        shp = [1] * q.ndim
        shp[axis] = -1
        scale, zp = scale.reshape(shp), zp.reshape(shp)
    return ((q.astype(np.int64) - zp).astype(np.float32) * scale).astype(np.float32)


def requantize(np, acc, multiplier, zp, ch_axis=None):
    """int32 accumulator -> int8: saturate(round_half_even(acc * multiplier) + zp).

    multiplier = x_scale * w_scale / y_scale evaluated in float32 and the product taken in
    float32 (as onnxruntime's MLAS does). Returns (int8 result, #elements that would differ
    if the product were taken in float64) so tests know how tight to be.
    """
    m = np.asarray(multiplier, np.float32)
    if ch_axis is not None and m.ndim == 1:
        shp = [1] * acc.ndim
        shp[ch_axis] = -1
        m = m.reshape(shp)
    r32 = np.rint(acc.astype(np.float32) * m).astype(np.int64) + int(zp)
    r64 = np.rint(acc.astype(np.float64) * m.astype(np.float64)).astype(np.int64) + int(zp)
    q32 = np.clip(r32, -128, 127).astype(np.int8)
    q64 = np.clip(r64, -128, 127).astype(np.int8)
    return q32, int((q32 != q64).sum())


def f32(v):
    import numpy as np
    return np.float32(v)


def pick_scale(np, values, qmax=127.0, pct=99.9):
    """A float32 scale mapping the pct-percentile |value| to qmax (some saturation on purpose)."""
    a = np.percentile(np.abs(values), pct)
    return np.float32(max(a, 1e-6) / qmax)


# --------------------------------------------------------------------------- quantized models
def build_qdq_conv(np, onnx, rng):
    """float in -> Q -> DQ -> Conv(DQ(w int8 per-channel), DQ(b int32)) -> Q -> DQ -> float out."""
    from onnx import helper, TensorProto, numpy_helper
    C, M = 16, 16
    x = rng.standard_normal((1, C, 8, 8)).astype(np.float32)
    x_scale, x_zp = f32(3.0 / 127), np.int8(3)
    w_f = (rng.standard_normal((M, C, 3, 3)) * 0.1).astype(np.float32)
    w_scale = (np.abs(w_f).reshape(M, -1).max(1) / 127).astype(np.float32)
    w_q = quantize(np, w_f, w_scale, np.zeros(M, np.int8), axis=0)
    b_scale = (x_scale * w_scale).astype(np.float32)
    b_q = np.rint(rng.standard_normal(M) * 0.2 / b_scale).astype(np.int32)

    xq = quantize(np, x, x_scale, x_zp)
    xdq = dequantize(np, xq, x_scale, x_zp)
    wdq = dequantize(np, w_q, w_scale, np.zeros(M, np.int8), axis=0)
    bdq = (b_q.astype(np.float32) * b_scale).astype(np.float32)
    y = (check_conv(np, xdq.astype(np.float64), wdq.astype(np.float64), 1, 1)
         + bdq.astype(np.float64).reshape(1, M, 1, 1)).astype(np.float32)
    y_scale, y_zp = pick_scale(np, y), np.int8(-5)
    yq = quantize(np, y, y_scale, y_zp)
    out = dequantize(np, yq, y_scale, y_zp)
    frac = np.abs(np.abs(y / y_scale) % 1.0 - 0.5)
    near_ties = int((frac < 1e-3).sum())     # elements where a float32 conv may round the other way

    inits = [
        numpy_helper.from_array(np.array(x_scale, np.float32), "x_scale"),
        numpy_helper.from_array(np.array(x_zp, np.int8), "x_zero_point"),
        numpy_helper.from_array(w_q, "w_quantized"),
        numpy_helper.from_array(w_scale, "w_scale"),
        numpy_helper.from_array(np.zeros(M, np.int8), "w_zero_point"),
        numpy_helper.from_array(b_q, "b_quantized"),
        numpy_helper.from_array(b_scale, "b_scale"),
        numpy_helper.from_array(np.zeros(M, np.int32), "b_zero_point"),
        numpy_helper.from_array(np.array(y_scale, np.float32), "y_scale"),
        numpy_helper.from_array(np.array(y_zp, np.int8), "y_zero_point"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["input", "x_scale", "x_zero_point"], ["x_q"]),
        helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zero_point"], ["x_dq"]),
        helper.make_node("DequantizeLinear", ["w_quantized", "w_scale", "w_zero_point"], ["w_dq"],
                         axis=0),
        helper.make_node("DequantizeLinear", ["b_quantized", "b_scale", "b_zero_point"], ["b_dq"],
                         axis=0),
        helper.make_node("Conv", ["x_dq", "w_dq", "b_dq"], ["y"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("QuantizeLinear", ["y", "y_scale", "y_zero_point"], ["y_q"]),
        helper.make_node("DequantizeLinear", ["y_q", "y_scale", "y_zero_point"], ["output"]),
    ]
    graph = helper.make_graph(
        nodes, "qdq_conv",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, C, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, M, 8, 8])], inits)
    desc = ("QDQ Conv 16->16 3x3 p1: int8 activations (x zp=3, y zp=-5), per-channel int8 "
            "weights (axis 0), int32 bias via DequantizeLinear; output float (DQ of int8). "
            "Reference conv in float64 on dequantized values; allow +-1 output LSB (= y_scale).")
    return graph, x, out, desc, {"y_scale": float(y_scale), "y_zero_point": int(y_zp),
                                 "near_tie_elements": near_ties}


def qlinear_conv_parts(np, rng, C, M, H, stride, pad, x_zp, y_zp, name):
    """Return (x_q, params dict, y_q, inits, node) for an int8 QLinearConv with per-channel w."""
    from onnx import helper, numpy_helper
    x_q = rng.integers(-128, 128, size=(1, C, H, H)).astype(np.int8)
    x_scale = f32(0.02)
    w_q = rng.integers(-127, 128, size=(M, C, 3, 3)).astype(np.int8)
    w_scale = (rng.uniform(0.5, 1.5, size=M) * 0.004).astype(np.float32)
    w_zp = np.zeros(M, np.int8)
    B = rng.integers(-2000, 2000, size=M).astype(np.int32)
    acc = check_conv(np, x_q.astype(np.int64) - int(x_zp),
                      w_q.astype(np.int64) - w_zp.astype(np.int64).reshape(M, 1, 1, 1),
                      stride, pad) + B.astype(np.int64).reshape(1, M, 1, 1)
    assert np.abs(acc).max() < 2 ** 31
    real = acc * (np.float64(x_scale) * w_scale.astype(np.float64)).reshape(1, M, 1, 1)
    y_scale = pick_scale(np, real, 127.0, 99.5)
    mult = (x_scale * w_scale / y_scale).astype(np.float32)
    y_q, nd = requantize(np, acc, mult, y_zp, ch_axis=1)
    p = name + "_"
    inits = [
        numpy_helper.from_array(np.array(x_scale, np.float32), p + "x_scale"),
        numpy_helper.from_array(np.array(x_zp, np.int8), p + "x_zero_point"),
        numpy_helper.from_array(w_q, p + "w"),
        numpy_helper.from_array(w_scale, p + "w_scale"),
        numpy_helper.from_array(w_zp, p + "w_zero_point"),
        numpy_helper.from_array(np.array(y_scale, np.float32), p + "y_scale"),
        numpy_helper.from_array(np.array(y_zp, np.int8), p + "y_zero_point"),
        numpy_helper.from_array(B, p + "B"),
    ]
    return x_q, inits, y_q, nd, float(y_scale), p


def qlinear_conv_node(onnx, inp, out, p, stride, pad):
    return onnx.helper.make_node(
        "QLinearConv",
        [inp, p + "x_scale", p + "x_zero_point", p + "w", p + "w_scale", p + "w_zero_point",
         p + "y_scale", p + "y_zero_point", p + "B"], [out],
        kernel_shape=[3, 3], strides=[stride, stride], pads=[pad] * 4)


def qlinear_matmul_parts(np, a_q, a_scale, a_zp, N, y_zp, rng, name):
    from onnx import numpy_helper
    K = a_q.shape[-1]
    b_q = rng.integers(-127, 128, size=(K, N)).astype(np.int8)
    b_scale, b_zp = f32(0.003), np.int8(0)
    acc = (a_q.astype(np.int64) - int(a_zp)) @ (b_q.astype(np.int64) - int(b_zp))
    real = acc * (np.float64(a_scale) * np.float64(b_scale))
    y_scale = pick_scale(np, real, 120.0, 100.0)
    mult = np.float32(np.float32(a_scale) * b_scale / y_scale)
    y_q, nd = requantize(np, acc, mult, y_zp)
    p = name + "_"
    inits = [
        numpy_helper.from_array(np.array(a_scale, np.float32), p + "a_scale"),
        numpy_helper.from_array(np.array(a_zp, np.int8), p + "a_zero_point"),
        numpy_helper.from_array(b_q, p + "b"),
        numpy_helper.from_array(np.array(b_scale, np.float32), p + "b_scale"),
        numpy_helper.from_array(np.array(b_zp, np.int8), p + "b_zero_point"),
        numpy_helper.from_array(np.array(y_scale, np.float32), p + "y_scale"),
        numpy_helper.from_array(np.array(y_zp, np.int8), p + "y_zero_point"),
    ]
    node_inputs = [None, p + "a_scale", p + "a_zero_point", p + "b", p + "b_scale",
                   p + "b_zero_point", p + "y_scale", p + "y_zero_point"]
    return inits, node_inputs, y_q, nd, float(y_scale)


def build_qlinear_conv(np, onnx, rng):
    from onnx import helper, TensorProto
    x_q, inits, y_q, nd, ys, p = qlinear_conv_parts(np, rng, 16, 16, 8, 1, 1, np.int8(-3),
                                                    np.int8(4), "conv")
    node = qlinear_conv_node(onnx, "input", "output", p, 1, 1)
    graph = helper.make_graph(
        [node], "qlinear_conv",
        [helper.make_tensor_value_info("input", TensorProto.INT8, [1, 16, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.INT8, [1, 16, 8, 8])], inits)
    desc = ("QLinearConv int8 16->16 3x3 s1 p1, x zp=-3, per-channel w scales (zp 0), int32 B, "
            "y zp=4. int8 in / int8 out.")
    return graph, x_q, y_q, desc, {"f32_vs_f64_requant_mismatches": nd, "y_scale": ys}


def build_qlinear_matmul(np, onnx, rng):
    from onnx import helper, TensorProto
    a_q = rng.integers(-128, 128, size=(1, 64)).astype(np.int8)
    inits, ins, y_q, nd, ys = qlinear_matmul_parts(np, a_q, f32(0.05), np.int8(2), 32,
                                                   np.int8(-1), rng, "mm")
    ins[0] = "input"
    node = helper.make_node("QLinearMatMul", ins, ["output"])
    graph = helper.make_graph(
        [node], "qlinear_matmul",
        [helper.make_tensor_value_info("input", TensorProto.INT8, [1, 64])],
        [helper.make_tensor_value_info("output", TensorProto.INT8, [1, 32])], inits)
    desc = "QLinearMatMul int8 [1,64] x [64,32], a zp=2, per-tensor b (zp 0), y zp=-1."
    return graph, a_q, y_q, desc, {"f32_vs_f64_requant_mismatches": nd, "y_scale": ys}


def build_qlinear_conv_matmul(np, onnx, rng):
    from onnx import helper, TensorProto, numpy_helper
    x_q, inits, c_q, nd1, cys, p = qlinear_conv_parts(np, rng, 8, 16, 8, 2, 1, np.int8(0),
                                                      np.int8(-10), "conv")
    flat = c_q.reshape(1, -1)                                      # [1,256]
    inits2, ins, y_q, nd2, ys = qlinear_matmul_parts(np, flat, f32(cys), np.int8(-10), 10,
                                                     np.int8(0), rng, "fc")
    ins[0] = "conv_flat"
    nodes = [
        qlinear_conv_node(onnx, "input", "conv_out", p, 2, 1),
        helper.make_node("Reshape", ["conv_out", "flat_shape"], ["conv_flat"]),
        helper.make_node("QLinearMatMul", ins, ["output"]),
    ]
    inits += [numpy_helper.from_array(np.array([1, 256], np.int64), "flat_shape")] + inits2
    graph = helper.make_graph(
        nodes, "qlinear_conv_matmul",
        [helper.make_tensor_value_info("input", TensorProto.INT8, [1, 8, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.INT8, [1, 10])], inits)
    desc = ("QLinearConv int8 8->16 3x3 s2 p1 (8x8 -> 4x4, y zp=-10) -> Reshape [1,256] -> "
            "QLinearMatMul [256,10] (a scale/zp = conv y scale/zp). int8 in / int8 out.")
    return graph, x_q, y_q, desc, {"f32_vs_f64_requant_mismatches": nd1 + nd2,
                                   "conv_y_scale": cys, "y_scale": ys}


QUANT_BUILDERS = {"qdq_conv": build_qdq_conv, "qlinear_conv": build_qlinear_conv,
                  "qlinear_matmul": build_qlinear_matmul,
                  "qlinear_conv_matmul": build_qlinear_conv_matmul}


# --------------------------------------------------------------------------- main
def main():
    ap = common.arg_parser(__doc__.strip().splitlines()[0])
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    sd = os.path.join(args.out, "small")
    files = [os.path.join(sd, n + suf) for n in NAMES for suf in (".onnx", "_in.npy", "_out.npy")]
    files.append(os.path.join(sd, "manifest.json"))
    if common.skip_if_done(args, files):
        return 0

    common.require("numpy", "torch", "onnx")
    import numpy as np
    import torch
    import onnx

    t = common.Timer()
    common.seed_everything(SEED)
    common.makedirs(sd)
    manifest = {"seed": SEED, "versions": common.versions(), "models": {}}

    for k, name in enumerate(FLOAT_NETS):
        torch.manual_seed(SEED + 10 + k)
        model, desc, shape, keep_bn = float_model(torch, name)
        x = np.random.default_rng(SEED + 100 + k).standard_normal(shape).astype(np.float32)
        with torch.no_grad():
            y = model(torch.from_numpy(x)).numpy().astype(np.float32)
        info = common.export_onnx(model, torch.from_numpy(x), os.path.join(sd, name + ".onnx"),
                                  keep_batchnorm=keep_bn)
        common.save_npy(os.path.join(sd, name + "_in.npy"), x, np.float32)
        common.save_npy(os.path.join(sd, name + "_out.npy"), y, np.float32)
        manifest["models"][name] = {"description": desc, "reference": "pytorch float32",
                                    "inputs": info["inputs"], "outputs": info["outputs"],
                                    "ops": info["ops"]}
        common.log("%-20s %s -> %s  ops %s" % (name, list(x.shape), list(y.shape), info["ops"]))

    for k, name in enumerate(QUANT_NETS):
        rng = np.random.default_rng(SEED + 200 + k)
        graph, x, y, desc, extra = QUANT_BUILDERS[name](np, onnx, rng)
        model = onnx.helper.make_model(graph, producer_name="loom-make_small_nets",
                                       opset_imports=[onnx.helper.make_opsetid("", 13)])
        model.ir_version = 7          # readable by older ONNX runtimes as well
        onnx.checker.check_model(model, full_check=True)
        path = os.path.join(sd, name + ".onnx")
        onnx.save(model, path + ".tmp")
        os.replace(path + ".tmp", path)
        common.save_npy(os.path.join(sd, name + "_in.npy"), x)
        common.save_npy(os.path.join(sd, name + "_out.npy"), y)
        info = common.describe_onnx(model)
        frac_sat = float(np.mean(np.abs(y.astype(np.float64)) >= 127.5)) if y.dtype == np.int8 \
            else None
        manifest["models"][name] = dict(
            {"description": desc, "reference": "numpy, ONNX spec (round half even, saturate)",
             "inputs": info["inputs"], "outputs": info["outputs"], "ops": info["ops"]}, **extra)
        common.log("%-20s %s %s -> %s %s  ops %s %s" % (
            name, x.dtype, list(x.shape), y.dtype, list(y.shape), info["ops"],
            ("f32/f64 requant mismatches %d" % extra["f32_vs_f64_requant_mismatches"])
            if "f32_vs_f64_requant_mismatches" in extra
            else "near-tie elements %d" % extra.get("near_tie_elements", 0)))
        if frac_sat is not None and frac_sat > 0.05:
            common.log("WARNING: %s output saturates in %.1f%% of elements" % (name, 100 * frac_sat))

    common.write_manifest(os.path.join(sd, "manifest.json"), manifest)
    total = sum(common.file_size(f) for f in files)
    common.log("wrote %d models (%d files, %d bytes) to %s in %.1fs"
               % (len(NAMES), len(files), total, sd, t()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
