/*
 * lower.h - a map of the lowering: quantized int8 layers onto the Loom ISA.
 *
 *   layer struct --lower_conv / lower_fc / lower_pool / lower_add--> struct lower_program
 *                  (lower_conv.c, lower_conv_emit.c, lower_pool.c, lower_eltwise.c)
 *                     |  tile.c        picks the tiling (roofline cost model, cost_model.c)
 *                     |  pack.c        packs weights / parameters into the blocked layouts
 *                     |  emit.c        builds instructions, micro-ops and the token pipeline
 *                                      (emit.h, included at the end)
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
  LOWER_KIND_CHAIN,      /* fused chain: [1x1 ->] depthwise -> 1x1 [+ Add] in one job */
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
/* Moves segment `seg`'s tensor `bytes` into the segment: every LOAD and
 * STORE of it addresses `bytes / R` DRAM rows further (R: its buffer's row
 * size), and seg_bytes grows by `bytes`.  So a job reads or writes a slice
 * of a larger tensor in place (a head's rows of an attention operand).
 * Returns -1, changing nothing, when `bytes` is not a whole number of some
 * transfer's rows or an offset would not fit its field. */
int lower_program_rebase(struct lower_program *p, enum lower_seg seg, uint64_t bytes);
/* Lays segment `seg`'s tensor out with rows `pitch` bytes apart instead
 * of `width` (its own row size): every transfer of the segment moves from
 * byte (r * width + x) to (r * pitch + x), so a job writes (or reads) a
 * column window of a wider [rows, columns] tensor (a head's result at its
 * columns of the heads' concatenation); seg_bytes becomes
 * (rows - 1) * pitch + width.  Before lower_program_rebase.  Returns -1,
 * changing nothing, when a transfer row crosses a tensor row, rows of a
 * transfer are not whole tensor rows apart, or a field would not fit. */
int lower_program_repitch(struct lower_program *p, enum lower_seg seg, uint64_t width, uint64_t pitch);
/* Lays channels [col0, col0 + cols) of segment `seg`'s [tokens, C]
 * result (NC: token y's channel block b at DRAM row y * cb + b, one DRAM
 * row per block) out as the WGT rows of their transpose, the NCHWc of
 * [ceil(tokens / B), cols, B, 1] starting `base` bytes into the segment:
 * token y's block b0 + j at row base / B + (y / B) * (cols / B) * B +
 * j * B + y % B, so a later job reads them as runtime weights
 * (LOWER_CONV_RUNTIME_WGT, attention's K for Q x K^T) with no host
 * transpose.  The other channels stay where they are (an in_proj's Q and
 * V beside K).  Each STORE becomes the fewest 2-D transfers of the new
 * rows (its tokens moved with the first and last piece), seg_bytes
 * covers both parts (act[seg] describes [ceil(tokens / B), C, B, 1] when
 * all channels move), and the report is recomputed.  The rows of the
 * tokens past `tokens` are not written.  Called again for another range
 * (an in_proj's V after its K), the STOREs an earlier call moved past the
 * [tokens, C] bytes stay, and `base` must lie past them.  Before
 * lower_program_rebase.
 * Returns -1, changing nothing, when the segment is loaded too, is not
 * one block per DRAM row, the channels or `base` are not whole blocks, or
 * an offset would not fit. */
int lower_program_wgt_rows(struct lower_program *p, enum lower_seg seg, uint64_t tokens, uint64_t col0, uint64_t cols,
                           uint64_t base);

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
/* The weights are an activation, read at run time from segment IN2
 * (LOWER_SEG_IN2) instead of constants packed into CONST: the second
 * operand of a matmul of two activations (attention's Q x K^T and P x V).
 * IN2 holds them in the WGT row layout, which is the NCHWc layout of a
 * [ceil(out_c / B), in_c, B, 1] tensor: output channel o is image o / B,
 * row o % B, its in_c values the channels (so the producer's NCHWc result
 * of a [N, K] matrix stored as images of B rows is read as is, no repack).
 * Its padded channel lanes (k >= in_c) must be zero, as the runtime packs
 * blocked tensors: they meet the input's don't-care lanes.
 * `weights` must be NULL; 1x1 kernel, stride 1, no padding, one group, one
 * pass, no residual or fused pool, and in_zero_point 0 (the bias cannot be
 * corrected by sum(w) at compile time): callers quantize both operands
 * symmetrically. */
