/*
 * onnxbuild.c - the test model builder (see onnxbuild.h).  Names lists
 * are comma separated and may hold empty entries ("x,,b": an absent
 * optional operand); a value of rank -1 has no type (graph outputs whose
 * type the importer infers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onnxbuild.h"
#include "sw_compiler/compiler.h"


void *mb_alloc(struct mb *b, size_t n) {
  assert_true(b->n_arena < 1024);
  return b->arena[b->n_arena++] = calloc(1, n ? n : 1);
}

char *mb_str(struct mb *b, const char *s) { return strcpy(mb_alloc(b, strlen(s) + 1), s); }

void mb_init(struct mb *b, int opset) {
  memset(b, 0, sizeof *b);
  b->model = (Onnx__ModelProto)ONNX__MODEL_PROTO__INIT;
  b->graph = (Onnx__GraphProto)ONNX__GRAPH_PROTO__INIT;
  b->opset = (Onnx__OperatorSetIdProto)ONNX__OPERATOR_SET_ID_PROTO__INIT;
  b->opset.domain = "";
  b->opset.has_version = 1;
  b->opset.version = opset;
  b->opsets[0] = &b->opset;
  b->model.has_ir_version = 1;
  b->model.ir_version = 8;
  b->model.n_opset_import = 1;
  b->model.opset_import = b->opsets;
  b->model.graph = &b->graph;
}

void mb_free(struct mb *b) {
  for (int i = 0; i < b->n_arena; i++) free(b->arena[i]);
}

/* Names separated by commas ("" entries allowed: "x,,b"). */
size_t mb_names(struct mb *b, const char *list, char ***out) {
  size_t n = 0;
  char **v = mb_alloc(b, 16 * sizeof *v);
  if (list && *list) {
    const char *p = list;
    for (;;) {
      const char *e = strchr(p, ',');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      v[n] = mb_alloc(b, len + 1);
      memcpy(v[n++], p, len);
      if (!e) break;
      p = e + 1;
    }
  }
  *out = v;
  return n;
}

Onnx__NodeProto *mb_node(struct mb *b, const char *op, const char *name, const char *ins, const char *outs) {
  Onnx__NodeProto *n = mb_alloc(b, sizeof *n);
  *n = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
  n->op_type = mb_str(b, op);
  n->name = mb_str(b, name);
  n->n_input = mb_names(b, ins, &n->input);
  n->n_output = mb_names(b, outs, &n->output);
  n->attribute = mb_alloc(b, 16 * sizeof *n->attribute);
  b->nodes[b->n_nodes++] = n;
  return n;
}

Onnx__AttributeProto *mb_attr(struct mb *b, Onnx__NodeProto *n, const char *name, int type) {
  Onnx__AttributeProto *a = mb_alloc(b, sizeof *a);
  *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
  a->name = mb_str(b, name);
  a->has_type = 1;
  a->type = type;
  n->attribute[n->n_attribute++] = a;
  return a;
}

void mb_attr_int(struct mb *b, Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = mb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
}

void mb_attr_float(struct mb *b, Onnx__NodeProto *n, const char *name, float v) {
  Onnx__AttributeProto *a = mb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = v;
}

void mb_attr_ints(struct mb *b, Onnx__NodeProto *n, const char *name, size_t cnt, const int64_t *v) {
  Onnx__AttributeProto *a = mb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = cnt;
  a->ints = mb_alloc(b, cnt * sizeof *v);
  memcpy(a->ints, v, cnt * sizeof *v);
}

void mb_attr_string(struct mb *b, Onnx__NodeProto *n, const char *name, const char *s) {
  Onnx__AttributeProto *a = mb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.data = (uint8_t *)mb_str(b, s);
  a->s.len = strlen(s);
}

Onnx__TensorProto *mb_tensor(struct mb *b, const char *name, int type, int rank, const int64_t *dims) {
  Onnx__TensorProto *t = mb_alloc(b, sizeof *t);
  *t = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  t->name = mb_str(b, name);
  t->has_data_type = 1;
  t->data_type = type;
  t->n_dims = (size_t)rank;
  t->dims = mb_alloc(b, (size_t)rank * sizeof *dims + 1);
  if (rank) memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
  return t;
}

