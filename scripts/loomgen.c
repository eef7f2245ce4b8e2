/*
 * loomgen - generate every derived form of the ISA, the register map and the
 * hardware configurations from hw/spec/ (*.def files).
 *
 *   loomgen c-header  FILE   C header: enums, field positions, registers
 *   loomgen c-source  FILE   C source: name tables and the configurations
 *   loomgen verilog   DIR    loom_isa.vh and one loom_cfg_<name>.vh per config
 *   loomgen tcl       DIR    loom_cfg_<name>.tcl, parameters for board flows
 *   loomgen docs      KIND   markdown table (isa-fields, isa-enums, regs,
 *                            configs, boards, board-parts, board-memory,
 *                            kernel-args) on stdout, pasted into docs/
 *                            between markers and checked by `make check-docs`
 *
 * Board flows (bitstreams/boards.def, docs/boards.md):
 *
 *   loomgen boards                 one line per board: name config flow part
 *                                  family uram clock_mhz, the part's lut ff
 *                                  dsp bram36 uram, the buffers' bram36 and
 *                                  uram (read by bitstreams/ and tests/boards)
 *   loomgen board-tcl  DIR         loom_board_<name>.tcl, the board's Tcl dict
 *   loomgen dtso       BOARD FILE  device-tree overlay of a Zynq board
 *   loomgen kernel-xml CONFIG FILE Vitis RTL kernel description (kernel.xml)
 *   loomgen vitis-cfg  BOARD FILE  v++ link settings (platform, clock)
 *
 * The .def files are X-macro lists, so this program is their only parser:
 * the C preprocessor.  It runs on the build machine only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "hw/spec/loom_isa.def"
#include "hw/spec/loom_regs.def"
#include "hw/spec/loom_configs.def"
#include "bitstreams/boards.def"

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

static void die(const char *msg, const char *arg) {
  fprintf(stderr, "loomgen: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
  exit(1);
}

static FILE *open_out(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) die("cannot write", path);
  return f;
}

static void upper(char *dst, const char *src, size_t n) {
  size_t i;
  for (i = 0; i + 1 < n && src[i]; i++)
    dst[i] = (src[i] >= 'a' && src[i] <= 'z') ? (char)(src[i] - 32) : src[i];
  dst[i] = 0;
}

/* ---- derived configuration values ---- */

struct derived {
  int inp_rows, wgt_rows, acc_rows, uop_rows, out_bytes_kib_x4;
  int inp_row_bytes, wgt_row_bytes, acc_row_bytes, out_row_bytes;
  unsigned hash;
};

static int is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

static void canonical(const struct config *c, char *buf, size_t n) {
  snprintf(buf, n,
           "loom-isa=%d;name=%s;batch=%d;block_in=%d;block_out=%d;inp_kib=%d;"
           "wgt_kib=%d;acc_kib=%d;uop_kib=%d;bus_bits=%d;cmdq=%d;tokq=%d;",
           LOOM_ISA_VERSION, c->name, c->batch, c->block_in, c->block_out,
           c->inp_kib, c->wgt_kib, c->acc_kib, c->uop_kib, c->bus_bits, c->cmdq,
           c->tokq);
}

static struct derived derive(const struct config *c) {
  struct derived d;
  char text[512];
  d.inp_row_bytes = c->batch * c->block_in;
  d.wgt_row_bytes = c->block_out * c->block_in;
  d.acc_row_bytes = c->batch * c->block_out * 4;
  d.out_row_bytes = c->batch * c->block_out;
  d.inp_rows = c->inp_kib * 1024 / d.inp_row_bytes;
  d.wgt_rows = c->wgt_kib * 1024 / d.wgt_row_bytes;
  d.acc_rows = c->acc_kib * 1024 / d.acc_row_bytes;
  d.uop_rows = c->uop_kib * 1024 / 4;
  d.out_bytes_kib_x4 = 0;
  if (!is_pow2(d.inp_rows) || d.inp_rows > 2048) die("INP rows not a power of two <= 2048", c->name);
  if (!is_pow2(d.wgt_rows) || d.wgt_rows > 1024) die("WGT rows not a power of two <= 1024", c->name);
  if (!is_pow2(d.acc_rows) || d.acc_rows > 2048) die("ACC rows not a power of two <= 2048", c->name);
  if (!is_pow2(d.uop_rows) || d.uop_rows > 8192) die("UOP rows not a power of two <= 8192", c->name);
  if (!is_pow2(c->bus_bits) || c->bus_bits < 64 || c->bus_bits > 512) die("bus_bits must be 64..512", c->name);
  if (c->batch != 1 && c->batch != 2 && c->batch != 4) die("batch must be 1, 2 or 4", c->name);
  canonical(c, text, sizeof text);
  d.hash = (unsigned)crc32(0L, (const Bytef *)text, (uInt)strlen(text));
  return d;
}

/* ---- C header ---- */

static void c_enum(FILE *f, const char *type, const char *prefix, const struct named *v, int n) {
  int i;
  fprintf(f, "enum %s {\n", type);
  for (i = 0; i < n; i++) fprintf(f, "  %s%s = %d, /* %s */\n", prefix, v[i].name, v[i].value, v[i].comment);
  fprintf(f, "  %sCOUNT = %d\n};\n\n", prefix, n);
}

