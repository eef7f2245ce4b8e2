/*
 * randstream_gen.h - the generator's state, shared by the two halves of
 * the constrained-random job generator (randstream.h says what a job
 * guarantees; randstream.c's essay says how):
 *
 *   randstream.c      the machinery (random numbers, token queues, hazard
 *                     bookkeeping, segments, working windows) and the
 *                     assembly of a whole job, randstream_build();
 *   randstream_ops.c  one instruction of each kind (LOAD, STORE, GEMM, ALU,
 *                     QCFG, NOP, the empty ones) and the planted errors.
 *
 * Not for the tests themselves: they use randstream.h.
 */
#ifndef LOOM_RANDSTREAM_GEN_H
#define LOOM_RANDSTREAM_GEN_H

#include "randstream.h"

/* The four token queues: load to compute, compute to load, compute to
 * store, store to compute. */
enum { TQ_L2C, TQ_C2L, TQ_C2S, TQ_S2C, TQ_COUNT };

enum rs_fault {
  FAULT_NONE,
  FAULT_RESERVED,      /* ILLEGAL: a reserved bit set */
  FAULT_BAD_BUFFER,    /* ILLEGAL: LOAD into buffer 5..7 */
  FAULT_BAD_TOKEN,     /* ILLEGAL: load-queue instruction with push_prev */
  FAULT_BAD_ALU,       /* ILLEGAL: ALU op 7 */
  FAULT_SEG_OVERFLOW,  /* SEGMENT: transfer past the segment's end */
  FAULT_SEG_UNMAPPED,  /* SEGMENT: unmapped segment */
  FAULT_SRAM_LOAD,     /* SRAM: LOAD past the buffer's end */
  FAULT_SRAM_GEMM,     /* SRAM: GEMM index past ACC */
  FAULT_NOFINISH,      /* NOFINISH: no FINISH at all */
  FAULT_COUNT
};

struct tokq {
  uint32_t pushed, popped; /* in stream order; popped counts a pending pop */
  int pending;             /* the consumer's next instruction pops */
  int32_t *push_at;        /* stream index of each push */
  uint32_t cap;
};

/* Everything known while one job is built. */
struct gen {
  const struct loom_hw_config *cfg;
  struct randstream_knobs k;
  uint64_t rng;
  int oom;
  struct loom_insn *in;
  uint32_t n, cap;
  struct randstream_seg seg[LOOM_NUM_SEGMENTS];
  uint64_t uop_used, uop_cap;     /* bytes of the micro-op segment */
  int inputs[LOOM_NUM_SEGMENTS], n_inputs, uop_seg;
  int outputs[LOOM_NUM_SEGMENTS], n_outputs;
  uint32_t win_lo[LOOM_BUF_COUNT], win_n[LOOM_BUF_COUNT];
  int32_t *last_write[LOOM_BUF_COUNT], *last_read[LOOM_BUF_COUNT];
  int32_t *uop_owner;             /* per UOP row: id of the LOAD UOP that wrote it */
  struct tokq q[TQ_COUNT];
  int32_t last_insn[LOOM_Q_COUNT];
  struct { int valid, wild; struct loom_insn insn; int32_t owner; } memo[2]; /* GEMM, ALU */
  int fault;                      /* enum rs_fault planted, FAULT_NONE before */
  int32_t fault_insn;
};

/* ---- random numbers (xorshift64*; randstream.c seeds it) ---- */

static inline uint64_t rnd64(struct gen *g) {
  g->rng ^= g->rng >> 12;
  g->rng ^= g->rng << 25;
  g->rng ^= g->rng >> 27;
  return g->rng * 0x2545F4914F6CDD1DULL;
}

static inline uint32_t rnd(struct gen *g, uint32_t n) { return n ? (uint32_t)(rnd64(g) % n) : 0; }
static inline uint32_t range(struct gen *g, uint32_t lo, uint32_t hi) { return lo + rnd(g, hi - lo + 1); }
static inline int chance(struct gen *g, uint32_t pct) { return rnd(g, 100) < pct; }

/* ---- randstream.c: tokens, hazards, the micro-op segment ---- */

/* Appends `in` to the stream with the pops it owes and random extra
 * tokens; returns its stream index. */
int32_t rs_emit(struct gen *g, struct loom_insn in);
int32_t rs_emit_nop(struct gen *g, int module);
/* The consumer of token queue `q` must, from its next instruction on, run
 * after the producer's instruction `w` (a stream index; < 0: none). */
void rs_need(struct gen *g, int q, int32_t w);
/* Takes back the pushes rs_emit() gave instruction `idx` of `module`. */
void rs_drop_pushes(struct gen *g, int32_t idx, int module);

/* The latest stream index in arr[lo, lo + n), -1 if none; and setting it. */
int32_t rs_max_last(const int32_t *arr, uint32_t lo, uint32_t n);
void rs_set_rows(int32_t *arr, uint32_t lo, uint32_t n, int32_t v);

/* Appends `n` random bytes to the micro-op segment; their offset or -1. */
int64_t rs_uop_append(struct gen *g, uint64_t n);

/* ---- randstream_ops.c: one instruction of each kind ---- */

/* LOAD of INP, WGT or ACC rows [lo, lo + n), or a random one when n == 0;
 * STORE likewise from OUT. */
void rs_gen_load(struct gen *g, int buf, uint32_t lo, uint32_t n);
void rs_gen_store(struct gen *g, uint32_t lo, uint32_t n);
void rs_gen_empty_transfer(struct gen *g);
void rs_gen_gemm(struct gen *g);
void rs_gen_alu(struct gen *g);
void rs_gen_empty_loop(struct gen *g);
void rs_gen_qcfg(struct gen *g);
void rs_gen_nop(struct gen *g);

/* Plants one instruction that raises an error (g->fault says which), and
 * the error code it raises. */
void rs_plant_fault(struct gen *g);
uint32_t rs_fault_error(int f);

#endif
