/*
 * pass_quantize.c - post-training int8 quantization of a float graph.
 *
 * Input: a float graph after the default passes (BN folded), MatMul + Add
 * already turned into Gemm (ir_pass_fuse_matmul_bias), and the value range
 * of every tensor from calib.c.  Output: the same graph in QDQ form, the
 * form quantized ONNX models use, so that pass_fuse.c handles calibrated
 * and pre-quantized models with one set of patterns:
 *
 *   x -> Q -> DQ -> Conv(DQ(w_i8), DQ(b_i32)) -> Relu -> Q -> DQ -> ...
 *
 * The scheme (docs/quantization.md gives the reasons and the error bounds):
 *
 *   - weights: int8, symmetric, one scale per output channel,
 *     s_w[o] = max|w[o]| / 127 (at least 1/256 of the widest channel's),
 *     q in -127..127 (never -128, so negating a weight cannot overflow and
 *     the range is symmetric);
 *   - biases: int32 at scale s_x * s_w[o], the accumulator's scale;
 *   - activations: int8, asymmetric, one scale and zero point per tensor,
 *     from the calibrated [min, max] widened to include 0 (so that zero, the
 *     padding value and ReLU's floor, is exact).  Asymmetric because most
 *     activations follow a ReLU: a symmetric range would waste half of the
 *     256 codes on negative values that never occur.  Exception: a ReLU
 *     result read only by depthwise convolutions gets per-channel scales
 *     (zero point -128 for all); each depthwise output channel reads one
 *     input channel, so the channel's scale folds exactly into its
 *     weights.  Its Q is per-axis and its DQ has scale 1 (it yields codes).
 *     The operands of a matmul of two activations (pass_attention.c) are
 *     symmetric, zero point 0: one of them is the job's runtime weights.
 *     A head's operand (its rows of the heads' stacked operand) takes the
 *     stacked tensor's parameters, so its int8 form is a slice of one
 *     quantized tensor, read in place;
 *   - bias correction: the systematic shift weight rounding causes,
 *     (w - w_q) * E[x], is added back to each float bias first (E[x] per
 *     channel from calibration).
 *
 * Where Q/DQ pairs go: on every activation an accelerator op reads (the
 * data inputs of Conv, Gemm, two-operand Add and MatMul, pools, Concat) and on the
 * output of each such op's group, where the group absorbs a following ReLU
 * or Clip that is the op's only user (that is what fusion will execute as
 * the requantization clamp).  Some tensors must share parameters, so their
 * int8 forms are the same bytes: a MaxPool's or a Reshape-like op's output
 * takes its input's, and each Concat input takes the Concat output's.
 * The accelerator's tensors are [N,C] or [N,C,H,W], except for the
 * two-operand Add, element-wise, whose [..., S, D] (a Transformer's
 * residual Add) runs on the [rows, D] of the fc jobs (pass_fuse.c); a
 * view's result that an op reads (the fc's [S, D] of a LayerNorm's
 * [1, S, D] the Add reads too) takes its source's parameters: one
 * QuantizeLinear for both.
 * An element-wise function of one tensor read by an accelerator op (SiLU,
 * GELU; act_table.h) gets points on both sides: fusion makes it a table.
 * Ops that are none of these stay float (Softmax, say) and read DQ'd data;
 * pass_partition.c later decides whether the host can run them.
 */
#include "sw_compiler/compiler.h"

#include "sw_compiler/act_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- context ---- */

struct qctx {
  struct ir_graph *g;
  const struct calib_range *ranges;
  int n_ranges;
  struct ir_error *err;
  int n_tensors;  /* tensors before the pass added any */
  char *point;    /* per tensor: gets a Q/DQ pair */
  char *sym;      /* per tensor: symmetric parameters (a matmul's runtime operand) */
  int *src;       /* per tensor: the tensor whose range sets its parameters */
  float *scale;   /* per tensor, once chosen */
  int32_t *zp;
  float **ch_scale; /* per tensor: per-channel scales, or NULL (per-tensor) */
  unsigned flags;   /* QUANT_* */
};

static const struct ir_tensor *TN(const struct qctx *q, int t) { return &q->g->tensors[t]; }

static int is_const(const struct ir_graph *g, int t) { return t >= 0 && g->tensors[t].data != NULL; }

