/*
 * pass_fuse.h - what the fusion pass's files share: pass_fuse.c (the pass,
 * Add, pooling, residuals, Q/DQ motion and cancellation, MatMul + Add as
 * Gemm), pass_fuse_util.c (graph queries, building Q/DQ and int8 forms, the
 * result chain an op's requantization absorbs), pass_fuse_mac.c (the
 * multiply-accumulate patterns: Conv, Gemm, QLinear and Integer ops, and
 * their weights, biases and multipliers).  pass_fuse.c's opening comment
 * describes the patterns and the arithmetic.
 */
#ifndef LOOM_PASS_FUSE_H
#define LOOM_PASS_FUSE_H

#include "sw_compiler/compiler.h"

struct qparam {
  float scale;
  int32_t zp;
  enum ir_dtype dt; /* of the integer tensor: I8 or U8 */
};

struct fctx {
  struct ir_graph *g;
  struct ir_error *err;
  int *conv_from, *conv_to; /* uint8 tensor -> its int8 form */
  int n_conv, cap_conv;
};

/* An op's result chain: [activation ->] QuantizeLinear. */
struct out_chain {
  int act, q;   /* nodes (act -1 when none) */
  int y;        /* the quantized result */
  struct qparam p;
  const float *chs; /* per-channel scales (axis 1) of a per-axis Q, else NULL */
  int64_t n_chs;
};

/* What a fused QConv / QGemm needs, gathered before the graph changes. */
struct mac {
  int node;               /* the op matched (attributes are copied from it) */
  int x;                  /* integer input (may still be uint8) */
  struct qparam px;
  int32_t *w;             /* [o][per]: w - zp */
  int wide;               /* some w - zp is beyond int8: an i32 weight tensor */
  int wrank;
  int64_t wdims[4], o, per;
  float *s_w;             /* [o] */
  int32_t *bias, *mult;   /* [o] */
  uint32_t shift;
  struct out_chain oc;
};

/* The window attributes of a convolution, saved before the graph changes
 * (inserting nodes moves the node they belong to). */
struct conv_attrs {
  int64_t v[4][4];
  int n[4];
  int64_t group;
};

/* pass_fuse_util.c (graph queries: ir_producer and ir_sole_reader in ir.h) */
int fu_is_const(const struct ir_graph *g, int t);
int fu_is_int8ish(enum ir_dtype dt);
int64_t fu_numel_of(const struct ir_graph *g, int t);
double fu_const_at(const struct ir_graph *g, int t, int64_t i);
int fu_scalar_qparams(const struct ir_graph *g, const struct ir_node *n, struct qparam *p);
int fu_dq_of(const struct ir_graph *g, int t, int *x, struct qparam *p);
int fu_same_qparam(const struct qparam *a, const struct qparam *b);
int32_t fu_zp8(const struct qparam *p);
struct qparam fu_as_i8(struct qparam p);
int fu_new_tensor(struct ir_graph *g, const char *base, const char *suffix, enum ir_dtype dt, int rank, const int64_t *dims);
int fu_like(struct ir_graph *g, int t, const char *suffix, enum ir_dtype dt);
void fu_set_quant(struct ir_graph *g, int t, const struct qparam *p);
void fu_insert_qdq(struct ir_graph *g, enum ir_op_kind op, int in, int out, const struct qparam *p, int *pos);
int fu_as_int8(struct fctx *f, int t, const struct qparam *p, int *pos);
int fu_match_output(const struct ir_graph *g, int y, int allow_act, int per_channel, struct out_chain *oc);
int fu_chain_clamp(const struct ir_graph *g, const struct out_chain *oc, int32_t *lo, int32_t *hi);
void fu_kill_chain(struct ir_graph *g, int node, const struct out_chain *oc);
int fu_result_of(struct ir_graph *g, const struct out_chain *oc);
void fu_finish_result(struct fctx *f, const struct out_chain *oc, int y8, int pos);
void fu_save_conv_attrs(const struct ir_node *n, struct conv_attrs *a);
void fu_set_conv_attrs(struct ir_graph *g, int node, const struct conv_attrs *a);
void fu_set_req_attrs(struct ir_graph *g, int node, int64_t in_zp, const struct out_chain *oc, uint32_t shift);

/* pass_fuse_mac.c: the multiply-accumulate patterns (1 fused, 0 not this
 * pattern, -1 error) */
int fu_fuse_conv(struct fctx *f, int i);
int fu_fuse_qlinear_conv(struct fctx *f, int i);
int fu_fuse_qlinear_matmul(struct fctx *f, int i);
int fu_fuse_integer(struct fctx *f, int i, enum ir_op_kind op);
int fu_fuse_gemm(struct fctx *f, int i);
/* A batched (3-D) QLinearMatMul / MatMulInteger as Gather + 2-D ones + Concat. */
int fu_unbatch(struct fctx *f, int i);

/* pass_fuse_act.c: DQ(x) -> element-wise region -> Q as an identity QConv
 * with a table; such a QConv merged into the QConv before it. */
int fu_fuse_act(struct fctx *f, int i);
int fu_merge_act(struct fctx *f, int i);

#endif
