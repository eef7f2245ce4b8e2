/*
 * onnx_import.c - ONNX model (protobuf) to IR.
 *
 * The protobuf decoding is protoc-c's, generated at build time from the
 * onnx.proto Debian ships (see module.mk); this file only walks the decoded
 * ModelProto.  It trusts nothing in it: the model may be truncated,
 * hostile or fuzzed, so every count, rank, dim and byte size is checked
 * (with overflow checks) before it is used, and any surprise becomes a
 * message "model.onnx: node 12 'Conv_7' (Conv): what is wrong".
 *
 * What the importer does, in order:
 *   - checks the default-domain opset (ONNX_MIN_OPSET..ONNX_MAX_OPSET);
 *   - initializers become constants (raw_data little-endian, or the typed
 *     fields), graph inputs that are not initializers become IR inputs;
 *   - nodes become IR nodes one to one, except Constant nodes, which
 *     become constants directly (so Unsqueeze/Squeeze axes and Clip bounds
 *     fed by them are known at import);
 *   - opset differences are normalized so the IR has one form per op:
 *     Unsqueeze/Squeeze axes are always an attribute, Clip bounds always
 *     operands, Softmax before opset 13 is marked legacy_2d;
 *   - value_info and graph output types are recorded on their tensors,
 *     and shape inference later checks them.
 * No pass runs here: callers run ir_run_default_passes.
 */
#include "sw_compiler/compiler.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"

struct imp {
  const char *src;
  struct ir_graph *g;
  struct ir_error *err;
  int64_t opset;
  int node;                     /* ONNX node index, -1 outside nodes */
  const Onnx__NodeProto *np;    /* node being imported */
  char where[256];              /* "node 3 'conv1' (Conv)" for messages, "" outside nodes */
};

#define MAX_ATTR_LIST 4096

static const char *S(const char *s) { return s ? s : ""; }

/* ---- types ---- */

static int map_dtype(int32_t onnx_type) {
  switch (onnx_type) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return IR_DT_F32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return IR_DT_I8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return IR_DT_U8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return IR_DT_I32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return IR_DT_I64;
  default: return -1;
  }
}

static int check_dims(struct imp *im, const char *what, size_t n, const int64_t *dims) {
  if (n > IR_MAX_RANK) return ir_fail_at(im->err, im->src, im->where, "%s has rank %zu, above the limit of %d", what, n, IR_MAX_RANK);
  for (size_t i = 0; i < n; i++)
    if (dims[i] < 0 || dims[i] > IR_MAX_DIM)
      return ir_fail_at(im->err, im->src, im->where, "%s has dim %zu of %lld, outside [0, %lld]", what, i, (long long)dims[i], (long long)IR_MAX_DIM);
  if (ir_numel_checked((int)n, dims) < 0) return ir_fail_at(im->err, im->src, im->where, "%s has too many elements", what);
  return 0;
}

/* ---- tensors ---- */

static void swap_to_host(void *buf, size_t n, size_t es) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  unsigned char *p = buf;
  for (size_t i = 0; i < n; i++, p += es)
    for (size_t k = 0; k < es / 2; k++) {
      unsigned char t = p[k];
      p[k] = p[es - 1 - k];
      p[es - 1 - k] = t;
    }
#else
  (void)buf, (void)n, (void)es;
#endif
}

/* Copies the typed-field data of t into buf (numel elements of dt). */
static int typed_data(struct imp *im, const char *what, const Onnx__TensorProto *t, enum ir_dtype dt,
                      int64_t n, void *buf) {
  size_t have = dt == IR_DT_F32 ? t->n_float_data : dt == IR_DT_I64 ? t->n_int64_data : t->n_int32_data;
  if ((int64_t)have != n) return ir_fail_at(im->err, im->src, im->where, "%s holds %zu values, its shape needs %lld", what, have, (long long)n);
  for (int64_t i = 0; i < n; i++) {
    switch (dt) {
    case IR_DT_F32: ((float *)buf)[i] = t->float_data[i]; break;
    case IR_DT_I64: ((int64_t *)buf)[i] = t->int64_data[i]; break;
    case IR_DT_I32: ((int32_t *)buf)[i] = t->int32_data[i]; break;
    case IR_DT_I8: ((int8_t *)buf)[i] = (int8_t)t->int32_data[i]; break;
    case IR_DT_U8: ((uint8_t *)buf)[i] = (uint8_t)t->int32_data[i]; break;
    default: LOOM_ASSERT(0);
    }
  }
  return 0;
}