#define LOWER_CONV_RUNTIME_WGT 4u
/* With LOWER_CONV_RUNTIME_WGT: IN2 holds the weights' transpose, the
 * NCHWc of [ceil(in_c / B), out_c, B, 1] (input block ci's rows first:
 * WGT row ci * ceil(out_c / B) + co is the B x B block [k][o], a
 * producer's [K, N] result stored as WGT rows by lower_program_wgt_rows,
 * attention's V for P x V), loaded with wgt_transpose (SRAM [o][k] =
 * DRAM [k][o]): one LOAD per chunk, its input blocks ceil(out_c / B)
 * rows apart, SRAM [ci][co] (the GEMM's weight factors swapped; B =
 * block_in = block_out).  Its padded rows
 * (k >= in_c) must be zero, as for the plain form. */
#define LOWER_CONV_RUNTIME_WGT_T 8u

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
  /* Max pooling fused after the requantization (a stem's 3x3/2 MaxPool,
   * lower_conv_pool_fits()); the job's output is the pooled tensor.  NULL:
   * none. */
  const struct lower_qpool *pool;
  /* The weights are the sum of in_passes int8 parts (0 or 1: one part), so
   * weights beyond int8 (a uint8 weight minus its zero point) run as a
   * reduction that reads every input block in_passes times
   * (lower_split_weights()). */
  uint32_t in_passes;
  /* The epilogue's activation table (docs/isa.md: E = LUT[q]), indexed by
   * the int8 bit pattern of q: 256 entries, loaded once per job; NULL:
   * none.  Not with a residual, a fused pool or an int32 result. */
  const int8_t *lut;
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
  uint32_t flags;             /* LOWER_CONV_ACC_OUT, LOWER_CONV_RUNTIME_WGT */
  const int8_t *lut;          /* as in lower_qconv */
  const struct lower_qresidual *residual; /* as in lower_qconv: a fused Add of y and [n][out_features] */
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

/* A chain of layers run as one job, the intermediate tensors staying on
 * chip (lower_chain.c): an optional 1x1 expansion, a depthwise
 * convolution, a 1x1 projection whose fused residual Add (if any) reads
 * the chain's input (then stride 1 and the expansion are required):
 * MobileNetV2's inverted residual block, or its first block without the
 * expansion.  Each layer computes exactly what it computes alone; the
 * job's IN (and IN2, for the residual) is the chain's input, OUT the
 * projection's output. */
struct lower_qchain {
  const struct lower_qconv *pw1; /* NULL: the depthwise layer reads the chain's input */
  const struct lower_qconv *dw;
  const struct lower_qconv *pw2;
};
int lower_chain(const struct loom_hw_config *cfg, const struct lower_qchain *ch, const char *where,
                struct lower_program *out, char msg[LOWER_MSG_MAX]);
/* lower_chain with bands of th output rows and groups of g expanded blocks
 * instead of the search (tests); -1 when that does not fit. */
