/*
 * hostgen_graph.c - `loom compile --target cpu`: a whole float graph as one
 * native function, packaged as a .loom that runs on any device without an
 * accelerator job.
 *
 *   loom_graph(in, out):  in[0..k) the graph inputs, in[k] a scratch area,
 *                         out[0..m) the graph outputs
 *
 * Memory: every tensor a kernel writes lives in the caller's output buffer
 * (a graph output) or at a fixed offset of the scratch area; views
 * (Reshape, Flatten, Identity, Squeeze, Unsqueeze) share their operand's
 * bytes and cost nothing; constants are rodata in the image.  Scratch
 * offsets come from a first-fit placement over live ranges (a tensor is
 * live from the node that writes it to the last node that reads it, or to
 * the end when an output is copied from it), so tensors whose lives do not
 * overlap share bytes, and a tensor never shares bytes with another live
 * one, which is what the kernels' noalias arguments promise.  The padded
 * input copy of a convolution or pool is a tensor live for its node only.
 *
 * The .loom has one f32 plain tensor per graph input and output, a u8
 * scratch tensor, and one HOST step of kind NATIVE: there is no portable
 * form of a whole graph, so a runtime on another machine refuses the file
 * (hostcode.c) instead of computing something else.
 */
#include "sw_compiler/llvm/hostgen_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/hostcode_format.h"
#include "driver/core/hostops.h"

enum store_kind {
  STORE_NONE = 0, /* not computed at run time (unused) */
  STORE_INPUT,    /* in[index] */
  STORE_OUTPUT,   /* out[index] */
  STORE_SCRATCH,  /* in[n_inputs] + offset */
  STORE_CONST,    /* rodata */
  STORE_COUNT
};

struct alloc {
  int64_t size, offset;
  int first, last; /* live nodes, inclusive */
};

struct gctx {
  const struct ir_graph *g;
  struct ir_error *err;
  int *root;               /* per tensor: the tensor whose bytes it is */
  enum store_kind *kind;   /* per root */
  int *index;              /* per root: input / output slot, or alloc index */
  struct alloc *allocs;    /* scratch: roots, then one per padded node */
  int n_allocs;
  int *pad_alloc;          /* per node, -1: none */
  int64_t scratch_bytes;
  LLVMValueRef *ptrs;      /* per root, in the entry function */
};

static int is_view(enum ir_op_kind op) {
  return op == IR_OP_FLATTEN || op == IR_OP_RESHAPE || op == IR_OP_IDENTITY || op == IR_OP_SQUEEZE ||
         op == IR_OP_UNSQUEEZE;
}

int hostgen_graph_supports(enum ir_op_kind op) {
  switch (op) {
  case IR_OP_CONV: case IR_OP_GEMM: case IR_OP_MATMUL: case IR_OP_RELU: case IR_OP_CLIP: case IR_OP_ADD:
  case IR_OP_MUL: case IR_OP_MAXPOOL: case IR_OP_AVERAGEPOOL: case IR_OP_GLOBALAVERAGEPOOL:
  case IR_OP_BATCHNORM: case IR_OP_SOFTMAX: case IR_OP_TRANSPOSE: case IR_OP_CONCAT:
    return 1;
  default: return is_view(op);
  }
}

/* ---- checks ---- */

static int check_node(struct gctx *c, int i) {
  const struct ir_node *n = &c->g->nodes[i];
  char where[256];
  for (int k = 0; k < n->n_in + n->n_out; k++) {
    int t = k < n->n_in ? n->in[k] : n->out[k - n->n_in];
    if (t >= 0 && !ir_shape_known(&c->g->tensors[t]))
      return ir_fail_at(c->err, c->g->source, "--target cpu", "%s: %%%s has no known shape", ir_node_where(c->g, i, where, sizeof where), c->g->tensors[t].name);
  }
  if (is_view(n->op)) {
    if (ir_tensor_bytes(&c->g->tensors[n->in[0]]) != ir_tensor_bytes(&c->g->tensors[n->out[0]]))
      return ir_fail_at(c->err, c->g->source, "--target cpu", "%s: result and operand sizes differ", ir_node_where(c->g, i, where, sizeof where));
    return 0;
  }
  return hg_nn_check(c->g, i, c->err);
}