static int is_activation(const struct ir_graph *g, int t) {
  return t >= 0 && !g->tensors[t].data && g->tensors[t].dtype == IR_DT_F32;
}

/* A Clip with constant (or absent) bounds, or a Relu. */
static int is_activation_fn(const struct ir_graph *g, const struct ir_node *n) {
  if (n->op == IR_OP_RELU) return 1;
  if (n->op != IR_OP_CLIP) return 0;
  for (int k = 1; k < n->n_in; k++)
    if (n->in[k] >= 0 && !is_const(g, n->in[k])) return 0;
  return 1;
}

/* ---- which nodes the accelerator will run ---- */

static int conv_ok(const struct ir_graph *g, const struct ir_node *n) {
  return g->tensors[n->in[0]].rank == 4 && is_const(g, n->in[1]) &&
         (n->n_in < 3 || n->in[2] < 0 || is_const(g, n->in[2]));
}

static int gemm_ok(const struct ir_graph *g, const struct ir_node *n) {
  if (ir_attr_int(n, "transA", 0) || !is_const(g, n->in[1])) return 0;
  if (n->n_in < 3 || n->in[2] < 0) return 1;
  const struct ir_tensor *c = &g->tensors[n->in[2]];
  int64_t o = g->tensors[n->out[0]].dims[1];
  return is_const(g, n->in[2]) && ir_tensor_numel(c) == o && (c->rank == 1 || c->dims[0] == 1);
}

/* Whether the floor rule gives the pool's output size (a ceil_mode
 * average pool whose last window is partial divides differently: host). */
static int floor_size(const struct ir_graph *g, const struct ir_node *n) {
  const struct ir_tensor *x = &g->tensors[n->in[0]], *y = &g->tensors[n->out[0]];
  const struct ir_attr *k = ir_attr_find(n, "kernel_shape"), *s = ir_attr_find(n, "strides"), *p = ir_attr_find(n, "pads");
  if (n->op == IR_OP_GLOBALAVERAGEPOOL) return 1;
  for (int d = 0; d < 2; d++) {
    int64_t kd = k && k->n == 2 ? k->ints[d] : 1, sd = s && s->n == 2 ? s->ints[d] : 1;
    int64_t pd = p && p->n == 4 ? p->ints[d] + p->ints[d + 2] : 0;
    if ((x->dims[2 + d] + pd - kd) / sd + 1 != y->dims[2 + d]) return 0;
  }
  return 1;
}

static int pool_ok(const struct ir_graph *g, const struct ir_node *n) {
  if (g->tensors[n->in[0]].rank != 4) return 0;
  const struct ir_attr *dil = ir_attr_find(n, "dilations");
  for (int i = 0; dil && i < dil->n; i++)
    if (dil->ints[i] != 1) return 0; /* dilated windows: the host */
  if (n->op == IR_OP_AVERAGEPOOL && !floor_size(g, n)) return 0;
  if (n->op != IR_OP_AVERAGEPOOL || ir_attr_int(n, "count_include_pad", 0)) return 1;
  const struct ir_attr *p = ir_attr_find(n, "pads");
  for (int i = 0; p && i < p->n; i++)
    if (p->ints[i]) return 0;
  return 1;
}

static int same_shape(const struct ir_tensor *a, const struct ir_tensor *b) {
  return a->rank == b->rank && !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]);
}

/* Whether node n becomes an accelerator op (its data operands all float
 * activations). */
static int is_core(const struct ir_graph *g, const struct ir_node *n) {
  if (n->dead || !is_activation(g, n->in[0])) return 0;
  int rank = g->tensors[n->in[0]].rank;
  if (n->op == IR_OP_ADD) /* element-wise: [..., S, D] runs as the [rows, D] of an fc job (pass_fuse.c) */
    return rank >= 2 && is_activation(g, n->in[1]) && same_shape(&g->tensors[n->in[0]], &g->tensors[n->in[1]]) &&
           same_shape(&g->tensors[n->in[0]], &g->tensors[n->out[0]]);
  if (rank != 2 && rank != 4) return 0; /* the accelerator's tensors are [N,C] or [N,C,H,W] */
  switch (n->op) {
  case IR_OP_CONV: return conv_ok(g, n);
  case IR_OP_GEMM: return gemm_ok(g, n);
  case IR_OP_MAXPOOL: case IR_OP_AVERAGEPOOL: case IR_OP_GLOBALAVERAGEPOOL: return pool_ok(g, n);
  case IR_OP_CONCAT:
    for (int k = 0; k < n->n_in; k++)
      if (!is_activation(g, n->in[k])) return 0;
    return 1;
  case IR_OP_MATMUL: return ir_is_act_matmul(g, (int)(n - g->nodes));
  default: return 0;
  }
}

