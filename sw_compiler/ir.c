/*
 * ir.c - construction of IR graphs and the kind tables.
 *
 * This file owns the data structure invariants described in ir.h: unique
 * tensor names (a small open-addressing hash maps names to ids so import of
 * a large model stays linear), ids that stay valid until ir_graph_compact,
 * and ownership of every buffer hanging off a tensor, node or attribute.
 * Nothing here knows what an op computes; the tables only say how many
 * operands it takes and whether constant folding may evaluate it.
 */
#include "sw_compiler/ir.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void ir_errorf(struct ir_error *err, const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
}

static int vfail_at(struct ir_error *err, const char *source, const char *where, const char *fmt,
                    va_list ap) {
  char what[800];
  vsnprintf(what, sizeof what, fmt, ap);
  if (where && *where) ir_errorf(err, "%s: %s: %s", source, where, what);
  else ir_errorf(err, "%s: %s", source, what);
  return -1;
}

int ir_fail_at(struct ir_error *err, const char *source, const char *where, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail_at(err, source, where, fmt, ap);
  va_end(ap);
  return -1;
}

int ir_fail(struct ir_error *err, const struct ir_graph *g, int node, const char *fmt, ...) {
  char where[256] = "graph";
  if (node >= 0) ir_node_where(g, node, where, sizeof where);
  va_list ap;
  va_start(ap, fmt);
  vfail_at(err, g->source, where, fmt, ap);
  va_end(ap);
  return -1;
}

void *ir_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) loom_assert_fail(__FILE__, __LINE__, "out of memory");
  return p;
}

void *ir_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) loom_assert_fail(__FILE__, __LINE__, "out of memory");
  return p;
}

void *ir_xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) loom_assert_fail(__FILE__, __LINE__, "out of memory");
  return p;
}

char *ir_xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(ir_xmalloc(n), s, n);
}

/* ---- name map ---- */

static uint32_t hash_name(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static void map_insert(struct ir_graph *g, int id) {
  uint32_t mask = (uint32_t)g->name_map_cap - 1;
  uint32_t i = hash_name(g->tensors[id].name) & mask;
  while (g->name_map[i] >= 0) i = (i + 1) & mask;
  g->name_map[i] = id;
}

static void map_rebuild(struct ir_graph *g, int cap) {
  free(g->name_map);
  g->name_map_cap = cap;
  g->name_map = ir_xmalloc((size_t)cap * sizeof(int));
  for (int i = 0; i < cap; i++) g->name_map[i] = -1;
  for (int t = 0; t < g->n_tensors; t++) map_insert(g, t);
}

int ir_tensor_find(const struct ir_graph *g, const char *name) {
  if (!g->name_map_cap) return -1;
  uint32_t mask = (uint32_t)g->name_map_cap - 1;
  for (uint32_t i = hash_name(name) & mask; g->name_map[i] >= 0; i = (i + 1) & mask)
    if (!strcmp(g->tensors[g->name_map[i]].name, name)) return g->name_map[i];
  return -1;
}

int ir_producer(const struct ir_graph *g, int t) {
  for (int i = 0; t >= 0 && i < g->n_nodes; i++)
    if (!g->nodes[i].dead)
      for (int k = 0; k < g->nodes[i].n_out; k++)
        if (g->nodes[i].out[k] == t) return i;
  return -1;
}

int ir_sole_reader(const struct ir_graph *g, int t) {
  int user = -1;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == t) return -1;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].dead) continue;
    for (int k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] == t) {
        if (user >= 0 && user != i) return -1;
        user = i;
      }
  }
  return user;
}

/* ---- graphs ---- */

struct ir_graph *ir_graph_new(const char *source) {
  struct ir_graph *g = ir_xcalloc(1, sizeof *g);
  g->source = ir_xstrdup(source ? source : "<text>");
  map_rebuild(g, 64);
  return g;
}

static void quant_free(struct ir_quant *q) {
  free(q->scale);
  free(q->zero_point);
  memset(q, 0, sizeof *q);
  q->axis = -1;
}

static void attr_free(struct ir_attr *a) {
  free(a->name);
  free(a->ints);
  free(a->floats);
  free(a->s);
  for (int i = 0; a->strs && i < a->n; i++) free(a->strs[i]);
  free(a->strs);
}

static void node_free(struct ir_node *n) {
  free(n->name);
  free(n->type);
  free(n->in);
  free(n->out);
  for (int i = 0; i < n->n_attrs; i++) attr_free(&n->attrs[i]);
  free(n->attrs);
}

