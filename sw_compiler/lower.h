/*
 * lower.h - a map of the lowering: quantized int8 layers onto the Loom ISA.
 *
 *   layer struct --lower_conv / lower_fc / lower_pool / lower_add--> struct lower_program
 *                  (lower_conv.c,        lower_pool.c, lower_eltwise.c)
 *                     |  tile.c        picks the tiling (roofline cost model, cost_model.c)
 *                     |  pack.c        packs weights / parameters into the blocked layouts
 *                     |  emit.c        builds instructions, micro-ops and the token pipeline
 *
 * One lowered layer is one accelerator job: an instruction stream, a
 * micro-op table and constant data, plus the plan of its DRAM segments and a
 * report of the tiling decision (what `loom compile` prints per layer).
 * The API does not know the IR: the IR glue fills the layer structs.
 * docs/lowering.md describes the layouts, the micro-op scheme, tiling,
 * double buffering and the cost model.
 *
 * Errors: a layer the hardware cannot run, or a malformed layer struct, is
 * user input: the lower_* entry points return -1 and write
 * "<where>: what is wrong" into msg (`where` names the layer, for example
 * "model.onnx: node conv1").  Broken invariants are LOWER_ASSERT.
 */
#ifndef LOOM_LOWER_H
#define LOOM_LOWER_H

#include <stdint.h>
#include <stdio.h>

#include "driver/core/core.h"
#include "loom/hwconfig.h"
#include "loom/isa.h"

#define LOWER_MSG_MAX 512

