/*
 * randstream.c - constrained-random Loom jobs (see randstream.h for the
 * guarantees: legal, deterministic, deadlock-free).
 *
 * How the guarantees are kept:
 *
 *   Definedness.  Each of INP, WGT and ACC gets a random working window of
 *   rows that the stream initializes with LOADs before anything reads it,
 *   and every later access stays inside its window.  Micro-ops are always
 *   loaded (LOAD UOP) right before the GEMM/ALU that uses them, or reused
 *   only while the UOP rows still hold them.
 *
 *   Hazards.  For every SRAM row the generator remembers the stream index of
 *   its last cross-module writer and reader (INP/WGT: written by load, read
 *   by GEMM; OUT: written by compute, read by store).  Before emitting an
 *   instruction of module B that conflicts with instruction w of module A,
 *   need() makes B wait for a token pushed by A at or after w: if A's latest
 *   push is older than w, the push flag is set retroactively on A's last
 *   instruction; B then pops every outstanding token (NOPs pop the extra
 *   ones, the instruction itself the last).
 *
 *   Deadlock freedom.  Every pop matches a push earlier in the stream, and
 *   in stream order no queue holds more than token_queue_depth tokens:
 *   random extra pushes stop at depth - 1, and a retroactive push (at most
 *   one per queue at a time, popped at once) adds one.  With those two
 *   rules each instruction can complete as soon as every instruction before
 *   it has, so the whole stream completes under any timing.
 *
 * Inputs (LOAD sources) and outputs (STORE targets) are separate segments,
 * so there are no DRAM hazards.  The stream ends with STOREs of the whole
 * OUT window, NOPs that drain every token, FINISH, and sometimes a few
 * legal instructions after FINISH (which must never execute).
 */
#include "randstream.h"

#include <stdlib.h>
#include <string.h>

enum { TQ_L2C, TQ_C2L, TQ_C2S, TQ_S2C, TQ_COUNT };

/* Producer and consumer module of each token queue. */
static const int tq_from[TQ_COUNT] = {LOOM_Q_LOAD, LOOM_Q_COMPUTE, LOOM_Q_COMPUTE, LOOM_Q_STORE};
static const int tq_to[TQ_COUNT] = {LOOM_Q_COMPUTE, LOOM_Q_LOAD, LOOM_Q_STORE, LOOM_Q_COMPUTE};

enum rs_fault {
  FAULT_NONE,
  FAULT_RESERVED,      /* ILLEGAL: a reserved bit set */
  FAULT_BAD_BUFFER,    /* ILLEGAL: LOAD into buffer 5..7 */
  FAULT_BAD_TOKEN,     /* ILLEGAL: load-queue instruction with push_prev */
  FAULT_BAD_ALU,       /* ILLEGAL: ALU op 7 */
  FAULT_SEG_OVERFLOW,  /* SEGMENT: transfer past the segment's end */
  FAULT_SEG_UNMAPPED,  /* SEGMENT: unmapped segment */
  FAULT_SRAM_LOAD,     /* SRAM: LOAD past the buffer's end */
  FAULT_SRAM_GEMM,     /* SRAM: GEMM index past ACC */
  FAULT_NOFINISH,      /* NOFINISH: no FINISH at all */
  FAULT_COUNT
};

struct tokq {
  uint32_t pushed, popped; /* in stream order; popped counts a pending pop */
  int pending;             /* the consumer's next instruction pops */
  int32_t *push_at;        /* stream index of each push */
  uint32_t cap;
};

struct gen {
  const struct loom_hw_config *cfg;
  struct randstream_knobs k;
  uint64_t rng;
  int oom;
  struct loom_insn *in;
  uint32_t n, cap;
  struct randstream_seg seg[LOOM_NUM_SEGMENTS];
  uint64_t uop_used, uop_cap;     /* bytes of the micro-op segment */
  int inputs[LOOM_NUM_SEGMENTS], n_inputs, uop_seg;
  int outputs[LOOM_NUM_SEGMENTS], n_outputs;
  uint32_t win_lo[LOOM_BUF_COUNT], win_n[LOOM_BUF_COUNT];
  int32_t *last_write[LOOM_BUF_COUNT], *last_read[LOOM_BUF_COUNT];
  int32_t *uop_owner;             /* per UOP row: id of the LOAD UOP that wrote it */
  struct tokq q[TQ_COUNT];
  int32_t last_insn[LOOM_Q_COUNT];
  struct { int valid, wild; struct loom_insn insn; int32_t owner; } memo[2]; /* GEMM, ALU */
  int fault;                      /* enum rs_fault planted, FAULT_NONE before */
  int32_t fault_insn;
};

/* ---- random numbers (xorshift64*, seeded through splitmix64) ---- */

static uint64_t rnd64(struct gen *g) {
  g->rng ^= g->rng >> 12;
  g->rng ^= g->rng << 25;
  g->rng ^= g->rng >> 27;
  return g->rng * 0x2545F4914F6CDD1DULL;
}

static uint32_t rnd(struct gen *g, uint32_t n) { return n ? (uint32_t)(rnd64(g) % n) : 0; }
static uint32_t range(struct gen *g, uint32_t lo, uint32_t hi) { return lo + rnd(g, hi - lo + 1); }
static int chance(struct gen *g, uint32_t pct) { return rnd(g, 100) < pct; }

static uint64_t seed_mix(uint64_t s) {
  s += 0x9E3779B97F4A7C15ULL;
  s = (s ^ (s >> 30)) * 0xBF58476D1CE4E5B9ULL;
  s = (s ^ (s >> 27)) * 0x94D049BB133111EBULL;
  return (s ^ (s >> 31)) | 1;
}

/* A 32-bit value from a mix that reaches the interesting corners. */
static int32_t rnd_i32(struct gen *g) {
  switch (rnd(g, 6)) {
  case 0: return (int32_t)range(g, 0, 600) - 300;
  case 1: return (int32_t)(uint32_t)rnd64(g);
  case 2: return chance(g, 50) ? INT32_MAX - (int32_t)rnd(g, 4) : INT32_MIN + (int32_t)rnd(g, 4);
  case 3: return (int32_t)range(g, 0, 1u << 20) - (1 << 19);
  default: return (int32_t)range(g, 0, 256) - 128;
  }
}