/* Adds TensorProto t as constant `name`; returns its id or -1. */
static int add_tensor(struct imp *im, const Onnx__TensorProto *t, const char *name) {
  char what[300];
  snprintf(what, sizeof what, "tensor '%s'", name);
  int dt = map_dtype(t->data_type);
  if (dt < 0) return ir_fail_at(im->err, im->src, im->where, "%s: data type %d is not supported", what, (int)t->data_type);
  if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return ir_fail_at(im->err, im->src, im->where, "%s: external data is not supported", what);
  if (t->segment) return ir_fail_at(im->err, im->src, im->where, "%s: segmented tensors are not supported", what);
  if (check_dims(im, what, t->n_dims, t->dims)) return -1;
  if (ir_tensor_find(im->g, name) >= 0) return ir_fail_at(im->err, im->src, im->where, "%s is defined twice", what);
  /* Sizes are checked against the data the file holds before ir_const_add
   * allocates: a tiny model must not make the importer allocate gigabytes
   * (or trip ir_const_add's assert with a shape past the byte cap). */
  int64_t n = ir_numel_checked((int)t->n_dims, t->dims), bytes;
  if (n < 0 || __builtin_mul_overflow(n, (int64_t)ir_dtype_size(dt), &bytes) ||
      bytes > IR_MAX_TENSOR_BYTES)
    return ir_fail_at(im->err, im->src, im->where, "%s is larger than the limit", what);
  if (t->has_raw_data && (uint64_t)t->raw_data.len != (uint64_t)bytes)
    return ir_fail_at(im->err, im->src, im->where, "%s: raw_data has %zu bytes, its shape needs %zu", what, t->raw_data.len, (size_t)bytes);
  size_t have = dt == IR_DT_F32 ? t->n_float_data : dt == IR_DT_I64 ? t->n_int64_data : t->n_int32_data;
  if (!t->has_raw_data && (int64_t)have != n)
    return ir_fail_at(im->err, im->src, im->where, "%s holds %zu values, its shape needs %lld", what, have, (long long)n);
  int id = ir_const_add(im->g, name, dt, (int)t->n_dims, t->dims, NULL);
  if (id < 0) return ir_fail_at(im->err, im->src, im->where, "%s: bad name", what);
  struct ir_tensor *x = &im->g->tensors[id];
  if (t->has_raw_data) {
    if (x->nbytes) memcpy(x->data, t->raw_data.data, x->nbytes);
    swap_to_host(x->data, (size_t)n, ir_dtype_size(dt));
    return id;
  }
  return typed_data(im, what, t, dt, n, x->data) ? -1 : id;
}

/* dtype and dims of a ValueInfo onto tensor id (unknowns stay unknown). */
static int apply_type(struct imp *im, int id, const Onnx__TypeProto *tp) {
  if (!tp) return 0;
  struct ir_tensor *x = &im->g->tensors[id];
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return ir_fail_at(im->err, im->src, im->where, "'%s' is not a tensor (sequences, maps and optionals are not supported)", x->name);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  if (tt->has_elem_type && tt->elem_type) {
    int dt = map_dtype(tt->elem_type);
    if (dt < 0) return ir_fail_at(im->err, im->src, im->where, "'%s' has data type %d, which is not supported", x->name, (int)tt->elem_type);
    x->dtype = dt;
  }
  if (!tt->shape) return 0;
  if (tt->shape->n_dim > IR_MAX_RANK)
    return ir_fail_at(im->err, im->src, im->where, "'%s' has rank %zu, above the limit of %d", x->name, tt->shape->n_dim, IR_MAX_RANK);
  x->rank = (int)tt->shape->n_dim;
  for (int i = 0; i < x->rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    int has = d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    x->dims[i] = has ? d->dim_value : -1;
    if (has && (d->dim_value < 0 || d->dim_value > IR_MAX_DIM))
      return ir_fail_at(im->err, im->src, im->where, "'%s' has dim %d of %lld, outside [0, %lld]", x->name, i, (long long)d->dim_value, (long long)IR_MAX_DIM);
  }
  return 0;
}

/* ---- graph interface ---- */

static int import_initializers(struct imp *im, const Onnx__GraphProto *gp) {
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *t = gp->initializer[i];
    if (!t->name || !t->name[0]) return ir_fail_at(im->err, im->src, im->where, "initializer %zu has no name", i);
    if (add_tensor(im, t, t->name) < 0) return -1;
  }
  return 0;
}

