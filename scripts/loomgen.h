/*
 * loomgen.h - the spec tables of hw/spec/ and bitstreams/boards.def as C
 * arrays, shared by loomgen.c (C, Verilog and Tcl forms; main),
 * loomgen_boards.c (board flows, on-chip memory, device tree, Vitis) and
 * loomgen_docs.c (the tables of docs/).  loomgen.c says what each command
 * writes.
 */
#ifndef LOOMGEN_H
#define LOOMGEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "hw/spec/loom_isa.def"
#include "hw/spec/loom_regs.def"
#include "hw/spec/loom_configs.def"
#include "bitstreams/boards.def"
#include "loom/hwconfig_rules.h"

struct field {
  const char *format, *name;
  int lsb, width, is_signed;
  const char *comment;
};

struct named {
  const char *name;
  int value;
  const char *extra;
  const char *comment;
};

struct config {
  const char *name;
  int batch, block_in, block_out, inp_kib, wgt_kib, acc_kib, uop_kib;
  int bus_bits, clock_mhz, cmdq, tokq, max_rd;
  const char *part, *comment;
};

#define AS_FIELD(f, n, l, w, s, c) {#f, #n, l, w, s, c},
static const struct field isa_fields[] = {LOOM_ISA_FIELDS(AS_FIELD) LOOM_UOP_FIELDS(AS_FIELD)};
#define AS_OPCODE(n, v, q, c) {#n, v, #q, c},
static const struct named opcodes[] = {LOOM_ISA_OPCODES(AS_OPCODE)};
#define AS_NAMED(n, v, c) {#n, v, NULL, c},
static const struct named buffers[] = {LOOM_ISA_BUFFERS(AS_NAMED)};
static const struct named queues[] = {LOOM_ISA_QUEUES(AS_NAMED)};
static const struct named alu_ops[] = {LOOM_ISA_ALU_OPS(AS_NAMED)};
static const struct named errors[] = {LOOM_ISA_ERRORS(AS_NAMED)};
static const struct named ctrl_bits[] = {LOOM_CTRL_BITS(AS_NAMED)};
static const struct named irq_bits[] = {LOOM_IRQ_BITS(AS_NAMED)};
#define AS_REG(n, o, a, c) {#n, o, #a, c},
static const struct named regs[] = {LOOM_REGS(AS_REG)};
#define AS_COUNTER(n, i, e, c) {#n, i, (e) ? "exact" : "timed", c},
static const struct named counters[] = {LOOM_COUNTERS(AS_COUNTER)};
#define AS_CONFIG(n, b, bi, bo, i, w, a, u, bus, mhz, cq, tq, rd, part, c) \
  {#n, b, bi, bo, i, w, a, u, bus, mhz, cq, tq, rd, part, c},
static const struct config configs[] = {LOOM_CONFIGS(AS_CONFIG)};

struct board {
  const char *name, *config, *flow, *part, *board_part;
  int uram;
  const char *platform, *comment;
};

struct part {
  const char *name, *family;
  long lut, ff, dsp, bram36, uram;
};

struct flow {
  const char *name;
  unsigned base, span;
  int irq;
  const char *irq_parent, *clock, *comment;
};

#define AS_BOARD(n, cfg, fl, part, bp, uram, plat, c) {n, #cfg, #fl, part, bp, uram, plat, c},
static const struct board boards[] = {LOOM_BOARDS(AS_BOARD)};
#define AS_PART(n, fam, lut, ff, dsp, bram, uram) {n, #fam, lut, ff, dsp, bram, uram},
static const struct part parts[] = {LOOM_PARTS(AS_PART)};
#define AS_FLOW(n, base, span, irq, ip, clk, c) {#n, base, span, irq, ip, clk, c},
static const struct flow flows[] = {LOOM_FLOWS(AS_FLOW)};

/* Register offsets as constants, so the kernel arguments below are derived
 * from the map instead of restating it. */
#define AS_OFFSET(n, o, a, c) OFF_##n = o,
enum { LOOM_REGS(AS_OFFSET) };
_Static_assert(OFF_CTRL == 0x00 && OFF_GIE == 0x04 && OFF_IER == 0x08 && OFF_ISR == 0x0C,
               "Vitis ap_ctrl_hs needs CTRL, GIE, IER, ISR at 0x00..0x0C");
_Static_assert(OFF_INSN_ADDR_HI == OFF_INSN_ADDR_LO + 4 && OFF_SEG_BASE_HI == OFF_SEG_BASE_LO + 4 &&
                   OFF_SEG_SIZE_HI == OFF_SEG_SIZE_LO + 4,
               "64-bit kernel arguments need their high word right after the low word");

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct derived {
  int inp_rows, wgt_rows, acc_rows, uop_rows, out_bytes_kib_x4;
  int inp_row_bytes, wgt_row_bytes, acc_row_bytes, out_row_bytes;
  unsigned hash;
};

struct memory_use {
  long bram18, uram, kib;
};

struct karg {
  char name[32];
  int pointer;
  unsigned offset, size;
};

void die(const char *msg, const char *arg);
FILE *open_out(const char *path);
struct derived derive(const struct config *c);
struct loom_hw_config hw_config(const struct config *c);
const struct config *find_config(const char *name);
const struct part *find_part(const char *name);
void check_boards(void);
struct memory_use board_memory(const struct board *b);
void boards_list(void);
void parts_list(void);
void board_tcl(const char *dir);
void dtso(const char *name, const char *path);
int kernel_args(struct karg *a);
const char *karg_type(const struct karg *a);
void kernel_xml(const char *cfg, const char *path);
void vitis_cfg(const char *name, const char *path);
void docs_fields(void);
void docs_enums(void);
void docs_regs(void);
void docs_configs(void);
void docs_boards(void);
void docs_board_memory(void);
void docs_board_parts(void);
void docs_kernel_args(void);

#endif
