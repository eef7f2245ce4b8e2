/*
 * onnx_import.c - ONNX model (protobuf) to IR: the model level.
 *
 * The protobuf decoding is protoc-c's, generated at build time from the
 * onnx.proto Debian ships (see module.mk); the importer only walks the
 * decoded ModelProto.  It trusts nothing in it: the model may be truncated,
 * hostile or fuzzed, so every count, rank, dim and byte size is checked
 * (with overflow checks) before it is used, and any surprise becomes a
 * message "model.onnx: node 12 'Conv_7' (Conv): what is wrong".
 *
 * What the importer does, in order:
 *   - checks the default-domain opset (ONNX_MIN_OPSET..ONNX_MAX_OPSET);
 *   - initializers become constants (raw_data little-endian, or the typed
 *     fields), graph inputs that are not initializers become IR inputs, with
 *     symbolic dimensions unknown (-1) and their names kept for messages;
 *   - nodes become IR nodes one to one (onnx_import_node.c): ops the
 *     compiler reasons about get their own kind, every other standard op a
 *     generic node (IR_OP_ONNX); older op versions are rewritten into the
 *     forms the IR keeps (onnx_import_norm.c);
 *   - value_info and graph output types are recorded on their tensors,
 *     and shape inference later checks them.
 * No pass runs here: callers run ir_run_default_passes.
 */
#include "sw_compiler/onnx_import_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *S(const char *s) { return s ? s : ""; }

int imp_fail(struct imp *im, const char *fmt, ...) {
  char what[800];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return ir_fail_at(im->err, im->src, im->where, "%s", what);
}

/* ---- types ---- */

int imp_dtype(int32_t onnx_type, const char **what) {
  *what = "";
  switch (onnx_type) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return IR_DT_F32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return IR_DT_I8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return IR_DT_U8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return IR_DT_I32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return IR_DT_I64;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return IR_DT_BOOL;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: return IR_DT_I16;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: return IR_DT_U16;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return IR_DT_U32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: return IR_DT_U64;
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return IR_DT_F16;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return IR_DT_BF16;
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return IR_DT_F64;
  case ONNX__TENSOR_PROTO__DATA_TYPE__STRING: *what = " (string)"; return -1;
  case ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64: case ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX128:
    *what = " (complex)";
    return -1;
  default: return -1;
  }
}

