/*
 * hostgenrun.c - the hostgen tests' shared helpers (hostgenrun.h).
 */
#include "hostgenrun.h"

#include <setjmp.h>
#include <stdarg.h>

#include <cmocka.h>

/* ---- a small deterministic PRNG (splitmix64) ---- */

static uint64_t rng_state;

void hgrun_seed(uint64_t seed) { rng_state = seed; }

uint64_t hgrun_rnd(void) {
  uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

int hgrun_rint_in(int lo, int hi) { return lo + (int)(hgrun_rnd() % (uint64_t)(hi - lo + 1)); }

float hgrun_rfloat(float lo, float hi) {
  return lo + (hi - lo) * (float)(hgrun_rnd() >> 40) / (float)(1 << 24);
}

/* ---- running hostgen ---- */

uint8_t *hgrun_generate(const uint8_t *in, size_t n, const char *triple, size_t *out_n,
                        struct hostgen_summary *sum) {
  struct hostgen_options o = {.triple = triple};
  struct ir_error err = {{0}};
  uint8_t *out = NULL;
  if (hostgen_loom(in, n, "cases.loom", &o, &out, out_n, sum, &err)) fail_msg("hostgen: %s", err.msg);
  return out;
}

uint8_t *hgrun_graph_loom(const struct ir_graph *g, const char *triple, size_t *n) {
  struct hostgen_options o = {.triple = triple};
  struct ir_error err = {{0}};
  uint8_t *out;
  if (hostgen_compile_graph(g, &o, loom_hw_config_by_name("default"), &out, n, NULL, &err))
    fail_msg("hostgen_compile_graph: %s", err.msg);
  return out;
}

struct ir_graph *hgrun_parse_graph(const char *text) {
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  if (!g || ir_run_default_passes(g, &err)) fail_msg("%s", err.msg);
  return g;
}

/* ---- loading the result ---- */

void hgrun_load(const uint8_t *p, size_t n, struct hgrun_loaded *l) {
  char msg[LOOM_MSG_MAX];
  if (loom_device_open("fsim", "config=default,trust_native=1", &l->dev, msg)) fail_msg("%s", msg);
  if (loom_model_load_memory(l->dev, p, n, "model.loom", &l->m, msg)) fail_msg("load: %s", msg);
}

void hgrun_unload(struct hgrun_loaded *l) {
  loom_model_free(l->m);
  loom_device_close(l->dev);
}
