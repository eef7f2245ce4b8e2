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
 * ISA v2's state needs the same care: PAR and the table are loaded in full
 * before the first action, an epilogue's PAR rows stay in the buffer (a
 * QCFG is emitted first when the current one would not), a depthwise GEMM's
 * window taps stay in INP's window, and a LOAD INP from OUT is ordered like
 * a store (after compute writes its source rows) and like a load (before
 * compute overwrites them).
 *
 * Inputs (LOAD sources) and outputs (STORE targets) are separate segments,
 * so there are no DRAM hazards.  The stream ends with STOREs of the whole
 * OUT window, NOPs that drain every token, FINISH, and sometimes a few
 * legal instructions after FINISH (which must never execute).
 */
#include "randstream_int.h"

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

int32_t rs_emit(struct gen *g, struct loom_insn in) {
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

int32_t rs_emit_nop(struct gen *g, int module) {
  struct loom_insn in = {.opcode = LOOM_OP_NOP};
  in.nop.queue = (uint32_t)module;
  return rs_emit(g, in);
}

/* The consumer of `q` must, from its next instruction on, run after the
 * producer's instruction `w` (a stream index; < 0: no constraint). */
void rs_need(struct gen *g, int q, int32_t w) {
  struct tokq *t = &g->q[q];
  if (w < 0 || (t->popped && t->push_at[t->popped - 1] >= w)) return;
  if (!t->pushed || t->push_at[t->pushed - 1] < w) record_push(g, q, g->last_insn[tq_from[q]]);
  while (t->popped < t->pushed && !g->oom) {
    if (t->pending) rs_emit_nop(g, tq_to[q]);
    t->pending = 1;
    t->popped++;
  }
}

/* Pops every token still outstanding, so the job ends with empty queues. */
static void drain_tokens(struct gen *g) {
  for (int q = 0; q < TQ_COUNT; q++) {
    struct tokq *t = &g->q[q];
    if (t->pending) rs_emit_nop(g, tq_to[q]);
    while (t->popped < t->pushed && !g->oom) {
      t->pending = 1;
      t->popped++;
      rs_emit_nop(g, tq_to[q]);
    }
  }
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
int64_t rs_uop_append(struct gen *g, uint64_t n) {
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
  for (int b = LOOM_BUF_PAR; b <= LOOM_BUF_LUT; b++) { /* loaded by the load module, read by epilogues */
    uint32_t rows = loom_hw_buffer_rows(g->cfg, b);
    g->last_write[b] = malloc(rows * sizeof(int32_t));
    g->last_read[b] = malloc(rows * sizeof(int32_t));
    if (!g->last_write[b] || !g->last_read[b]) return -1;
    for (uint32_t r = 0; r < rows; r++) g->last_write[b][r] = g->last_read[b][r] = -1;
  }
  uint32_t urows = loom_hw_buffer_rows(g->cfg, LOOM_BUF_UOP);
  uint32_t orows = loom_hw_buffer_rows(g->cfg, LOOM_BUF_ACC);
  g->uop_owner = malloc(urows * sizeof(int32_t));
  g->out_load_read = malloc(orows * sizeof(int32_t));
  if (!g->uop_owner || !g->out_load_read) return -1;
  for (uint32_t r = 0; r < urows; r++) g->uop_owner[r] = -1;
  for (uint32_t r = 0; r < orows; r++) g->out_load_read[r] = -1;
  return 0;
}

/* ---- planted errors ---- */

/* One instruction that raises an error; corruptions the encoder refuses
 * are applied to the bytes afterwards (see encode_all). */
static void plant_fault(struct gen *g) {
  int f = (int)range(g, FAULT_BAD_TRANSPOSE, g->k.v1_only ? FAULT_NOFINISH : FAULT_COUNT - 1);
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
  case FAULT_BAD_COMBO:
    in.opcode = LOOM_OP_GEMM;
    memset(&in.gemm, 0, sizeof in.gemm);
    in.gemm.reset = 1, in.gemm.iter_out = in.gemm.iter_in = 1; /* dw set in the bytes */
    break;
  case FAULT_SRAM_PAR: {
    struct loom_insn q = {.opcode = LOOM_OP_QCFG};
    q.qcfg = g->qcfg;
    q.qcfg.par_src = 0, q.qcfg.par_base = LOOM_PAR_ROWS - 1;
    g->qcfg = q.qcfg;
    rs_emit(g, q);
    in.opcode = LOOM_OP_ALU;
    memset(&in.alu, 0, sizeof in.alu);
    in.alu.alu_op = LOOM_ALU_EPI, in.alu.use_imm = 1, in.alu.iter_out = 1, in.alu.iter_in = 2;
    in.alu.uop_begin = load_uops(g, &(struct loom_uop){g->win_lo[LOOM_BUF_ACC], 0, 0}, 1);
    in.alu.uop_end = in.alu.uop_begin + 1;
    break;
  }
  case FAULT_SRAM_SRC_OUT:
    in.mem.src_out = 1, in.mem.segment = 0;
    in.mem.dram_offset = loom_hw_buffer_rows(g->cfg, LOOM_BUF_ACC) - rnd(g, 2);
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
  g->fault_insn = rs_emit(g, in);
  /* a planted instruction produces no tokens anyone may rely on */
  for (int q = 0; q < TQ_COUNT; q++)
    if (tq_from[q] == loom_insn_queue(&in) && *push_flag(&g->in[g->fault_insn], q)) {
      *push_flag(&g->in[g->fault_insn], q) = 0;
      g->q[q].pushed--;
    }
}

static uint32_t fault_error(int f) {
  switch (f) {
  case FAULT_BAD_TRANSPOSE:
  case FAULT_BAD_BUFFER:
  case FAULT_BAD_TOKEN:
  case FAULT_BAD_ALU:
  case FAULT_BAD_COMBO: return LOOM_ERR_ILLEGAL;
  case FAULT_SEG_OVERFLOW:
  case FAULT_SEG_UNMAPPED: return LOOM_ERR_SEGMENT;
  case FAULT_SRAM_LOAD:
  case FAULT_SRAM_GEMM:
  case FAULT_SRAM_PAR:
  case FAULT_SRAM_SRC_OUT: return LOOM_ERR_SRAM;
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

/* ISA v2 instructions, one in five actions. */
static void random_v2_action(struct gen *g) {
  uint32_t r = rnd(g, 100);
  if (r < 30) gen_gcfg(g);
  else if (r < 45) gen_par_load(g, rnd(g, LOOM_PAR_ROWS), 1);
  else if (r < 55) gen_lut_load(g);
  else gen_src_out(g);
}

static void random_action(struct gen *g) {
  uint32_t r = rnd(g, 100);
  if (!g->k.v1_only && chance(g, 20)) random_v2_action(g);
  else if (r < 14) gen_load(g, LOOM_BUF_INP, 0, 0);
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
  if (!g->k.v1_only) { /* every PAR row and the table are defined before any epilogue */
    for (uint32_t lo = 0; lo < LOOM_PAR_ROWS; lo += 8) gen_par_load(g, lo, 8);
    gen_lut_load(g);
    if (chance(g, 70)) gen_gcfg(g);
  }
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
  rs_emit(g, fin);
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
  case FAULT_BAD_TRANSPOSE: loom_bits_set(f, LOOM_MEM_WGT_TRANSPOSE_LSB, 1, 1); break;
  case FAULT_BAD_BUFFER:
    loom_bits_set(f, LOOM_MEM_BUFFER_LSB, LOOM_MEM_BUFFER_WIDTH, chance(g, 50) ? LOOM_BUF_OUT : 7);
    break;
  case FAULT_BAD_COMBO: loom_bits_set(f, LOOM_GEMM_DW_LSB, 1, 1); break;
  case FAULT_BAD_TOKEN: loom_bits_set(f, LOOM_COMMON_PUSH_PREV_LSB, 1, 1); break;
  case FAULT_BAD_ALU: loom_bits_set(f, LOOM_ALU_RESERVED_LSB + rnd(g, 2), 1, 1); break;
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
  free(g->out_load_read);
  for (int q = 0; q < TQ_COUNT; q++) free(g->q[q].push_at);
}

static int finish_output(struct gen *g, struct randstream *rs, char *msg, size_t n) {
  if (g->oom || encode_all(g, rs, msg, n)) return -1;
  if (g->uop_used && rs_uop_append(g, rnd(g, 64)) < 0) return -1;
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
