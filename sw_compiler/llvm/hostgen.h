/*
 * hostgen.h - host code generation through LLVM (its C API, LLVM 15): a map.
 *
 *   compiled .loom --hostgen_loom-->  the same .loom + HOSTCODE: native code
 *                                     for its HOST steps (QUANTIZE,
 *                                     DEQUANTIZE, SOFTMAX, COPY / layout
 *                                     packing), one function per step,
 *                                     specialized to the step's shapes,
 *                                     layouts and quantization parameters
 *   float IR graph --hostgen_compile_graph--> a .loom whose one NATIVE step
 *                                     runs the whole graph (--target cpu)
 *
 * Both build an LLVM module (hostgen_ops.c, hostgen_nn.c, hostgen_graph.c on
 * the helpers of hostgen_build.c), optimize it with the O2/O3 pipeline,
 * emit an object for the target triple (hostgen_emit.c) and link it into a
 * self-contained ELF shared object with a linker run as a subprocess
 * (hostgen_link.c).  The runtime (driver/lib/hostcode.c) loads that image
 * without LLVM or a linker.  docs/hostcode.md explains the choices.
 *
 * Errors follow compiler.h: -1 with "source: where: what is wrong" in *err.
 * This header needs no LLVM headers; the generator's internals are in
 * hostgen_int.h.
 */
#ifndef LOOM_HOSTGEN_H
#define LOOM_HOSTGEN_H

#include <stddef.h>
#include <stdint.h>

#include "driver/core/loomfile.h"
#include "loom/hwconfig.h"
#include "sw_compiler/compiler.h"

struct hostgen_options {
  const char *triple; /* NULL or "host": this machine; "aarch64-linux-gnu", "armv7-linux-gnueabihf", ... */
  const char *cpu;    /* NULL: the target's baseline (x86-64, generic AArch64, Cortex-A9) */
  int opt_level;      /* 1..3 (LLVM default<O1..O3>); 0 means the default, 3 */
  const char *linker; /* NULL: $LOOM_LD, then ld.lld-15, ld.lld, the target's GNU ld */
};

/* What hostgen_loom did, for the compiler's report. */
struct hostgen_summary {
  char triple[64];
  uint32_t native_steps;   /* host steps with native code */
  uint32_t portable_steps; /* host steps left to the portable C ops (unknown op, overlap) */
  uint64_t image_bytes;
  char first_portable[128]; /* "step N (OP): reason" of the first portable step, "" if none */
};

/*
 * hostgen.c
 */

/* Adds native code for the HOST steps of a compiled .loom (bytes `in`,
 * `source` names it in messages).  *out is a new malloc'd file (version
 * 1.1 when any step got code, else a copy).  `sum` may be NULL. */
int hostgen_loom(const uint8_t *in, size_t in_size, const char *source,
                 const struct hostgen_options *o, uint8_t **out, size_t *out_size,
                 struct hostgen_summary *sum, struct ir_error *err);

/*
 * hostgen_graph.c
 */

/* `loom compile --target cpu`: the float graph g (after
 * ir_run_default_passes) as a .loom for hardware configuration cfg with no
 * accelerator job: f32 inputs and outputs and one NATIVE host step running
 * every node.  At most 3 graph inputs (the 4th slot is the scratch tensor)
 * and 2 outputs. */
int hostgen_compile_graph(const struct ir_graph *g, const struct hostgen_options *o,
                          const struct loom_hw_config *cfg, uint8_t **out, size_t *out_size,
                          struct hostgen_summary *sum, struct ir_error *err);
/* Whether the graph compiler handles op (the --target cpu op set). */
int hostgen_graph_supports(enum ir_op_kind op);
/* Whether hostgen_compile_graph takes the whole graph g (every node's op
 * and types, the interface). */
int hostgen_graph_ok(const struct ir_graph *g);
/* `loom compile --target cpu MODEL.onnx` in one call: import, the default
 * passes, hostgen_compile_graph.  cfg NULL: the "default" configuration. */
int hostgen_compile_onnx(const char *path, const struct hostgen_options *o, const struct loom_hw_config *cfg,
                         uint8_t **out, size_t *out_size, struct hostgen_summary *sum, struct ir_error *err);

#endif
