/*
 * onnx_schema.h - the ai.onnx operator versions Loom imports, as a table
 * generated from onnx's own schemas (onnx_schema_table.c, written by
 * scripts/gen_onnx_schema.py), and the lookups over it.
 *
 * The importer checks every node against the row of its op type whose
 * since_version is the newest at or below the model's opset: operand and
 * result counts, attribute names, kinds and required ones.  Ops Loom does
 * not import on purpose (control flow, sequence and optional types, random
 * generators, strings) have a row in onnx_refusals with the reason.
 */
#ifndef LOOM_ONNX_SCHEMA_H
#define LOOM_ONNX_SCHEMA_H

#include "sw_compiler/ir.h"

struct onnx_schema {
  const char *op;        /* op type */
  int since;             /* since_version */
  int min_in, max_in;    /* operand count (255: variadic) */
  int min_out, max_out;  /* result count */
  const char *attrs;     /* "name:k,..." k in i f s t I F S g ..., "!" marks required */
};

struct onnx_refusal {
  const char *op;
  const char *reason;
};

extern const struct onnx_schema onnx_schemas[];
extern const int onnx_schema_count;
extern const struct onnx_refusal onnx_refusals[];
extern const int onnx_refusal_count;

/* The version of `op` in force at `opset`, or NULL (unknown op, or none
 * that old). */
const struct onnx_schema *onnx_schema_find(const char *op, int opset);
/* Why Loom refuses `op`, or NULL. */
const char *onnx_refusal_find(const char *op);
/* The IR kind of attribute `name` of schema s (*required set), or -1 when s
 * has no such attribute; -2 when its kind has no IR form (graphs, sparse
 * tensors, type protos). */
int onnx_schema_attr(const struct onnx_schema *s, const char *name, int *required);
/* The first required attribute of s that node n lacks, or NULL (written
 * into buf). */
const char *onnx_schema_missing(const struct onnx_schema *s, const struct ir_node *n, char *buf, size_t len);

#endif
