#!/usr/bin/python3
"""ONNX's node tests through the user's path: `loom compile`, then `loom run`.

Usage: tests/onnx/run_node_suite.py [--loom build/bin/loom] [--tests build/onnx-node-tests]
           [--target cpu|accel] [--passing FILE] [--write-passing FILE] [--filter TEXT]
           [--jobs N] [-v]

For every test under TESTS/node/ (what scripts/gen_onnx_node_tests.py writes:
model.onnx and test_data_set_N/{input,output}_K.pb), each data set's inputs
are written as .npy files, the model is compiled with `loom compile
--target cpu` (or `--target accel`, calibrated on the data set's own inputs)
and run with `loom run` on fsim, and every output is compared with ONNX's
expected output: floats within rtol 1e-3 + atol 1e-4 (NaN equal to NaN),
integers and bools exactly.  With --target accel the outputs of float models
go through int8, so the comparison is against the int8 tolerance below.

Tests are eligible unless their model uses training ops (ai.onnx.preview.
training), sequence or optional types, random generators (Random*, Bernoulli,
Multinomial, and Dropout in training mode with a ratio above 0) or control
flow (If, Loop, Scan), or ops outside the ai.onnx domain (ai.onnx.ml); those
are counted apart and not run.  bfloat16 tensors travel as uint16 .npy files
(their raw bits: numpy has no bfloat16), as `loom run` reads and writes them.  The runner prints per op type passed / failed and
the first line of each failure's message, then the totals, and exits 1 when
a test listed in --passing (a committed list) fails: a regression.  New passes
are reported so the list can be updated (--write-passing).  Python and onnx are
test tools here: the product path is the two loom commands.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-3, 1e-4
# --target accel: an output that went through int8 may be off by a few
# quantization steps of its range; see docs/compiler.md ("ONNX node tests").
ACCEL_STEPS = 2

# --target accel runs the tests of these ops (single-node float32 tests):
# the ops the accelerator takes in int8 when their weights are constants.
ACCEL_OPS = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Mul", "Sub", "Div", "Relu", "Clip", "MaxPool",
             "AveragePool", "GlobalAveragePool", "Concat", "BatchNormalization", "Sum", "LeakyRelu",
             # element-wise functions of one tensor: epilogue tables (docs/compiler.md, "Activation tables")
             "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Exp", "Elu", "Softplus", "Softsign", "Erf", "Selu",
             "Celu", "ThresholdedRelu"}

RANDOM_OPS = {"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform",
              "RandomUniformLike"}
CONTROL_OPS = {"If", "Loop", "Scan"}
SEQUENCE_OPS = {"ConcatFromSequence", "SequenceAt", "SequenceConstruct", "SequenceEmpty",
                "SequenceErase", "SequenceInsert", "SequenceLength", "SequenceMap",
                "SplitToSequence", "Optional", "OptionalGetElement", "OptionalHasElement"}


def value_kind(vi):
    t = vi.type
    return t.WhichOneof("value")


def classify(name, model):
    """(op label, reason it is not eligible or None)."""
    g = model.graph
    ops = [n.op_type for n in g.node]
    domains = {n.domain for n in g.node}
    label = ops[0] if len(ops) == 1 else (ops[0] + "+" if ops else "?")
    if any(d.startswith("ai.onnx.preview.training") for d in domains):
        return label, "training"
    if any(d not in ("", "ai.onnx") for d in domains):
        return label, "other domain"
    if any(op in CONTROL_OPS for op in ops):
        return label, "control flow"
    if any(op in RANDOM_OPS for op in ops):
        return label, "random"
    # Dropout in training mode with a ratio above 0 draws its mask at random
    # (ONNX's expected outputs come from numpy's generator).
    if name.startswith("test_training_dropout") and "zero_ratio" not in name:
        return label, "random"
    if any(op in SEQUENCE_OPS for op in ops) or any(
            value_kind(v) != "tensor_type" for v in list(g.input) + list(g.output)):
        return label, "sequence/optional"
    return label, None


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def data_sets(test_dir):
    for d in sorted(os.listdir(test_dir)):
        if d.startswith("test_data_set_"):
            yield os.path.join(test_dir, d)


def compare_float(name, got, want, accel):
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        both_nan = np.isnan(g) & np.isnan(w)
        tol = ATOL + RTOL * np.abs(w)
        if accel:
            finite = w[np.isfinite(w)]
            span = float(finite.max() - finite.min()) if finite.size else 0.0
            tol = tol + accel * span / 255.0
        bad = ~both_nan & ~(np.abs(g - w) <= tol) & ~((g == w) & np.isinf(w))
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        return "output '%s': %d of %d values differ (first at %d: %r vs %r)" % (
            name, int(bad.sum()), bad.size, i, g.reshape(-1)[i], w.reshape(-1)[i])
    return None


def compare(name, got, want, accel):
    if got.shape != want.shape:
        return "output '%s': shape %s, expected %s" % (name, got.shape, want.shape)
    if want.dtype.kind in "fc":
        return compare_float(name, got, want, accel)
    if got.dtype != want.dtype:
        return "output '%s': dtype %s, expected %s" % (name, got.dtype, want.dtype)
    if not np.array_equal(got, want):
        bad = (got != want).reshape(-1)
        i = int(np.argmax(bad))
        return "output '%s': %d of %d values differ (first at %d: %r vs %r)" % (
            name, int(bad.sum()), bad.size, i, got.reshape(-1)[i], want.reshape(-1)[i])
    return None


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, (p.stderr.strip() or p.stdout.strip())


def first_line(s):
    s = s.strip().splitlines()
    return s[0] if s else "(no message)"


def freeze(model, ds, tmp):
    """The model with every graph input but the first made an initializer
    holding the data set's value (weights must be constants for the
    accelerator); its path."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {t.name for t in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    keep = inputs[:1]
    for k, vi in enumerate(inputs[1:], start=1):
        t = numpy_helper.from_array(read_pb(os.path.join(ds, "input_%d.pb" % k)), vi.name)
        m.graph.initializer.append(t)
    del m.graph.input[:]
    m.graph.input.extend(keep)
    path = os.path.join(tmp, "frozen.onnx")
    onnx.save(m, path)
    return path


