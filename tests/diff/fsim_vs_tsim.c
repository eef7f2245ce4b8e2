/*
 * fsim_vs_tsim.c - differential test: random jobs on fsim and on the RTL.
 *
 *   fsim_vs_tsim [--config NAME] [--seed N | --seeds FIRST:COUNT] [--time SECONDS]
 *                [--errors] [--actions N] [--tsim OPTIONS] [--show] [--keep-going] [--quiet]
 *                [--fsim-only]
 *
 * For each seed, tests/support/randstream.c builds a legal job; it runs on
 * fsim (fsim_run directly, on host copies of the segments) and on tsim
 * (libloom's tsim backend, through hwregs.c, on the Verilated RTL with its
 * DRAM model).  A job without a planted error must give the same error
 * code (NONE), the same bytes in every segment and the same exact counters
 * (GEMM_OPS, ALU_OPS, INSN_*, BYTES_*).  With --errors, each job holds one
 * planted error and both must report it (code and instruction index; the
 * index is informative only for NOFINISH, whose index the ISA leaves open).
 *
 * On a mismatch it prints the seed, what differs first (segment, offset,
 * both values; or the counter; or the error) and the whole stream, and the
 * exit status is 1.  `--seed N --show` reproduces one seed.  --fsim-only
 * checks the generator against fsim alone: the job runs a second time with
 * fsim's reverse schedule (fsim_set_reverse_schedule), and both runs must
 * agree, so a token the generator forgot shows without tsim.  --time stops
 * starting new seeds after that many seconds (CI runs a bounded number).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/lib/backend.h"
#include "loom/loom.h"
#include "randstream.h"
#include "sim/fsim/fsim.h"

extern const struct loom_backend_ops loom_backend_tsim;

struct diff_opts {
  const char *config;
  uint64_t first, count;
  double time_limit;
  int errors, show, keep_going, quiet, fsim_only;
  uint32_t actions;
  const char *tsim_options;
};

struct runner {
  const struct loom_hw_config *cfg;
  struct fsim *fsim;
  loom_device *dev;
  struct randstream_knobs knobs;
  const struct diff_opts *o;
};

struct outcome {
  uint32_t error, error_insn;
  uint64_t counters[LOOM_CNT_COUNT];
  uint8_t *seg[LOOM_NUM_SEGMENTS];
  char message[LOOM_MSG_MAX];
  loom_status status;
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void outcome_free(struct outcome *o) {
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) free(o->seg[s]);
}

/* ---- the two runs ---- */

static int run_fsim(struct runner *r, const struct randstream *rs, struct outcome *out, int reverse) {
  struct fsim_job job = {.insns = rs->insns, .insn_count = rs->insn_count};
  fsim_set_reverse_schedule(r->fsim, reverse);
  struct fsim_result res;
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) {
    if (!rs->seg[s].size) continue;
    out->seg[s] = malloc(rs->seg[s].size);
    if (!out->seg[s]) return -1;
    memcpy(out->seg[s], rs->seg[s].data, rs->seg[s].size);
    job.seg[s] = (struct fsim_segment){out->seg[s], rs->seg[s].size};
  }
  memset(&res, 0, sizeof res);
  fsim_run(r->fsim, &job, &res);
  out->status = LOOM_OK;
  out->error = res.error, out->error_insn = res.err_insn;
  memcpy(out->counters, res.counters, sizeof out->counters);
  snprintf(out->message, sizeof out->message, "%s", res.message);
  return 0;
}

static loom_status alloc_copy(loom_device *dev, const void *data, size_t n, loom_buffer **b) {
  loom_status st = loom_buffer_alloc(dev, n, b);
  if (st == LOOM_OK) memcpy(loom_buffer_map(*b), data, n);
  return st;
}

static void free_job(struct loom_job *job) {
  loom_buffer_free(job->insns);
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) loom_buffer_free(job->segments[s]);
}

static int run_tsim(struct runner *r, const struct randstream *rs, struct outcome *out) {
  struct loom_job job;
  struct loom_job_result res;
  memset(&job, 0, sizeof job);
  job.insn_count = rs->insn_count;
  loom_status st = alloc_copy(r->dev, rs->insns, 16u * rs->insn_count, &job.insns);
  for (int s = 0; s < LOOM_NUM_SEGMENTS && st == LOOM_OK; s++)
    if (rs->seg[s].size) st = alloc_copy(r->dev, rs->seg[s].data, rs->seg[s].size, &job.segments[s]);
  if (st != LOOM_OK) {
    fprintf(stderr, "fsim_vs_tsim: %s\n", loom_device_error(r->dev));
    free_job(&job);
    return -1;
  }
  out->status = loom_job_run(r->dev, &job, 0, &res);
  out->error = res.error, out->error_insn = res.error_insn;
  memcpy(out->counters, res.counters, sizeof out->counters);
  snprintf(out->message, sizeof out->message, "%s", loom_device_error(r->dev));
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) {
    if (!job.segments[s]) continue;
    out->seg[s] = malloc(rs->seg[s].size);
    if (out->seg[s]) memcpy(out->seg[s], loom_buffer_map(job.segments[s]), rs->seg[s].size);
  }
  free_job(&job);
  return 0;
}