/* ---- growing arrays ---- */

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return 0;
  uint32_t nc = *cap ? *cap : 64;
  while (nc < need) nc *= 2;
  void *np = realloc(*p, (size_t)nc * elem);
  if (!np) return -1;
  *p = np;
  *cap = nc;
  return 0;
}

/* ---- token machinery ---- */

static uint32_t *push_flag(struct loom_insn *in, int q) {
  return (q == TQ_L2C || q == TQ_C2S) ? &in->push_next : &in->push_prev;
}

static uint32_t *pop_flag(struct loom_insn *in, int q) {
  return (q == TQ_L2C || q == TQ_C2S) ? &in->pop_prev : &in->pop_next;
}

static void record_push(struct gen *g, int q, int32_t idx) {
  struct tokq *t = &g->q[q];
  if (grow((void **)&t->push_at, &t->cap, t->pushed + 1, sizeof *t->push_at)) {
    g->oom = 1;
    return;
  }
  *push_flag(&g->in[idx], q) = 1;
  t->push_at[t->pushed++] = idx;
}

/* Pops the consumer applies to instruction `in`: pending ones and, now and
 * then, an extra one of an outstanding token. */
static void apply_pops(struct gen *g, int module, struct loom_insn *in) {
  for (int q = 0; q < TQ_COUNT; q++) {
    struct tokq *t = &g->q[q];
    if (tq_to[q] != module) continue;
    if (t->pending) {
      *pop_flag(in, q) = 1;
      t->pending = 0;
    } else if (t->popped < t->pushed && chance(g, g->k.token_noise)) {
      *pop_flag(in, q) = 1;
      t->popped++;
    }
  }
}

/* Extra pushes on the instruction just emitted, keeping every queue at most
 * depth - 1 deep so a retroactive push still fits. */
static void noise_pushes(struct gen *g, int module, int32_t idx) {
  for (int q = 0; q < TQ_COUNT; q++) {
    struct tokq *t = &g->q[q];
    if (tq_from[q] != module || *push_flag(&g->in[idx], q)) continue;
    if (t->pushed - t->popped + 1 < (uint32_t)g->cfg->token_queue_depth &&
        chance(g, g->k.token_noise))
      record_push(g, q, idx);
  }
}

static int32_t emit(struct gen *g, struct loom_insn in) {
  int module = loom_insn_queue(&in);
  if (grow((void **)&g->in, &g->cap, g->n + 1, sizeof *g->in)) {
    g->oom = 1;
    return g->n ? (int32_t)g->n - 1 : 0;
  }
  apply_pops(g, module, &in);
  int32_t idx = (int32_t)g->n++;
  g->in[idx] = in;
  g->last_insn[module] = idx;
  noise_pushes(g, module, idx);
  return idx;
}

static int32_t emit_nop(struct gen *g, int module) {
  struct loom_insn in = {.opcode = LOOM_OP_NOP};
  in.nop.queue = (uint32_t)module;
  return emit(g, in);
}

/* The consumer of `q` must, from its next instruction on, run after the
 * producer's instruction `w` (a stream index; < 0: no constraint). */
static void need(struct gen *g, int q, int32_t w) {
  struct tokq *t = &g->q[q];
  if (w < 0 || (t->popped && t->push_at[t->popped - 1] >= w)) return;
  if (!t->pushed || t->push_at[t->pushed - 1] < w) record_push(g, q, g->last_insn[tq_from[q]]);
  while (t->popped < t->pushed && !g->oom) {
    if (t->pending) emit_nop(g, tq_to[q]);
    t->pending = 1;
    t->popped++;
  }
}

/* Pops every token still outstanding, so the job ends with empty queues. */
static void drain_tokens(struct gen *g) {
  for (int q = 0; q < TQ_COUNT; q++) {
    struct tokq *t = &g->q[q];
    if (t->pending) emit_nop(g, tq_to[q]);
    while (t->popped < t->pushed && !g->oom) {
      t->pending = 1;
      t->popped++;
      emit_nop(g, tq_to[q]);
    }
  }
}

/* ---- hazard bookkeeping ---- */

static int32_t max_last(const int32_t *arr, uint32_t lo, uint32_t n) {
  int32_t m = -1;
  for (uint32_t r = lo; r < lo + n; r++)
    if (arr[r] > m) m = arr[r];
  return m;
}

static void set_rows(int32_t *arr, uint32_t lo, uint32_t n, int32_t v) {
  for (uint32_t r = lo; r < lo + n; r++) arr[r] = v;
}

/* ---- segments ---- */

static int fill_input(struct gen *g, struct randstream_seg *s, uint64_t size) {
  s->size = size;
  s->data = malloc(size);
  if (!s->data) return -1;
  int small = chance(g, 40);
  for (uint64_t i = 0; i + 4 <= size; i += 4) {
    uint32_t v = small ? (uint32_t)rnd_i32(g) : (uint32_t)rnd64(g);
    memcpy(s->data + i, &v, 4);
  }
  for (uint64_t i = size & ~(uint64_t)3; i < size; i++) s->data[i] = (uint8_t)rnd64(g);
  return 0;
}

