/*
 * emit.c - instructions, micro-op sets and the dependency-token pipeline of
 * a lowered job.
 *
 * Every lowering describes its job as a sequence of chunks (struct
 * emit_chunk): what the load module loads for the chunk, what compute does
 * with it, and, when the chunk ends an output tile, what the store module
 * writes back.  This file owns the one token discipline all lowerings share,
 * so it is stated (and checked) in one place.  Buffer halves alternate by
 * parity: chunk k uses INP/WGT half k % 2, output tile o uses ACC/OUT half
 * o % 2.  The hazards and the tokens that guard them:
 *
 *   load  of chunk k       overwrites the half that chunk k-2's GEMMs read
 *                          -> pops C2L (k >= 2), pushed by chunk k-2's last GEMM
 *   GEMMs of chunk k       read what load of chunk k wrote
 *                          -> pop L2C, pushed by chunk k's last load
 *   ACC init of tile o     overwrites the half store of tile o-2 reads
 *                          -> pops S2C (o >= 2), pushed by tile o-2's last store
 *   store of tile o        reads what compute of tile o wrote
 *                          -> pops C2S, pushed by tile o's last compute
 *
 * A token is pushed only when a later instruction pops it, so every queue
 * is empty at FINISH (balanced), and at most two tokens of each kind are in
 * flight (the queues hold at least eight).  The stream order is
 *
 *   prologue, L(0), L(1), C(0), S(0)?, L(2), C(1), S(1)?, ..., C(K-1), S, FINISH
 *
 * so every token's producer precedes its consumer in the stream: fetch
 * dispatches in order, and a module blocked on a token always waits for an
 * instruction that is already in some queue.  Together with the bounded
 * number of tokens in flight this makes the program deadlock-free for any
 * queue depth; cost_simulate() double-checks it for every program.
 * Loading chunk k+1 before computing chunk k in stream order lets the load
 * module run one chunk ahead even when the compute queue is short.
 *
 * Micro-ops are absolute row indices, so a set is specific to the buffer
 * halves it addresses; emit_uop_set() stores each distinct set once and
 * every tile with the same shape reuses it.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

int lower_fail(char *msg, const char *where, const char *fmt, ...) {
  int n = snprintf(msg, LOWER_MSG_MAX, "%s: ", where ? where : "layer");
  if (n < 0 || n >= LOWER_MSG_MAX) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + n, (size_t)(LOWER_MSG_MAX - n), fmt, ap);
  va_end(ap);
  return -1;
}

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return p;
  uint32_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *q = realloc(p, (size_t)c * elem);
  LOOM_ASSERT(q != NULL);
  *cap = c;
  return q;
}

/* ---- vectors of instructions ---- */

void emit_vec_push(struct emit_vec *v, const struct loom_insn *in) {
  v->v = grow(v->v, &v->cap, v->n + 1, sizeof *v->v);
  v->v[v->n++] = *in;
}

void emit_vec_clear(struct emit_vec *v) { v->n = 0; }

void emit_vec_free(struct emit_vec *v) {
  free(v->v);
  memset(v, 0, sizeof *v);
}

void emit_chunk_reset(struct emit_chunk *c) {
  emit_vec_clear(&c->load);
  emit_vec_clear(&c->pre);
  emit_vec_clear(&c->main);
  emit_vec_clear(&c->post);
  emit_vec_clear(&c->store);
}

void emit_chunk_free(struct emit_chunk *c) {
  emit_vec_free(&c->load);
  emit_vec_free(&c->pre);
  emit_vec_free(&c->main);
  emit_vec_free(&c->post);
  emit_vec_free(&c->store);
}

/* ---- the program ---- */

void emit_program_init(struct lower_program *p, const struct loom_hw_config *cfg) {
  memset(p, 0, sizeof *p);
  p->cfg = cfg;
}

void lower_program_free(struct lower_program *p) {
  free(p->insns);
  free(p->uops);
  free(p->const_data);
  memset(p, 0, sizeof *p);
}

