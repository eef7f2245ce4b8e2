/*
 * hostops_qlayernorm.h - QLAYERNORM, a transformer's LayerNormalization in
 * integer arithmetic with the int8 boundary folded in: int8 codes in, int8
 * codes out, where the float form is DEQUANTIZE + LayerNormalization +
 * QUANTIZE (three host steps and a float32 tensor each way).  The
 * arithmetic is loom_ilayernorm_rows's (intapprox.h): the row's sum and
 * sum of squares in int64, the variance as the exact integer N^2 var,
 * epsilon folded in by the compiler as round(eps / s_x^2 N^2 2^F), one
 * loom_isqrt and one integer reciprocal per row, per-channel int32 gamma
 * and beta, multiply-shifts and round half to even.
 *
 * Error bound, per output, against float LayerNorm (double) of the
 * dequantized row with the float gamma and beta, clamped to the int8 range
 * of (s_y, z_y), in output steps (LSBs of y):
 *
 *   |y - z_y - v / s_y| <= 1/2 + 2^-15 + G 2^-20,   G = max_c |gamma_c| / s_y
 *
 * the 1/2 the output's rounding, 2^-15 the 2^-16 steps of beta and of the
 * sum before that rounding, G 2^-20 the reciprocal square root (2^-29
 * relative, |z| <= sqrt N <= 256), z's 2^-22 steps and gamma's 30-bit
 * fixed point.  So y is the correctly rounded code or, within that margin of
 * a tie, its neighbour: never more than 1 LSB off.  Checked by
 * tests/unit/test_qlayernorm.c.
 *
 * Tensors: one int8 input and one int8 output, both quantized (scale != 0),
 * any layouts, the same element count and the same last dimension N (1 ..
 * 65536); the LayerNorm runs along that last axis.  The zero points come
 * from the descriptors; the scales only through the parameters.
 *
 * Parameters: 5 + 2 N little-endian int32: LOOM_QLAYERNORM_LEN (N, checked
 * against the tensors), _FRAC (F), _EPS_LO and _EPS_HI (the folded epsilon,
 * an int64), _GSHIFT, then the N gamma constants g_c and the N beta
 * constants b_c (intapprox.h's struct loom_ilayernorm).  The op checks them
 * with loom_ilayernorm_check, so a hostile file gets LOOM_E_INVALID and a
 * message, never an overflow.
 */
#ifndef LOOM_HOSTOPS_QLAYERNORM_H
#define LOOM_HOSTOPS_QLAYERNORM_H

#include "driver/core/hostops.h"
#include "driver/core/intapprox.h"

enum loom_qlayernorm_param {
  LOOM_QLAYERNORM_LEN = 0, /* N */
  LOOM_QLAYERNORM_FRAC,    /* F */
  LOOM_QLAYERNORM_EPS_LO,  /* the folded epsilon's low and high 32 bits */
  LOOM_QLAYERNORM_EPS_HI,
  LOOM_QLAYERNORM_GSHIFT,
  LOOM_QLAYERNORM_HEADER,  /* then gamma[N], beta[N] */
};

/* The parameter count for rows of len values. */
#define LOOM_QLAYERNORM_PARAM_COUNT(len) (LOOM_QLAYERNORM_HEADER + 2 * (len))

/* The parameter bytes of l: 4 LOOM_QLAYERNORM_PARAM_COUNT(l->len) of them
 * (zero points are not among them: the descriptors'). */
void loom_qlayernorm_params(const struct loom_ilayernorm *l, uint8_t *out);

loom_status loom_hostop_qlayernorm(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]);

#endif
