#!/usr/bin/python3
"""Write the operator list of onnx's ai.onnx domain (and the training
domain) with the opset versions that changed each op and whether Loom has a
host kernel for it or excludes it, and why.

Usage: /usr/bin/python3 scripts/list_onnx_ops.py [OUT]   (default tests/kernels/onnx_ops.txt)

The list is committed; test_kernels_registry checks the kernel registry
against it (every op marked `kernel` has one, no other op does).  Re-run it
when onnx is upgraded and review the diff.  Test data only: nothing of the
product's path reads it.
"""
import os
import sys

import onnx
import onnx.defs

EXCLUDED = {
    "sequence/optional": ["SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase",
                          "SequenceInsert", "SequenceLength", "SequenceMap", "SplitToSequence",
                          "ConcatFromSequence", "Optional", "OptionalGetElement",
                          "OptionalHasElement"],
    "random": ["Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform",
               "RandomUniformLike"],
    "control-flow": ["If", "Loop", "Scan"],
    "string-only": ["StringNormalizer"],
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "kernels", "onnx_ops.txt")
    versions = {}
    for s in onnx.defs.get_all_schemas_with_history():
        dom = s.domain or "ai.onnx"
        versions.setdefault((dom, s.name), set()).add(s.since_version)
    why = {op: reason for reason, ops in EXCLUDED.items() for op in ops}
    lines = ["# Operators of onnx %s: domain, op type, the opset versions that changed it," % onnx.__version__,
             "# and Loom's host kernel status (kernel, or excluded:<reason>).",
             "# Written by scripts/list_onnx_ops.py; checked by tests/unit/test_kernels_registry.c."]
    for (dom, name) in sorted(versions):
        if dom not in ("ai.onnx", "ai.onnx.preview.training"):
            continue
        status = "excluded:training" if dom != "ai.onnx" else (
            "excluded:" + why[name] if name in why else "kernel")
        vs = ",".join(str(v) for v in sorted(versions[(dom, name)]))
        lines.append("%s %s %s %s" % (dom, name, vs, status))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%s: %d ops" % (out, len(lines) - 3))


if __name__ == "__main__":
    main()