/* Whether transfer `in` of segment `seg` is one lower_program_rebase /
 * _repitch move (a DRAM transfer of that segment). */
static int seg_transfer(const struct loom_insn *in, enum lower_seg seg) {
  return (in->opcode == LOOM_OP_LOAD || in->opcode == LOOM_OP_STORE) && in->mem.segment == (uint32_t)seg &&
         !in->mem.src_out;
}

int lower_program_repitch(struct lower_program *p, enum lower_seg seg, uint64_t width, uint64_t pitch) {
  if (!width || pitch < width || p->seg_bytes[seg] % width) return -1;
  for (uint32_t i = 0; i < p->insn_count; i++) {
    const struct loom_insn *in = &p->insns[i];
    if (!seg_transfer(in, seg) || !in->mem.x_size || !in->mem.y_size) continue;
    uint64_t r = loom_hw_row_bytes(p->cfg, (int)in->mem.buffer, (int)in->mem.src_int8), w = width / r, pp = pitch / r;
    if (width % r || pitch % r || in->mem.dram_offset % w + in->mem.x_size > w || (in->mem.y_size > 1 && in->mem.x_stride % w))
      return -1; /* a transfer row crosses a tensor row, or rows apart by other than whole tensor rows */
    uint64_t last = in->mem.dram_offset / w * pp + in->mem.dram_offset % w + (uint64_t)(in->mem.y_size - 1) * (in->mem.x_stride / w * pp);
    if (last >= (1ull << LOOM_MEM_DRAM_OFFSET_WIDTH) || (in->mem.y_size > 1 && in->mem.x_stride / w * pp >= (1ull << LOOM_MEM_X_STRIDE_WIDTH)))
      return -1;
  }
  for (uint32_t i = 0; i < p->insn_count; i++) {
    struct loom_insn *in = &p->insns[i];
    if (!seg_transfer(in, seg) || !in->mem.x_size || !in->mem.y_size) continue;
    uint64_t r = loom_hw_row_bytes(p->cfg, (int)in->mem.buffer, (int)in->mem.src_int8), w = width / r, pp = pitch / r;
    in->mem.dram_offset = (uint32_t)(in->mem.dram_offset / w * pp + in->mem.dram_offset % w);
    if (in->mem.y_size > 1) in->mem.x_stride = (uint32_t)(in->mem.x_stride / w * pp);
  }
  uint64_t rows = p->seg_bytes[seg] / width;
  if (rows) p->seg_bytes[seg] = (rows - 1) * pitch + width;
  return 0;
}

int lower_program_rebase(struct lower_program *p, enum lower_seg seg, uint64_t bytes) {
  for (uint32_t i = 0; i < p->insn_count; i++) { /* check all before moving any */
    const struct loom_insn *in = &p->insns[i];
    if (!seg_transfer(in, seg)) continue;
    uint64_t r = loom_hw_row_bytes(p->cfg, (int)in->mem.buffer, (int)in->mem.src_int8);
    if (bytes % r || in->mem.dram_offset + bytes / r >= (1ull << LOOM_MEM_DRAM_OFFSET_WIDTH)) return -1;
  }
  for (uint32_t i = 0; i < p->insn_count; i++) {
    struct loom_insn *in = &p->insns[i];
    if (seg_transfer(in, seg))
      in->mem.dram_offset += (uint32_t)(bytes / loom_hw_row_bytes(p->cfg, (int)in->mem.buffer, (int)in->mem.src_int8));
  }
  p->seg_bytes[seg] += bytes;
  return 0;
}

/* Store `in` (of OUT rows sram_base + k, k = y * x_size + x, to DRAM row
 * `to(k)`) as the fewest pieces whose rows follow the ISA's 2-D pattern:
 * runs of consecutive DRAM rows, and runs of one length a constant stride
 * apart as the rows of one transfer.  The first piece pops what `in`
 * pops, the last pushes what it pushes. */
