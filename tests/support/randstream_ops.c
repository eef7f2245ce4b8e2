/*
 * randstream_ops.c - the random job generator's instructions, one
 * generator per kind (randstream.h, randstream_int.h).
 *
 * Each generator picks a legal instruction whose every SRAM access stays in
 * its buffer's working window, asks rs_need() for the tokens that order it
 * after the other modules' conflicting accesses, emits it, and records what
 * it read and wrote.  ISA v2 adds GEMM first/last/dw, ALU EPI, QCFG's
 * epilogue fields, GCFG, LOAD PAR/LUT and LOAD INP from OUT; the generators
 * keep them legal the same way (a PAR row an epilogue reads exists, a
 * depthwise window stays in INP's window) and knobs.v1_only leaves them out.
 */
#include "randstream_int.h"

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
void gen_load(struct gen *g, int buf, uint32_t lo, uint32_t n) {
  struct loom_insn in = {.opcode = LOOM_OP_LOAD};
  struct loom_insn_mem *m = &in.mem;
  m->buffer = (uint32_t)buf;
  m->src_int8 = buf == LOOM_BUF_ACC && chance(g, 30);
  m->wgt_transpose = buf == LOOM_BUF_WGT && !g->k.v1_only && chance(g, 40);
  uint32_t want = n ? n : range(g, 1, g->k.max_rows < g->win_n[buf] ? g->k.max_rows : g->win_n[buf]);
  if (n) m->y_size = 1, m->x_size = n, m->x_stride = n;
  else pick_shape(g, want, m);
  if (!n && buf != LOOM_BUF_WGT) pick_pads(g, m, g->win_n[buf]);
  if (chance(g, 20)) m->pad_value = (int32_t)rnd(g, 256) - 128; /* ignored without padding */
  int s = g->inputs[rnd(g, (uint32_t)g->n_inputs)];
  place_dram(g, m, s, loom_hw_row_bytes(g->cfg, buf, (int)m->src_int8));
  uint32_t rows = sram_rows(m);
  m->sram_base = n ? lo : g->win_lo[buf] + rnd(g, g->win_n[buf] - rows + 1);
  if (buf == LOOM_BUF_ACC) {
    rs_need(g, TQ_S2C, max_last(g->last_read[buf], m->sram_base, rows));
    rs_need(g, TQ_L2C, max_last(g->out_load_read, m->sram_base, rows));
  } else {
    rs_need(g, TQ_C2L, max_last(g->last_read[buf], m->sram_base, rows));
  }
  int32_t idx = rs_emit(g, in);
  set_rows(g->last_write[buf], m->sram_base, rows, idx);
}

/* A transfer with a zero size: a no-op that checks no bounds at all. */
void gen_empty_transfer(struct gen *g) {
  static const int bufs[] = {LOOM_BUF_INP, LOOM_BUF_WGT, LOOM_BUF_ACC, LOOM_BUF_UOP, LOOM_BUF_OUT,
                             LOOM_BUF_PAR, LOOM_BUF_LUT};
  struct loom_insn in = {.opcode = LOOM_OP_LOAD};
  struct loom_insn_mem *m = &in.mem;
  m->buffer = (uint32_t)bufs[rnd(g, g->k.v1_only ? 5 : 7)];
  if (m->buffer == LOOM_BUF_OUT) in.opcode = LOOM_OP_STORE;
  m->sram_base = rnd(g, 1u << 16);
  m->segment = rnd(g, LOOM_NUM_SEGMENTS);
  if (!g->k.v1_only && m->buffer == LOOM_BUF_INP && chance(g, 30)) m->src_out = 1, m->segment = 0;
  if (!g->k.v1_only && m->buffer == LOOM_BUF_WGT && chance(g, 30)) m->wgt_transpose = 1;
  m->dram_offset = rnd(g, 1u << 28);
  m->x_size = chance(g, 50) ? 0 : rnd(g, 100);
  m->y_size = m->x_size ? 0 : rnd(g, 100);
  m->x_stride = rnd(g, 1u << 16);
  rs_emit(g, in);
}

void gen_store(struct gen *g, uint32_t lo, uint32_t n) {
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
  rs_need(g, TQ_C2S, max_last(g->last_write[LOOM_BUF_ACC], m->sram_base, rows));
  int32_t idx = rs_emit(g, in);
  set_rows(g->last_read[LOOM_BUF_ACC], m->sram_base, rows, idx);
}

