/*
 * test_isa.c - the instruction and micro-op codec (driver/core/isa.c)
 * against the field table of docs/isa.md.
 *
 * The field table below restates every field's format, position, width and
 * signedness by hand from docs/isa.md, independently of the generated
 * macros, so a drift between the document and hw/spec/loom_isa.def shows up
 * here.  Each field is encoded at 0, 1 and its maximum (and minimum and -1
 * when signed): the value must land at exactly its bits and nowhere else,
 * decode must give the same struct back, and one step out of range must be
 * refused with the field's name.  Then the legality rules decode enforces,
 * queue routing, micro-ops and the name tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "loom/isa.h"

struct field_case {
  const char *format; /* for messages */
  const char *name;   /* what loom_insn_encode's bad_field says */
  uint32_t opcode;
  uint32_t buffer;    /* for MEM: the buffer of the base instruction */
  size_t offset;      /* of the uint32_t / int32_t member in struct loom_insn */
  unsigned lsb, width;
  int is_signed;
};

#define F(FMT, op, buf, member, name, lsb, width, sgn) \
  {FMT, name, op, buf, offsetof(struct loom_insn, member), lsb, width, sgn}

/* docs/isa.md, "Instruction encoding".  MEM fields ride on a LOAD ACC, where
 * padding and src_int8 are legal. */
static const struct field_case fields[] = {
    F("COMMON", LOOM_OP_GEMM, 0, pop_prev, "pop_prev", 3, 1, 0),
    F("COMMON", LOOM_OP_GEMM, 0, pop_next, "pop_next", 4, 1, 0),
    F("COMMON", LOOM_OP_GEMM, 0, push_prev, "push_prev", 5, 1, 0),
    F("COMMON", LOOM_OP_GEMM, 0, push_next, "push_next", 6, 1, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.buffer, "buffer", 7, 3, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.sram_base, "sram_base", 10, 16, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.segment, "segment", 26, 3, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.dram_offset, "dram_offset", 29, 28, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.y_size, "y_size", 57, 16, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.x_size, "x_size", 73, 16, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.x_stride, "x_stride", 89, 16, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.y_pad_top, "y_pad_top", 105, 3, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.y_pad_bottom, "y_pad_bottom", 108, 3, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.x_pad_left, "x_pad_left", 111, 3, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.x_pad_right, "x_pad_right", 114, 3, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.pad_value, "pad_value", 117, 8, 1),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_ACC, mem.src_int8, "src_int8", 125, 1, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_INP, mem.src_out, "src_out", 126, 1, 0),
    F("MEM", LOOM_OP_LOAD, LOOM_BUF_WGT, mem.wgt_transpose, "wgt_transpose", 127, 1, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.reset, "reset", 7, 1, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.first, "first", 8, 1, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.last, "last", 9, 1, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.dw, "dw", 10, 1, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.uop_begin, "uop_begin", 11, 13, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.uop_end, "uop_end", 24, 14, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.iter_out, "iter_out", 38, 12, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.iter_in, "iter_in", 50, 12, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.acc_factor_out, "acc_factor_out", 62, 11, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.acc_factor_in, "acc_factor_in", 73, 11, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.inp_factor_out, "inp_factor_out", 84, 11, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.inp_factor_in, "inp_factor_in", 95, 11, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.wgt_factor_out, "wgt_factor_out", 106, 10, 0),
    F("GEMM", LOOM_OP_GEMM, 0, gemm.wgt_factor_in, "wgt_factor_in", 116, 10, 0),
    F("ALU", LOOM_OP_ALU, 0, alu.alu_op, "alu_op", 7, 3, 0),
    F("ALU", LOOM_OP_ALU, 0, alu.use_imm, "use_imm", 10, 1, 0),
    F("ALU", LOOM_OP_ALU, 0, alu.imm, "imm", 11, 16, 1),
    F("ALU", LOOM_OP_ALU, 0, alu.uop_begin, "uop_begin", 27, 13, 0),
    F("ALU", LOOM_OP_ALU, 0, alu.uop_end, "uop_end", 40, 14, 0),
    F("ALU", LOOM_OP_ALU, 0, alu.iter_out, "iter_out", 54, 14, 0),
    F("ALU", LOOM_OP_ALU, 0, alu.iter_in, "iter_in", 68, 14, 0),
    F("ALU", LOOM_OP_ALU, 0, alu.dst_factor_out, "dst_factor_out", 82, 11, 0),
    F("ALU", LOOM_OP_ALU, 0, alu.dst_factor_in, "dst_factor_in", 93, 11, 0),
    F("ALU", LOOM_OP_ALU, 0, alu.src_factor_out, "src_factor_out", 104, 11, 0),
    F("ALU", LOOM_OP_ALU, 0, alu.src_factor_in, "src_factor_in", 115, 11, 0),
    F("QCFG", LOOM_OP_QCFG, 0, qcfg.multiplier, "multiplier", 7, 32, 1),
    F("QCFG", LOOM_OP_QCFG, 0, qcfg.shift, "shift", 39, 6, 0),
    F("QCFG", LOOM_OP_QCFG, 0, qcfg.zero_point, "zero_point", 45, 8, 1),
    F("QCFG", LOOM_OP_QCFG, 0, qcfg.clamp_lo, "clamp_lo", 53, 8, 1),
    F("QCFG", LOOM_OP_QCFG, 0, qcfg.clamp_hi, "clamp_hi", 61, 8, 1),
    F("QCFG", LOOM_OP_QCFG, 0, qcfg.round_even, "round_even", 69, 1, 0),
    F("QCFG", LOOM_OP_QCFG, 0, qcfg.bias, "bias", 70, 32, 1),
    F("QCFG", LOOM_OP_QCFG, 0, qcfg.par_src, "par_src", 102, 1, 0),
    F("QCFG", LOOM_OP_QCFG, 0, qcfg.act, "act", 103, 1, 0),
    F("QCFG", LOOM_OP_QCFG, 0, qcfg.par_base, "par_base", 104, 8, 0),
    F("NOP", LOOM_OP_NOP, 0, nop.queue, "queue", 7, 2, 0),
    F("GCFG", LOOM_OP_GCFG, 0, gcfg.period, "period", 7, 6, 0),
    F("GCFG", LOOM_OP_GCFG, 0, gcfg.dw_kh, "dw_kh", 13, 4, 0),
    F("GCFG", LOOM_OP_GCFG, 0, gcfg.dw_kw, "dw_kw", 17, 4, 0),
    F("GCFG", LOOM_OP_GCFG, 0, gcfg.dw_row, "dw_row", 21, 12, 0),
    F("GCFG", LOOM_OP_GCFG, 0, gcfg.dw_col, "dw_col", 33, 12, 0),
};

