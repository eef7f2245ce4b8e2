/*
 * compiler.h - a map of the Loom compiler.
 *
 *   model.onnx --onnx_import--> IR --passes--> IR --calib, quantize, fuse,
 *   partition--> fused int8 IR --lowering (lower.h)--> .loom (compile.h)
 *
 * The IR data structure and its builder are in ir.h; the driver that runs
 * everything and writes the .loom is compile.h, the lowering lower.h.
 * Below, one banner per file, in the order a model flows through them.  Every function that can
 * fail on user input returns 0 (or a pointer) on success and -1 (or NULL)
 * on failure, with an "file: where: what is wrong" message in *err.
 */
#ifndef LOOM_COMPILER_H
#define LOOM_COMPILER_H

#include <stdint.h>
#include <stdio.h>

#include "sw_compiler/ir.h"

/*
 * ir_print.c
 */

#define IR_PRINT_HEX 1u   /* constant data always as hex, never as a list */
#define IR_PRINT_ELIDE 2u /* large constants as `...` (not reparsable data) */

void ir_print(const struct ir_graph *g, FILE *f, unsigned flags);
char *ir_print_str(const struct ir_graph *g, unsigned flags); /* malloc'd */
void ir_print_node(FILE *f, const struct ir_graph *g, const struct ir_node *n);
void ir_print_type(FILE *f, const struct ir_tensor *t);
void ir_print_name(FILE *f, const char *name);
/* Shortest text that reads back as v; always has '.', 'e', inf or nan. */
void ir_format_float(float v, char *buf, size_t len);

/*
 * ir_parse.c
 */

/* Parses the text form; `source` names the text in messages. */
struct ir_graph *ir_parse(const char *text, const char *source, struct ir_error *err);

/*
 * ir_verify.c
 */

/* Checks definition before use, arity, dtypes, ranks and attributes. */
int ir_verify(const struct ir_graph *g, struct ir_error *err);
/* Whether node `node`'s operand dtypes and ranks, where known, are ones its
 * kind takes (a typed kind in other types becomes a generic node). */
int ir_kind_types_ok(const struct ir_graph *g, int node);

/* The attributes each op accepts (the ONNX importer accepts the same). */
struct ir_attr_spec {
  enum ir_op_kind op;
  const char *name;
  enum ir_attr_kind kind;
  int required;
};
const struct ir_attr_spec *ir_attr_spec_find(enum ir_op_kind op, const char *name);
/* The first required attribute node n lacks, or NULL. */
const char *ir_attr_missing(const struct ir_node *n);

/*
 * onnx_import.c, onnx_import_node.c, onnx_import_norm.c
 */

#define ONNX_MIN_OPSET 7  /* older models import when each op means what it means at 7 */
#define ONNX_MAX_OPSET 17
#define ONNX_MAX_FILE_BYTES (INT64_C(1) << 31)

struct ir_graph *onnx_import_file(const char *path, struct ir_error *err);
struct ir_graph *onnx_import_buffer(const uint8_t *buf, size_t len, const char *source,
                                    struct ir_error *err);

/*
 * pass_shape_infer.c
 */

/* Fills dtype and shape of every node result it can; checks those already
 * known (from ONNX value_info) agree; resolves auto_pad into pads and
 * defaults kernel_shape.  Unknown operand shapes leave results unknown. */
int ir_pass_shape_infer(struct ir_graph *g, struct ir_error *err);

/*
 * pass_const_fold.c
 */

/* Evaluates IR_OPF_FOLDABLE nodes whose operands are constant (and Shape of
 * a statically shaped tensor); their results become constants.  *changed
 * tells whether anything was folded. */
int ir_pass_const_fold(struct ir_graph *g, int *changed, struct ir_error *err);

/*
 * pass_simplify.c
 */

/* Export habits in the forms fusion matches, all exact: Relu/Clip chains as
 * one Clip, spatial ReduceMean as GlobalAveragePool, a zero Pad into the
 * next Conv's or AveragePool's pads, Sub of a constant as Add, a Transpose
 * that only moves axes of size 1 as a Reshape. */
int ir_pass_simplify(struct ir_graph *g, struct ir_error *err);

/*
 * pass_layernorm.c
 */

/* A LayerNorm exported as ReduceMean, Sub, Pow 2, ReduceMean, Add eps,
 * Sqrt, Div (and Mul gamma, Add beta) over the last axis, its
 * intermediates read nowhere else: one LayerNormalization (opset 17). */
