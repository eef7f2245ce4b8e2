/*
 * ref_v2.c - docs/isa.md's ISA version 2 operations transcribed (see
 * ref_v2.h).  Wide arithmetic (int64) everywhere, the document's names, and
 * the REQUANT of ref_ops.c, so the only new formulas are the epilogue's bias
 * and table, the depthwise dot product and the first/last selection.
 */
#include "ref_v2.h"

#include <stdlib.h>
#include <string.h>

#include "ref_ops.h"

int32_t ref_epilogue(int32_t v, int32_t bias, int32_t mult, const struct loom_insn_qcfg *q,
                     const uint8_t lut[LOOM_LUT_ENTRIES]) {
  int32_t t = ref_wrap32((int64_t)v + (int64_t)bias); /* (v + bias) mod 2^32 */
  int32_t y = ref_requant(t, mult, q);
  if (!q->act) return y;
  int64_t index = ((int64_t)y % 256 + 256) % 256; /* y mod 256: the int8 bit pattern */
  return (int8_t)lut[index];
}

uint32_t ref_dw_taps(const struct loom_insn_gcfg *gc, uint32_t block_in) {
  uint64_t t = (uint64_t)gc->dw_kh * gc->dw_kw;
  return t < block_in ? (uint32_t)t : block_in;
}

/* t = column * dw_kh + row */
uint32_t ref_dw_off(const struct loom_insn_gcfg *gc, uint32_t t) {
  uint32_t row = t % gc->dw_kh, column = t / gc->dw_kh;
  return row * gc->dw_row + column * gc->dw_col;
}

void ref_machine_init(struct ref_machine *m, const struct loom_hw_config *cfg) {
  memset(m, 0, sizeof *m);
  m->batch = (uint32_t)cfg->batch, m->block_in = (uint32_t)cfg->block_in;
  m->block_out = (uint32_t)cfg->block_out;
  m->inp_rows = (uint32_t)cfg->inp_rows, m->wgt_rows = (uint32_t)cfg->wgt_rows;
  m->acc_rows = (uint32_t)cfg->acc_rows, m->uop_rows = (uint32_t)cfg->uop_rows;
  uint32_t lanes = m->batch * m->block_out;
  m->inp = calloc((size_t)m->inp_rows * m->batch * m->block_in, 1);
  m->wgt = calloc((size_t)m->wgt_rows * m->block_out * m->block_in, 1);
  m->acc = calloc((size_t)m->acc_rows * lanes, sizeof *m->acc);
  m->out = calloc((size_t)m->acc_rows * lanes, 1);
  m->par = calloc((size_t)LOOM_PAR_ROWS * 2 * lanes, sizeof *m->par);
  m->uops = calloc(m->uop_rows, sizeof *m->uops);
}

void ref_machine_free(struct ref_machine *m) {
  free(m->inp), free(m->wgt), free(m->acc), free(m->out), free(m->par), free(m->uops);
  memset(m, 0, sizeof *m);
}

/* E(ACC[a]) with PAR row p (or QCFG's values) into OUT[a]. */
static void epilogue_row(struct ref_machine *m, const int32_t *v, uint32_t p, int32_t *y) {
  uint32_t lanes = m->batch * m->block_out;
  for (uint32_t l = 0; l < lanes; l++) {
    int32_t bias = m->q.par_src ? m->q.bias : m->par[((size_t)p * 2) * lanes + l];
    int32_t mult = m->q.par_src ? m->q.multiplier : m->par[((size_t)p * 2 + 1) * lanes + l];
    y[l] = ref_epilogue(v[l], bias, mult, &m->q, m->lut);
  }
}

/* dot(x, w)[b][o]: dense or depthwise. */
static int64_t dot(const struct ref_machine *m, int dw, uint32_t x, uint32_t w, uint32_t b, uint32_t o) {
  int64_t sum = 0;
  const int8_t *wrow = m->wgt + (size_t)w * m->block_out * m->block_in + (size_t)o * m->block_in;
  if (!dw) {
    const int8_t *xrow = m->inp + (size_t)x * m->batch * m->block_in + (size_t)b * m->block_in;
    for (uint32_t k = 0; k < m->block_in; k++) sum += (int64_t)xrow[k] * wrow[k];
    return sum;
  }
  for (uint32_t t = 0; t < ref_dw_taps(&m->gc, m->block_in); t++) {
    uint32_t row = x + ref_dw_off(&m->gc, t);
    sum += (int64_t)m->inp[(size_t)row * m->batch * m->block_in + (size_t)b * m->block_in + o % m->block_in] *
           wrow[t];
  }
  return sum;
}