static int import_inputs(struct imp *im, const Onnx__GraphProto *gp) {
  for (size_t i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *v = gp->input[i];
    if (!v->name || !v->name[0]) return ir_fail_at(im->err, im->src, im->where, "graph input %zu has no name", i);
    int t = ir_tensor_find(im->g, v->name);
    if (t >= 0 && im->g->tensors[t].data) continue; /* an initializer (IR version < 4) */
    if (t >= 0) return ir_fail_at(im->err, im->src, im->where, "graph input '%s' is listed twice", v->name);
    t = ir_input_add(im->g, v->name, IR_DT_UNDEF, -1, NULL);
    if (apply_type(im, t, v->type)) return -1;
  }
  return 0;
}

/* value_info and outputs: types for tensors the nodes defined. */
static int import_value_info(struct imp *im, const Onnx__GraphProto *gp) {
  for (size_t i = 0; i < gp->n_value_info; i++) {
    const Onnx__ValueInfoProto *v = gp->value_info[i];
    int t = ir_tensor_find(im->g, S(v->name));
    if (t >= 0 && !im->g->tensors[t].data && !im->g->tensors[t].is_input && apply_type(im, t, v->type)) return -1;
  }
  for (size_t i = 0; i < gp->n_output; i++) {
    const Onnx__ValueInfoProto *v = gp->output[i];
    int t = ir_tensor_find(im->g, S(v->name));
    if (t < 0) return ir_fail_at(im->err, im->src, im->where, "graph output '%s' is never defined", S(v->name));
    if (!im->g->tensors[t].data && !im->g->tensors[t].is_input && apply_type(im, t, v->type)) return -1;
    ir_output_add(im->g, t);
  }
  return 0;
}

static int import_opset(struct imp *im, const Onnx__ModelProto *m) {
  im->opset = -1;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const char *d = S(m->opset_import[i]->domain);
    if (!strcmp(d, "") || !strcmp(d, "ai.onnx")) im->opset = m->opset_import[i]->version;
  }
  if (im->opset < 0) return ir_fail_at(im->err, im->src, im->where, "the model imports no default-domain opset");
  if (im->opset < ONNX_MIN_OPSET || im->opset > ONNX_MAX_OPSET)
    return ir_fail_at(im->err, im->src, im->where, "opset %lld is not supported (supported: %d to %d)", (long long)im->opset,
                ONNX_MIN_OPSET, ONNX_MAX_OPSET);
  return 0;
}

/* ---- attributes ---- */

static const char *attr_type_name(int type) {
  switch (type) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "float";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "int";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "string";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "tensor";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "floats";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "ints";
  default: return "other";
  }
}

static int ir_kind_of(int type) {
  switch (type) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return IR_ATTR_FLOAT;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return IR_ATTR_INT;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return IR_ATTR_STRING;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return IR_ATTR_TENSOR;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return IR_ATTR_FLOATS;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return IR_ATTR_INTS;
  default: return -1;
  }
}

/* A string attribute as C string; embedded NULs are refused.  An empty
 * string may come with data == NULL (protobuf-c), which memchr must not see. */
static char *attr_string(struct imp *im, const Onnx__AttributeProto *a) {
  if (a->s.len && memchr(a->s.data, 0, a->s.len)) {
    ir_fail_at(im->err, im->src, im->where, "attribute '%s' contains a NUL byte", S(a->name));
    return NULL;
  }
  char *s = ir_xmalloc(a->s.len + 1);
  if (a->s.len) memcpy(s, a->s.data, a->s.len);
  s[a->s.len] = 0;
  return s;
}