static void c_header(const char *path) {
  FILE *f = open_out(path);
  int i;
  char fmt[32], name[64];
  fprintf(f, "/* Generated by scripts/loomgen.c from hw/spec/ (*.def files). Do not edit. */\n");
  fprintf(f, "#ifndef LOOM_ISA_GEN_H\n#define LOOM_ISA_GEN_H\n\n");
  fprintf(f, "#define LOOM_ISA_VERSION %d\n#define LOOM_INSN_BITS %d\n#define LOOM_UOP_BITS %d\n",
          LOOM_ISA_VERSION, LOOM_INSN_BITS, LOOM_UOP_BITS);
  fprintf(f, "#define LOOM_NUM_SEGMENTS %d\n#define LOOM_HW_ID 0x%08Xu\n\n", LOOM_NUM_SEGMENTS, LOOM_HW_ID);
  c_enum(f, "loom_opcode", "LOOM_OP_", opcodes, COUNT(opcodes));
  c_enum(f, "loom_buffer", "LOOM_BUF_", buffers, COUNT(buffers));
  c_enum(f, "loom_queue", "LOOM_Q_", queues, COUNT(queues));
  c_enum(f, "loom_alu_op", "LOOM_ALU_", alu_ops, COUNT(alu_ops));
  c_enum(f, "loom_error", "LOOM_ERR_", errors, COUNT(errors));
  fprintf(f, "/* Field positions: LOOM_<FORMAT>_<FIELD>_LSB / _WIDTH / _SIGNED. */\n");
  for (i = 0; i < COUNT(isa_fields); i++) {
    upper(fmt, isa_fields[i].format, sizeof fmt);
    upper(name, isa_fields[i].name, sizeof name);
    fprintf(f, "#define LOOM_%s_%s_LSB %d\n#define LOOM_%s_%s_WIDTH %d\n#define LOOM_%s_%s_SIGNED %d\n",
            fmt, name, isa_fields[i].lsb, fmt, name, isa_fields[i].width, fmt, name,
            isa_fields[i].is_signed);
  }
  fprintf(f, "\n/* Register map (byte offsets). */\n");
  for (i = 0; i < COUNT(regs); i++) fprintf(f, "#define LOOM_REG_%s 0x%02Xu /* %s */\n", regs[i].name, regs[i].value, regs[i].comment);
  fprintf(f, "#define LOOM_REG_SEG_STRIDE 0x%Xu\n#define LOOM_REG_COUNTER_BASE 0x%Xu\n#define LOOM_REG_COUNTER_STRIDE 0x%Xu\n",
          LOOM_REG_SEG_STRIDE, LOOM_REG_COUNTER_BASE, LOOM_REG_COUNTER_STRIDE);
  for (i = 0; i < COUNT(ctrl_bits); i++) fprintf(f, "#define LOOM_CTRL_%s (1u << %d)\n", ctrl_bits[i].name, ctrl_bits[i].value);
  fprintf(f, "\n");
  c_enum(f, "loom_counter", "LOOM_CNT_", counters, COUNT(counters));
  fprintf(f, "#define LOOM_COUNTER_EXACT_MASK 0x%Xu\n\n", 0u
#define AS_MASK(n, i, e, c) | ((e) ? (1u << (i)) : 0u)
          LOOM_COUNTERS(AS_MASK));
  fprintf(f, "/* Configurations (see loom_hw_configs[] in loom_configs_gen.c). */\n");
  for (i = 0; i < COUNT(configs); i++) {
    upper(name, configs[i].name, sizeof name);
    fprintf(f, "#define LOOM_CONFIG_%s_HASH 0x%08Xu\n", name, derive(&configs[i]).hash);
  }
  fprintf(f, "#define LOOM_CONFIG_COUNT %d\n\n", COUNT(configs));
  fprintf(f, "extern const char *const loom_opcode_names[LOOM_OP_COUNT];\n");
  fprintf(f, "extern const char *const loom_buffer_names[LOOM_BUF_COUNT];\n");
  fprintf(f, "extern const char *const loom_queue_names[LOOM_Q_COUNT];\n");
  fprintf(f, "extern const char *const loom_alu_op_names[LOOM_ALU_COUNT];\n");
  fprintf(f, "extern const char *const loom_error_names[LOOM_ERR_COUNT];\n");
  fprintf(f, "extern const char *const loom_error_texts[LOOM_ERR_COUNT];\n");
  fprintf(f, "extern const char *const loom_counter_names[LOOM_CNT_COUNT];\n\n#endif\n");
  fclose(f);
}

