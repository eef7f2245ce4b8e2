/*
 * shape_infer.h - what the shape inference files share: the per-node
 * context, shapes, and the helpers that read operands and attributes and
 * record results (shape_util.c).  pass_shape_infer.c infers the typed
 * kinds and dispatches generic ONNX nodes to shape_onnx.c, which holds the
 * table of every ONNX op type and the elementwise, broadcasting and
 * reduction families; shape_onnx_data.c has data movement, shape_onnx_nn.c
 * the neural-network, recurrent, signal and loss ops.
 *
 * Every infer function returns 0 when it set the results or could not yet
 * (an operand's shape or a constant operand it needs is not known: the pass
 * manager reruns inference after folding), and -1 with a message naming
 * the node when the node is wrong.
 */
#ifndef LOOM_SHAPE_INFER_H
#define LOOM_SHAPE_INFER_H

#include "sw_compiler/compiler.h"

struct shape {
  int rank;
  int64_t d[IR_MAX_RANK];
};

struct sctx {
  struct ir_graph *g;
  struct ir_error *err;
  int node;
};

struct window {
  int nsp;                    /* spatial dims */
  int64_t k[IR_MAX_RANK], s[IR_MAX_RANK], d[IR_MAX_RANK];
  int64_t pads[2 * IR_MAX_RANK];
  int ceil_mode;
};

struct ir_node *si_cur(struct sctx *c);
/* Operand k, or NULL when absent or of unknown type or shape. */
const struct ir_tensor *si_known(struct sctx *c, int k);
/* Operand k when present and constant (shape known), else NULL. */
const struct ir_tensor *si_const(struct sctx *c, int k);
/* Whether operand k is present. */
int si_has(struct sctx *c, int k);
struct shape si_shape_of(const struct ir_tensor *t);
/* Records result k: dtype and shape, checked against a declared type. */
int si_set_result(struct sctx *c, int k, enum ir_dtype dt, const struct shape *s);
/* Result 0 with operand x's dtype and shape. */
int si_same_as_input(struct sctx *c, const struct ir_tensor *x);
/* Marks result k's dims as a capacity (data-dependent size). */
void si_set_dyn(struct sctx *c, int k);
/* An int list attribute of exactly `want` entries, or `dflt` in each. */
int si_ints_attr(struct sctx *c, const char *name, int want, int64_t dflt, int64_t *out);
/* An axis attribute in [-rank, rank), normalized to [0, rank). */
int si_axis_attr(struct sctx *c, const char *name, int64_t dflt, int rank, int *axis);
/* v in [-rank, rank) normalized, or -1 with a message naming `what`. */
int si_norm_axis(struct sctx *c, const char *what, int64_t v, int rank, int *axis);
int64_t si_div_ceil(int64_t a, int64_t b);
int si_read_window(struct sctx *c, const struct shape *x, struct window *w);
/* Spatial output dims of a window op; out->d[0..1] are set by the caller. */
int si_window_out(struct sctx *c, const struct shape *x, const struct window *w, struct shape *out);
int si_broadcast(struct sctx *c, const struct shape *a, const struct shape *b, struct shape *out);
/* Constant integer operand k as int64 values (at most `max`): 1 when read
 * (*n set), 0 when the operand is not a constant yet, -1 when it is not an
 * integer list of at most max values. */
int si_const_ints(struct sctx *c, int k, int64_t *v, int max, int *n);
/* Constant operand k as doubles likewise. */
int si_const_f64(struct sctx *c, int k, double *v, int max, int *n);
/* A failure naming the node. */
int si_fail(struct sctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* pass_shape_infer.c: the current node as if it were of kind `kind` (a
 * generic node of a typed op's type reuses the typed inference). */
int si_infer_kind(struct sctx *c, enum ir_op_kind kind);

/* shape_onnx.c: a generic node (IR_OP_ONNX). */
int si_infer_onnx(struct sctx *c);

#endif