static int data_operands(const struct ir_node *n) {
  return n->op == IR_OP_ADD || n->op == IR_OP_MATMUL ? 2 : n->op == IR_OP_CONCAT ? n->n_in : 1;
}

/* The result of node i's group: its own, or that of a fusable ReLU / Clip. */
static int group_output(const struct ir_graph *g, int i) {
  const struct ir_node *n = &g->nodes[i];
  int y = n->out[0];
  if (n->op == IR_OP_MATMUL) { /* scores' scale: the requantization's (pass_attention.c) */
    int s = ir_act_matmul_scale(g, y, NULL, NULL);
    return s >= 0 ? g->nodes[s].out[0] : y;
  }
  if (n->op != IR_OP_CONV && n->op != IR_OP_GEMM && n->op != IR_OP_ADD) return y;
  int u = ir_sole_reader(g, y);
  return u >= 0 && is_activation_fn(g, &g->nodes[u]) ? g->nodes[u].out[0] : y;
}

/* t is an output or an accelerator op's operand: an activation only float
 * host code reads (an SE gate) stays float (a table would only round it). */
static int int8_reader(const struct ir_graph *g, int t) {
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == t) return 1;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_in && !g->nodes[i].dead; k++)
      if (g->nodes[i].in[k] == t && (is_core(g, &g->nodes[i]) || ir_op_is_view(g->nodes[i].op))) return 1;
  return 0;
}

static int root(const struct qctx *q, int t) {
  while (q->src[t] != t) t = q->src[t];
  return t;
}

static void mark_points(struct qctx *q) {
  struct ir_graph *g = q->g;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (is_core(g, n)) {
      for (int k = 0; k < data_operands(n); k++) q->point[n->in[k]] = 1, q->sym[n->in[k]] |= n->op == IR_OP_MATMUL;
      for (int k = 0; k < 2 && n->op == IR_OP_MATMUL; k++) { /* a head's rows: quantized with all heads' */
        int s = ir_head_slice_of(g, n->in[k], NULL, NULL);
        if (s >= 0 && is_activation(g, s)) q->point[s] = q->sym[s] = q->sym[root(q, s)] = 1, q->src[n->in[k]] = s;
        int x = s >= 0 ? ir_head_stack_source(g, s) : -1; /* K's, V's heads moved: their projection's */
        if (x >= 0 && q->src[s] == s && root(q, x) != s) q->src[s] = x, q->point[x] = q->sym[root(q, x)] = 1;
      }
      int y = group_output(g, i);
      q->point[y] = 1;
      if (n->op == IR_OP_MAXPOOL) q->src[y] = n->in[0];
      if (n->op == IR_OP_CONCAT)
        for (int k = 0; k < n->n_in; k++) q->src[root(q, n->in[k])] = y;
    } else if (!n->dead && ir_op_is_view(n->op) && q->point[n->in[0]]) {
      q->point[n->out[0]] = 1;
      q->src[n->out[0]] = n->in[0];
    } else if (act_op_seed(n) && !(q->flags & QUANT_NO_ACT)) {
      struct act_region r; /* an activation: the epilogue's table from x's codes to y's */
      if (!act_region_grow(g, i, &r) && is_activation(g, r.x) && act_shape_fits(&g->tensors[r.x]) && int8_reader(g, r.y))
        q->point[r.x] = q->point[r.y] = 1;
    }
  }
  /* A view of a tensor that an accelerator op reads later (the [S,D] rows
   * an fc job reads of the [1,S,D] a residual Add reads too): its int8
   * form is the same bytes, one QuantizeLinear for both. */
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (!n->dead && ir_op_is_view(n->op) && q->point[n->in[0]] && q->point[n->out[0]] && q->src[n->out[0]] == n->out[0] &&
        root(q, n->in[0]) != n->out[0])
      q->src[n->out[0]] = n->in[0];
  }
}

