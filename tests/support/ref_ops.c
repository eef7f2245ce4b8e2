/*
 * ref_ops.c - docs/isa.md transcribed (see ref_ops.h).
 *
 * Style on purpose: one formula per function, the document's names, no
 * shifts of signed values, no reliance on wrap-around.  REQUANT's sum
 * p + 2^(s-1) needs 65 bits when s = 63, so it is done in __int128, which
 * GCC and Clang provide on every 64-bit host the tests run on.
 */
#include "ref_ops.h"

#include <string.h>

int8_t ref_sat8(int64_t v) {
  if (v < -128) return -128;
  if (v > 127) return 127;
  return (int8_t)v;
}

int32_t ref_wrap32(int64_t v) {
  const int64_t two32 = INT64_C(4294967296);
  int64_t r = v % two32;          /* in (-2^32, 2^32) */
  if (r < 0) r += two32;          /* in [0, 2^32) */
  if (r >= two32 / 2) r -= two32; /* in [-2^31, 2^31) */
  return (int32_t)r;
}

int64_t ref_floor_div(int64_t num, int64_t den) {
  int64_t q = num / den; /* truncates toward zero */
  if (num % den != 0 && num < 0) q -= 1;
  return q;
}

int32_t ref_gemm_lane(int32_t acc, const int8_t *x, const int8_t *w, int n) {
  int64_t sum = acc;
  for (int k = 0; k < n; k++) sum += (int64_t)x[k] * (int64_t)w[k];
  return ref_wrap32(sum);
}

int32_t ref_add(int32_t a, int32_t v) { return ref_wrap32((int64_t)a + (int64_t)v); }

int32_t ref_max(int32_t a, int32_t v) { return a > v ? a : v; }

int32_t ref_min(int32_t a, int32_t v) { return a < v ? a : v; }

/* n = v & 31; n == 0 ? a : floor((a + 2^(n-1)) / 2^n) */
int32_t ref_shr(int32_t a, int32_t v) {
  int64_t n = ((int64_t)v % 32 + 32) % 32; /* the low five bits of v */
  if (n == 0) return a;
  int64_t pow_n = (int64_t)1 << n;
  return (int32_t)ref_floor_div((int64_t)a + pow_n / 2, pow_n);
}

int32_t ref_mul(int32_t a, int32_t v) { return ref_wrap32((int64_t)a * (int64_t)v); }

int32_t ref_mov(int32_t a, int32_t v) { return v; }

static __int128 floor_div128(__int128 num, __int128 den) {
  __int128 q = num / den;
  if (num % den != 0 && num < 0) q -= 1;
  return q;
}

/*  p = a * m
 *  r = s == 0 ? p : floor((p + 2^(s-1)) / 2^s)
 *  if round_even and s > 0 and (p mod 2^s) == 2^(s-1) and r is odd: r = r - 1
 *  y = min(max(r + zero_point, clamp_lo), clamp_hi) */
int32_t ref_requant(int32_t a, int32_t m, const struct loom_insn_qcfg *q) {
  __int128 p = (__int128)a * (__int128)m;
  __int128 r = p;
  int s = (int)q->shift;
  if (s > 0) {
    __int128 pow_s = (__int128)1 << s;
    r = floor_div128(p + pow_s / 2, pow_s);
    __int128 p_mod = p - floor_div128(p, pow_s) * pow_s;
    int r_odd = r % 2 != 0;
    if (q->round_even && p_mod == pow_s / 2 && r_odd) r = r - 1;
  }
  __int128 y = r + q->zero_point;
  if (y < q->clamp_lo) y = q->clamp_lo; /* max(y, lo) */
  if (y > q->clamp_hi) y = q->clamp_hi; /* min(.., hi) */
  return (int32_t)y;
}

int32_t ref_alu(const struct loom_insn_alu *in, int32_t a, int32_t v,
                const struct loom_insn_qcfg *q) {
  if (in->use_imm) v = in->imm;
  switch (in->alu_op) {
  case LOOM_ALU_ADD: return ref_add(a, v);
  case LOOM_ALU_MAX: return ref_max(a, v);
  case LOOM_ALU_MIN: return ref_min(a, v);
  case LOOM_ALU_SHR: return ref_shr(a, v);
  case LOOM_ALU_MUL: return ref_mul(a, v);
  case LOOM_ALU_MOV: return ref_mov(a, v);
  case LOOM_ALU_REQUANT: return ref_requant(a, in->use_imm ? q->multiplier : v, q);
  default: return 0;
  }
}

/* Is (yy, xx) of the padded H x W block padding?  Else which DRAM row. */
static int padded(const struct loom_insn_mem *m, uint32_t yy, uint32_t xx, uint64_t *dram_row) {
  if (yy < m->y_pad_top || yy >= m->y_pad_top + m->y_size) return 1;
  if (xx < m->x_pad_left || xx >= m->x_pad_left + m->x_size) return 1;
  uint64_t y = yy - m->y_pad_top, x = xx - m->x_pad_left;
  *dram_row = m->dram_offset + y * m->x_stride + x;
  return 0;
}

void ref_load_bytes(const struct loom_insn_mem *m, const uint8_t *dram, uint32_t row_bytes,
                    uint8_t *rows) {
  uint32_t W = m->x_pad_left + m->x_size + m->x_pad_right;
  uint32_t H = m->y_pad_top + m->y_size + m->y_pad_bottom;
  for (uint32_t yy = 0; yy < H; yy++)
    for (uint32_t xx = 0; xx < W; xx++) {
      uint8_t *row = rows + (uint64_t)(yy * W + xx) * row_bytes;
      uint64_t src = 0;
      int pad = padded(m, yy, xx, &src);
      for (uint32_t e = 0; e < row_bytes; e++)
        row[e] = pad ? (uint8_t)(int8_t)m->pad_value : dram[src * row_bytes + e];
    }
}

static int32_t le_int32(const uint8_t *p) {
  int64_t u = p[0] + 256 * (int64_t)p[1] + 65536 * (int64_t)p[2] + 16777216 * (int64_t)p[3];
  return ref_wrap32(u);
}

void ref_load_acc(const struct loom_insn_mem *m, const uint8_t *dram, uint32_t lanes,
                  int32_t *rows) {
  uint32_t W = m->x_pad_left + m->x_size + m->x_pad_right;
  uint32_t H = m->y_pad_top + m->y_size + m->y_pad_bottom;
  uint32_t row_bytes = m->src_int8 ? lanes : 4 * lanes;
  for (uint32_t yy = 0; yy < H; yy++)
    for (uint32_t xx = 0; xx < W; xx++) {
      int32_t *row = rows + (uint64_t)(yy * W + xx) * lanes;
      uint64_t src = 0;
      for (uint32_t e = 0; e < lanes; e++) {
        if (padded(m, yy, xx, &src)) row[e] = m->pad_value;
        else if (m->src_int8) row[e] = (int8_t)dram[src * row_bytes + e];
        else row[e] = le_int32(dram + src * row_bytes + 4 * e);
      }
    }
}

void ref_store(const struct loom_insn_mem *m, const int8_t *out_rows, uint32_t row_bytes,
               uint8_t *dram) {
  for (uint32_t y = 0; y < m->y_size; y++)
    for (uint32_t x = 0; x < m->x_size; x++) {
      uint64_t sram = m->sram_base + (uint64_t)y * m->x_size + x;
      uint64_t dst = m->dram_offset + (uint64_t)y * m->x_stride + x;
      memcpy(dram + dst * row_bytes, out_rows + sram * row_bytes, row_bytes);
    }
}
