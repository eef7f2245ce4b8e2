/*
 * backend_tsim.c - the "tsim" backend: jobs run on the Verilated RTL
 * (build/tsim/<config>/libloom_tsim.so, sim/tsim/tsim.h) with its DRAM model.
 *
 * The simulator is a shared library loaded at open() time, so libloom needs
 * neither Verilator nor C++ to build, and one process can open several
 * configurations.  The library is found, in this order (docs/tsim.md):
 *
 *   1. the option lib=PATH;
 *   2. the environment variable LOOM_TSIM_LIB;
 *   3. <an ancestor of the running program's directory, up to three levels
 *      up>/tsim/<dir>/libloom_tsim.so (build/bin/loom and
 *      build/tests/diff/fsim_vs_tsim both find build/tsim/<dir>);
 *   4. $BUILD/tsim/<dir>/libloom_tsim.so when BUILD is set;
 *   5. build/tsim/<dir>/libloom_tsim.so under the current directory;
 * where <dir> is the configuration's name, or <config>-trace with trace=
 * (tracing is compiled only into that variant).  A configuration file
 * (config=FILE) has no build product: without lib= or LOOM_TSIM_LIB its
 * model comes from the model cache, built there on first use
 * (tsim_cache.c).
 * The first existing file wins; an explicit lib= or LOOM_TSIM_LIB is used
 * even if missing (so its error names it).
 *
 * The accelerator is programmed only through hwregs.c, with a register
 * transport that runs AXI-Lite transactions in the simulator, exactly as a
 * board backend does over mmap'd registers.  Buffers come from the
 * simulated DRAM through a first-fit allocator with 4 KiB alignment (a
 * segment base needs 64 bytes; pages keep buffers apart).  Each job
 * declares its segments and instruction stream to the DRAM model as the
 * allowed windows, so an RTL access outside them fails the job loudly.
 *
 * wait() runs the simulation in slices, waiting for interrupt_o (GIE/IER
 * are set by loom_hw_start), reports the job's cycles after each slice to
 * the progress hook (set_progress; the library prints nothing), and gives
 * up after the wall-clock timeout or max_cycles, naming the modules whose
 * busy/stall counters still move.  The reset after a timeout is job.c's
 * business (it calls reset(), which writes SOFT_RESET through hwregs.c).
 *
 * Timelines (set_trace/trace, docs/profiling.md): the library records, per
 * job, the slices of every module from the RTL's timeline probe; trace()
 * turns them into loom_trace_events, taking each instruction's opcode from
 * the stream the job ran.
 *
 * Options: config=NAME|FILE lib=PATH latency=CYCLES bw=BYTES_PER_CYCLE
 * outstanding=N dram_mb=MIB reorder=SEED trace=FILE.fst max_cycles=N
 * axi_log=FILE.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwregs.h"
#include "loom/isa.h"
#include "runtime.h"
#include "sim/tsim/tsim.h"
#include "tsim_cache.h"

#define TSIM_ALIGN 4096u
#define TSIM_SLICE_CYCLES 65536u        /* simulated between wall-clock checks */
#define TSIM_DEFAULT_TIMEOUT_MS 600000u /* when the caller passes 0 */
#define TSIM_PATH_MAX 1024

/* The library's functions, looked up by name (tsim.h). */
struct tsim_fns {
  uint32_t (*api_version)(void);
  const char *(*config_name)(void);
  void (*options_default)(struct tsim_options *);
  struct tsim *(*create)(const struct tsim_options *, char *, size_t);
  void (*destroy)(struct tsim *);
  int (*reg_read)(struct tsim *, uint32_t, uint32_t *);
  int (*reg_write)(struct tsim *, uint32_t, uint32_t);
  void (*step)(struct tsim *, uint64_t);
  int (*wait_interrupt)(struct tsim *, uint64_t);
  uint64_t (*cycles)(const struct tsim *);
  void (*hard_reset)(struct tsim *);
  uint8_t *(*dram)(struct tsim *, uint64_t *);
  uint64_t (*dram_base)(const struct tsim *);
  void (*window_clear)(struct tsim *);
  int (*window_add)(struct tsim *, uint64_t, uint64_t);
  uint64_t (*violations)(const struct tsim *, char *, size_t);
  void (*violations_clear)(struct tsim *);
  int (*timeline_record)(struct tsim *, int);
  const struct tsim_slice *(*timeline)(struct tsim *, size_t *);
};

