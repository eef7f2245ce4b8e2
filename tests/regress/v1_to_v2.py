#!/usr/bin/python3
"""v1_to_v2.py - rewrites a .loom file of ISA version 1 as ISA version 2.

    tests/regress/v1_to_v2.py IN.loom OUT.loom

The regression inputs under tests/regress/ and the fuzz seeds under
tests/fuzz/corpus/ were written for ISA version 1, which the loader now
refuses.  This tool keeps their meaning: every instruction is decoded with
the version 1 layout and encoded with the version 2 one (docs/isa.md,
"Changes from ISA version 1": only GEMM's fields moved), the header's
isa_version and configuration hash are set to version 2's, and the crc32 is
recomputed.  An encoding that was illegal in version 1 stays illegal: where
version 2 gave its bits a meaning (opcode 7, buffers 5 and 6, ALU op 7, the
MEM bit 126, QCFG bits 70..111) a version 2 reserved bit is set as well.  A
GEMM whose loop extents do not fit version 2's 12-bit fields cannot be
rewritten: the tool says so and fails.

It is test-data tooling, not part of the product: a version 1 program is
recompiled, not converted.
"""
import struct
import sys
import zlib

V1_TO_V2_HASH = {0x2A77EAD3: 0xBE827F10, 0x83225922: 0xE7A797E1, 0x6E172970: 0x0A92E7B3}

# GEMM fields after the opcode and tokens: (name, v1 lsb, v2 lsb, width)
GEMM_FIELDS = [
    ("reset", 7, 7, 1),
    ("uop_begin", 8, 11, 13),
    ("uop_end", 21, 24, 14),
    ("iter_out", 35, 38, 12),
    ("iter_in", 49, 50, 12),
    ("acc_factor_out", 63, 62, 11),
    ("acc_factor_in", 74, 73, 11),
    ("inp_factor_out", 85, 84, 11),
    ("inp_factor_in", 96, 95, 11),
    ("wgt_factor_out", 107, 106, 10),
    ("wgt_factor_in", 117, 116, 10),
]


def get(v, lsb, width):
    return (v >> lsb) & ((1 << width) - 1)


def convert_insn(v, where):
    op = v & 7
    if op == 2:  # GEMM
        for name, lsb in (("iter_out", 35), ("iter_in", 49)):
            if get(v, lsb, 14) >= 1 << 12:
                raise SystemExit("%s: GEMM %s %d does not fit ISA v2's 12 bits" % (where, name, get(v, lsb, 14)))
        out = v & 0x7F
        for _, l1, l2, w in GEMM_FIELDS:
            out |= get(v, l1, w) << l2
        if get(v, 127, 1):  # v1 reserved bit: keep it illegal (v2 reserved 126..127)
            out |= 1 << 127
        return out
    illegal = False
    if op == 7:  # undefined in v1, GCFG in v2
        illegal = True
    elif op in (0, 1):  # LOAD, STORE
        buf = get(v, 7, 3)
        illegal = (op == 0 and buf in (5, 6)) or get(v, 126, 1)
    elif op == 3:  # ALU op 7 was undefined, EPI now
        illegal = get(v, 7, 3) == 7
    elif op == 4:  # QCFG: bits 70..127 were reserved
        illegal = get(v, 70, 42) != 0
    if illegal:
        v |= 1 << 127  # reserved in every v2 format that can reach here
    return v


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    data = bytearray(open(sys.argv[1], "rb").read())
    name = sys.argv[1]
    if data[:8] != b"\x89LOOM\r\n\x1a":
        raise SystemExit("%s: not a .loom file" % name)
    cfg, isa, nsec, table = struct.unpack_from("<IIIQ", data, 28)
    if isa != 1:
        raise SystemExit("%s: isa_version %d, not 1" % (name, isa))
    struct.pack_into("<II", data, 28, V1_TO_V2_HASH.get(cfg, cfg), 2)
    for s in range(nsec):
        typ, _, off, size, _, _ = struct.unpack_from("<IIQQII", data, table + 32 * s)
        if typ != 2:  # INSNS
            continue
        for i in range(size // 16):
            at = off + 16 * i
            v = int.from_bytes(data[at:at + 16], "little")
            data[at:at + 16] = convert_insn(v, "%s: insn %d" % (name, i)).to_bytes(16, "little")
    struct.pack_into("<I", data, 24, zlib.crc32(bytes(data[32:])) & 0xFFFFFFFF)
    open(sys.argv[2], "wb").write(bytes(data))


if __name__ == "__main__":
    main()