/* Stores attribute a on IR node `node` (op already known to accept it). */
static int set_attr(struct imp *im, int node, const Onnx__AttributeProto *a, int kind) {
  const char *name = a->name;
  switch (kind) {
  case IR_ATTR_INT: ir_attr_set_int(im->g, node, name, a->i); return 0;
  case IR_ATTR_FLOAT: ir_attr_set_float(im->g, node, name, a->f); return 0;
  case IR_ATTR_INTS:
    if (a->n_ints > MAX_ATTR_LIST) return ir_fail_at(im->err, im->src, im->where, "attribute '%s' is too long", name);
    ir_attr_set_ints(im->g, node, name, (int)a->n_ints, a->ints);
    return 0;
  case IR_ATTR_FLOATS:
    if (a->n_floats > MAX_ATTR_LIST) return ir_fail_at(im->err, im->src, im->where, "attribute '%s' is too long", name);
    ir_attr_set_floats(im->g, node, name, (int)a->n_floats, a->floats);
    return 0;
  case IR_ATTR_STRING: {
    char *s = attr_string(im, a);
    if (!s) return -1;
    ir_attr_set_string(im->g, node, name, s);
    free(s);
    return 0;
  }
  case IR_ATTR_TENSOR: {
    char tname[300];
    snprintf(tname, sizeof tname, "%s.%s", S(im->np->output[0]), name);
    if (!a->t) return ir_fail_at(im->err, im->src, im->where, "attribute '%s' has no tensor", name);
    int t = add_tensor(im, a->t, tname);
    if (t < 0) return -1;
    ir_attr_set_tensor(im->g, node, name, t);
    return 0;
  }
  }
  LOOM_ASSERT(0);
  return -1;
}

static int import_attrs(struct imp *im, int node, enum ir_op_kind op) {
  const Onnx__NodeProto *np = im->np;
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    const char *name = S(a->name);
    if (op == IR_OP_CLIP && (!strcmp(name, "min") || !strcmp(name, "max"))) continue; /* operands */
    const struct ir_attr_spec *spec = ir_attr_spec_find(op, name);
    if (!spec || !strcmp(name, "legacy_2d")) return ir_fail_at(im->err, im->src, im->where, "attribute '%s' is not supported", name);
    int kind = ir_kind_of(a->type);
    if (kind != (int)spec->kind)
      return ir_fail_at(im->err, im->src, im->where, "attribute '%s' is %s, expected %s", name, attr_type_name(a->type), ir_attr_kind_name(spec->kind));
    if (ir_attr_find(&im->g->nodes[node], name)) return ir_fail_at(im->err, im->src, im->where, "attribute '%s' is given twice", name);
    if (set_attr(im, node, a, kind)) return -1;
  }
  return 0;
}

static const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *np, const char *name) {
  for (size_t i = 0; i < np->n_attribute; i++)
    if (!strcmp(S(np->attribute[i]->name), name)) return np->attribute[i];
  return NULL;
}

/* ---- special nodes ---- */

/* Constant: the value becomes a constant tensor named as the output. */
static int import_constant(struct imp *im) {
  const Onnx__NodeProto *np = im->np;
  if (np->n_output != 1 || np->n_input != 0 || np->n_attribute != 1) return ir_fail_at(im->err, im->src, im->where, "needs one attribute and one output");
  const Onnx__AttributeProto *a = np->attribute[0];
  const char *name = S(a->name), *out = S(np->output[0]);
  if (!strcmp(name, "value") && a->t) return add_tensor(im, a->t, out) < 0 ? -1 : 0;
  Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
  int64_t n = 0;
  t.has_data_type = 1;
  if (!strcmp(name, "value_float") || !strcmp(name, "value_floats")) {
    t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t.float_data = name[11] ? a->floats : (float *)&a->f;
    t.n_float_data = name[11] ? a->n_floats : 1;
    n = (int64_t)t.n_float_data;
  } else if (!strcmp(name, "value_int") || !strcmp(name, "value_ints")) {
    t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    t.int64_data = name[9] ? a->ints : (int64_t *)&a->i;
    t.n_int64_data = name[9] ? a->n_ints : 1;
    n = (int64_t)t.n_int64_data;
  } else {
    return ir_fail_at(im->err, im->src, im->where, "attribute '%s' is not supported", name);
  }
  int scalar = !strcmp(name, "value_float") || !strcmp(name, "value_int");
  t.n_dims = scalar ? 0 : 1;
  t.dims = &n;
  return add_tensor(im, &t, out) < 0 ? -1 : 0;
}

/* Operand k of the node as a constant int64 list (axes given as input). */
static int const_ints(struct imp *im, int id, const int64_t **v, int *n) {
  const struct ir_tensor *t = &im->g->tensors[id];
  if (!t->data || t->dtype != IR_DT_I64 || t->rank > 1)
    return ir_fail_at(im->err, im->src, im->where, "operand '%s' must be a constant 1-D int64 tensor", t->name);
  *v = t->data;
  *n = (int)ir_tensor_numel(t);
  return *n > IR_MAX_RANK ? ir_fail_at(im->err, im->src, im->where, "operand '%s' has too many entries", t->name) : 0;
}

