/*
 * compile_layer.c - one fused IR node to one accelerator job.
 *
 * The lowering (lower.h) knows nothing of the IR: it takes plain layer
 * structs.  This file is the glue: it reads a fused node's operands and
 * attributes (their meaning is fixed in ir.h), fills struct lower_qconv,
 * lower_qfc, lower_qpool or lower_qadd, and calls the lowering, which
 * checks the layer against the hardware and returns the program with its
 * report.  A layer the hardware cannot run is a user error that names the
 * node ("model.onnx: node 7 'conv3' (loom.QConv): ...").
 *
 * Wide (int32) weights are split into int8 passes here
 * (lower_split_weights), and an int32 result asks the lowering for the
 * accumulator's byte lanes (LOWER_CONV_ACC_OUT); compile_loom.c turns
 * those into the int32 tensor.
 *
 * Stems: with COMPILE_IM2COL, and a runtime that has the IM2COL host op
 * (hostops.h defines LOOM_HOSTOP_HAVE_IM2COL), a convolution with few input
 * channels may be folded by a host-side im2col (LOWER_CONV_ALLOW_IM2COL);
 * the lowering decides whether that pays off and says so in the program's
 * input layout.
 */
#include "sw_compiler/compile.h"

#include <stdlib.h>
#include <string.h>

#include "driver/core/hostops_nn.h"

int compile_have_im2col(void) {
#ifdef LOOM_HOSTOP_HAVE_IM2COL
  return 1;
#else
  return 0;
#endif
}

void compile_shape_text(const struct ir_tensor *t, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < t->rank && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "x" : "", (long long)t->dims[i]);
}

static int32_t attr_at(const struct ir_node *n, const char *name, int i, int32_t dflt) {
  const struct ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_INTS && i < a->n ? (int32_t)a->ints[i] : dflt;
}

static int32_t attr(const struct ir_node *n, const char *name, int64_t dflt) {
  return (int32_t)ir_attr_int(n, name, dflt);
}

static const struct ir_tensor *opnd(const struct ir_graph *g, const struct ir_node *n, int k) {
  return &g->tensors[n->in[k]];
}

/* The residual attributes of a QConv (ir.h) as the lowering's struct. */
static struct lower_qresidual residual_of(const struct ir_node *n) {
  return (struct lower_qresidual){
      .a_weight = attr(n, "res_a_weight", 1), .b_weight = attr(n, "res_b_weight", 1),
      .b_zero_point = attr(n, "res_b_zp", 0), .multiplier = attr(n, "res_multiplier", 1),
      .shift = (uint32_t)attr(n, "res_shift", 0), .out_zero_point = attr(n, "res_out_zp", 0),
      .clamp_lo = attr(n, "res_lo", -128), .clamp_hi = attr(n, "res_hi", 127),
      .round_even = (uint32_t)attr(n, "round_even", 0),
  };
}

/* The int8 weight parts of operand 1: the data itself, or for wide
 * weights a malloc'd split into *passes parts (*owned, freed by the
 * caller).  NULL with msg when they need too many passes. */
static const int8_t *weight_parts(const struct ir_graph *g, const struct ir_node *n, const char *where,
                                  uint32_t *passes, int8_t **owned, char *msg) {
  const struct ir_tensor *w = opnd(g, n, 1);
  *passes = 1, *owned = NULL;
  if (w->dtype != IR_DT_I32) return w->data;
  if (lower_split_weights(w->data, (size_t)ir_tensor_numel(w), owned, passes)) {
    lower_fail(msg, where, "weights need %u int8 passes (at most %d)", *passes, LOWER_MAX_PASSES);
    return NULL;
  }
  return *owned;
}

/* LOWER_CONV_ACC_OUT for an int32 result. */
static uint32_t acc_flag(const struct ir_graph *g, const struct ir_node *n) {
  return g->tensors[n->out[0]].dtype == IR_DT_I32 ? LOWER_CONV_ACC_OUT : 0;
}

static void pool_params(const struct ir_graph *g, const struct ir_node *n, struct lower_qpool *l);