/* f32 initializer: raw_data when raw, else float_data. */
Onnx__TensorProto *mb_init_f32(struct mb *b, const char *name, int rank, const int64_t *dims, const float *data,
                               int raw) {
  Onnx__TensorProto *t = mb_tensor(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank, dims);
  size_t n = 1;
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
  if (raw) {
    t->has_raw_data = 1;
    t->raw_data.len = n * 4;
    t->raw_data.data = mb_alloc(b, n * 4);
    memcpy(t->raw_data.data, data, n * 4);
  } else {
    t->n_float_data = n;
    t->float_data = mb_alloc(b, n * 4);
    memcpy(t->float_data, data, n * 4);
  }
  b->inits[b->n_inits++] = t;
  return t;
}

Onnx__TensorProto *mb_init_i64(struct mb *b, const char *name, int rank, size_t n, const int64_t *v) {
  int64_t d = (int64_t)n;
  Onnx__TensorProto *t = mb_tensor(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, rank, &d);
  t->n_int64_data = n;
  t->int64_data = mb_alloc(b, n * sizeof *v);
  memcpy(t->int64_data, v, n * sizeof *v);
  b->inits[b->n_inits++] = t;
  return t;
}

Onnx__ValueInfoProto *mb_value(struct mb *b, const char *name, int type, int rank, const int64_t *dims) {
  Onnx__ValueInfoProto *v = mb_alloc(b, sizeof *v);
  *v = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
  v->name = mb_str(b, name);
  if (rank < 0) return v;
  Onnx__TypeProto *tp = mb_alloc(b, sizeof *tp);
  Onnx__TypeProto__Tensor *tt = mb_alloc(b, sizeof *tt);
  Onnx__TensorShapeProto *sh = mb_alloc(b, sizeof *sh);
  *tp = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
  *tt = (Onnx__TypeProto__Tensor)ONNX__TYPE_PROTO__TENSOR__INIT;
  *sh = (Onnx__TensorShapeProto)ONNX__TENSOR_SHAPE_PROTO__INIT;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  tt->has_elem_type = 1;
  tt->elem_type = type;
  tt->shape = sh;
  sh->n_dim = (size_t)rank;
  sh->dim = mb_alloc(b, (size_t)rank * sizeof *sh->dim + 1);
  for (int i = 0; i < rank; i++) {
    Onnx__TensorShapeProto__Dimension *d = mb_alloc(b, sizeof *d);
    *d = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    if (dims[i] >= 0) {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      d->dim_value = dims[i];
    } else {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      d->dim_param = mb_str(b, "N");
    }
    sh->dim[i] = d;
  }
  v->type = tp;
  return v;
}

void mb_input(struct mb *b, const char *name, int rank, const int64_t *dims) {
  b->inputs[b->n_inputs++] = mb_value(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank, dims);
}

void mb_output(struct mb *b, const char *name) { b->outputs[b->n_outputs++] = mb_value(b, name, 0, -1, NULL); }

uint8_t *mb_pack(struct mb *b, size_t *len) {
  b->graph.n_node = (size_t)b->n_nodes;
  b->graph.node = b->nodes;
  b->graph.n_initializer = (size_t)b->n_inits;
  b->graph.initializer = b->inits;
  b->graph.n_input = (size_t)b->n_inputs;
  b->graph.input = b->inputs;
  b->graph.n_output = (size_t)b->n_outputs;
  b->graph.output = b->outputs;
  b->graph.n_value_info = (size_t)b->n_infos;
  b->graph.value_info = b->infos;
  *len = onnx__model_proto__get_packed_size(&b->model);
  uint8_t *buf = malloc(*len + 1);
  assert_int_equal(onnx__model_proto__pack(&b->model, buf), *len);
  return buf;
}

struct ir_graph *mb_import_ok(struct mb *b) {
  size_t len;
  uint8_t *buf = mb_pack(b, &len);
  struct ir_error err = {{0}};
  struct ir_graph *g = onnx_import_buffer(buf, len, "model.onnx", &err);
  free(buf);
  if (!g) fail_msg("import failed: %s", err.msg);
  return g;
}

void mb_import_fails(struct mb *b, const char *msg) {
  size_t len;
  uint8_t *buf = mb_pack(b, &len);
  struct ir_error err = {{0}};
  struct ir_graph *g = onnx_import_buffer(buf, len, "model.onnx", &err);
  free(buf);
  if (g) fail_msg("import succeeded, expected '%s'", msg);
  if (!strstr(err.msg, msg)) fail_msg("expected '%s' in '%s'", msg, err.msg);
}

