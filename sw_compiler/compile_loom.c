/*
 * compile_loom.c - the partitioned graph as a .loom file.
 *
 * Walks the nodes in order and emits one STEP per unit of run-time work:
 *   - an accelerator node: its lowered program's instructions (INSNS), its
 *     constant segment (a CONST buffer of parameter rows, packed weights
 *     and micro-ops), and a JOB whose segment table maps lower_seg:
 *       CONST -> that buffer, IN / IN2 -> the operands' buffers,
 *       OUT -> the result's buffer;
 *   - a host node: a HOST step (driver/core/hostops.h) on tensor
 *     descriptors.  QuantizeLinear / DequantizeLinear / Softmax map to the
 *     host op of that name (an int8 Softmax, compile_qsoftmax.c, to
 *     QSOFTMAX; an int8 LayerNormalization, compile_qlayernorm.c, to
 *     QLAYERNORM); a layout repack and a Concat are COPY steps
 *     between descriptors that view the same bytes differently (a plain
 *     reshape of a plain tensor is free, so a repack is one COPY, or two
 *     through a scratch buffer when both sides are channel-blocked);
 *   - a view: nothing, its result's descriptor points at its operand's
 *     bytes;
 *   - an int32 result (ConvInteger, MatMulInteger): the job stores byte
 *     lanes into a scratch tensor and a COPY reblocks them into the int32
 *     tensor's bytes (acc_out_segment);
 *   - a folded stem (the lowering chose LOWER_ACT_IM2COL): an IM2COL host
 *     step (driver/core/hostops_nn.c) gathers the input into a new tensor
 *     right before the job.
 *
 * Memory: one WORK buffer per activation tensor (the runtime zero-fills
 * WORK buffers at load), each tensor at offset 0 of its buffer, since the
 * lowering addresses every tensor from the start of its segment.  Views
 * share their operand's buffer; Concat operands are copied into slices of
 * the result's buffer.  Attention's head slices are views at an offset
 * into the stacked operand's buffer, and the heads' results are views at
 * an offset into their Concat's: a job whose segment tensor starts inside
 * its buffer has its LOADs / STOREs of that segment moved by the offset
 * (lower_program_rebase), so it reads and writes the slice in place.  Buffers are not reused across tensors: simple, and
 * ResNet-18 needs about 20 MB.
 *
 * The model's interface: a graph input whose only reader is a
 * QuantizeLinear is presented by the quantized tensor itself, with the
 * float type as its user type (the runtime quantizes, packs and accepts
 * int8 too); a graph output produced by a DequantizeLinear is presented by
 * the integer tensor with user type float (the runtime unpacks and
 * dequantizes).  So a typical model has no host steps at all for its
 * inputs and outputs.  Descriptors and buffers are collected here and
 * handed to the builder at the end, so their sizes can still grow (a
 * lowered job may need a larger segment than the tensor's stored size).
 */
#include "sw_compiler/compile.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/hostops_nn.h"
#include "sw_compiler/compile_int.h"

/* ---- names, buffers, descriptors ---- */

static int name_taken(const struct lctx *c, const char *s, int buffers) {
  for (int i = 0; buffers && i < c->n_bufs; i++)
    if (!strcmp(c->bufs[i].name, s)) return 1;
  for (int i = 0; !buffers && i < c->n_ts; i++)
    if (!strcmp(c->ts[i].name, s)) return 1;
  return 0;
}

/* `want`, or want~2, want~3, ... : names are unique per section. */
static char *unique_name(const struct lctx *c, const char *want, int buffers) {
  size_t len = strlen(want) + 16;
  char *s = ir_xmalloc(len);
  snprintf(s, len, "%s", want);
  for (int k = 2; name_taken(c, s, buffers); k++) snprintf(s, len, "%s~%d", want, k);
  return s;
}

int cl_new_buffer(struct lctx *c, const char *name, uint32_t kind, uint64_t size, uint64_t data_offset) {
  if (c->n_bufs == c->cap_bufs)
    c->bufs = ir_xrealloc(c->bufs, (size_t)(c->cap_bufs = c->cap_bufs ? 2 * c->cap_bufs : 32) * sizeof *c->bufs);
  c->bufs[c->n_bufs] = (struct cbuf){unique_name(c, name, 1), kind, size ? size : 1, data_offset};
  return c->n_bufs++;
}

