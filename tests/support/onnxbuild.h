/*
 * onnxbuild.h - ONNX models built in C for the compiler's tests: a
 * ModelProto assembled from the protoc-c structs (nodes, attributes,
 * initializers, typed inputs and outputs) and packed, so a test needs no
 * Python or fixture file.  Everything a builder allocates is freed by
 * mb_free; failures are cmocka failures.
 */
#ifndef LOOM_ONNXBUILD_H
#define LOOM_ONNXBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "onnx/onnx.pb-c.h"

struct ir_graph;

#define MAXN 64

struct mb {
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset;
  Onnx__OperatorSetIdProto *opsets[1];
  Onnx__NodeProto *nodes[MAXN];
  Onnx__TensorProto *inits[MAXN];
  Onnx__ValueInfoProto *inputs[MAXN], *outputs[MAXN], *infos[MAXN];
  int n_nodes, n_inits, n_inputs, n_outputs, n_infos;
  void *arena[1024];
  int n_arena;
};

/* Memory that lives until mb_free; a copy of s. */
void *mb_alloc(struct mb *b, size_t n);
char *mb_str(struct mb *b, const char *s);

/* An empty model importing the default domain at `opset`. */
void mb_init(struct mb *b, int opset);
void mb_free(struct mb *b);

/* The comma-separated names of list as an array; their count. */
size_t mb_names(struct mb *b, const char *list, char ***out);

/* A node appended to the graph; ins and outs are name lists. */
Onnx__NodeProto *mb_node(struct mb *b, const char *op, const char *name, const char *ins, const char *outs);

/* Attributes added to node n. */
Onnx__AttributeProto *mb_attr(struct mb *b, Onnx__NodeProto *n, const char *name, int type);
void mb_attr_int(struct mb *b, Onnx__NodeProto *n, const char *name, int64_t v);
void mb_attr_float(struct mb *b, Onnx__NodeProto *n, const char *name, float v);
void mb_attr_ints(struct mb *b, Onnx__NodeProto *n, const char *name, size_t cnt, const int64_t *v);
void mb_attr_string(struct mb *b, Onnx__NodeProto *n, const char *name, const char *s);

/* A tensor without data (not added to the graph); initializers: f32 in
 * raw_data when raw, else float_data; i64 of rank 0 or 1 with n values. */
Onnx__TensorProto *mb_tensor(struct mb *b, const char *name, int type, int rank, const int64_t *dims);
Onnx__TensorProto *mb_init_f32(struct mb *b, const char *name, int rank, const int64_t *dims, const float *data,
                               int raw);
Onnx__TensorProto *mb_init_i64(struct mb *b, const char *name, int rank, size_t n, const int64_t *v);

/* A value of ONNX element type `type` (dims < 0: a named dynamic dim "N";
 * rank < 0: no type); a float graph input; an untyped graph output. */
Onnx__ValueInfoProto *mb_value(struct mb *b, const char *name, int type, int rank, const int64_t *dims);
void mb_input(struct mb *b, const char *name, int rank, const int64_t *dims);
void mb_output(struct mb *b, const char *name);

/* The packed model (malloc'd, *len bytes). */
uint8_t *mb_pack(struct mb *b, size_t *len);

/* The model imported as "model.onnx": the graph, or a test failure; the
 * import refused with a message that contains msg. */
struct ir_graph *mb_import_ok(struct mb *b);
void mb_import_fails(struct mb *b, const char *msg);

#endif
