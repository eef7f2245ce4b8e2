/*
 * hostile.c - the hostile-binary runner: mutants of valid .loom files on
 * fsim and tsim (docs/reliability.md).
 *
 *   hostile [options] BASE.s|BASE.loom...
 *     --seconds S      stop starting mutants after S seconds (default: none)
 *     --count N        run N mutants (default 200 when --seconds is absent)
 *     --seed S         seed of the mutant sequence (default 1)
 *     --first K        first mutant index (default 0)
 *     --replay K       run mutant K alone and print everything about it
 *     --tsim auto|none|LIB   tsim library for the bases' configuration
 *                      (auto: what the tsim backend finds; default auto)
 *     --keep DIR       write every failing mutant to DIR/seed-S-K.loom
 *     --as-is          run each BASE itself, unmutated, with the same checks
 *                      (regression inputs: tests/regress/hostile/)
 *     --verbose        one line per mutant
 *
 * Mutant K of seed S comes from base K mod (number of bases) and depends on
 * nothing else, so a run of N mutants is repeatable and any one of them can
 * be replayed.  Bases given as assembler source are assembled in-process.
 *
 * For each mutant: the loader's verdict (loom_file_parse in this process,
 * then loom_model_load in the children); the outcome on fsim (the exact-
 * size backend of fsim_exact.c, so under ASan a DMA past a segment is a
 * heap overflow) and on tsim; the recovery check (the unmutated model runs
 * correctly on the same device afterwards); and the comparison of the two
 * backends.  When fsim and tsim report different errors, the mutant is
 * analysed on fsim: the failing instruction is neutralized (a NOP with the
 * same queue and tokens; FINISH for an illegal one, which fetch stops at)
 * and the job rerun, repeatedly; if errors come from two different sources
 * (fetch and a module, or two modules) the job has two errors and, per
 * docs/isa.md, the one reported may depend on timing: such mutants are
 * counted separately ("two-errors").  Different outcomes or outputs are
 * also explained when fsim's change once SRAM starts the job with other
 * contents (a second fsim that fills SRAM with noise before every job): the
 * mutant reads SRAM it never wrote, undefined by docs/isa.md
 * ("undefined-sram"); and different outputs when tsim's change with the
 * DRAM timing ("racy-outputs": the mutation opened a race).  Everything
 * else is a failure: DISAGREE (outcomes) or OUTPUTS-DIFFER (outputs).
 *
 * Exit status: 0 when no mutant failed, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "driver/core/asm.h"
#include "driver/lib/backend.h"
#include "driver/core/loomfile.h"
#include "driver/core/outfile.h"
#include "driver/core/readfile.h"
#include "fsim_exact.h"
#include "hostile.h"
#include "loom/isa.h"

extern const struct loom_backend_ops loom_backend_tsim;

#define MAX_BASES 64
#define FSIM_BUDGET 400000u         /* fsim work units per job (micro-ops + DRAM rows) */
/* tsim simulated cycles per job: about 10x the largest base (gemm64 on
 * tiny: about 9k cycles; see the base lines the runner prints).  Mutants
 * with huge loops run into it, so it bounds the cost of each. */
#define TSIM_MAX_CYCLES 100000u
#define MAX_FAILURES_SHOWN 40

enum cmp {
  CMP_NONE,        /* only fsim ran */
  CMP_SAME,        /* same outcome, code, instruction (and outputs) */
  CMP_LIMIT,       /* one side hit a limit (work budget, cycles, device memory): not compared */
  CMP_TWO_ERRORS,  /* different errors, and the job has errors from two sources */
  CMP_UNDEFINED,   /* outcomes or outputs differ, and fsim's change when SRAM starts with other
                    * contents: the mutant reads SRAM it never wrote, undefined by docs/isa.md */
  CMP_RACY,        /* outputs differ, and so do tsim's under other DRAM timings (slow and
                    * narrow, fast and wide): a token race */
  CMP_RACE,        /* outputs differ, and a job has two unordered accesses to the same SRAM
                    * rows, one a write (hostile_race.c): a race that fsim's schedule and
                    * tsim's (under every DRAM timing tried) resolve differently */
  CMP_OUTPUTS,     /* outputs differ, explained by neither: a failure */
  CMP_DISAGREE,    /* different outcomes with one error source: a failure */
  CMP_COUNT
};

