/*
 * ir_eval.h - what the reference interpreter's files share: the per-node
 * context and operand access, element loads and stores, broadcasting and
 * per-channel parameters (ir_eval_ref.c, which also runs the graph), the
 * convolution, pooling and matrix kernels (ir_eval_nn.c) and the fused
 * int8 ops with the accelerator's integer semantics (ir_eval_fused.c).
 * ir_eval_ref.c's opening comment says what the interpreter promises.
 */
#ifndef LOOM_IR_EVAL_H
#define LOOM_IR_EVAL_H

#include "sw_compiler/compiler.h"

struct ectx {
  const struct ir_graph *g;
  const struct ir_node *n;
  int node;
  const void *const *in;
  void *const *out;
  struct ir_error *err;
};

/* Operand k's tensor, or NULL when absent. */
static inline const struct ir_tensor *T(struct ectx *c, int k) {
  return k < c->n->n_in && c->n->in[k] >= 0 ? &c->g->tensors[c->n->in[k]] : NULL;
}
static inline const struct ir_tensor *R(struct ectx *c) { return &c->g->tensors[c->n->out[0]]; }
static inline const void *IN(struct ectx *c, int k) { return k < c->n->n_in ? c->in[k] : NULL; }
static inline int64_t numel(const struct ir_tensor *t) { return ir_tensor_numel(t); }

/* ir_eval_ref.c */
double ev_ld(enum ir_dtype dt, const void *p, int64_t i);
int64_t ev_ldi(enum ir_dtype dt, const void *p, int64_t i);
void ev_st(enum ir_dtype dt, void *p, int64_t i, double v);
void ev_st_round(enum ir_dtype dt, void *p, int64_t i, float v, double zp);
double ev_param(const struct ir_tensor *t, const void *buf, int64_t i, double dflt);
int ev_param_count(struct ectx *c, int k, int64_t channels);
void ev_bcast_strides(const struct ir_tensor *t, const struct ir_tensor *y, int64_t *str);
void ev_odometer(int rank, const int64_t *dims, int64_t *idx, int64_t *oa, const int64_t *sa, int64_t *ob, const int64_t *sb);

/* ir_eval_nn.c: convolutions, pools, matrix products (node c->n) */
/* y[n][m] += the integer convolution of x and w (y pre-set with the bias). */
void ev_conv_core_i32(const struct conv_geo *g, const int32_t *x, const int32_t *w, int64_t *y);
int ev_window_geo(struct ectx *c, const struct ir_tensor *x, const struct ir_tensor *y, struct conv_geo *g);
int ev_conv_geo_full(struct ectx *c, int xi, int wi, struct conv_geo *g);
int ev_conv(struct ectx *c);
int ev_conv_integer(struct ectx *c);
int ev_qlinear_conv(struct ectx *c);
int ev_maxpool(struct ectx *c);
int ev_avgpool(struct ectx *c);
int ev_global_avgpool(struct ectx *c);
int ev_matmul(struct ectx *c);
int ev_matmul_integer(struct ectx *c);
int ev_qlinear_matmul(struct ectx *c);
int ev_gemm(struct ectx *c);

/* ir_eval_fused.c: the fused int8 ops */
int ev_qconv(struct ectx *c);
int ev_qgemm(struct ectx *c);
int ev_qadd(struct ectx *c);
int ev_qpool(struct ectx *c);

#endif