/* The record of IR tensor t as stored (layout from the partition). */
int cl_describe(struct lctx *c, int t, struct loom_file_tensor *rec) {
  const struct ir_tensor *x = &c->g->tensors[t];
  memset(rec, 0, sizeof *rec);
  rec->dtype = rec->user_dtype = (uint32_t)ir_dtype_to_loom(x->dtype);
  if (!rec->dtype) return ir_fail(c->err, c->g, -1, "tensor '%s' of type %s cannot live at run time", x->name, ir_dtype_name(x->dtype));
  if (x->rank > LOOM_MAX_RANK) return ir_fail(c->err, c->g, -1, "tensor '%s' has rank %d", x->name, x->rank);
  rec->rank = (uint32_t)x->rank;
  for (int i = 0; i < x->rank; i++) rec->dims[i] = x->dims[i];
  if (x->layout == IR_LAYOUT_NCHWC) {
    if (x->rank != 4 && x->rank != 2)
      return ir_fail(c->err, c->g, -1, "tensor '%s' of rank %d cannot be channel-blocked", x->name, x->rank);
    rec->layout = x->rank == 4 ? LOOM_LAYOUT_NCHWC : LOOM_LAYOUT_NC;
    rec->layout_block = (uint32_t)x->layout_block;
  }
  if (x->quant.n == 1 && (x->dtype == IR_DT_I8 || x->dtype == IR_DT_U8 || x->dtype == IR_DT_I32))
    rec->scale = x->quant.scale[0], rec->zero_point = x->quant.zero_point[0];
  rec->bytes = loom_file_tensor_bytes(rec);
  if (!rec->bytes && loom_file_tensor_empty(rec)) return 0; /* no elements (format 1.3) */
  if (!rec->bytes && ir_tensor_numel(x) == 0)
    return ir_fail(c->err, c->g, -1, "tensor '%s' has no elements and is channel-blocked", x->name);
  if (!rec->bytes) return ir_fail(c->err, c->g, -1, "tensor '%s' is too large", x->name);
  return 0;
}

int cl_add_desc(struct lctx *c, const char *name, const struct loom_file_tensor *rec) {
  if (c->n_ts == c->cap_ts)
    c->ts = ir_xrealloc(c->ts, (size_t)(c->cap_ts = c->cap_ts ? 2 * c->cap_ts : 64) * sizeof *c->ts);
  c->ts[c->n_ts] = (struct ctensor){unique_name(c, name, 0), *rec};
  return c->n_ts++;
}

void cl_grow_buffer(struct lctx *c, int buf, uint64_t end) {
  if (c->bufs[buf].size < end) c->bufs[buf].size = end;
}

/* The descriptor of IR tensor t, created (with its own buffer) on first
 * use; `alias` >= 0 makes it view that descriptor's bytes instead. */
int cl_desc_as(struct lctx *c, int t, int alias) {
  if (c->desc[t] >= 0) return c->desc[t];
  struct loom_file_tensor rec;
  const struct iface *f = &c->iface[t];
  if (cl_describe(c, t, &rec)) return -1;
  const char *name = f->name ? f->name : c->g->tensors[t].name;
  if (f->role) rec.role = f->role, rec.user_dtype = (uint32_t)ir_dtype_to_loom(f->user_dt);
  const struct ir_tensor *x = &c->g->tensors[t];
  if (alias >= 0) {
    rec.buffer = c->ts[alias].rec.buffer;
    rec.offset = c->ts[alias].rec.offset;
  } else if (x->data) { /* a constant a host step reads: a CONST buffer of its bytes */
    rec.layout = LOOM_LAYOUT_PLAIN, rec.layout_block = 0;
    rec.bytes = loom_file_tensor_bytes(&rec);
    uint64_t off = loom_fb_data(c->b, x->data, x->nbytes, 64);
    rec.buffer = (uint32_t)cl_new_buffer(c, name, LOOM_BUFKIND_CONST, rec.bytes, off);
  } else {
    rec.buffer = (uint32_t)cl_new_buffer(c, name, LOOM_BUFKIND_WORK, rec.bytes, 0);
  }
  cl_grow_buffer(c, (int)rec.buffer, rec.offset + rec.bytes);
  return c->desc[t] = cl_add_desc(c, name, &rec);
}

int cl_desc_of(struct lctx *c, int t) { return cl_desc_as(c, t, -1); }

/* A descriptor over existing bytes: dims/layout of IR tensor `shape_of`
 * (plain when `plain`), dtype and quantization of descriptor `like`. */
int cl_view_desc(struct lctx *c, int like, int shape_of, int plain, int buf, uint64_t offset,
                     const char *suffix) {
  struct loom_file_tensor rec;
  if (cl_describe(c, shape_of, &rec)) return -1;
  const struct loom_file_tensor *l = &c->ts[like].rec;
  rec.dtype = rec.user_dtype = l->dtype;
  rec.scale = l->scale, rec.zero_point = l->zero_point;
  if (plain) rec.layout = LOOM_LAYOUT_PLAIN, rec.layout_block = 0;
  rec.bytes = loom_file_tensor_bytes(&rec);
  rec.buffer = (uint32_t)buf, rec.offset = offset;
  cl_grow_buffer(c, buf, offset + rec.bytes);
  char name[300];
  snprintf(name, sizeof name, "%s%s", c->g->tensors[shape_of].name, suffix);
  return cl_add_desc(c, name, &rec);
}

/* ---- the interface ---- */

static void plan_input(struct lctx *c, int x) {
  const struct ir_graph *g = c->g;
  int u = ir_sole_reader(g, x), t = x;
  int is_out = 0;
  for (int k = 0; u >= 0 && k < g->n_outputs; k++) is_out |= g->outputs[k] == g->nodes[u].out[0];
  if (u >= 0 && g->nodes[u].op == IR_OP_QUANTIZELINEAR && c->targets[u] == PART_HOST && !is_out) {
    c->absorbed[u] = 1;
    t = g->nodes[u].out[0];
  }
  c->iface[t] = (struct iface){LOOM_ROLE_INPUT, g->tensors[x].name, g->tensors[x].dtype};
}