/* Writes "<where>: <what>" into msg and returns -1. */
int lower_fail(char *msg, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ==================================================================== */
/* The layers and the lowered program (lower_conv.c, lower_pool.c,     */
/* lower_eltwise.c; program helpers in emit.c)                         */
/* ==================================================================== */

/* DRAM segments of a lowered job.  The numbering is fixed, so a runtime
 * maps buffers by role.  Every tensor starts at offset 0 of its segment. */
enum lower_seg {
  LOWER_SEG_CONST = 0, /* parameter rows | packed weights | micro-ops (from the compiler) */
  LOWER_SEG_IN = 1,    /* input activations */
  LOWER_SEG_IN2 = 2,   /* second input: Add's b operand, a convolution's residual */
  LOWER_SEG_OUT = 3,   /* output activations */
  LOWER_SEG_COUNT
};
extern const char *const lower_seg_names[LOWER_SEG_COUNT];

/* How an activation tensor lies in its segment (c = block_in = block_out). */
enum lower_act_layout {
  LOWER_ACT_NONE = 0, /* segment unused */
  LOWER_ACT_NCHWC,    /* [n][ceil(C/c)][h][w][c]; padded channels are don't-care */
  LOWER_ACT_IM2COL,   /* folded stem: [n][ceil(C*kh*kw/c)][oh][ow][c], see docs/lowering.md */
  LOWER_ACT_COUNT
};
extern const char *const lower_act_layout_names[LOWER_ACT_COUNT];

/* The convolution a host-side im2col applies (LOWER_ACT_IM2COL): channel
 * (kh * k_w + kw) * C + ch of output pixel (oy, ox) holds input pixel
 * (oy * stride_h - pad_t + kh * dil_h, ox * stride_w - pad_l + kw * dil_w) of
 * channel ch, or pad_value outside the image. */
struct lower_im2col {
  int32_t k_h, k_w, stride_h, stride_w, pad_t, pad_l, dil_h, dil_w, out_h, out_w;
  int32_t pad_value;
};

struct lower_act {
  enum lower_act_layout layout;
  int32_t n, c, h, w;       /* logical NCHW shape */
  int32_t block;            /* channel block */
  struct lower_im2col im2col; /* LOWER_ACT_IM2COL only */
  uint64_t bytes;           /* size of the segment */
};

/* Kinds of lowered layers, for the report. */
enum lower_kind {
  LOWER_KIND_CONV = 0,   /* dense (or grouped, zero-filled) convolution */
  LOWER_KIND_CONV_IM2COL,/* convolution folded by a host-side im2col (stems) */
  LOWER_KIND_DWCONV,     /* depthwise convolution on diagonal weights */
  LOWER_KIND_FC,         /* fully connected as a 1x1 convolution */
  LOWER_KIND_MAXPOOL,    /* max pooling on the ALU */
  LOWER_KIND_AVGPOOL,    /* average pooling as a depthwise convolution of ones */
  LOWER_KIND_ADD,        /* requantized element-wise add on the GEMM core */
  LOWER_KIND_COUNT
};
extern const char *const lower_kind_names[LOWER_KIND_COUNT];

/* Loop order of the tile walk (tile.c). */
enum tile_order {
  TILE_ORDER_SPATIAL = 0, /* spatial tiles outside, output-channel tiles inside */
  TILE_ORDER_CHANNEL,     /* output-channel tiles outside, spatial tiles inside */
  TILE_ORDER_COUNT
};
extern const char *const tile_order_names[TILE_ORDER_COUNT];

/* Where weights live in WGT (tile.c). */
enum tile_wgt {
  TILE_WGT_STREAM = 0, /* two halves, loaded per chunk unless the half already holds them */
  TILE_WGT_RESIDENT,   /* all weights fit: each slice loaded once, on first use */
  TILE_WGT_COUNT
};
extern const char *const tile_wgt_names[TILE_WGT_COUNT];

/* A tiling: output rows x columns x output-channel blocks per tile, input
 * blocks per reduction chunk.  Counts are derived by tile_finish(). */
struct lower_tiling {
  int32_t th, tw, tco, tci;
  enum tile_order order;
  enum tile_wgt wgt;
  int32_t n_rt, n_ct, n_cot, n_cic; /* tiles per dimension */
  uint32_t tiles, chunks;           /* output tiles; chunks (double-buffered steps) */
  uint32_t uops;                    /* micro-ops the program needs */
  uint64_t est_cycles;              /* the tiler's estimate */
};

/* Per-layer report: what `loom compile` prints. */
struct lower_report {
  enum lower_kind kind;
  uint64_t macs;              /* useful multiply-accumulates (0 for max pooling) */
  struct lower_tiling tiling;
  uint64_t counters[LOOM_CNT_COUNT]; /* exact counters the job will report */
  uint64_t dma_bytes;         /* every DRAM byte moved: loads, stores, instructions */
  uint64_t min_bytes;         /* compulsory traffic: inputs, weights, params, output once */
  uint64_t compute_cycles;    /* busy cycles of the compute module */
  uint64_t load_cycles, store_cycles;
  uint64_t est_cycles;        /* cost model estimate of the whole job */
  uint64_t roofline_cycles;   /* max(macs / peak, min_bytes / bus bytes per cycle) */
  double intensity;           /* macs / min_bytes */
  double roofline_macs_per_cycle; /* min(peak, bus bytes per cycle x intensity) */
  int memory_bound;           /* the roofline bound is the memory one */
  int residual;               /* a residual Add is fused in */
  double utilization;         /* macs / (est_cycles x peak) */
  double of_roofline;         /* roofline_cycles / est_cycles */
};

struct lower_program {
  const struct loom_hw_config *cfg;
  struct loom_insn *insns;
  uint32_t insn_count, insn_cap;
  struct loom_uop *uops;
  uint32_t uop_count, uop_cap;
  uint8_t *const_data;        /* the CONST segment */
  uint64_t const_bytes, const_cap;
  uint64_t param_offset, wgt_offset, uop_offset; /* bytes into CONST */
  struct lower_act act[LOWER_SEG_COUNT];          /* IN, IN2, OUT (CONST: layout NONE) */
  uint64_t seg_bytes[LOWER_SEG_COUNT];
  struct lower_report report;
};

/* The encoded instruction stream (insn_count x 16 bytes, malloc'd). */
uint8_t *lower_program_code(const struct lower_program *p);
void lower_program_free(struct lower_program *p);

/* One fused int8 convolution: conv + bias + per-channel requantization +
 * clamp (ReLU / ReLU6 through clamp_lo / clamp_hi):
 *
 *   acc[o] = bias[o] + sum w[o][c][kh][kw] * (x[c][iy][ix] - in_zero_point)
 *            (x outside the image counts as in_zero_point)
 *   y[o]   = clamp(rshift(acc[o] * multiplier[o], shift) + out_zero_point, lo, hi)
 *
 * with rshift rounding half up (or to even with round_even), exactly the
 * ALU's REQUANT; acc wraps modulo 2^32 like the accumulator. */
#define LOWER_CONV_ALLOW_IM2COL 1u /* fold small-channel convs by a host-side im2col */
/* No requantization: the job stores the int32 accumulator acc[o] itself, as
 * four int8 byte lanes per channel.  The output segment is NCHWc of 4*out_c
 * channels where channel 4*o + k holds byte k (little-endian, two's
 * complement) of acc[o]: read with 4-lane blocks it is the plain int32
 * tensor (docs/lowering.md, "int32 results").  multiplier, shift, zero
 * point and clamps are ignored; no residual. */
#define LOWER_CONV_ACC_OUT 2u

/* A residual Add fused after the convolution (ResNet's shortcut): with q
 * the convolution's requantized output (its out_zero_point and clamps) and
 * r the residual tensor (segment IN2, NCHWc, the output's shape),
 *   y = clamp(rshift((a_weight * (q - out_zero_point) + b_weight * (r - b_zero_point))
 *                    * multiplier, shift) + out_zero_point, lo, hi)
 * i.e. exactly lower_add() applied to q and r (lower_add_scales() picks the
 * weights and multiplier). */
struct lower_qresidual {
  int32_t a_weight, b_weight, b_zero_point; /* int8 */
  int32_t multiplier;
  uint32_t shift;
  int32_t out_zero_point, clamp_lo, clamp_hi;
  uint32_t round_even;
};

struct lower_qconv {
  int32_t n, in_c, in_h, in_w, out_c, k_h, k_w;
  int32_t stride_h, stride_w, pad_t, pad_l, pad_b, pad_r, dil_h, dil_w, groups;
  const int8_t *weights;      /* [in_passes][out_c][in_c / groups][k_h][k_w] */
  const int32_t *bias;        /* [out_c], accumulator scale; NULL = 0 */
  const int32_t *multiplier;  /* [out_c] */
  uint32_t shift;             /* 0..63 */
  int32_t in_zero_point, out_zero_point, clamp_lo, clamp_hi; /* int8 */
  uint32_t round_even;
  uint32_t flags;             /* LOWER_CONV_* */
  const struct lower_qresidual *residual; /* NULL: no fused Add */
  /* The weights are the sum of in_passes int8 parts (0 or 1: one part), so
   * weights beyond int8 (a uint8 weight minus its zero point) run as a
   * reduction that reads every input block in_passes times
   * (lower_split_weights()). */
  uint32_t in_passes;
};

/* Fully connected: y[n][o] from x[n][i], as a 1x1 convolution on 1x1
 * images.  The activations are LOWER_ACT_NCHWC with h = w = 1. */
struct lower_qfc {
  int32_t n, in_features, out_features;
  const int8_t *weights;      /* [in_passes][out_features][in_features], as in lower_qconv */
  const int32_t *bias;        /* may be NULL */
  const int32_t *multiplier;
  uint32_t shift;
  int32_t in_zero_point, out_zero_point, clamp_lo, clamp_hi;
  uint32_t round_even;
  uint32_t in_passes;         /* as in lower_qconv */
  uint32_t flags;             /* LOWER_CONV_ACC_OUT only */
};

/* Pooling.  MAX: y = max over the window, padding ignored, same
 * quantization as x.  AVG (count_include_pad semantics; GlobalAveragePool
 * is the window of the whole image):
 *   y = clamp(rshift(sum (x - in_zero_point) * multiplier, shift) + out_zero_point, lo, hi)
 * with padding counting as in_zero_point: multiplier / 2^shift is
 * in_scale / (out_scale * k_h * k_w). */
enum lower_pool_kind {
  LOWER_POOL_MAX = 0, /* max pooling */
  LOWER_POOL_AVG,     /* average pooling, padding included in the count */
  LOWER_POOL_COUNT
};
extern const char *const lower_pool_kind_names[LOWER_POOL_COUNT];

struct lower_qpool {
  enum lower_pool_kind kind;
  int32_t n, c, in_h, in_w, k_h, k_w, stride_h, stride_w, pad_t, pad_l, pad_b, pad_r;
  int32_t multiplier;         /* AVG only, from here on */
  uint32_t shift;
  int32_t in_zero_point, out_zero_point, clamp_lo, clamp_hi;
  uint32_t round_even;
};

/* Requantized add of two tensors of the same shape:
 *   acc = a_weight * (a - a_zero_point) + b_weight * (b - b_zero_point)
 *   y   = clamp(rshift(acc * multiplier, shift) + out_zero_point, lo, hi)
 * a_weight and b_weight are int8: lower_add_scales() picks them (and the
 * multiplier) from the real scale ratios. */
struct lower_qadd {
  int32_t n, c, h, w;
  int32_t a_zero_point, b_zero_point;
  int32_t a_weight, b_weight; /* -128..127 */
  int32_t multiplier;
  uint32_t shift;
  int32_t out_zero_point, clamp_lo, clamp_hi;
  uint32_t round_even;
};

int lower_conv(const struct loom_hw_config *cfg, const struct lower_qconv *l, const char *where,
               struct lower_program *out, char msg[LOWER_MSG_MAX]);
int lower_fc(const struct loom_hw_config *cfg, const struct lower_qfc *l, const char *where,
             struct lower_program *out, char msg[LOWER_MSG_MAX]);
int lower_pool(const struct loom_hw_config *cfg, const struct lower_qpool *l, const char *where,
               struct lower_program *out, char msg[LOWER_MSG_MAX]);
int lower_add(const struct loom_hw_config *cfg, const struct lower_qadd *l, const char *where,
              struct lower_program *out, char msg[LOWER_MSG_MAX]);

/* Real multiplier -> (m in [2^30, 2^31), shift) with m / 2^shift ~ real;
 * returns -1 when real is not in (0, 2^31) or needs a shift > 63. */
int lower_quantize_multiplier(double real, int32_t *multiplier, uint32_t *shift);
/* y_scale-relative operand scales ma = a_scale / y_scale, mb = ... ->
 * a_weight, b_weight, multiplier, shift of struct lower_qadd. */
int lower_add_scales(double ma, double mb, struct lower_qadd *q);

/* Prints the report as one table row (header first when `header`). */
void lower_report_print(FILE *f, const char *name, const struct lower_report *r, int header);

/* ==================================================================== */
/* Activation packing (pack.c): what a runtime does with user tensors   */
/* ==================================================================== */

/* Bytes of an activation in `layout` (n, c, h, w as in struct lower_act). */
uint64_t lower_act_bytes(const struct lower_act *a);
/* Plain NCHW int8 -> the layout of `a`; padded channels get `fill`. */
void lower_act_pack(const struct lower_act *a, const int8_t *nchw, int8_t fill, int8_t *dst);
/* The layout of `a` (NCHWC only) -> plain NCHW. */
void lower_act_unpack(const struct lower_act *a, const int8_t *src, int8_t *nchw);

/* ==================================================================== */
/* Internal: the folded convolution every GEMM lowering works on        */
/* ==================================================================== */

enum lower_gemm_mode {
  LOWER_GEMM_DENSE = 0, /* each output block reduces over every input block */
  LOWER_GEMM_DIAG,      /* output block b reads input block b only (diagonal weights) */
  LOWER_GEMM_MODE_COUNT
};
extern const char *const lower_gemm_mode_names[LOWER_GEMM_MODE_COUNT];

struct lower_geom {
  enum lower_gemm_mode mode;
  int32_t n, in_h, in_w, out_h, out_w;
  int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l, pad_b, pad_r;
  int32_t cib, cob;  /* input / output channel blocks */
  int32_t row_skip;  /* k_h == 1, stride_h > 1: load only the input rows used */
  int32_t wgt_uniform; /* DIAG with one weight row for every block and tap (pooling) */
  int32_t residual;    /* a fused Add reads the residual into INP after the last chunk */
  int32_t cib_data;    /* input blocks in DRAM: block ci reads ci % cib_data (cib / passes) */
  int32_t acc_out;     /* LOWER_CONV_ACC_OUT: byte-lane extraction instead of REQUANT */
};

/* lower_conv.c: the convolution path with the kind forced (FC, AVGPOOL, or
 * LOWER_KIND_CONV to let it pick dense / depthwise / im2col). */
int lower_conv_kind(const struct loom_hw_config *cfg, const struct lower_qconv *l, enum lower_kind kind,
                    const char *where, struct lower_program *out, char msg[LOWER_MSG_MAX]);
/* lower_conv with a given tiling (th, tw, tco, tci, order, wgt) instead of
 * the search: for tests that sweep tilings.  -1 when it does not fit. */
int lower_conv_tiled(const struct loom_hw_config *cfg, const struct lower_qconv *l,
                     const struct lower_tiling *t, const char *where, struct lower_program *out,
                     char msg[LOWER_MSG_MAX]);

/* ==================================================================== */
/* tile.c: tiling search, buffer layout and the chunk walk              */
/* ==================================================================== */

#define TILE_MAX_SETS 64 /* distinct GEMM micro-op sets a tiling may need */

/* SRAM placement of a tiling: ACC rows [0, param_rows) hold parameters,
 * then two halves; INP and (streamed) WGT are split in two halves. */
struct tile_layout {
  uint32_t param_rows;
  uint32_t acc_base[2], acc_half;
  uint32_t inp_base[2], inp_half;
  uint32_t wgt_base[2], wgt_half;
  uint32_t ih, iw;       /* input window rows and columns of a full tile */
  uint32_t inp_block;    /* INP rows per input block: ih * iw */
  uint32_t tile_pix;     /* ACC rows per output block: th * tw */
  uint32_t kk;           /* k_h * k_w */
  uint32_t res_offset;   /* residual: INP rows of a half before the residual tile */
  uint32_t res_wgt_row;  /* residual: the WGT row of b_weight x identity (the last one) */
};

/* One chunk: a tile's share of the reduction, one double-buffered step. */
struct tile_chunk {
  uint32_t k, o;           /* chunk index, output-tile index */
  int32_t n, rt, ct;       /* image, row tile, column tile */
  int32_t oy0, rows, ox0;  /* output rows [oy0, oy0 + rows), columns [ox0, ox0 + tw) */
  int32_t cot, co0, nco;   /* output-channel tile, first block, blocks */
  int32_t cic, ci0, nci;   /* reduction chunk, first input block, blocks */
  int first, last;         /* first / last chunk of its output tile */
};

/* What a chunk loads and where its operands are, given what the buffer
 * halves already hold (struct tile_state). */
struct tile_step {
  int load_inp, load_wgt;
  uint32_t acc_base, inp_base, wgt_base;
  uint32_t wgt_slice_rows; /* rows of the weight slice (nco x nci x kk, or nco x kk) */
};

/* The input window of a tile, clipped to the image, with LOAD padding. */
struct tile_window {
  int32_t y0, ny, x0, nx;  /* first input row / column and counts (row_skip: ny rows, stride_h apart) */
  int32_t pt, pb, pl, pr;
};

struct tile_ctx {
  const struct loom_hw_config *cfg;
  const struct lower_geom *g;
  struct lower_tiling t;
  struct tile_layout L;
};

struct tile_state {
  int64_t inp_key[2], wgt_key[2];
  int32_t *res_base;       /* RESIDENT: WGT base of slice (cot, cic), -1 before its load */
  uint32_t res_next;
};

struct tile_iter {
  const struct tile_ctx *c;
  struct tile_chunk ch;
  int32_t idx[5], ext[5];
  int started;
};

/* Fills the derived counts of t; 0, or -1 when it does not fit the buffers
 * or the ISA's fields (then *why says which). */
int tile_finish(const struct loom_hw_config *cfg, const struct lower_geom *g, uint32_t param_rows,
                struct lower_tiling *t, struct tile_layout *L, const char **why);
/* Picks the cheapest tiling; -1 (with *why) when none fits. */
int tile_search(const struct loom_hw_config *cfg, const struct lower_geom *g, uint32_t param_rows,
                struct lower_tiling *best, struct tile_layout *L, const char **why);
void tile_iter_init(struct tile_iter *it, const struct tile_ctx *c);
int tile_iter_next(struct tile_iter *it);
int tile_state_init(struct tile_state *s, const struct tile_ctx *c);
void tile_state_free(struct tile_state *s);
void tile_step(const struct tile_ctx *c, struct tile_state *s, const struct tile_chunk *ch,
               struct tile_step *st);
void tile_window(const struct lower_geom *g, int32_t oy0, int32_t rows, int32_t ox0, int32_t tw,
                 struct tile_window *w);
/* Micro-ops of one GEMM set: th * kk * tw. */
uint32_t tile_gemm_set_size(const struct lower_geom *g, const struct lower_tiling *t);
/* The distinct tile sizes ceil(n / m) for m = 1..n, largest first, for
 * n <= 2^24: `out` needs TILE_SIZES_MAX entries. */
#define TILE_SIZES_MAX 8200
int32_t tile_distinct_sizes(int32_t n, int32_t *out);
/* ceil(a / b) for a >= 0, b > 0. */
int32_t tile_ceil_div(int32_t a, int32_t b);

/* ==================================================================== */
/* cost_model.c: roofline cost model and a timed walk of the program    */
/* ==================================================================== */

/* Cycles of one DMA instruction moving `rows` contiguous runs of
 * `row_bytes` bytes (and writing `pad_rows` SRAM rows of padding). */
uint64_t cost_dma(const struct loom_hw_config *cfg, uint64_t row_bytes, uint64_t rows,
                  uint64_t pad_rows);
uint64_t cost_gemm(uint64_t uops);
/* ALU: `vector` when the operand is an ACC row (two reads per micro-op). */
uint64_t cost_alu(uint64_t uops, int vector);

/* Chunk-level pipeline model used by the tilers: feed chunks in order. */
struct cost_pipe {
  uint64_t comp_end[2], store_end[2]; /* chunk k-2 / k-1, tile o-2 / o-1, by parity */
  uint64_t load_prev, comp_prev, store_prev;
  uint64_t bus_bytes;                 /* the caller adds every DRAM byte */
  uint32_t k, o;
};
void cost_pipe_init(struct cost_pipe *p, uint64_t prologue_compute);
/* One chunk: its load, compute, and (when it ends a tile) store cycles. */
void cost_pipe_chunk(struct cost_pipe *p, uint64_t load, uint64_t compute, int first, int last,
                     uint64_t store);
/* Makespan: the pipeline's end, or the bus time if that is longer. */
uint64_t cost_pipe_total(const struct loom_hw_config *cfg, const struct cost_pipe *p);

/* Exact counters of a program (what fsim and the RTL report). */
void cost_count(const struct loom_hw_config *cfg, const struct loom_insn *insns, uint32_t n,
                uint64_t counters[LOOM_CNT_COUNT]);

struct cost_sim {
  uint64_t cycles;
  uint64_t busy[LOOM_Q_COUNT];
  uint64_t bus_bytes;
  int deadlock;            /* the program would deadlock */
  uint32_t stuck_insn;     /* first instruction that waits forever */
};
/* Walks the program with the queues, tokens and per-instruction costs:
 * an instruction-level timing model of the decoupled pipeline. */
void cost_simulate(const struct loom_hw_config *cfg, const struct loom_insn *insns, uint32_t n,
                   struct cost_sim *out);

/* Fills the roofline fields of r from macs, min_bytes and est_cycles. */
void cost_roofline(const struct loom_hw_config *cfg, struct lower_report *r);

/* ==================================================================== */
/* emit.c: instructions, micro-op sets and the token pipeline           */
/* ==================================================================== */

struct emit_vec {
  struct loom_insn *v;
  uint32_t n, cap;
};

/* What one chunk does; a lowering fills the vectors, emit_pipe_chunk wires
 * the tokens and places the instructions in the stream. */
struct emit_chunk {
  uint32_t k, o;
  int first, last;         /* first / last chunk of output tile o */
  struct emit_vec load;    /* load queue: INP / WGT loads (may be empty) */
  struct emit_vec pre;     /* compute, before the reads of INP/WGT: ACC init */
  struct emit_vec main;    /* compute: the GEMMs that read INP / WGT (or ALU work) */
  struct emit_vec post;    /* compute: requantization at the tile's end */
  struct emit_vec store;   /* store queue, when `last` */
};

struct emit_pipe {
  struct lower_program *p;
  uint32_t chunks, tiles;
  int uses_load;           /* chunks get their operands from the load module */
  uint32_t received;
  struct emit_vec held_compute, held_store;
};

void emit_vec_push(struct emit_vec *v, const struct loom_insn *in);
void emit_vec_clear(struct emit_vec *v);
void emit_vec_free(struct emit_vec *v);
void emit_chunk_reset(struct emit_chunk *c);
void emit_chunk_free(struct emit_chunk *c);

void emit_program_init(struct lower_program *p, const struct loom_hw_config *cfg);
uint32_t emit_insn(struct lower_program *p, const struct loom_insn *in);
/* Appends a micro-op set, or finds an identical one; returns its first index. */
uint32_t emit_uop_set(struct lower_program *p, const struct loom_uop *u, uint32_t n);
/* Appends bytes to CONST at an offset aligned to `align`; returns the offset. */
uint64_t emit_const(struct lower_program *p, const void *bytes, uint64_t size, uint64_t align);
/* Alignment of CONST sections: a multiple of every DRAM row size. */
uint64_t emit_const_align(const struct loom_hw_config *cfg);

struct loom_insn emit_mem(uint32_t opcode, uint32_t buffer, uint32_t sram, uint32_t seg,
                          uint32_t off, uint32_t y, uint32_t x, uint32_t stride);
struct loom_insn emit_gemm(uint32_t ub, uint32_t ue, uint32_t io, uint32_t ii, uint32_t af_o,
                           uint32_t af_i, uint32_t if_o, uint32_t if_i, uint32_t wf_o, uint32_t wf_i);
struct loom_insn emit_alu(uint32_t op, uint32_t ub, uint32_t ue, uint32_t io, uint32_t ii,
                          uint32_t df_o, uint32_t df_i, uint32_t sf_o, uint32_t sf_i);
struct loom_insn emit_qcfg(int32_t mult, uint32_t shift, int32_t zp, int32_t lo, int32_t hi,
                           uint32_t round_even);
struct loom_insn emit_nop(uint32_t queue);

void emit_pipe_begin(struct emit_pipe *e, struct lower_program *p, uint32_t chunks, uint32_t tiles,
                     int uses_load);
void emit_pipe_chunk(struct emit_pipe *e, struct emit_chunk *c);
/* Flushes the last chunk and appends FINISH. */
void emit_pipe_end(struct emit_pipe *e);

/* The LOAD UOP of the prologue (a placeholder until emit_uop_table). */
uint32_t emit_uop_load(struct lower_program *p);
/* Appends the micro-op table to CONST and completes that LOAD. */
void emit_uop_table(struct lower_program *p, uint32_t load_index);

/* Counters, cost simulation and roofline into p->report (after emission). */
void emit_report(struct lower_program *p);

/* ==================================================================== */
/* pack.c: weights and parameters into the blocked layouts              */
/* ==================================================================== */

/* Dense OIHW int8 weights [out_c][in_c][kh][kw] -> WGT rows
 * [cob][cib][kh][kw] of block_out x block_in (o major), zero padded. */
void pack_wgt_dense(const struct loom_hw_config *cfg, const int8_t *w, int32_t out_c, int32_t in_c,
                    int32_t kk, int8_t *rows);
/* Depthwise weights [c][kh][kw] -> diagonal WGT rows [cob][kh][kw]. */
void pack_wgt_diag(const struct loom_hw_config *cfg, const int8_t *w, int32_t c, int32_t kk,
                   int8_t *rows);
/* One identity WGT row (average pooling: every weight is 1). */
void pack_wgt_identity(const struct loom_hw_config *cfg, int8_t *row);
/* Per-channel int32 values -> ACC rows of block_out lanes (zero padded),
 * little-endian, as LOAD ACC reads them. */
void pack_acc_rows(const struct loom_hw_config *cfg, const int32_t *v, int32_t c, uint8_t *rows);
/* Splits n wide integer weights into the fewest int8 parts whose sum is
 * each weight (greedy: part p = clamp(rest, -128, 127)); *out is malloc'd
 * [passes][n].  -1 when more than LOWER_MAX_PASSES parts would be needed. */
#define LOWER_MAX_PASSES 4
int lower_split_weights(const int32_t *w, size_t n, int8_t **out, uint32_t *passes);
/* bias[o] - zp * sum of row o of w (n_per_out weights), modulo 2^32. */
void pack_bias_correct(const int8_t *w, const int32_t *bias, int32_t out_c, int32_t n_per_out,
                       int32_t zp, int32_t *out);

/* ==================================================================== */
/* lower_conv_emit.c: a convolution job's instruction stream            */
/* ==================================================================== */

/* The constant ACC rows of an int32 result's byte-lane extraction
 * (lower_conv.c packs them, the job's tail reads them). */
enum { LOWER_ACC_ROW_MIN, LOWER_ACC_ROW_OFF, LOWER_ACC_ROW_SHIFT, LOWER_ACC_ROW_MUL, LOWER_ACC_ROWS };

/* Where lower_conv.c put a convolution's constants. */
struct conv_consts {
  uint32_t param_row0;  /* ACC row of the first bias row (multipliers follow after cob rows) */
  uint32_t wgt_row0;    /* CONST offset of the weights, in WGT rows */
  uint32_t res_row;     /* CONST offset of the residual's b_weight x identity row */
};

/* The whole program of a convolution: parameter loads, every chunk of the
 * tiling c, the micro-op table. */
void lower_emit_conv(struct lower_program *p, const struct lower_qconv *l, const struct tile_ctx *c,
                     const struct conv_consts *k);

#endif