static void tensor_free(struct ir_tensor *t) {
  free(t->name);
  free(t->data);
  quant_free(&t->quant);
}

void ir_graph_free(struct ir_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_tensors; i++) tensor_free(&g->tensors[i]);
  for (int i = 0; i < g->n_nodes; i++) node_free(&g->nodes[i]);
  free(g->tensors);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  free(g->name_map);
  free(g->source);
  for (int i = 0; i < g->n_dim_names; i++) free(g->dim_names[i].name);
  free(g->dim_names);
  free(g);
}

/* Grows *arr (of elements of `size` bytes) to hold at least `need`. */
static void grow(void **arr, int *cap, int need, size_t size) {
  if (need <= *cap) return;
  int c = *cap ? *cap : 8;
  while (c < need) c *= 2;
  *arr = ir_xrealloc(*arr, (size_t)c * size);
  *cap = c;
}

int ir_tensor_add(struct ir_graph *g, const char *name, enum ir_dtype dt,
                  int rank, const int64_t *dims) {
  LOOM_ASSERT(rank >= -1 && rank <= IR_MAX_RANK);
  char fresh[32];
  if (!name) {
    int k = g->n_tensors;
    do snprintf(fresh, sizeof fresh, "t%d", k++);
    while (ir_tensor_find(g, fresh) >= 0);
    name = fresh;
  }
  if (ir_tensor_find(g, name) >= 0) return -1;
  int64_t d[IR_MAX_RANK]; /* dims may be another tensor's, which grow() may move */
  for (int i = 0; i < rank; i++) d[i] = dims[i];
  grow((void **)&g->tensors, &g->cap_tensors, g->n_tensors + 1, sizeof *g->tensors);
  int id = g->n_tensors++;
  struct ir_tensor *t = &g->tensors[id];
  memset(t, 0, sizeof *t);
  t->name = ir_xstrdup(name);
  t->dtype = dt;
  t->rank = rank;
  t->quant.axis = -1;
  for (int i = 0; i < rank; i++) t->dims[i] = d[i];
  if (2 * g->n_tensors > g->name_map_cap) map_rebuild(g, 2 * g->name_map_cap);
  else map_insert(g, id);
  return id;
}

int ir_const_add(struct ir_graph *g, const char *name, enum ir_dtype dt,
                 int rank, const int64_t *dims, const void *data) {
  /* The bytes are copied before the tensor is added: data, like dims, may
   * point into g->tensors (a shape constant made of a tensor's dims), which
   * adding a tensor may move. */
  struct ir_tensor shape = {.dtype = dt, .rank = rank};
  for (int i = 0; i < rank; i++) shape.dims[i] = dims[i];
  int64_t bytes = ir_tensor_bytes(&shape);
  LOOM_ASSERT(bytes >= 0);
  void *buf = ir_xcalloc(1, (size_t)bytes);
  if (data) memcpy(buf, data, (size_t)bytes);
  int id = ir_tensor_add(g, name, dt, rank, dims);
  if (id < 0) {
    free(buf);
    return -1;
  }
  g->tensors[id].data = buf;
  g->tensors[id].nbytes = (size_t)bytes;
  return id;
}

int ir_input_add(struct ir_graph *g, const char *name, enum ir_dtype dt,
                 int rank, const int64_t *dims) {
  int id = ir_tensor_add(g, name, dt, rank, dims);
  if (id < 0) return -1;
  g->tensors[id].is_input = 1;
  grow((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof(int));
  g->inputs[g->n_inputs++] = id;
  return id;
}

void ir_output_add(struct ir_graph *g, int tensor) {
  LOOM_ASSERT(tensor >= 0 && tensor < g->n_tensors);
  grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof(int));
  g->outputs[g->n_outputs++] = tensor;
}

static int *copy_ids(int n, const int *ids) {
  int *p = ir_xmalloc((size_t)(n ? n : 1) * sizeof(int));
  if (n) memcpy(p, ids, (size_t)n * sizeof(int));
  return p;
}

int ir_node_add(struct ir_graph *g, enum ir_op_kind op, const char *name,
                int n_in, const int *in, int n_out, const int *out) {
  LOOM_ASSERT((unsigned)op < IR_OP_COUNT);
  grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes);
  int id = g->n_nodes++;
  struct ir_node *n = &g->nodes[id];
  memset(n, 0, sizeof *n);
  n->op = op;
  n->name = name ? ir_xstrdup(name) : NULL;
  n->n_in = n_in;
  n->in = copy_ids(n_in, in);
  n->n_out = n_out;
  n->out = copy_ids(n_out, out);
  return id;
}