int lower_chain_tiled(const struct loom_hw_config *cfg, const struct lower_qchain *ch, int32_t th, int32_t g,
                      const char *where, struct lower_program *out, char msg[LOWER_MSG_MAX]);

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
  LOWER_GEMM_DW,        /* depthwise GEMM micro-ops: the window's taps in the lanes (ISA v2) */
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
  int32_t epi;         /* ISA v2 epilogue: GEMM first/last with PAR rows (all but acc_out) */
  int32_t dw_rows;     /* DW: window rows per pass (block_in / k_w taps fit a WGT row) */
  int32_t dw_passes;   /* DW: passes over the window, ceil(k_h / dw_rows) */
  int32_t pool;        /* a fused 3x3/2 max pooling (lower_conv_pool.c) follows */
  int32_t pool_h, pool_w; /* its output: half the convolution's rows and columns */
  int32_t wgt_runtime;  /* LOWER_CONV_RUNTIME_WGT: dense weight rows from IN2, none in CONST */
  int32_t wgt_trans;    /* LOWER_CONV_RUNTIME_WGT_T: those rows transposed, [cib][cob] in DRAM */
  int32_t nc_rows;      /* fully connected on [N, C] (NC layout) walked as one image of N rows x 1:
                           pixel y of block b is DRAM row y * blocks + b, not b * N + y */
};

/* Where a convolution's constants are (lower_conv.c places them,
 * lower_conv_emit.c loads them). */
