#!/usr/bin/python3
"""Shared helpers for the Loom test-model generators.

Python is never on the Loom product path: these scripts only produce ONNX models
and .npy test data for the C toolchain's tests. Run them with the Debian
interpreter (/usr/bin/python3), which sees the python3-torch / python3-onnx /
python3-sklearn Debian packages.
"""
import argparse
import json
import os
import random
import sys
import time

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_OUT = os.path.join(REPO_ROOT, "build", "models")

# python module -> Debian package that provides it
DEBIAN_PKG = {
    "numpy": "python3-numpy",
    "torch": "python3-torch",
    "torchvision": "python3-torchvision",
    "onnx": "python3-onnx",
    "sklearn": "python3-sklearn",
}


def require(*modules):
    """Import-check the given modules; exit(2) naming the Debian packages if any is missing."""
    missing = []
    for m in modules:
        try:
            __import__(m)
        except Exception as e:  # ImportError, or a broken install raising something else
            missing.append((m, e))
    if not missing:
        return
    pkgs = " ".join(sorted({DEBIAN_PKG.get(m, "python3-" + m) for m, _ in missing}))
    for m, e in missing:
        sys.stderr.write("error: required Python module '%s' is not importable (%s)\n" % (m, e))
    sys.stderr.write("       install it with:  sudo apt-get install -y %s\n" % pkgs)
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        sys.stderr.write("       note: this is %s; the Debian packages are only visible to "
                         "/usr/bin/python3 (run: /usr/bin/python3 %s)\n"
                         % (sys.executable, sys.argv[0]))
    sys.exit(2)


def arg_parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", default=DEFAULT_OUT,
                   help="output directory (default: <repo>/build/models)")
    p.add_argument("--force", action="store_true",
                   help="regenerate even if all outputs already exist")
    return p


def log(msg):
    print("[%s] %s" % (os.path.basename(sys.argv[0]), msg), flush=True)


class Timer:
    def __init__(self):
        self.t0 = time.monotonic()

    def __call__(self):
        return time.monotonic() - self.t0


def seed_everything(seed, threads=2):
    """Seed python/numpy/torch and make torch deterministic on CPU."""
    import numpy as np
    random.seed(seed)
    np.random.seed(seed)
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # can only be set once per process
    torch.use_deterministic_algorithms(True)


def outputs_exist(paths):
    return all(os.path.exists(p) for p in paths)


def skip_if_done(args, paths):
    """Return True (and say so) if every path exists and --force was not given."""
    if not args.force and outputs_exist(paths):
        log("outputs already present in %s (use --force to regenerate)" % args.out)
        return True
    return False


def makedirs(path):
    os.makedirs(path, exist_ok=True)
    return path


def save_npy(path, array, dtype=None):
    """Save a C-contiguous array with an explicit dtype (atomic rename)."""
    import numpy as np
    a = np.ascontiguousarray(array if dtype is None else np.asarray(array, dtype=dtype))
    makedirs(os.path.dirname(os.path.abspath(path)))
    tmp = path + ".tmp.npy"
    np.save(tmp, a)
    os.replace(tmp, path)
    return path


def save_npy_dir(dirpath, arrays, dtype=None):
    """Write arrays as dirpath/000.npy, 001.npy, ...; remove stale NNN.npy beyond len."""
    makedirs(dirpath)
    names = []
    for i, a in enumerate(arrays):
        names.append(save_npy(os.path.join(dirpath, "%03d.npy" % i), a, dtype))
    for f in os.listdir(dirpath):
        if f.endswith(".npy") and f[:-4].isdigit() and int(f[:-4]) >= len(arrays):
            os.remove(os.path.join(dirpath, f))
    return names


def export_onnx(model, example_input, path, input_name="input", output_name="output",
                keep_batchnorm=False, opset=13, dynamic_axes=None, no_grad=True):
    """torch.onnx.export with static shapes, opset 13 and constant folding.

    With keep_batchnorm=False, the exporter's eval-mode peephole folds BatchNorm
    into the preceding Conv (the usual deployment form). With keep_batchnorm=True,
    BatchNormalization nodes are preserved (model must already be in eval mode) so
    that the Loom compiler's own BN folding is exercised.
    dynamic_axes is torch.onnx.export's (dimension names of the inputs and
    outputs). no_grad=False exports with autograd on: PyTorch's fused inference
    kernels (the TransformerEncoderLayer / MultiheadAttention fast path), which
    have no ONNX form, are then not taken.
    Returns a dict describing inputs/outputs of the exported graph.
    """
    import contextlib
    import torch
    import onnx
    model.eval()
    makedirs(os.path.dirname(os.path.abspath(path)))
    tmp = path + ".tmp"
    kwargs = dict(export_params=True, opset_version=opset, do_constant_folding=True,
                  input_names=[input_name], output_names=[output_name])
    if dynamic_axes:
        kwargs["dynamic_axes"] = dynamic_axes
    kwargs["training"] = (torch.onnx.TrainingMode.PRESERVE if keep_batchnorm
                          else torch.onnx.TrainingMode.EVAL)
    import warnings
    grad = torch.no_grad() if no_grad else contextlib.nullcontext()
    with grad, warnings.catch_warnings():
        # PRESERVE + constant folding warns about training-mode models; ours is in eval mode.
        warnings.filterwarnings("ignore", message=".*constant folding be turned off.*")
        torch.onnx.export(model, example_input, tmp, **kwargs)
    m = onnx.load(tmp)
    onnx.checker.check_model(m)
    os.replace(tmp, path)
    return describe_onnx(m)