/* Random input, micro-op and output segments on shuffled indices. */
static int make_segments(struct gen *g) {
  int idx[LOOM_NUM_SEGMENTS];
  for (int i = 0; i < LOOM_NUM_SEGMENTS; i++) idx[i] = i;
  for (int i = LOOM_NUM_SEGMENTS - 1; i > 0; i--) {
    int j = (int)rnd(g, (uint32_t)i + 1), t = idx[i];
    idx[i] = idx[j], idx[j] = t;
  }
  uint32_t wgt_row = loom_hw_row_bytes(g->cfg, LOOM_BUF_WGT, 0);
  g->n_inputs = (int)range(g, 1, 3);
  g->n_outputs = (int)range(g, 1, 3);
  for (int i = 0; i < g->n_inputs; i++) {
    g->inputs[i] = idx[i];
    uint64_t size = range(g, 4096, 32768) + 32ull * wgt_row + rnd(g, 64);
    if (fill_input(g, &g->seg[idx[i]], size)) return -1;
  }
  g->uop_seg = idx[g->n_inputs];
  for (int i = 0; i < g->n_outputs; i++) {
    struct randstream_seg *s = &g->seg[idx[g->n_inputs + 1 + i]];
    g->outputs[i] = idx[g->n_inputs + 1 + i];
    s->output = 1;
    if (fill_input(g, s, range(g, 4096, 16384) + rnd(g, 64))) return -1;
  }
  return 0;
}

/* Appends `n` bytes to the micro-op segment; returns their offset or -1. */
static int64_t uop_append(struct gen *g, uint64_t n) {
  while (g->uop_used + n > g->uop_cap) {
    uint64_t nc = g->uop_cap ? 2 * g->uop_cap : 4096;
    uint8_t *p = realloc(g->seg[g->uop_seg].data, nc);
    if (!p) {
      g->oom = 1;
      return -1;
    }
    g->seg[g->uop_seg].data = p;
    g->uop_cap = nc;
  }
  int64_t off = (int64_t)g->uop_used;
  for (uint64_t i = 0; i < n; i++) g->seg[g->uop_seg].data[g->uop_used + i] = (uint8_t)rnd64(g);
  g->uop_used += n;
  return off;
}

/* ---- working windows ---- */

static int make_windows(struct gen *g) {
  static const int bufs[] = {LOOM_BUF_UOP, LOOM_BUF_WGT, LOOM_BUF_INP, LOOM_BUF_ACC};
  for (int i = 0; i < 4; i++) {
    int b = bufs[i];
    uint32_t rows = loom_hw_buffer_rows(g->cfg, b);
    uint32_t w = rows < g->k.max_window ? rows : g->k.max_window;
    g->win_n[b] = range(g, w < 16 ? w : 16, w);
    g->win_lo[b] = rnd(g, rows - g->win_n[b] + 1);
    g->last_write[b] = malloc(rows * sizeof(int32_t));
    g->last_read[b] = malloc(rows * sizeof(int32_t));
    if (!g->last_write[b] || !g->last_read[b]) return -1;
    for (uint32_t r = 0; r < rows; r++) g->last_write[b][r] = g->last_read[b][r] = -1;
  }
  uint32_t urows = loom_hw_buffer_rows(g->cfg, LOOM_BUF_UOP);
  g->uop_owner = malloc(urows * sizeof(int32_t));
  if (!g->uop_owner) return -1;
  for (uint32_t r = 0; r < urows; r++) g->uop_owner[r] = -1;
  return 0;
}

/* ---- LOAD and STORE ---- */

/* A 2-D shape of about `rows` SRAM rows (before padding): sizes and stride. */
static void pick_shape(struct gen *g, uint32_t rows, struct loom_insn_mem *m) {
  m->x_size = range(g, 1, rows);
  m->y_size = rows / m->x_size ? range(g, 1, rows / m->x_size) : 1;
  switch (rnd(g, 10)) {
  case 0: m->x_stride = rnd(g, m->x_size); break; /* rows overlap in DRAM, even repeat */
  case 1:
  case 2: m->x_stride = m->x_size + range(g, 1, 9); break;
  default: m->x_stride = m->x_size; break;
  }
}

/* Padding for INP/ACC loads, keeping H*W within `max_rows`. */
static void pick_pads(struct gen *g, struct loom_insn_mem *m, uint32_t max_rows) {
  if (!chance(g, 35)) return;
  m->y_pad_top = rnd(g, 3), m->y_pad_bottom = rnd(g, 3);
  m->x_pad_left = rnd(g, 3), m->x_pad_right = rnd(g, 3);
  if (chance(g, 10)) m->y_pad_top = 7, m->x_pad_right = 7;
  m->pad_value = (int32_t)rnd(g, 256) - 128;
  uint64_t h = m->y_pad_top + m->y_size + m->y_pad_bottom;
  uint64_t w = m->x_pad_left + m->x_size + m->x_pad_right;
  if (h * w > max_rows) m->y_pad_top = m->y_pad_bottom = m->x_pad_left = m->x_pad_right = 0;
}

static uint64_t span_rows(const struct loom_insn_mem *m) {
  return (uint64_t)(m->y_size - 1) * m->x_stride + m->x_size;
}

/* Places the transfer in segment `s`: shrinks it until it fits, then picks
 * an offset (now and then the last one that fits).  0, or -1 if no row fits. */
static int place_dram(struct gen *g, struct loom_insn_mem *m, int s, uint32_t row_bytes) {
  uint64_t seg_rows = g->seg[s].size / row_bytes;
  if (seg_rows == 0) return -1;
  while (span_rows(m) > seg_rows) {
    if (m->x_stride > m->x_size) m->x_stride = m->x_size;
    else if (m->y_size > 1) m->y_size /= 2;
    else m->x_size = (uint32_t)seg_rows;
  }
  uint64_t max_off = seg_rows - span_rows(m);
  m->segment = (uint32_t)s;
  m->dram_offset = (uint32_t)(chance(g, 15) ? max_off : rnd64(g) % (max_off + 1));
  return 0;
}

static uint32_t sram_rows(const struct loom_insn_mem *m) {
  return (m->y_pad_top + m->y_size + m->y_pad_bottom) * (m->x_pad_left + m->x_size + m->x_pad_right);
}

/* A LOAD of INP, WGT or ACC writing rows [lo, lo + n) when n > 0, or a
 * random transfer inside the buffer's window when n == 0. */