static const char *const cmp_names[CMP_COUNT] = {"-", "agree", "limit-bound", "two-errors",
                                                 "undefined-sram", "racy-outputs",
                                                 "token-race", "OUTPUTS-DIFFER",
                                                 "DISAGREE"};

struct base {
  char name[256];
  uint8_t *bytes;
  size_t size;
  const struct loom_hw_config *cfg;
  loom_device *fsim, *tsim;
  loom_device *tsim_alt;     /* tsim with slow, narrow DRAM, for race checks */
  loom_device *tsim_fast;    /* tsim with fast, wide DRAM, for race checks */
  loom_device *fsim_fill;    /* fsim that fills SRAM with noise before each job */
  uint64_t fsim_hash, tsim_hash;
};

struct opts {
  double seconds;
  uint64_t count, seed, first;
  long replay;
  const char *tsim, *keep, *argv0;
  int verbose, as_is;
};

struct tally {
  uint64_t mutants, parse_rejected;
  uint64_t by_kind[MUT_COUNT][RUN_COUNT];  /* fsim outcome by mutation kind */
  uint64_t fsim[RUN_COUNT], tsim[RUN_COUNT];
  uint64_t fsim_err[LOOM_ERR_COUNT], tsim_err[LOOM_ERR_COUNT];
  uint64_t cmp[CMP_COUNT];
  uint64_t no_recovery, bad_message, failures;
  double slowest_s[3];                     /* the three slowest mutants */
  uint64_t slowest_k[3];
};

/* ---- bases and devices ---- */

static int load_base(const char *path, struct base *b, char msg[LOOM_MSG_MAX]) {
  memset(b, 0, sizeof *b);
  snprintf(b->name, sizeof b->name, "%s", path);
  size_t len = strlen(path);
  if (len > 2 && !strcmp(path + len - 2, ".s")) {
    struct loom_file_builder *fb;
    if (loom_asm_file(path, NULL, &fb, msg) != LOOM_OK) return -1;
    b->bytes = loom_file_builder_finish(fb, &b->size);
    loom_file_builder_free(fb);
    if (!b->bytes) return snprintf(msg, LOOM_MSG_MAX, "%s: cannot serialize", path), -1;
  } else if (loom_read_file(path, LOOM_FILE_MAX_SIZE, &b->bytes, &b->size, msg) != LOOM_OK) {
    return -1;
  }
  struct loom_file f;
  if (loom_file_parse(b->bytes, b->size, path, &f, msg) != LOOM_OK) return -1;
  b->cfg = loom_hw_config_by_hash(f.config_hash);
  loom_file_free(&f);
  if (!b->cfg) return snprintf(msg, LOOM_MSG_MAX, "%s: unknown configuration", path), -1;
  return 0;
}

enum dev_kind {
  DEV_FSIM,      /* fsim, exact-size buffers */
  DEV_TSIM,      /* tsim */
  DEV_TSIM_ALT,  /* tsim with slow, narrow DRAM (other timing) */
  DEV_TSIM_FAST, /* tsim with fast, wide DRAM (other timing) */
  DEV_FSIM_FILL, /* fsim with SRAM filled with noise before every job (other undefined state) */
};

static loom_device **dev_slot(struct base *b, enum dev_kind kind) {
  switch (kind) {
  case DEV_FSIM: return &b->fsim;
  case DEV_TSIM: return &b->tsim;
  case DEV_TSIM_ALT: return &b->tsim_alt;
  case DEV_TSIM_FAST: return &b->tsim_fast;
  default: return &b->fsim_fill;
  }
}