static void store_pieces(struct emit_vec *out, const struct loom_insn *in, const uint64_t *to) {
  uint64_t n = (uint64_t)in->mem.y_size * in->mem.x_size, k = 0;
  struct loom_insn piece = *in;
  while (k < n) {
    uint64_t len = 1, runs = 1, stride = 0;
    while (k + len < n && to[k + len] == to[k] + len && len + 1 < (1u << LOOM_MEM_X_SIZE_WIDTH)) len++;
    while (k + (runs + 1) * len <= n && runs + 1 < (1u << LOOM_MEM_Y_SIZE_WIDTH)) { /* one more run like the first */
      uint64_t at = k + runs * len, gap = to[at] - to[at - len];
      int same = to[at] > to[at - len] && (runs == 1 || gap == stride) && gap < (1u << LOOM_MEM_X_STRIDE_WIDTH);
      for (uint64_t x = 1; x < len && same; x++) same = to[at + x] == to[at] + x;
      if (!same || (at + len < n && to[at + len] == to[at] + len)) break; /* that run is longer */
      stride = gap, runs++;
    }
    piece.mem.sram_base = in->mem.sram_base + (uint32_t)k, piece.mem.dram_offset = (uint32_t)to[k];
    piece.mem.y_size = (uint32_t)runs, piece.mem.x_size = (uint32_t)len;
    piece.mem.x_stride = (uint32_t)(runs > 1 ? stride : len);
    piece.pop_prev = k ? 0 : in->pop_prev, piece.pop_next = k ? 0 : in->pop_next;
    k += runs * len;
    piece.push_prev = k < n ? 0 : in->push_prev, piece.push_next = k < n ? 0 : in->push_next;
    emit_vec_push(out, &piece);
  }
}

int lower_program_wgt_rows(struct lower_program *p, enum lower_seg seg, uint64_t tokens, uint64_t col0, uint64_t cols,
                           uint64_t base) {
  const struct lower_act *a = &p->act[seg];
  uint64_t B = (uint64_t)a->block, cb = (uint64_t)(a->c + a->block - 1) / B, nb = (tokens + B - 1) / B;
  uint64_t b0 = col0 / B, kb = cols / B, end = base + nb * kb * B * B, whole = b0 == 0 && kb == cb;
  if (a->layout != LOWER_ACT_NCHWC || (uint64_t)a->n * a->h * a->w != tokens || col0 % B || !kb || cols % B ||
      b0 + kb > cb || base % B || loom_hw_row_bytes(p->cfg, LOOM_BUF_OUT, 0) != B ||
      end / B >= (1ull << LOOM_MEM_DRAM_OFFSET_WIDTH))
    return -1; /* not one token's channel block per DRAM row, not whole blocks, or too large */
  for (uint32_t i = 0; i < p->insn_count; i++) {
    const struct loom_insn *in = &p->insns[i];
    if (!seg_transfer(in, seg)) continue;
    if (in->opcode != LOOM_OP_STORE) return -1; /* the result is read back: it must stay NC */
    uint64_t last = in->mem.dram_offset + (uint64_t)(in->mem.y_size ? in->mem.y_size - 1 : 0) * in->mem.x_stride + in->mem.x_size;
    if (in->mem.x_size && in->mem.y_size && last > tokens * cb && in->mem.dram_offset < tokens * cb) return -1;
    if (in->mem.dram_offset >= tokens * cb && last > base / B && in->mem.dram_offset < end / B) return -1; /* earlier rows there */
  }
  struct emit_vec out = {0};
  uint64_t *to = NULL;
  for (uint32_t i = 0; i < p->insn_count; i++) {
    const struct loom_insn *in = &p->insns[i];
    if (!seg_transfer(in, seg) || !in->mem.x_size || !in->mem.y_size || in->mem.dram_offset >= tokens * cb) {
      emit_vec_push(&out, in); /* not this segment's, or another range's rows (an earlier call's) */
      continue;
    }
    uint64_t n = (uint64_t)in->mem.y_size * in->mem.x_size;
    to = realloc(to, n * sizeof *to);
    LOOM_ASSERT(to != NULL);
    for (uint64_t k = 0; k < n; k++) { /* NC row y * cb + b -> base + y / B * kb * B + (b - b0) * B + y % B */
      uint64_t r = in->mem.dram_offset + k / in->mem.x_size * in->mem.x_stride + k % in->mem.x_size, y = r / cb, b = r % cb;
      to[k] = b < b0 || b >= b0 + kb ? r : base / B + y / B * kb * B + (b - b0) * B + y % B;
    }
    store_pieces(&out, in, to);
  }
  free(to);
  free(p->insns);
  p->insns = out.v, p->insn_count = out.n, p->insn_cap = out.cap;
  if (whole) p->act[seg].n = (int32_t)nb, p->act[seg].h = (int32_t)B, p->act[seg].w = 1, p->seg_bytes[seg] = 0;
  if (p->seg_bytes[seg] < end) p->seg_bytes[seg] = end;
  p->act[seg].bytes = p->seg_bytes[seg];
  emit_report(p);
  return 0;
}

