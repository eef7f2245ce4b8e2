/*
 * add5.h - the runtime tests' job (tests/unit/test_runtime*.c): a
 * 5-instruction program that adds 5 to a row of ACC and stores it
 * saturated, and the fsim device they run it on.
 */
#ifndef LOOM_TEST_ADD5_H
#define LOOM_TEST_ADD5_H

#include <stdint.h>

#include "loom/isa.h"
#include "loom/loom.h"

/* A device of the fsim backend with `options`; a test failure if it does
 * not open. */
loom_device *open_fsim(const char *options);

/* The program (config tiny):
 *   LOAD UOP  seg 0           one micro-op (acc 0, inp 0)
 *   LOAD ACC  seg 1           one row of 8 int32
 *   ALU ADD imm=5, push_next  ACC[0] += 5
 *   STORE     seg `out_seg`, pop_prev: 8 saturated int8
 *   FINISH */
void encode_add5(uint8_t insns[5 * LOOM_INSN_BYTES], uint32_t out_seg);

/* An input row and what the program stores for it. */
extern const int32_t add5_in[8];
extern const int8_t add5_out[8];

#endif