/* One device per configuration and kind, shared by the bases. */
static loom_device *device_for(struct base *bases, int nb, const struct base *b,
                               enum dev_kind kind, const struct opts *o) {
  for (int i = 0; i < nb; i++) {
    loom_device *d = *dev_slot(&bases[i], kind);
    if (d && bases[i].cfg == b->cfg) return d;
  }
  char opts[1200], msg[LOOM_MSG_MAX];
  loom_device *d = NULL;
  int tsim = kind == DEV_TSIM ? 1 : kind == DEV_TSIM_ALT ? 2 : kind == DEV_TSIM_FAST ? 3 : 0;
  if (!tsim) {
    snprintf(opts, sizeof opts, "config=%s,budget=%u%s", b->cfg->name, FSIM_BUDGET,
             kind == DEV_FSIM_FILL ? ",fill=0x9e3779b97f4a7c15" : "");
    if (loom_device_open_ops(&fsim_exact_backend, opts, &d, msg) != LOOM_OK)
      fprintf(stderr, "hostile: fsim: %s\n", msg);
    return d;
  }
  if (!strcmp(o->tsim, "none")) return NULL;
  int n = snprintf(opts, sizeof opts, "config=%s,max_cycles=%u%s", b->cfg->name,
                   tsim == 2 ? 8 * TSIM_MAX_CYCLES : TSIM_MAX_CYCLES,
                   tsim == 2 ? ",latency=211,bw=2,outstanding=1"
                   : tsim == 3 ? ",latency=1,bw=64,outstanding=16" : "");
  if (strcmp(o->tsim, "auto")) snprintf(opts + n, sizeof opts - (size_t)n, ",lib=%s", o->tsim);
  if (loom_device_open_ops(&loom_backend_tsim, opts, &d, msg) != LOOM_OK) {
    fprintf(stderr, "hostile: tsim for config %s unavailable, fsim only: %s\n", b->cfg->name, msg);
    return NULL;
  }
  return d;
}

static void env_for(struct run_env *e, loom_device *dev, const struct base *b, uint64_t hash, int tsim) {
  *e = (struct run_env){.dev = dev, .timeout_ms = tsim ? 20000 : 0, .deadline_ms = tsim ? 120000 : 30000,
                        .base = b->bytes, .base_size = b->size, .base_hash = hash};
}

/* Reference outputs of every base, on every device it has. */
static int prepare_bases(struct base *bases, int nb, const struct opts *o) {
  for (int i = 0; i < nb; i++) {
    struct base *b = &bases[i];
    b->fsim = device_for(bases, nb, b, DEV_FSIM, o);
    b->fsim_fill = device_for(bases, nb, b, DEV_FSIM_FILL, o);
    if (!b->fsim || !b->fsim_fill) return -1;
    b->tsim = device_for(bases, nb, b, DEV_TSIM, o);
    if (b->tsim) b->tsim_alt = device_for(bases, nb, b, DEV_TSIM_ALT, o);
    if (b->tsim) b->tsim_fast = device_for(bases, nb, b, DEV_TSIM_FAST, o);
    struct run_env e[2], ef;
    struct run_result r[2], rf;
    env_for(&e[0], b->fsim, b, 0, 0);
    if (b->tsim) env_for(&e[1], b->tsim, b, 0, 1);
    hostile_run(e, b->tsim ? 2 : 1, b->bytes, b->size, r);
    /* A base that reads undefined SRAM would make every mutant's outputs
     * meaningless: a legal program never does.  (--as-is runs mutants.) */
    env_for(&ef, b->fsim_fill, b, 0, 0);
    hostile_run(&ef, 1, b->bytes, b->size, &rf);
    if (!o->as_is && r[0].outcome == RUN_OK && (rf.outcome != RUN_OK || rf.out_hash != r[0].out_hash)) {
      fprintf(stderr, "hostile: base %s: its outputs change with the SRAM contents at the start "
                      "of a job (it reads SRAM it never wrote)\n", b->name);
      return -1;
    }
    b->fsim_hash = r[0].outcome == RUN_OK ? r[0].out_hash : 0;
    b->tsim_hash = b->tsim && r[1].outcome == RUN_OK ? r[1].out_hash : 0;
    printf("base %-28s config %-8s fsim %-10s tsim %-10s %8llu cycles%s\n", b->name, b->cfg->name,
           run_outcome_names[r[0].outcome], b->tsim ? run_outcome_names[r[1].outcome] : "-",
           b->tsim ? (unsigned long long)r[1].cycles : 0ull,
           b->tsim && r[0].outcome == RUN_OK && r[1].outcome == RUN_OK && r[0].out_hash != r[1].out_hash
               ? "  OUTPUTS DIFFER" : "");
    /* The race check explains output differences; a base it calls racy
     * would make that explanation too easy.  (--as-is runs mutants.) */
    char race[160];
    if (!o->as_is && hostile_races(b->bytes, b->size, race, sizeof race)) {
      fprintf(stderr, "hostile: base %s: %s\n", b->name, race);
      return -1;
    }
  }
  return 0;
}

