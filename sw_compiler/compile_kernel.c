/*
 * compile_kernel.c - a node that runs on the portable host kernels, as a
 * KERNEL step of the .loom file (format 1.3).
 *
 * The step is the ONNX op of the node: its type and the opset whose
 * semantics apply (ir_kind_opset: a generic node's own, or the form a
 * typed node has), its operands and results as tensor descriptors, and its
 * ONNX attributes (Loom's own markers left out).  Kernels read and write
 * plain C-order tensors: an operand the accelerator left channel-blocked is
 * first copied into a plain descriptor of its own (a COPY step, once per
 * tensor), and a result an accelerator job reads blocked is written plain
 * and copied into its blocked form right after.  Constant operands (a
 * Resize's scales, the weights of a float convolution on the host) live in
 * CONST buffers.  A node whose results' sizes depend on the data is flagged
 * dynamic: its descriptors hold the capacity and the runtime tracks the
 * real dims.
 */
#include "sw_compiler/compile_int.h"

#include <stdlib.h>
#include <string.h>

#include "driver/core/hostops.h"
#include "driver/core/kernel.h"

/* A growable list of uint32 and attribute records, put into DATA at the end. */
struct kbuild {
  uint32_t *io;
  int n_io;
  struct loom_file_kattr *attrs;
  int n_attrs;
};

/* A plain descriptor holding IR tensor t's values: its own when plain,
 * else a plain copy made once by a COPY step. */
static int plain_operand(struct lctx *c, int t) {
  int d = cl_desc_of(c, t);
  if (d < 0 || !c->ts[d].rec.layout) return d;
  if (c->plain[t] >= 0) return c->plain[t];
  int buf = cl_new_buffer(c, c->ts[d].name, LOOM_BUFKIND_WORK, 0, 0);
  int p = cl_view_desc(c, d, t, 1, buf, 0, ".plain");
  if (p < 0 || cl_copy_step(c, d, p)) return -1;
  return c->plain[t] = p;
}

/* Where the kernel writes result t: its descriptor when plain, else a plain
 * scratch descriptor (*pack gets the blocked one to copy into, else -1). */
static int plain_result(struct lctx *c, int t, int *pack) {
  int d = cl_desc_of(c, t);
  *pack = -1;
  if (d < 0 || !c->ts[d].rec.layout) return d;
  int buf = cl_new_buffer(c, c->ts[d].name, LOOM_BUFKIND_WORK, 0, 0);
  *pack = d;
  return c->plain[t] = cl_view_desc(c, d, t, 1, buf, 0, ".plain");
}

static uint64_t put_data(struct lctx *c, const void *p, uint64_t bytes, uint32_t align) {
  return loom_fb_data(c->b, p, bytes ? bytes : 1, align);
}

/* Attribute a of the node as a KATTRS record; -1 when a tensor attribute
 * cannot be described. */
static int add_attr(struct lctx *c, const struct ir_attr *a, struct loom_file_kattr *r) {
  memset(r, 0, sizeof *r);
  r->name = loom_fb_string(c->b, a->name);
  r->count = 1;
  switch (a->kind) {
  case IR_ATTR_INT: r->kind = LOOM_KATTR_INT, r->value = (uint64_t)a->i; break;
  case IR_ATTR_FLOAT: {
    uint32_t bits;
    memcpy(&bits, &a->f, sizeof bits);
    r->kind = LOOM_KATTR_FLOAT, r->value = bits;
    break;
  }
  case IR_ATTR_STRING: r->kind = LOOM_KATTR_STRING, r->value = a->s[0] ? loom_fb_string(c->b, a->s) : 0; break;
  case IR_ATTR_INTS:
    r->kind = LOOM_KATTR_INTS, r->count = (uint64_t)a->n;
    r->value = put_data(c, a->ints, 8 * (uint64_t)a->n, 8);
    break;
  case IR_ATTR_FLOATS:
    r->kind = LOOM_KATTR_FLOATS, r->count = (uint64_t)a->n;
    r->value = put_data(c, a->floats, 4 * (uint64_t)a->n, 8);
    break;
  case IR_ATTR_STRINGS: {
    uint32_t *off = ir_xcalloc((size_t)a->n + 1, sizeof *off);
    for (int i = 0; i < a->n; i++) off[i] = a->strs[i][0] ? loom_fb_string(c->b, a->strs[i]) : 0;
    r->kind = LOOM_KATTR_STRINGS, r->count = (uint64_t)a->n;
    r->value = put_data(c, off, 4 * (uint64_t)a->n, 8);
    free(off);
    break;
  }
  case IR_ATTR_TENSOR: {
    int d = cl_desc_of(c, a->tensor);
    if (d < 0) return -1;
    r->kind = LOOM_KATTR_TENSOR, r->value = (uint64_t)d;
    break;
  }
  case IR_ATTR_COUNT: LOOM_ASSERT(0);
  }
  return 0;
}