/* The largest INP row offset of the depthwise window (GCFG), 0 for none. */
static uint32_t dw_max_off(const struct gen *g) {
  uint32_t kh = g->gcfg.dw_kh, t_n = kh * g->gcfg.dw_kw, m = 0;
  if (t_n > (uint32_t)g->cfg->block_in) t_n = (uint32_t)g->cfg->block_in;
  for (uint32_t t = 0; t < t_n; t++) {
    uint32_t off = (t % kh) * g->gcfg.dw_row + (t / kh) * g->gcfg.dw_col;
    if (off > m) m = off;
  }
  return m;
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
uint32_t load_uops(struct gen *g, const struct loom_uop *u, uint32_t n) {
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
                         int32_t *w_in, int32_t *r_out, int32_t *r_load) {
  for (uint32_t i = 0; i < gm->iter_out; i++)
    for (uint32_t j = 0; j < gm->iter_in; j++)
      for (uint32_t k = 0; k < gm->uop_end - gm->uop_begin; k++) {
        uint32_t a = u[k].acc + i * gm->acc_factor_out + j * gm->acc_factor_in;
        uint32_t x = u[k].inp + i * gm->inp_factor_out + j * gm->inp_factor_in;
        uint32_t w = u[k].wgt + i * gm->wgt_factor_out + j * gm->wgt_factor_in;
        if (g->last_read[LOOM_BUF_ACC][a] > *r_out) *r_out = g->last_read[LOOM_BUF_ACC][a];
        if (g->out_load_read[a] > *r_load) *r_load = g->out_load_read[a];
        if (gm->reset) continue;
        if (g->last_write[LOOM_BUF_WGT][w] > *w_in) *w_in = g->last_write[LOOM_BUF_WGT][w];
        uint32_t reach = gm->dw ? dw_max_off(g) : 0;
        for (uint32_t r = x; r <= x + reach; r++) /* every tap lies in [x, x + reach] */
          if (g->last_write[LOOM_BUF_INP][r] > *w_in) *w_in = g->last_write[LOOM_BUF_INP][r];
      }
}

static void gemm_mark(struct gen *g, const struct loom_insn_gemm *gm, const struct loom_uop *u,
                      int32_t idx) {
  for (uint32_t i = 0; i < gm->iter_out; i++)
    for (uint32_t j = 0; j < gm->iter_in; j++)
      for (uint32_t k = 0; k < gm->uop_end - gm->uop_begin; k++) {
        g->last_write[LOOM_BUF_ACC][u[k].acc + i * gm->acc_factor_out + j * gm->acc_factor_in] = idx;
        if (gm->reset) continue;
        uint32_t x = u[k].inp + i * gm->inp_factor_out + j * gm->inp_factor_in;
        uint32_t reach = gm->dw ? dw_max_off(g) : 0;
        for (uint32_t r = x; r <= x + reach; r++) g->last_read[LOOM_BUF_INP][r] = idx;
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
 * resetting GEMM may use since it reads neither INP nor WGT.  A depthwise
 * GEMM keeps every window tap inside INP's window. */
static int new_gemm(struct gen *g, struct loom_insn *in, struct loom_uop *u) {
  struct loom_insn_gemm *gm = &in->gemm;
  uint32_t n, io, ii, reach = gm->dw ? dw_max_off(g) : 0;
  if (reach >= g->win_n[LOOM_BUF_INP]) gm->dw = 0, reach = 0;
  pick_extents(g, &n, &io, &ii);
  gm->iter_out = io, gm->iter_in = ii;
  uint32_t ba = pick_factors(g, g->win_n[LOOM_BUF_ACC], io, ii, 2047, &gm->acc_factor_out,
                             &gm->acc_factor_in);
  uint32_t bx = pick_factors(g, g->win_n[LOOM_BUF_INP] - reach, io, ii, 2047, &gm->inp_factor_out,
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

/* A QCFG whose epilogue rows cover inner iterations 0 .. ii-1 (or that
 * takes the QCFG bias and multiplier), emitted when the current one does
 * not: every epilogue of the stream reads a loaded PAR row. */
static void epilogue_rows(struct gen *g, uint32_t ii) {
  if (g->qcfg.par_src || g->qcfg.par_base + ii <= LOOM_PAR_ROWS) return;
  gen_qcfg(g);
  if (g->qcfg.par_src || g->qcfg.par_base + ii <= LOOM_PAR_ROWS) return;
  struct loom_insn in = {.opcode = LOOM_OP_QCFG};
  in.qcfg = g->qcfg;
  in.qcfg.par_base = rnd(g, LOOM_PAR_ROWS - ii + 1);
  g->qcfg = in.qcfg;
  rs_emit(g, in);
}

/* The PAR rows (and the LUT row) an epilogue over ii inner iterations
 * reads: the latest load writing them into *w, or (idx >= 0) mark them
 * read by instruction idx.  PAR and LUT are loaded by the load module. */
static void epilogue_reads(struct gen *g, uint32_t ii, int32_t *w, int32_t idx) {
  uint32_t lo = g->qcfg.par_base, n = g->qcfg.par_src || lo >= LOOM_PAR_ROWS ? 0 : ii;
  if (lo + n > LOOM_PAR_ROWS) n = LOOM_PAR_ROWS - lo;
  if (idx >= 0) {
    set_rows(g->last_read[LOOM_BUF_PAR], lo, n, idx);
    if (g->qcfg.act) g->last_read[LOOM_BUF_LUT][0] = idx;
    return;
  }
  int32_t v = max_last(g->last_write[LOOM_BUF_PAR], lo, n);
  if (v > *w) *w = v;
  if (g->qcfg.act && g->last_write[LOOM_BUF_LUT][0] > *w) *w = g->last_write[LOOM_BUF_LUT][0];
}

static struct loom_insn pick_gcfg(struct gen *g);

/* A GEMM; a new depthwise one now and then takes a new window from a GCFG
 * emitted right before it (after its micro-op load and QCFG, with the
 * tokens it needs), so that it may start two cycles after the GCFG, the
 * first cycle loom_qgcfg's derived window values are final. */
void gen_gemm(struct gen *g) {
  struct loom_insn in = {.opcode = LOOM_OP_GEMM}, gcfg = {.opcode = LOOM_OP_NOP};
  struct loom_uop u[8];
  int reset = chance(g, 25), wild;
  if (memo_valid(g, 0) && chance(g, 30)) {
    in = g->memo[0].insn;
    in.pop_prev = in.pop_next = in.push_prev = in.push_next = 0;
    uops_of(g, in.gemm.uop_begin, in.gemm.uop_end, u);
    wild = g->memo[0].wild;
    in.gemm.reset = (uint32_t)(reset || wild);
    if (in.gemm.dw && g->memo[0].reach != dw_max_off(g)) in.gemm.dw = 0; /* GCFG changed */
  } else {
    in.gemm.reset = (uint32_t)reset;
    in.gemm.dw = !reset && !g->k.v1_only && chance(g, 30);
    if (in.gemm.dw && chance(g, 40)) gcfg = pick_gcfg(g);
    wild = new_gemm(g, &in, u);
  }
  if (in.gemm.reset) in.gemm.first = in.gemm.last = in.gemm.dw = 0;
  else if (!g->k.v1_only) in.gemm.first = (uint32_t)chance(g, 35), in.gemm.last = (uint32_t)chance(g, 35);
  if (in.gemm.last) epilogue_rows(g, in.gemm.iter_in);
  int32_t w_in = -1, r_out = -1, r_load = -1;
  gemm_hazards(g, &in.gemm, u, &w_in, &r_out, &r_load);
  if (in.gemm.last) epilogue_reads(g, in.gemm.iter_in, &w_in, -1);
  rs_need(g, TQ_L2C, w_in > r_load ? w_in : r_load);
  rs_need(g, TQ_S2C, r_out);
  if (gcfg.opcode == LOOM_OP_GCFG) rs_emit(g, gcfg); /* takes the pops rs_need left pending */
  int32_t idx = rs_emit(g, in);
  gemm_mark(g, &in.gemm, u, idx);
  if (in.gemm.last) epilogue_reads(g, in.gemm.iter_in, NULL, idx);
  g->memo[0].valid = 1, g->memo[0].wild = wild, g->memo[0].insn = in, g->memo[0].reach = dw_max_off(g);
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

void gen_alu(struct gen *g) {
  struct loom_insn in = {.opcode = LOOM_OP_ALU};
  struct loom_uop u[8];
  if (memo_valid(g, 1) && chance(g, 30)) {
    in = g->memo[1].insn;
    in.pop_prev = in.pop_next = in.push_prev = in.push_next = 0;
    uops_of(g, in.alu.uop_begin, in.alu.uop_end, u);
  } else {
    new_alu(g, &in, u);
  }
  in.alu.alu_op = rnd(g, g->k.v1_only ? LOOM_ALU_EPI : LOOM_ALU_COUNT);
  in.alu.use_imm = (uint32_t)chance(g, 50);
  in.alu.imm = rnd_imm(g, in.alu.alu_op);
  if (in.alu.alu_op == LOOM_ALU_EPI) epilogue_rows(g, in.alu.iter_in);
  int32_t r_out = -1, r_load = -1;
  const struct loom_insn_alu *a = &in.alu;
  for (uint32_t i = 0; i < a->iter_out; i++)
    for (uint32_t j = 0; j < a->iter_in; j++)
      for (uint32_t k = 0; k < a->uop_end - a->uop_begin; k++) {
        uint32_t d = u[k].acc + i * a->dst_factor_out + j * a->dst_factor_in;
        if (g->last_read[LOOM_BUF_ACC][d] > r_out) r_out = g->last_read[LOOM_BUF_ACC][d];
        if (g->out_load_read[d] > r_load) r_load = g->out_load_read[d];
      }
  int epi = in.alu.alu_op == LOOM_ALU_EPI;
  if (epi) epilogue_reads(g, a->iter_in, &r_load, -1);
  rs_need(g, TQ_S2C, r_out);
  rs_need(g, TQ_L2C, r_load);
  int32_t idx = rs_emit(g, in);
  if (epi) epilogue_reads(g, a->iter_in, NULL, idx);
  for (uint32_t i = 0; i < a->iter_out; i++)
    for (uint32_t j = 0; j < a->iter_in; j++)
      for (uint32_t k = 0; k < a->uop_end - a->uop_begin; k++)
        g->last_write[LOOM_BUF_ACC][u[k].acc + i * a->dst_factor_out + j * a->dst_factor_in] = idx;
  g->memo[1].valid = 1, g->memo[1].insn = in, g->memo[1].owner = g->uop_owner[a->uop_begin];
}

/* A GEMM or ALU whose loop does nothing (zero extent or empty uop range). */
void gen_empty_loop(struct gen *g) {
  struct loom_insn in = {.opcode = chance(g, 50) ? LOOM_OP_GEMM : LOOM_OP_ALU};
  int gemm = in.opcode == LOOM_OP_GEMM;
  uint32_t b = rnd(g, 1u << 13), e = rnd(g, 1u << 14), io = rnd(g, 1u << (gemm ? 12 : 14)),
           ii = rnd(g, 1u << (gemm ? 12 : 14));
  switch (rnd(g, 3)) {
  case 0: io = 0; break;
  case 1: ii = 0; break;
  default: e = b - (b ? rnd(g, b + 1) : 0); break;
  }
  if (in.opcode == LOOM_OP_GEMM) {
    in.gemm.uop_begin = b, in.gemm.uop_end = e, in.gemm.iter_out = io, in.gemm.iter_in = ii;
    in.gemm.reset = rnd(g, 2);
    if (!in.gemm.reset && !g->k.v1_only)
      in.gemm.first = rnd(g, 2), in.gemm.last = rnd(g, 2), in.gemm.dw = rnd(g, 2);
  } else {
    in.alu.uop_begin = b, in.alu.uop_end = e, in.alu.iter_out = io, in.alu.iter_in = ii;
    in.alu.alu_op = rnd(g, g->k.v1_only ? LOOM_ALU_EPI : LOOM_ALU_COUNT);
    in.alu.use_imm = rnd(g, 2);
  }
  rs_emit(g, in);
}

void gen_qcfg(struct gen *g) {
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
  if (!g->k.v1_only) {
    q->bias = rnd_i32(g);
    q->par_src = (uint32_t)chance(g, 25);
    q->act = (uint32_t)chance(g, 40);
    q->par_base = chance(g, 85) ? rnd(g, LOOM_PAR_ROWS) : rnd(g, 256); /* may be past PAR: unused */
  }
  g->qcfg = *q;
  rs_emit(g, in);
}

/* ---- ISA v2 ---- */

/* The GEMM registers: a period for first/last and a depthwise window that
 * mostly fits the INP window (new_gemm drops dw when it does not).
 * pick_gcfg sets them in g->gcfg and returns the GCFG, for the caller to
 * emit. */
static struct loom_insn pick_gcfg(struct gen *g) {
  struct loom_insn in = {.opcode = LOOM_OP_GCFG};
  struct loom_insn_gcfg *c = &in.gcfg;
  c->period = chance(g, 80) ? range(g, 1, 9) : rnd(g, 64);
  c->dw_kh = chance(g, 90) ? range(g, 1, 4) : rnd(g, 16);
  c->dw_kw = chance(g, 90) ? range(g, 1, 4) : rnd(g, 16);
  c->dw_row = chance(g, 70) ? range(g, 1, 12) : rnd(g, 40);
  c->dw_col = chance(g, 80) ? range(g, 1, 2) : rnd(g, 8);
  g->gcfg = *c;
  return in;
}

void gen_gcfg(struct gen *g) { rs_emit(g, pick_gcfg(g)); }

/* LOAD PAR of rows [lo, lo + n) (load queue: after the epilogues that
 * read those rows). */
void gen_par_load(struct gen *g, uint32_t lo, uint32_t n) {
  struct loom_insn in = {.opcode = LOOM_OP_LOAD};
  struct loom_insn_mem *m = &in.mem;
  m->buffer = LOOM_BUF_PAR;
  m->x_size = n, m->y_size = 1, m->x_stride = n;
  if (n > 1 && chance(g, 30)) m->x_size = 1, m->y_size = n, m->x_stride = range(g, 1, 3);
  place_dram(g, m, g->inputs[rnd(g, (uint32_t)g->n_inputs)], loom_hw_row_bytes(g->cfg, LOOM_BUF_PAR, 0));
  m->sram_base = lo;
  rs_need(g, TQ_C2L, max_last(g->last_read[LOOM_BUF_PAR], lo, n));
  int32_t idx = rs_emit(g, in);
  set_rows(g->last_write[LOOM_BUF_PAR], lo, n, idx);
}

void gen_lut_load(struct gen *g) {
  struct loom_insn in = {.opcode = LOOM_OP_LOAD};
  in.mem.buffer = LOOM_BUF_LUT;
  in.mem.x_size = in.mem.y_size = in.mem.x_stride = 1;
  place_dram(g, &in.mem, g->inputs[rnd(g, (uint32_t)g->n_inputs)], LOOM_LUT_ENTRIES);
  rs_need(g, TQ_C2L, g->last_read[LOOM_BUF_LUT][0]);
  g->last_write[LOOM_BUF_LUT][0] = rs_emit(g, in);
}

/* LOAD INP from OUT: OUT rows of the ACC window into INP's window, padded
 * now and then.  The load waits for compute's last write of its source
 * rows and for the GEMMs that still read its destination; compute waits
 * for it before writing the source rows again (gen_gemm, gen_alu). */
void gen_src_out(struct gen *g) {
  struct loom_insn in = {.opcode = LOOM_OP_LOAD};
  struct loom_insn_mem *m = &in.mem;
  uint32_t cap = g->win_n[LOOM_BUF_ACC] < g->win_n[LOOM_BUF_INP] ? g->win_n[LOOM_BUF_ACC] : g->win_n[LOOM_BUF_INP];
  m->buffer = LOOM_BUF_INP;
  m->src_out = 1;
  pick_shape(g, range(g, 1, cap < g->k.max_rows ? cap : g->k.max_rows), m);
  while (span_rows(m) > g->win_n[LOOM_BUF_ACC]) { /* the source stays in the ACC window */
    if (m->x_stride > m->x_size) m->x_stride = m->x_size;
    else if (m->y_size > 1) m->y_size--;
    else m->x_size--;
  }
  pick_pads(g, m, g->win_n[LOOM_BUF_INP]);
  uint32_t span = (uint32_t)span_rows(m), rows = sram_rows(m);
  m->dram_offset = g->win_lo[LOOM_BUF_ACC] + rnd(g, g->win_n[LOOM_BUF_ACC] - span + 1);
  m->sram_base = g->win_lo[LOOM_BUF_INP] + rnd(g, g->win_n[LOOM_BUF_INP] - rows + 1);
  int32_t w = -1;
  for (uint32_t y = 0; y < m->y_size; y++)
    for (uint32_t x = 0; x < m->x_size; x++) {
      int32_t v = g->last_write[LOOM_BUF_ACC][m->dram_offset + y * m->x_stride + x];
      if (v > w) w = v;
    }
  int32_t r = max_last(g->last_read[LOOM_BUF_INP], m->sram_base, rows);
  rs_need(g, TQ_C2L, w > r ? w : r);
  int32_t idx = rs_emit(g, in);
  set_rows(g->last_write[LOOM_BUF_INP], m->sram_base, rows, idx);
  for (uint32_t y = 0; y < m->y_size; y++)
    for (uint32_t x = 0; x < m->x_size; x++) g->out_load_read[m->dram_offset + y * m->x_stride + x] = idx;
}

void gen_nop(struct gen *g) { rs_emit_nop(g, (int)rnd(g, LOOM_Q_COUNT)); }