static int plan_output(struct lctx *c, int k, const char *name) {
  const struct ir_graph *g = c->g;
  int y = g->outputs[k], p = ir_producer(g, y), t = y;
  if (p >= 0 && g->nodes[p].op == IR_OP_DEQUANTIZELINEAR && c->targets[p] == PART_HOST && ir_sole_reader(g, y) < 0 &&
      g->tensors[g->nodes[p].in[0]].quant.n == 1 && !c->iface[g->nodes[p].in[0]].role) {
    int only_output = 1;
    for (int j = 0; j < g->n_outputs; j++) only_output &= j == k || g->outputs[j] != y;
    if (only_output) c->absorbed[p] = 1, t = g->nodes[p].in[0];
  }
  if (c->iface[t].role) return ir_fail(c->err, c->g, -1, "output '%s' is also an input or another output of the model", name);
  c->iface[t] = (struct iface){LOOM_ROLE_OUTPUT, name, g->tensors[y].dtype};
  return 0;
}

static int plan_interface(struct lctx *c, char *const *out_names) {
  for (int i = 0; i < c->g->n_inputs; i++) plan_input(c, c->g->inputs[i]);
  for (int k = 0; k < c->g->n_outputs; k++)
    if (plan_output(c, k, out_names[k])) return -1;
  return 0;
}

/* ---- steps ---- */

struct compile_layer *cl_new_row(struct lctx *c) {
  struct compile_result *r = c->r;
  if (r->n_layers == c->cap_layers)
    r->layers = ir_xrealloc(r->layers, (size_t)(c->cap_layers = c->cap_layers ? 2 * c->cap_layers : 32) * sizeof *r->layers);
  struct compile_layer *row = &r->layers[r->n_layers++];
  memset(row, 0, sizeof *row);
  return row;
}

void cl_host_row(struct lctx *c, int node, uint32_t kind) {
  const struct ir_node *n = &c->g->nodes[node];
  struct compile_layer *row = cl_new_row(c);
  snprintf(row->name, sizeof row->name, "%s", n->name ? n->name : c->g->tensors[n->out[0]].name);
  snprintf(row->op, sizeof row->op, "host %s", loom_hostop_name(kind));
  compile_shape_text(&c->g->tensors[n->out[0]], row->shape, sizeof row->shape);
}

void cl_host_step(struct lctx *c, uint32_t kind, const int *in, int n_in, const int *out, int n_out,
                      const void *params, uint64_t param_size) {
  struct loom_file_step s = {.kind = LOOM_STEP_HOST, .index = kind};
  for (int k = 0; k < 4; k++) s.inputs[k] = k < n_in ? (uint32_t)in[k] : LOOM_FILE_NO_BUFFER;
  for (int k = 0; k < 2; k++) s.outputs[k] = k < n_out ? (uint32_t)out[k] : LOOM_FILE_NO_BUFFER;
  if (param_size) {
    s.param_offset = loom_fb_data(c->b, params, param_size, 8);
    s.param_size = param_size;
  }
  loom_fb_step(c->b, &s);
}

int cl_copy_step(struct lctx *c, int from, int to) {
  if (from < 0 || to < 0) return -1;
  cl_host_step(c, LOOM_HOSTOP_COPY, &from, 1, &to, 1, NULL, 0);
  return 0;
}

/* Softmax over `axis`; the legacy (opset < 13) form flattens the axes
 * from `axis` on, which is a free plain reshape to 2-D. */
static int softmax_step(struct lctx *c, int node, int x, int y) {
  const struct ir_node *n = &c->g->nodes[node];
  const struct ir_tensor *t = &c->g->tensors[n->in[0]];
  int32_t axis = (int32_t)ir_attr_int(n, "axis", -1);
  if (axis < 0) axis += t->rank;
  if (axis < 0 || axis >= t->rank) return ir_fail(c->err, c->g, node, "axis is out of range");
  if (ir_attr_int(n, "legacy_2d", 0) && axis != t->rank - 1) {
    if (c->ts[x].rec.layout || c->ts[y].rec.layout) return ir_fail(c->err, c->g, node, "legacy Softmax of a blocked tensor");
    struct loom_file_tensor *rx = &c->ts[x].rec;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < t->rank; i++) *(i < axis ? &outer : &inner) *= t->dims[i];
    struct loom_file_tensor v = *rx;
    memset(v.dims, 0, sizeof v.dims);
    v.rank = 2, v.dims[0] = outer, v.dims[1] = inner, v.role = LOOM_ROLE_INTERNAL;
    char name[300];
    snprintf(name, sizeof name, "%s.2d", c->ts[x].name);
    x = cl_add_desc(c, name, &v);
    v = c->ts[y].rec;
    memset(v.dims, 0, sizeof v.dims);
    v.rank = 2, v.dims[0] = outer, v.dims[1] = inner, v.role = LOOM_ROLE_INTERNAL;
    snprintf(name, sizeof name, "%s.2d", c->ts[y].name);
    y = cl_add_desc(c, name, &v);
    axis = 1;
  }
  uint8_t p[4] = {(uint8_t)axis, (uint8_t)(axis >> 8), (uint8_t)(axis >> 16), (uint8_t)(axis >> 24)};
  cl_host_step(c, LOOM_HOSTOP_SOFTMAX, &x, 1, &y, 1, p, sizeof p);
  return 0;
}

