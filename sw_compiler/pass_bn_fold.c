/*
 * pass_bn_fold.c - folds inference-mode BatchNormalization away.
 *
 *   y = (x - mean) / sqrt(var + eps) * scale + beta  =  x * s + t
 *   with s = scale / sqrt(var + eps), t = beta - mean * s   (per channel)
 *
 * When x is the result of a Conv that nothing else reads, and the conv's
 * weight and bias and the BN's parameters are constants, the BN disappears
 * into the conv: W'[c] = W[c] * s[c], b'[c] = (b[c] - mean[c]) * s[c] +
 * beta[c].  The conv then writes the BN's result tensor directly, so its
 * consumers are untouched.  New weight and bias constants are made rather
 * than editing the old ones in place, because an ONNX initializer may be
 * shared by several convs; DCE drops the originals when they fall unused.
 *
 * Any other BN with constant parameters becomes Mul(x, s) then Add(., t),
 * with s and t shaped [C, 1, ...] to broadcast along axis 1: two ops every
 * backend has, instead of one only the interpreter knows.  A BN whose
 * parameters are not constant is left alone.
 */
#include "sw_compiler/compiler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bn_params {
  int64_t c;
  float *s; /* scale / sqrt(var + eps) */
  float *t; /* beta - mean * s */
  const float *mean, *beta;
};

static int all_const(const struct ir_graph *g, const struct ir_node *n, int from) {
  for (int k = from; k < n->n_in; k++)
    if (n->in[k] < 0 || !g->tensors[n->in[k]].data || g->tensors[n->in[k]].dtype != IR_DT_F32) return 0;
  return 1;
}

static void bn_params(const struct ir_graph *g, const struct ir_node *n, struct bn_params *p) {
  const float *scale = g->tensors[n->in[1]].data, *var = g->tensors[n->in[4]].data;
  float eps = ir_attr_float(n, "epsilon", 1e-5f);
  p->c = ir_tensor_numel(&g->tensors[n->in[1]]);
  p->beta = g->tensors[n->in[2]].data;
  p->mean = g->tensors[n->in[3]].data;
  p->s = ir_xmalloc((size_t)p->c * sizeof *p->s);
  p->t = ir_xmalloc((size_t)p->c * sizeof *p->t);
  for (int64_t i = 0; i < p->c; i++) {
    p->s[i] = scale[i] / sqrtf(var[i] + eps);
    p->t[i] = p->beta[i] - p->mean[i] * p->s[i];
  }
}

/* A fresh constant named after `base` with `suffix`. */
static int new_const(struct ir_graph *g, const char *base, const char *suffix, int rank,
                     const int64_t *dims, const void *data) {
  char name[256];
  snprintf(name, sizeof name, "%s%s", base, suffix);
  int t = ir_tensor_find(g, name) < 0 ? ir_const_add(g, name, IR_DT_F32, rank, dims, data) : -1;
  return t >= 0 ? t : ir_const_add(g, NULL, IR_DT_F32, rank, dims, data);
}

/* The Conv producing operand 0 of BN node `bn`, if it can absorb it. */
static int absorbing_conv(const struct ir_graph *g, int bn, const int *producer, const int *uses) {
  int x = g->nodes[bn].in[0], p = producer[x];
  if (p < 0 || g->nodes[p].op != IR_OP_CONV || uses[x] != 1) return -1;
  const struct ir_node *conv = &g->nodes[p];
  const struct ir_tensor *w = &g->tensors[conv->in[1]];
  if (!w->data || w->dtype != IR_DT_F32 || w->rank < 1) return -1;
  if (conv->n_in > 2 && conv->in[2] >= 0 && !all_const(g, conv, 2)) return -1;
  return p;
}

