/*
 * ref_qconv.h - plain C int8 reference of the quantized layers the
 * lowering supports: convolution (any groups), fully connected, max and
 * average pooling and the requantized add, on plain NCHW tensors.
 *
 * Written as directly as the definitions in sw_compiler/lower.h read, with
 * wide arithmetic and no blocking, tiling or folding, and sharing no code
 * with the lowering: tests run a lowered layer on fsim and compare with
 * this bit for bit.
 */
#ifndef LOOM_TEST_REF_QCONV_H
#define LOOM_TEST_REF_QCONV_H

#include <stdint.h>

#include "sw_compiler/lower.h"

/* clamp(rshift(acc * m, shift) + zp, lo, hi), the ALU's REQUANT. */
int32_t ref_q_requant(int32_t acc, int32_t m, uint32_t shift, int32_t zp, int32_t lo, int32_t hi,
                      uint32_t round_even);

/* Output spatial size of a convolution or pooling window. */
int32_t ref_q_out_size(int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t pad0, int32_t pad1);

/* The convolution; with l->residual, r is the residual tensor (output
 * shape) and y the result of the fused Add.  in_passes weight parts are
 * summed; LOWER_CONV_ACC_OUT makes y [n][4 * out_c][oh][ow], channel
 * 4o + k holding byte k of the int32 accumulator. */
void ref_qconv(const struct lower_qconv *l, const int8_t *x, const int8_t *r, int8_t *y);
void ref_qfc(const struct lower_qfc *l, const int8_t *x, int8_t *y);
void ref_qpool(const struct lower_qpool *l, const int8_t *x, int8_t *y);
void ref_qadd(const struct lower_qadd *l, const int8_t *a, const int8_t *b, int8_t *y);

/* NCHW <-> NCHWc with channel block `block` (padding lanes get `fill`). */
void ref_to_nchwc(const int8_t *x, int32_t n, int32_t c, int32_t h, int32_t w, int32_t block,
                  int8_t fill, int8_t *out);
void ref_from_nchwc(const int8_t *x, int32_t n, int32_t c, int32_t h, int32_t w, int32_t block,
                    int8_t *out);

/* ---- fsim harness for lowered programs (not part of the reference) ---- */

#include "sim/fsim/fsim.h"

/* Runs a lowered program on a fresh fsim: `in` / `in2` are the packed
 * activations of segments IN / IN2 (NULL when unused), `out` receives the
 * OUT segment.  Returns fsim's error code; res gets the counters.  The job
 * runs a second time with fsim's reverse schedule: when that fails or
 * gives another output, a token is missing and the result is
 * REF_Q_ERR_RACE. */
#define REF_Q_ERR_RACE 1000u
uint32_t ref_q_run_fsim(const struct lower_program *p, const int8_t *in, const int8_t *in2,
                        int8_t *out, struct fsim_result *res);
/* The same with fsim's timing model on: res->counters[LOOM_CNT_CYCLES] is
 * its estimate of the RTL's cycles (docs/fsim-timing.md). */
uint32_t ref_q_run_fsim_timed(const struct lower_program *p, const int8_t *in, const int8_t *in2,
                              int8_t *out, struct fsim_result *res);

/* Index of the first exact counter (docs/isa.md "Counters") where fsim and
 * the lowering's prediction differ, or -1. */
int ref_q_counter_mismatch(const struct lower_program *p, const struct fsim_result *res);

/* A small deterministic generator (xorshift64*) for test data. */
struct ref_q_rng {
  uint64_t s;
};
uint32_t ref_q_rand(struct ref_q_rng *r);
/* Uniform in [lo, hi]. */
int32_t ref_q_range(struct ref_q_rng *r, int32_t lo, int32_t hi);
void ref_q_fill(struct ref_q_rng *r, int8_t *x, size_t n, int32_t lo, int32_t hi);

#endif
