/*
 * loomsample.h - the sample .loom file of the format tests
 * (tests/unit/test_loomfile*.c), and the check that a damaged copy of it is
 * refused.
 *
 * The sample, built with the builder for the tiny configuration, has a
 * record of every type and every layout: three buffers ("weights", CONST
 * with 64 bytes of data; "act", WORK; "uops", CONST), five tensors (x in,
 * y out with a float user dtype, scale and zero point, feat NCHWc, bias NC,
 * w), one job of three instructions (LOAD UOP, GEMM, FINISH) and two steps
 * (the job, and host op 7 with 16 bytes of parameters).  A test that
 * checks a field relies on these values.
 */
#ifndef LOOM_TEST_LOOMSAMPLE_H
#define LOOM_TEST_LOOMSAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "driver/core/loomfile.h"
#include "loom/isa.h"

/* Encodes `in` into 16 bytes; a test failure if a field does not fit. */
void loomsample_encode(const struct loom_insn *in, uint8_t *out);

/* A builder holding the sample, for tests that add to it. */
struct loom_file_builder *loomsample_builder(void);

/* The sample's bytes (malloc'd; `*n` gets their size). */
uint8_t *loomsample(size_t *n);

/* Parses p[0, n) and expects LOOM_E_FORMAT with a message containing each
 * of the NULL-terminated `needles`: expect_reject(p, n, "a", "b"). */
void loomsample_expect_reject(const uint8_t *p, size_t n, const char *const *needles);
#define expect_reject(p, n, ...) loomsample_expect_reject(p, n, (const char *const[]){__VA_ARGS__, NULL})

#endif