static void gen_load(struct gen *g, int buf, uint32_t lo, uint32_t n) {
  struct loom_insn in = {.opcode = LOOM_OP_LOAD};
  struct loom_insn_mem *m = &in.mem;
  m->buffer = (uint32_t)buf;
  m->src_int8 = buf == LOOM_BUF_ACC && chance(g, 30);
  uint32_t want = n ? n : range(g, 1, g->k.max_rows < g->win_n[buf] ? g->k.max_rows : g->win_n[buf]);
  if (n) m->y_size = 1, m->x_size = n, m->x_stride = n;
  else pick_shape(g, want, m);
  if (!n && buf != LOOM_BUF_WGT) pick_pads(g, m, g->win_n[buf]);
  if (chance(g, 20)) m->pad_value = (int32_t)rnd(g, 256) - 128; /* ignored without padding */
  int s = g->inputs[rnd(g, (uint32_t)g->n_inputs)];
  place_dram(g, m, s, loom_hw_row_bytes(g->cfg, buf, (int)m->src_int8));
  uint32_t rows = sram_rows(m);
  m->sram_base = n ? lo : g->win_lo[buf] + rnd(g, g->win_n[buf] - rows + 1);
  if (buf == LOOM_BUF_ACC) need(g, TQ_S2C, max_last(g->last_read[buf], m->sram_base, rows));
  else need(g, TQ_C2L, max_last(g->last_read[buf], m->sram_base, rows));
  int32_t idx = emit(g, in);
  set_rows(g->last_write[buf], m->sram_base, rows, idx);
}

/* A transfer with a zero size: a no-op that checks no bounds at all. */
static void gen_empty_transfer(struct gen *g) {
  static const int bufs[] = {LOOM_BUF_INP, LOOM_BUF_WGT, LOOM_BUF_ACC, LOOM_BUF_UOP, LOOM_BUF_OUT};
  struct loom_insn in = {.opcode = LOOM_OP_LOAD};
  struct loom_insn_mem *m = &in.mem;
  m->buffer = (uint32_t)bufs[rnd(g, 5)];
  if (m->buffer == LOOM_BUF_OUT) in.opcode = LOOM_OP_STORE;
  m->sram_base = rnd(g, 1u << 16);
  m->segment = rnd(g, LOOM_NUM_SEGMENTS);
  m->dram_offset = rnd(g, 1u << 28);
  m->x_size = chance(g, 50) ? 0 : rnd(g, 100);
  m->y_size = m->x_size ? 0 : rnd(g, 100);
  m->x_stride = rnd(g, 1u << 16);
  emit(g, in);
}

static void gen_store(struct gen *g, uint32_t lo, uint32_t n) {
  struct loom_insn in = {.opcode = LOOM_OP_STORE};
  struct loom_insn_mem *m = &in.mem;
  m->buffer = LOOM_BUF_OUT;
  uint32_t cap = g->k.max_rows < g->win_n[LOOM_BUF_ACC] ? g->k.max_rows : g->win_n[LOOM_BUF_ACC];
  if (n) m->y_size = 1, m->x_size = n, m->x_stride = n;
  else pick_shape(g, range(g, 1, cap), m);
  int s = g->outputs[rnd(g, (uint32_t)g->n_outputs)];
  place_dram(g, m, s, loom_hw_row_bytes(g->cfg, LOOM_BUF_OUT, 0));
  uint32_t rows = m->y_size * m->x_size;
  m->sram_base = n ? lo : g->win_lo[LOOM_BUF_ACC] + rnd(g, g->win_n[LOOM_BUF_ACC] - rows + 1);
  need(g, TQ_C2S, max_last(g->last_write[LOOM_BUF_ACC], m->sram_base, rows));
  int32_t idx = emit(g, in);
  set_rows(g->last_read[LOOM_BUF_ACC], m->sram_base, rows, idx);
}

/* ---- micro-op loops (GEMM and ALU) ---- */

/* Loop extents with n_uops * iter_out * iter_in <= max_loop. */
static void pick_extents(struct gen *g, uint32_t *n_uops, uint32_t *io, uint32_t *ii) {
  uint32_t budget = g->k.max_loop;
  *n_uops = range(g, 1, budget < 8 ? budget : 8);
  budget /= *n_uops;
  *io = range(g, 1, budget < 16 ? budget : 16);
  budget /= *io;
  *ii = range(g, 1, budget < 32 ? budget : 32);
}

/* Factors (out, in) and the largest base so that base + (io-1)*fo +
 * (ii-1)*fi stays below `span`; factors fit `field_max`. */
static uint32_t pick_factors(struct gen *g, uint32_t span, uint32_t io, uint32_t ii,
                             uint32_t field_max, uint32_t *fo, uint32_t *fi) {
  uint32_t left = span - 1;
  *fo = io > 1 ? rnd(g, left / (io - 1) + 1) : rnd(g, field_max + 1);
  if (*fo > field_max) *fo = field_max;
  if (io > 1) left -= (io - 1) * *fo;
  *fi = ii > 1 ? rnd(g, left / (ii - 1) + 1) : rnd(g, field_max + 1);
  if (*fi > field_max) *fi = field_max;
  if (ii > 1) left -= (ii - 1) * *fi;
  return left;
}

/* Writes the micro-ops to DRAM and emits the LOAD UOP that puts them at
 * UOP rows [base, base + n); returns base. */
static uint32_t load_uops(struct gen *g, const struct loom_uop *u, uint32_t n) {
  struct loom_insn in = {.opcode = LOOM_OP_LOAD};
  struct loom_insn_mem *m = &in.mem;
  m->buffer = LOOM_BUF_UOP;
  m->x_size = chance(g, 70) ? n : range(g, 1, n);
  while (n % m->x_size) m->x_size--;
  m->y_size = n / m->x_size;
  m->x_stride = m->x_size + (chance(g, 30) ? range(g, 1, 3) : 0);
  int64_t off = uop_append(g, 4ull * rnd(g, 4));
  off = uop_append(g, 4ull * span_rows(m));
  if (off < 0) return 0;
  for (uint32_t k = 0; k < n; k++) {
    uint64_t row = (uint64_t)off / 4 + (k / m->x_size) * m->x_stride + k % m->x_size;
    loom_uop_encode(&u[k], g->seg[g->uop_seg].data + 4 * row);
  }
  m->segment = (uint32_t)g->uop_seg;
  m->dram_offset = (uint32_t)(off / 4);
  m->sram_base = g->win_lo[LOOM_BUF_UOP] + rnd(g, g->win_n[LOOM_BUF_UOP] - n + 1);
  int32_t idx = emit(g, in);
  set_rows(g->uop_owner, m->sram_base, n, idx);
  return m->sram_base;
}

