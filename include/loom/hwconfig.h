/*
 * hwconfig.h - the named hardware configurations as C sees them.
 *
 * The table itself (loom_hw_configs[]) and the enums of the ISA are generated
 * by scripts/loomgen.c from hw/spec/ (*.def files); this header only declares the
 * struct and the lookups.  Every parameter a compiler pass or a simulator
 * needs is here, so nothing else restates a buffer size.
 */
#ifndef LOOM_HWCONFIG_H
#define LOOM_HWCONFIG_H

#include <stdint.h>

#include "loom_isa_gen.h"

struct loom_hw_config {
  const char *name;
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
  const char *part;         /* default FPGA part */
  const char *comment;
};

extern const struct loom_hw_config loom_hw_configs[LOOM_CONFIG_COUNT];

/* Looks a configuration up by name or by hash; NULL when there is none. */
const struct loom_hw_config *loom_hw_config_by_name(const char *name);
const struct loom_hw_config *loom_hw_config_by_hash(uint32_t hash);

/* Bytes of one DRAM row for LOAD/STORE of `buffer` (src_int8: LOAD ACC of
 * int8 data).  0 for an invalid buffer. */
uint32_t loom_hw_row_bytes(const struct loom_hw_config *cfg, int buffer, int src_int8);

/* Rows of an on-chip buffer; 0 for an invalid buffer. */
uint32_t loom_hw_buffer_rows(const struct loom_hw_config *cfg, int buffer);

/* Peak MACs per cycle: batch * block_in * block_out. */
static inline uint32_t loom_hw_peak_macs(const struct loom_hw_config *cfg) {
  return (uint32_t)(cfg->batch * cfg->block_in * cfg->block_out);
}

#endif