int compile_conv_params(const struct ir_graph *g, const struct ir_node *n, unsigned flags, const char *where,
                        struct compile_conv *c, char *msg) {
  const struct ir_tensor *x = opnd(g, n, 0), *w = opnd(g, n, 1);
  memset(c, 0, sizeof *c);
  c->res = residual_of(n);
  if (x->rank != 4 || w->rank != 4) return lower_fail(msg, where, "only 2-D convolutions run on the accelerator");
  uint32_t passes;
  const int8_t *wp = weight_parts(g, n, where, &passes, &c->owned, msg);
  if (!wp) return -1;
  struct lower_qconv l = {
      .n = (int32_t)x->dims[0], .in_c = (int32_t)x->dims[1], .in_h = (int32_t)x->dims[2],
      .in_w = (int32_t)x->dims[3], .out_c = (int32_t)w->dims[0], .k_h = (int32_t)w->dims[2],
      .k_w = (int32_t)w->dims[3], .stride_h = attr_at(n, "strides", 0, 1),
      .stride_w = attr_at(n, "strides", 1, 1), .pad_t = attr_at(n, "pads", 0, 0),
      .pad_l = attr_at(n, "pads", 1, 0), .pad_b = attr_at(n, "pads", 2, 0),
      .pad_r = attr_at(n, "pads", 3, 0), .dil_h = attr_at(n, "dilations", 0, 1),
      .dil_w = attr_at(n, "dilations", 1, 1), .groups = attr(n, "group", 1),
      .weights = wp, .bias = opnd(g, n, 2)->data, .multiplier = opnd(g, n, 3)->data,
      .shift = (uint32_t)attr(n, "shift", 0), .in_zero_point = attr(n, "in_zp", 0),
      .out_zero_point = attr(n, "out_zp", 0), .clamp_lo = attr(n, "lo", -128),
      .clamp_hi = attr(n, "hi", 127), .round_even = (uint32_t)attr(n, "round_even", 0),
      .flags = (flags & COMPILE_IM2COL && compile_have_im2col() ? LOWER_CONV_ALLOW_IM2COL : 0) | acc_flag(g, n),
      .residual = n->n_in > 4 ? &c->res : NULL, .in_passes = passes,
  };
  const struct ir_attr *lut = ir_attr_find(n, "lut");
  if (lut) {
    if (lut->kind != IR_ATTR_INTS || lut->n != 256) return compile_conv_free(c), lower_fail(msg, where, "lut needs 256 entries");
    for (int i = 0; i < 256; i++) c->lut[i] = (int8_t)lut->ints[i];
    l.lut = c->lut;
  }
  c->l = l;
  return 0;
}

void compile_conv_free(struct compile_conv *c) {
  free(c->owned);
  c->owned = NULL;
}

/* A QConv, with the QPool `pool` (NULL: none) fused after it. */
static int conv_layer(const struct ir_graph *g, const struct ir_node *n, const struct ir_node *pool,
                      const struct loom_hw_config *cfg, unsigned flags, const char *where,
                      struct lower_program *p, char *msg) {
  struct compile_conv c;
  if (compile_conv_params(g, n, flags, where, &c, msg)) return -1;
  struct lower_qpool pl;
  if (pool) pool_params(g, pool, &pl), c.l.pool = &pl;
  int rc = lower_conv(cfg, &c.l, where, p, msg);
  compile_conv_free(&c);
  return rc;
}