/* ---- two-error analysis ---- */

static void fix_crc(uint8_t *p, size_t size) {
  uint32_t crc = (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), p + LOOM_FILE_CRC_START, size - LOOM_FILE_CRC_START);
  for (int i = 0; i < 4; i++) p[LOOM_FILE_OFF_CRC32 + i] = (uint8_t)(crc >> (8 * i));
}

/* Which part of the machine raised r's error: 0 fetch, 1 + queue, -1 none.
 * An fsim TIMEOUT met while neutralizing counts as a possible error of its
 * instruction: the budget ran out inside it, and the hardware, which has
 * no budget, may raise an error further into the same loop. */
static int error_source(const uint8_t *img, size_t size, const struct run_result *r) {
  if (r->outcome == RUN_TIMEOUT && r->err == LOOM_ERR_TIMEOUT) {
    struct run_result as_error = *r;
    as_error.outcome = RUN_JOB_ERROR, as_error.err = LOOM_ERR_SEGMENT;
    return error_source(img, size, &as_error);
  }
  if (r->outcome != RUN_JOB_ERROR || r->err == LOOM_ERR_NOFINISH || r->err == LOOM_ERR_DEADLOCK) return -1;
  if (r->err == LOOM_ERR_ILLEGAL) return 0;
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(img, size, "m", &f, msg) != LOOM_OK || r->job >= f.job_count) return -1;
  struct loom_insn d;
  const uint8_t *b = f.insns + ((size_t)f.jobs[r->job].insn_first + r->err_insn) * LOOM_INSN_BYTES;
  int q = loom_insn_decode(b, &d, NULL) == LOOM_ERR_NONE ? 1 + loom_insn_queue(&d) : -1;
  loom_file_free(&f);
  return q;
}

/* Replaces the instruction that raised r's error so that it raises nothing. */
static int neutralize(uint8_t *img, size_t size, const struct run_result *r) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(img, size, "m", &f, msg) != LOOM_OK || r->job >= f.job_count) return -1;
  size_t at = (size_t)(f.insns - (const uint8_t *)f.storage) +
              ((size_t)f.jobs[r->job].insn_first + r->err_insn) * LOOM_INSN_BYTES;
  loom_file_free(&f);
  struct loom_insn d, nop = {.opcode = LOOM_OP_FINISH};
  if (r->err != LOOM_ERR_ILLEGAL) {
    if (loom_insn_decode(img + at, &d, NULL) != LOOM_ERR_NONE) return -1;
    nop = (struct loom_insn){.opcode = LOOM_OP_NOP, .pop_prev = d.pop_prev, .pop_next = d.pop_next,
                             .push_prev = d.push_prev, .push_next = d.push_next};
    nop.nop.queue = (uint32_t)loom_insn_queue(&d);
  }
  if (loom_insn_encode(&nop, img + at, NULL) != 0) return -1;
  fix_crc(img, size);
  return 0;
}

/* Number of distinct error sources (fetch, load, compute, store) the
 * mutant's failing job holds, found by neutralizing errors one by one. */
static int error_sources(const struct run_env *fenv, const uint8_t *bytes, size_t size,
                         const struct run_result *first) {
  uint8_t *img = malloc(size);
  memcpy(img, bytes, size);
  struct run_result r = *first;
  int seen = 0, n = 0;
  for (int iter = 0; iter < 8; iter++) {
    int s = error_source(img, size, &r);
    if (s < 0) break;
    if (!(seen & (1 << s))) seen |= 1 << s, n++;
    if (n >= 2 || neutralize(img, size, &r) != 0) break;
    struct run_env e = *fenv;
    e.base_hash = 0;
    hostile_run(&e, 1, img, size, &r);
  }
  free(img);
  return n;
}

