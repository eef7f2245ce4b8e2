/*
 * lower_conv_pool.c - max pooling fused into a convolution's epilogue (a
 * stem's MaxPool 3x3/2, padding 1 at the top and left): one job computes
 * the convolution and writes only the pooled tensor.
 *
 * The requantization is monotonic in the accumulator (positive multipliers,
 * clamps), and the bias is one per channel, so the maximum of the outputs
 * is the epilogue of the maximum of the raw sums: the pooling runs on the
 * raw accumulators, and the epilogue (ALU EPI) only on the pooled rows.
 * A tile is two convolution rows of the full width and every channel block
 * (one pooled row); per tile, after the GEMMs (without `last`):
 *
 *   ALU MAX  S[r][2x] = max(S[r][2x], S[r][2x+1])        r = 0, 1   (in place,
 *   ALU MAX  S[r][2x] = max(S[r][2x], S[r][2x-1])        x >= 1      even columns)
 *   ALU MAX  S[0][2x] = max(S[0][2x], S[1][2x])
 *   ALU MAX  S[0][2x] = max(S[0][2x], S'[1][2x])         but the first tile
 *   ALU EPI  S[0][x]  = E(S[0][2x])                      the moving form: the
 *                                                        pooled row, packed
 *   STORE    S[0][0 .. W/2) per block
 *
 * S' is the previous tile: its second row is this pooled row's top
 * neighbour, still in the other ACC half (tile o + 1 overwrites it only
 * after this tile's ALU work), so no convolution row is computed twice.
 * The first pooled row has no top neighbour (padding never wins a max), the
 * first pooled column no left one.  In place is exact: the horizontal passes
 * write even columns and read odd ones, the vertical ones write row 0 and
 * read row 1; the moving EPI writes entry x after reading entry 2x >= x of
 * every x' <= x (x increasing, one instruction).  The MAXes have vector
 * operands, two cycles per micro-op (one ACC read port), the EPI one: 13
 * cycles per pooled row and block against 40 GEMM cycles of a 10-block
 * stem, instead of a max-pooling job that loads the convolution's whole
 * output back (docs/lowering.md).
 */
#include <string.h>

#include "sw_compiler/lower.h"

int lower_conv_pool_fits(const struct loom_hw_config *cfg, const struct lower_qconv *l,
                         const struct lower_qpool *pool) {
  int32_t oh = (l->in_h + l->pad_t + l->pad_b - ((l->k_h - 1) * l->dil_h + 1)) / l->stride_h + 1;
  int32_t ow = (l->in_w + l->pad_l + l->pad_r - ((l->k_w - 1) * l->dil_w + 1)) / l->stride_w + 1;
  int32_t cob = (l->out_c + cfg->block_out - 1) / cfg->block_out;
  if (!pool || pool->kind != LOWER_POOL_MAX || pool->k_h != 3 || pool->k_w != 3 || pool->stride_h != 2 ||
      pool->stride_w != 2 || pool->pad_t != 1 || pool->pad_l != 1 || pool->pad_b > 1 || pool->pad_r > 1)
    return 0;
  if (l->residual || (l->flags & LOWER_CONV_ACC_OUT) || l->in_passes > 1) return 0;
  if (pool->in_h != oh || pool->in_w != ow || pool->c != l->out_c || oh % 2 || ow % 2) return 0;
  return (int64_t)2 * ow * cob <= (cfg->acc_rows / 2) && ow <= 2047;
}

/* ALU over the micro-ops `u` (n of them) with the block loop outside. */
static struct loom_insn pool_alu(struct lower_program *p, uint32_t op, const struct loom_uop *u, uint32_t n,
                                 const struct tile_chunk *ch, uint32_t tile_pix) {
  uint32_t b = emit_uop_set(p, u, n);
  return emit_alu(op, b, b + n, (uint32_t)ch->nco, 1, tile_pix, 0, tile_pix, 0);
}

void lower_conv_pool_tail(struct lower_program *p, const struct tile_ctx *c, const struct tile_chunk *ch,
                          struct emit_vec *post, struct emit_vec *store) {
  const struct lower_geom *g = c->g;
  uint32_t w = (uint32_t)g->out_w, pw = (uint32_t)g->pool_w, tp = c->L.tile_pix;
  uint32_t acc = c->L.acc_base[ch->o & 1], prev = c->L.acc_base[(ch->o + 1) & 1];
  struct loom_uop u[4096];
  LOOM_ASSERT(2 * w <= 4096);
  struct loom_insn in;
  uint32_t n = 0;
  for (uint32_t r = 0; r < 2; r++)
    for (uint32_t x = 0; x < pw; x++) u[n++] = (struct loom_uop){acc + r * w + 2 * x, acc + r * w + 2 * x + 1, 0};
  in = pool_alu(p, LOOM_ALU_MAX, u, n, ch, tp);
  emit_vec_push(post, &in);
  n = 0;
  for (uint32_t r = 0; r < 2; r++)
    for (uint32_t x = 1; x < pw; x++) u[n++] = (struct loom_uop){acc + r * w + 2 * x, acc + r * w + 2 * x - 1, 0};
  if (n) {
    in = pool_alu(p, LOOM_ALU_MAX, u, n, ch, tp);
    emit_vec_push(post, &in);
  }
  for (uint32_t x = 0; x < pw; x++) u[x] = (struct loom_uop){acc + 2 * x, acc + w + 2 * x, 0};
  in = pool_alu(p, LOOM_ALU_MAX, u, pw, ch, tp);
  emit_vec_push(post, &in);
  if (ch->rt > 0) { /* the previous tile's second row, in the other half */
    for (uint32_t x = 0; x < pw; x++) u[x] = (struct loom_uop){acc + 2 * x, prev + w + 2 * x, 0};
    in = pool_alu(p, LOOM_ALU_MAX, u, pw, ch, tp);
    emit_vec_push(post, &in);
  }
  struct loom_uop e = {acc, acc, 0};
  uint32_t b = emit_uop_set(p, &e, 1); /* EPI: pixels outside, the block (PAR row) inside */
  in = emit_alu(LOOM_ALU_EPI, b, b + 1, pw, (uint32_t)ch->nco, 1, tp, 2, tp);
  emit_vec_push(post, &in);
  for (int32_t blk = 0; blk < ch->nco; blk++) {
    uint32_t off = (uint32_t)((((int64_t)ch->n * g->cob + ch->co0 + blk) * g->pool_h + ch->oy0 / 2) * g->pool_w);
    in = emit_mem(LOOM_OP_STORE, LOOM_BUF_OUT, acc + (uint32_t)blk * tp, LOWER_SEG_OUT, off, 1, pw, pw);
    emit_vec_push(store, &in);
  }
}

uint64_t lower_conv_pool_cycles(const struct tile_ctx *c, const struct tile_chunk *ch) {
  uint64_t pw = (uint64_t)c->g->pool_w, nb = (uint64_t)ch->nco;
  uint64_t cyc = cost_alu(2 * pw * nb, 1) + cost_alu(2 * (pw - 1) * nb, 1); /* horizontal */
  cyc += (ch->rt > 0 ? 2 : 1) * cost_alu(pw * nb, 1);                       /* vertical */
  return cyc + cost_alu(pw * nb, 0);                                          /* EPI, one read */
}

uint32_t lower_conv_pool_uops(const struct lower_geom *g) {
  uint32_t pw = (uint32_t)g->pool_w;
  return 2 * (2 * pw + 2 * (pw - 1) + 2 * pw + 1); /* per ACC half */
}
