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
                keep_batchnorm=False, opset=13):
    """torch.onnx.export with static shapes, opset 13 and constant folding.

    With keep_batchnorm=False, the exporter's eval-mode peephole folds BatchNorm
    into the preceding Conv (the usual deployment form). With keep_batchnorm=True,
    BatchNormalization nodes are preserved (model must already be in eval mode) so
    that the Loom compiler's own BN folding is exercised.
    Returns a dict describing inputs/outputs of the exported graph.
    """
    import torch
    import onnx
    model.eval()
    makedirs(os.path.dirname(os.path.abspath(path)))
    tmp = path + ".tmp"
    kwargs = dict(export_params=True, opset_version=opset, do_constant_folding=True,
                  input_names=[input_name], output_names=[output_name])
    kwargs["training"] = (torch.onnx.TrainingMode.PRESERVE if keep_batchnorm
                          else torch.onnx.TrainingMode.EVAL)
    import warnings
    with torch.no_grad(), warnings.catch_warnings():
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
