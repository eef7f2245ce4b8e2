/*
 * test_compile_residual.c - the transformers' residual Adds on [1, S, D]
 * tokens as int8 accelerator work (pass_quantize.c, pass_fuse.c): the Add
 * of two float activations of rank 3 runs as the [S, D] rows the fc jobs
 * use, folded into the fc job that computes one operand when that job's
 * result has no other reader ("fc+add"), else a QADD job of its own
 * ("add", as with COMPILE_NO_RESIDUAL).  Both encoder forms:
 *
 *   post-norm (nn.TransformerEncoder, BERT): n = LN(x + f(x)), then
 *     LN(n + g(n)): n is quantized once for g's fc job and the Add;
 *   pre-norm (ViT): r = x + f(LN(x)), then r + g(LN(r)): the residual
 *     stream itself is int8, read by the next LayerNorm and the next Add.
 *
 * Each compiled for the default and tiny configurations and run on fsim
 * bit-exact against the fused graph on the reference interpreter.  D = 24
 * and 40 are not multiples of the default block, so the [S, D] rows are
 * padded blocks; 70 tokens take several tiles of rows.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compilerun.h"

static const char *const postnorm =
    "loom.ir 1\n"
    "input %x : f32[1,SS,DD]\n"
    "const %w1 : f32[DD,DD] = rand(51)\n"
    "const %b1 : f32[DD] = rand(52)\n"
    "const %g : f32[DD] = rand(53)\n"
    "const %be : f32[DD] = rand(54)\n"
    "const %w2 : f32[DD,DD] = rand(55)\n"
    "const %b2 : f32[DD] = rand(56)\n"
    "%l1 = MatMul(%x, %w1)\n"
    "%c1 = Add(%b1, %l1)\n"
    "%r1 = Add(%c1, %x)\n"
    "%n1 = LayerNormalization@17(%r1, %g, %be) {axis=-1}\n"
    "%l2 = MatMul(%n1, %w2)\n"
    "%c2 = Add(%b2, %l2)\n"
    "%r2 = Add(%n1, %c2)\n"
    "%y = LayerNormalization@17(%r2, %g, %be) {axis=-1}\n"
    "output %y\n";

static const char *const prenorm =
    "loom.ir 1\n"
    "input %x : f32[1,SS,DD]\n"
    "const %w1 : f32[DD,DD] = rand(61)\n"
    "const %b1 : f32[DD] = rand(62)\n"
    "const %g : f32[DD] = rand(63)\n"
    "const %be : f32[DD] = rand(64)\n"
    "const %w2 : f32[DD,DD] = rand(65)\n"
    "const %b2 : f32[DD] = rand(66)\n"
    "%n1 = LayerNormalization@17(%x, %g, %be) {axis=-1}\n"
    "%l1 = MatMul(%n1, %w1)\n"
    "%c1 = Add(%b1, %l1)\n"
    "%r1 = Add(%x, %c1)\n"
    "%n2 = LayerNormalization@17(%r1, %g, %be) {axis=-1}\n"
    "%l2 = MatMul(%n2, %w2)\n"
    "%c2 = Add(%l2, %b2)\n"
    "%r2 = Add(%r1, %c2)\n"
    "%y = LayerNormalization@17(%r2, %g, %be) {axis=-1}\n"
    "output %y\n";

/* text with every SS replaced by s and every DD by d (malloc'd). */
static char *with_dims(const char *text, int s, int d) {
  size_t n = strlen(text) + 64 * 16;
  char *out = malloc(n);
  size_t k = 0;
  for (const char *p = text; *p; p++) {
    if ((p[0] == 'D' && p[1] == 'D') || (p[0] == 'S' && p[1] == 'S'))
      k += (size_t)snprintf(out + k, n - k, "%d", p[0] == 'D' ? d : s), p++;
    else out[k++] = *p;
  }
  out[k] = '\0';
  return out;
}

static int jobs_of(const struct compile_result *r) {
  int jobs = 0;
  for (int i = 0; i < r->n_layers; i++) jobs += r->layers[i].is_job;
  return jobs;
}

/* Bit-exact on fsim; two fc jobs and two residual Adds on the
 * accelerator: folded into them (fc+add) or, with COMPILE_NO_RESIDUAL, two
 * add jobs; no Add on the host; `quantizes` host QUANTIZE steps and `qlns`
 * int8 LayerNorms (QLAYERNORM: a LayerNorm of an int8 Add's result whose
 * result is only read as int8). */
static void check(const char *form, int s, int d, const char *config, unsigned flags, int quantizes, int qlns) {
  char *text = with_dims(form, s, d);
  int64_t dims[3] = {1, s, d};
  struct compile_result r;
  compile_calibrated(text, 3, dims, 11, config, flags, &r);
  bit_exact_on_waves(&r, s * d, 3, 2.0f);
  int folded = !(flags & COMPILE_NO_RESIDUAL);
  assert_int_equal(count_rows(&r, "fc+add"), folded ? 2 : 0);
  assert_int_equal(count_rows(&r, "add"), 2);
  assert_int_equal(count_rows(&r, "host Add"), 0);
  assert_int_equal(jobs_of(&r), folded ? 2 : 4);
  assert_int_equal(count_rows(&r, "host QUANTIZE"), quantizes);
  assert_int_equal(count_rows(&r, "host QLAYERNORM"), qlns);
  compile_result_free(&r);
  free(text);
}

/* Both configurations, 6 tokens of 24 (not whole blocks) and 32, and 70
 * tokens of 40 (several row and column tiles), folded and not. */
static void check_all(const char *form, int quantizes, int qlns) {
  static const char *const cfgs[] = {"default", "tiny"};
  static const int sd[][2] = {{6, 24}, {6, 32}, {70, 40}};
  for (int c = 0; c < 2; c++)
    for (int k = 0; k < 3; k++) {
      check(form, sd[k][0], sd[k][1], cfgs[c], 0, quantizes, qlns);
      check(form, sd[k][0], sd[k][1], cfgs[c], COMPILE_NO_RESIDUAL, quantizes, qlns);
    }
}

/* Post-norm: the model input is quantized once, for the fc job and the Add
 * after it (a second QUANTIZE would make two); n1 is an int8 LayerNorm of
 * the first Add, read by the second fc job and Add; y, the model's float
 * output, stays a float LayerNorm. */
static void test_postnorm(void **state) { check_all(postnorm, 1, 1); }

/* Pre-norm: the residual stream r1 is int8 from its job on (read by the
 * next LayerNorm and by the second Add); the model input is quantized by
 * the runtime, so both LayerNorms before the fc jobs are int8 ones
 * (QLAYERNORM) and no QUANTIZE is left. */
static void test_prenorm(void **state) { check_all(prenorm, 0, 2); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_postnorm),
      cmocka_unit_test(test_prenorm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
