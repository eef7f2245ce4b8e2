"""check_python.py - the installed Python package `loom` against the
installed `loom run`, on the digits CNN (tests/install/test_install.sh).

    check_python.py LOOM MODEL.loom IMAGES.npy COUNT BACKEND[,BACKEND...] TMPDIR

For each backend and each of the first COUNT images: `loom run --counters`
on the image (a .npy of shape [1, ...]) and loom.Device(backend).load(...)
on the same image must give the same output bytes and the same counters
(every counter: both run the same jobs on the same deterministic device).
Also checks the package's error path: a missing file raises LoomError with
libloom's message, a wrong shape names the input.  Exit status 1 on any
difference.
"""

import os
import subprocess
import sys

import numpy as np

import loom


def cli_run(loom_bin, model, backend, x, tmp):
    """Output array and {counter: total} of `loom run` on one input."""
    xin, yout = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(xin, x)
    text = subprocess.run(
        [loom_bin, "run", model, "--backend", backend, "-i", xin, "-o", yout, "--counters"],
        check=True, capture_output=True, text=True).stdout
    totals, in_job = {}, False
    for line in text.splitlines():
        if not line.startswith(" "):
            in_job = line.startswith("job ") and line.endswith(":")  # not "total counters:"
            continue
        parts = line.split()
        if in_job and len(parts) == 2 and parts[0] in loom.COUNTERS:
            totals[parts[0]] = totals.get(parts[0], 0) + int(parts[1])
    return np.load(yout), totals


def check_backend(loom_bin, model_path, images, count, backend, tmp):
    bad = 0
    with loom.Device(backend) as dev:
        model = dev.load(model_path)
        (inp,), (out,) = model.inputs, model.outputs
        for i in range(count):
            x = images[i:i + 1].astype(np.float32).reshape(inp.shape)
            want, want_counters = cli_run(loom_bin, model_path, backend, x, tmp)
            got = model(**{inp.name: x})[out.name]
            counters = model.counters()
            if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
                print("check_python: %s image %d: output differs from loom run" % (backend, i))
                print("  package:", got.ravel()[:10], "\n  loom run:", want.ravel()[:10])
                bad = 1
            if counters != want_counters:
                print("check_python: %s image %d: counters differ" % (backend, i))
                print("  package:", counters, "\n  loom run:", want_counters)
                bad = 1
        print("check_python: %s: %d images bit-identical to loom run (%d jobs, %d GEMM ops each)"
              % (backend, count, model.job_count, counters["GEMM_OPS"]))
    return bad


def check_errors(model_path):
    bad = 0
    with loom.Device("fsim") as dev:
        try:
            dev.load("/nonexistent.loom")
            bad = 1
        except loom.LoomError as e:
            bad |= "nonexistent" not in str(e)
        model = dev.load(model_path)
        inp = model.inputs[0]
        try:
            model.set_input(inp.name, np.zeros((3,), np.float32))
            bad = 1
        except loom.LoomError as e:
            bad |= inp.name not in str(e) or e.status != "INVALID"
    if bad:
        print("check_python: errors are not reported as LoomError with the library's message")
    return bad


def main():
    loom_bin, model_path, images_path, count, backends, tmp = sys.argv[1:7]
    images = np.load(images_path)
    print("check_python: loom %s from %s (backends: %s)"
          % (loom.version(), loom._capi.library_path, ", ".join(loom.backends())))
    bad = check_errors(model_path)
    for backend in backends.split(","):
        bad |= check_backend(loom_bin, model_path, images, int(count), backend, tmp)
    return bad


if __name__ == "__main__":
    sys.exit(main())
