/*
 * asm_syntax.c - the syntax of Loom assembly as tables (docs/asm.md).
 *
 * One struct asm_op per opcode lists the instruction's positional operand,
 * its keyed fields (key=value, or key=a,b / key=a:b for fields that travel
 * together) and its flags (1-bit fields written as words).  Widths and
 * signedness come from the generated loom_isa_gen.h, so a change to
 * hw/spec/loom_isa.def reaches the assembler's range messages without an
 * edit here; a new opcode without a row here fails the _Static_assert.
 *
 * Defaults are chosen so that an omitted field means "off": zero factors,
 * no padding, no tokens, and for QCFG the full int8 clamp range.  The
 * disassembler omits exactly the optional fields whose value equals their
 * default, and always prints required ones.
 */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "asm_internal.h"

#define PART(FMT, FIELD, member, name, def)                                               \
  {name, (uint16_t)offsetof(struct loom_insn, member), LOOM_##FMT##_##FIELD##_SIGNED,     \
   LOOM_##FMT##_##FIELD##_WIDTH, def}

#define FLAG(word, member) {word, (uint16_t)offsetof(struct loom_insn, member)}

#define TOKEN_FLAGS                                                                        \
  FLAG("pop_prev", pop_prev), FLAG("pop_next", pop_next), FLAG("push_prev", push_prev),   \
      FLAG("push_next", push_next)

/* LOAD and STORE share the transfer fields; only LOAD pads. */
#define MEM_TRANSFER_FIELDS                                                                \
  {"sram", "sram=ROW", 1, 0, 1, {PART(MEM, SRAM_BASE, mem.sram_base, "sram_base", 0)}},   \
  {"seg", "seg=SEGMENT", 1, 0, 1, {PART(MEM, SEGMENT, mem.segment, "segment", 0)}},       \
  {"off", "off=DRAM_ROW", 1, 0, 1, {PART(MEM, DRAM_OFFSET, mem.dram_offset, "dram_offset", 0)}}, \
  {"y", "y=ROWS", 1, 0, 1, {PART(MEM, Y_SIZE, mem.y_size, "y_size", 0)}},                  \
  {"x", "x=COLUMNS", 1, 0, 1, {PART(MEM, X_SIZE, mem.x_size, "x_size", 0)}},               \
  {"stride", "stride=ROWS", 1, 0, 1, {PART(MEM, X_STRIDE, mem.x_stride, "x_stride", 0)}}

static const struct asm_field load_fields[] = {
    MEM_TRANSFER_FIELDS,
    {"pad", "pad=TOP,BOTTOM,LEFT,RIGHT", 4, ',', 0,
     {PART(MEM, Y_PAD_TOP, mem.y_pad_top, "y_pad_top", 0),
      PART(MEM, Y_PAD_BOTTOM, mem.y_pad_bottom, "y_pad_bottom", 0),
      PART(MEM, X_PAD_LEFT, mem.x_pad_left, "x_pad_left", 0),
      PART(MEM, X_PAD_RIGHT, mem.x_pad_right, "x_pad_right", 0)}},
    {"padval", "padval=VALUE", 1, 0, 0, {PART(MEM, PAD_VALUE, mem.pad_value, "pad_value", 0)}},
    {0},
};
static const struct asm_flag load_flags[] = {FLAG("src_int8", mem.src_int8), FLAG("src_out", mem.src_out),
                                             FLAG("wgt_transpose", mem.wgt_transpose), TOKEN_FLAGS, {0}};

static const struct asm_field store_fields[] = {MEM_TRANSFER_FIELDS, {0}};

/* The two-level loop over micro-ops that GEMM and ALU share. */
#define LOOP_FIELDS(FMT, ins)                                                              \
  {"uop", "uop=BEGIN:END", 2, ':', 1,                                                       \
   {PART(FMT, UOP_BEGIN, ins.uop_begin, "uop_begin", 0),                                    \
    PART(FMT, UOP_END, ins.uop_end, "uop_end", 0)}},                                        \
  {"iter", "iter=OUT,IN", 2, ',', 1,                                                        \
   {PART(FMT, ITER_OUT, ins.iter_out, "iter_out", 0),                                       \
    PART(FMT, ITER_IN, ins.iter_in, "iter_in", 0)}}

#define FACTORS(FMT, key, form, ins, F, f)                                                 \
  {key, form, 2, ',', 0,                                                                    \
   {PART(FMT, F##_FACTOR_OUT, ins.f##_factor_out, #f "_factor_out", 0),                     \
    PART(FMT, F##_FACTOR_IN, ins.f##_factor_in, #f "_factor_in", 0)}}

static const struct asm_field gemm_fields[] = {
    LOOP_FIELDS(GEMM, gemm),
    FACTORS(GEMM, "acc", "acc=OUT,IN", gemm, ACC, acc),
    FACTORS(GEMM, "inp", "inp=OUT,IN", gemm, INP, inp),
    FACTORS(GEMM, "wgt", "wgt=OUT,IN", gemm, WGT, wgt),
    {0},
};
static const struct asm_flag gemm_flags[] = {FLAG("reset", gemm.reset), FLAG("first", gemm.first),
                                             FLAG("last", gemm.last), FLAG("dw", gemm.dw), TOKEN_FLAGS, {0}};

static const struct asm_field alu_fields[] = {
    LOOP_FIELDS(ALU, alu),
    FACTORS(ALU, "dst", "dst=OUT,IN", alu, DST, dst),
    FACTORS(ALU, "src", "src=OUT,IN", alu, SRC, src),
    {"imm", "imm=VALUE", 1, 0, 0, {PART(ALU, IMM, alu.imm, "imm", 0)}},
    {0},
};
static const struct asm_flag alu_flags[] = {FLAG("use_imm", alu.use_imm), TOKEN_FLAGS, {0}};

static const struct asm_field qcfg_fields[] = {
    {"mul", "mul=MULTIPLIER", 1, 0, 1, {PART(QCFG, MULTIPLIER, qcfg.multiplier, "multiplier", 0)}},
    {"shift", "shift=BITS", 1, 0, 1, {PART(QCFG, SHIFT, qcfg.shift, "shift", 0)}},
    {"zp", "zp=ZERO_POINT", 1, 0, 0, {PART(QCFG, ZERO_POINT, qcfg.zero_point, "zero_point", 0)}},
    {"lo", "lo=MIN", 1, 0, 0, {PART(QCFG, CLAMP_LO, qcfg.clamp_lo, "clamp_lo", -128)}},
    {"hi", "hi=MAX", 1, 0, 0, {PART(QCFG, CLAMP_HI, qcfg.clamp_hi, "clamp_hi", 127)}},
    {"bias", "bias=VALUE", 1, 0, 0, {PART(QCFG, BIAS, qcfg.bias, "bias", 0)}},
    {"par", "par=ROW", 1, 0, 0, {PART(QCFG, PAR_BASE, qcfg.par_base, "par_base", 0)}},
    {0},
};
static const struct asm_flag qcfg_flags[] = {FLAG("round_even", qcfg.round_even), FLAG("par_src", qcfg.par_src),
                                             FLAG("act", qcfg.act), TOKEN_FLAGS, {0}};

static const struct asm_field gcfg_fields[] = {
    {"period", "period=UOPS", 1, 0, 0, {PART(GCFG, PERIOD, gcfg.period, "period", 0)}},
    {"win", "win=KH,KW", 2, ',', 0,
     {PART(GCFG, DW_KH, gcfg.dw_kh, "dw_kh", 0), PART(GCFG, DW_KW, gcfg.dw_kw, "dw_kw", 0)}},
    {"step", "step=ROW,COL", 2, ',', 0,
     {PART(GCFG, DW_ROW, gcfg.dw_row, "dw_row", 0), PART(GCFG, DW_COL, gcfg.dw_col, "dw_col", 0)}},
    {0},
};

static const struct asm_field no_fields[] = {{0}};
static const struct asm_flag token_flags[] = {TOKEN_FLAGS, {0}};

const struct asm_op loom_asm_ops[LOOM_OP_COUNT] = {
    [LOOM_OP_LOAD] = {"load", ASM_OPND_BUFFER, offsetof(struct loom_insn, mem.buffer), load_fields, load_flags},
    [LOOM_OP_STORE] = {"store", ASM_OPND_NONE, 0, store_fields, token_flags},
    [LOOM_OP_GEMM] = {"gemm", ASM_OPND_NONE, 0, gemm_fields, gemm_flags},
    [LOOM_OP_ALU] = {"alu", ASM_OPND_ALU, offsetof(struct loom_insn, alu.alu_op), alu_fields, alu_flags},
    [LOOM_OP_QCFG] = {"qcfg", ASM_OPND_NONE, 0, qcfg_fields, qcfg_flags},
    [LOOM_OP_FINISH] = {"finish", ASM_OPND_NONE, 0, no_fields, token_flags},
    [LOOM_OP_NOP] = {"nop", ASM_OPND_QUEUE, offsetof(struct loom_insn, nop.queue), no_fields, token_flags},
    [LOOM_OP_GCFG] = {"gcfg", ASM_OPND_NONE, 0, gcfg_fields, token_flags},
};
_Static_assert(sizeof loom_asm_ops / sizeof loom_asm_ops[0] == LOOM_OP_COUNT,
               "every opcode needs an assembler syntax row");
_Static_assert(LOOM_OP_COUNT == 8, "a new opcode needs a row in loom_asm_ops");

const char *const asm_bufkind_names[LOOM_BUFKIND_COUNT] = {
    [LOOM_BUFKIND_CONST] = "const", [LOOM_BUFKIND_WORK] = "work"};
const char *const asm_role_names[LOOM_ROLE_COUNT] = {
    [LOOM_ROLE_INTERNAL] = "internal", [LOOM_ROLE_INPUT] = "input", [LOOM_ROLE_OUTPUT] = "output"};
const char *const asm_layout_names[LOOM_LAYOUT_COUNT] = {
    [LOOM_LAYOUT_PLAIN] = "plain", [LOOM_LAYOUT_NCHWC] = "nchwc", [LOOM_LAYOUT_NC] = "nc"};

int asm_lookup(const char *const *names, int count, const char *s, size_t len) {
  for (int i = 0; i < count; i++)
    if (names[i] && strlen(names[i]) == len && !strncasecmp(names[i], s, len)) return i;
  return -1;
}

/* The generated name tables are upper case ("UOP"); the syntax writes
 * them in lower case, and compares without case. */
static const char *const *operand_table(enum asm_operand kind, int *count) {
  switch (kind) {
  case ASM_OPND_BUFFER: *count = LOOM_BUF_COUNT; return loom_buffer_names;
  case ASM_OPND_ALU: *count = LOOM_ALU_COUNT; return loom_alu_op_names;
  case ASM_OPND_QUEUE: *count = LOOM_Q_COUNT; return loom_queue_names;
  default: *count = 0; return NULL;
  }
}

const char *asm_operand_name(enum asm_operand kind, uint32_t v) {
  int count;
  const char *const *t = operand_table(kind, &count);
  return t && v < (uint32_t)count ? t[v] : NULL;
}

int asm_operand_value(enum asm_operand kind, const char *s, size_t len) {
  int count;
  const char *const *t = operand_table(kind, &count);
  return t ? asm_lookup(t, count, s, len) : -1;
}

int asm_name_is_plain(const char *s) {
  if (!*s || !strcmp(s, "-")) return 0;
  for (; *s; s++)
    if (*s <= 0x20 || *s >= 0x7f || strchr("=,:[];#\"\\", *s)) return 0;
  return 1;
}
