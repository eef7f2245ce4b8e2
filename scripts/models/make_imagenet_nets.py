#!/usr/bin/python3
"""Export randomly initialised ResNet-18 and MobileNetV2 (torchvision, weights=None) to ONNX.

No pretrained weights are downloaded. Random init leaves BatchNorm running stats at
(0,1), which gives badly scaled activations, so BN statistics are re-estimated
(cumulative average, momentum=None) over seeded image-like inputs before export.
Inputs are seeded smooth multi-scale colour images with a few hard-edged shapes,
normalised with the ImageNet mean/std, so the logits are not degenerate.

A seeded network must also be well conditioned, like a trained one, for int8
accuracy to mean anything: MobileNetV2's depthwise kernels are drawn as a mean
plus noise (common.init_depthwise), its residual branches start small
(scale_residual_branches), and both classifiers read the principal directions
of their features (common.recenter_classifier). Each docstring says why.

Writes <out>/resnet18.onnx, <out>/mobilenetv2.onnx, <out>/calib_imagenet/NNN.npy
(8 inputs), <out>/check_imagenet/NNN.npy (4 other inputs) with PyTorch float
reference outputs <out>/check_imagenet/<net>_NNN_out.npy, and imagenet_manifest.json.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SEED = 0
ALL_NETS = ("resnet18", "mobilenetv2")
NETS = ALL_NETS        # a driver may restrict it; each net keeps its own seed
N_CALIB = 8
N_CHECK = 4
BN_BATCHES = 8
BN_BATCH = 8
CALIB_SEED0 = 1000     # seeds for the calibration images
CHECK_SEED0 = 2000     # seeds for the check images (disjoint from calibration)
BN_SEED0 = 3000        # seeds for the BN re-estimation images (disjoint from both)
MEAN = common.IMAGENET_MEAN
STD = common.IMAGENET_STD
COS_LIMIT = 0.95
LOGIT_STD = 2.0        # target logit std after classifier re-centring
DW_NOISE = 1.0         # depthwise kernels: mean + noise of this std relative to the mean
RES_GAMMA = 0.25       # MobileNetV2: BN scale ending each residual branch
FEATURE_PCS = 32       # the classifier reads this many principal directions of the features


def scale_residual_branches(torch, torchvision, model):
    """Set the scale (gamma) of the BN that ends each residual branch to RES_GAMMA.

    The same idea as torchvision's zero_init_residual for ResNet (and Fixup,
    SkipInit): a block starts close to the identity, as the residual branches of
    trained networks mostly are, instead of adding a unit-variance random
    function to the stream at each of MobileNetV2's 10 residual blocks.
    """
    n = 0
    ir = torchvision.models.mobilenetv2.InvertedResidual
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, ir) and m.use_res_connect:
                m.conv[-1].weight.fill_(RES_GAMMA)
                n += 1
    return n


def build(torchvision, name):
    tvm = torchvision.models
    if name == "resnet18":
        return tvm.resnet18(weights=None)
    if name == "mobilenetv2":
        return tvm.mobilenet_v2(weights=None)
    raise ValueError(name)


def classifier(model):
    """The final Linear layer (resnet18: fc, mobilenet_v2: classifier[-1])."""
    return model.fc if hasattr(model, "fc") else model.classifier[-1]


def bn_batches(np, torch):
    for b in range(BN_BATCHES):
        yield np.concatenate([common.smooth_image(np, torch, BN_SEED0 + b * BN_BATCH + i)
                              for i in range(BN_BATCH)])


def main():
    ap = common.arg_parser(__doc__.strip().splitlines()[0])
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    args.out = out
    calib_dir = os.path.join(out, "calib_imagenet")
    check_dir = os.path.join(out, "check_imagenet")
    files = [os.path.join(out, n + ".onnx") for n in NETS]
    files += [os.path.join(calib_dir, "%03d.npy" % i) for i in range(N_CALIB)]
    files += [os.path.join(check_dir, "%03d.npy" % i) for i in range(N_CHECK)]
    files += [os.path.join(check_dir, "%s_%03d_out.npy" % (n, i)) for n in NETS for i in range(N_CHECK)]
    files.append(os.path.join(out, "imagenet_manifest.json"))
    if common.skip_if_done(args, files):
        return 0

    common.require("numpy", "torch", "torchvision", "onnx")
    import numpy as np
    import torch
    import torchvision
    import onnx  # noqa: F401

    t = common.Timer()
    common.seed_everything(SEED)
    common.makedirs(out)

    calib = [common.smooth_image(np, torch, CALIB_SEED0 + i) for i in range(N_CALIB)]
    check = [common.smooth_image(np, torch, CHECK_SEED0 + i) for i in range(N_CHECK)]
    common.save_npy_dir(calib_dir, calib, np.float32)
    common.save_npy_dir(check_dir, check, np.float32)
    common.log("wrote %d calibration + %d check inputs [1,3,224,224] (%.1fs)"
               % (N_CALIB, N_CHECK, t()))

    manifest = {"seed": SEED, "versions": common.versions(),
                "input_normalisation": {"mean": MEAN, "std": STD},
                "inputs": "seeded smooth multi-scale colour noise + random rectangles/discs, "
                          "ImageNet-normalised",
                "bn_reestimation": "%d train-mode batches of %d image-like inputs (seeds %d..), "
                                   "momentum=None" % (BN_BATCHES, BN_BATCH, BN_SEED0),
                "depthwise_init": "mean + N(0, %.2f x mean) per weight (see init_depthwise)"
                                  % DW_NOISE,
                "residual_branches": "MobileNetV2: gamma of the BN ending each residual branch "
                                     "= %.2f" % RES_GAMMA,
                "classifier_recentring": "final Linear: W projected on the %d principal "
                                         "directions of the features, b = -W*mean(features), "
                                         "then W,b scaled so logit std = %.1f over the BN images"
                                         % (FEATURE_PCS, LOGIT_STD),
                "calib_dir": "calib_imagenet", "check_dir": "check_imagenet",
                "models": {}}
    ok = True
    for name in NETS:
        t0 = t()
        torch.manual_seed(SEED + ALL_NETS.index(name))
        model = build(torchvision, name)
        ndw = common.init_depthwise(torch, model, DW_NOISE)
        nres = scale_residual_branches(torch, torchvision, model)
        nbn = common.reestimate_bn(torch, model, bn_batches(np, torch))
        fc_scale = common.recenter_classifier(torch, model, classifier(model), bn_batches(np, torch),
                                               FEATURE_PCS, LOGIT_STD)
        with torch.no_grad():
            outs = [model(torch.from_numpy(x)).numpy().astype(np.float32) for x in check]
        st = common.logit_stats(np, outs)
        common.log("%s: %d depthwise kernels drawn as mean + noise, %d residual branches "
                   "scaled by %.2f, re-estimated %d BN layers, classifier re-centred (x%.3f)"
                   % (name, ndw, nres, RES_GAMMA, nbn, fc_scale))
        common.log("%s: logits std %s, |max| %.2f, argmax %s, "
                   "pairwise cosine max %.3f mean %.3f"
                   % (name, " ".join("%.3f" % s for s in st["std_per_input"]),
                      st["absmax"], st["argmax"], st["max_pairwise_cosine"],
                      st["mean_pairwise_cosine"]))
        if st["max_pairwise_cosine"] >= COS_LIMIT:
            common.log("ERROR: %s outputs for different inputs are too similar (cosine >= %.2f)"
                       % (name, COS_LIMIT))
            ok = False
        for i, o in enumerate(outs):
            common.save_npy(os.path.join(check_dir, "%s_%03d_out.npy" % (name, i)), o, np.float32)
        desc = common.export_onnx(model, torch.zeros(1, 3, 224, 224),
                                  os.path.join(out, name + ".onnx"))
        nparams = sum(p.numel() for p in model.parameters())
        common.log("%s: exported (%d params, ops %s) in %.1fs"
                   % (name, nparams, desc["ops"], t() - t0))
        manifest["models"][name] = {
            "onnx": name + ".onnx", "params": int(nparams), "opset": desc["opset"],
            "inputs": desc["inputs"], "outputs": desc["outputs"], "ops": desc["ops"],
            "check_ref_outputs": ["check_imagenet/%s_%03d_out.npy" % (name, i)
                                  for i in range(N_CHECK)],
            "logit_stats": st,
        }
    if not ok:
        sys.stderr.write("error: degenerate network outputs; not writing manifest\n")
        return 1
    common.write_manifest(os.path.join(out, "imagenet_manifest.json"), manifest)
    common.report_files([f for f in files if f.endswith((".onnx", ".json"))], out)
    common.log("done in %.1fs" % t())
    return 0


if __name__ == "__main__":
    sys.exit(main())