/* One block of simulated DRAM, free or in use; blocks tile the DRAM. */
struct tsim_block {
  uint64_t off, size;
  int used;
};

struct tsim_state {
  void *dl;
  struct tsim_fns f;
  struct tsim *sim;
  struct loom_hw_config cfg;
  struct loom_reg_io io;
  uint8_t *dram;
  uint64_t dram_base, dram_size;
  struct tsim_block *blocks;
  size_t nblocks, cap;
  uint64_t max_cycles;
  int job_running;
  uint64_t job_start_cycle;
  struct timespec job_start;
  void (*progress)(void *ctx, uint64_t done); /* set_progress: cycles of the job */
  void *progress_ctx;
  const uint8_t *job_insns;       /* host view of the last job's stream */
  uint32_t job_insn_count;
  struct loom_trace_event *events; /* trace(): the last job's timeline */
  size_t events_cap;
};

static const char *const tsim_option_keys[] = {
    "config", "lib", "latency", "bw", "outstanding", "dram_mb", "reorder", "trace",
    "max_cycles", "axi_log", NULL};

/* ---- register transport ---- */

static uint32_t io_read(void *ctx, uint32_t off) {
  struct tsim_state *s = ctx;
  uint32_t v;
  s->f.reg_read(s->sim, off, &v);
  return v;
}

static void io_write(void *ctx, uint32_t off, uint32_t v) {
  struct tsim_state *s = ctx;
  s->f.reg_write(s->sim, off, v);
}

static void io_idle(void *ctx, uint32_t cycles) {
  struct tsim_state *s = ctx;
  s->f.step(s->sim, cycles);
}

/* ---- finding and loading the library ---- */

static int readable(const char *path) { return path[0] && access(path, R_OK) == 0; }