static void c_names(FILE *f, const char *type, const char *count, const struct named *v, int n, int text) {
  int i;
  fprintf(f, "const char *const %s[%s] = {", type, count);
  for (i = 0; i < n; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", text ? v[i].comment : v[i].name);
  fprintf(f, "};\n");
}

static void c_source(const char *path) {
  FILE *f = open_out(path);
  int i;
  fprintf(f, "/* Generated by scripts/loomgen.c from hw/spec/ (*.def files). Do not edit. */\n");
  fprintf(f, "#include \"loom/hwconfig.h\"\n\n");
  c_names(f, "loom_opcode_names", "LOOM_OP_COUNT", opcodes, COUNT(opcodes), 0);
  c_names(f, "loom_buffer_names", "LOOM_BUF_COUNT", buffers, COUNT(buffers), 0);
  c_names(f, "loom_queue_names", "LOOM_Q_COUNT", queues, COUNT(queues), 0);
  c_names(f, "loom_alu_op_names", "LOOM_ALU_COUNT", alu_ops, COUNT(alu_ops), 0);
  c_names(f, "loom_error_names", "LOOM_ERR_COUNT", errors, COUNT(errors), 0);
  c_names(f, "loom_error_texts", "LOOM_ERR_COUNT", errors, COUNT(errors), 1);
  c_names(f, "loom_counter_names", "LOOM_CNT_COUNT", counters, COUNT(counters), 0);
  fprintf(f, "\n");
  fprintf(f, "const struct loom_hw_config loom_hw_configs[LOOM_CONFIG_COUNT] = {\n");
  for (i = 0; i < COUNT(configs); i++) {
    const struct config *c = &configs[i];
    struct derived d = derive(c);
    fprintf(f, "  {\"%s\", 0x%08Xu, %d, %d, %d, /* rows: */ %d, %d, %d, %d, %d,\n"
               "   /* kib: */ %d, %d, %d, %d, %d, %d, %d, %d, %d, \"%s\", \"%s\"},\n",
            c->name, d.hash, c->batch, c->block_in, c->block_out, d.inp_rows, d.wgt_rows,
            d.acc_rows, d.uop_rows, d.acc_rows, c->inp_kib, c->wgt_kib, c->acc_kib,
            c->uop_kib, c->bus_bits, c->clock_mhz, c->cmdq, c->tokq, c->max_rd, c->part,
            c->comment);
  }
  fprintf(f, "};\n");
  fclose(f);
}

/* ---- Verilog ---- */

static void verilog_isa(FILE *f) {
  int i;
  char fmt[32], name[64];
  fprintf(f, "// Generated by scripts/loomgen.c from hw/spec/ (*.def files). Do not edit.\n");
  fprintf(f, "`ifndef LOOM_ISA_VH\n`define LOOM_ISA_VH\n");
  fprintf(f, "`define LOOM_ISA_VERSION 16'd%d\n`define LOOM_INSN_BITS %d\n`define LOOM_UOP_BITS %d\n",
          LOOM_ISA_VERSION, LOOM_INSN_BITS, LOOM_UOP_BITS);
  fprintf(f, "`define LOOM_NUM_SEGMENTS %d\n`define LOOM_HW_ID 32'h%08X\n", LOOM_NUM_SEGMENTS, LOOM_HW_ID);
  for (i = 0; i < COUNT(opcodes); i++) fprintf(f, "`define LOOM_OP_%s 3'd%d\n", opcodes[i].name, opcodes[i].value);
  for (i = 0; i < COUNT(buffers); i++) fprintf(f, "`define LOOM_BUF_%s 3'd%d\n", buffers[i].name, buffers[i].value);
  for (i = 0; i < COUNT(queues); i++) fprintf(f, "`define LOOM_Q_%s 2'd%d\n", queues[i].name, queues[i].value);
  for (i = 0; i < COUNT(alu_ops); i++) fprintf(f, "`define LOOM_ALU_%s 3'd%d\n", alu_ops[i].name, alu_ops[i].value);
  for (i = 0; i < COUNT(errors); i++) fprintf(f, "`define LOOM_ERR_%s 4'd%d\n", errors[i].name, errors[i].value);
  for (i = 0; i < COUNT(isa_fields); i++) {
    upper(fmt, isa_fields[i].format, sizeof fmt);
    upper(name, isa_fields[i].name, sizeof name);
    fprintf(f, "`define LOOM_%s_%s_LSB %d\n`define LOOM_%s_%s_W %d\n", fmt, name, isa_fields[i].lsb,
            fmt, name, isa_fields[i].width);
  }
  for (i = 0; i < COUNT(regs); i++) fprintf(f, "`define LOOM_REG_%s 12'h%03X\n", regs[i].name, regs[i].value);
  fprintf(f, "`define LOOM_REG_SEG_STRIDE 12'h%03X\n`define LOOM_REG_COUNTER_BASE 12'h%03X\n",
          LOOM_REG_SEG_STRIDE, LOOM_REG_COUNTER_BASE);
  for (i = 0; i < COUNT(ctrl_bits); i++) fprintf(f, "`define LOOM_CTRL_%s %d\n", ctrl_bits[i].name, ctrl_bits[i].value);
  for (i = 0; i < COUNT(counters); i++) fprintf(f, "`define LOOM_CNT_%s %d\n", counters[i].name, counters[i].value);
  fprintf(f, "`define LOOM_CNT_COUNT %d\n`endif\n", COUNT(counters));
}

static int log2i(int v) {
  int l = 0;
  while ((1 << l) < v) l++;
  return l;
}

static void verilog_config(FILE *f, const struct config *c) {
  struct derived d = derive(c);
  fprintf(f, "// Generated by scripts/loomgen.c from hw/spec/loom_configs.def. Do not edit.\n");
  fprintf(f, "// Configuration '%s': %s\n", c->name, c->comment);
  fprintf(f, "`ifndef LOOM_CFG_VH\n`define LOOM_CFG_VH\n");
  fprintf(f, "`define LOOM_CFG_NAME \"%s\"\n`define LOOM_CFG_HASH 32'h%08X\n", c->name, d.hash);
  fprintf(f, "`define LOOM_CFG_BATCH %d\n`define LOOM_CFG_BLOCK_IN %d\n`define LOOM_CFG_BLOCK_OUT %d\n",
          c->batch, c->block_in, c->block_out);
  fprintf(f, "`define LOOM_CFG_INP_ROWS %d\n`define LOOM_CFG_WGT_ROWS %d\n`define LOOM_CFG_ACC_ROWS %d\n`define LOOM_CFG_UOP_ROWS %d\n",
          d.inp_rows, d.wgt_rows, d.acc_rows, d.uop_rows);
  fprintf(f, "`define LOOM_CFG_INP_ADDR_W %d\n`define LOOM_CFG_WGT_ADDR_W %d\n`define LOOM_CFG_ACC_ADDR_W %d\n`define LOOM_CFG_UOP_ADDR_W %d\n",
          log2i(d.inp_rows), log2i(d.wgt_rows), log2i(d.acc_rows), log2i(d.uop_rows));
  fprintf(f, "`define LOOM_CFG_BUS_BITS %d\n`define LOOM_CFG_CLOCK_MHZ %d\n", c->bus_bits, c->clock_mhz);
  fprintf(f, "`define LOOM_CFG_CMD_QUEUE_DEPTH %d\n`define LOOM_CFG_TOKEN_QUEUE_DEPTH %d\n`define LOOM_CFG_MAX_OUTSTANDING_READS %d\n",
          c->cmdq, c->tokq, c->max_rd);
  fprintf(f, "`endif\n");
}

static void verilog(const char *dir) {
  char path[1024];
  int i;
  FILE *f;
  snprintf(path, sizeof path, "%s/loom_isa.vh", dir);
  f = open_out(path);
  verilog_isa(f);
  fclose(f);
  for (i = 0; i < COUNT(configs); i++) {
    snprintf(path, sizeof path, "%s/loom_cfg_%s.vh", dir, configs[i].name);
    f = open_out(path);
    verilog_config(f, &configs[i]);
    fclose(f);
  }
}

static void tcl(const char *dir) {
  char path[1024];
  int i;
  for (i = 0; i < COUNT(configs); i++) {
    const struct config *c = &configs[i];
    struct derived d = derive(c);
    FILE *f;
    snprintf(path, sizeof path, "%s/loom_cfg_%s.tcl", dir, c->name);
    f = open_out(path);
    fprintf(f, "# Generated by scripts/loomgen.c from hw/spec/loom_configs.def. Do not edit.\n");
    fprintf(f, "set loom_cfg [dict create name %s hash 0x%08X batch %d block_in %d block_out %d "
               "bus_bits %d clock_mhz %d part %s]\n",
            c->name, d.hash, c->batch, c->block_in, c->block_out, c->bus_bits, c->clock_mhz, c->part);
    fclose(f);
  }
}

/* ---- boards (bitstreams/boards.def) ---- */

static const struct config *find_config(const char *name) {
  int i;
  for (i = 0; i < COUNT(configs); i++)
    if (!strcmp(configs[i].name, name)) return &configs[i];
  die("unknown configuration", name);
  return NULL;
}

static const struct part *find_part(const char *name) {
  int i;
  for (i = 0; i < COUNT(parts); i++)
    if (!strcmp(parts[i].name, name)) return &parts[i];
  die("part missing from LOOM_PARTS in bitstreams/boards.def", name);
  return NULL;
}

static const struct flow *find_flow(const char *name) {
  int i;
  for (i = 0; i < COUNT(flows); i++)
    if (!strcmp(flows[i].name, name)) return &flows[i];
  die("unknown flow in bitstreams/boards.def", name);
  return NULL;
}

static const struct board *find_board(const char *name) {
  int i;
  for (i = 0; i < COUNT(boards); i++)
    if (!strcmp(boards[i].name, name)) return &boards[i];
  die("unknown board (see `loomgen boards`)", name);
  return NULL;
}

/* Every cross-reference of the tables resolves: boards name existing
 * configurations, flows and parts, and every configuration's default part
 * has a known capacity (the Yosys check needs it). */
static void check_boards(void) {
  int i;
  for (i = 0; i < COUNT(boards); i++) {
    find_config(boards[i].config);
    find_flow(boards[i].flow);
    find_part(boards[i].part);
    if (!strcmp(boards[i].flow, "vitis") != (boards[i].platform[0] != 0))
      die("a board has an XRT platform exactly when its flow is vitis", boards[i].name);
  }
  for (i = 0; i < COUNT(configs); i++) find_part(configs[i].part);
}

/* ---- on-chip memory of a board's configuration ----
 *
 * The five buffers as docs/configs.md defines them (rows x row bits), tiled
 * onto the memories of 7-series and UltraScale+ parts the way synthesis
 * infers a simple dual-port RAM: each buffer takes the cheapest single
 * aspect ratio of RAMB36 (or RAMB18, counted as half), or of URAM288 when
 * the board moves it there (boards.def `uram`, LOOM_URAM_BUFFERS).  This is
 * what Yosys maps (make board-estimates agrees to the half block) and it
 * decides which configuration fits which board, in a millisecond, so
 * `make test` can check it; LUTs and DSPs need the real synthesis. */

struct buffer_shape {
  const char *inst; /* loom_top's instance, as LOOM_URAM_BUFFERS names it */
  long rows, bits;
};

static int shapes(const struct config *c, struct buffer_shape *s) {
  struct derived d = derive(c);
  s[0] = (struct buffer_shape){"u_inp", d.inp_rows, 8L * d.inp_row_bytes};
  s[1] = (struct buffer_shape){"u_wgt", d.wgt_rows, 8L * d.wgt_row_bytes};
  s[2] = (struct buffer_shape){"u_acc", d.acc_rows, 8L * d.acc_row_bytes};
  s[3] = (struct buffer_shape){"u_out", d.acc_rows, 8L * d.out_row_bytes};
  s[4] = (struct buffer_shape){"u_uop", d.uop_rows, 32};
  return 5;
}

static long tiles(long rows, long bits, long depth, long width) {
  return ((rows + depth - 1) / depth) * ((bits + width - 1) / width);
}

/* In half BRAM36 (one RAMB18) units. */
static long bram18_units(long rows, long bits) {
  static const long b36[][2] = {{512, 72}, {1024, 36}, {2048, 18}, {4096, 9}, {8192, 4}, {16384, 2}, {32768, 1}};
  static const long b18[][2] = {{512, 36}, {1024, 18}, {2048, 9}, {4096, 4}, {8192, 2}, {16384, 1}};
  long best = -1, n;
  int i;
  for (i = 0; i < COUNT(b36); i++)
    if (n = 2 * tiles(rows, bits, b36[i][0], b36[i][1]), best < 0 || n < best) best = n;
  for (i = 0; i < COUNT(b18); i++)
    if (n = tiles(rows, bits, b18[i][0], b18[i][1]), n < best) best = n;
  return best;
}

static int in_uram(const struct board *b, const char *inst) {
  const char *list = LOOM_URAM_BUFFERS, *p = strstr(list, inst);
  size_t n = strlen(inst);
  return b->uram && p && (p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]);
}