/* A model input, a model output, or read by float (host) code: its values
 * matter as they are, so its range is not clipped. */
static int is_edge(const struct qctx *q, int t) {
  const struct ir_graph *g = q->g;
  if (g->tensors[t].is_input) return 1;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == t) return 1;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_in && !n->dead; k++)
      if (n->in[k] == t && !is_core(g, n) && !ir_op_is_view(n->op) && !is_activation_fn(g, n)) return 1;
  }
  return 0;
}

static int choose_all_params(struct qctx *q) {
  for (int t = 0; t < q->n_tensors; t++) {
    if (!q->point[t]) continue;
    int r = root(q, t);
    if (r >= q->n_ranges || !q->ranges[r].seen)
      return ir_errorf(q->err, "%s: tensor '%s' has no calibration range (it was never computed)",
                       q->g->source, TN(q, r)->name), -1;
    const struct calib_range *cr = &q->ranges[r];
    int clip = (q->flags & QUANT_CLIP) && !is_edge(q, t) && !is_edge(q, r);
    float lo = clip ? cr->clip_lo : cr->lo, hi = clip ? cr->clip_hi : cr->hi, m = fmaxf(fabsf(lo), fabsf(hi));
    if (q->sym[t] || q->sym[r]) lo = -m * 128.0f / 127.0f, hi = m; /* scale m / 127, zero point 0 (the lowering needs it) */
    quant_choose_params(lo, hi, &q->scale[t], &q->zp[t]);
  }
  return 0;
}

/* ---- per-channel activation scales ---- */

/* Each output channel reads exactly one input channel. */
static int is_depthwise(const struct ir_graph *g, const struct ir_node *n) {
  const struct ir_tensor *w = &g->tensors[n->in[1]];
  return w->rank == 4 && w->dims[1] == 1 && ir_attr_int(n, "group", 1) == g->tensors[n->in[0]].dims[1];
}

/* Whether t is a ReLU-like result (no negative value seen) that only
 * convolutions read, as their data operand, and whose parameters no other
 * tensor shares: then its channels can have scales of their own. */
static int per_channel_ok(const struct qctx *q, int t) {
  const struct ir_graph *g = q->g;
  const struct calib_range *r = &q->ranges[t];
  if (!q->point[t] || t >= q->n_ranges || g->tensors[t].rank != 4 || !r->ch_hi || r->lo < 0 ||
      r->channels != g->tensors[t].dims[1])
    return 0;
  for (int u = 0; u < q->n_tensors; u++)
    if (u != t && q->point[u] && root(q, u) == t) return 0;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == t) return 0;
  int users = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_in && !n->dead; k++) {
      if (n->in[k] != t) continue;
      if (n->op != IR_OP_CONV || k != 0 || !is_core(g, n) || !is_depthwise(g, n)) return 0;
      users++;
    }
  }
  return users > 0;
}

/* The producer of group result t, when it is a convolution; else -1. */
static int conv_producer(const struct qctx *q, int t) {
  for (int i = 0; i < q->g->n_nodes; i++)
    if (q->g->nodes[i].op == IR_OP_CONV && is_core(q->g, &q->g->nodes[i]) && group_output(q->g, i) == t)
      return i;
  return -1;
}

/* The upper bound of a Clip after node i (INFINITY when none). */
static float clip_max(const struct ir_graph *g, int i) {
  int u = ir_sole_reader(g, g->nodes[i].out[0]);
  if (u < 0 || g->nodes[u].op != IR_OP_CLIP || g->nodes[u].n_in < 3 || g->nodes[u].in[2] < 0) return INFINITY;
  return *(const float *)g->tensors[g->nodes[u].in[2]].data;
}

/* Per-channel scales over [0, hi_c] with the shared zero point -128.  A
 * channel's range is at least 1/256 of the widest one (a dead channel
 * would otherwise get a denormal scale).  A ReLU6 bound caps each range,
 * so the clamp at 6 is the top code of every channel. */