int ir_pass_layernorm(struct ir_graph *g, struct ir_error *err);

/*
 * pass_const_ops.c
 */

/* Accelerator target: Mul / Div / Add of an NCHW activation by a
 * per-channel or scalar constant folded into the Conv before it, or as a
 * depthwise 1x1 Conv. */
#define CONST_OPS_NO_ACT 1u /* activation regions' scalar steps become convolutions too (--no-act) */
int ir_pass_const_ops_to_conv(struct ir_graph *g, unsigned flags, struct ir_error *err);

/*
 * pass_bn_fold.c
 */

/* Folds BatchNormalization after a Conv into the conv's weights and bias;
 * a BN without one becomes a per-channel Mul + Add. */
int ir_pass_bn_fold(struct ir_graph *g, struct ir_error *err);

/*
 * pass_dce.c
 */

/* Removes nodes whose results nothing uses, and unused tensors. */
void ir_pass_dce(struct ir_graph *g);

/*
 * passes.c
 */

/* shape inference + constant folding to a fixed point, BN folding, DCE,
 * shape inference and verification. */
int ir_run_default_passes(struct ir_graph *g, struct ir_error *err);

/*
 * ir_eval_ref.c
 */

/* Runs the graph on the CPU.  inputs[i] holds graph input i (dense,
 * row-major, its dtype); outputs[i] receives a malloc'd buffer for graph
 * output i.  Needs every shape known. */
int ir_eval_ref(const struct ir_graph *g, const void *const *inputs, void **outputs,
                struct ir_error *err);
/* Runs one node: in[k] / out[k] are the buffers of its operands / results
 * (in[k] NULL for an absent optional operand). */
int ir_eval_node(const struct ir_graph *g, int node, const void *const *in, void *const *out,
                 struct ir_error *err);

/*
 * ir_eval_host.c
 */

/* Runs node `node` on the portable host kernel of its ONNX op (generic
 * nodes, and typed ones as the op of their form).  in / out as for
 * ir_eval_node; a result's buffer must hold its dims (a capacity for a
 * data-dependent one); dims (may be NULL) receives each result's real dims. */
int ir_eval_kernel(const struct ir_graph *g, int node, const void *const *in, void *const *out,
                   int64_t (*dims)[IR_MAX_RANK], struct ir_error *err);
/* Whether the host kernels have op `op`. */
int ir_have_kernel(const char *op);
/* Whether attribute a of node n is ONNX's (not a Loom marker). */
int ir_attr_is_onnx(const struct ir_node *n, const struct ir_attr *a);

/*
 * conv_f32.c
 */

/* The geometry of a 1-D or 2-D convolution or pooling window (1-D: h = oh
 * = kh = 1). */
struct conv_geo {
  int64_t n, c, h, w;      /* input */
  int64_t m, cg, kh, kw;   /* weight: out channels, in channels per group */
  int64_t oh, ow, group;
  int64_t sh, sw, dh, dw, pt, pl;
};

/* Float convolution y = conv(x, w) + b (b may be NULL), NCHW, weight
 * [m][cg][kh][kw]: the same floats as the plain loop (each output: bias,
 * then w*x in (ci, kh, kw) order), computed with im2col panels, a vector
 * micro-kernel and one thread per core. */
void conv_f32(const struct conv_geo *g, const float *x, const float *w, const float *b, float *y);

/*
 * calib.c
 */

/* The range of values one float tensor took over the calibration set. */
struct calib_range {
  float lo, hi;             /* observed */
  float clip_lo, clip_hi;   /* the clipped range: MSE-optimal or a percentile (when asked for) */
  int seen;                 /* the tensor was computed (it is a float activation) */
  float *sample;            /* subsample of its values (owned) */
  int n_sample, cap_sample;
  double *ch_sum;           /* per channel (axis 1): sum of values (owned) */
  float *ch_lo, *ch_hi;     /* per channel: observed range (owned) */
  int64_t ch_count;         /* values summed per channel */
  int channels;
};

/* Runs the float graph on every sample under `path` (a directory of .npy
 * files, or one .npy file; an array with a leading dimension that is a
 * multiple of the input's is split into samples) and records, in ranges[t]
 * for every tensor t (g->n_tensors entries), the min and max of its float
 * values.  *samples gets the number of samples run.  `prog` (may be NULL)
 * hears of every batch of samples. */
