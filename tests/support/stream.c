/*
 * stream.c - hand-built instruction streams (see stream.h).
 *
 * Everything goes through loom_insn_encode()/loom_uop_encode(): the helpers
 * only fill struct loom_insn, so a stream built here is exactly what the
 * compiler's emitter would produce for the same fields.
 */
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return p;
  uint32_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  p = realloc(p, (size_t)n * elem);
  if (!p) {
    fprintf(stderr, "stream: out of memory\n");
    abort();
  }
  *cap = n;
  return p;
}

void stream_init(struct stream *s) { memset(s, 0, sizeof *s); }

void stream_free(struct stream *s) {
  free(s->bytes);
  memset(s, 0, sizeof *s);
}

struct loom_insn stream_insn(uint32_t opcode, unsigned tok) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = opcode;
  in.pop_prev = !!(tok & STREAM_POP_PREV);
  in.pop_next = !!(tok & STREAM_POP_NEXT);
  in.push_prev = !!(tok & STREAM_PUSH_PREV);
  in.push_next = !!(tok & STREAM_PUSH_NEXT);
  return in;
}

uint32_t stream_emit_raw(struct stream *s, const uint8_t bytes[LOOM_INSN_BYTES]) {
  s->bytes = grow(s->bytes, &s->cap, s->count + 1, LOOM_INSN_BYTES);
  memcpy(s->bytes + (size_t)s->count * LOOM_INSN_BYTES, bytes, LOOM_INSN_BYTES);
  return s->count++;
}

uint32_t stream_emit(struct stream *s, const struct loom_insn *in) {
  uint8_t bytes[LOOM_INSN_BYTES];
  const char *bad = "?";
  if (loom_insn_encode(in, bytes, &bad) != 0) {
    if (!s->error) {
      s->error = bad;
      s->error_index = s->count;
    }
    return UINT32_MAX;
  }
  return stream_emit_raw(s, bytes);
}

uint8_t *stream_at(struct stream *s, uint32_t index) {
  return index < s->count ? s->bytes + (size_t)index * LOOM_INSN_BYTES : NULL;
}

static uint32_t emit_mem(struct stream *s, uint32_t opcode, unsigned tok,
                         const struct loom_insn_mem *m) {
  struct loom_insn in = stream_insn(opcode, tok);
  in.mem = *m;
  return stream_emit(s, &in);
}

uint32_t stream_load_2d(struct stream *s, unsigned tok, const struct loom_insn_mem *m) {
  return emit_mem(s, LOOM_OP_LOAD, tok, m);
}

uint32_t stream_store_2d(struct stream *s, unsigned tok, const struct loom_insn_mem *m) {
  return emit_mem(s, LOOM_OP_STORE, tok, m);
}

uint32_t stream_load(struct stream *s, unsigned tok, uint32_t buffer, uint32_t sram_base,
                     uint32_t segment, uint32_t dram_offset, uint32_t rows) {
  struct loom_insn_mem m = {.buffer = buffer, .sram_base = sram_base, .segment = segment,
                            .dram_offset = dram_offset, .y_size = 1, .x_size = rows,
                            .x_stride = rows};
  return emit_mem(s, LOOM_OP_LOAD, tok, &m);
}

uint32_t stream_store(struct stream *s, unsigned tok, uint32_t sram_base, uint32_t segment,
                      uint32_t dram_offset, uint32_t rows) {
  struct loom_insn_mem m = {.buffer = LOOM_BUF_OUT, .sram_base = sram_base, .segment = segment,
                            .dram_offset = dram_offset, .y_size = 1, .x_size = rows,
                            .x_stride = rows};
  return emit_mem(s, LOOM_OP_STORE, tok, &m);
}

uint32_t stream_gemm(struct stream *s, unsigned tok, const struct loom_insn_gemm *g) {
  struct loom_insn in = stream_insn(LOOM_OP_GEMM, tok);
  in.gemm = *g;
  return stream_emit(s, &in);
}

uint32_t stream_gemm_range(struct stream *s, unsigned tok, uint32_t reset, uint32_t uop_begin,
                           uint32_t uop_end) {
  struct loom_insn_gemm g = {.reset = reset, .uop_begin = uop_begin, .uop_end = uop_end,
                             .iter_out = 1, .iter_in = 1};
  return stream_gemm(s, tok, &g);
}

uint32_t stream_alu(struct stream *s, unsigned tok, const struct loom_insn_alu *a) {
  struct loom_insn in = stream_insn(LOOM_OP_ALU, tok);
  in.alu = *a;
  return stream_emit(s, &in);
}

uint32_t stream_alu_range(struct stream *s, unsigned tok, uint32_t op, uint32_t use_imm,
                          int32_t imm, uint32_t uop_begin, uint32_t uop_end) {
  struct loom_insn_alu a = {.alu_op = op, .use_imm = use_imm, .imm = imm, .uop_begin = uop_begin,
                            .uop_end = uop_end, .iter_out = 1, .iter_in = 1};
  return stream_alu(s, tok, &a);
}

uint32_t stream_qcfg(struct stream *s, unsigned tok, const struct loom_insn_qcfg *q) {
  struct loom_insn in = stream_insn(LOOM_OP_QCFG, tok);
  in.qcfg = *q;
  return stream_emit(s, &in);
}

uint32_t stream_finish(struct stream *s, unsigned tok) {
  struct loom_insn in = stream_insn(LOOM_OP_FINISH, tok);
  return stream_emit(s, &in);
}

uint32_t stream_nop(struct stream *s, unsigned tok, uint32_t queue) {
  struct loom_insn in = stream_insn(LOOM_OP_NOP, tok);
  in.nop.queue = queue;
  return stream_emit(s, &in);
}

void stream_uops_init(struct stream_uops *u) { memset(u, 0, sizeof *u); }

void stream_uops_free(struct stream_uops *u) {
  free(u->bytes);
  memset(u, 0, sizeof *u);
}

uint32_t stream_uops_add(struct stream_uops *u, uint32_t acc, uint32_t inp, uint32_t wgt) {
  struct loom_uop op = {.acc = acc, .inp = inp, .wgt = wgt};
  u->bytes = grow(u->bytes, &u->cap, u->count + 1, LOOM_UOP_BYTES);
  if (loom_uop_encode(&op, u->bytes + (size_t)u->count * LOOM_UOP_BYTES) != 0) u->error = 1;
  return u->count++;
}
