/*
 * hostgen_int.h - the host code generator's internals: LLVM types and the
 * helpers its files share (the public API is hostgen.h).  One banner per
 * file, in the order a module is built: hostgen.c (driver), hostgen_emit.c
 * (targets, optimization, objects), hostgen_link.c (shared objects),
 * hostgen_build.c (IR helpers), hostgen_ops.c (host ops), hostgen_nn.c
 * (float kernels); hostgen_graph.c uses them all.
 */
#ifndef LOOM_HOSTGEN_INT_H
#define LOOM_HOSTGEN_INT_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "sw_compiler/llvm/hostgen.h"

/* The target a module is built for (hostgen_emit.c). */
struct hg_target {
  char triple[64];   /* canonical: x86_64-unknown-linux-gnu, ... */
  char cpu[32];
  char features[64];
  LLVMTargetMachineRef tm;
};

/* hostgen.c, shared with hostgen_graph.c: module -> linked image; the
 * builder's file finished and re-parsed; HOSTCODE added to a builder. */
struct hg;
int hg_image(struct hg *h, struct hg_target *t, const struct hostgen_options *o, uint8_t **so,
             size_t *so_size, struct ir_error *err);
int hg_finish_file(struct loom_file_builder *b, const char *source, uint8_t **out, size_t *out_size,
                   struct ir_error *err);
void hg_attach(struct loom_file_builder *b, const struct hg_target *t, struct loom_file_hostcode_entry *e,
               char (*symbols)[32], uint32_t n, const uint8_t *image, size_t size);

/*
 * hostgen_emit.c
 */

int hg_target_open(const struct hostgen_options *o, struct hg_target *t, struct ir_error *err);
void hg_target_close(struct hg_target *t);
/* Verifies and optimizes m, emits an object file (malloc'd *obj). */
int hg_emit_object(struct hg_target *t, LLVMModuleRef m, int opt_level, uint8_t **obj,
                   size_t *obj_size, struct ir_error *err);

/*
 * hostgen_link.c
 */

/* Links an object into a shared object with no dependencies (malloc'd *so). */
int hg_link_shared(const struct hg_target *t, const char *linker, const uint8_t *obj,
                   size_t obj_size, uint8_t **so, size_t *so_size, struct ir_error *err);

/*
 * hostgen_build.c - IR building helpers
 */

/* A module under construction, with the types every builder needs.  `ix`
 * is the index type: the target's pointer width, so that no 64-bit
 * division or multiply ever becomes a library call on 32-bit ARM. */
struct hg {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMTypeRef i1, i8, i32, i64, ix, f32, f64, ptr, entry_ty;
  LLVMValueRef fn; /* the function being built */
  int ix_bits;
};

/* A counted loop `for (iv = 0; iv < n; iv++)` with n >= 1, built as a
 * do-while (the form LLVM's loop passes expect). */
struct hg_loop {
  LLVMBasicBlockRef body, exit;
  LLVMValueRef iv, n;
};

void hg_init(struct hg *h, const struct hg_target *t, const char *module_name);
void hg_dispose(struct hg *h);
/* Starts `int32_t name(void *const *in, void *const *out)` (exported). */
void hg_entry_begin(struct hg *h, const char *name);
/* The k-th pointer of the entry's in (0) or out (1) array. */
LLVMValueRef hg_entry_ptr(struct hg *h, int out, int k);
void hg_entry_end(struct hg *h); /* return 0 */
/* Starts an internal function `void name(ptr, ... n_ptrs)`; noalias
 * marks every pointer as not aliasing the others. */
LLVMValueRef hg_kernel_begin(struct hg *h, const char *name, int n_ptrs, int noalias);
void hg_kernel_end(struct hg *h, LLVMValueRef saved_fn, LLVMBasicBlockRef saved_bb);