uint32_t emit_insn(struct lower_program *p, const struct loom_insn *in) {
  p->insns = grow(p->insns, &p->insn_cap, p->insn_count + 1, sizeof *p->insns);
  p->insns[p->insn_count] = *in;
  return p->insn_count++;
}

uint32_t emit_uop_set(struct lower_program *p, const struct loom_uop *u, uint32_t n) {
  LOOM_ASSERT(n > 0);
  for (uint32_t b = 0; b + n <= p->uop_count; b++)
    if (memcmp(&p->uops[b], u, n * sizeof *u) == 0) return b;
  p->uops = grow(p->uops, &p->uop_cap, p->uop_count + n, sizeof *p->uops);
  memcpy(&p->uops[p->uop_count], u, n * sizeof *u);
  p->uop_count += n;
  return p->uop_count - n;
}

uint64_t emit_const_align(const struct loom_hw_config *cfg) {
  uint64_t a = loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0);
  uint64_t acc = loom_hw_row_bytes(cfg, LOOM_BUF_ACC, 0);
  while (a % acc || a % 64) a *= 2; /* rows of every kind, and 64-byte segment alignment */
  return a;
}

uint64_t emit_const(struct lower_program *p, const void *bytes, uint64_t size, uint64_t align) {
  uint64_t off = (p->const_bytes + align - 1) / align * align;
  uint64_t end = off + size;
  if (end > p->const_cap) {
    uint64_t c = p->const_cap ? p->const_cap : 4096;
    while (c < end) c *= 2;
    uint8_t *q = realloc(p->const_data, c);
    LOOM_ASSERT(q != NULL);
    p->const_data = q;
    p->const_cap = c;
  }
  memset(p->const_data + p->const_bytes, 0, off - p->const_bytes);
  if (size) memcpy(p->const_data + off, bytes, size);
  p->const_bytes = end;
  return off;
}

uint8_t *lower_program_code(const struct lower_program *p) {
  uint8_t *code = malloc((size_t)p->insn_count * LOOM_INSN_BYTES + 1);
  LOOM_ASSERT(code != NULL);
  for (uint32_t i = 0; i < p->insn_count; i++) {
    const char *bad = NULL;
    if (loom_insn_encode(&p->insns[i], code + (size_t)i * LOOM_INSN_BYTES, &bad) != 0) {
      fprintf(stderr, "instruction %u: field %s does not fit\n", i, bad ? bad : "?");
      LOOM_ASSERT(!"an emitted field does not fit its width");
    }
  }
  return code;
}

/* ---- instruction constructors ---- */

struct loom_insn emit_mem(uint32_t opcode, uint32_t buffer, uint32_t sram, uint32_t seg,
                          uint32_t off, uint32_t y, uint32_t x, uint32_t stride) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = opcode;
  in.mem.buffer = buffer;
  in.mem.sram_base = sram;
  in.mem.segment = seg;
  in.mem.dram_offset = off;
  in.mem.y_size = y;
  in.mem.x_size = x;
  in.mem.x_stride = stride;
  return in;
}