static int same_outcome(const struct run_result *a, const struct run_result *b) {
  if (a->outcome != b->outcome) return 0;
  switch (a->outcome) {
  case RUN_REJECTED: return a->status == b->status;
  case RUN_JOB_ERROR: return a->err == b->err && a->err_insn == b->err_insn && a->job == b->job && a->step == b->step;
  case RUN_HOST_ERROR: return a->step == b->step;
  default: return 1;
  }
}

/* 1 when the mutant ends differently on fsim once SRAM starts with other
 * contents: it reads SRAM no instruction of its job wrote, which docs/isa.md
 * leaves undefined (fsim and tsim start jobs with different leftovers). */
static int reads_undefined_sram(const struct run_env *fill, const uint8_t *bytes, size_t size,
                                const struct run_result *f) {
  struct run_result r;
  struct run_env e = *fill;
  e.base_hash = 0;
  hostile_run(&e, 1, bytes, size, &r);
  return !same_outcome(&r, f) || (r.outcome == RUN_OK && r.out_hash != f->out_hash);
}

/* Outputs that differ between fsim and tsim: undefined when they depend on
 * SRAM contents at the start of a job; timing-dependent (a race the
 * mutation opened between modules, legal but meaningless) when tsim's own
 * outputs change with the DRAM timing; a real mismatch otherwise. */
static enum cmp compare_outputs(const struct run_env *fill, const struct run_env alt[2],
                                const uint8_t *bytes, size_t size, const struct run_result *f,
                                const struct run_result *t) {
  if (reads_undefined_sram(fill, bytes, size, f)) return CMP_UNDEFINED;
  for (int i = 0; i < 2; i++) {
    struct run_result r;
    struct run_env e = alt[i];
    e.base_hash = 0;
    hostile_run(&e, 1, bytes, size, &r);
    if (r.outcome != RUN_OK || r.out_hash != t->out_hash) return CMP_RACY;
  }
  return hostile_races(bytes, size, NULL, 0) ? CMP_RACE : CMP_OUTPUTS;
}

static enum cmp compare(const struct run_env *fenv, const struct run_env *fill,
                        const struct run_env alt[2], const uint8_t *bytes, size_t size,
                        const struct run_result *f, const struct run_result *t) {
  if (f->outcome >= RUN_VIOLATION || t->outcome >= RUN_VIOLATION) return CMP_NONE; /* failures already */
  if (f->outcome == RUN_TIMEOUT || t->outcome == RUN_TIMEOUT) return same_outcome(f, t) ? CMP_SAME : CMP_LIMIT;
  if ((f->outcome == RUN_REJECTED && f->status == LOOM_E_NOMEM) ||
      (t->outcome == RUN_REJECTED && t->status == LOOM_E_NOMEM)) /* tsim's DRAM is 256 MiB */
    return same_outcome(f, t) ? CMP_SAME : CMP_LIMIT;
  if (same_outcome(f, t))
    return f->outcome == RUN_OK && f->out_hash != t->out_hash
               ? compare_outputs(fill, alt, bytes, size, f, t) : CMP_SAME;
  if (reads_undefined_sram(fill, bytes, size, f)) return CMP_UNDEFINED;
  if (f->outcome == RUN_JOB_ERROR && t->outcome == RUN_JOB_ERROR && error_sources(fenv, bytes, size, f) >= 2)
    return CMP_TWO_ERRORS;
  return CMP_DISAGREE;
}

/* ---- reporting ---- */

static void describe(const char *who, const struct run_result *r) {
  printf("    %-5s %-10s", who, run_outcome_names[r->outcome]);
  if (r->outcome == RUN_JOB_ERROR || r->outcome == RUN_TIMEOUT)
    printf(" %s at insn %u of job %u (step %u)", loom_error_name(r->err), r->err_insn, r->job, r->step);
  if (r->outcome == RUN_REJECTED) printf(" %s", loom_status_name(r->status));
  if (r->recovery == 0) printf(" NO RECOVERY");
  printf("\n          %s\n", r->msg[0] ? r->msg : "(no message)");
}