LLVMValueRef hg_cx(struct hg *h, int64_t v); /* index constant */
LLVMValueRef hg_c32(struct hg *h, int32_t v);
LLVMValueRef hg_cf(struct hg *h, float v);
LLVMValueRef hg_add(struct hg *h, LLVMValueRef a, LLVMValueRef b); /* index arithmetic, nsw */
LLVMValueRef hg_mul(struct hg *h, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef hg_muladd(struct hg *h, LLVMValueRef a, int64_t m, LLVMValueRef b); /* a*m + b */
LLVMValueRef hg_gep(struct hg *h, LLVMTypeRef elem, LLVMValueRef base, LLVMValueRef index);
LLVMValueRef hg_load(struct hg *h, LLVMTypeRef elem, LLVMValueRef base, LLVMValueRef index);
void hg_store(struct hg *h, LLVMValueRef v, LLVMValueRef base, LLVMValueRef index);

LLVMValueRef hg_for_begin(struct hg *h, struct hg_loop *l, int64_t n);
void hg_for_end(struct hg *h, struct hg_loop *l);
/* if (cond) { then } else { otherwise }: begin returns after positioning in
 * `then`; hg_else moves to the else block; hg_endif joins. */
struct hg_if {
  LLVMBasicBlockRef then, other, join;
};
void hg_if_begin(struct hg *h, struct hg_if *c, LLVMValueRef cond);
void hg_else(struct hg *h, struct hg_if *c);
void hg_endif(struct hg *h, struct hg_if *c);

/* Float helpers: compare-and-select forms that never become libm calls. */
LLVMValueRef hg_fmax(struct hg *h, LLVMValueRef a, LLVMValueRef b);   /* C fmaxf */
LLVMValueRef hg_clampf(struct hg *h, LLVMValueRef v, float lo, float hi); /* NaN stays NaN */
LLVMValueRef hg_expf(struct hg *h, LLVMValueRef x);                   /* ~1 ulp */
/* A constant global holding `bytes` (rodata), aligned to 64. */
LLVMValueRef hg_const_bytes(struct hg *h, const void *bytes, size_t n, const char *name);

/* The stored form of a .loom tensor: its layout as index arithmetic. */
struct hg_layout {
  int rank;
  int64_t dims[LOOM_MAX_RANK];
  int blocked;          /* NCHWC / NC: channel axis 1 split in blocks */
  int64_t block, nblocks, inner;
  LLVMTypeRef elem;     /* i8, i32 or f32 */
  uint32_t dtype;       /* loom_dtype */
  float scale;
  int32_t zero_point;
};
void hg_layout_of(struct hg *h, const struct loom_file_tensor *t, struct hg_layout *l);
/* Stored element index of logical index idx[0..rank). */
LLVMValueRef hg_layout_index(struct hg *h, const struct hg_layout *l, LLVMValueRef *idx);
/* The element at idx as f32 (dequantized when l is a quantized integer
 * tensor), like loom_tensor_read; and the store of an f32 value, quantized
 * like loom_quantize1 when l is quantized int8/uint8. */
LLVMValueRef hg_read_f32(struct hg *h, const struct hg_layout *l, LLVMValueRef base, LLVMValueRef at);
void hg_write_f32(struct hg *h, const struct hg_layout *l, LLVMValueRef v, LLVMValueRef base,
                  LLVMValueRef at);
/* The value padding lanes hold: the zero point of a quantized tensor, else 0. */
LLVMValueRef hg_pad_value(struct hg *h, const struct hg_layout *l);

/*
 * hostgen_ops.c
 */

/* Why step `step` of f cannot get native code (a static string), or NULL
 * when it can.  A step the portable op would refuse is an error (-1 and
 * *err); an op hostgen does not know is left portable (returns the reason). */
int hg_op_check(const struct loom_file *f, uint32_t step, const char *source, const char **skip,
                struct ir_error *err);
/* Emits the entry point `symbol` for step `step` (checked with hg_op_check). */
void hg_op_build(struct hg *h, const struct loom_file *f, uint32_t step, const char *symbol);

/*
 * hostgen_nn.c - float IR ops as kernels
 */

/* Tensor storage of a graph node's operands and result, resolved by the
 * graph compiler: a pointer value for each (in[k] NULL for an absent
 * optional operand), the node's constant operands as host data. */
struct hg_node_io {
  LLVMValueRef in[8], out;
  int n_in;
};
/* Emits the code of node `node` (float semantics of ir_eval_ref.c).
 * `pad` is scratch for a padded copy of the input (hg_nn_pad_bytes). */
int hg_nn_build(struct hg *h, const struct ir_graph *g, int node, const struct hg_node_io *io,
                LLVMValueRef pad, struct ir_error *err);
/* Bytes of scratch node `node` needs for a padded input (0: none). */
int64_t hg_nn_pad_bytes(const struct ir_graph *g, int node);
/* -1 with a message when node `node` is outside what hg_nn_build handles. */
int hg_nn_check(const struct ir_graph *g, int node, struct ir_error *err);

#endif
