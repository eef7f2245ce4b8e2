/*
 * add5.c - the runtime tests' job and device (add5.h).
 */
#include "add5.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

loom_device *open_fsim(const char *options) {
  loom_device *dev = NULL;
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_device_open("fsim", options, &dev, msg), LOOM_OK);
  assert_non_null(dev);
  return dev;
}

static void put_insn(uint8_t *dst, const struct loom_insn *in) {
  const char *bad = NULL;
  assert_int_equal(loom_insn_encode(in, dst, &bad), 0);
}

static struct loom_insn mem_insn(uint32_t op, uint32_t buf, uint32_t seg, uint32_t x) {
  struct loom_insn in = {.opcode = op};
  in.mem = (struct loom_insn_mem){.buffer = buf, .segment = seg, .y_size = 1, .x_size = x,
                                  .x_stride = x};
  return in;
}

void encode_add5(uint8_t insns[5 * LOOM_INSN_BYTES], uint32_t out_seg) {
  struct loom_insn in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_UOP, 0, 1);
  put_insn(insns, &in);
  in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_ACC, 1, 1);
  put_insn(insns + 16, &in);
  in = (struct loom_insn){.opcode = LOOM_OP_ALU, .push_next = 1};
  in.alu = (struct loom_insn_alu){.alu_op = LOOM_ALU_ADD, .use_imm = 1, .imm = 5, .uop_end = 1,
                                  .iter_out = 1, .iter_in = 1};
  put_insn(insns + 32, &in);
  in = mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT, out_seg, 1);
  in.pop_prev = 1;
  put_insn(insns + 48, &in);
  in = (struct loom_insn){.opcode = LOOM_OP_FINISH};
  put_insn(insns + 64, &in);
}

const int32_t add5_in[8] = {10, -20, 130, -200, 0, 1, 2, 3};
const int8_t add5_out[8] = {15, -15, 127, -128, 5, 6, 7, 8};