int ir_node_insert(struct ir_graph *g, int pos, enum ir_op_kind op, const char *name,
                   int n_in, const int *in, int n_out, const int *out) {
  LOOM_ASSERT(pos >= 0 && pos <= g->n_nodes);
  int id = ir_node_add(g, op, name, n_in, in, n_out, out);
  struct ir_node tmp = g->nodes[id];
  memmove(&g->nodes[pos + 1], &g->nodes[pos], (size_t)(id - pos) * sizeof tmp);
  g->nodes[pos] = tmp;
  return pos;
}

int ir_node_add_onnx(struct ir_graph *g, const char *type, int opset, const char *name,
                     int n_in, const int *in, int n_out, const int *out) {
  int id = ir_node_add(g, IR_OP_ONNX, name, n_in, in, n_out, out);
  g->nodes[id].type = ir_xstrdup(type);
  g->nodes[id].opset = opset;
  return id;
}

void ir_node_demote(struct ir_graph *g, int node, int opset) {
  struct ir_node *n = &g->nodes[node];
  if (n->op == IR_OP_ONNX) return;
  LOOM_ASSERT(n->op < IR_OP_QCONV && n->op != IR_OP_CONSTANT);
  n->opset = opset > 0 ? opset : ir_kind_opset(n);
  n->type = ir_xstrdup(ir_op_name(n->op));
  ir_attr_remove(n, "legacy_2d");
  n->op = IR_OP_ONNX;
}

const char *ir_node_op(const struct ir_node *n) {
  return n->op == IR_OP_ONNX && n->type ? n->type : ir_op_name(n->op);
}

int ir_build(struct ir_graph *g, enum ir_op_kind op, int n_in, const int *in) {
  int y = ir_tensor_add(g, NULL, IR_DT_UNDEF, -1, NULL);
  ir_node_add(g, op, NULL, n_in, in, 1, &y);
  return y;
}

/* ---- attributes ---- */

const struct ir_attr *ir_attr_find(const struct ir_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (!strcmp(n->attrs[i].name, name)) return &n->attrs[i];
  return NULL;
}

void ir_attr_remove(struct ir_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++) {
    if (strcmp(n->attrs[i].name, name)) continue;
    attr_free(&n->attrs[i]);
    memmove(&n->attrs[i], &n->attrs[i + 1], (size_t)(n->n_attrs - i - 1) * sizeof *n->attrs);
    n->n_attrs--;
    return;
  }
}

/* Returns a cleared attribute slot named `name`, replacing an old value. */
static struct ir_attr *attr_slot(struct ir_graph *g, int node, const char *name,
                                 enum ir_attr_kind kind) {
  struct ir_node *n = &g->nodes[node];
  struct ir_attr *a = (struct ir_attr *)ir_attr_find(n, name);
  if (a) {
    attr_free(a);
  } else {
    n->attrs = ir_xrealloc(n->attrs, (size_t)(n->n_attrs + 1) * sizeof *n->attrs);
    a = &n->attrs[n->n_attrs++];
  }
  memset(a, 0, sizeof *a);
  a->name = ir_xstrdup(name);
  a->kind = kind;
  a->tensor = -1;
  return a;
}

void ir_attr_set_int(struct ir_graph *g, int node, const char *name, int64_t v) {
  attr_slot(g, node, name, IR_ATTR_INT)->i = v;
}

void ir_attr_set_float(struct ir_graph *g, int node, const char *name, float v) {
  attr_slot(g, node, name, IR_ATTR_FLOAT)->f = v;
}

void ir_attr_set_ints(struct ir_graph *g, int node, const char *name, int n, const int64_t *v) {
  struct ir_attr *a = attr_slot(g, node, name, IR_ATTR_INTS);
  a->n = n;
  a->ints = ir_xmalloc((size_t)(n ? n : 1) * sizeof *v);
  if (n) memcpy(a->ints, v, (size_t)n * sizeof *v);
}

void ir_attr_set_floats(struct ir_graph *g, int node, const char *name, int n, const float *v) {
  struct ir_attr *a = attr_slot(g, node, name, IR_ATTR_FLOATS);
  a->n = n;
  a->floats = ir_xmalloc((size_t)(n ? n : 1) * sizeof *v);
  if (n) memcpy(a->floats, v, (size_t)n * sizeof *v);
}

void ir_attr_set_string(struct ir_graph *g, int node, const char *name, const char *s) {
  attr_slot(g, node, name, IR_ATTR_STRING)->s = ir_xstrdup(s);
}