/* A reshape between layouts: plain data reinterpreted for free, the
 * blocked side converted by COPY. */
static int repack_steps(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  int xi = n->in[0], yi = n->out[0], x = cl_desc_of(c, xi), y = cl_desc_of(c, yi);
  if (x < 0 || y < 0) return -1;
  const struct loom_file_tensor *rx = &c->ts[x].rec, *ry = &c->ts[y].rec;
  if (rx->dtype != ry->dtype) return ir_fail(c->err, c->g, node, "operand and result types differ");
  if (!rx->layout) /* plain x read with y's shape */
    return cl_copy_step(c, cl_view_desc(c, x, yi, 1, (int)rx->buffer, rx->offset, ".view"), y);
  if (!ry->layout) /* y's bytes written with x's shape */
    return cl_copy_step(c, x, cl_view_desc(c, x, xi, 1, (int)ry->buffer, ry->offset, ".view"));
  int scratch = cl_new_buffer(c, c->ts[x].name, LOOM_BUFKIND_WORK, 0, 0);
  cl_copy_step(c, x, cl_view_desc(c, x, xi, 1, scratch, 0, ".plain"));
  return cl_copy_step(c, cl_view_desc(c, x, yi, 1, scratch, 0, ".plain"), y);
}

/* Concat: each operand copied into its slice of the result's bytes. */
static int concat_steps(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  int y = cl_desc_of(c, n->out[0]);
  if (y < 0) return -1;
  const struct ir_tensor *yt = &c->g->tensors[n->out[0]];
  int64_t axis = ir_attr_int(n, "axis", 0), inner = 1, at = 0;
  if (axis < 0) axis += yt->rank;
  for (int d = (int)axis + 1; d < yt->rank; d++) inner *= yt->dims[d];
  for (int k = 0; k < n->n_in; k++) {
    int x = cl_desc_of(c, n->in[k]);
    if (x < 0) return -1;
    struct loom_file_tensor rx = c->ts[y].rec;
    if (c->ts[x].rec.dtype != rx.dtype) return ir_fail(c->err, c->g, node, "Concat operands differ in type");
    uint64_t es = loom_dtype_size((loom_dtype)rx.dtype);
    uint64_t off = rx.layout ? (uint64_t)(at / rx.layout_block) * inner * rx.layout_block * es : (uint64_t)(at * inner) * es;
    int slice = cl_view_desc(c, y, n->in[k], 0, (int)rx.buffer, rx.offset + off, ".slice");
    if (slice < 0) return -1;
    c->ts[slice].rec.layout = rx.layout, c->ts[slice].rec.layout_block = rx.layout_block;
    c->ts[slice].rec.bytes = loom_file_tensor_bytes(&c->ts[slice].rec);
    cl_copy_step(c, x, slice);
    at += c->g->tensors[n->in[k]].dims[axis];
  }
  return 0;
}

/* Gather of one constant index along an axis with only 1s before it
 * (pass_partition.c checks the form): a COPY of that slice of the plain
 * operand. */
static int gather_step(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  const struct ir_tensor *it = &c->g->tensors[n->in[1]], *xt = &c->g->tensors[n->in[0]];
  int x = cl_desc_of(c, n->in[0]), y = cl_desc_of(c, n->out[0]);
  if (x < 0 || y < 0) return -1;
  const struct loom_file_tensor *rx = &c->ts[x].rec;
  int64_t axis = ir_attr_int(n, "axis", 0);
  int64_t len = xt->dims[axis < 0 ? axis + xt->rank : axis];
  int64_t k = it->dtype == IR_DT_I64 ? *(const int64_t *)it->data : *(const int32_t *)it->data;
  if (k < 0) k += len;
  if (k < 0 || k >= len || rx->layout) return ir_fail(c->err, c->g, node, "index %lld out of range, or a blocked operand", (long long)k);
  uint64_t slice = rx->bytes / (uint64_t)len;
  return cl_copy_step(c, cl_view_desc(c, x, n->out[0], 1, (int)rx->buffer, rx->offset + (uint64_t)k * slice, ".slice"), y);
}