/* ---- comparing ---- */

/* First differing byte of any segment; 1 and a report when there is one. */
static int compare_segments(const struct randstream *rs, const struct outcome *f,
                            const struct outcome *t) {
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) {
    if (!rs->seg[s].size || !f->seg[s] || !t->seg[s]) continue;
    for (uint64_t i = 0; i < rs->seg[s].size; i++) {
      if (f->seg[s][i] == t->seg[s][i]) continue;
      printf("  segment %d (%s) offset %llu (0x%llx): fsim 0x%02x, tsim 0x%02x, initial 0x%02x\n", s,
             rs->seg[s].output ? "output" : "input", (unsigned long long)i, (unsigned long long)i,
             f->seg[s][i], t->seg[s][i], rs->seg[s].data[i]);
      return 1;
    }
  }
  return 0;
}

static int compare_counters(const struct outcome *f, const struct outcome *t) {
  int bad = 0;
  for (uint32_t c = 0; c < LOOM_CNT_COUNT; c++) {
    if (!((LOOM_COUNTER_EXACT_MASK >> c) & 1) || f->counters[c] == t->counters[c]) continue;
    printf("  counter %s: fsim %llu, tsim %llu\n", loom_counter_name(c),
           (unsigned long long)f->counters[c], (unsigned long long)t->counters[c]);
    bad = 1;
  }
  return bad;
}

static void print_error(const char *who, const struct outcome *o) {
  printf("  %s: %s at insn %u%s%s\n", who, loom_error_name(o->error), o->error_insn,
         o->message[0] ? ": " : "", o->message);
}

/* Planted error: both must report it; the index must agree unless the ISA
 * leaves it open (NOFINISH). */
static int compare_errors(const struct randstream *rs, const struct outcome *f,
                          const struct outcome *t) {
  int loose = rs->expect_error == LOOM_ERR_NOFINISH;
  if (f->error == rs->expect_error && t->error == rs->expect_error &&
      (loose || (f->error_insn == rs->expect_error_insn && t->error_insn == rs->expect_error_insn)))
    return 0;
  printf("  expected %s at insn %u\n", loom_error_name(rs->expect_error), rs->expect_error_insn);
  print_error("fsim", f);
  print_error("tsim", t);
  return 1;
}

static int compare(const struct randstream *rs, const struct outcome *f, const struct outcome *t) {
  if (t->status != LOOM_OK && t->status != LOOM_E_JOB) {
    printf("  tsim: %s: %s\n", loom_status_name(t->status), t->message);
    return 1;
  }
  if (rs->expect_error) return compare_errors(rs, f, t);
  if (f->error || t->error) {
    print_error("fsim", f);
    print_error("tsim", t);
    return 1;
  }
  int bad = compare_segments(rs, f, t);
  return compare_counters(f, t) | bad;
}

/* ---- seeds ---- */

/* 0 pass, 1 mismatch, -1 could not run. */
static int run_seed(struct runner *r, uint64_t seed) {
  struct randstream rs;
  struct outcome f, t;
  char msg[256];
  if (randstream_build(r->cfg, seed, &r->knobs, &rs, msg, sizeof msg)) {
    fprintf(stderr, "fsim_vs_tsim: seed %llu: %s\n", (unsigned long long)seed, msg);
    return -1;
  }
  memset(&f, 0, sizeof f);
  memset(&t, 0, sizeof t);
  if (r->o->show) randstream_describe(&rs, stdout);
  /* --fsim-only: fsim against fsim with the reverse schedule, which a
   * stream missing a token fails (the generator's own check) */
  int rc = run_fsim(r, &rs, &f, 0) || (r->o->fsim_only ? run_fsim(r, &rs, &t, 1) : run_tsim(r, &rs, &t)) ? -1 : 0;
  if (rc == 0) {
    if (!r->o->quiet)
      printf("seed %llu: %u insns, %s, %llu cycles, %llu GEMM ops, %llu ALU ops, %llu bytes stored\n",
             (unsigned long long)seed, rs.insn_count,
             rs.expect_error ? loom_error_name(rs.expect_error) : "no error",
             (unsigned long long)t.counters[LOOM_CNT_CYCLES],
             (unsigned long long)t.counters[LOOM_CNT_GEMM_OPS],
             (unsigned long long)t.counters[LOOM_CNT_ALU_OPS],
             (unsigned long long)t.counters[LOOM_CNT_BYTES_WR_OUT]);
    if (compare(&rs, &f, &t)) {
      printf("MISMATCH seed %llu (config %s%s): reproduce with --seed %llu --show%s\n",
             (unsigned long long)seed, r->cfg->name, r->o->errors ? ", --errors" : "",
             (unsigned long long)seed, r->o->errors ? " --errors" : "");
      if (!r->o->show) randstream_describe(&rs, stdout);
      rc = 1;
    }
  }
  outcome_free(&f);
  outcome_free(&t);
  randstream_free(&rs);
  return rc;
}