#define NFIELDS (sizeof fields / sizeof fields[0])

static struct loom_insn base_insn(const struct field_case *f) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = f->opcode;
  if (f->opcode == LOOM_OP_LOAD) in.mem.buffer = f->buffer;
  if (f->opcode == LOOM_OP_NOP) in.nop.queue = LOOM_Q_COMPUTE;
  return in;
}

static void set_field(struct loom_insn *in, const struct field_case *f, int64_t v) {
  uint32_t u = (uint32_t)v; /* int32_t members share the representation */
  memcpy((char *)in + f->offset, &u, sizeof u);
}

/* Values whose decode is illegal although they encode: undefined codes. */
static int decode_illegal(const struct field_case *f, int64_t v) {
  if (!strcmp(f->name, "buffer")) return v == LOOM_BUF_OUT || v >= LOOM_BUF_COUNT; /* LOAD of OUT or undefined */
  if (!strcmp(f->name, "alu_op")) return v >= LOOM_ALU_COUNT;
  if (!strcmp(f->name, "queue")) return v >= LOOM_Q_COUNT;
  return 0;
}

/* LOAD UOP/WGT/INP (buffers 0..2) with the base's zero padding stay legal;
 * the round trip must restore the struct exactly. */
static void check_value(const struct field_case *f, int64_t v) {
  struct loom_insn in = base_insn(f), zero = base_insn(f), out;
  uint8_t bytes[LOOM_INSN_BYTES], zbytes[LOOM_INSN_BYTES];
  set_field(&in, f, v);
  set_field(&zero, f, 0);
  const char *bad = NULL;
  assert_int_equal(loom_insn_encode(&in, bytes, &bad), 0);
  assert_int_equal(loom_insn_encode(&zero, zbytes, &bad), 0);
  uint64_t mask = f->width == 64 ? ~UINT64_C(0) : (UINT64_C(1) << f->width) - 1;
  assert_int_equal(loom_bits_get(bytes, f->lsb, f->width), (uint64_t)v & mask);
  loom_bits_set(bytes, f->lsb, f->width, 0); /* nothing outside the field changed */
  assert_memory_equal(bytes, zbytes, LOOM_INSN_BYTES);
  loom_bits_set(bytes, f->lsb, f->width, (uint64_t)v & mask);
  const char *why = NULL;
  int err = loom_insn_decode(bytes, &out, &why);
  if (decode_illegal(f, v)) {
    assert_int_equal(err, LOOM_ERR_ILLEGAL);
    return;
  }
  if (err) fail_msg("%s.%s = %lld: decode says %s", f->format, f->name, (long long)v, why);
  assert_memory_equal(&in, &out, sizeof in);
}