struct loom_insn emit_gemm(uint32_t ub, uint32_t ue, uint32_t io, uint32_t ii, uint32_t af_o,
                           uint32_t af_i, uint32_t if_o, uint32_t if_i, uint32_t wf_o, uint32_t wf_i) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_GEMM;
  struct loom_insn_gemm *g = &in.gemm;
  g->uop_begin = ub;
  g->uop_end = ue;
  g->iter_out = io;
  g->iter_in = ii;
  /* A factor of a loop that runs once is never used: keep it 0 so it
   * always fits its field. */
  g->acc_factor_out = io > 1 ? af_o : 0;
  g->inp_factor_out = io > 1 ? if_o : 0;
  g->wgt_factor_out = io > 1 ? wf_o : 0;
  g->acc_factor_in = ii > 1 ? af_i : 0;
  g->inp_factor_in = ii > 1 ? if_i : 0;
  g->wgt_factor_in = ii > 1 ? wf_i : 0;
  return in;
}

struct loom_insn emit_alu(uint32_t op, uint32_t ub, uint32_t ue, uint32_t io, uint32_t ii,
                          uint32_t df_o, uint32_t df_i, uint32_t sf_o, uint32_t sf_i) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_ALU;
  struct loom_insn_alu *a = &in.alu;
  a->alu_op = op;
  a->uop_begin = ub;
  a->uop_end = ue;
  a->iter_out = io;
  a->iter_in = ii;
  a->dst_factor_out = io > 1 ? df_o : 0;
  a->src_factor_out = io > 1 ? sf_o : 0;
  a->dst_factor_in = ii > 1 ? df_i : 0;
  a->src_factor_in = ii > 1 ? sf_i : 0;
  return in;
}

struct loom_insn emit_qcfg(int32_t mult, uint32_t shift, int32_t zp, int32_t lo, int32_t hi,
                           uint32_t round_even) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_QCFG;
  in.qcfg.multiplier = mult;
  in.qcfg.shift = shift;
  in.qcfg.zero_point = zp;
  in.qcfg.clamp_lo = lo;
  in.qcfg.clamp_hi = hi;
  in.qcfg.round_even = round_even;
  return in;
}

struct loom_insn emit_qcfg_par(uint32_t par_base, uint32_t shift, int32_t zp, int32_t lo, int32_t hi,
                               uint32_t round_even) {
  struct loom_insn in = emit_qcfg(0, shift, zp, lo, hi, round_even);
  in.qcfg.par_base = par_base;
  return in;
}

struct loom_insn emit_gcfg(uint32_t period, uint32_t kh, uint32_t kw, uint32_t row, uint32_t col) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_GCFG;
  in.gcfg.period = period, in.gcfg.dw_kh = kh, in.gcfg.dw_kw = kw, in.gcfg.dw_row = row, in.gcfg.dw_col = col;
  return in;
}

struct loom_insn emit_nop(uint32_t queue) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_NOP;
  in.nop.queue = queue;
  return in;
}

/* ---- the pipeline ---- */

void emit_pipe_begin(struct emit_pipe *e, struct lower_program *p, uint32_t chunks, uint32_t tiles,
                     int uses_load) {
  memset(e, 0, sizeof *e);
  e->p = p;
  e->chunks = chunks;
  e->tiles = tiles;
  e->uses_load = uses_load;
}

static void append(struct lower_program *p, const struct emit_vec *v) {
  for (uint32_t i = 0; i < v->n; i++) emit_insn(p, &v->v[i]);
}

static void append_to(struct emit_vec *dst, const struct emit_vec *v) {
  for (uint32_t i = 0; i < v->n; i++) emit_vec_push(dst, &v->v[i]);
}

