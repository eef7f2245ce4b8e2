/*
 * hwconfig_rules.h - a hardware configuration as data: its keys, the values
 * derived from them, its hash, the rules it must keep and its forms as
 * Verilog, Tcl and `key = value` text.
 *
 * This is the one place that knows how a configuration becomes hardware
 * parameters.  scripts/loomgen.c compiles driver/core/hwconfig_rules.c to
 * generate the named configurations of hw/spec/loom_configs.def, and the
 * runtime uses the same file for configurations read from a file
 * (driver/core/hwconfig_file.c), so a file that repeats a named
 * configuration gets exactly its rows and its hash.  Nothing here depends
 * on generated headers (loomgen runs before they exist): the ISA version
 * and field widths come straight from hw/spec/loom_isa.def.
 *
 * The keys, in the order `loom config show` prints them (docs/configs.md):
 *
 *   name batch block_in block_out inp_kib wgt_kib acc_kib uop_kib bus_bits
 *   clock_mhz cmd_queue_depth token_queue_depth max_outstanding_reads part
 */
#ifndef LOOM_HWCONFIG_RULES_H
#define LOOM_HWCONFIG_RULES_H

#include <stdint.h>
#include <stdio.h>

#define LOOM_HW_NAME_MAX 32 /* name and part, with the NUL */
#define LOOM_HW_PART_MAX 32

/* The integer keys: X(key, lowest, highest, what).  lowest/highest bound
 * what a file may say before the rules below look at it. */
#define LOOM_HW_INT_KEYS(X)                                                          \
  X(batch, 1, 4, "rows of the GEMM core's input tile")                               \
  X(block_in, 1, 65536, "reduction width of one GEMM step")                          \
  X(block_out, 1, 65536, "output lanes")                                             \
  X(inp_kib, 1, 1048576, "INP buffer, KiB")                                          \
  X(wgt_kib, 1, 1048576, "WGT buffer, KiB")                                          \
  X(acc_kib, 1, 1048576, "ACC buffer, KiB")                                          \
  X(uop_kib, 1, 1048576, "micro-op buffer, KiB")                                     \
  X(bus_bits, 8, 4096, "DRAM data bus width")                                        \
  X(clock_mhz, 1, 2000, "target clock of the board flows")                           \
  X(cmd_queue_depth, 1, 4096, "instructions each command queue holds")               \
  X(token_queue_depth, 1, 4096, "tokens each dependency queue holds")                \
  X(max_outstanding_reads, 1, 4096, "DRAM reads in flight")

struct loom_hw_config {
  char name[LOOM_HW_NAME_MAX];
  uint32_t hash;            /* crc32 of the canonical parameter text */
  int batch;                /* rows of the GEMM core's input tile */
  int block_in;             /* reduction width of one GEMM step */
  int block_out;            /* output lanes */
  int inp_rows, wgt_rows, acc_rows, uop_rows, out_rows; /* buffer depths */
  int inp_kib, wgt_kib, acc_kib, uop_kib;
  int bus_bits;             /* DRAM data bus width */
  int clock_mhz;            /* target clock of the board flows */
  int cmd_queue_depth;      /* instructions each command queue holds */
  int token_queue_depth;    /* tokens each dependency queue holds */
  int max_outstanding_reads;
  char part[LOOM_HW_PART_MAX]; /* default FPGA part */
  const char *comment;      /* purpose (named configurations), NULL for files */
};

/* An FPGA part's capacity (bitstreams/boards.def LOOM_PARTS). */
struct loom_hw_part {
  const char *name, *family; /* family: Yosys synth_xilinx -family (xc7, xcup) */
  long lut, ff, dsp, bram36, uram;
};

/* One broken rule: the key it is about and what is wrong. */
struct loom_hw_violation {
  const char *key;
  char what[192];
};
#define LOOM_HW_MAX_VIOLATIONS 24

/* On-chip memory of a configuration, mapped as synthesis infers it: each of
 * loom_top's RAM instances (INP's two banks, WGT, ACC, OUT, UOP, PAR) takes
 * the cheapest single aspect ratio of RAMB36/RAMB18, or of URAM288 when it is
 * moved there.  (The 256-byte activation table is LUT RAM.) */
struct loom_hw_memory {
  long bram18; /* in RAMB18 units (a RAMB36 is two) */
  long uram;
  long kib;
};

/* The buffers of the ISA (INP, WGT, ACC, OUT, UOP) whose sizes are keys. */
#define LOOM_HW_BUFFER_COUNT 5
/* loom_top's block RAM instances, as LOOM_URAM_BUFFERS in boards.def names
 * them: INP is two banks of half its rows (by row parity). */
#define LOOM_HW_RAM_COUNT 7
extern const char *const loom_hw_ram_insts[LOOM_HW_RAM_COUNT];

/* Fills the derived fields (rows, hash) from the keys.  Call it only on a
 * configuration loom_hw_check() accepts (rows are 0 when a divisor is). */
void loom_hw_derive(struct loom_hw_config *c);

/* The rules of the ISA and the RTL (power-of-two rows of whole bus words,
 * index fields of the micro-op, bus width, queue depths): every broken one
 * into v[0..max), in key order.  Returns how many there are (it may be more
 * than max).  The part's budget is loom_hw_check_part()'s. */
int loom_hw_check(const struct loom_hw_config *c, struct loom_hw_violation *v, int max);

/* Whether the configuration's DSPs and on-chip memory fit part p
 * (loom_hw_dsp_estimate, loom_hw_memory_fit with `uram_buffers`):
 * violations as above, keyed "part". */
int loom_hw_check_part(const struct loom_hw_config *c, const struct loom_hw_part *p,
                       const char *uram_buffers, struct loom_hw_violation *v, int max);

/* The buffers' memory; uram_buffers lists the instances moved to UltraRAM
 * ("u_inp u_acc", may be NULL or empty). */
struct loom_hw_memory loom_hw_memory(const struct loom_hw_config *c, const char *uram_buffers);

/* The memory on part p: block RAM alone when it fits (or the part has no
 * UltraRAM), else with `uram_buffers` in UltraRAM.  Sets *use_uram. */
struct loom_hw_memory loom_hw_memory_fit(const struct loom_hw_config *c,
                                         const struct loom_hw_part *p, const char *uram_buffers,
                                         int *use_uram);

/* DSP slices synthesis maps the core to: two int8 products per DSP in the
 * GEMM array, four per 32x32 ALU lane multiplier, six for the DMA bounds
 * checks (docs/rtl.md). */
long loom_hw_dsp_estimate(const struct loom_hw_config *c);

/* `key = value` lines, every key in order (loom config show). */
void loom_hw_write_keys(FILE *f, const struct loom_hw_config *c);
/* The Verilog header loom_top includes as loom_cfg.vh. */
void loom_hw_write_vh(FILE *f, const struct loom_hw_config *c);
/* The Tcl dict `loom_cfg` of the board flows. */
void loom_hw_write_tcl(FILE *f, const struct loom_hw_config *c);

#endif