static int check_interface(struct gctx *c) {
  const struct ir_graph *g = c->g;
  if (g->n_inputs > 3 || g->n_outputs < 1 || g->n_outputs > 2)
    return ir_fail_at(c->err, c->g->source, "--target cpu", "the graph has %d inputs and %d outputs; a native step takes up to 3 and 1 to 2",
                g->n_inputs, g->n_outputs);
  for (int k = 0; k < g->n_inputs + g->n_outputs; k++) {
    const struct ir_tensor *t = &g->tensors[k < g->n_inputs ? g->inputs[k] : g->outputs[k - g->n_inputs]];
    if (t->dtype != IR_DT_F32 || !ir_shape_known(t) || t->rank > LOOM_MAX_RANK)
      return ir_fail_at(c->err, c->g->source, "--target cpu", "graph %s '%s' must be float32 with a known shape of rank <= %d",
                  k < g->n_inputs ? "input" : "output", t->name, LOOM_MAX_RANK);
  }
  for (int i = 0; i < g->n_inputs; i++)
    for (int k = 0; k < g->n_outputs; k++)
      if (!strcmp(g->tensors[g->inputs[i]].name, g->tensors[g->outputs[k]].name))
        return ir_fail_at(c->err, c->g->source, "--target cpu", "'%s' is both an input and an output", g->tensors[g->inputs[i]].name);
  return 0;
}

/* ---- storage ---- */

static void find_roots(struct gctx *c) {
  const struct ir_graph *g = c->g;
  for (int t = 0; t < g->n_tensors; t++) c->root[t] = t;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && is_view(g->nodes[i].op)) c->root[g->nodes[i].out[0]] = c->root[g->nodes[i].in[0]];
}

static int new_alloc(struct gctx *c, int64_t size, int first, int last) {
  c->allocs[c->n_allocs] = (struct alloc){(size + 63) & ~(int64_t)63, -1, first, last};
  return c->n_allocs++;
}

/* Where each root lives; scratch roots get an alloc with their live range. */
static void assign(struct gctx *c) {
  const struct ir_graph *g = c->g;
  for (int t = 0; t < g->n_tensors; t++)
    if (g->tensors[t].data) c->kind[t] = STORE_CONST;
  for (int k = 0; k < g->n_inputs; k++) c->kind[g->inputs[k]] = STORE_INPUT, c->index[g->inputs[k]] = k;
  for (int i = 0; i < g->n_nodes; i++) c->pad_alloc[i] = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (n->dead || is_view(n->op)) continue;
    int t = n->out[0];
    c->kind[t] = STORE_SCRATCH;
    for (int k = 0; k < g->n_outputs; k++)
      if (g->outputs[k] == t) c->kind[t] = STORE_OUTPUT, c->index[t] = k;
    if (c->kind[t] == STORE_SCRATCH) c->index[t] = new_alloc(c, ir_tensor_bytes(&g->tensors[t]), i, i);
    int64_t pad = hg_nn_pad_bytes(g, i);
    c->pad_alloc[i] = pad ? new_alloc(c, pad, i, i) : -1;
  }
}

static void extend(struct gctx *c, int t, int node) {
  int r = c->root[t];
  if (c->kind[r] == STORE_SCRATCH && c->allocs[c->index[r]].last < node) c->allocs[c->index[r]].last = node;
}

static void live_ranges(struct gctx *c) {
  const struct ir_graph *g = c->g;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_in && !g->nodes[i].dead; k++)
      if (g->nodes[i].in[k] >= 0) extend(c, g->nodes[i].in[k], i);
  for (int k = 0; k < g->n_outputs; k++) extend(c, g->outputs[k], g->n_nodes);
}

