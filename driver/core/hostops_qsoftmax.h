/*
 * hostops_qsoftmax.h - QSOFTMAX, attention's Softmax in integer arithmetic
 * with the int8 boundary folded in: int8 codes in, int8 codes out, where
 * the float form is DEQUANTIZE + SOFTMAX + QUANTIZE (three host steps and a
 * float32 tensor each way).  The arithmetic is loom_isoftmax_row's
 * (intapprox.h): I-BERT's integer exp through a 256-entry table of
 * q - max(q), an integer sum, one integer reciprocal per row and a
 * multiply-shift rounded half to even.
 *
 * Tensors: one int8 input and one int8 output, both quantized (scale != 0),
 * any layouts, the same element count and the same last dimension; the
 * softmax runs along that last axis (so a reshape of the leading axes
 * between the producer and the consumer costs nothing: the op reads the
 * blocked scores of an attention's heads as the job stored them).  The
 * output's zero point comes from its descriptor.  An optional second
 * input is an additive mask (BERT's attention mask): float32, any layout,
 * its last dimension the scores' and mask_rows = elements / len rows,
 * broadcast over the scores' rows as loom_isoftmax_masked_rows says (row
 * r adds mask row (r / group) % mask_rows); the op turns it into integer
 * offsets once per call (loom_isoftmax_offset: integer arithmetic on the
 * float32's bits).
 *
 * Parameters: little-endian int32 in the order of enum
 * loom_qsoftmax_param: the integer constants the compiler derives from
 * the two scales with loom_isoftmax_init, six without a mask (the first
 * version of the op: a file without a mask is unchanged), nine with one
 * (loom_isoftmax_mask_init's 1/s_x and the broadcast's group).  The op
 * uses only these (no float at run time) and checks them with
 * loom_isoftmax_check, so a hostile file gets LOOM_E_INVALID and a
 * message, never an overflow.
 */
#ifndef LOOM_HOSTOPS_QSOFTMAX_H
#define LOOM_HOSTOPS_QSOFTMAX_H

#include "driver/core/hostops.h"
#include "driver/core/intapprox.h"

enum loom_qsoftmax_param {
  LOOM_QSOFTMAX_UP = 0, /* loom_iexp: up, q_ln2, q_b, q_c */
  LOOM_QSOFTMAX_Q_LN2,
  LOOM_QSOFTMAX_Q_B,
  LOOM_QSOFTMAX_Q_C,
  LOOM_QSOFTMAX_MULT,   /* 1/s_y = mult 2^(31 - shift) */
  LOOM_QSOFTMAX_SHIFT,
  LOOM_QSOFTMAX_MASK_MULT, /* with a mask only: 1/s_x = mask_mult 2^-mask_shift */
  LOOM_QSOFTMAX_MASK_SHIFT,
  LOOM_QSOFTMAX_MASK_GROUP, /* score rows per mask row before the mask's rows repeat: >= 1 */
  LOOM_QSOFTMAX_PARAM_COUNT
};
#define LOOM_QSOFTMAX_PARAMS_UNMASKED LOOM_QSOFTMAX_MASK_MULT /* 6: without a mask */

/* The parameter bytes of s (out_zp is not among them: the descriptor's)
 * into out; returns how many bytes: 4 LOOM_QSOFTMAX_PARAMS_UNMASKED when
 * s has no mask constants, else all of them with group. */
int loom_qsoftmax_params(const struct loom_isoftmax *s, int64_t group, uint8_t out[4 * LOOM_QSOFTMAX_PARAM_COUNT]);

loom_status loom_hostop_qsoftmax(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]);

#endif