static void check_rejected(const struct field_case *f, int64_t v) {
  struct loom_insn in = base_insn(f);
  uint8_t bytes[LOOM_INSN_BYTES];
  const char *bad = NULL;
  set_field(&in, f, v);
  if (loom_insn_encode(&in, bytes, &bad) != -1)
    fail_msg("%s.%s = %lld encoded", f->format, f->name, (long long)v);
  assert_non_null(bad);
  assert_string_equal(bad, f->name);
}

static void test_every_field_round_trips_at_0_1_and_max(void **state) {
  for (size_t i = 0; i < NFIELDS; i++) {
    const struct field_case *f = &fields[i];
    int64_t max = f->is_signed ? (INT64_C(1) << (f->width - 1)) - 1 : (INT64_C(1) << f->width) - 1;
    check_value(f, 0);
    check_value(f, 1);
    check_value(f, max);
    if (f->is_signed) {
      check_value(f, -1);
      check_value(f, -(INT64_C(1) << (f->width - 1)));
    }
  }
}

static void test_encode_rejects_out_of_range_naming_the_field(void **state) {
  for (size_t i = 0; i < NFIELDS; i++) {
    const struct field_case *f = &fields[i];
    if (f->width >= 32) {
      /* a 32-bit signed field cannot be given an out-of-range int32 */
      assert_true(f->is_signed);
      continue;
    }
    if (f->is_signed) {
      check_rejected(f, INT64_C(1) << (f->width - 1));
      check_rejected(f, -(INT64_C(1) << (f->width - 1)) - 1);
    } else {
      check_rejected(f, INT64_C(1) << f->width);
      if (f->width < 32) check_rejected(f, (int64_t)UINT32_MAX);
    }
  }
}

static void test_encode_rejects_undefined_opcode(void **state) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  uint8_t bytes[LOOM_INSN_BYTES];
  const char *bad = NULL;
  in.opcode = LOOM_OP_COUNT;
  assert_int_equal(loom_insn_encode(&in, bytes, &bad), -1);
  assert_string_equal(bad, "opcode");
  in.opcode = 8;
  bad = NULL;
  assert_int_equal(loom_insn_encode(&in, bytes, &bad), -1);
  assert_string_equal(bad, "opcode");
}

