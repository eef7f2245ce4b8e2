/*
 * test_timeline.c - tsim's timelines against the hardware counters on
 * random jobs (docs/profiling.md).
 *
 *   test_timeline [--config NAME] [--seeds A:B] [--options K=V,...]
 *
 * For each seed, tests/support/randstream.c builds a legal job (random
 * LOADs, GEMMs, ALU ops and STOREs with tokens, extra tokens and NOPs; the
 * generator of the fsim-vs-RTL differential test) and runs it on tsim with
 * recording on.  The timeline must agree with the job's counters exactly:
 *
 *   - slices are sorted by begin, lie in [0, CYCLES), have begin < end, a
 *     known module and kind, an instruction index of the stream and its
 *     opcode;
 *   - per module, instruction slices never overlap; load/compute/store have
 *     INSN_* of them and they add up to *_BUSY, fetch has one per
 *     instruction read (BYTES_RD_INSN / 16), each instruction at most once;
 *   - token-wait and DRAM-wait slices add up to *_TOKEN_STALL and
 *     *_MEM_STALL, each inside the slice of the instruction it names (fetch's
 *     DRAM waits come before it), and instructions run on the module their
 *     opcode belongs to.
 *
 * Then the job runs again with recording off: same counters (recording
 * changes nothing; under reorder= the DRAM model's random state moves on
 * between runs, so only the exact counters are compared) and no new
 * timeline.  Exit 1 on the first mismatch,
 * naming the seed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/isa.h"
#include "loom/loom.h"
#include "randstream.h"

static const int kCounters[4][4] = {
    {-1, -1, -1, -1},
    {LOOM_CNT_INSN_LOAD, LOOM_CNT_LOAD_BUSY, LOOM_CNT_LOAD_TOKEN_STALL, LOOM_CNT_LOAD_MEM_STALL},
    {LOOM_CNT_INSN_COMPUTE, LOOM_CNT_COMPUTE_BUSY, LOOM_CNT_COMPUTE_TOKEN_STALL, LOOM_CNT_COMPUTE_MEM_STALL},
    {LOOM_CNT_INSN_STORE, LOOM_CNT_STORE_BUSY, LOOM_CNT_STORE_TOKEN_STALL, LOOM_CNT_STORE_MEM_STALL},
};

static int bad(uint64_t seed, const char *what, size_t i) {
  fprintf(stderr, "test_timeline: seed %llu: slice %zu: %s\n", (unsigned long long)seed, i, what);
  return 1;
}

/* The module whose queue the instruction goes to (fetch dispatches all). */
static int module_of(const struct randstream *rs, uint32_t insn) {
  return 1 + loom_insn_queue(&rs->decoded[insn]);
}

/* Every slice on its own. */
static int check_slices(uint64_t seed, const struct randstream *rs, const uint64_t *c,
                        const struct loom_trace_event *ev, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const struct loom_trace_event *e = &ev[i];
    if (i && e->begin < ev[i - 1].begin) return bad(seed, "not sorted by begin", i);
    if (e->begin >= e->end || e->end > c[LOOM_CNT_CYCLES]) return bad(seed, "outside [0, CYCLES)", i);
    if (e->module >= LOOM_MOD_COUNT || e->kind >= LOOM_TRACE_KIND_COUNT) return bad(seed, "bad module or kind", i);
    if (e->insn >= rs->insn_count) return bad(seed, "instruction index outside the stream", i);
    if (e->opcode != rs->decoded[e->insn].opcode) return bad(seed, "wrong opcode", i);
    if (e->module != LOOM_MOD_FETCH && e->module != module_of(rs, e->insn))
      return bad(seed, "instruction on another module", i);
    if (e->module == LOOM_MOD_FETCH && e->kind == LOOM_TRACE_TOKEN_WAIT) return bad(seed, "fetch token wait", i);
  }
  return 0;
}