/* Opset >= 13 Unsqueeze/Squeeze: the axes operand becomes the attribute. */
static int axes_to_attr(struct imp *im, int node) {
  struct ir_node *n = &im->g->nodes[node];
  if (n->n_in < 2) return 0;
  if (n->n_in > 2) return ir_fail_at(im->err, im->src, im->where, "takes at most 2 inputs");
  if (n->in[1] >= 0) {
    const int64_t *v = NULL;
    int cnt = 0;
    if (const_ints(im, n->in[1], &v, &cnt)) return -1;
    if (ir_attr_find(n, "axes")) return ir_fail_at(im->err, im->src, im->where, "axes given both as attribute and input");
    ir_attr_set_ints(im->g, node, "axes", cnt, v);
  }
  im->g->nodes[node].n_in = 1;
  return 0;
}

/* Clip with min/max attributes (opset < 11): they become operands. */
static int clip_attrs_to_operands(struct imp *im, int node) {
  const Onnx__AttributeProto *lo = onnx_attr(im->np, "min"), *hi = onnx_attr(im->np, "max");
  if (!lo && !hi) return 0;
  struct ir_node *n = &im->g->nodes[node];
  if (n->n_in > 1) return ir_fail_at(im->err, im->src, im->where, "min/max given both as attributes and inputs");
  int ids[2] = {-1, -1};
  const Onnx__AttributeProto *src[2] = {lo, hi};
  for (int k = 0; k < 2; k++) {
    if (!src[k]) continue;
    if (src[k]->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) return ir_fail_at(im->err, im->src, im->where, "attribute '%s' must be a float", k ? "max" : "min");
    ids[k] = ir_const_add(im->g, NULL, IR_DT_F32, 0, NULL, &src[k]->f);
  }
  n = &im->g->nodes[node];
  n->in = ir_xrealloc(n->in, 3 * sizeof *n->in);
  n->in[1] = ids[0];
  n->in[2] = ids[1];
  n->n_in = 3;
  return 0;
}

static int normalize_node(struct imp *im, int node, enum ir_op_kind op) {
  switch (op) {
  case IR_OP_UNSQUEEZE: case IR_OP_SQUEEZE: return axes_to_attr(im, node);
  case IR_OP_CLIP: return clip_attrs_to_operands(im, node);
  case IR_OP_SOFTMAX:
    if (im->opset < 13) {
      if (!ir_attr_find(&im->g->nodes[node], "axis")) ir_attr_set_int(im->g, node, "axis", 1);
      ir_attr_set_int(im->g, node, "legacy_2d", 1);
    }
    return 0;
  default: return 0;
  }
}

/* ---- nodes ---- */

static int ir_op_of(struct imp *im) {
  const char *d = S(im->np->domain);
  if (strcmp(d, "") && strcmp(d, "ai.onnx")) return -1;
  int op = ir_op_from_name(S(im->np->op_type));
  return op >= IR_OP_QCONV ? -1 : op; /* the fused ops are Loom's own */
}

static int node_inputs(struct imp *im, int *in, int max) {
  const Onnx__NodeProto *np = im->np;
  int n = (int)np->n_input;
  while (n > 0 && !S(np->input[n - 1])[0]) n--; /* trailing absent optionals */
  if (n > max) return ir_fail_at(im->err, im->src, im->where, "has %d inputs, takes at most %d", n, max), -1;
  for (int k = 0; k < n; k++) {
    const char *name = S(np->input[k]);
    in[k] = name[0] ? ir_tensor_find(im->g, name) : -1;
    if (name[0] && in[k] < 0) return ir_fail_at(im->err, im->src, im->where, "input '%s' is not defined before use", name), -1;
  }
  return n;
}

static int node_outputs(struct imp *im, int *out, int n_out) {
  const Onnx__NodeProto *np = im->np;
  if ((int)np->n_output < n_out) return ir_fail_at(im->err, im->src, im->where, "has %zu outputs, needs %d", np->n_output, n_out);
  for (size_t k = (size_t)n_out; k < np->n_output; k++)
    if (S(np->output[k])[0]) return ir_fail_at(im->err, im->src, im->where, "output %zu ('%s') is not supported", k, np->output[k]);
  for (int k = 0; k < n_out; k++) {
    const char *name = S(np->output[k]);
    if (!name[0]) return ir_fail_at(im->err, im->src, im->where, "output %d has no name", k);
    if (ir_tensor_find(im->g, name) >= 0) return ir_fail_at(im->err, im->src, im->where, "output '%s' is defined twice", name);
    out[k] = ir_tensor_add(im->g, name, IR_DT_UNDEF, -1, NULL);
  }
  return 0;
}