static void choose_channel_scales(struct qctx *q, int t, int producer) {
  const struct calib_range *r = &q->ranges[t];
  float cap = clip_max(q->g, producer), widest = 0;
  float *sc = ir_xmalloc((size_t)r->channels * sizeof *sc);
  for (int c = 0; c < r->channels; c++) widest = fmaxf(widest, fminf(r->ch_hi[c], cap));
  for (int c = 0; c < r->channels; c++) {
    float hi = fmaxf(fminf(r->ch_hi[c], cap), widest / 256.0f);
    sc[c] = hi > 0 ? hi / 255.0f : 1.0f;
  }
  q->ch_scale[t] = sc;
  q->scale[t] = 1.0f; /* the DQ after it yields codes: x - zp */
  q->zp[t] = -128;
}

static void choose_per_channel(struct qctx *q) {
  for (int t = 0; t < q->n_tensors; t++) {
    int p = q->point[t] ? conv_producer(q, t) : -1;
    if (p >= 0 && per_channel_ok(q, t)) choose_channel_scales(q, t, p);
  }
}

/* ---- building Q / DQ ---- */

/* A tensor named base + suffix when that name is free, else a fresh one. */
static int add_named(struct ir_graph *g, const char *base, const char *suffix, enum ir_dtype dt,
                     int rank, const int64_t *dims) {
  char name[256];
  snprintf(name, sizeof name, "%s%s", base, suffix);
  int t = ir_tensor_add(g, name, dt, rank, dims);
  return t >= 0 ? t : ir_tensor_add(g, NULL, dt, rank, dims);
}

/* Per-tensor (n == 1, rank 0) or per-axis parameter constants. */
static void qparam_consts(struct ir_graph *g, int n, const float *scale, const int32_t *zp,
                          enum ir_dtype zdt, int *s_id, int *z_id) {
  int64_t dims[1] = {n};
  int rank = n == 1 ? 0 : 1;
  *s_id = ir_const_add(g, NULL, IR_DT_F32, rank, dims, scale);
  *z_id = ir_const_add(g, NULL, zdt, rank, dims, NULL);
  void *z = g->tensors[*z_id].data;
  for (int i = 0; i < n; i++) {
    if (zdt == IR_DT_I8) ((int8_t *)z)[i] = (int8_t)zp[i];
    else ((int32_t *)z)[i] = zp[i];
  }
}

/* DequantizeLinear of a new integer constant: returns the float result. */
static int dq_const(struct qctx *q, int pos, const char *base, enum ir_dtype dt, int rank,
                    const int64_t *dims, const void *data, int n, const float *scale, int axis) {
  struct ir_graph *g = q->g;
  int32_t *zeros = ir_xcalloc((size_t)n, sizeof *zeros);
  int c = add_named(g, base, dt == IR_DT_I8 ? ".i8" : ".i32", dt, rank, dims);
  ir_tensor_set_data(g, c, data, (size_t)ir_tensor_bytes(&g->tensors[c]));
  int s, z;
  qparam_consts(g, n, scale, zeros, dt, &s, &z);
  ir_quant_set(g, c, n > 1 ? axis : -1, n, scale, zeros);
  free(zeros);
  int y = add_named(g, base, ".dq", IR_DT_F32, rank, dims);
  int in[3] = {c, s, z};
  int node = ir_node_insert(g, pos, IR_OP_DEQUANTIZELINEAR, NULL, 3, in, 1, &y);
  if (n > 1) ir_attr_set_int(g, node, "axis", axis);
  return y;
}

/* ---- weights and biases ---- */

/* Per-channel symmetric int8 of w (channel = index along `axis` of a
 * [outer][channels][inner] view).  A channel's range is at least 1/256 of
 * the widest channel's: a (nearly) dead channel would otherwise get a tiny
 * scale, hence a requantization factor far below the layer's others (its
 * multiplier rounds to 0 under the shared shift) and a bias that overflows
 * int32 at scale s_x * s_w. */
static void quantize_weights(const float *w, int64_t outer, int64_t ch, int64_t inner, int8_t *q,
                             float *scale) {
  float widest = 0;
  for (int64_t k = 0; k < outer * ch * inner; k++) widest = fmaxf(widest, fabsf(w[k]));
  for (int64_t c = 0; c < ch; c++) {
    float m = widest / 256.0f;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) m = fmaxf(m, fabsf(w[(o * ch + c) * inner + i]));
    scale[c] = m > 0 ? m / 127.0f : 1.0f;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t k = (o * ch + c) * inner + i;
        double v = nearbyint((double)w[k] / scale[c]);
        q[k] = (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v);
      }
  }
}