static int host_node(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  if (c->absorbed[node]) return 0;
  if (n->op == IR_OP_SOFTMAX && c->g->tensors[n->in[0]].dtype == IR_DT_I8) return cl_qsoftmax_step(c, node);
  if (compile_is_int8_layernorm(c->g, n)) return cl_qlayernorm_step(c, node);
  uint32_t kind = LOOM_HOSTOP_COPY;
  int rc = 0;
  if (n->op == IR_OP_CONCAT) {
    rc = concat_steps(c, node);
  } else if (n->op == IR_OP_GATHER) {
    rc = gather_step(c, node);
  } else if (n->op == IR_OP_QUANTIZELINEAR || n->op == IR_OP_DEQUANTIZELINEAR || n->op == IR_OP_SOFTMAX) {
    int x = cl_desc_of(c, n->in[0]), y = cl_desc_of(c, n->out[0]);
    if (x < 0 || y < 0) return -1;
    kind = n->op == IR_OP_SOFTMAX ? LOOM_HOSTOP_SOFTMAX
           : n->op == IR_OP_QUANTIZELINEAR ? LOOM_HOSTOP_QUANTIZE : LOOM_HOSTOP_DEQUANTIZE;
    if (n->op == IR_OP_SOFTMAX) rc = softmax_step(c, node, x, y);
    else cl_host_step(c, kind, &x, 1, &y, 1, NULL, 0);
  } else {
    rc = repack_steps(c, node);
  }
  if (!rc) cl_host_row(c, node, kind);
  return rc;
}

/* A descriptor of IR tensor t over rows [row, ...) of blocked descriptor
 * x's bytes (rows: N of [N, C] or [N, C, H, W], each a contiguous run). */
static int rows_desc(struct lctx *c, int x, int t, int64_t row, int64_t rows_of_x) {
  const struct loom_file_tensor *rx = &c->ts[x].rec;
  uint64_t off = rx->offset + (uint64_t)row * (rx->bytes / (uint64_t)rows_of_x);
  int d = cl_view_desc(c, x, t, 0, (int)rx->buffer, off, ".rows");
  return d < 0 ? -1 : (c->desc[t] = d);
}

/* Concats the partition placed in place (the heads' results of an
 * attention): before any job runs, each operand's descriptor becomes its
 * rows of the result, so the job producing it stores there (map_segment
 * moves its stores) and the Concat itself is nothing at run time. */
static int concats_in_place(struct lctx *c) {
  for (int i = 0; i < c->g->n_nodes; i++) {
    const struct ir_node *n = &c->g->nodes[i];
    if (c->targets[i] != PART_ALIAS || n->op != IR_OP_CONCAT) continue;
    int y = cl_desc_of(c, n->out[0]);
    if (y < 0) return -1;
    int64_t at = 0, axis = ir_attr_int(n, "axis", 0) & 1;
    for (int k = 0; k < n->n_in; k++) {
      int t = n->in[k];
      if (c->desc[t] >= 0) return ir_fail(c->err, c->g, i, "operand %%%s is laid out before its Concat", c->g->tensors[t].name);
      if (!axis && rows_desc(c, y, t, at, c->g->tensors[n->out[0]].dims[0]) < 0) return -1;
      if (axis) { /* columns: the first row's blocks; map_segment spaces the rows (column_pitch) */
        const struct loom_file_tensor *ry = &c->ts[y].rec;
        uint64_t off = ry->offset + (uint64_t)at * loom_dtype_size((loom_dtype)ry->dtype);
        int d = cl_view_desc(c, y, t, 0, (int)ry->buffer, off, ".cols");
        if (d < 0) return -1;
        c->desc[t] = d;
      }
      at += c->g->tensors[t].dims[axis];
    }
  }
  return 0;
}

static int view_node(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  if (n->op == IR_OP_CONCAT || c->absorbed[node]) return 0; /* in place: concats_in_place(), cl_wgt_row_stores() */
  int x = cl_desc_of(c, n->in[0]);
  if (x < 0) return -1;
  if (c->desc[n->out[0]] >= 0) return 0;
  int64_t start;
  int axis;
  if (ir_head_slice_of(c->g, n->out[0], &start, &axis) >= 0 && !axis) /* a head's rows of a stacked operand */
    return rows_desc(c, x, n->out[0], start, c->g->tensors[n->in[0]].dims[0]) < 0 ? -1 : 0;
  if (ir_head_slice_of(c->g, n->out[0], &start, &axis) >= 0) { /* its columns: map_segment spaces the rows */
    const struct loom_file_tensor *rx = &c->ts[x].rec;
    const struct ir_tensor *xt = &c->g->tensors[n->in[0]];
    uint64_t inner = xt->rank == 4 ? (uint64_t)(xt->dims[2] * xt->dims[3]) : 1; /* whole blocks of [N, C, H, W] */
    uint64_t off = rx->offset + (uint64_t)start * inner * loom_dtype_size((loom_dtype)rx->dtype);
    int d = cl_view_desc(c, x, n->out[0], 0, (int)rx->buffer, off, ".cols");
    return d < 0 ? -1 : (c->desc[n->out[0]] = d, 0);
  }
  return cl_desc_as(c, n->out[0], x) < 0 ? -1 : 0;
}

/* The folded stem's input (LOWER_ACT_IM2COL): a host IM2COL step gathers
 * operand t into a new blocked tensor, which segment IN maps. */
