/*
 * ref_ops.h - the integer semantics of docs/isa.md, written as plainly as
 * possible, for golden-model tests of fsim (and later tsim and the board).
 *
 * Nothing here is fast or clever: every function transcribes a formula of
 * the document in wide arithmetic (int64, and 128 bits where the document
 * says 65), with floor division spelled out, so a reader can check it
 * against the text line by line.  It shares no code with fsim.
 */
#ifndef LOOM_TEST_REF_OPS_H
#define LOOM_TEST_REF_OPS_H

#include <stdint.h>

#include "loom/isa.h"

/* min(max(v, -128), 127) */
int8_t ref_sat8(int64_t v);
/* v modulo 2^32, as a two's complement int32 */
int32_t ref_wrap32(int64_t v);
/* floor(num / den) for den > 0 */
int64_t ref_floor_div(int64_t num, int64_t den);

/* GEMM, one lane: (acc + sum_k x[k] * w[k]) mod 2^32 */
int32_t ref_gemm_lane(int32_t acc, const int8_t *x, const int8_t *w, int n);

/* ALU ops on one lane; v is the b operand (sext16(imm) or ACC[s] lane). */
int32_t ref_add(int32_t a, int32_t v);
int32_t ref_max(int32_t a, int32_t v);
int32_t ref_min(int32_t a, int32_t v);
int32_t ref_shr(int32_t a, int32_t v);
int32_t ref_mul(int32_t a, int32_t v);
int32_t ref_mov(int32_t a, int32_t v);
/* REQUANT with multiplier m and the registers q. */
int32_t ref_requant(int32_t a, int32_t m, const struct loom_insn_qcfg *q);
/* Any ALU op as the instruction `in` applies it to a lane: for REQUANT the
 * multiplier is q->multiplier with use_imm, else v. */
int32_t ref_alu(const struct loom_insn_alu *in, int32_t a, int32_t v,
                const struct loom_insn_qcfg *q);

/* LOAD of an int8 buffer (UOP, WGT, INP): the H x W rows of `row_bytes`
 * bytes it writes from sram_base on, padding included, into rows[]. `dram`
 * is the segment. */
void ref_load_bytes(const struct loom_insn_mem *m, const uint8_t *dram, uint32_t row_bytes,
                    uint8_t *rows);
/* LOAD ACC: H x W rows of `lanes` int32 (little-endian int32 DRAM rows, or
 * int8 with src_int8), padding included. */
void ref_load_acc(const struct loom_insn_mem *m, const uint8_t *dram, uint32_t lanes,
                  int32_t *rows);
/* STORE: copies rows of the whole OUT buffer `out_rows` (row_bytes each)
 * into the segment `dram`. */
void ref_store(const struct loom_insn_mem *m, const int8_t *out_rows, uint32_t row_bytes,
               uint8_t *dram);

#endif