static int dynamic(const struct lctx *c, const struct ir_node *n) {
  const struct loom_kernel *k = loom_kernel_find(ir_node_op(n));
  if (k && (k->flags & LOOM_KERNEL_DYNAMIC)) return 1;
  for (int j = 0; j < n->n_out; j++)
    if (c->g->tensors[n->out[j]].dyn) return 1;
  return 0;
}

static void kernel_row(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  struct compile_layer *row = cl_new_row(c);
  snprintf(row->name, sizeof row->name, "%s", n->name ? n->name : c->g->tensors[n->out[0]].name);
  snprintf(row->op, sizeof row->op, "host %s", ir_node_op(n));
  compile_shape_text(&c->g->tensors[n->out[0]], row->shape, sizeof row->shape);
}

int cl_kernel_node(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  int n_io = n->n_in + n->n_out, rc = -1;
  uint32_t *io = ir_xcalloc((size_t)n_io + 1, sizeof *io);
  int *pack = ir_xmalloc(((size_t)n->n_out + 1) * sizeof *pack);
  struct loom_file_kattr *attrs = ir_xcalloc((size_t)n->n_attrs + 1, sizeof *attrs);
  for (int k = 0; k < n->n_in; k++) {
    int d = n->in[k] < 0 ? -2 : plain_operand(c, n->in[k]);
    if (d == -1) goto done;
    io[k] = d < 0 ? LOOM_FILE_NO_BUFFER : (uint32_t)d;
  }
  for (int k = 0; k < n->n_out; k++) {
    int d = plain_result(c, n->out[k], &pack[k]);
    if (d < 0) goto done;
    io[n->n_in + k] = (uint32_t)d;
  }
  int m = 0;
  for (int i = 0; i < n->n_attrs; i++)
    if (ir_attr_is_onnx(n, &n->attrs[i]) && add_attr(c, &n->attrs[i], &attrs[m++])) goto done;
  struct loom_file_kernel kr = {.op = loom_fb_string(c->b, ir_node_op(n)), .opset = (uint32_t)ir_kind_opset(n),
                                .n_in = (uint32_t)n->n_in, .n_out = (uint32_t)n->n_out, .n_attrs = (uint32_t)m,
                                .flags = dynamic(c, n) ? LOOM_FILE_KERNEL_DYNAMIC : 0};
  kr.io_offset = put_data(c, io, 4 * (uint64_t)n_io, 8);
  kr.attr_offset = put_data(c, attrs, sizeof *attrs * (uint64_t)m, 8);
  struct loom_file_step s = {.kind = LOOM_STEP_KERNEL, .index = loom_fb_kernel(c->b, &kr)};
  for (int k = 0; k < 4; k++) s.inputs[k] = LOOM_FILE_NO_BUFFER;
  for (int k = 0; k < 2; k++) s.outputs[k] = LOOM_FILE_NO_BUFFER;
  loom_fb_step(c->b, &s);
  kernel_row(c, node);
  rc = 0;
  for (int k = 0; k < n->n_out && !rc; k++)
    if (pack[k] >= 0) rc = cl_copy_step(c, (int)io[n->n_in + k], pack[k]);
done:
  free(io);
  free(pack);
  free(attrs);
  return rc;
}
