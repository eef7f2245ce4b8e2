/*
 * isa.h - encoding and decoding of Loom instructions and micro-ops.
 *
 * An instruction is 16 bytes, little-endian: bit n of the instruction is bit
 * (n % 8) of byte (n / 8).  Field positions come from the generated
 * loom_isa_gen.h (source: hw/spec/loom_isa.def); docs/isa.md gives the exact
 * semantics.  `struct loom_insn` is the decoded form every C component uses:
 * the assembler fills it, fsim executes it, the compiler emits it.
 */
#ifndef LOOM_ISA_H
#define LOOM_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "loom_isa_gen.h"

#define LOOM_INSN_BYTES 16
#define LOOM_UOP_BYTES 4

struct loom_hw_config;

struct loom_insn_mem { /* LOAD, STORE */
  uint32_t buffer, sram_base, segment, dram_offset;
  uint32_t y_size, x_size, x_stride;
  uint32_t y_pad_top, y_pad_bottom, x_pad_left, x_pad_right;
  int32_t pad_value;
  uint32_t src_int8;
  uint32_t src_out; /* LOAD INP: the rows come from the OUT buffer, not DRAM */
  uint32_t wgt_transpose; /* LOAD WGT: SRAM [o][k] = DRAM [k][o] of each B x B row */
};

struct loom_insn_gemm {
  uint32_t reset, first, last, dw;
  uint32_t uop_begin, uop_end, iter_out, iter_in;
  uint32_t acc_factor_out, acc_factor_in, inp_factor_out, inp_factor_in;
  uint32_t wgt_factor_out, wgt_factor_in;
};

struct loom_insn_alu {
  uint32_t alu_op, use_imm;
  int32_t imm;
  uint32_t uop_begin, uop_end, iter_out, iter_in;
  uint32_t dst_factor_out, dst_factor_in, src_factor_out, src_factor_in;
};

struct loom_insn_qcfg {
  int32_t multiplier;
  uint32_t shift;
  int32_t zero_point, clamp_lo, clamp_hi;
  uint32_t round_even;
  int32_t bias;      /* epilogue bias when par_src */
  uint32_t par_src;  /* epilogue: 0 per-lane bias and multiplier from PAR, 1 from here */
  uint32_t act;      /* epilogue: the result goes through the LUT table */
  uint32_t par_base; /* PAR row of inner iteration 0 */
};

struct loom_insn_gcfg {
  uint32_t period;                       /* first/last group size (0 counts as 1) */
  uint32_t dw_kh, dw_kw, dw_row, dw_col; /* depthwise window: shape, INP row steps */
};

struct loom_insn_nop {
  uint32_t queue;
};

struct loom_insn {
  uint32_t opcode; /* enum loom_opcode */
  uint32_t pop_prev, pop_next, push_prev, push_next;
  union {
    struct loom_insn_mem mem;   /* LOAD, STORE */
    struct loom_insn_gemm gemm; /* GEMM */
    struct loom_insn_alu alu;   /* ALU */
    struct loom_insn_qcfg qcfg; /* QCFG */
    struct loom_insn_gcfg gcfg; /* GCFG */
    struct loom_insn_nop nop;   /* NOP */
  };
};

struct loom_uop {
  uint32_t acc, inp, wgt;
};

/* Encodes `in` into 16 bytes.  Returns 0, or -1 when a field does not fit
 * its width (then `bad_field` names it, if non-NULL). */
int loom_insn_encode(const struct loom_insn *in, uint8_t out[LOOM_INSN_BYTES],
                     const char **bad_field);

/* Decodes 16 bytes.  Returns LOOM_ERR_NONE, or LOOM_ERR_ILLEGAL for an
 * undefined opcode, buffer, queue or ALU op, a token flag its queue does not
 * have, a combination of fields docs/isa.md forbids, or non-zero reserved
 * bits (`why` then says which). */
int loom_insn_decode(const uint8_t in[LOOM_INSN_BYTES], struct loom_insn *out,
                     const char **why);

/* Cycles a depthwise GEMM micro-op spends reading its window (docs/rtl.md;
 * fsim's timing model and the compiler's cost model share this rule): the
 * taps t = c * kh + r < taps of `cols` window columns, at INP rows
 * x + r * row + c * col, from the last one down to t = 0.  INP is banked
 * by row parity: a cycle reads the next row, and the one after it too when
 * that one is in the other bank.  A micro-op reads kw columns, or n = 1 or
 * 2 when its x is the previous depthwise micro-op's minus n * col (n < kw,
 * col != 0, same instruction): the window slid and kept the rest. */
uint32_t loom_dw_read_cycles(uint32_t x, uint32_t kh, uint32_t cols, uint32_t taps, uint32_t row, uint32_t col);
/* Cycles of a depthwise GEMM's micro-ops (its pipeline fill aside): each
 * takes max(2, its window reads) -- two multiplier phases -- with the
 * window sliding from one micro-op to the next as above; uops is indexed
 * by micro-op number and gc is the GCFG in force. */
uint64_t loom_dw_gemm_cycles(const struct loom_insn_gemm *g, const struct loom_insn_gcfg *gc,
                             const struct loom_uop *uops, uint32_t block_in);

/* The queue fetch dispatches a decoded instruction to (enum loom_queue). */
int loom_insn_queue(const struct loom_insn *in);

int loom_uop_encode(const struct loom_uop *in, uint8_t out[LOOM_UOP_BYTES]);
void loom_uop_decode(const uint8_t in[LOOM_UOP_BYTES], struct loom_uop *out);

/* Names, for the assembler, disassembler and messages ("?" if unknown). */
const char *loom_opcode_name(uint32_t opcode);
const char *loom_buffer_name(uint32_t buffer);
const char *loom_queue_name(uint32_t queue);
const char *loom_alu_op_name(uint32_t op);
const char *loom_error_name(uint32_t err);
const char *loom_error_text(uint32_t err);
const char *loom_counter_name(uint32_t counter);

/* Raw little-endian bit-field access into an instruction, used by the codec
 * and by tests that poke individual bits.  width <= 64. */
uint64_t loom_bits_get(const uint8_t *bytes, unsigned lsb, unsigned width);
void loom_bits_set(uint8_t *bytes, unsigned lsb, unsigned width, uint64_t value);

#endif