struct memory_use {
  long bram18, uram, kib;
};

static struct memory_use board_memory(const struct board *b) {
  struct buffer_shape s[5];
  struct memory_use m = {0, 0, 0};
  int i, n = shapes(find_config(b->config), s);
  for (i = 0; i < n; i++) {
    m.kib += s[i].rows * s[i].bits / 8 / 1024;
    if (in_uram(b, s[i].inst)) m.uram += tiles(s[i].rows, s[i].bits, 4096, 72);
    else m.bram18 += bram18_units(s[i].rows, s[i].bits);
  }
  return m;
}

static void boards_list(void) {
  int i;
  check_boards();
  for (i = 0; i < COUNT(boards); i++) {
    const struct board *b = &boards[i];
    const struct part *p = find_part(b->part);
    struct memory_use m = board_memory(b);
    printf("%s %s %s %s %s %d %d %ld %ld %ld %ld %ld %ld.%ld %ld\n", b->name, b->config, b->flow,
           b->part, p->family, b->uram, find_config(b->config)->clock_mhz, p->lut, p->ff, p->dsp,
           p->bram36, p->uram, m.bram18 / 2, 5 * (m.bram18 % 2), m.uram);
  }
}

static void board_tcl(const char *dir) {
  char path[1024];
  int i;
  check_boards();
  for (i = 0; i < COUNT(boards); i++) {
    const struct board *b = &boards[i];
    const struct flow *fl = find_flow(b->flow);
    FILE *f;
    snprintf(path, sizeof path, "%s/loom_board_%s.tcl", dir, b->name);
    f = open_out(path);
    fprintf(f, "# Generated by scripts/loomgen.c from bitstreams/boards.def. Do not edit.\n");
    fprintf(f, "set loom_board [dict create name %s config %s flow %s part %s board_part {%s} "
               "uram %d uram_buffers {%s} platform {%s} base 0x%08X span 0x%X vivado_version %s "
               "kernel %s ip_vlnv %s description {%s}]\n",
            b->name, b->config, b->flow, b->part, b->board_part, b->uram, LOOM_URAM_BUFFERS,
            b->platform, fl->base, fl->span, LOOM_VIVADO_VERSION, LOOM_KERNEL_NAME,
            LOOM_KERNEL_VLNV, b->comment);
    fclose(f);
  }
}