/* Load side of chunk k: pop C2L before overwriting the half of chunk k-2,
 * push L2C once everything the chunk needs is in SRAM. */
static void wire_load(struct emit_pipe *e, struct emit_chunk *c) {
  if (c->load.n == 0) {
    struct loom_insn nop = emit_nop(LOOM_Q_LOAD);
    emit_vec_push(&c->load, &nop);
  }
  c->load.v[0].pop_next = c->k >= 2;
  c->load.v[c->load.n - 1].push_next = 1;
}

/* Compute side: S2C before the tile's first ACC write, L2C before the
 * first read of INP/WGT, C2L after the last, C2S after the tile's last. */
static void wire_compute(struct emit_pipe *e, struct emit_chunk *c) {
  struct emit_vec *first = c->pre.n ? &c->pre : &c->main;
  LOOM_ASSERT(c->main.n > 0);
  if (c->first && c->o >= 2) first->v[0].pop_next = 1;
  if (e->uses_load) {
    c->main.v[0].pop_prev = 1;
    c->main.v[c->main.n - 1].push_prev = c->k + 2 < e->chunks;
  }
  if (c->last) {
    struct emit_vec *end = c->post.n ? &c->post : &c->main;
    end->v[end->n - 1].push_next = 1;
  }
}

static void wire_store(struct emit_pipe *e, struct emit_chunk *c) {
  if (!c->last) {
    LOOM_ASSERT(c->store.n == 0);
    return;
  }
  LOOM_ASSERT(c->store.n > 0);
  c->store.v[0].pop_prev = 1;
  c->store.v[c->store.n - 1].push_prev = c->o + 2 < e->tiles;
}

static void flush_held(struct emit_pipe *e) {
  append(e->p, &e->held_compute);
  append(e->p, &e->held_store);
  emit_vec_clear(&e->held_compute);
  emit_vec_clear(&e->held_store);
}

void emit_pipe_chunk(struct emit_pipe *e, struct emit_chunk *c) {
  LOOM_ASSERT(c->k == e->received && c->k < e->chunks && c->o < e->tiles);
  e->received++;
  if (e->uses_load) wire_load(e, c);
  else LOOM_ASSERT(c->load.n == 0);
  wire_compute(e, c);
  wire_store(e, c);
  append(e->p, &c->load); /* L(k) goes before C(k-1) */
  flush_held(e);
  append_to(&e->held_compute, &c->pre);
  append_to(&e->held_compute, &c->main);
  append_to(&e->held_compute, &c->post);
  append_to(&e->held_store, &c->store);
}

void emit_pipe_end(struct emit_pipe *e) {
  LOOM_ASSERT(e->received == e->chunks);
  flush_held(e);
  struct loom_insn fin;
  memset(&fin, 0, sizeof fin);
  fin.opcode = LOOM_OP_FINISH;
  emit_insn(e->p, &fin);
  emit_vec_free(&e->held_compute);
  emit_vec_free(&e->held_store);
}

/* ---- the report ---- */

void emit_report(struct lower_program *p) {
  struct lower_report *r = &p->report;
  const struct loom_hw_config *cfg = p->cfg;
  cost_count(cfg, p->insns, p->insn_count, r->counters);
  struct cost_sim sim;
  cost_simulate(cfg, p->insns, p->insn_count, p->uops, p->uop_count, &sim);
  LOOM_ASSERT(!sim.deadlock);
  r->est_cycles = sim.cycles;
  r->load_cycles = sim.busy[LOOM_Q_LOAD];
  r->compute_cycles = sim.busy[LOOM_Q_COMPUTE];
  r->store_cycles = sim.busy[LOOM_Q_STORE];
  r->dma_bytes = 0;
  for (int i = LOOM_CNT_BYTES_RD_INSN; i <= LOOM_CNT_BYTES_WR_OUT; i++) r->dma_bytes += r->counters[i];
  cost_roofline(cfg, r);
}

/* ---- the micro-op table ---- */

