#!/usr/bin/python3
"""check_trace.py TRACE.json PROFILE.json - validates a `loom run --trace`
file against Chrome's trace-event format (JSON object form) and checks it
against the hardware counters of the same run (`--profile-json`).

Format: a top-level object with a "traceEvents" list and a valid
"displayTimeUnit"; per phase the keys and types the format requires
(X: name, ph, pid, tid, ts >= 0, dur >= 0; M: a known metadata name with
its argument); every process and thread that has slices is named.

Counters, per job and module (load, compute, store): instruction slices
never overlap, their number is INSN_*, their cycles add up to *_BUSY; the
token-wait and DRAM-wait slices add up to *_TOKEN_STALL and *_MEM_STALL,
and each lies inside the slice of the instruction it names.  Fetch: one
slice per instruction read (BYTES_RD_INSN / 16), no overlaps.  Every slice
ends by the job's CYCLES.  Exits non-zero naming the first problem.
"""
import json
import sys

META = {"process_name": ("name", str), "thread_name": ("name", str),
        "process_sort_index": ("sort_index", int), "thread_sort_index": ("sort_index", int)}
MODULES = ["FETCH", "LOAD", "COMPUTE", "STORE"]


def fail(msg):
    sys.exit("check_trace: " + msg)


def need(ev, key, types, where):
    if key not in ev:
        fail(f"{where}: missing key '{key}'")
    if not isinstance(ev[key], types) or isinstance(ev[key], bool):
        fail(f"{where}: '{key}' has type {type(ev[key]).__name__}")
    return ev[key]


def check_format(doc):
    if not isinstance(doc, dict):
        fail("the top level is not an object")
    if doc.get("displayTimeUnit") not in ("ms", "ns"):
        fail("displayTimeUnit must be \"ms\" or \"ns\"")
    events = doc.get("traceEvents")
    if not isinstance(events, list) or not events:
        fail("traceEvents is not a non-empty list")
    named_pids, named_threads, slices = set(), set(), []
    for i, ev in enumerate(events):
        where = f"event {i}"
        if not isinstance(ev, dict):
            fail(f"{where} is not an object")
        ph = need(ev, "ph", str, where)
        need(ev, "name", str, where)
        pid, tid = need(ev, "pid", int, where), need(ev, "tid", int, where)
        if "args" in ev and not isinstance(ev["args"], dict):
            fail(f"{where}: args is not an object")
        if ph == "M":
            if ev["name"] not in META:
                fail(f"{where}: unknown metadata event '{ev['name']}'")
            key, typ = META[ev["name"]]
            need(need(ev, "args", dict, where), key, typ, where + " args")
            if ev["name"] == "process_name":
                named_pids.add(pid)
            if ev["name"] == "thread_name":
                named_threads.add((pid, tid))
        elif ph == "X":
            if need(ev, "ts", (int, float), where) < 0 or need(ev, "dur", (int, float), where) < 0:
                fail(f"{where}: negative ts or dur")
            if "cat" in ev and not isinstance(ev["cat"], str):
                fail(f"{where}: cat is not a string")
            slices.append(ev)
        else:
            fail(f"{where}: phase '{ph}' is not one loom writes (X, M)")
    for ev in slices:
        if ev["pid"] not in named_pids:
            fail(f"process {ev['pid']} has slices but no process_name")
        if (ev["pid"], ev["tid"]) not in named_threads:
            fail(f"thread {ev['pid']}/{ev['tid']} has slices but no thread_name")
    return slices


def check_job(step, slices, mhz):
    c = step["counters"]
    want = {1: ("INSN_LOAD", "LOAD_BUSY", "LOAD_TOKEN_STALL", "LOAD_MEM_STALL"),
            2: ("INSN_COMPUTE", "COMPUTE_BUSY", "COMPUTE_TOKEN_STALL", "COMPUTE_MEM_STALL"),
            3: ("INSN_STORE", "STORE_BUSY", "STORE_TOKEN_STALL", "STORE_MEM_STALL")}
    name = f"job {step['job']} ({step['name']})"
    base = None
    for tid in range(4):
        mine = [e for e in slices if e["tid"] == tid]
        insns = sorted((e for e in mine if e["cat"] == "insn"), key=lambda e: e["args"]["begin"])
        for e in mine:
            cyc = e["args"]["cycles"]
            if abs(e["dur"] * mhz - cyc) > 0.5:
                fail(f"{name}: {MODULES[tid]} slice at {e['ts']} lasts {e['dur']} us, not {cyc} cycles")
        for a, b in zip(insns, insns[1:]):
            if a["args"]["begin"] + a["args"]["cycles"] > b["args"]["begin"]:
                fail(f"{name}: {MODULES[tid]} instructions {a['args']['insn']} and {b['args']['insn']} overlap")
        total = {k: sum(e["args"]["cycles"] for e in mine if e["cat"] == k)
                 for k in ("insn", "token_wait", "dram_wait")}
        if tid == 0:
            if len(insns) != c["BYTES_RD_INSN"] // 16:
                fail(f"{name}: {len(insns)} fetch slices, {c['BYTES_RD_INSN'] // 16} instructions read")
            continue
        cnt, busy, tok, mem = want[tid]
        got = (len(insns), total["insn"], total["token_wait"], total["dram_wait"])
        exp = (c[cnt], c[busy], c[tok], c[mem])
        if got != exp:
            fail(f"{name}: {MODULES[tid]} slices (count, busy, token, DRAM) = {got}, counters {exp}")
        spans = {e["args"]["insn"]: (e["args"]["begin"], e["args"]["begin"] + e["args"]["cycles"]) for e in insns}
        for e in mine:
            if e["cat"] == "insn":
                continue
            lo, hi = spans.get(e["args"]["insn"], (1, 0))
            b = e["args"]["begin"]
            if not (lo <= b and b + e["args"]["cycles"] <= hi):
                fail(f"{name}: {MODULES[tid]} {e['name']} of instruction {e['args']['insn']} lies outside it")
    for e in slices:
        if e["args"]["begin"] + e["args"]["cycles"] > c["CYCLES"]:
            fail(f"{name}: a slice ends after the job's {c['CYCLES']} cycles")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_trace.py TRACE.json PROFILE.json")
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    with open(sys.argv[2]) as f:
        prof = json.load(f)
    slices = check_format(doc)
    mhz = doc.get("otherData", {}).get("clock_mhz")
    if mhz != prof["clock_mhz"]:
        fail(f"trace clock {mhz} MHz, profile {prof['clock_mhz']} MHz")
    jobs = [s for s in prof["steps"] if s["job"] >= 0]
    if not jobs:
        fail("the profile has no jobs")
    for step in jobs:
        mine = [e for e in slices if e["pid"] == step["step"] + 1]
        if not mine:
            fail(f"no slices for step {step['step']} (job {step['job']})")
        check_job(step, mine, mhz)
    print(f"check_trace: ok: {len(slices)} slices of {len(jobs)} jobs agree with the counters")


main()