/* <directory of the running program>/<up>tsim/<config>/libloom_tsim.so. */
static int beside_program(const char *up, const char *config, char *out, size_t n) {
  char dir[TSIM_PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", dir, sizeof dir - 1);
  if (len <= 0) return 0;
  dir[len] = '\0';
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  return snprintf(out, n, "%s/%stsim/%s/libloom_tsim.so", dir, up, config) > 0;
}

/* Candidate `i` of the search order into `out`; 0 when it does not apply. */
static int candidate(int i, const char *options, const char *dir, char *out, size_t n) {
  const char *env;
  out[0] = '\0';
  switch (i) {
  case 0: return loom_option_get(options, "lib", out, n);
  case 1: return (env = getenv("LOOM_TSIM_LIB")) && snprintf(out, n, "%s", env) > 0;
  case 2: return beside_program("../", dir, out, n);
  case 3: return beside_program("../../", dir, out, n);
  case 4: return beside_program("../../../", dir, out, n);
  case 5:
    return (env = getenv("BUILD")) && env[0] &&
           snprintf(out, n, "%s/tsim/%s/libloom_tsim.so", env, dir) > 0;
  case 6: return snprintf(out, n, "build/tsim/%s/libloom_tsim.so", dir) > 0;
  default: return 0;
  }
}

static loom_status find_library(const char *options, const char *config, char *path, size_t n,
                                char msg[LOOM_MSG_MAX]) {
  char tried[LOOM_MSG_MAX - 160] = "", dir[80], trace[8];
  int traced = loom_option_get(options, "trace", trace, sizeof trace);
  size_t len = 0;
  snprintf(dir, sizeof dir, "%s%s", config, traced ? "-trace" : "");
  for (int i = 0; i < 7; i++) {
    if (!candidate(i, options, dir, path, n)) continue;
    if (readable(path) || i < 2) return LOOM_OK; /* an explicit path is used as given */
    len += (size_t)snprintf(tried + len, len < sizeof tried ? sizeof tried - len : 0, "%s%s",
                            len ? ", " : "", path);
  }
  return loom_fail(msg, LOOM_E_UNSUPPORTED,
                   "tsim: no simulator library for config '%s' (tried %s); build it with "
                   "`make %s CONFIG=%s`",
                   config, tried, traced ? "tsim-trace" : "tsim", config);
}

#define TSIM_SYM(field, name)                                   \
  do {                                                          \
    *(void **)(&s->f.field) = dlsym(s->dl, name);               \
    if (!s->f.field) {                                          \
      missing = name;                                           \
      goto fail;                                                \
    }                                                           \
  } while (0)

static loom_status bind_symbols(struct tsim_state *s, const char *path, char msg[LOOM_MSG_MAX]) {
  const char *missing;
  TSIM_SYM(api_version, "tsim_api_version");
  TSIM_SYM(config_name, "tsim_config_name");
  TSIM_SYM(options_default, "tsim_options_default");
  TSIM_SYM(create, "tsim_create");
  TSIM_SYM(destroy, "tsim_destroy");
  TSIM_SYM(reg_read, "tsim_reg_read");
  TSIM_SYM(reg_write, "tsim_reg_write");
  TSIM_SYM(step, "tsim_step");
  TSIM_SYM(wait_interrupt, "tsim_wait_interrupt");
  TSIM_SYM(cycles, "tsim_cycles");
  TSIM_SYM(hard_reset, "tsim_hard_reset");
  TSIM_SYM(dram, "tsim_dram");
  TSIM_SYM(dram_base, "tsim_dram_base");
  TSIM_SYM(window_clear, "tsim_window_clear");
  TSIM_SYM(window_add, "tsim_window_add");
  TSIM_SYM(violations, "tsim_violations");
  TSIM_SYM(violations_clear, "tsim_violations_clear");
  TSIM_SYM(timeline_record, "tsim_timeline_record");
  TSIM_SYM(timeline, "tsim_timeline");
  if (s->f.api_version() != TSIM_API_VERSION)
    return loom_fail(msg, LOOM_E_UNSUPPORTED,
                     "tsim: %s speaks tsim API version %u, libloom %u; rebuild it with `make tsim`",
                     path, s->f.api_version(), TSIM_API_VERSION);
  return LOOM_OK;
fail:
  return loom_fail(msg, LOOM_E_UNSUPPORTED, "tsim: %s lacks the function %s; rebuild it", path,
                   missing);
}

/* A named configuration's model is a build product (find_library); a
 * configuration file's comes from the model cache (tsim_cache.c) unless
 * lib= or LOOM_TSIM_LIB names one. */
static int is_named(const struct loom_hw_config *c) {
  const struct loom_hw_config *named = loom_hw_config_by_name(c->name);
  return named && named->hash == c->hash;
}

static loom_status model_path(const char *options, const struct loom_hw_config *c, char *path,
                              size_t n, char msg[LOOM_MSG_MAX]) {
  char trace[8];
  if (is_named(c)) return find_library(options, c->name, path, n, msg);
  if (candidate(0, options, "", path, n) || candidate(1, options, "", path, n)) return LOOM_OK;
  return loom_tsim_cached_model(c, loom_option_get(options, "trace", trace, sizeof trace), path, n,
                                msg);
}

/* The library simulates `c`: by name for a named configuration (its
 * library says the name it was built for), by hash for a file's. */
static loom_status check_model(struct tsim_state *s, const char *path, const struct loom_hw_config *c,
                               char msg[LOOM_MSG_MAX]) {
  uint32_t (*hash)(void) = NULL;
  *(void **)(&hash) = dlsym(s->dl, "tsim_config_hash");
  if (is_named(c) ? strcmp(s->f.config_name(), c->name) != 0 : !hash || hash() != c->hash)
    return loom_fail(msg, LOOM_E_CONFIG, "tsim: %s simulates config '%s' (0x%08X), not '%s' (0x%08X)",
                     path, s->f.config_name(), hash ? hash() : 0u, c->name, c->hash);
  return LOOM_OK;
}

static loom_status load_library(struct tsim_state *s, const char *options,
                                const struct loom_hw_config *c, char msg[LOOM_MSG_MAX]) {
  char path[TSIM_PATH_MAX];
  loom_status st = model_path(options, c, path, sizeof path, msg);
  if (st != LOOM_OK) return st;
  s->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!s->dl)
    return loom_fail(msg, LOOM_E_UNSUPPORTED, "tsim: cannot load %s: %s; build it with `make tsim CONFIG=%s`",
                     path, dlerror(), c->name);
  st = bind_symbols(s, path, msg);
  return st == LOOM_OK ? check_model(s, path, c, msg) : st;
}

