/*
 * backend_fsim.c - the "fsim" backend: jobs run on the functional
 * simulator (sim/fsim), in host memory.
 *
 * Buffers are 64-byte aligned heap blocks (the alignment a segment base
 * needs on hardware); a segment is the buffer's host pointer and its
 * requested size, so fsim checks accesses against exactly what the user
 * allocated.  submit() runs the whole job synchronously through fsim_run()
 * and keeps the result for wait().  fsim always terminates: a token
 * deadlock is reported as DEADLOCK, and a legal but endless stream (loop
 * counts of 10^12) runs out of the work budget and stops with TIMEOUT, the
 * stand-in for the wall-clock timeout a board would hit.  Memory is
 * coherent: no sync.
 *
 * Options: config=NAME|FILE (a configuration of hw/spec/loom_configs.def or
 * a configuration file, "default" when absent); budget=N, the work budget of fsim_job (micro-ops
 * plus DRAM rows per job, default FSIM_DEFAULT_BUDGET: about 1000 times the
 * largest ResNet-18 layer, tens of seconds of simulation at worst; 0 =
 * unlimited); timing=1, the timing model of sim/fsim/fsim_timing.c: the
 * cycle counters become estimates of the RTL's (docs/fsim-timing.md), and
 * set_trace/trace give per-instruction timelines; with it, bw=BYTES the
 * DRAM's bytes per cycle (a power of two, as tsim's option bw=; default 8).
 * Without timing the cycle counters are 0 and set_trace is unsupported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "sim/fsim/fsim.h"

#define FSIM_DEFAULT_BUDGET UINT64_C(1000000000)

struct fsim_state {
  struct loom_hw_config cfg;
  uint64_t budget;
  int timing; /* timing=1: the timing model is on */
  struct fsim *sim;
  int have_result;
  struct fsim_result res;
  void (*progress)(void *ctx, uint64_t done); /* set_progress */
  void *progress_ctx;
};

static const char *const fsim_options[] = {"config", "budget", "timing", "bw", NULL};

static loom_status fsim_open(const char *options, void **state,
                             const struct loom_hw_config **cfg, char msg[LOOM_MSG_MAX]) {
  struct loom_hw_config c;
  loom_status st = loom_option_check(options, fsim_options, "fsim", msg);
  if (st == LOOM_OK) st = loom_backend_config("fsim", options, &c, msg);
  if (st != LOOM_OK) return st;
  struct fsim_state *s = calloc(1, sizeof *s);
  if (!s) return loom_fail(msg, LOOM_E_NOMEM, "fsim: out of memory");
  s->cfg = c;
  s->budget = FSIM_DEFAULT_BUDGET;
  char budget[32];
  if (loom_option_get(options, "budget", budget, sizeof budget)) {
    char *end = NULL;
    s->budget = strtoull(budget, &end, 10);
    if (!budget[0] || *end || budget[0] == '-') {
      free(s);
      return loom_fail(msg, LOOM_E_INVALID, "fsim: budget '%s' is not a whole number", budget);
    }
  }
  char timing[8] = "0";
  loom_option_get(options, "timing", timing, sizeof timing);
  if (strcmp(timing, "0") != 0 && strcmp(timing, "1") != 0) {
    free(s);
    return loom_fail(msg, LOOM_E_INVALID, "fsim: timing '%s' must be 0 or 1", timing);
  }
  s->sim = fsim_create(&s->cfg);
  if (!s->sim || (timing[0] == '1' && fsim_set_timing(s->sim, 1) != 0)) {
    fsim_destroy(s->sim);
    free(s);
    return loom_fail(msg, LOOM_E_NOMEM, "fsim: out of memory for the simulator");
  }
  char bw[16];
  if (loom_option_get(options, "bw", bw, sizeof bw)) {
    char *end = NULL;
    unsigned long v = strtoul(bw, &end, 10);
    if (!bw[0] || *end || bw[0] == '-' || v > 4096 || fsim_set_dram_bw(s->sim, (uint32_t)v) != 0) {
      fsim_destroy(s->sim);
      free(s);
      return loom_fail(msg, LOOM_E_INVALID,
                       "fsim: bw '%s' must be a power of two up to 4096, with timing=1", bw);
    }
  }
  s->timing = timing[0] == '1';
  *state = s;
  *cfg = &s->cfg;
  return LOOM_OK;
}

