/*
 * emit.h - the lowering's instruction helpers (emit.c, emit_deps.c):
 * instructions, micro-op sets, CONST data and the token pipeline of a job.
 *
 * A part of lower.h split off to keep each header short: lower.h includes
 * it at its end, so every lowering sees both; it needs lower.h's types
 * (struct lower_program) and includes lower.h itself for a file that
 * starts here.
 */
#ifndef LOOM_EMIT_H
#define LOOM_EMIT_H

#include "sw_compiler/lower.h"

/* ==================================================================== */
/* emit.c: instructions, micro-op sets and the token pipeline           */
/* ==================================================================== */

struct emit_vec {
  struct loom_insn *v;
  uint32_t n, cap;
};

/* What one chunk does; a lowering fills the vectors, emit_pipe_chunk wires
 * the tokens and places the instructions in the stream. */
struct emit_chunk {
  uint32_t k, o;
  int first, last;         /* first / last chunk of output tile o */
  struct emit_vec load;    /* load queue: INP / WGT loads (may be empty) */
  struct emit_vec pre;     /* compute, before the reads of INP/WGT: ACC init */
  struct emit_vec main;    /* compute: the GEMMs that read INP / WGT (or ALU work) */
  struct emit_vec post;    /* compute: requantization at the tile's end */
  struct emit_vec store;   /* store queue, when `last` */
};

struct emit_pipe {
  struct lower_program *p;
  uint32_t chunks, tiles;
  int uses_load;           /* chunks get their operands from the load module */
  uint32_t received;
  struct emit_vec held_compute, held_store;
};

void emit_vec_push(struct emit_vec *v, const struct loom_insn *in);
void emit_vec_clear(struct emit_vec *v);
void emit_vec_free(struct emit_vec *v);
void emit_chunk_reset(struct emit_chunk *c);
void emit_chunk_free(struct emit_chunk *c);

void emit_program_init(struct lower_program *p, const struct loom_hw_config *cfg);
uint32_t emit_insn(struct lower_program *p, const struct loom_insn *in);
/* Appends a micro-op set, or finds an identical one; returns its first index. */
uint32_t emit_uop_set(struct lower_program *p, const struct loom_uop *u, uint32_t n);
/* Appends bytes to CONST at an offset aligned to `align`; returns the offset. */
uint64_t emit_const(struct lower_program *p, const void *bytes, uint64_t size, uint64_t align);
/* Alignment of CONST sections: a multiple of every DRAM row size. */
uint64_t emit_const_align(const struct loom_hw_config *cfg);

struct loom_insn emit_mem(uint32_t opcode, uint32_t buffer, uint32_t sram, uint32_t seg,
                          uint32_t off, uint32_t y, uint32_t x, uint32_t stride);
struct loom_insn emit_gemm(uint32_t ub, uint32_t ue, uint32_t io, uint32_t ii, uint32_t af_o,
                           uint32_t af_i, uint32_t if_o, uint32_t if_i, uint32_t wf_o, uint32_t wf_i);
struct loom_insn emit_alu(uint32_t op, uint32_t ub, uint32_t ue, uint32_t io, uint32_t ii,
                          uint32_t df_o, uint32_t df_i, uint32_t sf_o, uint32_t sf_i);
struct loom_insn emit_qcfg(int32_t mult, uint32_t shift, int32_t zp, int32_t lo, int32_t hi,
                           uint32_t round_even);
/* QCFG of the epilogue with per-lane PAR rows from `par_base` on. */
struct loom_insn emit_qcfg_par(uint32_t par_base, uint32_t shift, int32_t zp, int32_t lo, int32_t hi,
                               uint32_t round_even);
struct loom_insn emit_gcfg(uint32_t period, uint32_t kh, uint32_t kw, uint32_t row, uint32_t col);
struct loom_insn emit_nop(uint32_t queue);

void emit_pipe_begin(struct emit_pipe *e, struct lower_program *p, uint32_t chunks, uint32_t tiles,
                     int uses_load);
void emit_pipe_chunk(struct emit_pipe *e, struct emit_chunk *c);
/* Flushes the last chunk and appends FINISH. */
void emit_pipe_end(struct emit_pipe *e);

/* The LOAD UOP of the prologue (a placeholder until emit_uop_table). */
uint32_t emit_uop_load(struct lower_program *p);
/* Appends the micro-op table to CONST and completes that LOAD. */
void emit_uop_table(struct lower_program *p, uint32_t load_index);

/* Counters, cost simulation and roofline into p->report (after emission). */
void emit_report(struct lower_program *p);

/* emit_deps.c: a job as ops (instruction groups of one module) in stream
 * order with the ops each must follow; emit_deps_finish() derives the
 * token flags, appends everything and FINISH. */
#define EMIT_MAX_PREDS 6
struct emit_op {
  int module;             /* LOOM_Q_* */
  struct emit_vec insns;  /* may be empty: a NOP carries the tokens */
  int pred[EMIT_MAX_PREDS], npred;
};
struct emit_deps {
  struct emit_op *ops;
  uint32_t n, cap;
};
void emit_deps_init(struct emit_deps *d);
void emit_deps_free(struct emit_deps *d);
/* A new op of `module` after the others in the stream; its index. */
int emit_deps_op(struct emit_deps *d, int module);
/* Op `op` must run after op `pred` (< op; -1: nothing). */
void emit_deps_after(struct emit_deps *d, int op, int pred);
void emit_deps_finish(struct emit_deps *d, struct lower_program *p);

#endif