static int import_node(struct imp *im) {
  if (!strcmp(S(im->np->op_type), "Constant") && !S(im->np->domain)[0]) return import_constant(im);
  int op = ir_op_of(im);
  if (op < 0) return ir_fail_at(im->err, im->src, im->where, "op '%s%s%s' is not supported", S(im->np->domain), S(im->np->domain)[0] ? "." : "", S(im->np->op_type));
  const struct ir_op_info *info = &ir_op_infos[op];
  int max_in = info->flags & IR_OPF_VARIADIC ? 4096 : info->max_in;
  if (op == IR_OP_UNSQUEEZE || op == IR_OP_SQUEEZE) max_in = 2;
  int *in = ir_xmalloc((size_t)(max_in + 1) * sizeof *in), out[4];
  int n_in = node_inputs(im, in, max_in), rc = -1;
  if (n_in < 0) goto done;
  if (n_in < info->min_in) {
    ir_fail_at(im->err, im->src, im->where, "has %d inputs, needs at least %d", n_in, info->min_in);
    goto done;
  }
  if (node_outputs(im, out, info->n_out)) goto done;
  int node = ir_node_add(im->g, op, S(im->np->name)[0] ? im->np->name : NULL, n_in, in, info->n_out, out);
  rc = import_attrs(im, node, op) || normalize_node(im, node, op) ? -1 : 0;
  const char *missing = rc ? NULL : ir_attr_missing(&im->g->nodes[node]);
  if (missing) rc = ir_fail_at(im->err, im->src, im->where, "required attribute '%s' is missing", missing);
done:
  free(in);
  return rc;
}

static int import_graph(struct imp *im, const Onnx__ModelProto *m) {
  const Onnx__GraphProto *gp = m->graph;
  if (!gp) return ir_fail_at(im->err, im->src, im->where, "the model has no graph");
  if (import_opset(im, m) || import_initializers(im, gp) || import_inputs(im, gp)) return -1;
  for (size_t i = 0; i < gp->n_node; i++) {
    im->node = (int)i;
    im->np = gp->node[i];
    snprintf(im->where, sizeof im->where, "node %d '%s' (%s)", im->node, S(im->np->name),
             S(im->np->op_type));
    if (i > INT32_MAX / 2) return ir_fail_at(im->err, im->src, im->where, "too many nodes");
    if (import_node(im)) return -1;
  }
  im->node = -1;
  im->where[0] = '\0';
  return import_value_info(im, gp);
}

struct ir_graph *onnx_import_buffer(const uint8_t *buf, size_t len, const char *source,
                                    struct ir_error *err) {
  struct imp im = {.src = source ? source : "<onnx>", .err = err, .node = -1};
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
  if (!m) {
    ir_fail_at(im.err, im.src, NULL, "not a valid ONNX model (protobuf decoding failed; truncated or corrupt?)");
    return NULL;
  }
  im.g = ir_graph_new(im.src);
  int rc = import_graph(&im, m);
  onnx__model_proto__free_unpacked(m, NULL);
  if (!rc) rc = ir_verify(im.g, err);
  if (rc) {
    ir_graph_free(im.g);
    return NULL;
  }
  return im.g;
}

/* Reads a whole file, refusing ones above ONNX_MAX_FILE_BYTES. */
static uint8_t *read_file(const char *path, size_t *len, struct ir_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    ir_errorf(err, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = ir_xmalloc(cap);
  for (;;) {
    if (n == cap) {
      if (cap >= (size_t)ONNX_MAX_FILE_BYTES) {
        ir_errorf(err, "%s: file is larger than %lld bytes", path, (long long)ONNX_MAX_FILE_BYTES);
        free(buf), fclose(f);
        return NULL;
      }
      buf = ir_xrealloc(buf, cap *= 2);
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    ir_errorf(err, "%s: read error", path);
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

struct ir_graph *onnx_import_file(const char *path, struct ir_error *err) {
  size_t len;
  uint8_t *buf = read_file(path, &len, err);
  if (!buf) return NULL;
  struct ir_graph *g = onnx_import_buffer(buf, len, path, err);
  free(buf);
  return g;
}