static int im2col_input(struct lctx *c, int node, const struct lower_program *p, int t, struct loom_file_job *j) {
#ifdef LOOM_HOSTOP_HAVE_IM2COL
  const struct lower_act *a = &p->act[LOWER_SEG_IN];
  const struct lower_im2col *m = &a->im2col;
  int x = cl_desc_of(c, t);
  if (x < 0) return -1;
  struct loom_file_tensor rec = c->ts[x].rec;
  memset(rec.dims, 0, sizeof rec.dims);
  rec.role = LOOM_ROLE_INTERNAL, rec.rank = 4, rec.layout = LOOM_LAYOUT_NCHWC;
  rec.layout_block = (uint32_t)a->block, rec.user_dtype = rec.dtype, rec.offset = 0;
  rec.dims[0] = a->n, rec.dims[1] = (int64_t)a->c * m->k_h * m->k_w, rec.dims[2] = m->out_h, rec.dims[3] = m->out_w;
  rec.bytes = loom_file_tensor_bytes(&rec);
  char name[300];
  snprintf(name, sizeof name, "%s.im2col", c->ts[x].name);
  rec.buffer = (uint32_t)cl_new_buffer(c, name, LOOM_BUFKIND_WORK, rec.bytes, 0);
  cl_grow_buffer(c, (int)rec.buffer, p->seg_bytes[LOWER_SEG_IN]);
  int y = cl_add_desc(c, name, &rec);
  int32_t v[LOOM_IM2COL_PARAM_COUNT] = {m->k_h, m->k_w, m->stride_h, m->stride_w, m->pad_t, m->pad_l,
                                        m->dil_h, m->dil_w, m->out_h, m->out_w, m->pad_value};
  uint8_t params[4 * LOOM_IM2COL_PARAM_COUNT];
  loom_hostop_params_put(v, LOOM_IM2COL_PARAM_COUNT, params);
  cl_host_step(c, LOOM_HOSTOP_IM2COL, &x, 1, &y, 1, params, sizeof params);
  cl_host_row(c, node, LOOM_HOSTOP_IM2COL);
  snprintf(c->r->layers[c->r->n_layers - 1].shape, sizeof c->r->layers[0].shape, "%lldx%lldx%lldx%lld",
           (long long)rec.dims[0], (long long)rec.dims[1], (long long)rec.dims[2], (long long)rec.dims[3]);
  j->segments[LOWER_SEG_IN] = rec.buffer;
  return 0;
#else
  (void)p, (void)t, (void)j;
  return ir_fail(c->err, c->g, node, "a folded stem needs the IM2COL host op, which this runtime lacks");
#endif
}

/* An int32 result (LOWER_CONV_ACC_OUT): the job stores the byte lanes,
 * an int8 tensor [N, 4C, ...] in the configuration's blocks, into a scratch
 * buffer (segment OUT).  Read in blocks of 4 lanes those bytes are the
 * int32 tensor in plain C order (lane k of channel 4c + k is byte k of
 * element c), so one COPY into a 4-lane int8 view of the result's bytes
 * finishes the job.  *from / *to get the two descriptors. */
static int acc_out_segment(struct lctx *c, int node, const struct lower_program *p, int t, struct loom_file_job *j,
                           int *from, int *to) {
  int y = cl_desc_of(c, t);
  if (y < 0) return -1;
  struct loom_file_tensor rec = c->ts[y].rec;
  if (rec.layout || (rec.rank != 4 && rec.rank != 2) || rec.dtype != LOOM_DT_I32)
    return ir_fail(c->err, c->g, node, "an int32 result must be a plain tensor of rank 2 or 4");
  rec.dtype = rec.user_dtype = LOOM_DT_I8, rec.role = LOOM_ROLE_INTERNAL, rec.scale = 0, rec.zero_point = 0;
  rec.dims[1] *= 4;
  rec.layout = rec.rank == 4 ? LOOM_LAYOUT_NCHWC : LOOM_LAYOUT_NC, rec.layout_block = 4;
  rec.bytes = loom_file_tensor_bytes(&rec);
  LOOM_ASSERT(rec.bytes == c->ts[y].rec.bytes);
  char name[300];
  snprintf(name, sizeof name, "%s.bytes", c->ts[y].name);
  *to = cl_add_desc(c, name, &rec);
  rec.layout_block = (uint32_t)p->act[LOWER_SEG_OUT].block, rec.offset = 0;
  rec.bytes = loom_file_tensor_bytes(&rec);
  snprintf(name, sizeof name, "%s.lanes", c->ts[y].name);
  rec.buffer = (uint32_t)cl_new_buffer(c, name, LOOM_BUFKIND_WORK, rec.bytes, 0);
  cl_grow_buffer(c, (int)rec.buffer, p->seg_bytes[LOWER_SEG_OUT]);
  *from = cl_add_desc(c, name, &rec);
  j->segments[LOWER_SEG_OUT] = rec.buffer;
  return 0;
}

/* When IR tensor t is a window of columns of a wider blocked [N, C]
 * tensor (a head's columns of an attention operand, or of an in-place
 * Concat): the bytes of one row of that tensor, else 0. */
