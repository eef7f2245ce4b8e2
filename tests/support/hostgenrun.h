/*
 * hostgenrun.h - what the hostgen tests (tests/unit/test_hostgen*.c) share:
 * their random numbers, hostgen run on a .loom file or a graph, and the
 * result loaded on an fsim device.
 *
 * Failures go through cmocka: the helpers fail the test rather than return
 * an error.
 */
#ifndef LOOM_TEST_HOSTGENRUN_H
#define LOOM_TEST_HOSTGENRUN_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"
#include "sw_compiler/compiler.h"
#include "sw_compiler/llvm/hostgen.h"

/* ---- a small deterministic PRNG (splitmix64) ---- */

/* Starts the sequence again from `seed`. */
void hgrun_seed(uint64_t seed);
uint64_t hgrun_rnd(void);
/* Uniform in [lo, hi]. */
int hgrun_rint_in(int lo, int hi);
float hgrun_rfloat(float lo, float hi);

/* ---- running hostgen ---- */

/* hostgen_loom() on in[0, n) for `triple` (NULL: this machine); returns the
 * new file (malloc'd, its size in *out_n) and, unless NULL, its summary. */
uint8_t *hgrun_generate(const uint8_t *in, size_t n, const char *triple, size_t *out_n,
                        struct hostgen_summary *sum);
/* `g` compiled for --target cpu (default configuration) for `triple`. */
uint8_t *hgrun_graph_loom(const struct ir_graph *g, const char *triple, size_t *n);
/* IR text, parsed and through the default passes. */
struct ir_graph *hgrun_parse_graph(const char *text);

/* ---- loading the result ---- */

struct hgrun_loaded {
  loom_device *dev;
  loom_model *m;
};

/* A file on a new fsim device of the default configuration, consenting to
 * its native code (the test made the file). */
void hgrun_load(const uint8_t *p, size_t n, struct hgrun_loaded *l);
void hgrun_unload(struct hgrun_loaded *l);

#endif