/* ---- options ---- */

/* Unsigned option `key` into *out (unchanged when absent). */
static loom_status num_option(const char *options, const char *key, uint64_t max, uint64_t *out,
                              char msg[LOOM_MSG_MAX]) {
  char buf[32], *end;
  if (!loom_option_get(options, key, buf, sizeof buf)) return LOOM_OK;
  unsigned long long v = strtoull(buf, &end, 0);
  if (!buf[0] || *end || buf[0] == '-' || v > max)
    return loom_fail(msg, LOOM_E_INVALID, "tsim: option %s=%s: expected an integer 0..%llu", key,
                     buf, (unsigned long long)max);
  *out = v;
  return LOOM_OK;
}

static loom_status sim_options(struct tsim_state *s, const char *options, struct tsim_options *o,
                               char paths[2][TSIM_PATH_MAX], char msg[LOOM_MSG_MAX]) {
  uint64_t lat, bw, outst, mb, seed = 0, maxc = 0;
  s->f.options_default(o);
  lat = o->dram_latency, bw = o->dram_bytes_per_cycle, outst = o->dram_outstanding;
  mb = o->dram_size >> 20;
  loom_status st;
  if ((st = num_option(options, "latency", 100000, &lat, msg)) != LOOM_OK ||
      (st = num_option(options, "bw", 4096, &bw, msg)) != LOOM_OK ||
      (st = num_option(options, "outstanding", 64, &outst, msg)) != LOOM_OK ||
      (st = num_option(options, "dram_mb", 65536, &mb, msg)) != LOOM_OK ||
      (st = num_option(options, "reorder", UINT64_MAX, &seed, msg)) != LOOM_OK ||
      (st = num_option(options, "max_cycles", UINT64_MAX, &maxc, msg)) != LOOM_OK)
    return st;
  if (!lat || !bw || !outst || !mb)
    return loom_fail(msg, LOOM_E_INVALID, "tsim: latency, bw, outstanding and dram_mb must be > 0");
  o->dram_latency = (uint32_t)lat, o->dram_bytes_per_cycle = (uint32_t)bw;
  o->dram_outstanding = (uint32_t)outst, o->dram_size = mb << 20;
  o->dram_reorder = seed != 0, o->dram_seed = seed;
  if (loom_option_get(options, "trace", paths[0], TSIM_PATH_MAX)) o->trace_path = paths[0];
  if (loom_option_get(options, "axi_log", paths[1], TSIM_PATH_MAX)) o->axi_log_path = paths[1];
  s->max_cycles = maxc;
  return LOOM_OK;
}

/* ---- open / close ---- */

static loom_status blocks_init(struct tsim_state *s) {
  s->cap = 64;
  s->blocks = calloc(s->cap, sizeof *s->blocks);
  if (!s->blocks) return LOOM_E_NOMEM;
  s->blocks[0] = (struct tsim_block){0, s->dram_size, 0};
  s->nblocks = 1;
  return LOOM_OK;
}

static void tsim_close(void *state) {
  struct tsim_state *s = state;
  if (s->sim) s->f.destroy(s->sim);
  if (s->dl) dlclose(s->dl);
  free(s->blocks);
  free(s->events);
  free(s);
}

static loom_status start_sim(struct tsim_state *s, const char *options, char msg[LOOM_MSG_MAX]) {
  struct tsim_options o;
  char paths[2][TSIM_PATH_MAX], why[LOOM_MSG_MAX];
  loom_status st = sim_options(s, options, &o, paths, msg);
  if (st != LOOM_OK) return st;
  s->sim = s->f.create(&o, why, sizeof why);
  if (!s->sim) return loom_fail(msg, LOOM_E_IO, "%s", why);
  s->io = (struct loom_reg_io){.ctx = s, .read = io_read, .write = io_write, .idle = io_idle};
  s->dram = s->f.dram(s->sim, &s->dram_size);
  s->dram_base = s->f.dram_base(s->sim);
  if (blocks_init(s) != LOOM_OK) return loom_fail(msg, LOOM_E_NOMEM, "tsim: out of memory");
  return loom_hw_probe(&s->io, s->cfg.hash, NULL, msg);
}

