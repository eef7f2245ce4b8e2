/*
 * stream.h - building Loom instruction streams and micro-op tables by hand,
 * for tests and benchmarks.
 *
 * A struct stream is a growable array of encoded instructions.  Every
 * emitter encodes through loom_insn_encode(), so a stream holds only what
 * the real encoder produces; a field that does not fit is recorded in
 * `error` (the first one wins) and the instruction is left out, so a test
 * should check `s.error == NULL` once it has built its stream.  Emitters
 * return the stream index of the instruction (what ERR_INSN reports).
 *
 * Token flags are a bit set of enum stream_tok, e.g.
 *   stream_load(&s, STREAM_PUSH_NEXT, LOOM_BUF_INP, 0, 0, 0, 4);
 * Out of memory aborts: this is test code.
 */
#ifndef LOOM_TEST_STREAM_H
#define LOOM_TEST_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "loom/isa.h"

enum stream_tok {
  STREAM_POP_PREV = 1u << 0,  /* wait for a token from the previous module */
  STREAM_POP_NEXT = 1u << 1,  /* wait for a token from the next module */
  STREAM_PUSH_PREV = 1u << 2, /* send a token to the previous module when done */
  STREAM_PUSH_NEXT = 1u << 3, /* send a token to the next module when done */
};

struct stream {
  uint8_t *bytes;       /* count x LOOM_INSN_BYTES */
  uint32_t count, cap;
  const char *error;    /* first field that did not encode, NULL when all fit */
  uint32_t error_index; /* index the failed instruction would have had */
};

void stream_init(struct stream *s);
void stream_free(struct stream *s);

/* A zeroed instruction with `opcode` and the token flags `tok`. */
struct loom_insn stream_insn(uint32_t opcode, unsigned tok);

/* Encodes and appends `in`; returns its index (UINT32_MAX if it failed). */
uint32_t stream_emit(struct stream *s, const struct loom_insn *in);
/* Appends 16 raw bytes (for illegal encodings). */
uint32_t stream_emit_raw(struct stream *s, const uint8_t bytes[LOOM_INSN_BYTES]);
/* Pointer to instruction `index`, for tests that poke bits afterwards. */
uint8_t *stream_at(struct stream *s, uint32_t index);

/* LOAD / STORE with every field given. */
uint32_t stream_load_2d(struct stream *s, unsigned tok, const struct loom_insn_mem *m);
uint32_t stream_store_2d(struct stream *s, unsigned tok, const struct loom_insn_mem *m);
/* 1-D transfers of `rows` contiguous DRAM rows to/from contiguous SRAM rows. */
uint32_t stream_load(struct stream *s, unsigned tok, uint32_t buffer, uint32_t sram_base,
                     uint32_t segment, uint32_t dram_offset, uint32_t rows);
uint32_t stream_store(struct stream *s, unsigned tok, uint32_t sram_base, uint32_t segment,
                      uint32_t dram_offset, uint32_t rows);

/* GEMM / ALU with every field given, or a single pass over [begin, end). */
uint32_t stream_gemm(struct stream *s, unsigned tok, const struct loom_insn_gemm *g);
uint32_t stream_gemm_range(struct stream *s, unsigned tok, uint32_t reset, uint32_t uop_begin,
                           uint32_t uop_end);
uint32_t stream_alu(struct stream *s, unsigned tok, const struct loom_insn_alu *a);
uint32_t stream_alu_range(struct stream *s, unsigned tok, uint32_t op, uint32_t use_imm,
                          int32_t imm, uint32_t uop_begin, uint32_t uop_end);

uint32_t stream_qcfg(struct stream *s, unsigned tok, const struct loom_insn_qcfg *q);
uint32_t stream_finish(struct stream *s, unsigned tok);
uint32_t stream_nop(struct stream *s, unsigned tok, uint32_t queue);

/* A growable table of encoded micro-ops, ready to copy into a segment. */
struct stream_uops {
  uint8_t *bytes; /* count x LOOM_UOP_BYTES */
  uint32_t count, cap;
  int error;      /* a field did not fit */
};

void stream_uops_init(struct stream_uops *u);
void stream_uops_free(struct stream_uops *u);
/* Appends one micro-op; returns its index in the table. */
uint32_t stream_uops_add(struct stream_uops *u, uint32_t acc, uint32_t inp, uint32_t wgt);

#endif