def accel_eligible(label, model):
    g = model.graph
    return (len(g.node) == 1 and label in ACCEL_OPS and
            all(v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT for v in list(g.input)[:1] + list(g.output)))


def run_accel(args, test_dir, model):
    """--target accel: each data set compiled with its own weights frozen,
    calibrated on its own input; None when all pass, 'host' when no node ran
    on the accelerator, else the first failure."""
    inputs = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    outputs = [o.name for o in model.graph.output]
    jobs = 0
    with tempfile.TemporaryDirectory(prefix="loomaccel") as tmp:
        loom_file = os.path.join(tmp, "model.loom")
        for ds_i, ds in enumerate(data_sets(test_dir)):
            calib = os.path.join(tmp, "calib")
            os.makedirs(calib, exist_ok=True)
            npy = os.path.join(calib, "x.npy")
            np.save(npy, read_pb(os.path.join(ds, "input_0.pb")))
            # --table-jobs: an activation op alone is a table job of its own, which
            # the cost rule would leave to the host's lookup at these sizes
            cmd = [args.loom, "compile", freeze(model, ds, tmp), "-o", loom_file, "--calib", calib, "--table-jobs"]
            if args.host_triple:
                cmd += ["--host-triple", args.host_triple]
            p = subprocess.run(cmd, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode:
                return "compile: " + first_line(p.stderr or p.stdout)
            for line in p.stdout.splitlines():
                if line.startswith("placement: "):
                    jobs = max(jobs, int(line.split()[1]))
            out_args = []
            for k, name in enumerate(outputs):
                out_args += ["-o", "%s=%s" % (name, os.path.join(tmp, "out%d.npy" % k))]
            rc, msg = run([args.loom, "run", loom_file, "--backend", "fsim", "-i", "%s=%s" % (inputs[0], npy)] + out_args,
                          tmp)
            if rc:
                return "run: " + first_line(msg)
            for k, name in enumerate(outputs):
                want = read_pb(os.path.join(ds, "output_%d.pb" % k))
                got = np.load(os.path.join(tmp, "out%d.npy" % k))
                why = compare(name, got, want, args.accel_steps)
                if why:
                    return "data set %d: %s" % (ds_i, why)
    return None if jobs else "host"


def run_test(args, test_dir, model):
    """None when every data set passes, else the first failure's message."""
    if args.target == "accel":
        return run_accel(args, test_dir, model)
    inputs = [i.name for i in model.graph.input
              if i.name not in {t.name for t in model.graph.initializer}]
    outputs = [o.name for o in model.graph.output]
    with tempfile.TemporaryDirectory(prefix="loomnode") as tmp:
        loom_file = os.path.join(tmp, "model.loom")
        for ds_i, ds in enumerate(data_sets(test_dir)):
            in_args = []
            for k, name in enumerate(inputs):
                path = os.path.join(ds, "input_%d.pb" % k)
                if not os.path.exists(path):
                    continue
                npy = os.path.join(tmp, "in%d.npy" % k)
                np.save(npy, read_pb(path))
                in_args += ["-i", "%s=%s" % (name, npy)]
            if ds_i == 0 or args.target == "accel":
                cmd = [args.loom, "compile", os.path.join(test_dir, "model.onnx"), "-o", loom_file, "-q",
                       "--target", args.target]
                if args.host_triple:
                    cmd += ["--host-triple", args.host_triple]
                if args.target == "accel":
                    calib = os.path.join(tmp, "calib")
                    os.makedirs(calib, exist_ok=True)
                    if inputs:
                        np.save(os.path.join(calib, "c.npy"), np.load(os.path.join(tmp, "in0.npy")))
                        cmd += ["--calib", calib]
                rc, msg = run(cmd, tmp)
                if rc:
                    return "compile: " + first_line(msg)
            out_args = []
            for k, name in enumerate(outputs):
                out_args += ["-o", "%s=%s" % (name, os.path.join(tmp, "out%d.npy" % k))]
            rc, msg = run([args.loom, "run", loom_file, "--backend", "fsim"] + in_args + out_args, tmp)
            if rc:
                return "run: " + first_line(msg)
            for k, name in enumerate(outputs):
                want = read_pb(os.path.join(ds, "output_%d.pb" % k))
                got = np.load(os.path.join(tmp, "out%d.npy" % k))
                why = compare(name, got, want, 0)
                if why:
                    return "data set %d: %s" % (ds_i, why)
    return None


def have_kernels(args, node_dir):
    """Whether the runtime has the portable host kernels at all (a build of
    the compiler without them refuses every kernel step): test_abs's one
    Abs node is a kernel step."""
    why = run_test(args, os.path.join(node_dir, "test_abs"), onnx.load(os.path.join(node_dir, "test_abs", "model.onnx")))
    return why is None or "no kernel for op" not in why


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--loom", default=os.path.join(os.environ.get("BUILD", "build"), "bin", "loom"))
    ap.add_argument("--tests", default=os.path.join(os.environ.get("BUILD", "build"), "onnx-node-tests"))
    ap.add_argument("--target", default="cpu", choices=("cpu", "accel"))
    ap.add_argument("--host-triple", default=None)
    ap.add_argument("--passing", help="committed list of tests that must pass")
    ap.add_argument("--write-passing", help="write the tests that passed to this file")
    ap.add_argument("--filter", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--accel-steps", type=float, default=ACCEL_STEPS,
                    help="--target accel tolerance in int8 steps of each output's range (default %(default)s)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.loom = os.path.abspath(args.loom)
    args.tests = os.path.abspath(args.tests)
    node_dir = os.path.join(args.tests, "node")
    tests = sorted(t for t in os.listdir(node_dir) if args.filter in t)
    t0 = time.monotonic()

    plan, skipped = [], {}
    for t in tests:
        model = onnx.load(os.path.join(node_dir, t, "model.onnx"))
        label, why = classify(t, model)
        if not why and args.target == "accel" and not accel_eligible(label, model):
            why = "not an accelerator op"
        if why:
            skipped[why] = skipped.get(why, 0) + 1
        else:
            plan.append((t, label, model))

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda p: run_test(args, os.path.join(node_dir, p[0]), p[2]), plan))

    per_op, passed, host_only, no_kernel = {}, [], [], []
    for (t, label, _), why in zip(plan, results):
        st = per_op.setdefault(label, [0, 0, []])
        if why is None:
            st[0] += 1
            passed.append(t)
        elif why == "host":
            host_only.append(t)
        elif "no kernel for op" in why:
            no_kernel.append(t)  # this build's host kernels lack the op: not the compiler's failure
            st[2].append((t, why))
        else:
            st[1] += 1
            st[2].append((t, why))
    print("%-32s %6s %6s" % ("op", "passed", "failed"))
    for label in sorted(per_op):
        p, f, fails = per_op[label]
        print("%-32s %6d %6d" % (label, p, f))
        if args.verbose:
            for t, why in fails:
                print("    %s: %s" % (t, why))
    n = len(plan) - len(host_only)
    print("target %s: %d of %d eligible tests passed (%.1f%%); %d op types, %d pass all their tests; "
          "not eligible: %s; %.0f s" % (
              args.target, len(passed), n, 100.0 * len(passed) / max(n, 1), len(per_op),
              sum(1 for v in per_op.values() if v[1] == 0),
              ", ".join("%d %s" % (v, k) for k, v in sorted(skipped.items())) or "none",
              time.monotonic() - t0))
    if host_only:
        print("%d tests placed every node on the host (not counted): %s" % (len(host_only), " ".join(host_only)))
    if no_kernel:
        print("%d tests need host kernels this build lacks (not counted as regressions)" % len(no_kernel))
    if args.write_passing:
        with open(args.write_passing, "w") as f:
            f.write("".join(t + "\n" for t in passed))
    rc = 0
    if args.passing and args.target == "cpu" and not have_kernels(args, node_dir):
        print("NOTE: this build has no host kernels (driver/core/kernel_registry.c is not in it): "
              "the CPU suite's regression check is skipped")
        args.passing = None
    if args.passing:
        with open(args.passing) as f:
            want = [l.strip() for l in f if l.strip() and not l.startswith("#")]
        got = set(passed)
        lost = [t for t in want if t not in got and args.filter in t and t not in set(no_kernel)]
        gained = [t for t in passed if t not in set(want)]
        for t in lost:
            why = dict((p[0], r) for p, r in zip(plan, results)).get(t, "not run")
            print("REGRESSION %s: %s" % (t, why))
        if gained:
            print("%d tests pass that %s does not list (update it with --write-passing)" % (
                len(gained), args.passing))
        rc = 1 if lost else 0
    return rc


if __name__ == "__main__":
    sys.exit(main())