int calib_collect(const struct ir_graph *g, const char *path, struct calib_range *ranges,
                  int *samples, const struct ir_progress *prog, struct ir_error *err);
/* Fills clip_lo / clip_hi of n ranges (the MSE search: costly, so only
 * when asked for). */
void calib_choose_clip(struct calib_range *ranges, int n);
/* Fills clip_lo / clip_hi of n ranges with the (100 - p)th and the pth
 * percentile of each subsample (never wider than lo / hi); p in (50, 100],
 * else an error naming it. */
int calib_choose_percentile(struct calib_range *ranges, int n, double p, struct ir_error *err);
/* Frees the subsamples of n ranges. */
void calib_ranges_free(struct calib_range *ranges, int n);
/* Mean of channel c (axis 1) over the calibration set; 0 when unknown. */
double calib_channel_mean(const struct calib_range *r, int c);

/*
 * pass_quantize.c
 */

/* Asymmetric int8 parameters covering [lo, hi] (widened to include 0):
 * real = scale * (q - zp), q in -128..127. */
void quant_choose_params(float lo, float hi, float *scale, int32_t *zp);
/* int8 value of real `v` under (scale, zp), saturating. */
int32_t quant_value(double v, float scale, int32_t zp);
/* Fixed-point multipliers for per-channel real factors real[0..n) that
 * share one shift (the ISA's vector REQUANT): the largest gets m in
 * [2^30, 2^31), the others m = round(real * 2^shift).  -1 when a factor is
 * negative, not finite, or too large or small for shifts 0..63. */
int quant_multipliers(const double *real, int n, int32_t *mult, uint32_t *shift);

/* Turns a float graph into QDQ form from calibration ranges (ranges[t] as
 * calib_collect fills them): weights of Conv / Gemm / MatMul become int8
 * per output channel (symmetric), biases int32 at scale s_in * s_w, and
 * every activation an accelerator op reads or writes gets a
 * QuantizeLinear -> DequantizeLinear pair with asymmetric per-tensor int8
 * parameters.  pass_fuse.c then folds the pairs into fused ops. */
#define QUANT_CLIP 1u /* use the clipped activation ranges (clip_lo / clip_hi: MSE or percentile, calib.c) */
#define QUANT_NO_ACT 2u   /* no int8 points around activations (they stay float: no tables) */
int ir_pass_quantize(struct ir_graph *g, const struct calib_range *ranges, int n_ranges, unsigned flags,
                     struct ir_error *err);
/* Whether the graph already carries quantization (Q/DQ nodes, QLinear or
 * Integer ops): then its scales are used as given. */
int ir_graph_is_quantized(const struct ir_graph *g);

/*
 * pass_fuse.c
 */

/* Folds QDQ patterns, QLinearConv and QLinearMatMul into the fused int8 ops
 * (loom.QConv, QGemm, QAdd, QPool): conv / matmul + bias + requantization +
 * ReLU / ReLU6, residual adds, pools; uint8 tensors become int8 with the
 * zero point moved by 128; int8 Reshape-like ops replace their QDQ
 * sandwiches; Q(DQ(x)) with equal parameters cancels; a residual QAdd
 * joins the QConv that feeds it.  Every int8 activation gets its
 * quantization in tensor->quant. */
#define FUSE_NO_RESIDUAL 1u /* keep residual Adds as jobs of their own */
#define FUSE_NO_ACT 2u      /* no activation tables (pass_fuse_act.c): they stay float */
int ir_pass_fuse(struct ir_graph *g, unsigned flags, struct ir_error *err);

/*
 * pass_attention.c: matmuls of two activations on the accelerator
 */

/* Before calibration: a float MatMul of two activations batched over a
 * leading dimension (attention heads) becomes one 2-D MatMul per batch on
 * row slices of the operands viewed as [H * rows, cols] (or, for the
 * first one, column slices of the heads side by side when they are whole
 * channel blocks of `block`), with a Concat and a Reshape back. */
int ir_pass_split_act_matmul(struct ir_graph *g, int block, struct ir_error *err);
/* Whether node i is a float 2-D MatMul of two activations (the quantizer
 * gives its operands symmetric parameters). */