static loom_status tsim_open(const char *options, void **state, const struct loom_hw_config **cfg,
                             char msg[LOOM_MSG_MAX]) {
  struct loom_hw_config c;
  loom_status st = loom_option_check(options, tsim_option_keys, "tsim", msg);
  if (st == LOOM_OK) st = loom_backend_config("tsim", options, &c, msg);
  if (st != LOOM_OK) return st;
  struct tsim_state *s = calloc(1, sizeof *s);
  if (!s) return loom_fail(msg, LOOM_E_NOMEM, "tsim: out of memory");
  s->cfg = c;
  st = load_library(s, options, &s->cfg, msg);
  if (st == LOOM_OK) st = start_sim(s, options, msg);
  if (st != LOOM_OK) {
    tsim_close(s);
    return st;
  }
  *state = s;
  *cfg = &s->cfg;
  return LOOM_OK;
}

/* ---- DRAM allocator: first fit over blocks that tile the DRAM ---- */

static int blocks_insert(struct tsim_state *s, size_t at, struct tsim_block b) {
  if (s->nblocks == s->cap) {
    struct tsim_block *nb = realloc(s->blocks, 2 * s->cap * sizeof *nb);
    if (!nb) return -1;
    s->blocks = nb, s->cap *= 2;
  }
  memmove(&s->blocks[at + 1], &s->blocks[at], (s->nblocks - at) * sizeof *s->blocks);
  s->blocks[at] = b;
  s->nblocks++;
  return 0;
}

static void blocks_remove(struct tsim_state *s, size_t at) {
  memmove(&s->blocks[at], &s->blocks[at + 1], (s->nblocks - at - 1) * sizeof *s->blocks);
  s->nblocks--;
}

static loom_status tsim_alloc(void *state, size_t bytes, struct loom_backend_buffer *buf,
                              char msg[LOOM_MSG_MAX]) {
  struct tsim_state *s = state;
  uint64_t need = ((uint64_t)bytes + TSIM_ALIGN - 1) & ~(uint64_t)(TSIM_ALIGN - 1);
  if (need == 0) need = TSIM_ALIGN;
  for (size_t i = 0; i < s->nblocks; i++) {
    struct tsim_block *b = &s->blocks[i];
    if (b->used || b->size < need) continue;
    if (b->size > need &&
        blocks_insert(s, i + 1, (struct tsim_block){b->off + need, b->size - need, 0}) != 0)
      break;
    b = &s->blocks[i];
    b->size = need, b->used = 1;
    memset(s->dram + b->off, 0, need);
    *buf = (struct loom_backend_buffer){s->dram + b->off, s->dram_base + b->off, bytes, NULL};
    return LOOM_OK;
  }
  return loom_fail(msg, LOOM_E_NOMEM,
                   "tsim: out of simulated DRAM allocating %zu bytes (DRAM is %llu MiB; "
                   "option dram_mb= raises it)",
                   bytes, (unsigned long long)(s->dram_size >> 20));
}

static void tsim_free(void *state, struct loom_backend_buffer *buf) {
  struct tsim_state *s = state;
  uint64_t off = buf->dev_addr - s->dram_base;
  size_t i = 0;
  while (i < s->nblocks && s->blocks[i].off != off) i++;
  LOOM_ASSERT(i < s->nblocks && s->blocks[i].used);
  s->blocks[i].used = 0;
  if (i + 1 < s->nblocks && !s->blocks[i + 1].used) {
    s->blocks[i].size += s->blocks[i + 1].size;
    blocks_remove(s, i + 1);
  }
  if (i > 0 && !s->blocks[i - 1].used) {
    s->blocks[i - 1].size += s->blocks[i].size;
    blocks_remove(s, i);
  }
  buf->host = NULL;
}

/* ---- jobs ---- */

