#!/usr/bin/env python3
"""How much finer int8 scales would gain on the zoo's transformers.

For each zoo transformer (vit, bert, transformer) this script adds the tensors
that attention and LayerNorm quantize as outputs of a copy of the model,
runs that copy in float with Loom's host kernels (`loom compile --target cpu`,
`loom run`) on every calibration and check input, and compares, for each
tensor, symmetric int8 quantization with one scale per tensor (what the
compiler does) against one scale per group:

  * per head: the projections' results (an in_proj [S, 1, 3D] has 3H groups
    of d columns: Q's, K's and V's heads; BERT's Q, K, V [1, S, D] have H),
    the scores [H, S, S] and the heads' P x V [H, S, d];
  * per token: the residual stream, the LayerNorms' input [.., S, D] (rows).

Each scale is the group's max |x| over all inputs / 127 (the calibration's
min/max).  It prints, per tensor, the groups' max |x| (smallest..largest, and
their ratio) and the signal-to-quantization-noise ratio
10 log10(sum x^2 / sum (x - q(x))^2) over all inputs both ways.  The gain of
per-group scales is the difference: 6.02 dB is one bit.  docs/quantization.md
quotes the figures.

    /usr/bin/python3 scripts/models/scale_groups.py --loom build/bin/loom \
        --zoo build/models/zoo [--work /tmp/scale_groups] [vit bert transformer]
"""
import argparse
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import onnx
except ImportError as e:
    sys.exit("scale_groups.py: %s (apt-get install python3-onnx python3-numpy)" % e)


def marked_tensors(graph):
    """(name, kind) of the tensors to study, in graph order."""
    softmax_out = {n.output[0] for n in graph.node if n.op_type == "Softmax"}
    producer = {o: n for n in graph.node for o in n.output}
    found = []
    for n in graph.node:
        if n.op_type == "Add" and re.search(r"self_att\w*/Add$", n.name):
            found.append((n.output[0], "in_proj"))
        elif n.op_type == "Add" and re.search(r"/(q|k|v)/Add$", n.name):
            found.append((n.output[0], "proj"))
        elif n.op_type == "Softmax":  # the product before a scale or a mask (BERT's Div, Add)
            t = n.input[0]
            while t in producer and producer[t].op_type in ("Add", "Div", "Mul"):
                t = producer[t].input[0]
            found.append((t, "scores"))
        elif n.op_type == "MatMul" and n.input[0] in softmax_out:
            found.append((n.output[0], "PxV"))
        elif n.op_type == "LayerNormalization" or re.search(r"(ln|norm)\w*/ReduceMean$", n.name):
            found.append((n.input[0], "residual"))
    seen, unique = set(), []
    for t, kind in found:
        if t not in seen:
            seen.add(t)
            unique.append((t, kind))
    return unique


def run_float(loom, model, zoo, work):
    """Runs the model with the marked tensors as outputs; returns {name: [N, ...]}, kinds."""
    m = onnx.load(os.path.join(zoo, model, "model.onnx"))
    marked = marked_tensors(m.graph)
    outputs = {o.name for o in m.graph.output}
    for t, _ in marked:
        if t not in outputs:
            m.graph.output.append(onnx.helper.make_empty_tensor_value_info(t))
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, model + ".onnx")
    onnx.save(m, path)
    subprocess.run([loom, "compile", path, "--target", "cpu", "-o", path + ".loom"], check=True,
                   stdout=subprocess.DEVNULL)
    inputs = []
    for sub in ("calib", "check"):
        d = os.path.join(zoo, model, sub)
        inputs += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".npy")]
    values = {t: [] for t, _ in marked}
    for i, x in enumerate(inputs):
        args = [loom, "run", path + ".loom", "-q", "-i", x]
        files = [os.path.join(work, "%s.%d.%d.npy" % (model, i, k)) for k in range(len(marked))]
        for (t, _), f in zip(marked, files):
            args += ["-o", "%s=%s" % (t, f)]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        for (t, _), f in zip(marked, files):
            values[t].append(np.load(f))
    return {t: np.stack(v) for t, v in values.items()}, marked, len(inputs)


def groups_of(x, kind, heads):
    if kind in ("scores", "PxV"):
        x = x.reshape((-1,) + x.shape[-3:])
        return [x[:, h] for h in range(x.shape[1])]
    if kind == "residual":
        x = x.reshape((x.shape[0], -1, x.shape[-1]))
        return [x[:, s] for s in range(x.shape[1])]
    n = heads * (3 if kind == "in_proj" else 1)
    d = x.shape[-1] // n
    return [x[..., g * d:(g + 1) * d] for g in range(n)]


def quantize(x, amax):
    s = amax / 127.0 if amax > 0 else 1.0
    return np.clip(np.round(x / s), -127, 127) * s


def sqnr(x, y):
    return 10 * np.log10(float((x.astype(np.float64) ** 2).sum()) /
                         max(float(((x.astype(np.float64) - y) ** 2).sum()), 1e-30))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--loom", required=True)
    ap.add_argument("--zoo", required=True, help="the zoo's models: ZOO/NAME/{model.onnx,calib,check}")
    ap.add_argument("--work", default="/tmp/scale_groups")
    ap.add_argument("models", nargs="*", default=["vit", "bert", "transformer"])
    a = ap.parse_args()
    for model in a.models:
        values, marked, n = run_float(a.loom, model, a.zoo, a.work)
        heads = next(values[t].shape[-3] for t, k in marked if k == "scores")
        print("== %s: %d heads, %d inputs" % (model, heads, n))
        print("%-44s %-8s %6s %16s %7s %10s %10s %6s" % ("tensor", "kind", "groups", "max|x| per group",
                                                         "ratio", "per tensor", "per group", "gain"))
        for t, kind in marked:
            x = values[t]
            groups = groups_of(x, kind, heads)
            amax = np.array([np.abs(g).max() for g in groups])
            whole = sqnr(x, quantize(x, np.abs(x).max()))
            fine = sqnr(np.concatenate([g.ravel() for g in groups]),
                        np.concatenate([quantize(g, m).ravel() for g, m in zip(groups, amax)]))
            print("%-44s %-8s %6d %7.2f..%-7.2f %6.1fx %7.1f dB %7.1f dB %+5.1f" % (
                t[-44:], kind, len(groups), amax.min(), amax.max(), amax.max() / max(amax.min(), 1e-30),
                whole, fine, fine - whole))


if __name__ == "__main__":
    main()