int ir_is_act_matmul(const struct ir_graph *g, int i);
/* When t is one head's slice of an attention operand (the Slice
 * ir_pass_split_act_matmul makes: rows of the heads stacked, axis 0, or
 * columns of the heads side by side, axis 1 of a rank-2 tensor, or of
 * K's WGT rows [M/B, D, B, 1] that its projection stores): that
 * tensor, with the first row or column in *start and the axis in *axis
 * (either may be NULL); else -1.  Its int8 form is a window of that
 * tensor's, read in place. */
int ir_head_slice_of(const struct ir_graph *g, int t, int64_t *start, int *axis);
/* When an attention operand's stacked heads t are the elements of an
 * activation x only moved (views, Transposes, Slices: K's and V's heads of
 * their projection's result): x, whose quantization t shares (so the
 * weights' rows are made from x's integers); else -1. */
int ir_head_stack_source(const struct ir_graph *g, int t);
/* Slice node i: one axis, step 1, constant bounds within its operand:
 * the axis (made non-negative) and the first index in *start, else -1. */
int ir_plain_slice(const struct ir_graph *g, int i, int64_t *start);
/* When Transpose node tr makes K's (or V's) WGT rows [M/B, D, B, 1] (perm
 * 0 2 1 3, B = block) from a projection's int8 result [M, C] (a QGemm with
 * constant weights) only viewed, perhaps sliced to its columns
 * [c0, c0 + D) (K's or V's of an in_proj result, whole blocks, which no
 * other reader reads: Q's and the other one's), padded with zero token rows up to whole
 * blocks (a Concat) and viewed as [M/B, B, D, 1], each tensor after the
 * Slice read by the next node alone: that QGemm node, whose job stores
 * the rows itself (lower_program_wgt_rows), so the nodes from tr back to
 * the Slice (or the QGemm) are nothing at run time; they go into nodes
 * (tr first; up to 8, may be NULL) and their count into *n_nodes, c0
 * into *col0 (may be NULL).  Else -1. */
int ir_wgt_rows_store(const struct ir_graph *g, int tr, int block, int *nodes, int *n_nodes, int64_t *col0);
/* The node scaling matmul result y (a Div or Mul by a positive float
 * scalar constant, y's only reader, attention's 1/sqrt(d) moved there by
 * ir_pass_split_act_matmul): its constant in *c and whether it divides in
 * *div (either may be NULL); the requantization takes it.  Else -1. */
int ir_act_matmul_scale(const struct ir_graph *g, int y, double *c, int *div);
/* Whether node is such a scale of the product of two activations (batched
 * or not): it stays float until ir_pass_split_act_matmul moves it onto the
 * heads (ir_pass_const_ops_to_conv leaves it). */
int ir_is_scores_scale(const struct ir_graph *g, int node);
/* After ir_pass_fuse: DQ(a) x DQ(b) -> Q (int8, zero points 0) becomes a
 * loom.QGemm whose weights are b in the WGT row layout of channel block
 * `block`, an activation loaded at run time. */
int ir_pass_fuse_act_matmul(struct ir_graph *g, int block, struct ir_error *err);
/* MatMul of a matrix by a constant (or DQ'd constant) matrix, with the
 * bias Add that may follow, as a Gemm: the form both the quantizer and the
 * fusion patterns know.  Part of ir_pass_fuse; run it alone before
 * calibration. */
int ir_pass_fuse_matmul_bias(struct ir_graph *g, struct ir_error *err);

/*
 * pass_partition.c
 */

enum part_target {
  PART_NONE = 0, /* no run-time work (constants) */
  PART_ACCEL,    /* one accelerator job */
  PART_HOST,     /* host op(s) on the CPU (driver/core/hostops.h) */
  PART_KERNEL,   /* the ONNX op on the portable host kernels (driver/core/kernel.h) */
  PART_ALIAS,    /* a view: the result shares its operand's bytes */
  PART_COUNT
};
extern const char *const part_target_names[PART_COUNT];

/* Decides where each node runs (targets[i] for node i) and the stored
 * layout of every tensor (tensor->layout NCHWc with `block` for those the
 * accelerator touches, plain otherwise).  Fails, naming the node, for an op
 * that neither the accelerator nor the host runtime can execute. */
int ir_pass_partition(struct ir_graph *g, int block, enum part_target *targets,
                      struct ir_error *err);
/* Every node on the host (loom compile --target cpu): views stay views, the
 * rest kernel steps; every tensor plain. */
int ir_pass_partition_host(struct ir_graph *g, enum part_target *targets, struct ir_error *err);

#endif