static int fc_layer(const struct ir_graph *g, const struct ir_node *n, const struct loom_hw_config *cfg,
                    const char *where, struct lower_program *p, char *msg) {
  const struct ir_tensor *x = opnd(g, n, 0), *w = opnd(g, n, 1);
  uint32_t passes = 1, rt = !w->data; /* runtime weights: an activation in WGT rows (pass_attention.c) */
  int8_t *owned = NULL;
  const int8_t *wp = rt ? NULL : weight_parts(g, n, where, &passes, &owned, msg);
  if (!wp && !rt) return -1;
  struct lower_qfc l = {
      .n = (int32_t)x->dims[0], .in_features = (int32_t)x->dims[1],
      .out_features = (int32_t)(rt ? ir_tensor_numel(opnd(g, n, 3)) : w->dims[0]),
      .weights = wp, .bias = opnd(g, n, 2)->data, .multiplier = opnd(g, n, 3)->data,
      .shift = (uint32_t)attr(n, "shift", 0), .in_zero_point = attr(n, "in_zp", 0),
      .out_zero_point = attr(n, "out_zp", 0), .clamp_lo = attr(n, "lo", -128),
      .clamp_hi = attr(n, "hi", 127), .round_even = (uint32_t)attr(n, "round_even", 0),
      .in_passes = passes,
      .flags = acc_flag(g, n) | (rt ? LOWER_CONV_RUNTIME_WGT : 0) | (attr(n, "wgt_t", 0) ? LOWER_CONV_RUNTIME_WGT_T : 0),
  };
  struct lower_qresidual res = residual_of(n);
  if (n->n_in > 4) l.residual = &res;
  int8_t lut[256];
  const struct ir_attr *la = ir_attr_find(n, "lut");
  if (la && (la->kind != IR_ATTR_INTS || la->n != 256)) return free(owned), lower_fail(msg, where, "lut needs 256 entries");
  for (int i = 0; la && i < 256; i++) lut[i] = (int8_t)la->ints[i];
  if (la) l.lut = lut;
  int rc = lower_fc(cfg, &l, where, p, msg);
  free(owned);
  return rc;
}

static void pool_params(const struct ir_graph *g, const struct ir_node *n, struct lower_qpool *out) {
  const struct ir_tensor *x = opnd(g, n, 0);
  struct lower_qpool l = {
      .kind = attr(n, "avg", 0) ? LOWER_POOL_AVG : LOWER_POOL_MAX,
      .n = (int32_t)x->dims[0], .c = (int32_t)x->dims[1], .in_h = (int32_t)x->dims[2],
      .in_w = (int32_t)x->dims[3], .k_h = attr_at(n, "kernel_shape", 0, 1),
      .k_w = attr_at(n, "kernel_shape", 1, 1), .stride_h = attr_at(n, "strides", 0, 1),
      .stride_w = attr_at(n, "strides", 1, 1), .pad_t = attr_at(n, "pads", 0, 0),
      .pad_l = attr_at(n, "pads", 1, 0), .pad_b = attr_at(n, "pads", 2, 0),
      .pad_r = attr_at(n, "pads", 3, 0), .multiplier = attr(n, "multiplier", 1),
      .shift = (uint32_t)attr(n, "shift", 0), .in_zero_point = attr(n, "in_zp", 0),
      .out_zero_point = attr(n, "out_zp", 0), .clamp_lo = attr(n, "lo", -128),
      .clamp_hi = attr(n, "hi", 127), .round_even = (uint32_t)attr(n, "round_even", 0),
  };
  *out = l;
}

static int pool_layer(const struct ir_graph *g, const struct ir_node *n, const struct loom_hw_config *cfg,
                      const char *where, struct lower_program *p, char *msg) {
  struct lower_qpool l;
  pool_params(g, n, &l);
  return lower_pool(cfg, &l, where, p, msg);
}

static int add_layer(const struct ir_graph *g, const struct ir_node *n, const struct loom_hw_config *cfg,
                     const char *where, struct lower_program *p, char *msg) {
  const struct ir_tensor *x = opnd(g, n, 0);
  int four = x->rank == 4;
  struct lower_qadd l = {
      .n = (int32_t)x->dims[0], .c = (int32_t)x->dims[1], .h = four ? (int32_t)x->dims[2] : 1,
      .w = four ? (int32_t)x->dims[3] : 1, .a_zero_point = attr(n, "a_zp", 0),
      .b_zero_point = attr(n, "b_zp", 0), .a_weight = attr(n, "a_weight", 1),
      .b_weight = attr(n, "b_weight", 1), .multiplier = attr(n, "multiplier", 1),
      .shift = (uint32_t)attr(n, "shift", 0), .out_zero_point = attr(n, "out_zp", 0),
      .clamp_lo = attr(n, "lo", -128), .clamp_hi = attr(n, "hi", 127),
      .round_even = (uint32_t)attr(n, "round_even", 0),
  };
  if (x->rank != 4 && x->rank != 2)
    return lower_fail(msg, where, "only rank-2 and rank-4 adds run on the accelerator");
  return lower_add(cfg, &l, where, p, msg);
}

