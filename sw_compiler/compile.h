/*
 * compile.h - the compiler driver: an ONNX model (or an IR graph) in, a
 * .loom binary out, with a per-layer report.
 *
 *   model.onnx --onnx_import--> IR --default passes--> IR (float or QDQ)
 *     --calib + pass_quantize (float models)--> QDQ IR
 *     --pass_fuse--> fused int8 IR --pass_partition--> accel | host | view per node
 *     --compile_layer (lower.h, one job per fused node)
 *     --compile_loom (buffers, tensors, jobs, steps)--> .loom
 *
 * Files: compile.c (the pipeline and its options), compile_layer.c (fused
 * IR node -> struct lower_* -> struct lower_program), compile_loom.c (the
 * .loom assembly), report.c (the per-layer table).  docs/compiler.md
 * describes the whole flow, docs/quantization.md the numbers.
 *
 * Errors follow compiler.h: user input (the model, the calibration data,
 * the options) gives -1 and "file: where: what is wrong" in *err.
 */
#ifndef LOOM_COMPILE_H
#define LOOM_COMPILE_H

#include <stdint.h>
#include <stdio.h>

#include "sw_compiler/compiler.h"
#include "sw_compiler/llvm/hostgen.h"
#include "sw_compiler/lower.h"

/*
 * compile.c
 */

#define COMPILE_IM2COL 1u   /* allow folding small-channel stems with a host-side im2col */
#define COMPILE_CLIP_MSE 2u /* clip activation ranges to the MSE-optimal one (see calib.c) */
#define COMPILE_NO_RESIDUAL 4u /* do not fuse residual Adds into convolutions */
#define COMPILE_NO_CHAIN 8u    /* do not fuse chains of convolutions into one job */
#define COMPILE_NO_ACT 16u     /* activations stay float on the host (no epilogue tables) */
#define COMPILE_TABLE_JOBS 32u /* a table of its own is a job even where the host's lookup costs less (--table-jobs) */
#define COMPILE_CLIP_PERCENTILE 64u /* clip activation ranges to clip_percentile (--calib-range percentile=P) */

enum compile_target {
  COMPILE_TARGET_ACCEL = 0, /* int8 accelerator jobs, the rest on the host */
  COMPILE_TARGET_CPU,       /* every node on the host in its own type */
  COMPILE_TARGET_COUNT
};

/* A shape given for a model input (loom compile --input-shape). */
struct compile_input_shape {
  const char *name;
  int rank;
  int64_t dims[IR_MAX_RANK];
};

struct compile_options {
  enum compile_target target;
  const char *config;  /* hardware configuration name; NULL: "default" */
  const struct loom_hw_config *hw; /* when set, this configuration (a file's) instead of `config` */
  const char *calib;   /* .npy file or directory of them: required for float models */
  unsigned flags;      /* COMPILE_* */
  double clip_percentile; /* with COMPILE_CLIP_PERCENTILE: P in (50, 100], the range kept */
  FILE *trace;         /* when set, the IR after each stage is printed here */
  const struct compile_input_shape *input_shapes; /* fix dynamic input dims */
  int n_input_shapes;
  /* compile_model only: native host code through LLVM for host_triple (NULL:
   * this machine; "none": none, the runtime's portable code runs), tuned
   * for host_cpu (NULL: the target's baseline) */
  const char *host_triple, *host_cpu;
  struct ir_progress progress; /* optional: calibration and tiling report how far they are */
};

/* One row of the report: an accelerator job or a host step. */
struct compile_layer {
  char name[64];              /* node name, or its result's */
  char op[24];                /* "conv 3x3/1", "fc", "add", "host QUANTIZE", ... */
  char shape[48];             /* result shape, "1x64x56x56" */
  int is_job;                 /* report below is valid */
  struct lower_report report;
};

/* An activation table whose job of its own would cost more than the
 * host's lookup: the host nodes that look it up and why. */
struct compile_host_table {
  int cast, gather;           /* the nodes (graph of the result) */
  char act[64];               /* the region, as the table job's op names it */
  char why[160];
};

struct compile_result {
  uint8_t *bytes;             /* the .loom file */
  size_t size;
  struct ir_graph *graph;     /* the fused graph: its reference evaluation is the int8 model */
  const struct loom_hw_config *cfg;
  struct compile_layer *layers;
  int n_layers;
  int calib_samples;          /* samples calibration ran (0: scales from the model) */
  enum compile_target target;
  enum part_target *targets;  /* per node of graph: where it runs (NULL before partitioning) */
  int native;                 /* compile_model added native host code: host is valid */
  struct hostgen_summary host;
  struct compile_host_table *host_tables; /* activation tables kept on the host (place_tables.c) */
  int n_host_tables;
};

