#!/usr/bin/python3
"""CPU baseline for `make bench`: PyTorch (Debian's torch) on ResNet-18 and MobileNetV2.

Measures one-image inference ([1,3,224,224]) on this machine, in the same run as the Loom
figures: fp32 eager, and int8 through torch.ao.quantization (FX graph mode with the first
quantized engine this torch has of x86, fbgemm, onednn (all x86) and qnnpack; calibrated on
seeded inputs) where one is available.  The architectures are torchvision's with weights=None, the ones
scripts/models/make_imagenet_nets.py exports (run time does not depend on the weights).
Each figure is the median of --runs timed runs after --warmup runs, with --threads intra-op
threads, as wall-clock and as process CPU seconds (on a shared machine the CPU time is the
fair figure).  Writes JSON (--json); prints progress to stderr.  Python is not in Loom's product
path: this script only measures the reference framework.
"""
import argparse
import json
import statistics
import sys
import time


def timed(fn, x, warmup, runs):
    """Median wall and CPU (process) seconds of one call."""
    import torch
    with torch.no_grad():
        for _ in range(warmup):
            fn(x)
        wall, cpu = [], []
        for _ in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            fn(x)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


# x86 quantized engines in order of preference (torch 1.13 names)
ENGINES = ("x86", "fbgemm", "onednn", "qnnpack")


def quantize(torch, model, x):
    """(int8 model, engine, None) through FX graph mode, or (None, None, why)."""
    engines = [e for e in ENGINES if e in torch.backends.quantized.supported_engines]
    if not engines:
        return None, None, "no quantized engine (supported: %s)" % torch.backends.quantized.supported_engines
    engine = engines[0]
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = engine
    try:
        prepared = prepare_fx(model, get_default_qconfig_mapping(engine), example_inputs=(x,))
        gen = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for _ in range(4):
                prepared(torch.randn(x.shape, generator=gen))
        return convert_fx(prepared), engine, None
    except Exception as e:  # report, do not fail the benchmark
        return None, engine, "%s: %s" % (type(e).__name__, e)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("nets", nargs="*", default=["resnet18", "mobilenetv2"])
    a = p.parse_args()
    import torch
    import torchvision
    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    out = {"torch": torch.__version__, "torchvision": torchvision.__version__, "threads": a.threads,
           "runs": a.runs, "warmup": a.warmup, "quantized_engines": torch.backends.quantized.supported_engines,
           "networks": []}
    build = {"resnet18": torchvision.models.resnet18, "mobilenetv2": torchvision.models.mobilenet_v2}
    for net in a.nets:
        model = build[net](weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        sys.stderr.write("bench: pytorch %s fp32 (%d threads)...\n" % (net, a.threads))
        row = {"net": net}
        row["fp32_s"], row["fp32_cpu_s"] = timed(model, x, a.warmup, a.runs)
        q, engine, why = quantize(torch, model, x)
        sys.stderr.write("bench: pytorch %s int8 (%s)...\n" % (net, engine))
        row["int8_engine"] = engine
        row["int8_s"], row["int8_cpu_s"] = timed(q, x, a.warmup, a.runs) if q is not None else (None, None)
        if why:
            row["int8_note"] = why
        out["networks"].append(row)
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