/* The reg property in the cells of the PS bus: one on Zynq-7000 (32-bit),
 * two on Zynq UltraScale+. */
static int dt_cells(const struct board *b) { return strcmp(b->flow, "zynq7") ? 2 : 1; }

static void dt_cell_pair(FILE *f, unsigned v, int cells) {
  if (cells == 2) fprintf(f, "0x0 ");
  fprintf(f, "0x%x", v);
}

static void dtso(const char *name, const char *path) {
  const struct board *b;
  const struct config *c;
  const struct flow *fl;
  FILE *f;
  int cells;
  check_boards();
  b = find_board(name);
  c = find_config(b->config);
  fl = find_flow(b->flow);
  if (!fl->span) die("board has no device tree (XRT platform)", name);
  cells = dt_cells(b);
  f = open_out(path);
  fprintf(f, "// Generated by scripts/loomgen.c from bitstreams/boards.def and hw/spec/. Do not edit:\n");
  fprintf(f, "// change the .def files and run `make board-files-fix` (tests/boards compares).\n//\n");
  fprintf(f, "// Loom on the %s: configuration `%s` (hash 0x%08X), PL clock %d MHz.\n", b->comment,
          c->name, derive(c).hash, c->clock_mhz);
  fprintf(f, "// Binding: docs/linux-driver.md.  Deployment: docs/deploy.md.\n");
  fprintf(f, "// Compile: dtc -@ -I dts -O dtb -o loom.dtbo loom.dtso\n");
  fprintf(f, "/dts-v1/;\n/plugin/;\n\n/ {\n");
  fprintf(f, "\tfragment@0 {\n\t\ttarget = <&fpga_full>;\n\t\t__overlay__ {\n");
  fprintf(f, "\t\t\tfirmware-name = \"%s\";\n\t\t};\n\t};\n\n", LOOM_FIRMWARE_NAME);
  fprintf(f, "\tfragment@1 {\n\t\ttarget = <&amba>;\n\t\t__overlay__ {\n");
  fprintf(f, "\t\t\t#address-cells = <%d>;\n\t\t\t#size-cells = <%d>;\n\n", cells, cells);
  fprintf(f, "\t\t\tloom@%x {\n", fl->base);
  fprintf(f, "\t\t\t\tcompatible = \"%s\";\n", LOOM_DT_COMPATIBLE);
  fprintf(f, "\t\t\t\treg = <");
  dt_cell_pair(f, fl->base, cells);
  fprintf(f, " ");
  dt_cell_pair(f, fl->span, cells);
  fprintf(f, ">;\n");
  fprintf(f, "\t\t\t\tinterrupt-parent = <&%s>;\n", fl->irq_parent);
  fprintf(f, "\t\t\t\tinterrupts = <0 %d 4>; /* SPI, level high */\n", fl->irq);
  fprintf(f, "\t\t\t\tclocks = <&%s>;\n\t\t\t\tclock-names = \"%s\";\n", fl->clock, LOOM_DT_CLOCK_NAME);
  fprintf(f, "\t\t\t\tassigned-clocks = <&%s>;\n", fl->clock);
  fprintf(f, "\t\t\t\tassigned-clock-rates = <%d>;\n", c->clock_mhz * 1000000);
  fprintf(f, "\t\t\t};\n\t\t};\n\t};\n};\n");
  fclose(f);
}