static void test_store_and_finish_round_trip(void **state) {
  struct loom_insn in, out;
  uint8_t bytes[LOOM_INSN_BYTES];
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_STORE;
  in.pop_prev = in.push_prev = 1;
  in.mem = (struct loom_insn_mem){.buffer = LOOM_BUF_OUT, .sram_base = 65535, .segment = 7,
                                  .dram_offset = (1u << 28) - 1, .y_size = 65535,
                                  .x_size = 65535, .x_stride = 65535};
  assert_int_equal(loom_insn_encode(&in, bytes, NULL), 0);
  assert_int_equal(loom_insn_decode(bytes, &out, NULL), LOOM_ERR_NONE);
  assert_memory_equal(&in, &out, sizeof in);
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_FINISH;
  in.pop_prev = in.pop_next = 1;
  assert_int_equal(loom_insn_encode(&in, bytes, NULL), 0);
  assert_int_equal(loom_bits_get(bytes, 0, 3), LOOM_OP_FINISH);
  assert_int_equal(loom_insn_decode(bytes, &out, NULL), LOOM_ERR_NONE);
  assert_memory_equal(&in, &out, sizeof in);
}

static void test_opcode_and_bit_order_are_little_endian(void **state) {
  uint8_t bytes[LOOM_INSN_BYTES];
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_NOP; /* 6 = 0b110 in bits 0..2 */
  in.push_next = 1;        /* bit 6 */
  in.nop.queue = 2;        /* bits 7..8: bit 8 set = byte 1 bit 0 */
  assert_int_equal(loom_insn_encode(&in, bytes, NULL), 0);
  assert_int_equal(bytes[0], 0x46);
  assert_int_equal(bytes[1], 0x01);
  for (int i = 2; i < LOOM_INSN_BYTES; i++) assert_int_equal(bytes[i], 0);
}

static void test_bits_get_set_cross_byte_boundaries(void **state) {
  uint8_t b[LOOM_INSN_BYTES];
  memset(b, 0, sizeof b);
  loom_bits_set(b, 61, 64, UINT64_C(0xFEDCBA9876543210));
  assert_int_equal(loom_bits_get(b, 61, 64), UINT64_C(0xFEDCBA9876543210));
  assert_int_equal(loom_bits_get(b, 0, 61), 0);
  assert_int_equal(loom_bits_get(b, 125, 3), 0);
  loom_bits_set(b, 61, 64, 0);
  for (int i = 0; i < LOOM_INSN_BYTES; i++) assert_int_equal(b[i], 0);
}

/* ---- decode legality ---- */

static int decode_bytes(const uint8_t *bytes) {
  struct loom_insn out;
  const char *why = NULL;
  int err = loom_insn_decode(bytes, &out, &why);
  if (err) assert_non_null(why);
  return err;
}

static int decode_insn(const struct loom_insn *in) {
  uint8_t bytes[LOOM_INSN_BYTES];
  assert_int_equal(loom_insn_encode(in, bytes, NULL), 0);
  return decode_bytes(bytes);
}

static struct loom_insn mem_insn(uint32_t opcode, uint32_t buffer) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = opcode;
  in.mem.buffer = buffer;
  return in;
}

/* ISA v2 defines all eight opcodes (7 is GCFG): an all-zero GCFG is legal. */
static void test_decode_every_opcode_is_defined(void **state) {
  for (uint32_t op = 0; op < 8; op++) {
    uint8_t bytes[LOOM_INSN_BYTES] = {0};
    loom_bits_set(bytes, 0, 3, op);
    if (op == LOOM_OP_NOP) loom_bits_set(bytes, 7, 2, LOOM_Q_COMPUTE);
    if (op == LOOM_OP_STORE) loom_bits_set(bytes, 7, 3, LOOM_BUF_OUT);
    assert_int_equal(decode_bytes(bytes), LOOM_ERR_NONE);
  }
  assert_int_equal(LOOM_OP_COUNT, 8);
}