static int cmp_offset(const void *a, const void *b) {
  const struct alloc *x = *(const struct alloc *const *)a, *y = *(const struct alloc *const *)b;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

/* First fit among the placed allocations whose lives overlap a's. */
static void place(struct gctx *c, struct alloc *a, const struct alloc **live) {
  int n = 0;
  for (int j = 0; j < c->n_allocs; j++) {
    const struct alloc *b = &c->allocs[j];
    if (b != a && b->offset >= 0 && b->first <= a->last && a->first <= b->last) live[n++] = b;
  }
  qsort(live, (size_t)n, sizeof *live, cmp_offset);
  int64_t at = 0;
  for (int j = 0; j < n && live[j]->offset < at + a->size; j++)
    if (live[j]->offset + live[j]->size > at) at = live[j]->offset + live[j]->size;
  a->offset = at;
  if (at + a->size > c->scratch_bytes) c->scratch_bytes = at + a->size;
}

static void plan_scratch(struct gctx *c) {
  const struct alloc **live = ir_xcalloc((size_t)c->n_allocs + 1, sizeof *live);
  for (int j = 0; j < c->n_allocs; j++) place(c, &c->allocs[j], live);
  free(live);
}

/* ---- the entry function ---- */

static LLVMValueRef ptr_of(struct hg *h, struct gctx *c, int t, LLVMValueRef scratch) {
  int r = c->root[t];
  if (c->ptrs[r]) return c->ptrs[r];
  const struct ir_tensor *x = &c->g->tensors[r];
  switch (c->kind[r]) {
  case STORE_INPUT: c->ptrs[r] = hg_entry_ptr(h, 0, c->index[r]); break;
  case STORE_OUTPUT: c->ptrs[r] = hg_entry_ptr(h, 1, c->index[r]); break;
  case STORE_SCRATCH: c->ptrs[r] = hg_gep(h, h->i8, scratch, hg_cx(h, c->allocs[c->index[r]].offset)); break;
  case STORE_CONST: c->ptrs[r] = hg_const_bytes(h, x->data, x->nbytes, "const"); break;
  case STORE_NONE: case STORE_COUNT: LOOM_ASSERT(0);
  }
  return c->ptrs[r];
}

static int emit_node(struct hg *h, struct gctx *c, int i, LLVMValueRef scratch) {
  const struct ir_node *n = &c->g->nodes[i];
  struct hg_node_io io = {.n_in = n->n_in};
  for (int k = 0; k < n->n_in; k++) io.in[k] = n->in[k] >= 0 ? ptr_of(h, c, n->in[k], scratch) : NULL;
  io.out = ptr_of(h, c, n->out[0], scratch);
  LLVMValueRef pad = c->pad_alloc[i] >= 0 ? hg_gep(h, h->i8, scratch, hg_cx(h, c->allocs[c->pad_alloc[i]].offset)) : NULL;
  return hg_nn_build(h, c->g, i, &io, pad, c->err);
}

/* An output that is not computed in place (a view, or a tensor that is
 * another output too): copied at the end, 4 bytes at a time. */
static void copy_output(struct hg *h, struct gctx *c, int k, LLVMValueRef scratch) {
  int t = c->g->outputs[k], r = c->root[t];
  if (c->kind[r] == STORE_OUTPUT && c->index[r] == k && r == t) return;
  LLVMValueRef from = ptr_of(h, c, t, scratch), to = hg_entry_ptr(h, 1, k);
  struct hg_loop l;
  LLVMValueRef i = hg_for_begin(h, &l, ir_tensor_numel(&c->g->tensors[t]));
  hg_store(h, hg_load(h, h->i32, from, i), to, i);
  hg_for_end(h, &l);
}

static int build_entry(struct hg *h, struct gctx *c) {
  hg_entry_begin(h, "loom_graph");
  LLVMValueRef scratch = hg_entry_ptr(h, 0, c->g->n_inputs);
  for (int i = 0; i < c->g->n_nodes; i++) {
    const struct ir_node *n = &c->g->nodes[i];
    if (!n->dead && !is_view(n->op) && emit_node(h, c, i, scratch)) return -1;
  }
  for (int k = 0; k < c->g->n_outputs; k++) copy_output(h, c, k, scratch);
  hg_entry_end(h);
  return 0;
}

/* ---- the .loom ---- */

static uint32_t add_tensor(struct loom_file_builder *b, const char *name, uint32_t role, uint32_t dtype,
                           int rank, const int64_t *dims) {
  struct loom_file_tensor t = {.name = loom_fb_string(b, name), .role = role, .dtype = dtype, .user_dtype = dtype,
                               .rank = (uint32_t)rank};
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  t.bytes = loom_file_tensor_bytes(&t);
  struct loom_file_buffer buf = {.name = t.name, .kind = LOOM_BUFKIND_WORK, .size = t.bytes, .align = 64};
  t.buffer = loom_fb_buffer(b, &buf);
  return loom_fb_tensor(b, &t);
}

/* Tensors, buffers and the NATIVE step, without HOSTCODE yet. */
static struct loom_file_builder *layout_file(const struct gctx *c, const struct loom_hw_config *cfg) {
  const struct ir_graph *g = c->g;
  struct loom_file_builder *b = loom_file_builder_new(cfg->hash);
  if (!b) return NULL;
  struct loom_file_step s = {.kind = LOOM_STEP_HOST, .index = LOOM_HOSTOP_NATIVE};
  for (int k = 0; k < 4; k++) s.inputs[k] = LOOM_FILE_NO_BUFFER;
  for (int k = 0; k < 2; k++) s.outputs[k] = LOOM_FILE_NO_BUFFER;
  for (int k = 0; k < g->n_inputs; k++) {
    const struct ir_tensor *t = &g->tensors[g->inputs[k]];
    s.inputs[k] = add_tensor(b, t->name, LOOM_ROLE_INPUT, LOOM_DT_F32, t->rank, t->dims);
  }
  int64_t scratch = c->scratch_bytes ? c->scratch_bytes : 1;
  s.inputs[g->n_inputs] = add_tensor(b, "loom.scratch", LOOM_ROLE_INTERNAL, LOOM_DT_U8, 1, &scratch);
  for (int k = 0; k < g->n_outputs; k++) {
    const struct ir_tensor *t = &g->tensors[g->outputs[k]];
    s.outputs[k] = add_tensor(b, t->name, LOOM_ROLE_OUTPUT, LOOM_DT_F32, t->rank, t->dims);
  }
  loom_fb_step(b, &s);
  return b;
}

/* Finishes the layout, computes the step's signature on the parsed file
 * (as the runtime will), and adds the code. */
static int package(const struct gctx *c, const struct loom_hw_config *cfg, const struct hg_target *t,
                   const uint8_t *image, size_t size, uint8_t **out, size_t *out_size) {
  struct loom_file_builder *b = layout_file(c, cfg);
  uint8_t *plain = NULL;
  size_t n = 0;
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (!b || hg_finish_file(b, c->g->source, &plain, &n, c->err)) return loom_file_builder_free(b), -1;
  loom_file_builder_free(b);
  if (loom_file_parse(plain, n, c->g->source, &f, msg)) loom_assert_fail(__FILE__, __LINE__, msg);
  free(plain);
  struct loom_file_hostcode_entry e = {.step = 0, .signature = loom_hostcode_signature(&f, 0)};
  char symbol[1][32] = {"loom_graph"};
  b = loom_file_builder_from(&f);
  int rc = b ? 0 : ir_fail_at(((struct gctx *)c)->err, ((struct gctx *)c)->g->source, "--target cpu", "out of memory");
  if (!rc) hg_attach(b, t, &e, symbol, 1, image, size);
  if (!rc) rc = hg_finish_file(b, c->g->source, out, out_size, c->err);
  loom_file_builder_free(b);
  loom_file_free(&f);
  return rc;
}

static int plan(struct gctx *c) {
  const struct ir_graph *g = c->g;
  if (check_interface(c)) return -1;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && check_node(c, i)) return -1;
  find_roots(c);
  assign(c);
  live_ranges(c);
  plan_scratch(c);
  return 0;
}