static void fold_into_conv(struct ir_graph *g, int bn, int ci, const struct bn_params *p) {
  struct ir_node *conv = &g->nodes[ci];
  const struct ir_tensor *wt = &g->tensors[conv->in[1]];
  int64_t per = ir_tensor_numel(wt) / p->c, dims[IR_MAX_RANK];
  int rank = wt->rank;
  memcpy(dims, wt->dims, sizeof dims);
  float *w = ir_xmalloc((size_t)ir_tensor_bytes(wt)), *b = ir_xmalloc((size_t)p->c * sizeof *b);
  const float *w0 = wt->data;
  const float *b0 = conv->n_in > 2 && conv->in[2] >= 0 ? g->tensors[conv->in[2]].data : NULL;
  for (int64_t i = 0; i < per * p->c; i++) w[i] = w0[i] * p->s[i / per];
  for (int64_t i = 0; i < p->c; i++) b[i] = ((b0 ? b0[i] : 0.0f) - p->mean[i]) * p->s[i] + p->beta[i];
  char base[200];
  snprintf(base, sizeof base, "%s", g->tensors[conv->in[1]].name);
  int nw = new_const(g, base, ".bnfold", rank, dims, w);
  int nb = new_const(g, base, ".bnfold_bias", 1, &p->c, b);
  conv = &g->nodes[ci];
  if (conv->n_in < 3) {
    conv->in = ir_xrealloc(conv->in, 3 * sizeof *conv->in);
    conv->n_in = 3;
  }
  conv->in[1] = nw;
  conv->in[2] = nb;
  conv->out[0] = g->nodes[bn].out[0];
  g->nodes[bn].dead = 1;
  free(w);
  free(b);
}

/* BN -> Mul(x, s) + Add(., t) with s, t of shape [C, 1, ...]. */
static void split_to_mul_add(struct ir_graph *g, int bn, const struct bn_params *p) {
  const struct ir_tensor *x = &g->tensors[g->nodes[bn].in[0]];
  int64_t dims[IR_MAX_RANK] = {p->c, 1, 1, 1, 1, 1};
  int rank = x->rank - 1;
  char base[200];
  snprintf(base, sizeof base, "%s", g->nodes[bn].name ? g->nodes[bn].name : g->tensors[g->nodes[bn].out[0]].name);
  int s = new_const(g, base, ".scale", rank, dims, p->s);
  int t = new_const(g, base, ".shift", rank, dims, p->t);
  int tmp = ir_tensor_add(g, NULL, IR_DT_UNDEF, -1, NULL);
  struct ir_node *n = &g->nodes[bn];
  int y = n->out[0], mul_in[2] = {n->in[0], s}, add_in[2] = {tmp, t};
  char *name = n->name ? ir_xstrdup(n->name) : NULL;
  n->dead = 1;
  ir_node_insert(g, bn + 1, IR_OP_MUL, name, 2, mul_in, 1, &tmp);
  ir_node_insert(g, bn + 2, IR_OP_ADD, NULL, 2, add_in, 1, &y);
  free(name);
}

int ir_pass_bn_fold(struct ir_graph *g, struct ir_error *err) {
  int *producer = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof(int));
  int *uses = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof(int));
  ir_producers(g, producer);
  ir_use_counts(g, uses);
  for (int i = 0; i < g->n_nodes; i++) {
    struct ir_node *n = &g->nodes[i];
    const struct ir_tensor *x = n->n_in ? &g->tensors[n->in[0]] : NULL;
    if (n->dead || n->op != IR_OP_BATCHNORM || !all_const(g, n, 1) || !x || x->rank < 2) continue;
    struct bn_params p;
    bn_params(g, n, &p);
    int ci = absorbing_conv(g, i, producer, uses);
    if (ci >= 0 && ir_tensor_numel(&g->tensors[g->nodes[ci].in[1]]) % p.c == 0 &&
        g->tensors[g->nodes[ci].in[1]].dims[0] == p.c) {
      fold_into_conv(g, i, ci, &p);
    } else {
      split_to_mul_add(g, i, &p);
      i += 2; /* skip the two new nodes; ids after them moved, recompute */
      free(producer), free(uses);
      producer = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof(int));
      uses = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof(int));
      ir_producers(g, producer);
      ir_use_counts(g, uses);
    }
    free(p.s);
    free(p.t);
  }
  free(producer);
  free(uses);
  ir_graph_compact(g);
  (void)err;
  return 0;
}
