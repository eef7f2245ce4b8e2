/*
 * lower_chain.h - internals of the fused chain lowering shared by
 * lower_chain.c (checks, layout, constants, search) and lower_chain_emit.c
 * (the instruction stream and its estimate).  The public entry point is
 * lower_chain() in lower.h; the design is in lower_chain.c's opening
 * comment and docs/lowering.md ("Fused chains").
 */
#ifndef LOOM_LOWER_CHAIN_H
#define LOOM_LOWER_CHAIN_H

#include "sw_compiler/lower.h"

#define CHAIN_CANDIDATES 3 /* tilings emitted and walked per chain */

/* The chain's shape: the depthwise layer's input (= the chain's input,
 * = the expansion's output) is n x eb blocks x h x w. */
struct chain_geom {
  int32_t n, h, w, ho, wo;
  int32_t kh, kw, sh, sw, dh, dwl, pt, pl;
  int32_t cb, eb, pb;         /* blocks: chain input (the expansion's), expanded, output */
  int32_t dw_rows, passes;    /* depthwise window rows per pass, passes */
  int32_t has_pw1, residual;
  uint32_t iw;                /* columns of a depthwise window row, padding included */
  int32_t cols;               /* image columns the window reads */
};

/* A tiling: bands of th output rows (full width), groups of g expanded
 * blocks; items k = band * groups + group in this order. */
struct chain_tiling {
  int32_t th, g;
  int32_t bands, groups;      /* per image */
  int wgt_resident;           /* one group: every weight loaded once */
  int par_resident;           /* every PAR row loaded once */
  uint64_t est;
};

/* SRAM placement (rows).  INP: A[na] (the band's input rows, all chain
 * input blocks; the expansion only), B[2] (depthwise windows), C[2] (the
 * depthwise outputs for the projection); ACC/OUT: P[2] (expansion), D[2]
 * (depthwise), Q[2] (projection).  A block's stride in A and P is the
 * band's image rows x w, in C and Q its output rows x wo: dense loads. */
struct chain_layout {
  uint32_t ih, ia, na;        /* window rows, image rows of a band at most, A buffers */
  uint32_t a_base[4], b_base[2], c_base[2];
  uint32_t p_base[2], d_base[2], q_base[2];
  uint32_t a_blk, b_blk, to;  /* ia * w, ih * iw, th * wo */
  uint32_t w1[2], wd[2], w2[2]; /* WGT slots by item parity (equal when resident) */
  uint32_t res_row;           /* WGT row of b_weight x identity (the last row) */
  uint32_t par_slot[2];       /* PAR rows of a group's expansion, then its depthwise rows */
};

/* CONST offsets of the constants (place_consts). */
struct chain_consts {
  uint32_t par_row0;          /* in PAR rows: projection, then per group expansion | depthwise */
  uint32_t wgt_row0;          /* in WGT rows: expansion [eb][cb], depthwise [eb][passes], projection [pb][eb] */
  uint32_t res_row;           /* in WGT rows: the residual's row */
};

/* Image rows [*ys, *ys + *nr) the output rows [oy0, oy0 + rows) read, and
 * the padding rows above and below. */
void chain_band_rows(const struct chain_geom *g, int32_t oy0, int32_t rows, int32_t *ys, int32_t *nr,
                     int32_t *pad_t, int32_t *pad_b);
/* The step (lower_chain_emit.c) from which the input rows of flat band
 * `band` may load: its A buffer's readers are done. */
int32_t chain_lin_step(const struct chain_geom *g, const struct chain_tiling *t, const struct chain_layout *L,
                       int32_t band);
/* Expanded blocks of group t. */
int32_t chain_group_blocks(const struct chain_geom *g, const struct chain_tiling *t, int32_t grp);
/* The layout of tiling t (bands, groups, resident flags filled); 0 when it
 * fits the buffers, the micro-op table and the fields. */
int chain_layout(const struct loom_hw_config *cfg, const struct chain_geom *g, struct chain_tiling *t,
                 struct chain_layout *L);
/* The estimate of a tiling's cycles (lower_chain_emit.c): per step, the
 * compute module's three GEMMs against the load module's moves and loads,
 * and the DRAM bus. */
uint64_t chain_estimate(const struct loom_hw_config *cfg, const struct chain_geom *g, const struct chain_tiling *t,
                        const struct chain_layout *L);
/* The job's instruction stream and micro-ops (lower_chain_emit.c). */
void chain_emit(struct lower_program *p, const struct lower_qchain *c, const struct chain_geom *g,
                const struct chain_tiling *t, const struct chain_layout *L, const struct chain_consts *k);

#endif