static int generate(struct gctx *c, const struct hostgen_options *o, const struct loom_hw_config *cfg,
                    uint8_t **out, size_t *out_size, struct hostgen_summary *sum) {
  struct hg_target t;
  struct hg h;
  uint8_t *image = NULL;
  size_t size = 0;
  if (hg_target_open(o, &t, c->err)) return -1;
  hg_init(&h, &t, c->g->source);
  int rc = build_entry(&h, c);
  if (!rc) rc = hg_image(&h, &t, o, &image, &size, c->err);
  if (!rc) rc = package(c, cfg, &t, image, size, out, out_size);
  if (sum) {
    memset(sum, 0, sizeof *sum);
    snprintf(sum->triple, sizeof sum->triple, "%s", t.triple);
    sum->native_steps = 1, sum->image_bytes = size;
  }
  free(image);
  hg_dispose(&h);
  hg_target_close(&t);
  return rc;
}

int hostgen_compile_graph(const struct ir_graph *g, const struct hostgen_options *o,
                          const struct loom_hw_config *cfg, uint8_t **out, size_t *out_size,
                          struct hostgen_summary *sum, struct ir_error *err) {
  struct gctx c = {.g = g, .err = err};
  size_t nt = (size_t)g->n_tensors + 1, nn = (size_t)g->n_nodes + 1;
  *out = NULL;
  c.root = ir_xcalloc(nt, sizeof *c.root);
  c.kind = ir_xcalloc(nt, sizeof *c.kind);
  c.index = ir_xcalloc(nt, sizeof *c.index);
  c.ptrs = ir_xcalloc(nt, sizeof *c.ptrs);
  c.allocs = ir_xcalloc(nt + nn, sizeof *c.allocs);
  c.pad_alloc = ir_xcalloc(nn, sizeof *c.pad_alloc);
  int rc = plan(&c) || generate(&c, o, cfg, out, out_size, sum) ? -1 : 0;
  free(c.root), free(c.kind), free(c.index), free(c.ptrs), free(c.allocs), free(c.pad_alloc);
  return rc;
}

int hostgen_graph_ok(const struct ir_graph *g) {
  struct ir_error err;
  struct gctx c = {.g = g, .err = &err};
  if (check_interface(&c)) return 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && check_node(&c, i)) return 0;
  return 1;
}

int hostgen_compile_onnx(const char *path, const struct hostgen_options *o, const struct loom_hw_config *cfg,
                         uint8_t **out, size_t *out_size, struct hostgen_summary *sum, struct ir_error *err) {
  *out = NULL;
  struct ir_graph *g = onnx_import_file(path, err);
  int rc = !g || ir_run_default_passes(g, err) ||
           hostgen_compile_graph(g, o, cfg ? cfg : loom_hw_config_by_name("default"), out, out_size, sum, err);
  ir_graph_free(g);
  return rc ? -1 : 0;
}
