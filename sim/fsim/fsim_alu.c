/*
 * fsim_alu.c - the vector ALU on accumulator rows, QCFG and GCFG, and the
 * epilogue E() that GEMM `last` and ALU EPI apply.
 *
 *   for i < iter_out, j < iter_in, u in [uop_begin, uop_end):
 *     d = UOP[u].acc + i * dst_factor_out + j * dst_factor_in
 *     s = UOP[u].inp + i * src_factor_out + j * src_factor_in
 *     ACC[d][lane] = op(ACC[d][lane], use_imm ? sext16(imm) : ACC[s][lane])
 *     OUT[d] = sat8(ACC[d])
 *
 * The b operand is copied into a scratch row first, so d == s (an op of a
 * row with itself) needs no care and each op is one plain loop.  Wrapping
 * ops (ADD, MUL) compute in uint32, where wrap is defined; the rounding
 * shifts compute in int64, which holds every intermediate: SHR's a + 2^30
 * trivially, and REQUANT's p = a * m (|p| <= 2^62) is rounded without ever
 * forming the 65-bit sum p + 2^(s-1) of docs/isa.md: floor(p / 2^s) plus one
 * when the dropped low bits are at least half, which is the same number.
 */
#include <string.h>

#include "sim/fsim/fsim_internal.h"

static int32_t shr_round(int32_t a, int32_t v) {
  uint32_t n = (uint32_t)v & 31u;
  if (n == 0) return a;
  return (int32_t)(((int64_t)a + ((int64_t)1 << (n - 1))) >> n);
}

/* p / 2^s rounded half up, or half to even with round_even. */
static int64_t round_shift(int64_t p, uint32_t s, uint32_t round_even) {
  if (s == 0) return p;
  uint64_t dropped = (uint64_t)p & ((UINT64_C(1) << s) - 1);
  uint64_t half = UINT64_C(1) << (s - 1);
  int64_t r = (p >> s) + (dropped >= half);
  if (round_even && dropped == half && ((uint64_t)r & 1u)) r--;
  return r;
}

static int32_t requant(int32_t a, int32_t m, const struct loom_insn_qcfg *q) {
  int64_t y = round_shift((int64_t)a * m, q->shift, q->round_even) + q->zero_point;
  if (y < q->clamp_lo) y = q->clamp_lo;
  if (y > q->clamp_hi) y = q->clamp_hi; /* so clamp_lo > clamp_hi gives clamp_hi */
  return (int32_t)y;
}

void fsim_epilogue(const struct fsim *sim, const int32_t *v, uint32_t p, int32_t *y) {
  const struct loom_insn_qcfg *q = &sim->st.qcfg;
  uint32_t n = sim->acc_elems;
  const int32_t *bias = q->par_src ? NULL : sim->par + (size_t)p * 2 * n, *mult = bias ? bias + n : NULL;
  for (uint32_t i = 0; i < n; i++) {
    int32_t t = (int32_t)((uint32_t)v[i] + (uint32_t)(bias ? bias[i] : q->bias));
    int32_t r = requant(t, mult ? mult[i] : q->multiplier, q);
    y[i] = q->act ? (int8_t)sim->lut[(uint8_t)r] : r;
  }
}

uint32_t fsim_par_row(struct fsim *sim, const struct fsim_slot *s, uint32_t u, uint32_t i, uint32_t j) {
  const struct loom_insn_qcfg *q = &sim->st.qcfg;
  uint32_t p = q->par_base + j;
  if (q->par_src || p < LOOM_PAR_ROWS) return p;
  fsim_fail(sim, LOOM_ERR_SRAM, s, "micro-op %u (i=%u, j=%u): PAR row %u is past the buffer's %u rows", u,
            i, j, p, LOOM_PAR_ROWS);
  return UINT32_MAX;
}

_Static_assert(LOOM_ALU_COUNT == 8, "alu_row() handles every ALU op");