void ir_attr_set_tensor(struct ir_graph *g, int node, const char *name, int tensor) {
  attr_slot(g, node, name, IR_ATTR_TENSOR)->tensor = tensor;
}

void ir_attr_set_strings(struct ir_graph *g, int node, const char *name, int n,
                         const char *const *v) {
  struct ir_attr *a = attr_slot(g, node, name, IR_ATTR_STRINGS);
  a->n = n;
  a->strs = ir_xcalloc((size_t)(n ? n : 1), sizeof *a->strs);
  for (int i = 0; i < n; i++) a->strs[i] = ir_xstrdup(v[i]);
}

void ir_attrs_copy(struct ir_graph *g, int to, const struct ir_node *from) {
  for (int i = 0; i < from->n_attrs; i++) {
    const struct ir_attr *a = &from->attrs[i];
    switch (a->kind) {
    case IR_ATTR_INT: ir_attr_set_int(g, to, a->name, a->i); break;
    case IR_ATTR_FLOAT: ir_attr_set_float(g, to, a->name, a->f); break;
    case IR_ATTR_INTS: ir_attr_set_ints(g, to, a->name, a->n, a->ints); break;
    case IR_ATTR_FLOATS: ir_attr_set_floats(g, to, a->name, a->n, a->floats); break;
    case IR_ATTR_STRING: ir_attr_set_string(g, to, a->name, a->s); break;
    case IR_ATTR_TENSOR: ir_attr_set_tensor(g, to, a->name, a->tensor); break;
    case IR_ATTR_STRINGS: ir_attr_set_strings(g, to, a->name, a->n, (const char *const *)a->strs); break;
    case IR_ATTR_COUNT: LOOM_ASSERT(0);
    }
  }
}

int64_t ir_attr_int(const struct ir_node *n, const char *name, int64_t dflt) {
  const struct ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_INT ? a->i : dflt;
}

float ir_attr_float(const struct ir_node *n, const char *name, float dflt) {
  const struct ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_FLOAT ? a->f : dflt;
}

const char *ir_attr_string(const struct ir_node *n, const char *name, const char *dflt) {
  const struct ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_STRING ? a->s : dflt;
}

int ir_attr_ints(const struct ir_node *n, const char *name, const int64_t **v) {
  const struct ir_attr *a = ir_attr_find(n, name);
  if (!a || a->kind != IR_ATTR_INTS) return -1;
  *v = a->ints;
  return a->n;
}

void ir_dim_name_add(struct ir_graph *g, int tensor, int dim, const char *name) {
  g->dim_names = ir_xrealloc(g->dim_names, (size_t)(g->n_dim_names + 1) * sizeof *g->dim_names);
  g->dim_names[g->n_dim_names++] = (struct ir_dim_name){tensor, dim, ir_xstrdup(name ? name : "")};
}

void ir_quant_set(struct ir_graph *g, int tensor, int axis, int n,
                  const float *scale, const int32_t *zero_point) {
  struct ir_quant *q = &g->tensors[tensor].quant;
  quant_free(q);
  if (n <= 0) return;
  q->n = n;
  q->axis = axis;
  q->scale = ir_xmalloc((size_t)n * sizeof *scale);
  q->zero_point = ir_xmalloc((size_t)n * sizeof *zero_point);
  memcpy(q->scale, scale, (size_t)n * sizeof *scale);
  memcpy(q->zero_point, zero_point, (size_t)n * sizeof *zero_point);
}

/* ---- sizes ---- */

int64_t ir_numel_checked(int rank, const int64_t *dims) {
  if (rank < 0 || rank > IR_MAX_RANK) return -1;
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0 || dims[i] > IR_MAX_DIM) return -1;
    if (__builtin_mul_overflow(n, dims[i], &n)) return -1;
  }
  return n > IR_MAX_TENSOR_BYTES ? -1 : n;
}

int64_t ir_tensor_numel(const struct ir_tensor *t) {
  return ir_numel_checked(t->rank, t->dims);
}

int64_t ir_tensor_bytes(const struct ir_tensor *t) {
  int64_t n = ir_tensor_numel(t), bytes;
  size_t es = ir_dtype_size(t->dtype);
  if (n < 0 || es == 0 || __builtin_mul_overflow(n, (int64_t)es, &bytes)) return -1;
  return bytes > IR_MAX_TENSOR_BYTES ? -1 : bytes;
}

int ir_shape_known(const struct ir_tensor *t) {
  return t->dtype != IR_DT_UNDEF && ir_tensor_numel(t) >= 0;
}