static void test_decode_rejects_undefined_buffer_queue_and_alu_op(void **state) {
  uint8_t bytes[LOOM_INSN_BYTES] = {0};
  for (uint32_t buf = LOOM_BUF_COUNT; buf < 8; buf++) {
    memset(bytes, 0, sizeof bytes);
    loom_bits_set(bytes, 0, 3, LOOM_OP_LOAD);
    loom_bits_set(bytes, 7, 3, buf);
    assert_int_equal(decode_bytes(bytes), LOOM_ERR_ILLEGAL);
  }
  struct loom_insn in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_OUT);
  assert_int_equal(decode_insn(&in), LOOM_ERR_ILLEGAL); /* OUT is written by compute only */
  memset(bytes, 0, sizeof bytes);
  loom_bits_set(bytes, 0, 3, LOOM_OP_NOP);
  loom_bits_set(bytes, 7, 2, 3);
  assert_int_equal(decode_bytes(bytes), LOOM_ERR_ILLEGAL);
  assert_int_equal(LOOM_ALU_COUNT, 8); /* every ALU op is defined, EPI in both operand forms */
  memset(bytes, 0, sizeof bytes);
  loom_bits_set(bytes, 0, 3, LOOM_OP_ALU);
  loom_bits_set(bytes, 7, 3, LOOM_ALU_EPI);
  assert_int_equal(decode_bytes(bytes), LOOM_ERR_NONE);
  loom_bits_set(bytes, 10, 1, 1);
  assert_int_equal(decode_bytes(bytes), LOOM_ERR_NONE);
}

static void test_decode_rejects_v2_flag_combinations(void **state) {
  struct loom_insn in = mem_insn(LOOM_OP_GEMM, 0);
  in.gemm.first = in.gemm.last = in.gemm.dw = 1;
  assert_int_equal(decode_insn(&in), LOOM_ERR_NONE);
  for (int k = 0; k < 3; k++) {
    in = mem_insn(LOOM_OP_GEMM, 0);
    in.gemm.reset = 1;
    in.gemm.first = k == 0, in.gemm.last = k == 1, in.gemm.dw = k == 2;
    assert_int_equal(decode_insn(&in), LOOM_ERR_ILLEGAL);
  }
  for (uint32_t buf = 0; buf < LOOM_BUF_COUNT; buf++) {
    in = mem_insn(LOOM_OP_LOAD, buf);
    in.mem.src_out = 1;
    assert_int_equal(decode_insn(&in), buf == LOOM_BUF_INP ? LOOM_ERR_NONE : LOOM_ERR_ILLEGAL);
    in.opcode = LOOM_OP_STORE;
    assert_int_equal(decode_insn(&in), LOOM_ERR_ILLEGAL);
  }
  in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_INP);
  in.mem.src_out = 1, in.mem.segment = 3;
  assert_int_equal(decode_insn(&in), LOOM_ERR_ILLEGAL);
}

/* wgt_transpose (MEM bit 127, reserved before it) only on a LOAD WGT, with
 * the validator's reason; STOREs of every buffer refuse it too. */
static void test_decode_rejects_wgt_transpose_except_on_wgt_loads(void **state) {
  for (uint32_t buf = 0; buf < LOOM_BUF_COUNT; buf++) {
    if (buf == LOOM_BUF_OUT) continue;
    struct loom_insn in = mem_insn(LOOM_OP_LOAD, buf);
    in.mem.wgt_transpose = 1;
    uint8_t bytes[LOOM_INSN_BYTES];
    assert_int_equal(loom_insn_encode(&in, bytes, NULL), 0);
    assert_int_equal(loom_bits_get(bytes, 127, 1), 1);
    struct loom_insn out;
    const char *why = NULL;
    int err = loom_insn_decode(bytes, &out, &why);
    if (buf == LOOM_BUF_WGT) {
      assert_int_equal(err, LOOM_ERR_NONE);
      assert_int_equal(out.mem.wgt_transpose, 1);
      assert_int_equal(loom_insn_queue(&out), LOOM_Q_LOAD);
    } else {
      assert_int_equal(err, LOOM_ERR_ILLEGAL);
      assert_string_equal(why, "wgt_transpose on a non-WGT load");
    }
  }
  struct loom_insn in = mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT);
  in.mem.wgt_transpose = 1;
  uint8_t bytes[LOOM_INSN_BYTES];
  assert_int_equal(loom_insn_encode(&in, bytes, NULL), 0);
  struct loom_insn out;
  const char *why = NULL;
  assert_int_equal(loom_insn_decode(bytes, &out, &why), LOOM_ERR_ILLEGAL);
  assert_string_equal(why, "wgt_transpose on a STORE");
}