/* ---- Vitis RTL kernel ---- */

struct karg {
  char name[32];
  int pointer;
  unsigned offset, size;
};

/* The kernel arguments are the registers a job writes (docs/registers.md,
 * "Programming sequence" step 3), in register order: every 64-bit pair
 * becomes one 8-byte argument.  Bases are global-memory pointers on the
 * master port, so v++ connects that port to the bank XRT allocates from. */
static int kernel_args(struct karg *a) {
  int n = 0, s;
  a[n++] = (struct karg){"insn", 1, OFF_INSN_ADDR_LO, 8};
  a[n++] = (struct karg){"insn_count", 0, OFF_INSN_COUNT, 4};
  for (s = 0; s < LOOM_NUM_SEGMENTS; s++) {
    a[n] = (struct karg){"", 1, OFF_SEG_BASE_LO + LOOM_REG_SEG_STRIDE * s, 8};
    snprintf(a[n++].name, sizeof a[0].name, "seg%d_base", s);
    a[n] = (struct karg){"", 0, OFF_SEG_SIZE_LO + LOOM_REG_SEG_STRIDE * s, 8};
    snprintf(a[n++].name, sizeof a[0].name, "seg%d_size", s);
  }
  return n;
}

static const char *karg_type(const struct karg *a) {
  return a->pointer ? "void*" : a->size == 8 ? "ulong" : "uint";
}

/* The control window: every register and counter, rounded up to a power of
 * two of at least 4 KiB (the smallest AXI-Lite segment Vivado assigns). */
static unsigned ctrl_range(void) {
  unsigned end = LOOM_REG_COUNTER_BASE + LOOM_REG_COUNTER_STRIDE * COUNT(counters), r = 0x1000;
  while (r < end) r <<= 1;
  return r;
}