static loom_status tsim_submit(void *state, const struct loom_backend_buffer *insns,
                               uint32_t insn_count,
                               const struct loom_backend_buffer *const segments[8],
                               char msg[LOOM_MSG_MAX]) {
  struct tsim_state *s = state;
  struct loom_hw_segment seg[LOOM_NUM_SEGMENTS] = {{0, 0}};
  s->f.window_clear(s->sim);
  s->f.violations_clear(s->sim);
  s->f.window_add(s->sim, insns->dev_addr, (uint64_t)insn_count * 16u);
  for (int i = 0; i < LOOM_NUM_SEGMENTS; i++) {
    if (!segments[i] || !segments[i]->size) continue;
    seg[i] = (struct loom_hw_segment){segments[i]->dev_addr, segments[i]->size};
    s->f.window_add(s->sim, seg[i].base, seg[i].size);
  }
  loom_status st = loom_hw_start(&s->io, insns->dev_addr, insn_count, seg, 1, msg);
  if (st != LOOM_OK) return st;
  s->job_running = 1;
  s->job_insns = insns->host;
  s->job_insn_count = insn_count;
  s->job_start_cycle = s->f.cycles(s->sim);
  clock_gettime(CLOCK_MONOTONIC, &s->job_start);
  return LOOM_OK;
}

static double seconds_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* "load busy (DRAM stall)" etc. from how the per-module counters moved over
 * a short window: which module is still working, and on what. */
static void describe_busy(struct tsim_state *s, char *out, size_t n) {
  static const char *const names[3] = {"load", "compute", "store"};
  uint64_t a[10], b[10];
  for (uint32_t c = 1; c < 10; c++) a[c] = io_read(s, LOOM_REG_COUNTER_BASE + 8 * c);
  s->f.step(s->sim, 1024);
  for (uint32_t c = 1; c < 10; c++) b[c] = io_read(s, LOOM_REG_COUNTER_BASE + 8 * c);
  size_t len = 0;
  for (int m = 0; m < 3 && len < n; m++) {
    uint32_t busy = (uint32_t)(b[1 + 3 * m] - a[1 + 3 * m]);
    uint32_t tok = (uint32_t)(b[2 + 3 * m] - a[2 + 3 * m]);
    uint32_t mem = (uint32_t)(b[3 + 3 * m] - a[3 + 3 * m]);
    const char *what = tok ? "waiting for a token" : mem ? "waiting for DRAM" : busy ? "busy" : "idle";
    len += (size_t)snprintf(out + len, n - len, "%s%s %s", m ? ", " : "", names[m], what);
  }
  if (!strstr(out, "busy") && !strstr(out, "waiting") && len < n)
    snprintf(out + len, n - len, " (no module counter moves: fetch or control is stuck)");
}

static loom_status timed_out(struct tsim_state *s, uint64_t cycles, double secs,
                             char msg[LOOM_MSG_MAX]) {
  char busy[256] = "";
  describe_busy(s, busy, sizeof busy);
  return loom_fail(msg, LOOM_E_TIMEOUT, "tsim: still running after %llu cycles (%.1f s): %s",
                   (unsigned long long)cycles, secs, busy);
}

/* After done: results, then anything the DRAM model objected to. */
static loom_status finish_job(struct tsim_state *s, struct loom_job_result *res,
                              char msg[LOOM_MSG_MAX]) {
  char first[LOOM_MSG_MAX - 64];
  loom_hw_collect(&s->io, res);
  uint64_t v = s->f.violations(s->sim, first, sizeof first);
  if (v == 0) return LOOM_OK;
  return loom_fail(msg, LOOM_E_IO, "tsim: %llu bus violation%s, first: %s", (unsigned long long)v,
                   v == 1 ? "" : "s", first);
}

static loom_status tsim_wait(void *state, uint32_t timeout_ms, struct loom_job_result *res,
                             char msg[LOOM_MSG_MAX]) {
  struct tsim_state *s = state;
  if (!s->job_running) return loom_fail(msg, LOOM_E_INVALID, "tsim: no job submitted");
  double limit = (timeout_ms ? timeout_ms : TSIM_DEFAULT_TIMEOUT_MS) / 1000.0;
  for (;;) {
    uint64_t ran = s->f.cycles(s->sim) - s->job_start_cycle;
    double secs = seconds_since(&s->job_start);
    if (secs > limit || (s->max_cycles && ran >= s->max_cycles)) {
      s->job_running = 0;
      return timed_out(s, ran, secs, msg);
    }
    uint64_t slice = TSIM_SLICE_CYCLES;
    if (s->max_cycles && s->max_cycles - ran < slice) slice = s->max_cycles - ran;
    if (s->f.wait_interrupt(s->sim, slice)) break;
    if (s->progress) s->progress(s->progress_ctx, ran + slice);
  }
  s->job_running = 0;
  if (!loom_hw_poll_done(&s->io, 1, 0))
    return loom_fail(msg, LOOM_E_IO, "tsim: interrupt_o is high but ISR.DONE reads 0");
  return finish_job(s, res, msg);
}