/* Sets one token flag (0 pop_prev, 1 pop_next, 2 push_prev, 3 push_next). */
static void set_flag(struct loom_insn *in, int flag) {
  in->pop_prev = flag == 0;
  in->pop_next = flag == 1;
  in->push_prev = flag == 2;
  in->push_next = flag == 3;
}

static void check_flags(struct loom_insn in, int prev_ok, int next_ok) {
  for (int flag = 0; flag < 4; flag++) {
    set_flag(&in, flag);
    int is_prev = flag == 0 || flag == 2;
    int ok = is_prev ? prev_ok : next_ok;
    assert_int_equal(decode_insn(&in), ok ? LOOM_ERR_NONE : LOOM_ERR_ILLEGAL);
  }
}

static void test_decode_rejects_token_flags_the_queue_lacks(void **state) {
  check_flags(mem_insn(LOOM_OP_LOAD, LOOM_BUF_INP), 0, 1);
  check_flags(mem_insn(LOOM_OP_LOAD, LOOM_BUF_WGT), 0, 1);
  check_flags(mem_insn(LOOM_OP_LOAD, LOOM_BUF_UOP), 1, 1); /* compute queue */
  check_flags(mem_insn(LOOM_OP_LOAD, LOOM_BUF_ACC), 1, 1);
  check_flags(mem_insn(LOOM_OP_LOAD, LOOM_BUF_PAR), 0, 1); /* load queue */
  check_flags(mem_insn(LOOM_OP_LOAD, LOOM_BUF_LUT), 0, 1);
  check_flags(mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT), 1, 0);
  struct loom_insn in = mem_insn(LOOM_OP_GEMM, 0);
  check_flags(in, 1, 1);
  in.opcode = LOOM_OP_ALU;
  check_flags(in, 1, 1);
  in.opcode = LOOM_OP_QCFG;
  check_flags(in, 1, 1);
  in.opcode = LOOM_OP_GCFG;
  check_flags(in, 1, 1);
  in.opcode = LOOM_OP_FINISH;
  check_flags(in, 1, 1);
  in.opcode = LOOM_OP_NOP;
  in.nop.queue = LOOM_Q_LOAD;
  check_flags(in, 0, 1);
  in.nop.queue = LOOM_Q_COMPUTE;
  check_flags(in, 1, 1);
  in.nop.queue = LOOM_Q_STORE;
  check_flags(in, 1, 0);
}

/* Every bit of a format's reserved field, one at a time. */
static void check_reserved(struct loom_insn in, unsigned lsb, unsigned width) {
  uint8_t bytes[LOOM_INSN_BYTES];
  assert_int_equal(loom_insn_encode(&in, bytes, NULL), 0);
  assert_int_equal(decode_bytes(bytes), LOOM_ERR_NONE);
  for (unsigned b = lsb; b < lsb + width; b++) {
    uint8_t poked[LOOM_INSN_BYTES];
    memcpy(poked, bytes, sizeof poked);
    loom_bits_set(poked, b, 1, 1);
    if (decode_bytes(poked) != LOOM_ERR_ILLEGAL) fail_msg("reserved bit %u accepted", b);
  }
}

/* MEM has no reserved bit left (127 is wgt_transpose, tested above). */
static void test_decode_rejects_nonzero_reserved_bits(void **state) {
  check_reserved(mem_insn(LOOM_OP_GEMM, 0), 126, 2);
  check_reserved(mem_insn(LOOM_OP_ALU, 0), 126, 2);
  check_reserved(mem_insn(LOOM_OP_QCFG, 0), 112, 16);
  check_reserved(mem_insn(LOOM_OP_GCFG, 0), 45, 83);
  check_reserved(mem_insn(LOOM_OP_FINISH, 0), 7, 121);
  check_reserved(mem_insn(LOOM_OP_NOP, 0), 9, 119);
}

