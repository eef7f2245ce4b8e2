#!/usr/bin/python3
"""Generate ONNX's own backend node-test data (model.onnx + test_data_set_*/{input,output}_N.pb).

Usage: /usr/bin/python3 scripts/gen_onnx_node_tests.py [DIR] [--force]
DIR defaults to <repo>/build/onnx-node-tests. Produces DIR/node/test_*/ (plus the few
DIR/{real,simple,pytorch-*}/ model cases ONNX bundles). Runs
`python -m onnx.backend.test.cmd_tools generate-data -o DIR` from the Debian python3-onnx
package after restoring the numpy type aliases (np.float, np.int, ...) that numpy 1.24
removed but onnx 1.12's test-case generators still use. Nothing is downloaded.
Idempotent: skips if DIR/.generated exists (written last) unless --force.
"""
import argparse
import os
import runpy
import shutil
import sys
import time

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEFAULT_DIR = os.path.join(REPO_ROOT, "build", "onnx-node-tests")
STAMP = ".generated"


def count_node_tests(d):
    node = os.path.join(d, "node")
    if not os.path.isdir(node):
        return 0
    return sum(1 for e in os.listdir(node)
               if os.path.isfile(os.path.join(node, e, "model.onnx")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("dir", nargs="?", default=DEFAULT_DIR,
                    help="output directory (default: <repo>/build/onnx-node-tests)")
    ap.add_argument("--force", action="store_true", help="regenerate even if present")
    ap.add_argument("-t", "--op-type", default=None,
                    help="only generate cases for this op type (passed to cmd_tools -t)")
    args = ap.parse_args()
    out = os.path.abspath(args.dir)
    stamp = os.path.join(out, STAMP)

    if not args.force and os.path.exists(stamp):
        print("[gen_onnx_node_tests] %s already has %d node tests (use --force to regenerate)"
              % (out, count_node_tests(out)))
        return 0

    try:
        import numpy as np
        import onnx
        import importlib.util
        if importlib.util.find_spec("onnx.backend.test.cmd_tools") is None:
            raise ImportError("onnx.backend.test.cmd_tools not found")
    except Exception as e:
        sys.stderr.write("error: cannot import numpy/onnx (%s)\n"
                         "       install with:  sudo apt-get install -y python3-onnx python3-numpy\n"
                         % e)
        if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
            sys.stderr.write("       note: run with /usr/bin/python3 (this is %s)\n" % sys.executable)
        return 2

    # numpy >= 1.24 removed these deprecated aliases; onnx 1.12 test generators use them.
    for alias, typ in (("float", float), ("int", int), ("bool", bool), ("object", object),
                       ("complex", complex), ("str", str)):
        if alias not in np.__dict__:
            setattr(np, alias, typ)

    t0 = time.monotonic()
    tmp = out + ".tmp"
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    print("[gen_onnx_node_tests] onnx %s, numpy %s: generating into %s ..."
          % (onnx.__version__, np.__version__, out), flush=True)
    argv = ["onnx.backend.test.cmd_tools", "generate-data", "-o", tmp]
    if args.op_type:
        argv += ["-t", args.op_type]
    saved = sys.argv
    sys.argv = argv
    try:
        runpy.run_module("onnx.backend.test.cmd_tools", run_name="__main__", alter_sys=True)
    except SystemExit as e:
        if e.code not in (0, None):
            sys.stderr.write("error: onnx cmd_tools generate-data failed (exit %s)\n" % e.code)
            return 1
    finally:
        sys.argv = saved

    n = count_node_tests(tmp)
    if n == 0:
        sys.stderr.write("error: no node tests were generated in %s\n" % tmp)
        return 1
    with open(os.path.join(tmp, STAMP), "w") as f:
        f.write("onnx %s\nnumpy %s\nnode_tests %d\nop_type %s\n"
                % (onnx.__version__, np.__version__, n, args.op_type or "all"))
    if os.path.exists(out):
        shutil.rmtree(out)
    os.replace(tmp, out)
    kinds = sorted(k for k in os.listdir(out) if os.path.isdir(os.path.join(out, k)))
    print("[gen_onnx_node_tests] generated %d node tests in %s (kinds: %s) in %.1fs"
          % (n, out, ", ".join(kinds), time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
