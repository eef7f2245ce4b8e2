/*
 * quant_arith.c - the arithmetic of int8 quantization, shared by
 * pass_quantize.c (which chooses every tensor's parameters) and pass_fuse.c
 * (which turns the QDQ form into the accelerator's multipliers and shifts).
 *
 *   - quant_choose_params: an asymmetric int8 scale and zero point for a
 *     calibrated [lo, hi], widened to include 0 so that zero is exact;
 *   - quant_value: round-to-nearest-even of v / scale + zp, saturated to int8;
 *   - quant_multipliers: a real rescale factor as a 32-bit multiplier and a
 *     right shift, the form REQUANT applies (docs/quantization.md);
 *   - ir_graph_is_quantized: whether a graph already holds Q/DQ or fused
 *     integer ops (so calibration is not asked for).
 */
#include "sw_compiler/compiler.h"

#include <math.h>
#include <stdlib.h>

void quant_choose_params(float lo, float hi, float *scale, int32_t *zp) {
  if (lo > 0) lo = 0;
  if (hi < 0) hi = 0;
  if (!(hi - lo > 0) || !isfinite(hi - lo)) {
    *scale = 1.0f, *zp = 0; /* constant zero (a dead ReLU): any scale is exact */
    return;
  }
  *scale = (hi - lo) / 255.0f;
  double z = nearbyint(-128.0 - (double)lo / *scale);
  *zp = (int32_t)(z < -128 ? -128 : z > 127 ? 127 : z);
}

int32_t quant_value(double v, float scale, int32_t zp) {
  double q = nearbyint(v / scale) + zp;
  return (int32_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}

int quant_multipliers(const double *real, int n, int32_t *mult, uint32_t *shift) {
  double max = 0;
  for (int i = 0; i < n; i++) {
    if (!(real[i] >= 0) || !isfinite(real[i])) return -1;
    if (real[i] > max) max = real[i];
  }
  int e;
  double f = frexp(max > 0 ? max : 1.0, &e); /* max = f * 2^e, f in [0.5, 1) */
  (void)f;
  int s = 31 - e; /* max * 2^s in [2^30, 2^31) */
  if (s < 0) return -1;
  if (s > 63) s = 63; /* tiny factors: fewer significant bits, documented */
  for (int i = 0; i < n; i++) {
    double m = nearbyint(ldexp(real[i], s));
    if (m > INT32_MAX) m = INT32_MAX; /* rounding up to 2^31 */
    mult[i] = (int32_t)m;
  }
  *shift = (uint32_t)s;
  return 0;
}

int ir_graph_is_quantized(const struct ir_graph *g) {
  for (int i = 0; i < g->n_nodes; i++)
    switch (g->nodes[i].op) {
    case IR_OP_QUANTIZELINEAR: case IR_OP_DEQUANTIZELINEAR: case IR_OP_QLINEARCONV:
    case IR_OP_QLINEARMATMUL: case IR_OP_CONVINTEGER: case IR_OP_MATMULINTEGER:
    case IR_OP_QCONV: case IR_OP_QGEMM: case IR_OP_QADD: case IR_OP_QPOOL:
      return 1;
    default: break;
    }
  return 0;
}
