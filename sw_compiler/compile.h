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
#include "sw_compiler/lower.h"

/*
 * compile.c
 */

#define COMPILE_IM2COL 1u   /* allow folding small-channel stems with a host-side im2col */
#define COMPILE_CLIP_MSE 2u /* clip activation ranges to the MSE-optimal one (see calib.c) */
#define COMPILE_NO_RESIDUAL 4u /* do not fuse residual Adds into convolutions */

struct compile_options {
  const char *config;  /* hardware configuration name; NULL: "default" */
  const struct loom_hw_config *hw; /* when set, this configuration (a file's) instead of `config` */
  const char *calib;   /* .npy file or directory of them: required for float models */
  unsigned flags;      /* COMPILE_* */
  FILE *trace;         /* when set, the IR after each stage is printed here */
};

/* One row of the report: an accelerator job or a host step. */
struct compile_layer {
  char name[64];              /* node name, or its result's */
  char op[24];                /* "conv 3x3/1", "fc", "add", "host QUANTIZE", ... */
  char shape[48];             /* result shape, "1x64x56x56" */
  int is_job;                 /* report below is valid */
  struct lower_report report;
};

struct compile_result {
  uint8_t *bytes;             /* the .loom file */
  size_t size;
  struct ir_graph *graph;     /* the fused graph: its reference evaluation is the int8 model */
  const struct loom_hw_config *cfg;
  struct compile_layer *layers;
  int n_layers;
  int calib_samples;          /* samples calibration ran (0: scales from the model) */
};

/* Compiles g (taken over: freed with the result, also on failure). */
int compile_graph(struct ir_graph *g, const struct compile_options *o, struct compile_result *r,
                  struct ir_error *err);
/* Imports the ONNX file and compiles it. */
int compile_onnx(const char *path, const struct compile_options *o, struct compile_result *r,
                 struct ir_error *err);
void compile_result_free(struct compile_result *r);

/*
 * compile_layer.c
 */

/* Lowers fused node `node` (loom.QConv, QGemm, QAdd, QPool) to one job.
 * `flags` are COMPILE_*.  The row of the report is filled in *row. */
int compile_layer(const struct ir_graph *g, int node, const struct loom_hw_config *cfg,
                  unsigned flags, struct lower_program *prog, struct compile_layer *row,
                  struct ir_error *err);
/* "1x64x56x56" */
void compile_shape_text(const struct ir_tensor *t, char *buf, size_t len);
/* Whether the runtime has the IM2COL host op folded stems need. */
int compile_have_im2col(void);

/*
 * compile_loom.c
 */

/* Lays out the partitioned graph as a .loom file (r->bytes, r->layers).
 * out_names[i] is the name graph output i had in the model (quantization
 * may have replaced the tensor). */
int compile_loom(const struct ir_graph *g, const enum part_target *targets,
                 char *const *out_names, const struct loom_hw_config *cfg, unsigned flags,
                 struct compile_result *r, struct ir_error *err);

/*
 * report.c
 */

/* The per-layer table: op, shape, MACs, tiles, DMA bytes, estimated
 * cycles, compute- or memory-bound, utilization; then the totals. */
void compile_report_print(FILE *f, const struct compile_result *r);

#endif