static int usage(void) {
  fprintf(stderr, "usage: fsim_vs_tsim [--config NAME] [--seed N | --seeds FIRST:COUNT] "
                  "[--time SECONDS] [--errors] [--actions N] [--tsim OPTIONS] [--show] "
                  "[--keep-going] [--quiet] [--fsim-only]\n");
  return 2;
}

static int parse_args(int argc, char **argv, struct diff_opts *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--errors")) o->errors = 1;
    else if (!strcmp(a, "--show")) o->show = 1;
    else if (!strcmp(a, "--keep-going")) o->keep_going = 1;
    else if (!strcmp(a, "--quiet")) o->quiet = 1;
    else if (!strcmp(a, "--fsim-only")) o->fsim_only = 1;
    else if (!v) return -1;
    else if (!strcmp(a, "--config")) o->config = v, i++;
    else if (!strcmp(a, "--seed")) o->first = strtoull(v, NULL, 0), o->count = 1, i++;
    else if (!strcmp(a, "--seeds")) {
      char *colon;
      o->first = strtoull(v, &colon, 0);
      o->count = *colon == ':' ? strtoull(colon + 1, NULL, 0) : 1;
      i++;
    } else if (!strcmp(a, "--time")) o->time_limit = atof(v), i++;
    else if (!strcmp(a, "--actions")) o->actions = (uint32_t)strtoul(v, NULL, 0), i++;
    else if (!strcmp(a, "--tsim")) o->tsim_options = v, i++;
    else return -1;
  }
  return 0;
}

static int open_runner(struct runner *r, const struct diff_opts *o) {
  char opts[512], msg[LOOM_MSG_MAX];
  r->o = o;
  r->cfg = loom_hw_config_by_name(o->config);
  if (!r->cfg) {
    fprintf(stderr, "fsim_vs_tsim: unknown config '%s'\n", o->config);
    return -1;
  }
  randstream_knobs_default(&r->knobs);
  r->knobs.errors = o->errors;
  if (o->actions) r->knobs.actions = o->actions;
  r->fsim = fsim_create(r->cfg);
  snprintf(opts, sizeof opts, "config=%s%s%s", o->config, o->tsim_options ? "," : "",
           o->tsim_options ? o->tsim_options : "");
  if (!r->fsim ||
      (!o->fsim_only && loom_device_open_ops(&loom_backend_tsim, opts, &r->dev, msg) != LOOM_OK)) {
    fprintf(stderr, "fsim_vs_tsim: %s\n", r->fsim ? msg : "out of memory");
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  struct diff_opts o = {.config = "tiny", .first = 1, .count = 20};
  struct runner r;
  memset(&r, 0, sizeof r);
  if (parse_args(argc, argv, &o)) return usage();
  if (open_runner(&r, &o)) return 2;
  double t0 = now_s();
  uint64_t ran = 0, failed = 0;
  int broken = 0;
  for (uint64_t s = o.first; s < o.first + o.count; s++) {
    if (o.time_limit > 0 && now_s() - t0 > o.time_limit) break;
    int rc = run_seed(&r, s);
    ran++;
    if (rc < 0) broken = 1;
    if (rc) {
      failed++;
      if (!o.keep_going) break;
    }
  }
  printf("fsim_vs_tsim: config %s: %llu seeds from %llu, %llu failed, %.1f s\n", o.config,
         (unsigned long long)ran, (unsigned long long)o.first, (unsigned long long)failed,
         now_s() - t0);
  loom_device_close(r.dev);
  fsim_destroy(r.fsim);
  return broken ? 2 : failed ? 1 : 0;
}