void ir_tensor_set_data(struct ir_graph *g, int t, const void *data, size_t nbytes) {
  struct ir_tensor *x = &g->tensors[t];
  free(x->data);
  x->data = ir_xmalloc(nbytes);
  if (nbytes) memcpy(x->data, data, nbytes);
  x->nbytes = nbytes;
}

void ir_fill_seq(enum ir_dtype dt, int64_t n, void *buf) {
  for (int64_t i = 0; i < n; i++) {
    if (ir_dtype_is_float(dt)) ir_store_f64(dt, buf, i, (double)i);
    else ir_store_i64(dt, buf, i, dt == IR_DT_BOOL ? (i & 1) : i); /* integers wrap */
  }
}

/* ---- use-def helpers ---- */

void ir_replace_uses(struct ir_graph *g, int from, int to) {
  for (int i = 0; i < g->n_nodes; i++) {
    struct ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] == from) n->in[k] = to;
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == from) g->outputs[i] = to;
}

void ir_producers(const struct ir_graph *g, int *producer) {
  for (int t = 0; t < g->n_tensors; t++) producer[t] = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] >= 0 && n->out[k] < g->n_tensors) producer[n->out[k]] = i;
  }
}

void ir_use_counts(const struct ir_graph *g, int *uses) {
  for (int t = 0; t < g->n_tensors; t++) uses[t] = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] >= 0) uses[n->in[k]]++;
    for (int k = 0; k < n->n_attrs; k++)
      if (n->attrs[k].kind == IR_ATTR_TENSOR && n->attrs[k].tensor >= 0) uses[n->attrs[k].tensor]++;
  }
  for (int i = 0; i < g->n_outputs; i++) uses[g->outputs[i]]++;
}

/* Marks the tensors a live node or the graph interface refers to. */
static void mark_live_tensors(const struct ir_graph *g, char *live) {
  int *uses = ir_xmalloc((size_t)g->n_tensors * sizeof(int) + 1);
  ir_use_counts(g, uses);
  for (int t = 0; t < g->n_tensors; t++) live[t] = uses[t] > 0 || g->tensors[t].is_input;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead)
      for (int k = 0; k < g->nodes[i].n_out; k++) live[g->nodes[i].out[k]] = 1;
  free(uses);
}

static void remap_ids(int *ids, int n, const int *newid) {
  for (int i = 0; i < n; i++)
    if (ids[i] >= 0) ids[i] = newid[ids[i]];
}

static void compact_nodes(struct ir_graph *g) {
  int k = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].dead) node_free(&g->nodes[i]);
    else g->nodes[k++] = g->nodes[i];
  }
  g->n_nodes = k;
}

void ir_graph_compact(struct ir_graph *g) {
  compact_nodes(g);
  char *live = ir_xmalloc((size_t)g->n_tensors + 1);
  int *newid = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof(int));
  mark_live_tensors(g, live);
  int k = 0;
  for (int t = 0; t < g->n_tensors; t++) {
    newid[t] = live[t] ? k : -1;
    if (live[t]) g->tensors[k++] = g->tensors[t];
    else tensor_free(&g->tensors[t]);
  }
  g->n_tensors = k;
  for (int i = 0; i < g->n_nodes; i++) {
    struct ir_node *n = &g->nodes[i];
    remap_ids(n->in, n->n_in, newid);
    remap_ids(n->out, n->n_out, newid);
    for (int a = 0; a < n->n_attrs; a++)
      if (n->attrs[a].kind == IR_ATTR_TENSOR) remap_ids(&n->attrs[a].tensor, 1, newid);
  }
  remap_ids(g->inputs, g->n_inputs, newid);
  remap_ids(g->outputs, g->n_outputs, newid);
  for (int i = 0; i < g->n_dim_names; i++) remap_ids(&g->dim_names[i].tensor, 1, newid);
  map_rebuild(g, g->name_map_cap);
  free(live);
  free(newid);
}

const char *ir_node_where(const struct ir_graph *g, int node, char *buf, size_t len) {
  const struct ir_node *n = &g->nodes[node];
  if (n->name && n->name[0]) {
    snprintf(buf, len, "node %d '%s' (%s)", node, n->name, ir_node_op(n));
  } else {
    const char *res = n->n_out > 0 && n->out[0] >= 0 ? g->tensors[n->out[0]].name : "";
    snprintf(buf, len, "node %d '%%%s' (%s)", node, res, ir_node_op(n));
  }
  return buf;
}
