#!/usr/bin/python3
"""Export randomly initialised ResNet-18 and MobileNetV2 (torchvision, weights=None) to ONNX.

No pretrained weights are downloaded. Random init leaves BatchNorm running stats at
(0,1), which gives badly scaled activations, so BN statistics are re-estimated
(cumulative average, momentum=None) over seeded image-like inputs before export.
Inputs are seeded smooth multi-scale colour images with a few hard-edged shapes,
normalised with the ImageNet mean/std, so the logits are not degenerate.

A seeded network must also be well conditioned, like a trained one, for int8
accuracy to mean anything: MobileNetV2's depthwise kernels are drawn as a mean
plus noise (init_depthwise), its residual branches start small
(scale_residual_branches), and both classifiers read the principal directions
of their features (recenter_classifier). Each docstring says why.

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
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
COS_LIMIT = 0.95
LOGIT_STD = 2.0        # target logit std after classifier re-centring
DW_NOISE = 1.0         # depthwise kernels: mean + noise of this std relative to the mean
RES_GAMMA = 0.25       # MobileNetV2: BN scale ending each residual branch
FEATURE_PCS = 32       # the classifier reads this many principal directions of the features


def smooth_image(np, torch, seed, size=224):
    """A deterministic image-like input [1,3,size,size], float32, ImageNet-normalised."""
    F = torch.nn.functional
    rng = np.random.default_rng(seed)
    img = np.zeros((3, size, size), dtype=np.float64)
    # multi-scale (1/f-like) noise; a shared luminance part plus weaker colour parts
    for s in (2, 4, 8, 16, 32, 64):
        lum = rng.standard_normal((1, s, s))
        col = rng.standard_normal((3, s, s)) * 0.5
        grid = torch.from_numpy(lum + col)[None]
        up = F.interpolate(grid, size=(size, size), mode="bicubic", align_corners=False)[0]
        img += up.numpy() * (4.0 / s) ** 0.7
    img = (img - img.mean()) / (img.std() + 1e-12)
    img = 1.0 / (1.0 + np.exp(-1.5 * img))            # to (0,1), smooth contrast
    # a few hard-edged rectangles and discs with random flat colours
    yy, xx = np.mgrid[0:size, 0:size]
    for _ in range(int(rng.integers(2, 6))):
        colour = rng.uniform(0, 1, size=3)[:, None]
        alpha = rng.uniform(0.5, 1.0)
        if rng.uniform() < 0.5:
            y0, x0 = rng.integers(0, size - 16, size=2)
            h, w = rng.integers(16, size // 2, size=2)
            mask = (yy >= y0) & (yy < y0 + h) & (xx >= x0) & (xx < x0 + w)
        else:
            cy, cx = rng.uniform(0, size, size=2)
            r = rng.uniform(10, size / 4)
            mask = (yy - cy) ** 2 + (xx - cx) ** 2 < r * r
        img[:, mask] = (1 - alpha) * img[:, mask] + alpha * colour
    mean = np.array(MEAN)[:, None, None]
    std = np.array(STD)[:, None, None]
    return ((img - mean) / std).astype(np.float32)[None]


def init_depthwise(torch, model):
    """Draw each depthwise kernel as a positive mean plus noise of DW_NOISE x that mean.

    torchvision's init draws zero-mean depthwise kernels. On image-like inputs
    a zero-mean 3x3 kernel is a high-pass filter: its response is small and
    mostly fine detail and noise, which BN re-estimation then scales up to unit
    variance, block after block. The resulting net amplifies any perturbation
    (rounding only the input to 8 bits dropped the logits' cosine to 0.72),
    unlike a trained MobileNetV2, whose depthwise kernels mostly have a strong
    DC (smoothing) component. Only the kernels' distribution changes; the
    architecture, BN layers and their eval mode stay torchvision's.
    """
    n = 0
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Conv2d) and m.groups > 1 and m.groups == m.in_channels:
                w = m.weight
                w.copy_(w.std() * (1.0 + DW_NOISE * torch.randn_like(w)))
                n += 1
    return n


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
        yield np.concatenate([smooth_image(np, torch, BN_SEED0 + b * BN_BATCH + i)
                              for i in range(BN_BATCH)])


def reestimate_bn(torch, np, model):
    """Replace BN running stats by cumulative averages over seeded image-like batches."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None               # cumulative moving average
    model.train()
    with torch.no_grad():
        for x in bn_batches(np, torch):
            model(torch.from_numpy(x))
    model.eval()
    return len(bns)


def recenter_classifier(torch, np, model):
    """Make logits zero-mean with std LOGIT_STD over the BN-estimation images.

    After global average pooling every feature is a positive mean, so with random
    fc weights all inputs share one dominant logit direction W*mu (cosine ~0.96
    between unrelated inputs). Like BN re-estimation, this only re-calibrates
    affine parameters: W <- W P, with P the projection onto the FEATURE_PCS
    principal directions in which the features of different images differ (a
    trained classifier reads those, not the directions of small, noise-like
    variation), b <- -W mu, then (W, b) scaled so the logit std is LOGIT_STD.
    """
    fc = classifier(model)
    feats = []
    h = fc.register_forward_hook(lambda m, i, o: feats.append(i[0].detach().clone()))
    with torch.no_grad():
        for x in bn_batches(np, torch):
            model(torch.from_numpy(x))
    h.remove()
    f = torch.cat(feats).double()
    _, _, vh = torch.linalg.svd(f - f.mean(0), full_matrices=False)
    pcs = vh[:FEATURE_PCS]
    W = fc.weight.detach().double() @ pcs.t() @ pcs
    with torch.no_grad():
        b = -(W @ f.mean(0))
        std = (f @ W.t() + b).std().item()
        scale = LOGIT_STD / std
        fc.weight.copy_((W * scale).float())
        fc.bias.copy_((b * scale).float())
    return scale


def logit_stats(np, outs):
    o = np.stack([x.reshape(-1).astype(np.float64) for x in outs])
    n = o / np.linalg.norm(o, axis=1, keepdims=True)
    cos = n @ n.T
    off = cos[~np.eye(len(outs), dtype=bool)]
    return {
        "std_per_input": [float(x.std()) for x in o],
        "mean_per_input": [float(x.mean()) for x in o],
        "absmax": float(np.abs(o).max()),
        "argmax": [int(x.argmax()) for x in o],
        "max_pairwise_cosine": float(off.max()),
        "mean_pairwise_cosine": float(off.mean()),
    }


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

    calib = [smooth_image(np, torch, CALIB_SEED0 + i) for i in range(N_CALIB)]
    check = [smooth_image(np, torch, CHECK_SEED0 + i) for i in range(N_CHECK)]
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
        ndw = init_depthwise(torch, model)
        nres = scale_residual_branches(torch, torchvision, model)
        nbn = reestimate_bn(torch, np, model)
        fc_scale = recenter_classifier(torch, np, model)
        with torch.no_grad():
            outs = [model(torch.from_numpy(x)).numpy().astype(np.float32) for x in check]
        st = logit_stats(np, outs)
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