/* The SRAM checks of one micro-op, in the document's order. */
static int gemm_indices_ok(const struct ref_machine *m, const struct loom_insn_gemm *g, uint32_t u, uint32_t a,
                           uint32_t x, uint32_t w) {
  if (u >= m->uop_rows || a >= m->acc_rows) return 0;
  if (g->reset) return 1;
  if (!g->dw && x >= m->inp_rows) return 0;
  for (uint32_t t = 0; g->dw && t < ref_dw_taps(&m->gc, m->block_in); t++)
    if ((uint64_t)x + ref_dw_off(&m->gc, t) >= m->inp_rows) return 0;
  return w < m->wgt_rows;
}

uint32_t ref_gemm(struct ref_machine *m, const struct loom_insn_gemm *g, uint64_t *done) {
  uint32_t lanes = m->batch * m->block_out, period = m->gc.period > 1 ? m->gc.period : 1;
  int32_t sum[256], y[256];
  uint64_t n = 0;
  uint32_t err = LOOM_ERR_NONE;
  for (uint32_t i = 0; i < g->iter_out && !err; i++)
    for (uint32_t j = 0; j < g->iter_in && !err; j++)
      for (uint32_t u = g->uop_begin; u < g->uop_end && !err; u++) {
        uint32_t r = u - g->uop_begin;
        const struct loom_uop *op = u < m->uop_rows ? &m->uops[u] : NULL;
        uint32_t a = op ? op->acc + i * g->acc_factor_out + j * g->acc_factor_in : 0;
        uint32_t x = op ? op->inp + i * g->inp_factor_out + j * g->inp_factor_in : 0;
        uint32_t w = op ? op->wgt + i * g->wgt_factor_out + j * g->wgt_factor_in : 0;
        int first_op = g->first && i == 0 && r % period == 0;
        int final_op = g->last && i == g->iter_out - 1 && r % period == period - 1;
        uint32_t p = m->q.par_base + j;
        if (!gemm_indices_ok(m, g, u, a, x, w) || (final_op && !m->q.par_src && p >= LOOM_PAR_ROWS)) {
          err = LOOM_ERR_SRAM;
          break;
        }
        int32_t *acc = m->acc + (size_t)a * lanes;
        int8_t *out = m->out + (size_t)a * lanes;
        if (g->reset) {
          memset(acc, 0, lanes * sizeof *acc), memset(out, 0, lanes);
        } else {
          for (uint32_t b = 0; b < m->batch; b++)
            for (uint32_t o = 0; o < m->block_out; o++) {
              uint32_t l = b * m->block_out + o;
              int64_t old = first_op ? 0 : acc[l];
              sum[l] = ref_wrap32(old + dot(m, (int)g->dw, x, w, b, o));
            }
          memcpy(acc, sum, lanes * sizeof *acc);
          if (!g->last)
            for (uint32_t l = 0; l < lanes; l++) out[l] = ref_sat8(sum[l]);
          if (final_op) {
            epilogue_row(m, sum, p, y);
            for (uint32_t l = 0; l < lanes; l++) out[l] = (int8_t)y[l];
          }
        }
        n++;
      }
  if (done) *done = n;
  return err;
}