uint32_t emit_uop_load(struct lower_program *p) {
  struct loom_insn in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_UOP, 0, LOWER_SEG_CONST, 0, 1, 0, 0);
  return emit_insn(p, &in);
}

void emit_uop_table(struct lower_program *p, uint32_t load_index) {
  LOOM_ASSERT(p->uop_count <= (uint32_t)p->cfg->uop_rows);
  uint8_t *bytes = malloc((size_t)p->uop_count * LOOM_UOP_BYTES + 1);
  LOOM_ASSERT(bytes != NULL);
  for (uint32_t i = 0; i < p->uop_count; i++)
    LOOM_ASSERT(loom_uop_encode(&p->uops[i], bytes + (size_t)i * LOOM_UOP_BYTES) == 0);
  p->uop_offset = emit_const(p, bytes, (uint64_t)p->uop_count * LOOM_UOP_BYTES, emit_const_align(p->cfg));
  free(bytes);
  struct loom_insn_mem *m = &p->insns[load_index].mem;
  m->dram_offset = (uint32_t)(p->uop_offset / LOOM_UOP_BYTES);
  m->x_size = p->uop_count;
  m->x_stride = p->uop_count;
  p->seg_bytes[LOWER_SEG_CONST] = p->const_bytes;
}

/* ---- names and the printed report ---- */

const char *const lower_seg_names[LOWER_SEG_COUNT] = {"const", "in", "in2", "out"};
_Static_assert(sizeof lower_seg_names / sizeof *lower_seg_names == LOWER_SEG_COUNT, "names");
const char *const lower_act_layout_names[LOWER_ACT_COUNT] = {"none", "nchwc", "im2col"};
_Static_assert(sizeof lower_act_layout_names / sizeof *lower_act_layout_names == LOWER_ACT_COUNT,
               "names");
const char *const lower_kind_names[LOWER_KIND_COUNT] = {"conv",    "conv-im2col", "dwconv", "fc",
                                                        "maxpool", "avgpool",     "add",    "chain"};
_Static_assert(sizeof lower_kind_names / sizeof *lower_kind_names == LOWER_KIND_COUNT, "names");
const char *const lower_pool_kind_names[LOWER_POOL_COUNT] = {"max", "avg"};
_Static_assert(sizeof lower_pool_kind_names / sizeof *lower_pool_kind_names == LOWER_POOL_COUNT,
               "names");
const char *const lower_gemm_mode_names[LOWER_GEMM_MODE_COUNT] = {"dense", "diag", "dw"};
_Static_assert(sizeof lower_gemm_mode_names / sizeof *lower_gemm_mode_names == LOWER_GEMM_MODE_COUNT,
               "names");

void lower_report_print(FILE *f, const char *name, const struct lower_report *r, int header) {
  const struct lower_tiling *t = &r->tiling;
  if (header)
    fprintf(f, "%-24s %-11s %10s %-22s %10s %10s %10s %6s %6s %s\n", "layer", "kind", "MACs",
            "tile rows x cols x co x ci", "DMA bytes", "est cyc", "roofline", "util", "%roof",
            "bound");
  char tile[64], kind[32];
  snprintf(tile, sizeof tile, "%dx%dx%dx%d %s/%s", t->th, t->tw, t->tco, t->tci,
           t->order == TILE_ORDER_SPATIAL ? "sp" : "ch", t->wgt == TILE_WGT_RESIDENT ? "res" : "str");
  snprintf(kind, sizeof kind, "%s%s", lower_kind_names[r->kind], r->residual ? "+add" : "");
  fprintf(f, "%-24s %-11s %10llu %-22s %10llu %10llu %10llu %5.1f%% %5.1f%% %s\n", name,
          kind, (unsigned long long)r->macs, tile,
          (unsigned long long)r->dma_bytes, (unsigned long long)r->est_cycles,
          (unsigned long long)r->roofline_cycles, 100.0 * r->utilization, 100.0 * r->of_roofline,
          r->memory_bound ? "memory" : "compute");
}