static uint64_t column_pitch(const struct lctx *c, int t) {
  int axis, src = ir_head_slice_of(c->g, t, NULL, &axis);
  if (src >= 0 && axis && c->desc[src] >= 0 && c->ts[c->desc[src]].rec.layout)
    return c->ts[c->desc[src]].rec.bytes / (uint64_t)c->g->tensors[src].dims[0];
  for (int i = 0; i < c->g->n_nodes; i++) {
    const struct ir_node *n = &c->g->nodes[i];
    if (c->targets[i] != PART_ALIAS || n->op != IR_OP_CONCAT || !(ir_attr_int(n, "axis", 0) & 1)) continue;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] == t) {
        const struct loom_file_tensor *ry = &c->ts[c->desc[n->out[0]]].rec;
        return ry->bytes / (uint64_t)c->g->tensors[n->out[0]].dims[0];
      }
  }
  return 0;
}

/* Maps segment `seg` of job j to the buffer of IR tensor t. */
static int map_segment(struct lctx *c, int node, struct lower_program *p, enum lower_seg seg, int t,
                       struct loom_file_job *j) {
  const struct lower_act *a = &p->act[seg];
  if (a->layout == LOWER_ACT_IM2COL && seg == LOWER_SEG_IN) return im2col_input(c, node, p, t, j);
  if (seg == LOWER_SEG_OUT && c->wgt_rows[t] >= 0 && cl_wgt_rows_segment(c, node, p, &t)) return -1;
  int d = cl_desc_of(c, t);
  if (d < 0) return -1;
  const struct loom_file_tensor *rec = &c->ts[d].rec;
  if (a->layout != LOWER_ACT_NCHWC)
    return ir_fail(c->err, c->g, node, "the lowering chose the %s layout, which needs a host step Loom does not have yet",
                lower_act_layout_names[a->layout]);
  LOOM_ASSERT(rec->layout && (int)rec->layout_block == a->block);
  uint64_t pitch = column_pitch(c, t), rows = (uint64_t)c->g->tensors[t].dims[0];
  if (pitch && lower_program_repitch(p, seg, rec->bytes / rows, pitch))
    return ir_fail(c->err, c->g, node, "the job cannot write %%%s as columns of a wider tensor", c->g->tensors[t].name);
  if (rec->offset && lower_program_rebase(p, seg, rec->offset)) /* a slice read or written in place */
    return ir_fail(c->err, c->g, node, "operand %%%s starts %llu bytes into its buffer, not on a DRAM row",
                   c->g->tensors[t].name, (unsigned long long)rec->offset);
  cl_grow_buffer(c, (int)rec->buffer, p->seg_bytes[seg]);
  j->segments[seg] = rec->buffer;
  return 0;
}

/* The JOBMETA record of the job just added: what `loom run --profile` sets
 * beside the measured figures. */
static void job_meta(struct lctx *c, const struct compile_layer *row) {
  struct loom_file_jobmeta m = {.name = loom_fb_string(c->b, row->name[0] ? row->name : "job"),
                                .op = loom_fb_string(c->b, row->op),
                                .macs = row->report.macs,
                                .est_cycles = row->report.est_cycles,
                                .dma_bytes = row->report.dma_bytes,
                                .min_bytes = row->report.min_bytes};
  loom_fb_jobmeta(c->b, &m);
}

static int job_node(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  struct lower_program p;
  struct compile_layer row;
  if (c->absorbed[node]) return 0; /* in an earlier node's job */
  struct compile_fusion f;
  compile_fuse_plan(c->g, c->targets, c->cfg, c->flags, node, &f);
  if (f.n > 1 && compile_layer(c->g, &f, c->cfg, c->flags, &p, &row, c->err)) {
    lower_program_free(&p); /* the fused job does not fit: one job each */
    f.n = 1;
  }
  if (f.n == 1 && compile_layer(c->g, &f, c->cfg, c->flags, &p, &row, c->err)) {
    lower_program_free(&p);
    return -1;
  }
  int y = c->g->nodes[f.nodes[f.n - 1]].out[0], rc = 0;
  for (int i = 0; i + 1 < f.n; i++) /* K's rows are stored by the job that makes them: its last node */
    LOOM_ASSERT(c->wgt_rows[c->g->nodes[f.nodes[i]].out[0]] < 0);
  for (int i = 1; i < f.n; i++) c->absorbed[f.nodes[i]] = 1;
  struct loom_file_job j = {0};
  for (int s = 0; s < 8; s++) j.segments[s] = LOOM_FILE_NO_BUFFER;
  int lanes = -1, i32 = -1, acc_out = c->g->tensors[n->out[0]].dtype == IR_DT_I32;
  rc = map_segment(c, node, &p, LOWER_SEG_IN, n->in[0], &j);
  for (int i = 0; i < f.n && !rc; i++) { /* a fused residual Add's operand */
    const struct ir_node *m = &c->g->nodes[f.nodes[i]];
    if ((m->op == IR_OP_QCONV || m->op == IR_OP_QGEMM) && m->n_in > 4) rc = map_segment(c, node, &p, LOWER_SEG_IN2, m->in[4], &j);
  }
  int in2 = n->op == IR_OP_QADD || (n->op == IR_OP_QGEMM && !c->g->tensors[n->in[1]].data); /* runtime weights */
  rc = rc || (in2 && map_segment(c, node, &p, LOWER_SEG_IN2, n->in[1], &j)) ||
       (acc_out ? acc_out_segment(c, node, &p, n->out[0], &j, &lanes, &i32)
                : map_segment(c, node, &p, LOWER_SEG_OUT, y, &j));
  if (!rc) {
    row.report = p.report; /* as the segments' mapping left it */
    uint8_t *code = lower_program_code(&p);
    char name[128];
    snprintf(name, sizeof name, "%s.const", row.name);
    uint64_t off = loom_fb_data(c->b, p.const_data, p.const_bytes, 64);
    j.segments[LOWER_SEG_CONST] = (uint32_t)cl_new_buffer(c, name, LOOM_BUFKIND_CONST, p.const_bytes, off);
    j.insn_first = loom_fb_insns(c->b, code, p.insn_count);
    j.insn_count = p.insn_count;
    free(code);
    struct loom_file_step s = {.kind = LOOM_STEP_JOB, .index = loom_fb_job(c->b, &j)};
    for (int k = 0; k < 4; k++) s.inputs[k] = LOOM_FILE_NO_BUFFER;
    for (int k = 0; k < 2; k++) s.outputs[k] = LOOM_FILE_NO_BUFFER;
    loom_fb_step(c->b, &s);
    job_meta(c, &row);
    *cl_new_row(c) = row;
    if (acc_out) cl_copy_step(c, lanes, i32), cl_host_row(c, node, LOOM_HOSTOP_COPY);
  }
  lower_program_free(&p);
  return rc;
}