def _value_info(vi):
    import onnx
    t = vi.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.shape.dim]
    return {"name": vi.name,
            "dtype": onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name
            if hasattr(onnx.helper, "tensor_dtype_to_np_dtype")
            else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type].name,
            "shape": dims}


def describe_onnx(model_or_path):
    """Inputs (excluding initializers), outputs, op histogram of an ONNX model."""
    import onnx
    m = onnx.load(model_or_path) if isinstance(model_or_path, str) else model_or_path
    inits = {i.name for i in m.graph.initializer}
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    return {
        "opset": max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), default=0),
        "inputs": [_value_info(v) for v in m.graph.input if v.name not in inits],
        "outputs": [_value_info(v) for v in m.graph.output],
        "ops": dict(sorted(ops.items())),
    }


def write_manifest(path, data):
    """Write a small, stable (sorted keys, 2-space indent) JSON manifest atomically."""
    makedirs(os.path.dirname(os.path.abspath(path)))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    return path


def versions():
    v = {"python": sys.version.split()[0]}
    for m in ("numpy", "torch", "torchvision", "onnx", "sklearn"):
        mod = sys.modules.get(m)
        if mod is not None:
            v[m] = getattr(mod, "__version__", "?")
    return v


def file_size(path):
    return os.path.getsize(path) if os.path.exists(path) else 0


def report_files(paths, root):
    for p in paths:
        log("  %-40s %10d bytes" % (os.path.relpath(p, root), file_size(p)))


# ---- conditioning of seeded networks (shared by make_imagenet_nets.py and make_zoo.py) ----
# A seeded network must be well conditioned, like a trained one, for int8 accuracy
# to mean anything (docs/quantization.md): each helper below re-calibrates
# parameters from seeded image-like inputs; none is training.

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def smooth_image(np, torch, seed, size=224):
    """A deterministic image-like input [1,3,size,size], float32, ImageNet-normalised.

    Smooth multi-scale (1/f-like) colour noise with a few hard-edged rectangles
    and discs of flat random colours.
    """
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
    mean = np.array(IMAGENET_MEAN)[:, None, None]
    std = np.array(IMAGENET_STD)[:, None, None]
    return ((img - mean) / std).astype(np.float32)[None]


def init_depthwise(torch, model, noise):
    """Draw each depthwise kernel as a positive mean plus noise of `noise` x that mean.

    torchvision's init draws zero-mean depthwise kernels. On image-like inputs
    a zero-mean 3x3 kernel is a high-pass filter: its response is small and
    mostly fine detail and noise, which BN re-estimation then scales up to unit
    variance, block after block. The resulting net amplifies any perturbation
    (rounding only the input to 8 bits dropped MobileNetV2's logits' cosine to
    0.72), unlike a trained one, whose depthwise kernels mostly have a strong DC
    (smoothing) component. Only the kernels' distribution changes.
    """
    n = 0
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Conv2d) and m.groups > 1 and m.groups == m.in_channels:
                w = m.weight
                w.copy_(w.std() * (1.0 + noise * torch.randn_like(w)))
                n += 1
    return n


def reestimate_bn(torch, model, batches):
    """Replace BN running stats by cumulative averages (momentum=None) over `batches`
    (an iterable of numpy arrays, run in train mode). Returns the number of BN layers."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None               # cumulative moving average
    model.train()
    with torch.no_grad():
        for x in batches:
            model(torch.from_numpy(x))
    model.eval()
    return len(bns)


def recenter_classifier(torch, model, fc, batches, pcs, logit_std, robust=False):
    """Make the logits of Linear layer `fc` zero-mean with std `logit_std` over `batches`.

    After global pooling every feature is a positive mean, so with random fc
    weights all inputs share one dominant logit direction W*mu (cosine ~0.96
    between unrelated inputs). Like BN re-estimation, this only re-calibrates
    affine parameters: W <- W P, with P the projection onto the `pcs` principal
    directions in which the features of different inputs differ (a trained
    classifier reads those, not the directions of small, noise-like variation),
    b <- -W mu, then (W, b) scaled so the logit std is `logit_std`. Features of
    every position are samples when fc sees a sequence. With robust=True, feature
    vectors longer than twice the median length are shortened to it first, so that
    the few inputs a seeded network amplifies (heavy-tailed features, as in
    MobileNetV3) do not set the mean and the directions for all the others; with
    robust="drop" they are left out. Returns the scale.
    """
    feats = []
    h = fc.register_forward_hook(
        lambda m, i, o: feats.append(i[0].detach().reshape(-1, i[0].shape[-1]).clone()))
    with torch.no_grad():
        for x in batches:
            model(torch.from_numpy(x))
    h.remove()
    f = torch.cat(feats).double()
    if robust:
        n = f.norm(dim=1, keepdim=True)
        if robust == "drop":
            f = f[(n <= 2 * n.median())[:, 0]]
        else:
            f = f * torch.clamp(2 * n.median() / n.clamp_min(1e-30), max=1.0)
    _, _, vh = torch.linalg.svd(f - f.mean(0), full_matrices=False)
    pc = vh[:pcs]
    W = fc.weight.detach().double() @ pc.t() @ pc
    with torch.no_grad():
        b = -(W @ f.mean(0))
        std = (f @ W.t() + b).std().item()
        scale = logit_std / std
        fc.weight.copy_((W * scale).float())
        fc.bias.copy_((b * scale).float())
    return scale


def logit_stats(np, outs):
    """Spread of a network's outputs over inputs: a degenerate (input-independent)
    network has pairwise cosines near 1."""
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