static void test_decode_rejects_padding_on_uop_and_wgt_loads(void **state) {
  static const size_t pads[] = {
      offsetof(struct loom_insn, mem.y_pad_top), offsetof(struct loom_insn, mem.y_pad_bottom),
      offsetof(struct loom_insn, mem.x_pad_left), offsetof(struct loom_insn, mem.x_pad_right)};
  for (uint32_t buf = 0; buf < LOOM_BUF_COUNT; buf++)
    for (size_t p = 0; p < 4 && buf != LOOM_BUF_OUT; p++) {
      struct loom_insn in = mem_insn(LOOM_OP_LOAD, buf);
      uint32_t one = 1;
      memcpy((char *)&in + pads[p], &one, sizeof one);
      int legal = buf == LOOM_BUF_INP || buf == LOOM_BUF_ACC;
      assert_int_equal(decode_insn(&in), legal ? LOOM_ERR_NONE : LOOM_ERR_ILLEGAL);
    }
  /* pad_value alone is ignored without padding */
  struct loom_insn in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_WGT);
  in.mem.pad_value = -5;
  assert_int_equal(decode_insn(&in), LOOM_ERR_NONE);
}

static void test_decode_rejects_src_int8_except_on_acc_loads(void **state) {
  for (uint32_t buf = 0; buf < LOOM_BUF_COUNT; buf++) {
    if (buf == LOOM_BUF_OUT) continue;
    struct loom_insn in = mem_insn(LOOM_OP_LOAD, buf);
    in.mem.src_int8 = 1;
    assert_int_equal(decode_insn(&in), buf == LOOM_BUF_ACC ? LOOM_ERR_NONE : LOOM_ERR_ILLEGAL);
  }
}

static void test_decode_rejects_store_of_non_out_buffer_or_with_padding(void **state) {
  for (uint32_t buf = 0; buf < LOOM_BUF_OUT; buf++) {
    struct loom_insn in = mem_insn(LOOM_OP_STORE, buf);
    assert_int_equal(decode_insn(&in), LOOM_ERR_ILLEGAL);
  }
  struct loom_insn in = mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT);
  in.mem.x_pad_right = 1;
  assert_int_equal(decode_insn(&in), LOOM_ERR_ILLEGAL);
  in = mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT);
  in.mem.src_int8 = 1;
  assert_int_equal(decode_insn(&in), LOOM_ERR_ILLEGAL);
}

static void test_queue_routing_follows_the_opcode_table(void **state) {
  struct loom_insn in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_INP);
  assert_int_equal(loom_insn_queue(&in), LOOM_Q_LOAD);
  in.mem.buffer = LOOM_BUF_WGT;
  assert_int_equal(loom_insn_queue(&in), LOOM_Q_LOAD);
  in.mem.buffer = LOOM_BUF_UOP;
  assert_int_equal(loom_insn_queue(&in), LOOM_Q_COMPUTE);
  in.mem.buffer = LOOM_BUF_ACC;
  assert_int_equal(loom_insn_queue(&in), LOOM_Q_COMPUTE);
  in.mem.buffer = LOOM_BUF_PAR; /* epilogue operands, prefetched like weights */
  assert_int_equal(loom_insn_queue(&in), LOOM_Q_LOAD);
  in.mem.buffer = LOOM_BUF_LUT;
  assert_int_equal(loom_insn_queue(&in), LOOM_Q_LOAD);
  in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_INP);
  in.mem.src_out = 1; /* the on-chip move is an INP load like any other */
  assert_int_equal(loom_insn_queue(&in), LOOM_Q_LOAD);
  in = mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT);
  assert_int_equal(loom_insn_queue(&in), LOOM_Q_STORE);
  static const uint32_t compute_ops[] = {LOOM_OP_GEMM, LOOM_OP_ALU, LOOM_OP_QCFG, LOOM_OP_GCFG,
                                         LOOM_OP_FINISH};
  for (size_t i = 0; i < 5; i++) {
    in = mem_insn(compute_ops[i], 0);
    assert_int_equal(loom_insn_queue(&in), LOOM_Q_COMPUTE);
  }
  for (uint32_t q = 0; q < LOOM_Q_COUNT; q++) {
    in = mem_insn(LOOM_OP_NOP, 0);
    in.nop.queue = q;
    assert_int_equal(loom_insn_queue(&in), (int)q);
  }
}

/* ---- micro-ops ---- */