/* The whole pipeline, what `loom compile` runs: import, fixed input shapes,
 * the passes, calibration and quantization (a float model for the
 * accelerator), fusion, placement, lowering, the .loom, and native host code
 * (o->host_triple).  For --target cpu a float graph the LLVM graph compiler
 * takes whole becomes one native step; any other graph one portable kernel
 * step per node. */
int compile_model(const char *path, const struct compile_options *o, struct compile_result *r,
                  struct ir_error *err);
/* Compiles g without native host code (taken over: freed with the result,
 * also on failure). */
int compile_graph(struct ir_graph *g, const struct compile_options *o, struct compile_result *r,
                  struct ir_error *err);
/* Imports the ONNX file and compiles it with compile_graph. */
int compile_onnx(const char *path, const struct compile_options *o, struct compile_result *r,
                 struct ir_error *err);
void compile_result_free(struct compile_result *r);

/*
 * compile_inputs.c
 */

/* Applies the shapes given for inputs, then checks that every input
 * dimension is fixed (a refusal names the input, the dimension and the flag). */
int compile_fix_inputs(struct ir_graph *g, const struct compile_input_shape *shapes, int n, struct ir_error *err);

/*
 * compile_layer.c
 */

/* The nodes of one job: nodes[0], and the ones whose work joins its job
 * (compile_fuse.c), in data-flow order. */
#define COMPILE_FUSE_MAX 3
struct compile_fusion {
  int n;
  int nodes[COMPILE_FUSE_MAX];
};

/* Lowers fused node f->nodes[0] (loom.QConv, QGemm, QAdd, QPool) to one
 * job, with the nodes after it in f (a QPool after a QConv, or a chain of
 * QConvs) in the same job.  `flags` are COMPILE_*.  The row of the report
 * is filled in *row. */
int compile_layer(const struct ir_graph *g, const struct compile_fusion *f, const struct loom_hw_config *cfg,
                  unsigned flags, struct lower_program *prog, struct compile_layer *row,
                  struct ir_error *err);

/* A QConv as the lowering's struct (its residual and weight parts beside
 * it: keep the struct in place). */
struct compile_conv {
  struct lower_qconv l;
  struct lower_qresidual res;
  int8_t *owned;              /* split wide weights, or NULL */
  int8_t lut[256];            /* the activation table (l.lut), from the "lut" attribute */
};
/* Fills c from QConv n; -1 with msg when it cannot be expressed. */
int compile_conv_params(const struct ir_graph *g, const struct ir_node *n, unsigned flags, const char *where,
                        struct compile_conv *c, char *msg);
void compile_conv_free(struct compile_conv *c);

/*
 * compile_fuse.c
 */

/* The nodes of node `node`'s job (f->n = 1: it alone): a QPool max after a
 * QConv (lower_conv_pool_fits()), or a chain [1x1 ->] depthwise -> 1x1
 * when the cost model finds the fused job faster than the separate ones. */
void compile_fuse_plan(const struct ir_graph *g, const enum part_target *targets, const struct loom_hw_config *cfg,
                       unsigned flags, int node, struct compile_fusion *f);
/* The cost model's estimate of one job of these nodes (the first and the
 * ones joining its job), UINT64_MAX when it does not lower. */
uint64_t compile_job_cycles(const struct ir_graph *g, const struct loom_hw_config *cfg, unsigned flags, int n,
                            const int *nodes);
/* The job of a chain of QConvs (lower_chain). */
int compile_chain_layer(const struct ir_graph *g, const struct compile_fusion *f, const struct loom_hw_config *cfg,
                        unsigned flags, const char *where, struct lower_program *p, char *msg);
/* "1x64x56x56" */
void compile_shape_text(const struct ir_tensor *t, char *buf, size_t len);
/* Whether the runtime has the IM2COL host op folded stems need. */
int compile_have_im2col(void);

/*
 * place_tables.c
 */

/* Host lookup cost the table placement assumes, nanoseconds per element. */
#define COMPILE_HOST_LOOKUP_NS 25.0
/* Each activation table that runs as a job of its own (an act_only QConv
 * on the accelerator) whose estimated cycles at cfg's clock exceed
 * COMPILE_HOST_LOOKUP_NS per element becomes the host's lookup, Cast to
 * int32 and Gather of the table: the same bytes.  Partitions again when
 * any did (r->targets); notes them in r->host_tables.  COMPILE_TABLE_JOBS
 * keeps every job. */