/* True while the micro-ops a memoized GEMM/ALU used are still in place. */
static int memo_valid(const struct gen *g, int kind) {
  if (!g->memo[kind].valid) return 0;
  const struct loom_insn *in = &g->memo[kind].insn;
  uint32_t b = kind ? in->alu.uop_begin : in->gemm.uop_begin;
  uint32_t e = kind ? in->alu.uop_end : in->gemm.uop_end;
  for (uint32_t r = b; r < e; r++)
    if (g->uop_owner[r] != g->memo[kind].owner) return 0;
  return 1;
}

/* Micro-op field for one operand: in the window, or (for operands a
 * resetting GEMM ignores) anything the field holds. */
static uint32_t uop_field(struct gen *g, int buf, uint32_t base_max, int anything, uint32_t field_max) {
  if (anything) return rnd(g, field_max + 1);
  return g->win_lo[buf] + rnd(g, base_max + 1);
}

static void gemm_hazards(struct gen *g, const struct loom_insn_gemm *gm, const struct loom_uop *u,
                         int32_t *w_in, int32_t *r_out) {
  for (uint32_t i = 0; i < gm->iter_out; i++)
    for (uint32_t j = 0; j < gm->iter_in; j++)
      for (uint32_t k = 0; k < gm->uop_end - gm->uop_begin; k++) {
        uint32_t a = u[k].acc + i * gm->acc_factor_out + j * gm->acc_factor_in;
        uint32_t x = u[k].inp + i * gm->inp_factor_out + j * gm->inp_factor_in;
        uint32_t w = u[k].wgt + i * gm->wgt_factor_out + j * gm->wgt_factor_in;
        if (g->last_read[LOOM_BUF_ACC][a] > *r_out) *r_out = g->last_read[LOOM_BUF_ACC][a];
        if (gm->reset) continue;
        if (g->last_write[LOOM_BUF_INP][x] > *w_in) *w_in = g->last_write[LOOM_BUF_INP][x];
        if (g->last_write[LOOM_BUF_WGT][w] > *w_in) *w_in = g->last_write[LOOM_BUF_WGT][w];
      }
}

static void gemm_mark(struct gen *g, const struct loom_insn_gemm *gm, const struct loom_uop *u,
                      int32_t idx) {
  for (uint32_t i = 0; i < gm->iter_out; i++)
    for (uint32_t j = 0; j < gm->iter_in; j++)
      for (uint32_t k = 0; k < gm->uop_end - gm->uop_begin; k++) {
        g->last_write[LOOM_BUF_ACC][u[k].acc + i * gm->acc_factor_out + j * gm->acc_factor_in] = idx;
        if (gm->reset) continue;
        g->last_read[LOOM_BUF_INP][u[k].inp + i * gm->inp_factor_out + j * gm->inp_factor_in] = idx;
        g->last_read[LOOM_BUF_WGT][u[k].wgt + i * gm->wgt_factor_out + j * gm->wgt_factor_in] = idx;
      }
}

/* Reads back the micro-ops at UOP rows [b, e) from where load_uops put them. */
static void uops_of(const struct gen *g, uint32_t b, uint32_t e, struct loom_uop *u) {
  const struct loom_insn *ld = &g->in[g->uop_owner[b]];
  const struct loom_insn_mem *m = &ld->mem;
  for (uint32_t r = b; r < e; r++) {
    uint32_t k = r - m->sram_base;
    uint64_t row = m->dram_offset + (k / m->x_size) * m->x_stride + k % m->x_size;
    loom_uop_decode(g->seg[g->uop_seg].data + 4 * row, &u[r - b]);
  }
}

/* A fresh GEMM loop and its micro-ops.  Returns 1 when the micro-ops'
 * inp/wgt fields are "wild" (anything the fields hold), which only a
 * resetting GEMM may use since it reads neither INP nor WGT. */
static int new_gemm(struct gen *g, struct loom_insn *in, struct loom_uop *u) {
  struct loom_insn_gemm *gm = &in->gemm;
  uint32_t n, io, ii;
  pick_extents(g, &n, &io, &ii);
  gm->iter_out = io, gm->iter_in = ii;
  uint32_t ba = pick_factors(g, g->win_n[LOOM_BUF_ACC], io, ii, 2047, &gm->acc_factor_out,
                             &gm->acc_factor_in);
  uint32_t bx = pick_factors(g, g->win_n[LOOM_BUF_INP], io, ii, 2047, &gm->inp_factor_out,
                             &gm->inp_factor_in);
  uint32_t bw = pick_factors(g, g->win_n[LOOM_BUF_WGT], io, ii, 1023, &gm->wgt_factor_out,
                             &gm->wgt_factor_in);
  int wild = gm->reset && chance(g, 50);
  for (uint32_t k = 0; k < n; k++) {
    u[k].acc = g->win_lo[LOOM_BUF_ACC] + rnd(g, ba + 1);
    u[k].inp = uop_field(g, LOOM_BUF_INP, bx, wild, 2047);
    u[k].wgt = uop_field(g, LOOM_BUF_WGT, bw, wild, 1023);
  }
  gm->uop_begin = load_uops(g, u, n);
  gm->uop_end = gm->uop_begin + n;
  return wild;
}

