/*
 * ir.h - the tensor IR: a graph of ops on typed, shaped tensors.
 *
 * A graph owns two arrays: tensors (values) and nodes (ops).  Everything
 * refers to a tensor by its index in g->tensors, so pointers into the arrays
 * are only valid until the next tensor or node is added.  A tensor is one of:
 *   - a graph input       (is_input set, no producer, no data),
 *   - a constant          (data != NULL, no producer),
 *   - an intermediate     (produced by exactly one node).
 * Nodes are kept in a topological order: the builder, the parser and the
 * ONNX importer only add a node after its inputs are defined, and passes
 * that rewrite the graph keep that order (ir_verify checks it).
 *
 * Shapes may be partly unknown (rank -1, or a dim of -1) until shape
 * inference has run; dtype IR_DT_UNDEF likewise.  The reference interpreter
 * and the lowering require fully known shapes.
 *
 * Constructors build, backends compute: the builder functions below only
 * record an op, its sources and its attributes; shape inference, folding
 * and evaluation live in their own files (see compiler.h for the map).
 *
 * Memory: allocation failure is treated as a broken invariant (the process
 * stops with a message) because every size that comes from user input is
 * checked against caps (ir_numel_checked) before anything is allocated.
 */
#ifndef LOOM_IR_H
#define LOOM_IR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "driver/core/core.h"

#define IR_MAX_RANK 6
/* Caps on what any user input (ONNX file, IR text) may ask for. */
#define IR_MAX_DIM (INT64_C(1) << 31)
#define IR_MAX_TENSOR_BYTES (INT64_C(1) << 32)

/* Broken invariants (bugs in Loom, never user input) stop the process
 * through LOOM_ASSERT (driver/core/core.h), the one assert of user space. */