static int emit_nodes(struct lctx *c) {
  for (int i = 0; i < c->g->n_nodes; i++) {
    int rc = 0;
    ir_progress_report(c->prog, "tiling", i, c->g->n_nodes);
    switch (c->targets[i]) {
    case PART_ACCEL: rc = job_node(c, i); break;
    case PART_HOST: rc = host_node(c, i); break;
    case PART_KERNEL: rc = cl_kernel_node(c, i); break;
    case PART_ALIAS: rc = view_node(c, i); break;
    case PART_NONE: case PART_COUNT: break;
    }
    if (rc) return -1;
  }
  /* interface tensors no step touched (an unused input) */
  for (int t = 0; t < c->g->n_tensors; t++)
    if (c->iface[t].role && cl_desc_of(c, t) < 0) return -1;
  return 0;
}

/* ---- finishing ---- */

static int finish(struct lctx *c) {
  for (int i = 0; i < c->n_bufs; i++) {
    struct loom_file_buffer b = {.name = loom_fb_string(c->b, c->bufs[i].name), .kind = c->bufs[i].kind,
                                 .size = c->bufs[i].size, .data_offset = c->bufs[i].data_offset, .align = 64};
    loom_fb_buffer(c->b, &b);
  }
  for (int i = 0; i < c->n_ts; i++) {
    c->ts[i].rec.name = loom_fb_string(c->b, c->ts[i].name);
    loom_fb_tensor(c->b, &c->ts[i].rec);
  }
  c->r->bytes = loom_file_builder_finish(c->b, &c->r->size);
  if (!c->r->bytes) return ir_fail(c->err, c->g, -1, "out of memory writing the .loom file");
  char msg[LOOM_MSG_MAX];
  struct loom_file f;
  loom_status st = loom_file_parse(c->r->bytes, c->r->size, c->g->source, &f, msg);
  if (st != LOOM_OK) loom_assert_fail(__FILE__, __LINE__, msg); /* we wrote a file the reader refuses */
  loom_file_free(&f);
  return 0;
}

static void lctx_free(struct lctx *c) {
  for (int i = 0; i < c->n_bufs; i++) free(c->bufs[i].name);
  for (int i = 0; i < c->n_ts; i++) free(c->ts[i].name);
  free(c->bufs);
  free(c->ts);
  free(c->desc);
  free(c->iface);
  free(c->absorbed);
  free(c->plain);
  free(c->wgt_rows);
  loom_file_builder_free(c->b);
}

int compile_loom(const struct ir_graph *g, const enum part_target *targets, char *const *out_names,
                 const struct loom_hw_config *cfg, unsigned flags, const struct ir_progress *prog,
                 struct compile_result *r, struct ir_error *err) {
  struct lctx c = {.g = g, .targets = targets, .cfg = cfg, .flags = flags, .r = r, .err = err, .prog = prog};
  c.b = loom_file_builder_new(cfg->hash);
  c.desc = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof *c.desc);
  c.iface = ir_xcalloc((size_t)g->n_tensors + 1, sizeof *c.iface);
  c.absorbed = ir_xcalloc((size_t)g->n_nodes + 1, 1);
  c.plain = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof *c.plain);
  c.wgt_rows = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof *c.wgt_rows);
  for (int t = 0; t < g->n_tensors; t++) c.desc[t] = c.plain[t] = c.wgt_rows[t] = -1;
  cl_wgt_row_stores(&c);
  int rc = plan_interface(&c, out_names) || concats_in_place(&c) || emit_nodes(&c) || finish(&c);
  lctx_free(&c);
  return rc ? -1 : 0;
}
