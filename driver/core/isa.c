/*
 * isa.c - instruction and micro-op codec.
 *
 * Bit positions come only from the generated loom_isa_gen.h.  Encoding
 * refuses values that do not fit their field instead of truncating, so a
 * compiler bug cannot silently produce a different program.  Decoding is
 * the legality check fetch performs in hardware: it is the reference for
 * which encodings raise LOOM_ERR_ILLEGAL.
 */
#include "loom/isa.h"

#include <string.h>

uint64_t loom_bits_get(const uint8_t *bytes, unsigned lsb, unsigned width) {
  uint64_t v = 0;
  for (unsigned i = 0; i < width; i++) {
    unsigned b = lsb + i;
    v |= (uint64_t)((bytes[b >> 3] >> (b & 7)) & 1u) << i;
  }
  return v;
}

void loom_bits_set(uint8_t *bytes, unsigned lsb, unsigned width, uint64_t value) {
  for (unsigned i = 0; i < width; i++) {
    unsigned b = lsb + i;
    uint8_t m = (uint8_t)(1u << (b & 7));
    if ((value >> i) & 1u) bytes[b >> 3] |= m;
    else bytes[b >> 3] &= (uint8_t)~m;
  }
}

/* True when `v` fits an unsigned (or two's complement signed) field. */
static int fits(int64_t v, unsigned width, int is_signed) {
  if (is_signed) return v >= -(INT64_C(1) << (width - 1)) && v < (INT64_C(1) << (width - 1));
  return v >= 0 && v < (INT64_C(1) << width);
}

static int64_t sext(uint64_t v, unsigned width) {
  uint64_t sign = UINT64_C(1) << (width - 1);
  return (int64_t)((v ^ sign) - sign);
}