static void gen_gemm(struct gen *g) {
  struct loom_insn in = {.opcode = LOOM_OP_GEMM};
  struct loom_uop u[8];
  int reset = chance(g, 25), wild;
  if (memo_valid(g, 0) && chance(g, 30)) {
    in = g->memo[0].insn;
    in.pop_prev = in.pop_next = in.push_prev = in.push_next = 0;
    uops_of(g, in.gemm.uop_begin, in.gemm.uop_end, u);
    wild = g->memo[0].wild;
    in.gemm.reset = (uint32_t)(reset || wild);
  } else {
    in.gemm.reset = (uint32_t)reset;
    wild = new_gemm(g, &in, u);
  }
  int32_t w_in = -1, r_out = -1;
  gemm_hazards(g, &in.gemm, u, &w_in, &r_out);
  need(g, TQ_L2C, w_in);
  need(g, TQ_S2C, r_out);
  int32_t idx = emit(g, in);
  gemm_mark(g, &in.gemm, u, idx);
  g->memo[0].valid = 1, g->memo[0].wild = wild, g->memo[0].insn = in;
  g->memo[0].owner = g->uop_owner[in.gemm.uop_begin];
}

static int32_t rnd_imm(struct gen *g, uint32_t op) {
  if (op == LOOM_ALU_SHR && chance(g, 70)) return (int32_t)rnd(g, 40);
  if (chance(g, 50)) return (int32_t)rnd(g, 65536) - 32768;
  return (int32_t)rnd(g, 64) - 32;
}

static void new_alu(struct gen *g, struct loom_insn *in, struct loom_uop *u) {
  struct loom_insn_alu *a = &in->alu;
  uint32_t n, io, ii;
  pick_extents(g, &n, &io, &ii);
  a->iter_out = io, a->iter_in = ii;
  uint32_t bd = pick_factors(g, g->win_n[LOOM_BUF_ACC], io, ii, 2047, &a->dst_factor_out,
                             &a->dst_factor_in);
  uint32_t bs = pick_factors(g, g->win_n[LOOM_BUF_ACC], io, ii, 2047, &a->src_factor_out,
                             &a->src_factor_in);
  for (uint32_t k = 0; k < n; k++) {
    u[k].acc = g->win_lo[LOOM_BUF_ACC] + rnd(g, bd + 1);
    u[k].inp = g->win_lo[LOOM_BUF_ACC] + rnd(g, bs + 1);
    u[k].wgt = 0;
  }
  a->uop_begin = load_uops(g, u, n);
  a->uop_end = a->uop_begin + n;
}

static void gen_alu(struct gen *g) {
  struct loom_insn in = {.opcode = LOOM_OP_ALU};
  struct loom_uop u[8];
  if (memo_valid(g, 1) && chance(g, 30)) {
    in = g->memo[1].insn;
    in.pop_prev = in.pop_next = in.push_prev = in.push_next = 0;
    uops_of(g, in.alu.uop_begin, in.alu.uop_end, u);
  } else {
    new_alu(g, &in, u);
  }
  in.alu.alu_op = rnd(g, LOOM_ALU_COUNT);
  in.alu.use_imm = (uint32_t)chance(g, 50);
  in.alu.imm = rnd_imm(g, in.alu.alu_op);
  int32_t r_out = -1;
  const struct loom_insn_alu *a = &in.alu;
  for (uint32_t i = 0; i < a->iter_out; i++)
    for (uint32_t j = 0; j < a->iter_in; j++)
      for (uint32_t k = 0; k < a->uop_end - a->uop_begin; k++) {
        uint32_t d = u[k].acc + i * a->dst_factor_out + j * a->dst_factor_in;
        if (g->last_read[LOOM_BUF_ACC][d] > r_out) r_out = g->last_read[LOOM_BUF_ACC][d];
      }
  need(g, TQ_S2C, r_out);
  int32_t idx = emit(g, in);
  for (uint32_t i = 0; i < a->iter_out; i++)
    for (uint32_t j = 0; j < a->iter_in; j++)
      for (uint32_t k = 0; k < a->uop_end - a->uop_begin; k++)
        g->last_write[LOOM_BUF_ACC][u[k].acc + i * a->dst_factor_out + j * a->dst_factor_in] = idx;
  g->memo[1].valid = 1, g->memo[1].insn = in, g->memo[1].owner = g->uop_owner[a->uop_begin];
}

/* A GEMM or ALU whose loop does nothing (zero extent or empty uop range). */
static void gen_empty_loop(struct gen *g) {
  struct loom_insn in = {.opcode = chance(g, 50) ? LOOM_OP_GEMM : LOOM_OP_ALU};
  uint32_t b = rnd(g, 1u << 13), e = rnd(g, 1u << 14), io = rnd(g, 1u << 14), ii = rnd(g, 1u << 14);
  switch (rnd(g, 3)) {
  case 0: io = 0; break;
  case 1: ii = 0; break;
  default: e = b - (b ? rnd(g, b + 1) : 0); break;
  }
  if (in.opcode == LOOM_OP_GEMM) {
    in.gemm.uop_begin = b, in.gemm.uop_end = e, in.gemm.iter_out = io, in.gemm.iter_in = ii;
    in.gemm.reset = rnd(g, 2);
  } else {
    in.alu.uop_begin = b, in.alu.uop_end = e, in.alu.iter_out = io, in.alu.iter_in = ii;
    in.alu.alu_op = rnd(g, LOOM_ALU_COUNT);
  }
  emit(g, in);
}

static void gen_qcfg(struct gen *g) {
  struct loom_insn in = {.opcode = LOOM_OP_QCFG};
  struct loom_insn_qcfg *q = &in.qcfg;
  switch (rnd(g, 4)) {
  case 0: q->multiplier = (int32_t)(uint32_t)rnd64(g); break;
  case 1: q->multiplier = (int32_t)rnd(g, 2001) - 1000; break;
  default: q->multiplier = (int32_t)range(g, 1u << 30, 0x7FFFFFFFu); break;
  }
  q->shift = chance(g, 60) ? range(g, 28, 45) : rnd(g, 64);
  q->zero_point = (int32_t)rnd(g, 256) - 128;
  q->clamp_lo = chance(g, 50) ? -128 : (int32_t)rnd(g, 256) - 128;
  q->clamp_hi = chance(g, 50) ? 127 : (int32_t)rnd(g, 256) - 128;
  if (q->clamp_lo > q->clamp_hi && chance(g, 80)) {
    int32_t t = q->clamp_lo;
    q->clamp_lo = q->clamp_hi, q->clamp_hi = t;
  }
  q->round_even = rnd(g, 2);
  emit(g, in);
}