/* "conv 3x3/2", "dwconv 3x3/1", "fc", "maxpool 3x3/2", "add", "conv 7x7/2+pool",
 * "chain 3x3/1+add" (the chain's depthwise window). */
static void op_text(const struct ir_graph *g, const struct compile_fusion *f, const struct lower_report *r, char *buf,
                    size_t len) {
  const struct ir_node *n = &g->nodes[f->nodes[0]], *last = &g->nodes[f->nodes[f->n - 1]];
  const char *kind = lower_kind_names[r->kind];
  if (n->op == IR_OP_QGEMM || n->op == IR_OP_QADD) {
    snprintf(buf, len, "%s%s%s", kind, n->n_in > 4 ? "+add" : "", ir_attr_find(n, "lut") ? "+act" : "");
    return;
  }
  const struct ir_node *k = n;
  for (int i = 0; r->kind == LOWER_KIND_CHAIN && i < f->n; i++)
    if (attr(&g->nodes[f->nodes[i]], "group", 1) > 1) k = &g->nodes[f->nodes[i]];
  const struct ir_attr *act = ir_attr_find(n, "act");
  if (attr(n, "act_only", 0)) {
    snprintf(buf, len, "act %s", act && act->kind == IR_ATTR_STRING ? act->s : "");
    return;
  }
  snprintf(buf, len, "%s %dx%d/%d%s%s%s", kind, attr_at(k, "kernel_shape", 0, 1), attr_at(k, "kernel_shape", 1, 1),
           attr_at(k, "strides", 0, 1), last->op == IR_OP_QCONV && last->n_in > 4 ? "+add" : "",
           f->n > 1 && last->op == IR_OP_QPOOL ? "+pool" : "", act ? "+act" : "");
}

int compile_layer(const struct ir_graph *g, const struct compile_fusion *f, const struct loom_hw_config *cfg,
                  unsigned flags, struct lower_program *prog, struct compile_layer *row, struct ir_error *err) {
  int node = f->nodes[0];
  const struct ir_node *n = &g->nodes[node], *next = f->n > 1 ? &g->nodes[f->nodes[1]] : NULL;
  char where[512], nw[256], msg[LOWER_MSG_MAX];
  snprintf(where, sizeof where, "%s: %s", g->source, ir_node_where(g, node, nw, sizeof nw));
  memset(prog, 0, sizeof *prog);
  int rc;
  if (next && next->op == IR_OP_QCONV) {
    rc = compile_chain_layer(g, f, cfg, flags, where, prog, msg);
  } else {
    switch (n->op) {
    case IR_OP_QCONV: rc = conv_layer(g, n, next, cfg, flags, where, prog, msg); break;
    case IR_OP_QGEMM: rc = fc_layer(g, n, cfg, where, prog, msg); break;
    case IR_OP_QPOOL: rc = pool_layer(g, n, cfg, where, prog, msg); break;
    case IR_OP_QADD: rc = add_layer(g, n, cfg, where, prog, msg); break;
    default: LOOM_ASSERT(0); return -1;
    }
  }
  if (rc) return ir_errorf(err, "%s", msg), -1;
  memset(row, 0, sizeof *row);
  snprintf(row->name, sizeof row->name, "%s", n->name ? n->name : g->tensors[n->out[0]].name);
  op_text(g, f, &prog->report, row->op, sizeof row->op);
  compile_shape_text(&g->tensors[g->nodes[f->nodes[f->n - 1]].out[0]], row->shape, sizeof row->shape);
  row->is_job = 1;
  row->report = prog->report;
  return 0;
}
