/*
 * randstream_int.h - the state the random job generator's files share:
 * randstream.c (tokens, segments, windows, planted errors, the stream) and
 * randstream_ops.c (one generator per kind of instruction).  randstream.h
 * states the guarantees; randstream.c's opening comment says how they are
 * kept.
 */
#ifndef LOOM_RANDSTREAM_INT_H
#define LOOM_RANDSTREAM_INT_H

#include <stdlib.h>
#include <string.h>

#include "randstream.h"

enum { TQ_L2C, TQ_C2L, TQ_C2S, TQ_S2C, TQ_COUNT };

/* Producer and consumer module of each token queue. */
static const int tq_from[TQ_COUNT] = {LOOM_Q_LOAD, LOOM_Q_COMPUTE, LOOM_Q_COMPUTE, LOOM_Q_STORE};
static const int tq_to[TQ_COUNT] = {LOOM_Q_COMPUTE, LOOM_Q_LOAD, LOOM_Q_STORE, LOOM_Q_COMPUTE};
_Static_assert(sizeof tq_from / sizeof tq_from[0] == TQ_COUNT, "a producer per token queue");

enum rs_fault {
  FAULT_NONE,
  FAULT_BAD_TRANSPOSE, /* ILLEGAL: LOAD INP with wgt_transpose (MEM bit 127, reserved in v1) */
  FAULT_BAD_BUFFER,    /* ILLEGAL: LOAD into buffer 7 */
  FAULT_BAD_TOKEN,     /* ILLEGAL: load-queue instruction with push_prev */
  FAULT_BAD_ALU,       /* ILLEGAL: an ALU with a reserved bit set */
  FAULT_SEG_OVERFLOW,  /* SEGMENT: transfer past the segment's end */
  FAULT_SEG_UNMAPPED,  /* SEGMENT: unmapped segment */
  FAULT_SRAM_LOAD,     /* SRAM: LOAD past the buffer's end */
  FAULT_SRAM_GEMM,     /* SRAM: GEMM index past ACC */
  FAULT_NOFINISH,      /* NOFINISH: no FINISH at all */
  FAULT_BAD_COMBO,     /* ILLEGAL: GEMM reset with dw (ISA v2) */
  FAULT_SRAM_PAR,      /* SRAM: ALU EPI reading a PAR row past the buffer (ISA v2) */
  FAULT_SRAM_SRC_OUT,  /* SRAM: LOAD INP from OUT rows past the buffer (ISA v2) */
  FAULT_COUNT
};

struct tokq {
  uint32_t pushed, popped; /* in stream order; popped counts a pending pop */
  int pending;             /* the consumer's next instruction pops */
  int32_t *push_at;        /* stream index of each push */
  uint32_t cap;
};

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
  int32_t *out_load_read;         /* per OUT row: last LOAD INP src_out that read it (load queue) */
  struct loom_insn_qcfg qcfg;     /* the QCFG registers as the stream leaves them */
  struct loom_insn_gcfg gcfg;     /* the GCFG registers */
  struct tokq q[TQ_COUNT];
  int32_t last_insn[LOOM_Q_COUNT];
  struct { int valid, wild; struct loom_insn insn; int32_t owner; uint32_t reach; } memo[2]; /* GEMM, ALU */
  int fault;                      /* enum rs_fault planted, FAULT_NONE before */
  int32_t fault_insn;
};

/* ---- random numbers (xorshift64*, seeded through splitmix64) ---- */

static inline uint64_t rnd64(struct gen *g) {
  g->rng ^= g->rng >> 12;
  g->rng ^= g->rng << 25;
  g->rng ^= g->rng >> 27;
  return g->rng * 0x2545F4914F6CDD1DULL;
}

static inline uint32_t rnd(struct gen *g, uint32_t n) { return n ? (uint32_t)(rnd64(g) % n) : 0; }
static inline uint32_t range(struct gen *g, uint32_t lo, uint32_t hi) { return lo + rnd(g, hi - lo + 1); }
static inline int chance(struct gen *g, uint32_t pct) { return rnd(g, 100) < pct; }

static inline uint64_t seed_mix(uint64_t s) {
  s += 0x9E3779B97F4A7C15ULL;
  s = (s ^ (s >> 30)) * 0xBF58476D1CE4E5B9ULL;
  s = (s ^ (s >> 27)) * 0x94D049BB133111EBULL;
  return (s ^ (s >> 31)) | 1;
}

/* A 32-bit value from a mix that reaches the interesting corners. */
static inline int32_t rnd_i32(struct gen *g) {
  switch (rnd(g, 6)) {
  case 0: return (int32_t)range(g, 0, 600) - 300;
  case 1: return (int32_t)(uint32_t)rnd64(g);
  case 2: return chance(g, 50) ? INT32_MAX - (int32_t)rnd(g, 4) : INT32_MIN + (int32_t)rnd(g, 4);
  case 3: return (int32_t)range(g, 0, 1u << 20) - (1 << 19);
  default: return (int32_t)range(g, 0, 256) - 128;
  }
}

/* ---- growing arrays ---- */

static inline int grow(void **p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return 0;
  uint32_t nc = *cap ? *cap : 64;
  while (nc < need) nc *= 2;
  void *np = realloc(*p, (size_t)nc * elem);
  if (!np) return -1;
  *p = np;
  *cap = nc;
  return 0;
}

/* ---- hazard bookkeeping ---- */

static inline int32_t max_last(const int32_t *arr, uint32_t lo, uint32_t n) {
  int32_t m = -1;
  for (uint32_t r = lo; r < lo + n; r++)
    if (arr[r] > m) m = arr[r];
  return m;
}

static inline void set_rows(int32_t *arr, uint32_t lo, uint32_t n, int32_t v) {
  for (uint32_t r = lo; r < lo + n; r++) arr[r] = v;
}

/* ---- randstream.c ---- */

/* Appends `in` to the stream with the pops its module owes and random
 * extra pushes; returns its stream index. */
int32_t rs_emit(struct gen *g, struct loom_insn in);
int32_t rs_emit_nop(struct gen *g, int module);
/* The consumer of token queue `q` must, from its next instruction on, run
 * after the producer's instruction `w` (< 0: no constraint). */
void rs_need(struct gen *g, int q, int32_t w);
/* Appends `n` random bytes to the micro-op segment; their offset or -1. */
int64_t rs_uop_append(struct gen *g, uint64_t n);

/* ---- randstream_ops.c: one generator per instruction kind ---- */

void gen_load(struct gen *g, int buf, uint32_t lo, uint32_t n);
void gen_empty_transfer(struct gen *g);
void gen_store(struct gen *g, uint32_t lo, uint32_t n);
/* LOAD UOP of n micro-ops into the UOP window; returns their first row. */
uint32_t load_uops(struct gen *g, const struct loom_uop *u, uint32_t n);
void gen_gemm(struct gen *g);
void gen_alu(struct gen *g);
void gen_empty_loop(struct gen *g);
void gen_qcfg(struct gen *g);
void gen_nop(struct gen *g);
/* ISA v2 */
void gen_gcfg(struct gen *g);
void gen_par_load(struct gen *g, uint32_t lo, uint32_t n);
void gen_lut_load(struct gen *g);
void gen_src_out(struct gen *g);

#endif