/* An error for the user: "file: where: what is wrong". */
struct ir_error {
  char msg[1024];
};
void ir_errorf(struct ir_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Progress of a long compile (compile_options.progress): the stage
 * ("calibration", "tiling", ...) has done `done` of `total` items (total
 * 0: unknown).  The compiler prints nothing itself. */
struct ir_progress {
  void (*fn)(void *ctx, const char *stage, int done, int total);
  void *ctx;
};
static inline void ir_progress_report(const struct ir_progress *p, const char *stage, int done, int total) {
  if (p && p->fn) p->fn(p->ctx, stage, done, total);
}

struct ir_graph;
/* The compiler's one error helper: "source: where: what" into err, where
 * `where` names node `node` of g (ir_node_where), or "graph" when node < 0.
 * Returns -1, so that `return ir_fail(...)` ends a failing pass. */
int ir_fail(struct ir_error *err, const struct ir_graph *g, int node, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same with the place spelled by the caller ("source: what" when
 * `where` is NULL or empty), for places outside the graph such as a node
 * of the ONNX file being imported. */
int ir_fail_at(struct ir_error *err, const char *source, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- element types ---- */

enum ir_dtype {
  IR_DT_UNDEF, /* not known yet (before shape inference) */
  IR_DT_F32,   /* IEEE binary32 */
  IR_DT_I8,    /* signed 8-bit (quantized activations and weights) */
  IR_DT_U8,    /* unsigned 8-bit (quantized activations) */
  IR_DT_I32,   /* accumulators, quantized biases */
  IR_DT_I64,   /* shape tensors and indices at import */
  /* Host-only types: graph inputs and outputs, and nodes that run on the
   * host in their own type (comparisons give bool, Cast any of these). */
  IR_DT_BOOL,  /* one byte, 0 or 1 */
  IR_DT_I16,
  IR_DT_U16,
  IR_DT_U32,
  IR_DT_U64,
  IR_DT_F16,   /* IEEE binary16 */
  IR_DT_BF16,  /* bfloat16 */
  IR_DT_F64,
  IR_DT_COUNT
};
const char *ir_dtype_name(enum ir_dtype dt);     /* "f32", "?" for UNDEF */
int ir_dtype_from_name(const char *name);         /* -1 when unknown */
size_t ir_dtype_size(enum ir_dtype dt);           /* 0 for UNDEF */
int ir_dtype_is_float(enum ir_dtype dt);          /* f16, bf16, f32, f64 */
/* The IR type of an ONNX TensorProto.DataType code, -1 when none (string,
 * complex, unknown). */
int ir_dtype_from_onnx(int64_t code);
/* The runtime's name for an IR type (LOOM_DT_INVALID for UNDEF), and back
 * (IR_DT_UNDEF for a type the IR lacks). */
loom_dtype ir_dtype_to_loom(enum ir_dtype dt);
enum ir_dtype ir_dtype_from_loom(loom_dtype dt);

/* ---- layouts ---- */

enum ir_layout {
  IR_LAYOUT_PLAIN,  /* no meaning attached to the axes (default) */
  IR_LAYOUT_NCHW,   /* batch, channels, rows, columns */
  IR_LAYOUT_NHWC,   /* channels last */
  IR_LAYOUT_NCHWC,  /* blocked: N, C/k, H, W, k with k = layout_block */
  IR_LAYOUT_COUNT
};
const char *ir_layout_name(enum ir_layout l);     /* "NCHWc" for blocked */

/* ---- quantization parameters ---- */

/* real = scale * (q - zero_point).  n == 0: none.  axis < 0: per-tensor
 * (n == 1); axis >= 0: one scale and zero point per index along `axis`. */
struct ir_quant {
  int n;
  int axis;
  float *scale;          /* n entries, owned */
  int32_t *zero_point;   /* n entries, owned */
};

/* ---- tensors ---- */

struct ir_tensor {
  char *name;              /* unique within the graph */
  enum ir_dtype dtype;
  int rank;                /* -1: unknown */
  int64_t dims[IR_MAX_RANK]; /* -1: unknown dim */
  void *data;              /* constant data, owned; NULL if not constant */
  size_t nbytes;           /* bytes of data */
  int is_input;            /* a graph input */
  int dyn;                 /* dims are a capacity: the op's result size depends on data
                            * (NonZero, Unique, ...); the run time reports the real dims */
  enum ir_layout layout;
  int layout_block;        /* k of NCHWc<k> */
  struct ir_quant quant;
};

/* ---- ops ---- */

enum ir_op_kind {
  IR_OP_CONV,               /* X, W, B? -> Y; NC[D] spatial, groups */
  IR_OP_GEMM,               /* A, B, C? -> alpha*A'B' + beta*C */
  IR_OP_MATMUL,             /* numpy matmul with batch broadcasting */
  IR_OP_RELU,               /* max(x, 0) */
  IR_OP_CLIP,               /* X, min?, max? (scalars) */
  IR_OP_ADD,                /* broadcasting add */
  IR_OP_MUL,                /* broadcasting multiply */
  IR_OP_MAXPOOL,            /* kernel_shape, pads, strides, dilations, ceil_mode */
  IR_OP_AVERAGEPOOL,        /* kernel_shape, pads, strides, count_include_pad */
  IR_OP_GLOBALAVERAGEPOOL,  /* mean over spatial axes, keeps rank */
  IR_OP_FLATTEN,            /* to 2-D at `axis` */
  IR_OP_RESHAPE,            /* X, shape(i64) -> Y; 0 copies, -1 infers */
  IR_OP_TRANSPOSE,          /* perm */
  IR_OP_CONCAT,             /* variadic, along `axis` */
  IR_OP_BATCHNORM,          /* X, scale, B, mean, var (inference form) */
  IR_OP_SOFTMAX,            /* along `axis` (legacy_2d: opset < 13 form) */
  IR_OP_IDENTITY,           /* Y = X */
  IR_OP_QUANTIZELINEAR,     /* X, y_scale, y_zero_point? -> i8/u8 */
  IR_OP_DEQUANTIZELINEAR,   /* X, x_scale, x_zero_point? -> f32 */
  IR_OP_QLINEARCONV,        /* x, xs, xzp, w, ws, wzp, ys, yzp, B? */
  IR_OP_QLINEARMATMUL,      /* a, as, azp, b, bs, bzp, ys, yzp */
  IR_OP_CONVINTEGER,        /* x, w, xzp?, wzp? -> i32 */
  IR_OP_MATMULINTEGER,      /* a, b, azp?, bzp? -> i32 */
  IR_OP_CONSTANT,           /* value=<const tensor> -> copy of it */
  IR_OP_SHAPE,              /* X -> i64 dims (start/end) */
  IR_OP_GATHER,             /* data, indices along `axis` */
  IR_OP_UNSQUEEZE,          /* insert size-1 `axes` */
  IR_OP_SQUEEZE,            /* drop size-1 `axes` (all if absent) */
  /* Fused int8 ops: what pass_fuse.c builds and the lowering runs, one
   * accelerator job each.  All operands are present (no optional ones);
   * activations are int8, quantization parameters are attributes (ints):
   * in_zp, out_zp, lo, hi (the clamp: ReLU / ReLU6 / saturation), shift
   * (0..63), round_even.  REQ(v, m) = clamp(rshift(v * m, shift) + out_zp,
   * lo, hi) with rshift exactly the ALU's REQUANT (docs/isa.md).  The
   * reference interpreter evaluates them with these integer semantics, so
   * it predicts the accelerator bit for bit (docs/quantization.md).
   * QConv and QGemm also take wide weights (w i32: a uint8 weight minus its
   * zero point; the lowering splits them into int8 passes) and may have an
   * i32 result: then y = the accumulator bias + sum w * (x - in_zp) itself,
   * without requantization (ConvInteger, MatMulInteger; mult is ignored). */
  IR_OP_QCONV,              /* x, w i8 [O][C/g][kh][kw], bias i32 [O], mult i32 [O] (, r);
                             * Conv attrs; y[o] = REQ(bias[o] + sum w * (x - in_zp), mult[o]),
                             * padding reads in_zp.  With a residual r (a fused QAdd): y is
                             * QAdd of that result (a_zp = out_zp) and r, attrs res_a_weight,
                             * res_b_weight, res_b_zp, res_multiplier, res_shift, res_out_zp,
                             * res_lo, res_hi */
  IR_OP_QGEMM,              /* x [N,K], w i8 [O,K], bias i32 [O], mult i32 [O] (, r);
                             * y[n][o] = REQ(bias[o] + sum_k w[o][k] * (x[n][k] - in_zp), mult[o]);
                             * a residual r [N,O] as QConv's (constant w only) */
  IR_OP_QADD,               /* a, b (same shape); attrs a_zp, b_zp, a_weight, b_weight,
                             * multiplier: y = REQ(a_weight * (a - a_zp) + b_weight * (b - b_zp), multiplier) */
  IR_OP_QPOOL,              /* x; attrs avg (0: max, 1: average), kernel_shape, strides, pads,
                             * multiplier; max: y = max over the window (padding ignored);
                             * avg: y = REQ(sum (x - in_zp), multiplier), padding reads in_zp */
  /* Any other standard ONNX op, kept as it came: node->type names it,
   * node->opset is the version whose semantics apply, the attributes are
   * ONNX's.  Shape inference knows every such type (shape_onnx*.c); it runs
   * on the host through the portable kernels (driver/core/kernel.h), which
   * also evaluate it for constant folding and calibration. */
  IR_OP_ONNX,
  IR_OP_COUNT
};

/* IR_OPF_*: properties of an op used by generic passes. */
#define IR_OPF_FOLDABLE 1u  /* const_fold may evaluate it on constants */
#define IR_OPF_VARIADIC 2u  /* max_in is not a limit */

struct ir_op_info {
  const char *name;        /* ONNX op type where one exists */
  int min_in, max_in;      /* operand count range (absent optional: -1 id) */
  int n_out;               /* result count */
  unsigned flags;
};
extern const struct ir_op_info ir_op_infos[IR_OP_COUNT];
struct ir_node;
const char *ir_op_name(enum ir_op_kind op);
int ir_op_from_name(const char *name);  /* -1 when unknown (and for "onnx") */
/* A view: Flatten, Reshape, Squeeze, Unsqueeze or Identity, whose result
 * holds its first operand's elements in the same order. */
int ir_op_is_view(enum ir_op_kind op);
/* The ai.onnx opset whose form a node of a typed kind has (the importer
 * keeps one form per kind: Clip bounds as operands, Squeeze axes as an
 * attribute, ...), for running it as an ONNX op on the host kernels.  A
 * generic node answers its own opset. */
int ir_kind_opset(const struct ir_node *n);

/* ---- attributes ---- */

enum ir_attr_kind {
  IR_ATTR_INT,     /* int64 */
  IR_ATTR_FLOAT,   /* float */
  IR_ATTR_INTS,    /* list of int64 */
  IR_ATTR_FLOATS,  /* list of float */
  IR_ATTR_STRING,  /* NUL-terminated string */
  IR_ATTR_TENSOR,  /* a constant tensor of the graph, by id */
  IR_ATTR_STRINGS, /* list of NUL-terminated strings */
  IR_ATTR_COUNT
};
const char *ir_attr_kind_name(enum ir_attr_kind k);

struct ir_attr {
  char *name;
  enum ir_attr_kind kind;
  int64_t i;        /* INT */
  float f;          /* FLOAT */
  int tensor;       /* TENSOR */
  int n;            /* INTS / FLOATS count */
  int64_t *ints;    /* INTS, owned */
  float *floats;    /* FLOATS, owned */
  char *s;          /* STRING, owned */
  char **strs;      /* STRINGS (n of them), owned */
};

/* ---- nodes and graphs ---- */

struct ir_node {
  enum ir_op_kind op;
  char *type;       /* IR_OP_ONNX: the ONNX op type ("Resize"), owned; else NULL */
  int opset;        /* IR_OP_ONNX: the ai.onnx version whose semantics apply */
  char *name;       /* optional (NULL); kept from ONNX for messages */
  int n_in;
  int *in;          /* tensor ids; -1 for an absent optional operand */
  int n_out;
  int *out;
  int n_attrs;
  struct ir_attr *attrs;
  int dead;         /* marked for removal by ir_graph_compact */
};

struct ir_graph {
  char *source;     /* file name used in messages ("<text>" when none) */
  struct ir_tensor *tensors;
  int n_tensors, cap_tensors;
  struct ir_node *nodes;
  int n_nodes, cap_nodes;
  int *inputs;      /* graph inputs, in order */
  int n_inputs, cap_inputs;
  int *outputs;     /* graph outputs, in order */
  int n_outputs, cap_outputs;
  int *name_map;    /* open-addressing hash: name -> tensor id (-1 empty) */
  int name_map_cap;
  struct ir_dim_name *dim_names; /* symbolic dims of graph inputs, from the model */
  int n_dim_names;
};

/* A graph input's dimension the model left symbolic ("batch"): unknown (-1)
 * until fixed (loom compile --input-shape). */
struct ir_dim_name {
  int tensor, dim;
  char *name;       /* owned; "" for a dimension without a name */
};

/* ---- ir.c: graph construction and small helpers ---- */

struct ir_graph *ir_graph_new(const char *source);
void ir_graph_free(struct ir_graph *g);

/* Adds a tensor; name NULL picks a fresh "t<N>"; returns its id, or -1 if
 * the name is taken.  dims may be NULL when rank <= 0.  Adding moves
 * g->tensors; dims (and ir_const_add's data) may point into it all the
 * same: they are copied first. */
int ir_tensor_add(struct ir_graph *g, const char *name, enum ir_dtype dt,
                  int rank, const int64_t *dims);
/* Adds a constant (data copied; NULL means zeros).  Shape must be known. */
int ir_const_add(struct ir_graph *g, const char *name, enum ir_dtype dt,
                 int rank, const int64_t *dims, const void *data);
/* Adds a graph input. */
int ir_input_add(struct ir_graph *g, const char *name, enum ir_dtype dt,
                 int rank, const int64_t *dims);
void ir_output_add(struct ir_graph *g, int tensor);
int ir_tensor_find(const struct ir_graph *g, const char *name); /* -1 */
/* Who writes and who reads tensor t, among live nodes (dead ones do not
 * count).  ir_sole_reader: the one node reading t (in one slot or several);
 * -1 when none or several read it, or t is a graph output. */
int ir_producer(const struct ir_graph *g, int t);
int ir_sole_reader(const struct ir_graph *g, int t);

/* Records a node; returns its index.  in[i] may be -1 (absent optional). */
int ir_node_add(struct ir_graph *g, enum ir_op_kind op, const char *name,
                int n_in, const int *in, int n_out, const int *out);
/* Like ir_node_add, but places the node at index pos (later nodes move up
 * by one); returns pos. */
int ir_node_insert(struct ir_graph *g, int pos, enum ir_op_kind op, const char *name,
                   int n_in, const int *in, int n_out, const int *out);
/* Records a generic node (IR_OP_ONNX) of ONNX type `type` at `opset`. */
int ir_node_add_onnx(struct ir_graph *g, const char *type, int opset, const char *name,
                     int n_in, const int *in, int n_out, const int *out);
/* Turns a node of a typed kind into the generic node of the same ONNX op
 * (type = the kind's name; opset given, or ir_kind_opset when <= 0): for
 * forms the kind does not cover, which then run on the host kernels. */
void ir_node_demote(struct ir_graph *g, int node, int opset);
/* The op type as ONNX names it: node->type for a generic node, else the
 * kind's name. */
const char *ir_node_op(const struct ir_node *n);
/* Records a single-result node with a fresh result tensor of unknown type;
 * returns the result tensor id. */
int ir_build(struct ir_graph *g, enum ir_op_kind op, int n_in, const int *in);

void ir_attr_set_int(struct ir_graph *g, int node, const char *name, int64_t v);
void ir_attr_set_float(struct ir_graph *g, int node, const char *name, float v);
void ir_attr_set_ints(struct ir_graph *g, int node, const char *name,
                      int n, const int64_t *v);
void ir_attr_set_floats(struct ir_graph *g, int node, const char *name,
                        int n, const float *v);
void ir_attr_set_string(struct ir_graph *g, int node, const char *name, const char *s);
void ir_attr_set_tensor(struct ir_graph *g, int node, const char *name, int tensor);
void ir_attr_set_strings(struct ir_graph *g, int node, const char *name, int n,
                         const char *const *v);
const struct ir_attr *ir_attr_find(const struct ir_node *n, const char *name);
void ir_attr_remove(struct ir_node *n, const char *name);
int64_t ir_attr_int(const struct ir_node *n, const char *name, int64_t dflt);
float ir_attr_float(const struct ir_node *n, const char *name, float dflt);
const char *ir_attr_string(const struct ir_node *n, const char *name, const char *dflt);
/* An INTS attribute: its count and values, or -1 when absent. */
int ir_attr_ints(const struct ir_node *n, const char *name, const int64_t **v);
/* Copies every attribute of node `from` (of graph gf) onto node `to` of g;
 * tensor attributes must name tensors of g (gf == g). */
void ir_attrs_copy(struct ir_graph *g, int to, const struct ir_node *from);
/* Records that dim `dim` of graph input `tensor` is named `name` in the model. */
void ir_dim_name_add(struct ir_graph *g, int tensor, int dim, const char *name);

/* Sets per-tensor (axis < 0, n == 1) or per-axis quantization parameters. */
void ir_quant_set(struct ir_graph *g, int tensor, int axis, int n,
                  const float *scale, const int32_t *zero_point);

/* Element count with overflow and cap checks; -1 when unknown, too big
 * (above IR_MAX_TENSOR_BYTES elements) or overflowing.  ir_tensor_bytes
 * likewise, in bytes (at most IR_MAX_TENSOR_BYTES). */
int64_t ir_numel_checked(int rank, const int64_t *dims);
int64_t ir_tensor_numel(const struct ir_tensor *t);
int64_t ir_tensor_bytes(const struct ir_tensor *t);
int ir_shape_known(const struct ir_tensor *t);
/* Replaces the data of tensor t (copied), making it a constant. */
void ir_tensor_set_data(struct ir_graph *g, int t, const void *data, size_t nbytes);

/* ---- ir_elem.c: elements of any dtype ---- */

/* Element i of a buffer of dtype dt as double / int64 (bool is 0 or 1). */
double ir_load_f64(enum ir_dtype dt, const void *p, int64_t i);
int64_t ir_load_i64(enum ir_dtype dt, const void *p, int64_t i);
/* Stores: a double into a float type rounds to nearest, into an integer
 * type truncates toward zero and saturates (NaN stores 0); an int64 into an
 * integer type wraps (as ONNX Cast between integers does).  bool stores
 * v != 0. */
void ir_store_f64(enum ir_dtype dt, void *p, int64_t i, double v);
void ir_store_i64(enum ir_dtype dt, void *p, int64_t i, int64_t v);
float ir_f16_to_f32(uint16_t h);
uint16_t ir_f32_to_f16(float f);

/* Fills buf with 0, 1, 2, ... in dtype dt (integer types wrap, bool
 * alternates). */
void ir_fill_seq(enum ir_dtype dt, int64_t n, void *buf);

/* Rewires every use of tensor `from` (node operands, graph outputs) to `to`. */
void ir_replace_uses(struct ir_graph *g, int from, int to);
/* producer[t] = node index or -1, for every tensor (array of n_tensors). */
void ir_producers(const struct ir_graph *g, int *producer);
/* uses[t] = number of node operands + graph outputs naming t. */
void ir_use_counts(const struct ir_graph *g, int *uses);
/* Drops dead nodes and tensors nothing refers to; renumbers ids. */
void ir_graph_compact(struct ir_graph *g);
/* "node 3 'conv1' (Conv)" for messages. */
const char *ir_node_where(const struct ir_graph *g, int node, char *buf, size_t len);

void *ir_xmalloc(size_t n);
void *ir_xcalloc(size_t n, size_t size);
void *ir_xrealloc(void *p, size_t n);
char *ir_xstrdup(const char *s);

#endif