static int32_t sat32(double v) {
  v = nearbyint(v);
  return (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v);
}

/* Replaces node i's weight operand k (channel axis `axis` of a rank-2 or
 * rank-4 tensor) by DQ(int8); *w_scale receives the scales (malloc'd). */
static void quantize_weight_operand(struct qctx *q, int i, int k, int axis, float **w_scale, int *pos) {
  struct ir_graph *g = q->g;
  int w = g->nodes[i].in[k];
  struct ir_tensor wt = g->tensors[w]; /* copy: adding tensors moves the array */
  int64_t outer = 1, inner = 1, ch = wt.dims[axis], n = ir_tensor_numel(&wt);
  for (int d = 0; d < axis; d++) outer *= wt.dims[d];
  for (int d = axis + 1; d < wt.rank; d++) inner *= wt.dims[d];
  int8_t *qw = ir_xmalloc((size_t)n);
  *w_scale = ir_xmalloc((size_t)ch * sizeof **w_scale);
  quantize_weights(wt.data, outer, ch, inner, qw, *w_scale);
  char *base = ir_xstrdup(wt.name);
  int y = dq_const(q, *pos, base, IR_DT_I8, wt.rank, wt.dims, qw, (int)ch, *w_scale, axis);
  (*pos)++;
  g->nodes[*pos].in[k] = y;
  free(base);
  free(qw);
}

/* Replaces node i's float bias operand k by DQ(int32 at s_x * s_w[o]). */
static void quantize_bias_operand(struct qctx *q, int i, int k, float s_x, const float *s_w, int *pos) {
  struct ir_graph *g = q->g;
  int b = g->nodes[i].in[k];
  if (b < 0) return;
  struct ir_tensor bt = g->tensors[b];
  int64_t n = ir_tensor_numel(&bt);
  int32_t *qb = ir_xmalloc((size_t)n * sizeof *qb);
  float *sc = ir_xmalloc((size_t)n * sizeof *sc);
  for (int64_t o = 0; o < n; o++) {
    sc[o] = s_x * s_w[o];
    qb[o] = sat32((double)((const float *)bt.data)[o] / sc[o]);
  }
  char *base = ir_xstrdup(bt.name);
  int y = dq_const(q, *pos, base, IR_DT_I32, bt.rank, bt.dims, qb, (int)n, sc, bt.rank - 1);
  (*pos)++;
  g->nodes[*pos].in[k] = y;
  free(base);
  free(qb);
  free(sc);
}

/* Folds Gemm's alpha into the weights and beta into the bias. */
static void gemm_fold_alpha_beta(struct ir_graph *g, int i) {
  struct ir_node *n = &g->nodes[i];
  float alpha = ir_attr_float(n, "alpha", 1.0f), beta = ir_attr_float(n, "beta", 1.0f);
  struct ir_tensor *w = &g->tensors[n->in[1]];
  for (int64_t j = 0, m = ir_tensor_numel(w); j < m && alpha != 1.0f; j++) ((float *)w->data)[j] *= alpha;
  if (n->n_in > 2 && n->in[2] >= 0 && beta != 1.0f) {
    struct ir_tensor *c = &g->tensors[n->in[2]];
    for (int64_t j = 0, m = ir_tensor_numel(c); j < m; j++) ((float *)c->data)[j] *= beta;
  }
  ir_attr_remove(n, "alpha");
  ir_attr_remove(n, "beta");
}

/* A private copy of constant operand k, so that rewriting it cannot
 * change another node sharing the tensor. */
static void own_operand(struct ir_graph *g, int i, int k) {
  int t = g->nodes[i].in[k];
  if (t < 0) return;
  struct ir_tensor c = g->tensors[t];
  g->nodes[i].in[k] = ir_const_add(g, NULL, c.dtype, c.rank, c.dims, c.data);
}

/* Gives node i a float bias operand of its own ([O] zeros when it had
 * none), so bias correction can change it. */