static void gen_nop(struct gen *g) { emit_nop(g, (int)rnd(g, LOOM_Q_COUNT)); }

/* ---- planted errors ---- */

/* One instruction that raises an error; corruptions the encoder refuses
 * are applied to the bytes afterwards (see encode_all). */
static void plant_fault(struct gen *g) {
  int f = (int)range(g, FAULT_RESERVED, FAULT_COUNT - 1);
  struct loom_insn in = {.opcode = LOOM_OP_LOAD};
  in.mem.buffer = LOOM_BUF_INP;
  in.mem.segment = (uint32_t)g->inputs[0];
  in.mem.y_size = 1, in.mem.x_size = 1, in.mem.x_stride = 1;
  in.mem.sram_base = g->win_lo[LOOM_BUF_INP];
  uint32_t rb = loom_hw_row_bytes(g->cfg, LOOM_BUF_INP, 0);
  switch (f) {
  case FAULT_BAD_ALU:
    in.opcode = LOOM_OP_ALU;
    memset(&in.alu, 0, sizeof in.alu);
    in.alu.iter_out = in.alu.iter_in = 1;
    break;
  case FAULT_SEG_OVERFLOW:
    in.mem.dram_offset = (uint32_t)(g->seg[in.mem.segment].size / rb);
    break;
  case FAULT_SEG_UNMAPPED:
    for (int s = 0; s < LOOM_NUM_SEGMENTS; s++)
      if (g->seg[s].size == 0 && s != g->uop_seg) in.mem.segment = (uint32_t)s;
    break;
  case FAULT_SRAM_LOAD:
    in.mem.sram_base = loom_hw_buffer_rows(g->cfg, LOOM_BUF_INP) - rnd(g, 2);
    in.mem.x_size = in.mem.x_stride = 2;
    break;
  case FAULT_SRAM_GEMM:
    in.opcode = LOOM_OP_GEMM;
    memset(&in.gemm, 0, sizeof in.gemm);
    in.gemm.reset = 1, in.gemm.iter_out = 2, in.gemm.iter_in = 1, in.gemm.acc_factor_out = 1;
    in.gemm.uop_begin = load_uops(g, &(struct loom_uop){loom_hw_buffer_rows(g->cfg, LOOM_BUF_ACC) - 1, 0, 0}, 1);
    in.gemm.uop_end = in.gemm.uop_begin + 1;
    break;
  default: break;
  }
  if (f == FAULT_NOFINISH) {
    g->fault = f;
    return;
  }
  g->fault = f;
  g->fault_insn = emit(g, in);
  /* a planted instruction produces no tokens anyone may rely on */
  for (int q = 0; q < TQ_COUNT; q++)
    if (tq_from[q] == loom_insn_queue(&in) && *push_flag(&g->in[g->fault_insn], q)) {
      *push_flag(&g->in[g->fault_insn], q) = 0;
      g->q[q].pushed--;
    }
}

static uint32_t fault_error(int f) {
  switch (f) {
  case FAULT_RESERVED:
  case FAULT_BAD_BUFFER:
  case FAULT_BAD_TOKEN:
  case FAULT_BAD_ALU: return LOOM_ERR_ILLEGAL;
  case FAULT_SEG_OVERFLOW:
  case FAULT_SEG_UNMAPPED: return LOOM_ERR_SEGMENT;
  case FAULT_SRAM_LOAD:
  case FAULT_SRAM_GEMM: return LOOM_ERR_SRAM;
  case FAULT_NOFINISH: return LOOM_ERR_NOFINISH;
  default: return LOOM_ERR_NONE;
  }
}

/* ---- the stream ---- */

/* Rows of `row_bytes` the smallest of the segments `idx[0..n)` holds. */
static uint32_t min_seg_rows(const struct gen *g, const int *idx, int n, uint32_t row_bytes) {
  uint64_t m = UINT32_MAX;
  for (int i = 0; i < n; i++)
    if (g->seg[idx[i]].size / row_bytes < m) m = g->seg[idx[i]].size / row_bytes;
  return (uint32_t)m;
}

static void init_buffer(struct gen *g, int buf) {
  uint32_t lo = g->win_lo[buf], n = g->win_n[buf];
  uint32_t fit = min_seg_rows(g, g->inputs, g->n_inputs, loom_hw_row_bytes(g->cfg, buf, 0));
  uint32_t chunk_max = g->k.max_rows < fit ? g->k.max_rows : fit;
  while (n) {
    uint32_t c = n < chunk_max ? n : range(g, 1, chunk_max);
    gen_load(g, buf, lo, c);
    lo += c, n -= c;
  }
}

static void final_stores(struct gen *g) {
  uint32_t lo = g->win_lo[LOOM_BUF_ACC], n = g->win_n[LOOM_BUF_ACC];
  uint32_t out_rows = min_seg_rows(g, g->outputs, g->n_outputs, loom_hw_row_bytes(g->cfg, LOOM_BUF_OUT, 0));
  uint32_t cap = g->k.max_rows < out_rows ? g->k.max_rows : out_rows;
  while (n) {
    uint32_t c = n < cap ? n : range(g, 1, cap);
    gen_store(g, lo, c);
    lo += c, n -= c;
  }
}

static void random_action(struct gen *g) {
  uint32_t r = rnd(g, 100);
  if (r < 14) gen_load(g, LOOM_BUF_INP, 0, 0);
  else if (r < 24) gen_load(g, LOOM_BUF_WGT, 0, 0);
  else if (r < 32) gen_load(g, LOOM_BUF_ACC, 0, 0);
  else if (r < 54) gen_gemm(g);
  else if (r < 72) gen_alu(g);
  else if (r < 77) gen_qcfg(g);
  else if (r < 92) gen_store(g, 0, 0);
  else if (r < 95) gen_nop(g);
  else if (r < 97) gen_empty_transfer(g);
  else gen_empty_loop(g);
}

