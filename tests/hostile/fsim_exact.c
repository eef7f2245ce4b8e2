/*
 * fsim_exact.c - the exact-size fsim backend of fsim_exact.h.
 *
 * It is libloom's fsim backend with one difference that matters: alloc()
 * asks malloc for exactly the bytes requested, so AddressSanitizer's redzone
 * starts at the segment's last byte.  Jobs run synchronously in submit(), as
 * in the real backend, with a work budget so a legal but endless stream
 * stops with TIMEOUT instead of hanging the test.
 */
#include "fsim_exact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/isa.h"
#include "sim/fsim/fsim.h"

#define FSIM_EXACT_DEFAULT_BUDGET UINT64_C(1000000)

struct exact_state {
  struct fsim *sim;
  uint64_t budget;
  uint64_t fill; /* xorshift state of the SRAM fill; 0 for none */
  int have_result;
  struct fsim_result res;
};

static const char *const exact_keys[] = {"config", "budget", "fill", NULL};

static loom_status say(char msg[LOOM_MSG_MAX], loom_status st, const char *what) {
  snprintf(msg, LOOM_MSG_MAX, "fsim-exact: %s", what);
  return st;
}

static loom_status exact_open(const char *options, void **state,
                              const struct loom_hw_config **cfg, char msg[LOOM_MSG_MAX]) {
  char name[64] = "tiny", budget[32] = "", fill[32] = "";
  loom_status st = loom_option_check(options, exact_keys, "fsim-exact", msg);
  if (st != LOOM_OK) return st;
  loom_option_get(options, "config", name, sizeof name);
  const struct loom_hw_config *c = loom_hw_config_by_name(name);
  if (!c) return say(msg, LOOM_E_NOTFOUND, "unknown config");
  struct exact_state *s = calloc(1, sizeof *s);
  if (!s) return say(msg, LOOM_E_NOMEM, "out of memory");
  s->budget = FSIM_EXACT_DEFAULT_BUDGET;
  if (loom_option_get(options, "budget", budget, sizeof budget)) s->budget = strtoull(budget, NULL, 10);
  if (loom_option_get(options, "fill", fill, sizeof fill)) s->fill = strtoull(fill, NULL, 0);
  s->sim = fsim_create(c);
  if (!s->sim) {
    free(s);
    return say(msg, LOOM_E_NOMEM, "out of memory for the simulator");
  }
  *state = s;
  *cfg = c;
  return LOOM_OK;
}

static void exact_close(void *state) {
  struct exact_state *s = state;
  fsim_destroy(s->sim);
  free(s);
}

static loom_status exact_alloc(void *state, size_t bytes, struct loom_backend_buffer *buf,
                               char msg[LOOM_MSG_MAX]) {
  void *p = malloc(bytes);
  if (!p) return say(msg, LOOM_E_NOMEM, "out of memory for a buffer");
  memset(p, 0, bytes);
  *buf = (struct loom_backend_buffer){.host = p, .dev_addr = 0, .size = bytes, .priv = NULL};
  return LOOM_OK;
}

static void exact_free(void *state, struct loom_backend_buffer *buf) {
  free(buf->host);
  buf->host = NULL;
}

/* SRAM as undefined as it may be at the start of a job: random bytes in
 * UOP, WGT, INP and ACC, and OUT = sat8(ACC) as every ACC write keeps it. */
static void fill_sram(struct exact_state *s) {
  static const int bufs[] = {LOOM_BUF_UOP, LOOM_BUF_WGT, LOOM_BUF_INP, LOOM_BUF_ACC};
  for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++) {
    size_t n;
    uint8_t *p = fsim_sram(s->sim, bufs[b], &n);
    for (size_t i = 0; i < n; i++) {
      s->fill ^= s->fill << 13, s->fill ^= s->fill >> 7, s->fill ^= s->fill << 17;
      p[i] = (uint8_t)(s->fill >> 24);
    }
  }
  size_t na, no;
  const int32_t *acc = fsim_sram(s->sim, LOOM_BUF_ACC, &na);
  int8_t *out = fsim_sram(s->sim, LOOM_BUF_OUT, &no);
  for (size_t i = 0; i < no && i < na / sizeof *acc; i++)
    out[i] = (int8_t)(acc[i] < -128 ? -128 : acc[i] > 127 ? 127 : acc[i]);
}

static loom_status exact_submit(void *state, const struct loom_backend_buffer *insns,
                                uint32_t insn_count,
                                const struct loom_backend_buffer *const segments[8],
                                char msg[LOOM_MSG_MAX]) {
  struct exact_state *s = state;
  struct fsim_job job = {.insns = insns->host, .insn_count = insn_count, .work_budget = s->budget};
  for (int i = 0; i < LOOM_NUM_SEGMENTS; i++)
    if (segments[i]) job.seg[i] = (struct fsim_segment){segments[i]->host, segments[i]->size};
  memset(&s->res, 0, sizeof s->res);
  if (s->fill) fill_sram(s);
  fsim_run(s->sim, &job, &s->res);
  s->have_result = 1;
  return LOOM_OK;
}

static loom_status exact_wait(void *state, uint32_t timeout_ms, struct loom_job_result *res,
                              char msg[LOOM_MSG_MAX]) {
  struct exact_state *s = state;
  if (!s->have_result) return say(msg, LOOM_E_INVALID, "no job submitted");
  s->have_result = 0;
  res->error = s->res.error;
  res->error_insn = s->res.err_insn;
  memcpy(res->counters, s->res.counters, sizeof res->counters);
  snprintf(res->message, sizeof res->message, "%s", s->res.message);
  return LOOM_OK; /* like libloom's fsim: a budget overrun is res->error TIMEOUT */
}

static loom_status exact_reset(void *state, char msg[LOOM_MSG_MAX]) {
  ((struct exact_state *)state)->have_result = 0;
  return LOOM_OK;
}

const struct loom_backend_ops fsim_exact_backend = {
    .name = "fsim-exact",
    .open = exact_open,
    .close = exact_close,
    .alloc = exact_alloc,
    .free = exact_free,
    .sync = NULL,
    .submit = exact_submit,
    .wait = exact_wait,
    .reset = exact_reset,
};