static void own_bias(struct ir_graph *g, int i, int64_t o) {
  struct ir_node *n = &g->nodes[i];
  if (n->n_in > 2 && n->in[2] >= 0) {
    own_operand(g, i, 2);
    return;
  }
  int b = ir_const_add(g, NULL, IR_DT_F32, 1, &o, NULL);
  n = &g->nodes[i];
  if (n->n_in < 3) n->in = ir_xrealloc(n->in, 3 * sizeof *n->in), n->n_in = 3;
  n->in[2] = b;
}

/* Bias correction: weight rounding shifts output channel o by
 * sum_k (w - s_w[o] q)[o][k] * E[x_c(k)], the same for every input since
 * it is the rounding error times the input's mean (large after a ReLU).
 * Adding it back to the float bias removes that systematic error (the
 * data-free form of Nagel et al., "Data-Free Quantization", 2019); the
 * means come from calibration.  Padding, which reads zeros, is ignored. */
static void correct_bias(struct qctx *q, int i, int axis, const float *w, const float *s_w, const float *xs) {
  struct ir_graph *g = q->g;
  const struct ir_node *n = &g->nodes[i];
  const struct ir_tensor *wt = &g->tensors[n->in[1]], *x = &g->tensors[n->in[0]];
  const struct calib_range *r = n->in[0] < q->n_ranges ? &q->ranges[n->in[0]] : NULL;
  float *b = g->tensors[n->in[2]].data;
  int64_t o_n = wt->dims[axis], per = ir_tensor_numel(wt) / o_n;
  int64_t kk = wt->rank == 4 ? wt->dims[2] * wt->dims[3] : 1, cg = wt->rank == 4 ? wt->dims[1] : per;
  int64_t groups = wt->rank == 4 ? x->dims[1] / cg : 1;
  if (!r || !r->ch_sum) return;
  for (int64_t o = 0; o < o_n; o++) {
    double delta = 0;
    for (int64_t k = 0; k < per; k++) {
      int64_t idx = axis == 0 ? o * per + k : k * o_n + o, c = (o / (o_n / groups)) * cg + k / kk;
      double v = nearbyint((double)w[idx] / s_w[o]);
      v = v < -127 ? -127 : v > 127 ? 127 : v;
      double mean = calib_channel_mean(r, (int)c) / (xs ? xs[c] : 1.0f); /* codes when per-channel */
      delta += ((double)w[idx] - s_w[o] * v) * mean;
    }
    b[o] += (float)delta;
  }
}

/* Input channel c of a convolution reads codes x / s_c: its weights take
 * the scale, w[o][c] * s_c, before they are quantized. */
static void fold_input_scales(struct ir_graph *g, int i, const float *xs) {
  const struct ir_node *n = &g->nodes[i];
  struct ir_tensor *wt = &g->tensors[n->in[1]];
  int64_t o_n = wt->dims[0], cg = wt->dims[1], kk = wt->dims[2] * wt->dims[3];
  int64_t groups = g->tensors[n->in[0]].dims[1] / cg;
  float *w = wt->data;
  for (int64_t o = 0; o < o_n; o++)
    for (int64_t ci = 0; ci < cg; ci++)
      for (int64_t k = 0; k < kk; k++) w[(o * cg + ci) * kk + k] *= xs[(o / (o_n / groups)) * cg + ci];
}

static void quantize_params_of(struct qctx *q, int *i) {
  struct ir_graph *g = q->g;
  enum ir_op_kind op = g->nodes[*i].op;
  if (op != IR_OP_CONV && op != IR_OP_GEMM) return;
  float s_x = q->scale[g->nodes[*i].in[0]], *s_w;
  int axis = 0;
  if (op == IR_OP_GEMM) {
    own_operand(g, *i, 1);
    if (g->nodes[*i].n_in > 2) own_operand(g, *i, 2);
    gemm_fold_alpha_beta(g, *i);
    axis = ir_attr_int(&g->nodes[*i], "transB", 0) ? 0 : 1;
  }
  own_bias(g, *i, g->tensors[g->nodes[*i].in[1]].dims[axis]);
  const float *xs = q->ch_scale[g->nodes[*i].in[0]];
  if (xs) {
    own_operand(g, *i, 1);
    fold_input_scales(g, *i, xs);
  }
  float *w = ir_xmalloc(g->tensors[g->nodes[*i].in[1]].nbytes);
  memcpy(w, g->tensors[g->nodes[*i].in[1]].data, g->tensors[g->nodes[*i].in[1]].nbytes);
  quantize_weight_operand(q, *i, 1, axis, &s_w, i);
  correct_bias(q, *i, axis, w, s_w, xs);
  quantize_bias_operand(q, *i, 2, s_x, s_w, i);
  free(w);
  free(s_w);
}

