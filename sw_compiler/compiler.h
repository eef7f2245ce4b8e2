/*
 * compiler.h - a map of the Loom compiler.
 *
 *   model.onnx --onnx_import--> IR --passes--> IR --(lowering: later)--> .loom
 *
 * The IR data structure and its builder are in ir.h.  Below, one banner per
 * file, in the order a model flows through them.  Every function that can
 * fail on user input returns 0 (or a pointer) on success and -1 (or NULL)
 * on failure, with an "file: where: what is wrong" message in *err.
 */
#ifndef LOOM_COMPILER_H
#define LOOM_COMPILER_H

#include <stdint.h>
#include <stdio.h>

#include "sw_compiler/ir.h"

/*
 * ir_print.c
 */

#define IR_PRINT_HEX 1u   /* constant data always as hex, never as a list */
#define IR_PRINT_ELIDE 2u /* large constants as `...` (not reparsable data) */

void ir_print(const struct ir_graph *g, FILE *f, unsigned flags);
char *ir_print_str(const struct ir_graph *g, unsigned flags); /* malloc'd */
void ir_print_node(FILE *f, const struct ir_graph *g, const struct ir_node *n);
void ir_print_type(FILE *f, const struct ir_tensor *t);
void ir_print_name(FILE *f, const char *name);
/* Shortest text that reads back as v; always has '.', 'e', inf or nan. */
void ir_format_float(float v, char *buf, size_t len);

/*
 * ir_parse.c
 */

/* Parses the text form; `source` names the text in messages. */
struct ir_graph *ir_parse(const char *text, const char *source, struct ir_error *err);

/*
 * ir_verify.c
 */

/* Checks definition before use, arity, dtypes, ranks and attributes. */
int ir_verify(const struct ir_graph *g, struct ir_error *err);

/* The attributes each op accepts (the ONNX importer accepts the same). */
struct ir_attr_spec {
  enum ir_op_kind op;
  const char *name;
  enum ir_attr_kind kind;
  int required;
};
const struct ir_attr_spec *ir_attr_spec_find(enum ir_op_kind op, const char *name);
/* The first required attribute node n lacks, or NULL. */
const char *ir_attr_missing(const struct ir_node *n);

/*
 * onnx_import.c
 */

#define ONNX_MIN_OPSET 11
#define ONNX_MAX_OPSET 17
#define ONNX_MAX_FILE_BYTES (INT64_C(1) << 31)

struct ir_graph *onnx_import_file(const char *path, struct ir_error *err);
struct ir_graph *onnx_import_buffer(const uint8_t *buf, size_t len, const char *source,
                                    struct ir_error *err);

/*
 * pass_shape_infer.c
 */

/* Fills dtype and shape of every node result it can; checks those already
 * known (from ONNX value_info) agree; resolves auto_pad into pads and
 * defaults kernel_shape.  Unknown operand shapes leave results unknown. */
int ir_pass_shape_infer(struct ir_graph *g, struct ir_error *err);

/*
 * pass_const_fold.c
 */

/* Evaluates IR_OPF_FOLDABLE nodes whose operands are constant (and Shape of
 * a statically shaped tensor); their results become constants.  *changed
 * tells whether anything was folded. */
int ir_pass_const_fold(struct ir_graph *g, int *changed, struct ir_error *err);

/*
 * pass_bn_fold.c
 */

/* Folds BatchNormalization after a Conv into the conv's weights and bias;
 * a BN without one becomes a per-channel Mul + Add. */
int ir_pass_bn_fold(struct ir_graph *g, struct ir_error *err);

/*
 * pass_dce.c
 */

/* Removes nodes whose results nothing uses, and unused tensors. */
void ir_pass_dce(struct ir_graph *g);

/*
 * passes.c
 */

/* shape inference + constant folding to a fixed point, BN folding, DCE,
 * shape inference and verification. */
int ir_run_default_passes(struct ir_graph *g, struct ir_error *err);

/*
 * ir_eval_ref.c
 */

/* Runs the graph on the CPU.  inputs[i] holds graph input i (dense,
 * row-major, its dtype); outputs[i] receives a malloc'd buffer for graph
 * output i.  Needs every shape known. */
int ir_eval_ref(const struct ir_graph *g, const void *const *inputs, void **outputs,
                struct ir_error *err);
/* Runs one node: in[k] / out[k] are the buffers of its operands / results
 * (in[k] NULL for an absent optional operand). */
int ir_eval_node(const struct ir_graph *g, int node, const void *const *in, void *const *out,
                 struct ir_error *err);

#endif
