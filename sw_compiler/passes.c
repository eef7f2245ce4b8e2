/*
 * passes.c - the pass manager.
 *
 * The default pipeline that turns an imported graph into one the lowering
 * can take: shape inference and constant folding alternate until nothing
 * folds any more (folding a Shape makes a Reshape's shape operand constant,
 * which lets inference type the Reshape, which may let the next Shape
 * fold), then the export-habit rewrites (pass_simplify.c) and
 * BatchNormalization folding, dead code elimination, a last
 * shape inference for the nodes BN folding created, and verification.
 * Every stage works on a verified graph; the first error stops the
 * pipeline and is returned as is.
 */
#include "sw_compiler/compiler.h"

#define MAX_FOLD_ROUNDS 64

int ir_run_default_passes(struct ir_graph *g, struct ir_error *err) {
  if (ir_verify(g, err)) return -1;
  int changed = 1;
  for (int round = 0; changed && round < MAX_FOLD_ROUNDS; round++)
    if (ir_pass_shape_infer(g, err) || ir_pass_const_fold(g, &changed, err)) return -1;
  if (ir_pass_simplify(g, err) || ir_pass_bn_fold(g, err)) return -1;
  ir_pass_dce(g);
  if (ir_pass_shape_infer(g, err)) return -1;
  return ir_verify(g, err);
}
