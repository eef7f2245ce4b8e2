#!/usr/bin/python3
"""Export the twelve ResNet-18 convolution workloads of DESIGN.md as one-layer ONNX models.

Each model is Conv(bias) + ReLU on a [1, C, H, W] float input, seeded weights, padding
kernel // 2 (the ResNet-18 convention), so `loom compile --calib` quantizes it to one int8
accelerator layer.  Benchmark input only (Python never runs in Loom's product path).

Writes <out>/wNN.onnx, <out>/calib_wNN/000..001.npy, <out>/wNN_in.npy and
<out>/workloads.tsv (name H C K R S: one row per workload).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts", "models"))
import common  # noqa: E402

# (H=W, in channels, out channels, kernel, stride): DESIGN.md "Reference points"
WORKLOADS = [(224, 3, 64, 7, 2), (56, 64, 64, 3, 1), (56, 64, 64, 1, 1), (56, 64, 128, 3, 2),
             (56, 64, 128, 1, 2), (28, 128, 128, 3, 1), (28, 128, 256, 3, 2), (28, 128, 256, 1, 2),
             (14, 256, 256, 3, 1), (14, 256, 512, 3, 2), (14, 256, 512, 1, 2), (7, 512, 512, 3, 1)]
N_CALIB = 2


def main():
    args = common.arg_parser(__doc__.splitlines()[0]).parse_args()
    out = common.makedirs(args.out)
    tsv = os.path.join(out, "workloads.tsv")
    if common.skip_if_done(args, [tsv]):
        return
    common.require("numpy", "torch", "onnx")
    import numpy as np
    import torch
    common.seed_everything(0)
    rows = []
    for i, (h, c, k, r, s) in enumerate(WORKLOADS):
        name = "w%02d" % (i + 1)
        conv = torch.nn.Conv2d(c, k, r, stride=s, padding=r // 2, bias=True)
        model = torch.nn.Sequential(conv, torch.nn.ReLU())
        x = torch.randn(1, c, h, h)
        common.export_onnx(model, x, os.path.join(out, name + ".onnx"))
        rng = np.random.default_rng(100 + i)
        common.save_npy_dir(os.path.join(out, "calib_" + name),
                            [rng.standard_normal((1, c, h, h)).astype(np.float32)
                             for _ in range(N_CALIB)])
        common.save_npy(os.path.join(out, name + "_in.npy"),
                        rng.standard_normal((1, c, h, h)).astype(np.float32))
        rows.append("%s\t%d\t%d\t%d\t%d\t%d\n" % (name, h, c, k, r, s))
        common.log("%s: %dx%d, %d -> %d channels, %dx%d stride %d" % (name, h, h, c, k, r, r, s))
    tmp = tsv + ".tmp"
    with open(tmp, "w") as f:
        f.write("".join(rows))
    os.replace(tmp, tsv)


if __name__ == "__main__":
    main()