static void keep(const struct opts *o, uint64_t k, const struct mutant *mu) {
  if (!o->keep) return;
  char path[1024];
  mkdir(o->keep, 0755);
  snprintf(path, sizeof path, "%s/seed-%llu-%llu.loom", o->keep, (unsigned long long)o->seed,
           (unsigned long long)k);
  char msg[LOOM_MSG_MAX];
  if (loom_outfile_write(path, mu->bytes, mu->size, msg) != LOOM_OK) fprintf(stderr, "hostile: %s\n", msg);
}

static void kinds_text(const struct mutant *mu, char *out, size_t n) {
  if (!mu->n_kinds) {
    snprintf(out, n, "unmutated");
    return;
  }
  snprintf(out, n, "%s%s%s", mut_names[mu->kinds[0]], mu->n_kinds > 1 ? "+" : "",
           mu->n_kinds > 1 ? mut_names[mu->kinds[1]] : "");
}

static int is_failure(const struct run_result *r) {
  return r->outcome >= RUN_VIOLATION || r->recovery == 0 ||
         (r->outcome != RUN_OK && !r->msg[0]);
}

static void print_tables(const struct tally *t, int have_tsim) {
  printf("\nmutants: %llu (%llu refused by loom_file_parse)\n", (unsigned long long)t->mutants,
         (unsigned long long)t->parse_rejected);
  printf("\nfsim outcome by mutation (first kind of each mutant):\n%-12s", "mutation");
  for (int o = 0; o < RUN_COUNT; o++) printf(" %10s", run_outcome_names[o]);
  printf("\n");
  for (int k = 0; k < MUT_COUNT; k++) {
    printf("%-12s", mut_names[k]);
    for (int o = 0; o < RUN_COUNT; o++) printf(" %10llu", (unsigned long long)t->by_kind[k][o]);
    printf("\n");
  }
  printf("\n%-12s", "backend");
  for (int o = 0; o < RUN_COUNT; o++) printf(" %10s", run_outcome_names[o]);
  printf("\n%-12s", "fsim");
  for (int o = 0; o < RUN_COUNT; o++) printf(" %10llu", (unsigned long long)t->fsim[o]);
  if (have_tsim) {
    printf("\n%-12s", "tsim");
    for (int o = 0; o < RUN_COUNT; o++) printf(" %10llu", (unsigned long long)t->tsim[o]);
  }
  printf("\n\njob errors   ");
  for (int e = 1; e < LOOM_ERR_COUNT; e++) printf(" %9s", loom_error_name((uint32_t)e));
  printf("\n%-12s ", "fsim");
  for (int e = 1; e < LOOM_ERR_COUNT; e++) printf(" %9llu", (unsigned long long)t->fsim_err[e]);
  if (have_tsim) {
    printf("\n%-12s ", "tsim");
    for (int e = 1; e < LOOM_ERR_COUNT; e++) printf(" %9llu", (unsigned long long)t->tsim_err[e]);
    printf("\n\nfsim vs tsim:");
    for (int c = 1; c < CMP_COUNT; c++) printf(" %s %llu,", cmp_names[c], (unsigned long long)t->cmp[c]);
  }
  printf("\nno recovery: %llu, refusals without a message: %llu\n", (unsigned long long)t->no_recovery,
         (unsigned long long)t->bad_message);
  printf("slowest mutants:");
  for (int i = 0; i < 3 && t->slowest_s[i] > 0; i++)
    printf(" %llu (%.2f s)", (unsigned long long)t->slowest_k[i], t->slowest_s[i]);
  printf("\nFAILURES: %llu\n", (unsigned long long)t->failures);
}

/* ---- one mutant ---- */

static void tally_result(struct tally *t, uint64_t *by, uint64_t *errs, const struct run_result *r) {
  by[r->outcome]++;
  if ((r->outcome == RUN_JOB_ERROR || r->outcome == RUN_TIMEOUT) && r->err < LOOM_ERR_COUNT) errs[r->err]++;
  if (r->recovery == 0) t->no_recovery++;
}

