/*
 * randstream_ops.c - the instructions of a random job, one generator per
 * kind: LOAD and STORE, GEMM and ALU loops with their micro-ops, QCFG, NOP,
 * transfers and loops that do nothing, and the planted errors
 * (randstream.h).
 *
 * Each generator keeps randstream.c's guarantees for the one instruction
 * it emits: every access stays in its buffer's working window, every
 * hazard with an earlier instruction is ordered by rs_need() before
 * rs_emit(), and the rows it writes or reads are recorded for the next
 * ones.  Micro-ops are written to the micro-op segment and loaded right
 * before the loop that uses them; a loop is repeated (memoized) only while
 * its micro-ops still sit in the UOP rows it names.
 */
#include "randstream_gen.h"

#include <string.h>

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
void rs_gen_load(struct gen *g, int buf, uint32_t lo, uint32_t n) {
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
  if (buf == LOOM_BUF_ACC) rs_need(g, TQ_S2C, rs_max_last(g->last_read[buf], m->sram_base, rows));
  else rs_need(g, TQ_C2L, rs_max_last(g->last_read[buf], m->sram_base, rows));
  int32_t idx = rs_emit(g, in);
  rs_set_rows(g->last_write[buf], m->sram_base, rows, idx);
}

/* A transfer with a zero size: a no-op that checks no bounds at all. */
void rs_gen_empty_transfer(struct gen *g) {
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
  rs_emit(g, in);
}

void rs_gen_store(struct gen *g, uint32_t lo, uint32_t n) {
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
  rs_need(g, TQ_C2S, rs_max_last(g->last_write[LOOM_BUF_ACC], m->sram_base, rows));
  int32_t idx = rs_emit(g, in);
  rs_set_rows(g->last_read[LOOM_BUF_ACC], m->sram_base, rows, idx);
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
  int64_t off = rs_uop_append(g, 4ull * rnd(g, 4));
  off = rs_uop_append(g, 4ull * span_rows(m));
  if (off < 0) return 0;
  for (uint32_t k = 0; k < n; k++) {
    uint64_t row = (uint64_t)off / 4 + (k / m->x_size) * m->x_stride + k % m->x_size;
    loom_uop_encode(&u[k], g->seg[g->uop_seg].data + 4 * row);
  }
  m->segment = (uint32_t)g->uop_seg;
  m->dram_offset = (uint32_t)(off / 4);
  m->sram_base = g->win_lo[LOOM_BUF_UOP] + rnd(g, g->win_n[LOOM_BUF_UOP] - n + 1);
  int32_t idx = rs_emit(g, in);
  rs_set_rows(g->uop_owner, m->sram_base, n, idx);
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

void rs_gen_gemm(struct gen *g) {
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
  rs_need(g, TQ_L2C, w_in);
  rs_need(g, TQ_S2C, r_out);
  int32_t idx = rs_emit(g, in);
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

void rs_gen_alu(struct gen *g) {
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
  rs_need(g, TQ_S2C, r_out);
  int32_t idx = rs_emit(g, in);
  for (uint32_t i = 0; i < a->iter_out; i++)
    for (uint32_t j = 0; j < a->iter_in; j++)
      for (uint32_t k = 0; k < a->uop_end - a->uop_begin; k++)
        g->last_write[LOOM_BUF_ACC][u[k].acc + i * a->dst_factor_out + j * a->dst_factor_in] = idx;
  g->memo[1].valid = 1, g->memo[1].insn = in, g->memo[1].owner = g->uop_owner[a->uop_begin];
}

/* A GEMM or ALU whose loop does nothing (zero extent or empty uop range). */
void rs_gen_empty_loop(struct gen *g) {
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
  rs_emit(g, in);
}

void rs_gen_qcfg(struct gen *g) {
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
  rs_emit(g, in);
}

void rs_gen_nop(struct gen *g) { rs_emit_nop(g, (int)rnd(g, LOOM_Q_COUNT)); }

/* ---- planted errors ---- */

/* One instruction that raises an error; corruptions the encoder refuses
 * are applied to the bytes afterwards (encode_all() in randstream.c). */
void rs_plant_fault(struct gen *g) {
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
  g->fault_insn = rs_emit(g, in);
  /* a planted instruction produces no tokens anyone may rely on */
  rs_drop_pushes(g, g->fault_insn, loom_insn_queue(&in));
}

uint32_t rs_fault_error(int f) {
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

