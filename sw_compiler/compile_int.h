/*
 * compile_int.h - the .loom assembly's internals, shared by compile_loom.c
 * (buffers, descriptors, the interface, accelerator jobs and the classic
 * host ops) and compile_kernel.c (KERNEL steps: ONNX ops on the host
 * kernels).
 */
#ifndef LOOM_COMPILE_INT_H
#define LOOM_COMPILE_INT_H

#include "driver/core/loomfile.h"
#include "sw_compiler/compile.h"

struct cbuf {
  char *name;
  uint32_t kind;
  uint64_t size, data_offset;
};

struct ctensor {
  char *name;
  struct loom_file_tensor rec; /* rec.name is set at the end */
};

/* How a graph input or output shows to the user. */
struct iface {
  uint32_t role;          /* LOOM_ROLE_* */
  const char *name;
  enum ir_dtype user_dt;
};

struct lctx {
  const struct ir_graph *g;
  const enum part_target *targets;
  const struct loom_hw_config *cfg;
  unsigned flags;
  struct compile_result *r;
  struct ir_error *err;
  const struct ir_progress *prog;
  struct loom_file_builder *b;
  struct cbuf *bufs;
  int n_bufs, cap_bufs;
  struct ctensor *ts;
  int n_ts, cap_ts;
  int *desc;              /* per IR tensor: ctensor index, -1 before use */
  struct iface *iface;    /* per IR tensor */
  char *absorbed;         /* per node: presented by the interface, no step */
  int *plain;             /* per IR tensor: a plain copy of its blocked descriptor, -1 before use */
  int *wgt_rows;          /* per IR tensor: the first Transpose of K's or V's WGT rows its job stores (ir_wgt_rows_store), else -1 */
  int cap_layers;
};

/* A new buffer (name made unique); its index. */
int cl_new_buffer(struct lctx *c, const char *name, uint32_t kind, uint64_t size, uint64_t data_offset);
/* The record of IR tensor t as stored (layout from the partition). */
int cl_describe(struct lctx *c, int t, struct loom_file_tensor *rec);
int cl_add_desc(struct lctx *c, const char *name, const struct loom_file_tensor *rec);
void cl_grow_buffer(struct lctx *c, int buf, uint64_t end);
/* The descriptor of IR tensor t, created (with its own buffer) on first
 * use; `alias` >= 0 makes it view that descriptor's bytes instead. */
int cl_desc_as(struct lctx *c, int t, int alias);
int cl_desc_of(struct lctx *c, int t);
/* A descriptor over existing bytes: dims/layout of IR tensor `shape_of`
 * (plain when `plain`), dtype and quantization of descriptor `like`. */
int cl_view_desc(struct lctx *c, int like, int shape_of, int plain, int buf, uint64_t offset, const char *suffix);
struct compile_layer *cl_new_row(struct lctx *c);
void cl_host_row(struct lctx *c, int node, uint32_t kind);
void cl_host_step(struct lctx *c, uint32_t kind, const int *in, int n_in, const int *out, int n_out,
                  const void *params, uint64_t param_size);
int cl_copy_step(struct lctx *c, int from, int to);

/* compile_qsoftmax.c: int8 Softmax node `node` as a QSOFTMAX step. */
int cl_qsoftmax_step(struct lctx *c, int node);
/* K's and V's WGT rows a projection's job stores (compile_krows.c): the moves
 * between marked absorbed and c->wgt_rows filled, before any step; then,
 * when that job maps its OUT segment (the result *t), its STOREs
 * rewritten and *t made the tensor the segment holds.  -1: an error. */
void cl_wgt_row_stores(struct lctx *c);
int cl_wgt_rows_segment(struct lctx *c, int node, struct lower_program *p, int *t);
/* compile_qlayernorm.c: int8 LayerNormalization node `node` as a QLAYERNORM step. */
int cl_qlayernorm_step(struct lctx *c, int node);

/* compile_kernel.c: node `node` as a KERNEL step. */
int cl_kernel_node(struct lctx *c, int node);

#endif