int compile_place_tables(struct ir_graph *g, const struct loom_hw_config *cfg, unsigned flags,
                         struct compile_result *r, struct ir_error *err);

/*
 * compile_qsoftmax.c
 */

/* After partitioning: each host chain int8 -> [views] -> DequantizeLinear
 * -> [Add(float mask)] -> Softmax (last axis) -> [views] -> QuantizeLinear
 * -> int8 becomes one Softmax node of int8 codes (the host op QSOFTMAX;
 * the mask, when there is one, its operand 1 and its broadcast the
 * attribute mask_group; the rest of the chain dead, targets PART_NONE).
 * Returns how many. */
int compile_int8_softmax(struct ir_graph *g, enum part_target *targets);

/* A host chain around node s: its operand 0 a DequantizeLinear's result
 * that only s reads, of per-tensor int8 x (back through reshapes that keep
 * the last dimension, each the only reader of its operand, one scale);
 * its result 0 read only by such reshapes and then a QuantizeLinear to
 * per-tensor int8 y with x's last dimension.  With `gathers`, one Gather
 * of constant indices along an axis other than the last may stand right
 * before the QuantizeLinear (a LayerNorm's class token): it stays, reading
 * s's result as int8 codes of y's scale (a per-tensor quantization
 * commutes with a Gather). */
#define COMPILE_CHAIN_MAX 16 /* nodes a chain may kill: DQ, Q and the views between */
struct compile_int8_chain {
  int x, y;                         /* the int8 tensors at the ends */
  int kill[COMPILE_CHAIN_MAX], n_kill; /* the DQ, the Q and the views */
  int gather, mid;                  /* the Gather and the float tensor it reads, or -1 */
};
/* 1 and *ch when node s has such a chain, else 0. */
int compile_int8_chain(const struct ir_graph *g, const enum part_target *targets, int s, int gathers,
                       struct compile_int8_chain *ch);
/* Node s reads x and writes y along its last axis (axis -1); the chain's
 * other nodes are dead (targets PART_NONE).  With a Gather, s writes a new
 * int8 tensor of the Gather's operand shape and y's quantization, which the
 * Gather reads, writing y. */
void compile_int8_chain_take(struct ir_graph *g, enum part_target *targets, int s, const struct compile_int8_chain *ch);

/*
 * compile_qlayernorm.c
 */

/* After partitioning: each host chain int8 -> DequantizeLinear ->
 * LayerNormalization (last axis) -> [Gather] -> QuantizeLinear -> int8
 * becomes one LayerNormalization node of int8 codes (the host op
 * QLAYERNORM; the DQ and Q dead, targets PART_NONE; a Gather then reads
 * its int8 result).  Returns how many. */
int compile_int8_layernorm(struct ir_graph *g, enum part_target *targets);
/* Node n is such an int8 LayerNormalization. */
int compile_is_int8_layernorm(const struct ir_graph *g, const struct ir_node *n);

/*
 * compile_loom.c
 */

/* Lays out the partitioned graph as a .loom file (r->bytes, r->layers).
 * out_names[i] is the name graph output i had in the model (quantization
 * may have replaced the tensor). */
int compile_loom(const struct ir_graph *g, const enum part_target *targets,
                 char *const *out_names, const struct loom_hw_config *cfg, unsigned flags,
                 const struct ir_progress *prog, struct compile_result *r, struct ir_error *err);

/*
 * report.c
 */

/* The per-layer table: op, shape, MACs, tiles, DMA bytes, estimated
 * cycles, compute- or memory-bound, utilization; then the totals. */
void compile_report_print(FILE *f, const struct compile_result *r);

/*
 * placement.c
 */

/* Where the compiled graph's nodes run (views and constants aside). */
struct compile_placement {
  int accel_nodes, host_nodes;
  uint64_t accel_macs, host_macs; /* host: convolutions and matrix products only */
};
void compile_placement(const struct compile_result *r, struct compile_placement *p);
/* Why node `node` (placed on the host) is there, for the summary. */
const char *compile_host_reason(const struct ir_graph *g, const enum part_target *targets, int node);
/* Per op type, nodes on the accelerator and on the host with the host
 * reason; then the line "placement: N nodes on the accelerator, M on the
 * host; P% of MACs on the accelerator". */
void compile_placement_print(FILE *f, const struct compile_result *r);

#endif
