/*
 * act_table.h - element-wise functions of one tensor as 256-entry tables.
 *
 * An activation between two int8 quantizations is a function of the input's
 * 256 codes, so the accelerator's epilogue table (docs/isa.md, LUT and
 * QCFG.act) computes it exactly as the table says, whatever the float
 * function was: Sigmoid, Tanh, HardSigmoid, HardSwish, Exp, Elu, ... and
 * the exporters' compositions x * Sigmoid(x) (SiLU), x * HardSigmoid(x)
 * (HardSwish before opset 14), GELU's x * 0.5 * (1 + Erf(x / sqrt 2)).
 *
 * A *region* is such a composition: nodes of the ops below whose operands
 * are scalar constants, one tensor x (the leaf) and the region's own
 * results, ending in one tensor y.  It must contain at least one op that
 * is no clamp or affine step (a "seed": Sigmoid, Erf, ...), so ReLU, Clip
 * and the per-channel arithmetic keep their own lowerings.  pass_quantize.c
 * puts int8 points on x and y of every region (act_region_grow), and
 * pass_fuse_act.c turns DQ(x) -> region -> Q into one table (act_table_build).
 */
#ifndef LOOM_ACT_TABLE_H
#define LOOM_ACT_TABLE_H

#include <stdint.h>

#include "sw_compiler/ir.h"

#define ACT_REGION_MAX 16 /* nodes of one region (GELU has 5) */

struct act_region {
  int x, y;                    /* the leaf (after `leaf`) and the result */
  int n;                       /* nodes, in graph order */
  int nodes[ACT_REGION_MAX];
  int seed;                    /* the region has an op that is not a clamp or affine step */
};

/* Whether node n is an element-wise op a region may hold (its non-region
 * operands scalar constants). */
int act_op_ok(const struct ir_graph *g, const struct ir_node *n);
/* Whether n is a seed (an op with no lowering of its own: Sigmoid, ...). */
int act_op_seed(const struct ir_node *n);

/* The region ending in tensor y: walks back through region ops; every other
 * non-constant operand is a leaf, mapped by `leaf` (NULL: itself; -1 refuses
 * it) and all must map to one tensor.  0 and *r filled, or -1. */
int act_region_of(const struct ir_graph *g, int y, int (*leaf)(const struct ir_graph *, int), struct act_region *r);

/* From a seed node: the largest region through it in a float graph,
 * growing forward while the single reader of the result is a region op of
 * the same leaf.  0 and *r, or -1 (no region: the node is no seed, or the
 * leaf is not one tensor). */
int act_region_grow(const struct ir_graph *g, int seed, struct act_region *r);

/* The table: lut[(uint8_t)c] = Q_out(f(DQ_in(c))) for every int8 code c
 * (indexed by the code's bit pattern, as the hardware's LUT),
 * f evaluated in double over the region, Q rounding half to even and
 * saturating to int8 (a NaN maps to out_zp). */
void act_table_build(const struct ir_graph *g, const struct act_region *r, float in_scale, int32_t in_zp,
                     float out_scale, int32_t out_zp, int8_t lut[256]);

/* Whether a table job takes a tensor of this shape: rank 4 as it is,
 * ranks 1 to 3 of at most ACT_FLAT_MAX elements as [1, n, 1, 1] (the bytes
 * of a blocked [N, C] when n is a multiple of the block, else one host
 * repack each way). */
#define ACT_FLAT_MAX (INT64_C(1) << 16)
int act_shape_fits(const struct ir_tensor *t);

/* The region's ops as text, "HardSigmoid*Mul" (for the report). */
void act_region_text(const struct ir_graph *g, const struct act_region *r, char *buf, size_t len);

#endif
