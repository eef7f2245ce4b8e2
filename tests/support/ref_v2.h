/*
 * ref_v2.h - the ISA version 2 operations of docs/isa.md, transcribed as
 * plainly as ref_ops.h transcribes version 1, for golden-model tests of
 * fsim (and, through fsim, of the RTL).
 *
 * A struct ref_machine is the on-chip state as plain arrays; ref_gemm(),
 * ref_alu_epi(), ref_load_src_out() and ref_load_wgt() execute one
 * instruction on it
 * following the document's pseudo-code line by line, errors included (the
 * code, and how many micro-ops completed before it stopped).  Nothing is shared with fsim:
 * the loops, the index checks and the epilogue are written again from the
 * text.
 */
#ifndef LOOM_TEST_REF_V2_H
#define LOOM_TEST_REF_V2_H

#include <stdint.h>

#include "loom/hwconfig.h"
#include "loom/isa.h"

/* E(v) of one lane: REQUANT((v + bias) mod 2^32, mult) with q's shift,
 * rounding, zero point and clamps, then lut[q mod 256] sign-extended when
 * q->act.  bias and mult are the lane's PAR values, or q's with par_src
 * (the caller picks). */
int32_t ref_epilogue(int32_t v, int32_t bias, int32_t mult, const struct loom_insn_qcfg *q,
                     const uint8_t lut[LOOM_LUT_ENTRIES]);

/* The depthwise window: tap t's INP row offset, and the tap count. */
uint32_t ref_dw_taps(const struct loom_insn_gcfg *gc, uint32_t block_in);
uint32_t ref_dw_off(const struct loom_insn_gcfg *gc, uint32_t t);

struct ref_machine {
  uint32_t batch, block_in, block_out;
  uint32_t inp_rows, wgt_rows, acc_rows, uop_rows;
  int8_t *inp;          /* inp_rows x [batch][block_in] */
  int8_t *wgt;          /* wgt_rows x [block_out][block_in] */
  int32_t *acc;         /* acc_rows x [batch][block_out] */
  int8_t *out;          /* acc_rows x [batch][block_out] */
  int32_t *par;         /* LOOM_PAR_ROWS x {bias[batch][block_out], mult[batch][block_out]} */
  uint8_t lut[LOOM_LUT_ENTRIES];
  struct loom_uop *uops; /* uop_rows, decoded */
  struct loom_insn_qcfg q;
  struct loom_insn_gcfg gc;
};

/* Allocates the arrays for `cfg` (zeroed); frees them. */
void ref_machine_init(struct ref_machine *m, const struct loom_hw_config *cfg);
void ref_machine_free(struct ref_machine *m);

/* One instruction (ref_alu_epi: ALU EPI, either operand form): LOOM_ERR_NONE
 * or the error it raises (SRAM); *done (when
 * not NULL) counts the micro-ops that completed, the failing one excluded. */
uint32_t ref_gemm(struct ref_machine *m, const struct loom_insn_gemm *g, uint64_t *done);
uint32_t ref_alu_epi(struct ref_machine *m, const struct loom_insn_alu *a, uint64_t *done);
/* LOAD INP with src_out. */
uint32_t ref_load_src_out(struct ref_machine *m, const struct loom_insn_mem *mem);
/* LOAD WGT from `dram` (a segment of `dram_bytes`), wgt_transpose or not. */
uint32_t ref_load_wgt(struct ref_machine *m, const struct loom_insn_mem *mem, const uint8_t *dram,
                      uint64_t dram_bytes);

#endif