/* Puts Q -> DQ on tensor t right after its producer. */
static void insert_qdq(struct qctx *q, int t, int pos) {
  struct ir_graph *g = q->g;
  char *base = ir_xstrdup(g->tensors[t].name);
  struct ir_tensor x = g->tensors[t];
  int s, z, qs, qz, tq = add_named(g, base, ".q", IR_DT_I8, x.rank, x.dims);
  qparam_consts(g, 1, &q->scale[t], &q->zp[t], IR_DT_I8, &s, &z);
  qs = s, qz = z;
  int nc = q->ch_scale[t] ? (int)x.dims[1] : 1;
  int32_t *zps = ir_xmalloc((size_t)nc * sizeof *zps);
  for (int c = 0; c < nc; c++) zps[c] = q->zp[t];
  if (nc > 1) qparam_consts(g, nc, q->ch_scale[t], zps, IR_DT_I8, &qs, &qz);
  ir_quant_set(g, tq, nc > 1 ? 1 : -1, nc, nc > 1 ? q->ch_scale[t] : &q->scale[t], zps);
  free(zps);
  int tdq = add_named(g, base, ".dq", IR_DT_F32, x.rank, x.dims);
  ir_replace_uses(g, t, tdq);
  int qin[3] = {t, qs, qz}, dqin[3] = {tq, s, z};
  int node = ir_node_insert(g, pos, IR_OP_QUANTIZELINEAR, NULL, 3, qin, 1, &tq);
  if (nc > 1) ir_attr_set_int(g, node, "axis", 1);
  ir_node_insert(g, pos + 1, IR_OP_DEQUANTIZELINEAR, NULL, 3, dqin, 1, &tdq);
  free(base);
}

static void insert_all_qdq(struct qctx *q) {
  struct ir_graph *g = q->g;
  for (int k = 0; k < g->n_inputs; k++)
    if (q->point[g->inputs[k]]) insert_qdq(q, g->inputs[k], 0);
  for (int i = 0; i < g->n_nodes; i++) {
    int y = g->nodes[i].n_out ? g->nodes[i].out[0] : -1;
    if (y >= 0 && y < q->n_tensors && q->point[y] && g->nodes[i].op != IR_OP_QUANTIZELINEAR) {
      insert_qdq(q, y, i + 1);
      i += 2;
    }
  }
}

int ir_pass_quantize(struct ir_graph *g, const struct calib_range *ranges, int n_ranges, unsigned flags,
                     struct ir_error *err) {
  struct qctx q = {.g = g, .ranges = ranges, .n_ranges = n_ranges, .err = err, .n_tensors = g->n_tensors,
                   .flags = flags};
  size_t n = (size_t)g->n_tensors + 1;
  q.point = ir_xcalloc(n, 1);
  q.sym = ir_xcalloc(n, 1);
  q.src = ir_xmalloc(n * sizeof *q.src);
  q.scale = ir_xcalloc(n, sizeof *q.scale);
  q.zp = ir_xcalloc(n, sizeof *q.zp);
  q.ch_scale = ir_xcalloc(n, sizeof *q.ch_scale);
  for (int t = 0; t < g->n_tensors; t++) q.src[t] = t;
  mark_points(&q);
  int rc = choose_all_params(&q);
  if (!rc) choose_per_channel(&q);
  for (int i = 0; !rc && i < g->n_nodes; i++)
    if (is_core(g, &g->nodes[i])) quantize_params_of(&q, &i);
  if (!rc) insert_all_qdq(&q);
  free(q.point);
  free(q.sym);
  free(q.src);
  free(q.scale);
  free(q.zp);
  for (int t = 0; t < q.n_tensors; t++) free(q.ch_scale[t]);
  free(q.ch_scale);
  if (rc) return -1;
  ir_pass_dce(g);
  return ir_pass_shape_infer(g, err) || ir_verify(g, err) ? -1 : 0;
}