/* SOFT_RESET through hwregs.c; if the RTL does not come back to idle, the
 * failure is reported and rst_ni is pulsed so the next job still runs. */
static loom_status tsim_reset(void *state, char msg[LOOM_MSG_MAX]) {
  struct tsim_state *s = state;
  s->job_running = 0;
  loom_status st = loom_hw_reset(&s->io, msg);
  if (st != LOOM_OK) {
    s->f.hard_reset(s->sim);
    return loom_fail(msg, LOOM_E_IO, "tsim: SOFT_RESET did not return the accelerator to idle; "
                                     "pulsed rst_ni instead");
  }
  return LOOM_OK;
}

/* ---- timelines ---- */

static void tsim_set_progress(void *state, void (*fn)(void *ctx, uint64_t done), void *ctx) {
  struct tsim_state *s = state;
  s->progress = fn, s->progress_ctx = ctx;
}

static loom_status tsim_set_trace(void *state, int on, char msg[LOOM_MSG_MAX]) {
  struct tsim_state *s = state;
  if (s->f.timeline_record(s->sim, on) != 0)
    return loom_fail(msg, LOOM_E_UNSUPPORTED,
                     "tsim: this simulator library's RTL has no timeline probe (the register-only "
                     "stub?); rebuild it from hw/rtl with `make tsim`");
  return LOOM_OK;
}

/* The slices of the last job as loom_trace_events (the module numbering and
 * the kinds of tsim.h are those of loom.h), with each opcode read from the
 * job's stream. */
static const struct loom_trace_event *tsim_trace(void *state, size_t *count) {
  struct tsim_state *s = state;
  size_t n;
  const struct tsim_slice *sl = s->f.timeline(s->sim, &n);
  *count = 0;
  if (n > s->events_cap) {
    struct loom_trace_event *e = realloc(s->events, n * sizeof *e);
    if (!e) return NULL;
    s->events = e, s->events_cap = n;
  }
  for (size_t i = 0; i < n; i++) {
    uint32_t op = LOOM_OP_COUNT;
    if (s->job_insns && sl[i].insn < s->job_insn_count)
      op = (uint32_t)loom_bits_get(s->job_insns + (size_t)sl[i].insn * LOOM_INSN_BYTES,
                                   LOOM_COMMON_OPCODE_LSB, LOOM_COMMON_OPCODE_WIDTH);
    s->events[i] = (struct loom_trace_event){sl[i].begin, sl[i].end, sl[i].insn, sl[i].module,
                                             sl[i].kind, (uint16_t)op};
  }
  *count = n;
  return s->events;
}

_Static_assert(LOOM_MOD_FETCH == 0 && LOOM_MOD_STORE == 3, "tsim.h numbers modules as loom.h");
_Static_assert((int)LOOM_TRACE_INSN == (int)TSIM_SLICE_INSN &&
                   (int)LOOM_TRACE_TOKEN_WAIT == (int)TSIM_SLICE_TOKEN_WAIT &&
                   (int)LOOM_TRACE_MEM_WAIT == (int)TSIM_SLICE_MEM_WAIT,
               "tsim.h numbers slice kinds as loom.h");

struct tsim *loom_tsim_instance(loom_device *dev, void **lib) {
  if (!dev || dev->ops != &loom_backend_tsim) return NULL;
  struct tsim_state *s = dev->state;
  if (lib) *lib = s->dl;
  return s->sim;
}

const struct loom_backend_ops loom_backend_tsim = {
    .name = "tsim",
    .open = tsim_open,
    .close = tsim_close,
    .alloc = tsim_alloc,
    .free = tsim_free,
    .sync = NULL,
    .submit = tsim_submit,
    .wait = tsim_wait,
    .reset = tsim_reset,
    .set_trace = tsim_set_trace,
    .trace = tsim_trace,
    .set_progress = tsim_set_progress,
};