static void kernel_xml(const char *cfg, const char *path) {
  const struct config *c = find_config(cfg);
  struct karg a[2 + 2 * LOOM_NUM_SEGMENTS];
  int i, n = kernel_args(a);
  FILE *f = open_out(path);
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(f, "<!-- Generated by scripts/loomgen.c from hw/spec/loom_regs.def for configuration %s "
             "(hash 0x%08X). Do not edit. -->\n", c->name, derive(c).hash);
  fprintf(f, "<root versionMajor=\"1\" versionMinor=\"6\">\n");
  fprintf(f, "  <kernel name=\"%s\" language=\"ip_c\" vlnv=\"%s\" attributes=\"\" "
             "preferredWorkGroupSizeMultiple=\"0\" workGroupSize=\"1\" interrupt=\"true\" "
             "hwControlProtocol=\"ap_ctrl_hs\">\n", LOOM_KERNEL_NAME, LOOM_KERNEL_VLNV);
  fprintf(f, "    <ports>\n");
  fprintf(f, "      <port name=\"%s\" mode=\"slave\" range=\"0x%X\" dataWidth=\"32\" "
             "portType=\"addressable\" base=\"0x0\"/>\n", LOOM_KERNEL_CTRL_PORT, ctrl_range());
  fprintf(f, "      <port name=\"%s\" mode=\"master\" range=\"0xFFFFFFFFFFFFFFFF\" dataWidth=\"%d\" "
             "portType=\"addressable\" base=\"0x0\"/>\n", LOOM_KERNEL_MEM_PORT, c->bus_bits);
  fprintf(f, "    </ports>\n    <args>\n");
  for (i = 0; i < n; i++)
    fprintf(f, "      <arg name=\"%s\" addressQualifier=\"%d\" id=\"%d\" port=\"%s\" size=\"0x%X\" "
               "offset=\"0x%02X\" type=\"%s\" hostOffset=\"0x0\" hostSize=\"0x%X\"/>\n",
            a[i].name, a[i].pointer, i, a[i].pointer ? LOOM_KERNEL_MEM_PORT : LOOM_KERNEL_CTRL_PORT,
            a[i].size, a[i].offset, karg_type(&a[i]), a[i].size);
  fprintf(f, "    </args>\n  </kernel>\n</root>\n");
  fclose(f);
}

static void vitis_cfg(const char *name, const char *path) {
  const struct board *b;
  FILE *f;
  check_boards();
  b = find_board(name);
  if (!b->platform[0]) die("board is not an XRT platform", name);
  f = open_out(path);
  fprintf(f, "# Generated by scripts/loomgen.c from bitstreams/boards.def. Do not edit.\n");
  fprintf(f, "# v++ link settings of the %s; bitstreams/%s/link.cfg adds connectivity.\n",
          b->comment, b->name);
  fprintf(f, "platform=%s\nkernel_frequency=%d\n", b->platform, find_config(b->config)->clock_mhz);
  fclose(f);
}

/* ---- docs ---- */

static void docs_fields(void) {
  int i;
  printf("| format | field | bits | width | signed | meaning |\n|---|---|---|---|---|---|\n");
  for (i = 0; i < COUNT(isa_fields); i++) {
    const struct field *x = &isa_fields[i];
    printf("| %s | `%s` | %d..%d | %d | %s | %s |\n", x->format, x->name, x->lsb,
           x->lsb + x->width - 1, x->width, x->is_signed ? "yes" : "no", x->comment);
  }
}

static void docs_named(const char *title, const struct named *v, int n) {
  int i;
  printf("\n%s\n\n| name | value | meaning |\n|---|---|---|\n", title);
  for (i = 0; i < n; i++) printf("| `%s` | %d | %s |\n", v[i].name, v[i].value, v[i].comment);
}

static void docs_enums(void) {
  int i;
  printf("| opcode | value | queue | meaning |\n|---|---|---|---|\n");
  for (i = 0; i < COUNT(opcodes); i++)
    printf("| `%s` | %d | %s | %s |\n", opcodes[i].name, opcodes[i].value, opcodes[i].extra, opcodes[i].comment);
  docs_named("Buffers:", buffers, COUNT(buffers));
  docs_named("Queues:", queues, COUNT(queues));
  docs_named("ALU operations:", alu_ops, COUNT(alu_ops));
  docs_named("Error codes:", errors, COUNT(errors));
}

static void docs_regs(void) {
  int i;
  printf("| offset | register | access | meaning |\n|---|---|---|---|\n");
  for (i = 0; i < COUNT(regs); i++)
    printf("| 0x%02X | `%s` | %s | %s |\n", regs[i].value, regs[i].name, regs[i].extra, regs[i].comment);
  printf("\nCounters are 64 bits at 0x%X + 0x%X * index (low word first):\n\n", LOOM_REG_COUNTER_BASE, LOOM_REG_COUNTER_STRIDE);
  printf("| index | counter | kind | meaning |\n|---|---|---|---|\n");
  for (i = 0; i < COUNT(counters); i++)
    printf("| %d | `%s` | %s | %s |\n", counters[i].value, counters[i].name, counters[i].extra, counters[i].comment);
}