/* Sums and overlaps per module, against the counters. */
static int check_module(uint64_t seed, const struct randstream *rs, const uint64_t *c, int mod,
                        const struct loom_trace_event *ev, size_t n) {
  uint64_t sum[LOOM_TRACE_KIND_COUNT] = {0}, count = 0, last_end = 0;
  uint64_t *lo = calloc(rs->insn_count, sizeof *lo), *hi = calloc(rs->insn_count, sizeof *hi);
  int r = 0;
  for (size_t i = 0; i < n && !r; i++) {
    const struct loom_trace_event *e = &ev[i];
    if (e->module != mod) continue;
    sum[e->kind] += e->end - e->begin;
    if (e->kind != LOOM_TRACE_INSN) continue;
    if (e->begin < last_end) r = bad(seed, "instruction slices overlap", i);
    if (hi[e->insn]) r = bad(seed, "an instruction has two slices", i);
    lo[e->insn] = e->begin, hi[e->insn] = e->end, last_end = e->end, count++;
  }
  for (size_t i = 0; i < n && !r; i++) {
    const struct loom_trace_event *e = &ev[i];
    /* fetch waits for an instruction's words before it holds it */
    if (e->module == mod && mod != LOOM_MOD_FETCH && e->kind != LOOM_TRACE_INSN &&
        !(lo[e->insn] <= e->begin && e->end <= hi[e->insn]))
      r = bad(seed, "a wait outside its instruction", i);
  }
  free(lo);
  free(hi);
  if (r) return r;
  const int *k = kCounters[mod];
  uint64_t want[4] = {mod ? c[k[0]] : c[LOOM_CNT_BYTES_RD_INSN] / 16, mod ? c[k[1]] : sum[0],
                      mod ? c[k[2]] : 0, mod ? c[k[3]] : sum[2]};
  uint64_t got[4] = {count, sum[LOOM_TRACE_INSN], sum[LOOM_TRACE_TOKEN_WAIT], sum[LOOM_TRACE_MEM_WAIT]};
  if (!memcmp(want, got, sizeof want)) return 0;
  fprintf(stderr, "test_timeline: seed %llu: module %d: slices (count, busy, token, DRAM) = (%llu, %llu, "
          "%llu, %llu), counters (%llu, %llu, %llu, %llu)\n", (unsigned long long)seed, mod,
          (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
          (unsigned long long)got[3], (unsigned long long)want[0], (unsigned long long)want[1],
          (unsigned long long)want[2], (unsigned long long)want[3]);
  return 1;
}

static loom_status load_job(loom_device *dev, const struct randstream *rs, struct loom_job *job) {
  memset(job, 0, sizeof *job);
  job->insn_count = rs->insn_count;
  loom_status st = loom_buffer_alloc(dev, 16u * rs->insn_count, &job->insns);
  if (st == LOOM_OK) memcpy(loom_buffer_map(job->insns), rs->insns, 16u * rs->insn_count);
  for (int s = 0; s < LOOM_NUM_SEGMENTS && st == LOOM_OK; s++) {
    if (!rs->seg[s].size) continue;
    st = loom_buffer_alloc(dev, rs->seg[s].size, &job->segments[s]);
    if (st == LOOM_OK) memcpy(loom_buffer_map(job->segments[s]), rs->seg[s].data, rs->seg[s].size);
  }
  return st;
}

static void free_job(struct loom_job *job) {
  loom_buffer_free(job->insns);
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) loom_buffer_free(job->segments[s]);
}

/* Runs the seed traced, checks, runs it untraced; 0 when all agree. */
static int one_seed(loom_device *dev, uint64_t seed, int timing_repeats, size_t *slices) {
  struct randstream rs;
  struct randstream_knobs k;
  struct loom_job job;
  struct loom_job_result r1, r2;
  char msg[256];
  randstream_knobs_default(&k);
  if (randstream_build(loom_device_config(dev), seed, &k, &rs, msg, sizeof msg)) return fprintf(stderr, "%s\n", msg), 1;
  int fail = load_job(dev, &rs, &job) != LOOM_OK || loom_device_set_trace(dev, 1) != LOOM_OK ||
             loom_job_run(dev, &job, 0, &r1) != LOOM_OK;
  size_t n = 0;
  const struct loom_trace_event *ev = fail ? NULL : loom_device_trace(dev, &n);
  if (fail) fprintf(stderr, "test_timeline: seed %llu: %s\n", (unsigned long long)seed, loom_device_error(dev));
  if (!fail && !n) fail = bad(seed, "no timeline", 0);
  if (!fail) fail = check_slices(seed, &rs, r1.counters, ev, n);
  for (int m = 0; m < LOOM_MOD_COUNT && !fail; m++) fail = check_module(seed, &rs, r1.counters, m, ev, n);
  *slices += n;
  free_job(&job);
  /* again without recording: the same job gives the same counters */
  if (!fail) fail = load_job(dev, &rs, &job) != LOOM_OK || loom_device_set_trace(dev, 0) != LOOM_OK ||
                    loom_job_run(dev, &job, 0, &r2) != LOOM_OK;
  int from = timing_repeats ? 0 : LOOM_CNT_GEMM_OPS; /* exact counters only, under reordering */
  if (!fail && memcmp(r1.counters + from, r2.counters + from, sizeof r1.counters - from * sizeof r1.counters[0]))
    fail = bad(seed, "counters differ with recording off", 0);
  if (!fail) {
    size_t n2;
    loom_device_trace(dev, &n2);
    if (n2 != n) fail = bad(seed, "recording off still recorded", 0);
  }
  if (!fail) free_job(&job);
  randstream_free(&rs);
  return fail;
}

int main(int argc, char **argv) {
  const char *config = "tiny", *extra = NULL;
  unsigned long long first = 1, last = 20;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--config") && i + 1 < argc) config = argv[++i];
    else if (!strcmp(argv[i], "--seeds") && i + 1 < argc && sscanf(argv[++i], "%llu:%llu", &first, &last) == 2) continue;
    else if (!strcmp(argv[i], "--options") && i + 1 < argc) extra = argv[++i];
    else return fprintf(stderr, "usage: test_timeline [--config NAME] [--seeds A:B] [--options K=V,...]\n"), 2;
  }
  char options[512], msg[LOOM_MSG_MAX];
  snprintf(options, sizeof options, "config=%s%s%s", config, extra ? "," : "", extra ? extra : "");
  loom_device *dev;
  if (loom_device_open("tsim", options, &dev, msg) != LOOM_OK) return fprintf(stderr, "%s\n", msg), 1;
  size_t slices = 0;
  int fail = 0;
  for (unsigned long long s = first; s <= last && !fail; s++) fail = one_seed(dev, s, !extra || !strstr(extra, "reorder="), &slices);
  loom_device_close(dev);
  if (fail) return 1;
  printf("test_timeline: ok: seeds %llu..%llu on %s, %zu slices agree with the counters\n", first, last,
         config, slices);
  return 0;
}