uint32_t ref_alu_epi(struct ref_machine *m, const struct loom_insn_alu *a, uint64_t *done) {
  uint32_t lanes = m->batch * m->block_out;
  int32_t y[256];
  uint64_t n = 0;
  uint32_t err = LOOM_ERR_NONE;
  for (uint32_t i = 0; i < a->iter_out && !err; i++)
    for (uint32_t j = 0; j < a->iter_in && !err; j++)
      for (uint32_t u = a->uop_begin; u < a->uop_end && !err; u++) {
        uint32_t d = u < m->uop_rows ? m->uops[u].acc + i * a->dst_factor_out + j * a->dst_factor_in : 0;
        uint32_t s = u < m->uop_rows ? m->uops[u].inp + i * a->src_factor_out + j * a->src_factor_in : 0;
        uint32_t p = m->q.par_base + j;
        if (u >= m->uop_rows || d >= m->acc_rows || (!a->use_imm && s >= m->acc_rows) ||
            (!m->q.par_src && p >= LOOM_PAR_ROWS)) {
          err = LOOM_ERR_SRAM;
          break;
        }
        epilogue_row(m, m->acc + (size_t)(a->use_imm ? d : s) * lanes, p, y); /* y is a copy: d == s is fine */
        for (uint32_t l = 0; l < lanes; l++) {
          m->acc[(size_t)d * lanes + l] = y[l];
          m->out[(size_t)d * lanes + l] = ref_sat8(y[l]);
        }
        n++;
      }
  if (done) *done = n;
  return err;
}

uint32_t ref_load_src_out(struct ref_machine *m, const struct loom_insn_mem *mem) {
  if (mem->x_size == 0 || mem->y_size == 0) return LOOM_ERR_NONE;
  uint64_t last = (uint64_t)mem->dram_offset + (uint64_t)(mem->y_size - 1) * mem->x_stride + mem->x_size;
  uint64_t w = (uint64_t)mem->x_pad_left + mem->x_size + mem->x_pad_right;
  uint64_t h = (uint64_t)mem->y_pad_top + mem->y_size + mem->y_pad_bottom;
  if (last > m->acc_rows || mem->sram_base + h * w > m->inp_rows) return LOOM_ERR_SRAM;
  uint32_t row_bytes = m->batch * m->block_in;
  for (uint64_t yy = 0; yy < h; yy++)
    for (uint64_t xx = 0; xx < w; xx++) {
      int8_t *dst = m->inp + (size_t)(mem->sram_base + yy * w + xx) * row_bytes;
      int pad = yy < mem->y_pad_top || yy >= mem->y_pad_top + mem->y_size || xx < mem->x_pad_left ||
                xx >= mem->x_pad_left + mem->x_size;
      if (pad) {
        memset(dst, (int8_t)mem->pad_value, row_bytes);
        continue;
      }
      uint64_t src = mem->dram_offset + (yy - mem->y_pad_top) * mem->x_stride + (xx - mem->x_pad_left);
      memcpy(dst, m->out + (size_t)src * m->batch * m->block_out, row_bytes);
    }
  return LOOM_ERR_NONE;
}

/* "LOAD WGT transposed": WGT[sram row][o][k] = DRAM row byte k * B + o. */
uint32_t ref_load_wgt(struct ref_machine *m, const struct loom_insn_mem *mem, const uint8_t *dram,
                      uint64_t dram_bytes) {
  if (mem->x_size == 0 || mem->y_size == 0) return LOOM_ERR_NONE;
  uint64_t r = (uint64_t)m->block_out * m->block_in;
  uint64_t last = (uint64_t)mem->dram_offset + (uint64_t)(mem->y_size - 1) * mem->x_stride + mem->x_size;
  if (dram_bytes == 0 || last * r > dram_bytes) return LOOM_ERR_SEGMENT;
  if (mem->sram_base + (uint64_t)mem->y_size * mem->x_size > m->wgt_rows) return LOOM_ERR_SRAM;
  uint32_t b = m->block_in; /* == block_out */
  for (uint64_t y = 0; y < mem->y_size; y++)
    for (uint64_t x = 0; x < mem->x_size; x++) {
      const uint8_t *src = dram + (mem->dram_offset + y * mem->x_stride + x) * r;
      int8_t *dst = m->wgt + (size_t)(mem->sram_base + y * mem->x_size + x) * r;
      for (uint32_t o = 0; o < m->block_out; o++)
        for (uint32_t k = 0; k < m->block_in; k++)
          dst[o * m->block_in + k] = (int8_t)(mem->wgt_transpose ? src[k * b + o] : src[o * m->block_in + k]);
    }
  return LOOM_ERR_NONE;
}