static void docs_configs(void) {
  int i;
  printf("| name | BATCH x BLOCK_IN x BLOCK_OUT | INP / WGT / ACC / UOP KiB | rows | OUT KiB | bus | clock | queues cmd/token | hash | part |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (i = 0; i < COUNT(configs); i++) {
    const struct config *c = &configs[i];
    struct derived d = derive(c);
    printf("| `%s` | %dx%dx%d | %d / %d / %d / %d | %d / %d / %d / %d | %d | %d-bit | %d MHz | %d / %d | `0x%08X` | %s |\n",
           c->name, c->batch, c->block_in, c->block_out, c->inp_kib, c->wgt_kib, c->acc_kib,
           c->uop_kib, d.inp_rows, d.wgt_rows, d.acc_rows, d.uop_rows,
           d.acc_rows * d.out_row_bytes / 1024, c->bus_bits, c->clock_mhz, c->cmdq, c->tokq,
           d.hash, c->part);
  }
}

static void docs_boards(void) {
  int i;
  check_boards();
  printf("| board | part | family | config | PL clock | flow |\n|---|---|---|---|---|---|\n");
  for (i = 0; i < COUNT(boards); i++) {
    const struct board *b = &boards[i];
    printf("| `%s` | %s | %s | `%s` | %d MHz | %s%s%s |\n", b->name, b->part,
           find_part(b->part)->family, b->config, find_config(b->config)->clock_mhz, b->flow,
           b->platform[0] ? ": " : "", b->platform);
  }
}

static void docs_board_memory(void) {
  int i;
  check_boards();
  printf("| board | config | buffers | BRAM36 | URAM288 | fits |\n|---|---|---|---|---|---|\n");
  for (i = 0; i < COUNT(boards); i++) {
    const struct board *b = &boards[i];
    const struct part *p = find_part(b->part);
    struct memory_use m = board_memory(b);
    int fits = m.bram18 <= 2 * p->bram36 && m.uram <= p->uram;
    printf("| `%s` | `%s` | %ld KiB | %ld.%ld of %ld (%ld%%) | %ld of %ld | %s |\n", b->name, b->config,
           m.kib, m.bram18 / 2, 5 * (m.bram18 % 2), p->bram36, 50 * m.bram18 / p->bram36, m.uram,
           p->uram, fits ? "yes" : "**no**");
  }
}

static void docs_board_parts(void) {
  int i, j;
  check_boards();
  printf("| part | family | LUT | FF | DSP | BRAM36 (BRAM18) | URAM | boards |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (i = 0; i < COUNT(parts); i++) {
    const struct part *p = &parts[i];
    printf("| %s | %s | %ld | %ld | %ld | %ld (%ld) | %ld |", p->name, p->family, p->lut, p->ff,
           p->dsp, p->bram36, 2 * p->bram36, p->uram);
    for (j = 0; j < COUNT(boards); j++)
      if (!strcmp(boards[j].part, p->name)) printf(" %s", boards[j].name);
    printf(" |\n");
  }
}

static void docs_kernel_args(void) {
  struct karg a[2 + 2 * LOOM_NUM_SEGMENTS];
  int i, n = kernel_args(a);
  printf("| id | argument | type | offset | size | port |\n|---|---|---|---|---|---|\n");
  for (i = 0; i < n; i++)
    printf("| %d | `%s` | %s | 0x%02X | %u | %s |\n", i, a[i].name, karg_type(&a[i]), a[i].offset,
           a[i].size, a[i].pointer ? LOOM_KERNEL_MEM_PORT : LOOM_KERNEL_CTRL_PORT);
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "boards")) {
    boards_list();
    return 0;
  }
  if (argc == 4 && !strcmp(argv[1], "dtso")) dtso(argv[2], argv[3]);
  else if (argc == 4 && !strcmp(argv[1], "kernel-xml")) kernel_xml(argv[2], argv[3]);
  else if (argc == 4 && !strcmp(argv[1], "vitis-cfg")) vitis_cfg(argv[2], argv[3]);
  else if (argc != 3)
    die("usage: loomgen c-header|c-source|verilog|tcl|board-tcl|docs ARG, loomgen boards, "
        "loomgen dtso|vitis-cfg BOARD FILE, loomgen kernel-xml CONFIG FILE", NULL);
  else if (!strcmp(argv[1], "c-header")) c_header(argv[2]);
  else if (!strcmp(argv[1], "c-source")) c_source(argv[2]);
  else if (!strcmp(argv[1], "verilog")) verilog(argv[2]);
  else if (!strcmp(argv[1], "tcl")) tcl(argv[2]);
  else if (!strcmp(argv[1], "board-tcl")) board_tcl(argv[2]);
  else if (!strcmp(argv[1], "docs")) {
    if (!strcmp(argv[2], "isa-fields")) docs_fields();
    else if (!strcmp(argv[2], "isa-enums")) docs_enums();
    else if (!strcmp(argv[2], "regs")) docs_regs();
    else if (!strcmp(argv[2], "configs")) docs_configs();
    else if (!strcmp(argv[2], "boards")) docs_boards();
    else if (!strcmp(argv[2], "board-parts")) docs_board_parts();
    else if (!strcmp(argv[2], "board-memory")) docs_board_memory();
    else if (!strcmp(argv[2], "kernel-args")) docs_kernel_args();
    else die("unknown docs table", argv[2]);
  } else die("unknown command", argv[1]);
  return 0;
}