static int check_dims(struct imp *im, const char *what, size_t n, const int64_t *dims) {
  if (n > IR_MAX_RANK) return imp_fail(im, "%s has rank %zu, above the limit of %d", what, n, IR_MAX_RANK);
  for (size_t i = 0; i < n; i++)
    if (dims[i] < 0 || dims[i] > IR_MAX_DIM)
      return imp_fail(im, "%s has dim %zu of %lld, outside [0, %lld]", what, i, (long long)dims[i], (long long)IR_MAX_DIM);
  if (ir_numel_checked((int)n, dims) < 0) return imp_fail(im, "%s has too many elements", what);
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

/* How many values the typed field that holds dtype dt has. */
static size_t typed_count(const Onnx__TensorProto *t, enum ir_dtype dt) {
  switch (dt) {
  case IR_DT_F32: return t->n_float_data;
  case IR_DT_F64: return t->n_double_data;
  case IR_DT_I64: return t->n_int64_data;
  case IR_DT_U32: case IR_DT_U64: return t->n_uint64_data;
  default: return t->n_int32_data; /* the narrow ints, bool, f16 and bf16 (as bits) */
  }
}

/* Copies the typed-field data of t into buf (n elements of dt). */
static void typed_data(const Onnx__TensorProto *t, enum ir_dtype dt, int64_t n, void *buf) {
  for (int64_t i = 0; i < n; i++) {
    switch (dt) {
    case IR_DT_F32: ((float *)buf)[i] = t->float_data[i]; break;
    case IR_DT_F64: ((double *)buf)[i] = t->double_data[i]; break;
    case IR_DT_I64: ((int64_t *)buf)[i] = t->int64_data[i]; break;
    case IR_DT_U32: ((uint32_t *)buf)[i] = (uint32_t)t->uint64_data[i]; break;
    case IR_DT_U64: ((uint64_t *)buf)[i] = t->uint64_data[i]; break;
    case IR_DT_F16: case IR_DT_BF16: case IR_DT_U16: ((uint16_t *)buf)[i] = (uint16_t)t->int32_data[i]; break;
    default: ir_store_i64(dt, buf, i, t->int32_data[i]); break;
    }
  }
}

int imp_add_tensor(struct imp *im, const Onnx__TensorProto *t, const char *name) {
  char what[300];
  const char *kind;
  snprintf(what, sizeof what, "tensor '%s'", name);
  int dt = imp_dtype(t->data_type, &kind);
  if (dt < 0) return imp_fail(im, "%s: data type %d%s is not supported", what, (int)t->data_type, kind);
  if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return imp_fail(im, "%s: external data is not supported", what);
  if (t->segment) return imp_fail(im, "%s: segmented tensors are not supported", what);
  if (check_dims(im, what, t->n_dims, t->dims)) return -1;
  if (ir_tensor_find(im->g, name) >= 0) return imp_fail(im, "%s is defined twice", what);
  /* Sizes are checked against the data the file holds before ir_const_add
   * allocates: a tiny model must not make the importer allocate gigabytes
   * (or trip ir_const_add's assert with a shape past the byte cap). */
  int64_t n = ir_numel_checked((int)t->n_dims, t->dims), bytes;
  if (n < 0 || __builtin_mul_overflow(n, (int64_t)ir_dtype_size(dt), &bytes) ||
      bytes > IR_MAX_TENSOR_BYTES)
    return imp_fail(im, "%s is larger than the limit", what);
  if (t->has_raw_data && (uint64_t)t->raw_data.len != (uint64_t)bytes)
    return imp_fail(im, "%s: raw_data has %zu bytes, its shape needs %zu", what, t->raw_data.len, (size_t)bytes);
  size_t have = typed_count(t, dt);
  if (!t->has_raw_data && (int64_t)have != n)
    return imp_fail(im, "%s holds %zu values, its shape needs %lld", what, have, (long long)n);
  int id = ir_const_add(im->g, name, dt, (int)t->n_dims, t->dims, NULL);
  if (id < 0) return imp_fail(im, "%s: bad name", what);
  struct ir_tensor *x = &im->g->tensors[id];
  if (t->has_raw_data) {
    if (x->nbytes) memcpy(x->data, t->raw_data.data, x->nbytes);
    swap_to_host(x->data, (size_t)n, ir_dtype_size(dt));
    return id;
  }
  typed_data(t, dt, n, x->data);
  return id;
}

/* dtype and dims of a ValueInfo onto tensor id (unknowns stay unknown). */
static int apply_type(struct imp *im, int id, const Onnx__TypeProto *tp) {
  if (!tp) return 0;
  struct ir_tensor *x = &im->g->tensors[id];
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return imp_fail(im, "'%s' is not a tensor (sequences, maps and optionals are not supported)", x->name);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  if (tt->has_elem_type && tt->elem_type) {
    const char *kind;
    int dt = imp_dtype(tt->elem_type, &kind);
    if (dt < 0) return imp_fail(im, "'%s' has data type %d%s, which is not supported", x->name, (int)tt->elem_type, kind);
    x->dtype = dt;
  }
  if (!tt->shape) return 0;
  if (tt->shape->n_dim > IR_MAX_RANK)
    return imp_fail(im, "'%s' has rank %zu, above the limit of %d", x->name, tt->shape->n_dim, IR_MAX_RANK);
  x->rank = (int)tt->shape->n_dim;
  for (int i = 0; i < x->rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    int has = d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    x->dims[i] = has ? d->dim_value : -1;
    if (!has && x->is_input)
      ir_dim_name_add(im->g, id, i, d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? d->dim_param : "");
    if (has && (d->dim_value < 0 || d->dim_value > IR_MAX_DIM))
      return imp_fail(im, "'%s' has dim %d of %lld, outside [0, %lld]", x->name, i, (long long)d->dim_value, (long long)IR_MAX_DIM);
  }
  return 0;
}

/* ---- graph interface ---- */

static int import_initializers(struct imp *im, const Onnx__GraphProto *gp) {
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *t = gp->initializer[i];
    if (!t->name || !t->name[0]) return imp_fail(im, "initializer %zu has no name", i);
    if (imp_add_tensor(im, t, t->name) < 0) return -1;
  }
  return 0;
}

static int import_inputs(struct imp *im, const Onnx__GraphProto *gp) {
  for (size_t i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *v = gp->input[i];
    if (!v->name || !v->name[0]) return imp_fail(im, "graph input %zu has no name", i);
    int t = ir_tensor_find(im->g, v->name);
    if (t >= 0 && im->g->tensors[t].data) continue; /* an initializer (IR version < 4) */
    if (t >= 0) return imp_fail(im, "graph input '%s' is listed twice", v->name);
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
    if (t < 0) return imp_fail(im, "graph output '%s' is never defined", S(v->name));
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
  if (im->opset < 0) return imp_fail(im, "the model imports no default-domain opset");
  /* Opsets 1 to 6 are accepted node by node: a node whose op has not
   * changed between the model's opset and ONNX_MIN_OPSET means the same
   * (onnx_import_node.c checks). */
  if (im->opset < 1 || im->opset > ONNX_MAX_OPSET)
    return imp_fail(im, "opset %lld is not supported (supported: %d to %d)", (long long)im->opset,
                ONNX_MIN_OPSET, ONNX_MAX_OPSET);
  return 0;
}

static int import_graph(struct imp *im, const Onnx__ModelProto *m) {
  const Onnx__GraphProto *gp = m->graph;
  if (!gp) return imp_fail(im, "the model has no graph");
  if (import_opset(im, m) || import_initializers(im, gp) || import_inputs(im, gp)) return -1;
  for (size_t i = 0; i < gp->n_node; i++) {
    im->node = (int)i;
    im->np = gp->node[i];
    snprintf(im->where, sizeof im->where, "node %d '%s' (%s)", im->node, S(im->np->name),
             S(im->np->op_type));
    if (i > INT32_MAX / 2) return imp_fail(im, "too many nodes");
    if (imp_node(im)) return -1;
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