static void check_uop(uint32_t acc, uint32_t inp, uint32_t wgt) {
  struct loom_uop in = {acc, inp, wgt}, out;
  uint8_t b[LOOM_UOP_BYTES];
  assert_int_equal(loom_uop_encode(&in, b), 0);
  uint32_t word = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  assert_int_equal(word, acc | inp << 11 | wgt << 22); /* docs/isa.md, "Micro-ops" */
  loom_uop_decode(b, &out);
  assert_memory_equal(&in, &out, sizeof in);
}

static void test_uop_round_trips_every_field(void **state) {
  check_uop(0, 0, 0);
  check_uop(1, 0, 0);
  check_uop(0, 1, 0);
  check_uop(0, 0, 1);
  check_uop(2047, 0, 0);
  check_uop(0, 2047, 0);
  check_uop(0, 0, 1023);
  check_uop(2047, 2047, 1023);
}

static void test_uop_encode_rejects_out_of_range(void **state) {
  uint8_t b[LOOM_UOP_BYTES];
  struct loom_uop u[] = {{2048, 0, 0}, {0, 2048, 0}, {0, 0, 1024}};
  for (size_t i = 0; i < 3; i++) assert_int_equal(loom_uop_encode(&u[i], b), -1);
}

/* ---- names ---- */

typedef const char *name_fn(uint32_t);

static void check_names(name_fn *fn, const char *const *table, uint32_t count) {
  for (uint32_t i = 0; i < count; i++) {
    assert_non_null(table[i]);
    assert_true(table[i][0] != '\0');
    assert_string_not_equal(table[i], "?");
    assert_ptr_equal(fn(i), table[i]);
    for (uint32_t j = 0; j < i; j++) assert_string_not_equal(table[i], table[j]);
  }
  assert_string_equal(fn(count), "?");
  assert_string_equal(fn(UINT32_MAX), "?");
}

static void test_name_tables_are_complete_and_unique(void **state) {
  check_names(loom_opcode_name, loom_opcode_names, LOOM_OP_COUNT);
  check_names(loom_buffer_name, loom_buffer_names, LOOM_BUF_COUNT);
  check_names(loom_queue_name, loom_queue_names, LOOM_Q_COUNT);
  check_names(loom_alu_op_name, loom_alu_op_names, LOOM_ALU_COUNT);
  check_names(loom_error_name, loom_error_names, LOOM_ERR_COUNT);
  check_names(loom_error_text, loom_error_texts, LOOM_ERR_COUNT);
  check_names(loom_counter_name, loom_counter_names, LOOM_CNT_COUNT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_field_round_trips_at_0_1_and_max),
      cmocka_unit_test(test_encode_rejects_out_of_range_naming_the_field),
      cmocka_unit_test(test_encode_rejects_undefined_opcode),
      cmocka_unit_test(test_store_and_finish_round_trip),
      cmocka_unit_test(test_opcode_and_bit_order_are_little_endian),
      cmocka_unit_test(test_bits_get_set_cross_byte_boundaries),
      cmocka_unit_test(test_decode_every_opcode_is_defined),
      cmocka_unit_test(test_decode_rejects_v2_flag_combinations),
      cmocka_unit_test(test_decode_rejects_undefined_buffer_queue_and_alu_op),
      cmocka_unit_test(test_decode_rejects_token_flags_the_queue_lacks),
      cmocka_unit_test(test_decode_rejects_wgt_transpose_except_on_wgt_loads),
      cmocka_unit_test(test_decode_rejects_nonzero_reserved_bits),
      cmocka_unit_test(test_decode_rejects_padding_on_uop_and_wgt_loads),
      cmocka_unit_test(test_decode_rejects_src_int8_except_on_acc_loads),
      cmocka_unit_test(test_decode_rejects_store_of_non_out_buffer_or_with_padding),
      cmocka_unit_test(test_queue_routing_follows_the_opcode_table),
      cmocka_unit_test(test_uop_round_trips_every_field),
      cmocka_unit_test(test_uop_encode_rejects_out_of_range),
      cmocka_unit_test(test_name_tables_are_complete_and_unique),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