/* d[lane] = op(d[lane], v[lane]) for one ACC row. */
static void alu_row(const struct loom_insn_alu *in, int32_t *restrict d, const int32_t *restrict v,
                    uint32_t n, const struct loom_insn_qcfg *q) {
  switch (in->alu_op) {
  case LOOM_ALU_ADD:
    for (uint32_t i = 0; i < n; i++) d[i] = (int32_t)((uint32_t)d[i] + (uint32_t)v[i]);
    break;
  case LOOM_ALU_MAX:
    for (uint32_t i = 0; i < n; i++) d[i] = d[i] > v[i] ? d[i] : v[i];
    break;
  case LOOM_ALU_MIN:
    for (uint32_t i = 0; i < n; i++) d[i] = d[i] < v[i] ? d[i] : v[i];
    break;
  case LOOM_ALU_SHR:
    for (uint32_t i = 0; i < n; i++) d[i] = shr_round(d[i], v[i]);
    break;
  case LOOM_ALU_MUL:
    for (uint32_t i = 0; i < n; i++) d[i] = (int32_t)((uint32_t)d[i] * (uint32_t)v[i]);
    break;
  case LOOM_ALU_MOV: memcpy(d, v, n * sizeof *d); break;
  case LOOM_ALU_REQUANT:
    /* the immediate form takes the QCFG multiplier, the vector form a per-lane one */
    for (uint32_t i = 0; i < n; i++) d[i] = requant(d[i], in->use_imm ? q->multiplier : v[i], q);
    break;
  case LOOM_ALU_EPI: LOOM_ASSERT(0 && "alu_pass applies EPI itself: it needs the PAR row"); break;
  default: LOOM_ASSERT(0 && "loom_insn_decode rejects undefined ALU ops");
  }
}

/* Loop state of one ALU instruction. */
struct alu_loop {
  const struct fsim_slot *s;
  uint32_t i, j;
  uint64_t ops;
};

static uint32_t bad_row(struct fsim *sim, const struct alu_loop *l, uint32_t u, const char *what,
                        uint32_t row, uint32_t rows) {
  return fsim_fail(sim, LOOM_ERR_SRAM, l->s,
                   "micro-op %u (i=%u, j=%u): %s row %u is past the buffer's %u rows", u, l->i,
                   l->j, what, row, rows);
}

/* One pass over the micro-ops for iteration (l->i, l->j). */
static uint32_t alu_pass(struct fsim *sim, struct alu_loop *l) {
  const struct loom_insn_alu *in = &l->s->insn.alu;
  uint32_t dd = l->i * in->dst_factor_out + l->j * in->dst_factor_in;
  uint32_t ds = l->i * in->src_factor_out + l->j * in->src_factor_in;
  uint32_t n = sim->acc_elems;
  for (uint32_t u = in->uop_begin; u < in->uop_end; u++) {
    if (u >= sim->uop_rows) return bad_row(sim, l, u, "UOP", u, sim->uop_rows);
    uint32_t d = sim->uop_scratch[u].acc + dd, s = sim->uop_scratch[u].inp + ds;
    if (d >= sim->acc_rows) return bad_row(sim, l, u, "destination ACC", d, sim->acc_rows);
    if (!in->use_imm) {
      if (s >= sim->acc_rows) return bad_row(sim, l, u, "source ACC", s, sim->acc_rows);
      memcpy(sim->alu_operand, sim->acc + (size_t)s * n, n * sizeof(int32_t));
    }
    uint32_t p = 0;
    if (in->alu_op == LOOM_ALU_EPI && (p = fsim_par_row(sim, l->s, u, l->i, l->j)) == UINT32_MAX)
      return LOOM_ERR_SRAM;
    if (!fsim_charge(sim, l->s, 1)) return LOOM_ERR_TIMEOUT;
    int32_t *row = sim->acc + (size_t)d * n;
    if (in->alu_op == LOOM_ALU_EPI) fsim_epilogue(sim, in->use_imm ? row : sim->alu_operand, p, row);
    else alu_row(in, row, sim->alu_operand, n, &sim->st.qcfg);
    fsim_mirror_row(sim, d);
    l->ops++;
  }
  return LOOM_ERR_NONE;
}

uint32_t fsim_alu(struct fsim *sim, const struct fsim_slot *s) {
  const struct loom_insn_alu *in = &s->insn.alu;
  if (in->iter_out == 0 || in->iter_in == 0 || in->uop_end <= in->uop_begin) return LOOM_ERR_NONE;
  fsim_decode_uops(sim, in->uop_begin, in->uop_end);
  if (in->use_imm)
    for (uint32_t i = 0; i < sim->acc_elems; i++) sim->alu_operand[i] = in->imm;
  struct alu_loop l = {.s = s};
  uint32_t err = LOOM_ERR_NONE;
  for (l.i = 0; l.i < in->iter_out && !err; l.i++)
    for (l.j = 0; l.j < in->iter_in && !err; l.j++) err = alu_pass(sim, &l);
  sim->st.res->counters[LOOM_CNT_ALU_OPS] += l.ops;
  if (sim->timing && !err) fsim_timing_alu(sim->timing, s->index, in, sim->uop_scratch);
  return err;
}

void fsim_qcfg(struct fsim *sim, const struct fsim_slot *s) { sim->st.qcfg = s->insn.qcfg; }

void fsim_gcfg(struct fsim *sim, const struct fsim_slot *s) { sim->st.gcfg = s->insn.gcfg; }