#define PUT(FMT, NAME, val, name_str)                                                    \
  do {                                                                                   \
    int64_t v_ = (int64_t)(val);                                                         \
    if (!fits(v_, LOOM_##FMT##_##NAME##_WIDTH, LOOM_##FMT##_##NAME##_SIGNED)) {           \
      if (bad_field) *bad_field = name_str;                                              \
      return -1;                                                                         \
    }                                                                                    \
    loom_bits_set(out, LOOM_##FMT##_##NAME##_LSB, LOOM_##FMT##_##NAME##_WIDTH, (uint64_t)v_); \
  } while (0)

#define GETU(FMT, NAME) ((uint32_t)loom_bits_get(in, LOOM_##FMT##_##NAME##_LSB, LOOM_##FMT##_##NAME##_WIDTH))
#define GETS(FMT, NAME) \
  ((int32_t)sext(loom_bits_get(in, LOOM_##FMT##_##NAME##_LSB, LOOM_##FMT##_##NAME##_WIDTH), LOOM_##FMT##_##NAME##_WIDTH))

static int encode_mem(const struct loom_insn_mem *m, uint8_t *out, const char **bad_field) {
  PUT(MEM, BUFFER, m->buffer, "buffer");
  PUT(MEM, SRAM_BASE, m->sram_base, "sram_base");
  PUT(MEM, SEGMENT, m->segment, "segment");
  PUT(MEM, DRAM_OFFSET, m->dram_offset, "dram_offset");
  PUT(MEM, Y_SIZE, m->y_size, "y_size");
  PUT(MEM, X_SIZE, m->x_size, "x_size");
  PUT(MEM, X_STRIDE, m->x_stride, "x_stride");
  PUT(MEM, Y_PAD_TOP, m->y_pad_top, "y_pad_top");
  PUT(MEM, Y_PAD_BOTTOM, m->y_pad_bottom, "y_pad_bottom");
  PUT(MEM, X_PAD_LEFT, m->x_pad_left, "x_pad_left");
  PUT(MEM, X_PAD_RIGHT, m->x_pad_right, "x_pad_right");
  PUT(MEM, PAD_VALUE, m->pad_value, "pad_value");
  PUT(MEM, SRC_INT8, m->src_int8, "src_int8");
  PUT(MEM, SRC_OUT, m->src_out, "src_out");
  PUT(MEM, WGT_TRANSPOSE, m->wgt_transpose, "wgt_transpose");
  return 0;
}

static int encode_gemm(const struct loom_insn_gemm *g, uint8_t *out, const char **bad_field) {
  PUT(GEMM, RESET, g->reset, "reset");
  PUT(GEMM, FIRST, g->first, "first");
  PUT(GEMM, LAST, g->last, "last");
  PUT(GEMM, DW, g->dw, "dw");
  PUT(GEMM, UOP_BEGIN, g->uop_begin, "uop_begin");
  PUT(GEMM, UOP_END, g->uop_end, "uop_end");
  PUT(GEMM, ITER_OUT, g->iter_out, "iter_out");
  PUT(GEMM, ITER_IN, g->iter_in, "iter_in");
  PUT(GEMM, ACC_FACTOR_OUT, g->acc_factor_out, "acc_factor_out");
  PUT(GEMM, ACC_FACTOR_IN, g->acc_factor_in, "acc_factor_in");
  PUT(GEMM, INP_FACTOR_OUT, g->inp_factor_out, "inp_factor_out");
  PUT(GEMM, INP_FACTOR_IN, g->inp_factor_in, "inp_factor_in");
  PUT(GEMM, WGT_FACTOR_OUT, g->wgt_factor_out, "wgt_factor_out");
  PUT(GEMM, WGT_FACTOR_IN, g->wgt_factor_in, "wgt_factor_in");
  return 0;
}

static int encode_alu(const struct loom_insn_alu *a, uint8_t *out, const char **bad_field) {
  PUT(ALU, ALU_OP, a->alu_op, "alu_op");
  PUT(ALU, USE_IMM, a->use_imm, "use_imm");
  PUT(ALU, IMM, a->imm, "imm");
  PUT(ALU, UOP_BEGIN, a->uop_begin, "uop_begin");
  PUT(ALU, UOP_END, a->uop_end, "uop_end");
  PUT(ALU, ITER_OUT, a->iter_out, "iter_out");
  PUT(ALU, ITER_IN, a->iter_in, "iter_in");
  PUT(ALU, DST_FACTOR_OUT, a->dst_factor_out, "dst_factor_out");
  PUT(ALU, DST_FACTOR_IN, a->dst_factor_in, "dst_factor_in");
  PUT(ALU, SRC_FACTOR_OUT, a->src_factor_out, "src_factor_out");
  PUT(ALU, SRC_FACTOR_IN, a->src_factor_in, "src_factor_in");
  return 0;
}

static int encode_qcfg(const struct loom_insn_qcfg *q, uint8_t *out, const char **bad_field) {
  PUT(QCFG, MULTIPLIER, q->multiplier, "multiplier");
  PUT(QCFG, SHIFT, q->shift, "shift");
  PUT(QCFG, ZERO_POINT, q->zero_point, "zero_point");
  PUT(QCFG, CLAMP_LO, q->clamp_lo, "clamp_lo");
  PUT(QCFG, CLAMP_HI, q->clamp_hi, "clamp_hi");
  PUT(QCFG, ROUND_EVEN, q->round_even, "round_even");
  PUT(QCFG, BIAS, q->bias, "bias");
  PUT(QCFG, PAR_SRC, q->par_src, "par_src");
  PUT(QCFG, ACT, q->act, "act");
  PUT(QCFG, PAR_BASE, q->par_base, "par_base");
  return 0;
}

static int encode_gcfg(const struct loom_insn_gcfg *g, uint8_t *out, const char **bad_field) {
  PUT(GCFG, PERIOD, g->period, "period");
  PUT(GCFG, DW_KH, g->dw_kh, "dw_kh");
  PUT(GCFG, DW_KW, g->dw_kw, "dw_kw");
  PUT(GCFG, DW_ROW, g->dw_row, "dw_row");
  PUT(GCFG, DW_COL, g->dw_col, "dw_col");
  return 0;
}

int loom_insn_encode(const struct loom_insn *in, uint8_t out[LOOM_INSN_BYTES],
                     const char **bad_field) {
  memset(out, 0, LOOM_INSN_BYTES);
  PUT(COMMON, OPCODE, in->opcode, "opcode");
  PUT(COMMON, POP_PREV, in->pop_prev, "pop_prev");
  PUT(COMMON, POP_NEXT, in->pop_next, "pop_next");
  PUT(COMMON, PUSH_PREV, in->push_prev, "push_prev");
  PUT(COMMON, PUSH_NEXT, in->push_next, "push_next");
  switch (in->opcode) {
  case LOOM_OP_LOAD:
  case LOOM_OP_STORE: return encode_mem(&in->mem, out, bad_field);
  case LOOM_OP_GEMM: return encode_gemm(&in->gemm, out, bad_field);
  case LOOM_OP_ALU: return encode_alu(&in->alu, out, bad_field);
  case LOOM_OP_QCFG: return encode_qcfg(&in->qcfg, out, bad_field);
  case LOOM_OP_GCFG: return encode_gcfg(&in->gcfg, out, bad_field);
  case LOOM_OP_FINISH: return 0;
  case LOOM_OP_NOP: PUT(NOP, QUEUE, in->nop.queue, "queue"); return 0;
  default:
    if (bad_field) *bad_field = "opcode";
    return -1;
  }
}

static void decode_mem(const uint8_t *in, struct loom_insn_mem *m) {
  m->buffer = GETU(MEM, BUFFER);
  m->sram_base = GETU(MEM, SRAM_BASE);
  m->segment = GETU(MEM, SEGMENT);
  m->dram_offset = GETU(MEM, DRAM_OFFSET);
  m->y_size = GETU(MEM, Y_SIZE);
  m->x_size = GETU(MEM, X_SIZE);
  m->x_stride = GETU(MEM, X_STRIDE);
  m->y_pad_top = GETU(MEM, Y_PAD_TOP);
  m->y_pad_bottom = GETU(MEM, Y_PAD_BOTTOM);
  m->x_pad_left = GETU(MEM, X_PAD_LEFT);
  m->x_pad_right = GETU(MEM, X_PAD_RIGHT);
  m->pad_value = GETS(MEM, PAD_VALUE);
  m->src_int8 = GETU(MEM, SRC_INT8);
  m->src_out = GETU(MEM, SRC_OUT);
  m->wgt_transpose = GETU(MEM, WGT_TRANSPOSE);
}

static void decode_gemm(const uint8_t *in, struct loom_insn_gemm *g) {
  g->reset = GETU(GEMM, RESET);
  g->first = GETU(GEMM, FIRST);
  g->last = GETU(GEMM, LAST);
  g->dw = GETU(GEMM, DW);
  g->uop_begin = GETU(GEMM, UOP_BEGIN);
  g->uop_end = GETU(GEMM, UOP_END);
  g->iter_out = GETU(GEMM, ITER_OUT);
  g->iter_in = GETU(GEMM, ITER_IN);
  g->acc_factor_out = GETU(GEMM, ACC_FACTOR_OUT);
  g->acc_factor_in = GETU(GEMM, ACC_FACTOR_IN);
  g->inp_factor_out = GETU(GEMM, INP_FACTOR_OUT);
  g->inp_factor_in = GETU(GEMM, INP_FACTOR_IN);
  g->wgt_factor_out = GETU(GEMM, WGT_FACTOR_OUT);
  g->wgt_factor_in = GETU(GEMM, WGT_FACTOR_IN);
}

static void decode_alu(const uint8_t *in, struct loom_insn_alu *a) {
  a->alu_op = GETU(ALU, ALU_OP);
  a->use_imm = GETU(ALU, USE_IMM);
  a->imm = GETS(ALU, IMM);
  a->uop_begin = GETU(ALU, UOP_BEGIN);
  a->uop_end = GETU(ALU, UOP_END);
  a->iter_out = GETU(ALU, ITER_OUT);
  a->iter_in = GETU(ALU, ITER_IN);
  a->dst_factor_out = GETU(ALU, DST_FACTOR_OUT);
  a->dst_factor_in = GETU(ALU, DST_FACTOR_IN);
  a->src_factor_out = GETU(ALU, SRC_FACTOR_OUT);
  a->src_factor_in = GETU(ALU, SRC_FACTOR_IN);
}

static void decode_qcfg(const uint8_t *in, struct loom_insn_qcfg *q) {
  q->multiplier = GETS(QCFG, MULTIPLIER);
  q->shift = GETU(QCFG, SHIFT);
  q->zero_point = GETS(QCFG, ZERO_POINT);
  q->clamp_lo = GETS(QCFG, CLAMP_LO);
  q->clamp_hi = GETS(QCFG, CLAMP_HI);
  q->round_even = GETU(QCFG, ROUND_EVEN);
  q->bias = GETS(QCFG, BIAS);
  q->par_src = GETU(QCFG, PAR_SRC);
  q->act = GETU(QCFG, ACT);
  q->par_base = GETU(QCFG, PAR_BASE);
}

static void decode_gcfg(const uint8_t *in, struct loom_insn_gcfg *g) {
  g->period = GETU(GCFG, PERIOD);
  g->dw_kh = GETU(GCFG, DW_KH);
  g->dw_kw = GETU(GCFG, DW_KW);
  g->dw_row = GETU(GCFG, DW_ROW);
  g->dw_col = GETU(GCFG, DW_COL);
}

/* True when every bit in [lsb, lsb + width) is zero. */
static int bits_zero(const uint8_t *in, unsigned lsb, unsigned width) {
  for (unsigned i = 0; i < width; i += 64) {
    unsigned w = width - i < 64 ? width - i : 64;
    if (loom_bits_get(in, lsb + i, w)) return 0;
  }
  return 1;
}

#define RESERVED_ZERO(FMT) bits_zero(in, LOOM_##FMT##_RESERVED_LSB, LOOM_##FMT##_RESERVED_WIDTH)

static int illegal(const char **why, const char *text) {
  if (why) *why = text;
  return LOOM_ERR_ILLEGAL;
}

/* Token flags each queue has: load has no previous module, store no next. */
static int check_tokens(const struct loom_insn *d, const char **why) {
  int q = loom_insn_queue(d);
  if (q == LOOM_Q_LOAD && (d->pop_prev || d->push_prev))
    return illegal(why, "load-queue instruction uses a prev token");
  if (q == LOOM_Q_STORE && (d->pop_next || d->push_next))
    return illegal(why, "store-queue instruction uses a next token");
  return LOOM_ERR_NONE;
}

static int check_mem(const uint8_t *in, const struct loom_insn *d, const char **why) {
  const struct loom_insn_mem *m = &d->mem;
  int pads = m->y_pad_top || m->y_pad_bottom || m->x_pad_left || m->x_pad_right;
  if (d->opcode == LOOM_OP_STORE) {
    if (m->buffer != LOOM_BUF_OUT) return illegal(why, "STORE reads only the OUT buffer");
    if (pads || m->src_int8 || m->pad_value) return illegal(why, "STORE has padding fields set");
    if (m->src_out) return illegal(why, "src_out on a STORE");
    if (m->wgt_transpose) return illegal(why, "wgt_transpose on a STORE");
    return LOOM_ERR_NONE;
  }
  if (m->buffer == LOOM_BUF_OUT || m->buffer >= LOOM_BUF_COUNT)
    return illegal(why, "LOAD into an undefined or OUT buffer");
  if (pads && m->buffer != LOOM_BUF_INP && m->buffer != LOOM_BUF_ACC)
    return illegal(why, "padding on a UOP, WGT, PAR or LUT load");
  if (m->src_int8 && m->buffer != LOOM_BUF_ACC) return illegal(why, "src_int8 on a non-ACC load");
  if (m->src_out && m->buffer != LOOM_BUF_INP) return illegal(why, "src_out on a non-INP load");
  if (m->src_out && m->segment) return illegal(why, "src_out with a segment other than 0");
  if (m->wgt_transpose && m->buffer != LOOM_BUF_WGT) return illegal(why, "wgt_transpose on a non-WGT load");
  return LOOM_ERR_NONE;
}

int loom_insn_decode(const uint8_t in[LOOM_INSN_BYTES], struct loom_insn *out, const char **why) {
  memset(out, 0, sizeof *out);
  out->opcode = GETU(COMMON, OPCODE);
  out->pop_prev = GETU(COMMON, POP_PREV);
  out->pop_next = GETU(COMMON, POP_NEXT);
  out->push_prev = GETU(COMMON, PUSH_PREV);
  out->push_next = GETU(COMMON, PUSH_NEXT);
  switch (out->opcode) {
  case LOOM_OP_LOAD:
  case LOOM_OP_STORE:
    decode_mem(in, &out->mem);
    if (check_mem(in, out, why)) return LOOM_ERR_ILLEGAL;
    break;
  case LOOM_OP_GEMM:
    decode_gemm(in, &out->gemm);
    if (!RESERVED_ZERO(GEMM)) return illegal(why, "reserved bits set");
    if (out->gemm.reset && (out->gemm.first || out->gemm.last || out->gemm.dw))
      return illegal(why, "reset with first, last or dw");
    break;
  case LOOM_OP_ALU:
    decode_alu(in, &out->alu);
    if (!RESERVED_ZERO(ALU)) return illegal(why, "reserved bits set");
    if (out->alu.alu_op >= LOOM_ALU_COUNT) return illegal(why, "undefined ALU operation");
    break;
  case LOOM_OP_QCFG:
    decode_qcfg(in, &out->qcfg);
    if (!RESERVED_ZERO(QCFG)) return illegal(why, "reserved bits set");
    break;
  case LOOM_OP_GCFG:
    decode_gcfg(in, &out->gcfg);
    if (!RESERVED_ZERO(GCFG)) return illegal(why, "reserved bits set");
    break;
  case LOOM_OP_FINISH:
    if (!RESERVED_ZERO(FINISH)) return illegal(why, "reserved bits set");
    break;
  case LOOM_OP_NOP:
    out->nop.queue = GETU(NOP, QUEUE);
    if (!RESERVED_ZERO(NOP)) return illegal(why, "reserved bits set");
    if (out->nop.queue >= LOOM_Q_COUNT) return illegal(why, "undefined queue");
    break;
  default: return illegal(why, "undefined opcode");
  }
  return check_tokens(out, why);
}

uint32_t loom_dw_read_cycles(uint32_t x, uint32_t kh, uint32_t cols, uint32_t taps, uint32_t row, uint32_t col) {
  uint32_t cycles = 0, n = kh * cols < taps ? kh * cols : taps;
  for (uint32_t t = n; t > 0;) { /* taps n - 1 down to 0 */
    uint32_t i = t - 1, a = x + (i % kh) * row + (i / kh) * col;
    uint32_t b = i ? x + ((i - 1) % kh) * row + ((i - 1) / kh) * col : a;
    t -= i && (a ^ b) & 1 ? 2 : 1;
    cycles++;
  }
  return cycles;
}

uint64_t loom_dw_gemm_cycles(const struct loom_insn_gemm *g, const struct loom_insn_gcfg *gc,
                             const struct loom_uop *uops, uint32_t block_in) {
  uint64_t cycles = 0, taps = (uint64_t)gc->dw_kh * gc->dw_kw;
  uint32_t prev = 0;
  int have_prev = 0;
  if (taps > block_in) taps = block_in;
  for (uint32_t i = 0; i < g->iter_out; i++)
    for (uint32_t j = 0; j < g->iter_in; j++)
      for (uint32_t u = g->uop_begin; u < g->uop_end; u++) {
        uint32_t x = uops[u].inp + i * g->inp_factor_out + j * g->inp_factor_in, cols = gc->dw_kw;
        for (uint32_t n = 1; have_prev && gc->dw_col && n < gc->dw_kw && n <= 2 && cols == gc->dw_kw; n++)
          if ((uint64_t)x + (uint64_t)n * gc->dw_col == prev) cols = n;
        uint32_t r = loom_dw_read_cycles(x, gc->dw_kh, cols, (uint32_t)taps, gc->dw_row, gc->dw_col);
        cycles += r > 2 ? r : 2;
        prev = x, have_prev = 1;
      }
  return cycles;
}

int loom_insn_queue(const struct loom_insn *in) {
  switch (in->opcode) {
  case LOOM_OP_LOAD:
    return in->mem.buffer == LOOM_BUF_UOP || in->mem.buffer == LOOM_BUF_ACC ? LOOM_Q_COMPUTE : LOOM_Q_LOAD;
  case LOOM_OP_STORE: return LOOM_Q_STORE;
  case LOOM_OP_NOP: return (int)in->nop.queue;
  default: return LOOM_Q_COMPUTE;
  }
}

int loom_uop_encode(const struct loom_uop *in, uint8_t out[LOOM_UOP_BYTES]) {
  const char **bad_field = NULL;
  memset(out, 0, LOOM_UOP_BYTES);
  PUT(UOP, ACC, in->acc, "acc");
  PUT(UOP, INP, in->inp, "inp");
  PUT(UOP, WGT, in->wgt, "wgt");
  return 0;
}

void loom_uop_decode(const uint8_t in[LOOM_UOP_BYTES], struct loom_uop *out) {
  out->acc = GETU(UOP, ACC);
  out->inp = GETU(UOP, INP);
  out->wgt = GETU(UOP, WGT);
}

/* ---- names: the tables are generated next to the enums they name ---- */

#define NAME_LOOKUP(fn, table, count)                          \
  const char *fn(uint32_t v) { return v < (count) ? table[v] : "?"; }

NAME_LOOKUP(loom_opcode_name, loom_opcode_names, LOOM_OP_COUNT)
NAME_LOOKUP(loom_buffer_name, loom_buffer_names, LOOM_BUF_COUNT)
NAME_LOOKUP(loom_queue_name, loom_queue_names, LOOM_Q_COUNT)
NAME_LOOKUP(loom_alu_op_name, loom_alu_op_names, LOOM_ALU_COUNT)
NAME_LOOKUP(loom_error_name, loom_error_names, LOOM_ERR_COUNT)
NAME_LOOKUP(loom_error_text, loom_error_texts, LOOM_ERR_COUNT)
NAME_LOOKUP(loom_counter_name, loom_counter_names, LOOM_CNT_COUNT)
