/*
 * onnx_import_int.h - what the ONNX importer's files share (the API is in
 * compiler.h): onnx_import.c walks the model (opsets, tensors, the graph
 * interface), onnx_import_node.c turns nodes into IR nodes, checked against
 * the schema table, and onnx_import_norm.c rewrites older op versions into
 * the forms the IR keeps.
 */
#ifndef LOOM_ONNX_IMPORT_INT_H
#define LOOM_ONNX_IMPORT_INT_H

#include "onnx/onnx.pb-c.h"
#include "sw_compiler/compiler.h"
#include "sw_compiler/onnx_schema.h"

struct imp {
  const char *src;
  struct ir_graph *g;
  struct ir_error *err;
  int64_t opset;
  int node;                     /* ONNX node index, -1 outside nodes */
  const Onnx__NodeProto *np;    /* node being imported */
  char where[256];              /* "node 3 'conv1' (Conv)" for messages, "" outside nodes */
};

/* "source: where: what" into im->err; returns -1. */
int imp_fail(struct imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* onnx_import.c: TensorProto t as constant `name`; its id or -1. */
int imp_add_tensor(struct imp *im, const Onnx__TensorProto *t, const char *name);
/* The IR dtype of an ONNX element type, or -1 (with the type's name in
 * *what) when the IR has none. */
int imp_dtype(int32_t onnx_type, const char **what);

/* onnx_import_node.c: the node im->np into the graph. */
int imp_node(struct imp *im);

/* onnx_import_norm.c: rewrites node `node` (just imported, typed or
 * generic) into the one form the IR keeps for its op; may change its kind,
 * type, opset, operands and attributes. */
int imp_normalize(struct imp *im, int node);
/* A new int64 constant holding v[0..n) (1-D, or a scalar when scalar). */
int imp_const_i64(struct imp *im, const int64_t *v, int n, int scalar);

#endif