static void note_time(struct tally *t, uint64_t k, double s) {
  for (int i = 0; i < 3; i++) {
    if (s <= t->slowest_s[i]) continue;
    for (int j = 2; j > i; j--) t->slowest_s[j] = t->slowest_s[j - 1], t->slowest_k[j] = t->slowest_k[j - 1];
    t->slowest_s[i] = s, t->slowest_k[i] = k;
    return;
  }
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int run_mutant(struct base *bases, int nb, const struct opts *o, uint64_t k, struct tally *t) {
  struct base *b = &bases[k % (uint64_t)nb];
  struct mutant mu;
  char kinds[64], msg[LOOM_MSG_MAX] = "";
  double t0 = now_s();
  if (o->as_is) {
    mu = (struct mutant){.bytes = malloc(b->size), .size = b->size, .n_kinds = 0};
    memcpy(mu.bytes, b->bytes, b->size);
    snprintf(mu.what, sizeof mu.what, "as is");
  } else if (hostile_mutate(b->bytes, b->size, o->seed, k, &mu) != 0) {
    return 0;
  }
  kinds_text(&mu, kinds, sizeof kinds);
  t->mutants++;
  struct loom_file f;
  struct run_result r[2];
  int n = 0, failed = 0;
  enum cmp c = CMP_NONE;
  if (loom_file_parse(mu.bytes, mu.size, "mutant.loom", &f, msg) != LOOM_OK) {
    t->parse_rejected++;
    r[0] = (struct run_result){.outcome = RUN_REJECTED, .status = LOOM_E_FORMAT, .recovery = -1};
    snprintf(r[0].msg, sizeof r[0].msg, "%s", msg);
    if (mu.n_kinds) t->by_kind[mu.kinds[0]][RUN_REJECTED]++;
    if (strncmp(msg, "mutant.loom:", 12)) t->bad_message++, failed = 1;
  } else {
    loom_file_free(&f);
    struct run_env e[2];
    env_for(&e[n++], b->fsim, b, o->as_is ? 0 : b->fsim_hash, 0);
    if (b->tsim) env_for(&e[n++], b->tsim, b, o->as_is ? 0 : b->tsim_hash, 1);
    if (o->replay >= 0) e[0].dump = "fsim", e[n - 1].dump = n == 2 ? "tsim" : "fsim";
    hostile_run(e, n, mu.bytes, mu.size, r);
    tally_result(t, t->fsim, t->fsim_err, &r[0]);
    if (mu.n_kinds) t->by_kind[mu.kinds[0]][r[0].outcome]++;
    failed |= is_failure(&r[0]);
    if (n == 2) {
      tally_result(t, t->tsim, t->tsim_err, &r[1]);
      failed |= is_failure(&r[1]);
      struct run_env alt[2], fill;
      env_for(&alt[0], b->tsim_alt, b, 0, 1);
      env_for(&alt[1], b->tsim_fast, b, 0, 1);
      env_for(&fill, b->fsim_fill, b, 0, 0);
      c = compare(&e[0], &fill, alt, mu.bytes, mu.size, &r[0], &r[1]);
      t->cmp[c]++;
      failed |= c == CMP_DISAGREE || c == CMP_OUTPUTS;
    }
  }
  if (failed) t->failures++;
  double secs = now_s() - t0;
  note_time(t, k, secs);
  if (o->verbose || o->replay >= 0 || (failed && t->failures <= MAX_FAILURES_SHOWN)) {
    printf("%s mutant %llu (base %s, %s, %.2f s): %s\n", failed ? "FAIL" : "    ", (unsigned long long)k,
           b->name, kinds, secs, mu.what);
    describe("fsim", &r[0]);
    if (n == 2) describe("tsim", &r[1]);
    if (n == 2) printf("    compare: %s\n", cmp_names[c]);
    if (failed) {
      printf("    replay: %s --seed %llu --replay %llu", o->argv0, (unsigned long long)o->seed,
             (unsigned long long)k);
      for (int i = 0; i < nb; i++) printf(" %s", bases[i].name);
      printf("\n");
    }
  }
  if (failed || o->replay >= 0) keep(o, k, &mu);
  free(mu.bytes);
  return failed;
}

/* ---- main ---- */

/* Devices are shared by the bases of one configuration: close each once. */
static void close_devices(struct base *bases, int nb) {
  for (int i = 0; i < nb; i++) {
    for (int j = i + 1; j < nb; j++) {
      if (bases[j].fsim == bases[i].fsim) bases[j].fsim = NULL;
      if (bases[j].tsim == bases[i].tsim) bases[j].tsim = NULL;
      if (bases[j].tsim_alt == bases[i].tsim_alt) bases[j].tsim_alt = NULL;
      if (bases[j].tsim_fast == bases[i].tsim_fast) bases[j].tsim_fast = NULL;
      if (bases[j].fsim_fill == bases[i].fsim_fill) bases[j].fsim_fill = NULL;
    }
    loom_device_close(bases[i].fsim);
    if (bases[i].fsim_fill) loom_device_close(bases[i].fsim_fill);
    if (bases[i].tsim) loom_device_close(bases[i].tsim);
    if (bases[i].tsim_alt) loom_device_close(bases[i].tsim_alt);
    if (bases[i].tsim_fast) loom_device_close(bases[i].tsim_fast);
    free(bases[i].bytes);
  }
}

static int parse_args(int argc, char **argv, struct opts *o, int *first_base) {
  *o = (struct opts){.seed = 1, .replay = -1, .tsim = "auto", .argv0 = argv[0]};
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--verbose")) { o->verbose = 1; continue; }
    if (!strcmp(a, "--as-is")) { o->as_is = 1; continue; }
    if (!v) return fprintf(stderr, "hostile: %s needs a value\n", a), -1;
    i++;
    if (!strcmp(a, "--seconds")) o->seconds = atof(v);
    else if (!strcmp(a, "--count")) o->count = strtoull(v, NULL, 0);
    else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 0);
    else if (!strcmp(a, "--first")) o->first = strtoull(v, NULL, 0);
    else if (!strcmp(a, "--replay")) o->replay = atol(v);
    else if (!strcmp(a, "--tsim")) o->tsim = v;
    else if (!strcmp(a, "--keep")) o->keep = v;
    else return fprintf(stderr, "hostile: unknown option %s\n", a), -1;
  }
  if (!o->seconds && !o->count) o->count = 200;
  *first_base = i;
  return i < argc ? 0 : (fprintf(stderr, "usage: hostile [options] BASE.s|BASE.loom...\n"), -1);
}