/* A few legal instructions after FINISH: they must never execute. */
static void trailing(struct gen *g) {
  uint32_t n = chance(g, 30) ? range(g, 1, 3) : 0;
  for (uint32_t i = 0; i < n; i++) {
    struct loom_insn in = {.opcode = LOOM_OP_STORE};
    in.mem.buffer = LOOM_BUF_OUT;
    in.mem.segment = (uint32_t)g->outputs[0];
    in.mem.y_size = 1, in.mem.x_size = 1, in.mem.x_stride = 1;
    in.mem.sram_base = g->win_lo[LOOM_BUF_ACC];
    if (chance(g, 50)) in.opcode = LOOM_OP_NOP, in.nop.queue = rnd(g, LOOM_Q_COUNT);
    if (grow((void **)&g->in, &g->cap, g->n + 1, sizeof *g->in)) return;
    g->in[g->n++] = in;
  }
}

static void generate(struct gen *g) {
  static const int init_order[3] = {LOOM_BUF_INP, LOOM_BUF_WGT, LOOM_BUF_ACC};
  int first = (int)rnd(g, 3);
  for (int i = 0; i < 3; i++) init_buffer(g, init_order[(first + i) % 3]);
  uint32_t fault_at = g->k.errors ? rnd(g, g->k.actions + 1) : UINT32_MAX;
  for (uint32_t a = 0; a < g->k.actions && !g->oom; a++) {
    if (a == fault_at) plant_fault(g);
    random_action(g);
  }
  if (g->k.errors && g->fault == FAULT_NONE) plant_fault(g);
  final_stores(g);
  drain_tokens(g);
  if (g->fault == FAULT_NOFINISH) return;
  struct loom_insn fin = {.opcode = LOOM_OP_FINISH};
  emit(g, fin);
  trailing(g);
}

/* Encodes every instruction, then applies byte-level corruptions. */
static int encode_all(struct gen *g, struct randstream *rs, char *msg, size_t n) {
  rs->insns = calloc(g->n, LOOM_INSN_BYTES);
  if (!rs->insns) return -1;
  for (uint32_t i = 0; i < g->n; i++) {
    const char *bad = NULL;
    if (loom_insn_encode(&g->in[i], rs->insns + 16 * i, &bad)) {
      snprintf(msg, n, "randstream: instruction %u: field %s does not fit (generator bug)", i,
               bad ? bad : "?");
      return -1;
    }
  }
  uint8_t *f = rs->insns + 16 * (g->fault_insn >= 0 ? g->fault_insn : 0);
  switch (g->fault) {
  case FAULT_RESERVED: loom_bits_set(f, LOOM_MEM_RESERVED_LSB + 1, 1, 1); break;
  case FAULT_BAD_BUFFER: loom_bits_set(f, LOOM_MEM_BUFFER_LSB, LOOM_MEM_BUFFER_WIDTH, 5 + (uint64_t)rnd(g, 3)); break;
  case FAULT_BAD_TOKEN: loom_bits_set(f, LOOM_COMMON_PUSH_PREV_LSB, 1, 1); break;
  case FAULT_BAD_ALU: loom_bits_set(f, LOOM_ALU_ALU_OP_LSB, LOOM_ALU_ALU_OP_WIDTH, 7); break;
  default: break;
  }
  rs->insn_count = g->n;
  return 0;
}

void randstream_knobs_default(struct randstream_knobs *k) {
  memset(k, 0, sizeof *k);
  k->actions = 40;
  k->max_loop = 256;
  k->max_rows = 64;
  k->max_window = 256;
  k->token_noise = 10;
}

static void gen_free(struct gen *g) {
  free(g->in);
  for (int b = 0; b < LOOM_BUF_COUNT; b++) free(g->last_write[b]), free(g->last_read[b]);
  free(g->uop_owner);
  for (int q = 0; q < TQ_COUNT; q++) free(g->q[q].push_at);
}

static int finish_output(struct gen *g, struct randstream *rs, char *msg, size_t n) {
  if (g->oom || encode_all(g, rs, msg, n)) return -1;
  if (g->uop_used && uop_append(g, rnd(g, 64)) < 0) return -1;
  g->seg[g->uop_seg].size = g->uop_used;
  memcpy(rs->seg, g->seg, sizeof rs->seg);
  memset(g->seg, 0, sizeof g->seg);
  rs->decoded = g->in;
  g->in = NULL;
  rs->expect_error = fault_error(g->fault);
  rs->expect_error_insn = g->fault == FAULT_NOFINISH ? g->n : (uint32_t)g->fault_insn;
  return 0;
}

int randstream_build(const struct loom_hw_config *cfg, uint64_t seed,
                     const struct randstream_knobs *k, struct randstream *out, char *msg,
                     size_t msg_size) {
  struct gen g;
  memset(&g, 0, sizeof g);
  memset(out, 0, sizeof *out);
  g.cfg = cfg;
  if (k) g.k = *k;
  else randstream_knobs_default(&g.k);
  if (!g.k.max_loop) g.k.max_loop = 1;
  if (!g.k.max_rows) g.k.max_rows = 1;
  if (!g.k.max_window) g.k.max_window = 1;
  g.rng = seed_mix(seed);
  g.fault_insn = -1;
  for (int m = 0; m < LOOM_Q_COUNT; m++) g.last_insn[m] = -1;
  int rc = -1;
  snprintf(msg, msg_size, "randstream: out of memory");
  if (make_segments(&g) == 0 && make_windows(&g) == 0) {
    generate(&g);
    rc = finish_output(&g, out, msg, msg_size);
  }
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) free(g.seg[s].data);
  gen_free(&g);
  if (rc) randstream_free(out);
  return rc;
}

void randstream_free(struct randstream *rs) {
  free(rs->insns);
  free(rs->decoded);
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) free(rs->seg[s].data);
  memset(rs, 0, sizeof *rs);
}