#define LOWER_ACC_OUT_ROWS 4 /* int32 results: the byte lanes' constant ACC rows */
struct lower_conv_consts {
  uint32_t param_row0;  /* int32 results: ACC row of the first bias row */
  uint64_t par_offset;  /* CONST bytes of the PAR rows (int32 results: of the ACC rows) */
  uint32_t wgt_row0;    /* CONST offset of the weights, in WGT rows (0 in IN2 for runtime weights) */
  uint32_t res_row;     /* CONST offset of the residual's b_weight x identity row */
  uint32_t period;      /* GCFG period of the GEMMs: kk (dense, diagonal), 1 (depthwise) */
  int32_t lut_row;      /* CONST offset of the activation table, in LUT rows; -1: none */
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

/* lower_conv_emit.c: the instruction stream of a tiled convolution. */
struct tile_ctx;
void lower_conv_emit(struct lower_program *p, const struct lower_qconv *l, const struct tile_ctx *c,
                     const struct lower_conv_consts *k);

/* lower_conv_pool.c: max pooling fused into a convolution's epilogue. */
struct tile_chunk;
struct emit_vec;
/* Whether `pool` can follow convolution `l` in one job: MaxPool 3x3/2,
 * padding 1 at the top and left, an even output of at most half an ACC
 * half per two rows. */
int lower_conv_pool_fits(const struct loom_hw_config *cfg, const struct lower_qconv *l,
                         const struct lower_qpool *pool);
/* The pooling passes, the epilogue and the pooled rows' store of the last
 * chunk of a tile (two convolution rows, one pooled row). */
void lower_conv_pool_tail(struct lower_program *p, const struct tile_ctx *c, const struct tile_chunk *ch,
                          struct emit_vec *post, struct emit_vec *store);
/* Compute cycles and micro-ops of that tail. */
uint64_t lower_conv_pool_cycles(const struct tile_ctx *c, const struct tile_chunk *ch);
uint32_t lower_conv_pool_uops(const struct lower_geom *g);

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
  uint32_t ih, iw;       /* input window rows and columns of a full tile (with iw_pad) */
  uint32_t iw_pad;       /* depthwise: a padding column that makes the row pitch odd */
  uint32_t inp_block;    /* INP rows per input block: ih * iw */
  uint32_t tile_pix;     /* ACC rows per output block: th * tw */
  uint32_t kk;           /* k_h * k_w */
  uint32_t res_offset;   /* residual: INP rows of a half before the residual tile */
  uint32_t res_wgt_row;  /* residual: the WGT row of b_weight x identity (the last one) */
  int par_resident;      /* epilogue: every output block's PAR row stays loaded (cob <= PAR rows) */
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
/* The `want` (<= TILE_TOP_MAX) cheapest tilings by the chunk pipeline,
 * cheapest first: how many (0 with *why when none fits).  The lowering
 * walks each emitted program (cost_simulate) and keeps the best: the chunk
 * pipeline ranks thousands of candidates, the walk's bus model decides
 * between the last few. */
#define TILE_TOP_MAX 8
int tile_search_top(const struct loom_hw_config *cfg, const struct lower_geom *g, uint32_t param_rows,
                    struct lower_tiling *top, int want, const char **why);
/* The SRAM layout of tiling t. */
void tile_layout_of(const struct loom_hw_config *cfg, const struct lower_geom *g, uint32_t param_rows,
                    const struct lower_tiling *t, struct tile_layout *L);
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
/* Depthwise GEMM (ISA v2) of `rows` output rows of `tw` pixels, `blocks`
 * channel blocks, a pass of `kh` window rows of `kw` columns whose window
 * slides `step` columns from pixel to pixel (reuse when step < kw), INP
 * rows `row` apart from window row to row and `col` from column to column. */
uint64_t cost_dw(uint64_t rows, uint64_t tw, uint64_t blocks, uint32_t kh, uint32_t kw, uint32_t step,
                 uint32_t row, uint32_t col);
/* LOAD INP from OUT writing `sram_rows` rows (data and padding). */
uint64_t cost_onchip(uint64_t sram_rows);
/* Cycles per depthwise micro-op whose window reads take `read_cycles`
 * (the RTL multiplies even and odd lanes in two cycles, overlapped with
 * the reads). */
uint64_t cost_dw_uop(uint64_t read_cycles);

/* Chunk-level pipeline model used by the tilers: feed chunks in order. */
struct cost_pipe {
  uint64_t comp_end[2], store_end[2]; /* chunk k-2 / k-1, tile o-2 / o-1, by parity */
  uint64_t load_prev, comp_prev, store_prev;
  uint64_t bus_bytes;                 /* every DRAM byte of the chunks so far */
#define COST_PIPE_BUS 32
  uint64_t bus_lo[COST_PIPE_BUS], bus_hi[COST_PIPE_BUS]; /* the bus's recent busy intervals */
  uint32_t nbus;
  uint32_t k, o;
};
void cost_pipe_init(struct cost_pipe *p, uint64_t prologue_compute);
/* One chunk: its load, compute, and (when it ends a tile) store cycles,
 * and the DRAM bytes of its load and store (they share the bus). */
void cost_pipe_chunk(struct cost_pipe *p, const struct loom_hw_config *cfg, uint64_t load, uint64_t load_bytes,
                     uint64_t compute, int first, int last, uint64_t store, uint64_t store_bytes);
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
 * an instruction-level timing model of the decoupled pipeline.  `uops`
 * (n_uops micro-ops, NULL when unknown) lets depthwise GEMMs count their
 * window reads. */
void cost_simulate(const struct loom_hw_config *cfg, const struct loom_insn *insns, uint32_t n,
                   const struct loom_uop *uops, uint32_t n_uops, struct cost_sim *out);

/* Fills the roofline fields of r from macs, min_bytes and est_cycles. */
void cost_roofline(const struct loom_hw_config *cfg, struct lower_report *r);

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
/* Depthwise weights [c][kh][kw] -> WGT rows [cob][pass] for depthwise GEMM
 * micro-ops (ISA v2): pass p holds window rows [p * rows_per_pass, ...),
 * row layout [o][t] with the taps column-major, t = column * rows + row. */
void pack_wgt_dw(const struct loom_hw_config *cfg, const int8_t *w, int32_t c, int32_t k_h, int32_t k_w,
                 int32_t rows_per_pass, int8_t *rows);
/* Per-channel biases and multipliers -> PAR rows of block_out lanes
 * (biases, then multipliers, int32 little-endian), zero padded. */
void pack_par_rows(const struct loom_hw_config *cfg, const int32_t *bias, const int32_t *mult, int32_t c,
                   uint8_t *rows);
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

/* emit.c and emit_deps.c: the instruction helpers every lowering uses. */
#include "sw_compiler/emit.h"

#endif