static double elapsed(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

int main(int argc, char **argv) {
  struct opts o;
  int fb, nb = 0;
  static struct base bases[MAX_BASES];
  static struct tally t;
  char msg[LOOM_MSG_MAX];
  if (parse_args(argc, argv, &o, &fb)) return 2;
  for (int i = fb; i < argc && nb < MAX_BASES; i++) {
    if (load_base(argv[i], &bases[nb], msg)) return fprintf(stderr, "hostile: %s\n", msg), 2;
    nb++;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (prepare_bases(bases, nb, &o)) return 2;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (o.replay >= 0) {
    int failed = run_mutant(bases, nb, &o, (uint64_t)o.replay, &t);
    close_devices(bases, nb);
    return failed;
  }
  if (o.as_is) o.first = 0, o.count = (uint64_t)nb, o.seconds = 0;
  uint64_t k = o.first;
  double next_report = 30;
  for (; (!o.count || k < o.first + o.count) && (!o.seconds || elapsed(&t0) < o.seconds); k++) {
    run_mutant(bases, nb, &o, k, &t);
    if (elapsed(&t0) >= next_report) {
      printf("hostile: %llu mutants, %llu failures, %.0f s\n", (unsigned long long)t.mutants,
             (unsigned long long)t.failures, elapsed(&t0));
      next_report += 30;
    }
  }
  printf("\nseed %llu, mutants %llu..%llu, %.1f s\n", (unsigned long long)o.seed,
         (unsigned long long)o.first, (unsigned long long)k - 1, elapsed(&t0));
  print_tables(&t, bases[0].tsim != NULL);
  close_devices(bases, nb);
  return t.failures ? 1 : 0;
}