static void fsim_close(void *state) {
  struct fsim_state *s = state;
  fsim_destroy(s->sim);
  free(s);
}

static loom_status fsim_alloc(void *state, size_t bytes, struct loom_backend_buffer *buf,
                              char msg[LOOM_MSG_MAX]) {
  size_t rounded = (bytes + 63) & ~(size_t)63;
  if (rounded < bytes) return loom_fail(msg, LOOM_E_NOMEM, "fsim: %zu bytes is too large", bytes);
  void *p = aligned_alloc(64, rounded);
  if (!p) return loom_fail(msg, LOOM_E_NOMEM, "fsim: out of memory allocating %zu bytes", bytes);
  memset(p, 0, rounded);
  buf->host = p;
  buf->dev_addr = 0;
  buf->size = bytes;
  buf->priv = NULL;
  return LOOM_OK;
}

static void fsim_free(void *state, struct loom_backend_buffer *buf) {
  free(buf->host);
  buf->host = NULL;
}

static loom_status fsim_submit(void *state, const struct loom_backend_buffer *insns,
                               uint32_t insn_count,
                               const struct loom_backend_buffer *const segments[8],
                               char msg[LOOM_MSG_MAX]) {
  struct fsim_state *s = state;
  struct fsim_job job = {.insns = insns->host, .insn_count = insn_count, .work_budget = s->budget,
                         .progress = s->progress, .progress_ctx = s->progress_ctx};
  for (int i = 0; i < LOOM_NUM_SEGMENTS; i++) {
    if (!segments[i]) continue;
    job.seg[i].data = segments[i]->host;
    job.seg[i].size = segments[i]->size;
  }
  memset(&s->res, 0, sizeof s->res);
  fsim_run(s->sim, &job, &s->res);
  s->have_result = 1;
  return LOOM_OK;
}

static loom_status fsim_wait(void *state, uint32_t timeout_ms, struct loom_job_result *res,
                             char msg[LOOM_MSG_MAX]) {
  struct fsim_state *s = state;
  if (!s->have_result) return loom_fail(msg, LOOM_E_INVALID, "fsim: no job submitted");
  s->have_result = 0;
  res->error = s->res.error;
  res->error_insn = s->res.err_insn;
  memcpy(res->counters, s->res.counters, sizeof res->counters);
  snprintf(res->message, sizeof res->message, "%s", s->res.message);
  return LOOM_OK;
}

static loom_status fsim_reset(void *state, char msg[LOOM_MSG_MAX]) {
  struct fsim_state *s = state;
  s->have_result = 0;
  return LOOM_OK;
}

static loom_status fsim_set_trace_op(void *state, int on, char msg[LOOM_MSG_MAX]) {
  struct fsim_state *s = state;
  if (!s->timing)
    return loom_fail(msg, LOOM_E_UNSUPPORTED,
                     "fsim: timelines need the timing model (option timing=1)");
  fsim_set_trace(s->sim, on);
  return LOOM_OK;
}

static void fsim_set_progress(void *state, void (*fn)(void *ctx, uint64_t done), void *ctx) {
  struct fsim_state *s = state;
  s->progress = fn, s->progress_ctx = ctx;
}

static const struct loom_trace_event *fsim_trace_op(void *state, size_t *count) {
  struct fsim_state *s = state;
  return fsim_trace(s->sim, count);
}

const struct loom_backend_ops loom_backend_fsim = {
    .name = "fsim",
    .open = fsim_open,
    .close = fsim_close,
    .alloc = fsim_alloc,
    .free = fsim_free,
    .sync = NULL,
    .submit = fsim_submit,
    .wait = fsim_wait,
    .reset = fsim_reset,
    .set_trace = fsim_set_trace_op,
    .trace = fsim_trace_op,
    .set_progress = fsim_set_progress,
};
