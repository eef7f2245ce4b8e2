/*
 * loomgen - generate every derived form of the ISA, the register map and the
 * hardware configurations from hw/spec/ (*.def files).
 *
 *   loomgen c-header  FILE   C header: enums, field positions, registers
 *   loomgen c-source  FILE   C source: name tables and the configurations
 *   loomgen verilog   DIR    loom_isa.vh and one loom_cfg_<name>.vh per config
 *   loomgen tcl       DIR    loom_cfg_<name>.tcl, parameters for board flows
 *   loomgen docs      KIND   markdown table (isa-fields, isa-enums, regs,
 *                            configs) on stdout, pasted into docs/ between
 *                            markers and checked by `make check-docs`
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

int main(int argc, char **argv) {
  if (argc != 3) die("usage: loomgen c-header|c-source|verilog|tcl|docs ARG", NULL);
  if (!strcmp(argv[1], "c-header")) c_header(argv[2]);
  else if (!strcmp(argv[1], "c-source")) c_source(argv[2]);
  else if (!strcmp(argv[1], "verilog")) verilog(argv[2]);
  else if (!strcmp(argv[1], "tcl")) tcl(argv[2]);
  else if (!strcmp(argv[1], "docs")) {
    if (!strcmp(argv[2], "isa-fields")) docs_fields();
    else if (!strcmp(argv[2], "isa-enums")) docs_enums();
    else if (!strcmp(argv[2], "regs")) docs_regs();
    else if (!strcmp(argv[2], "configs")) docs_configs();
    else die("unknown docs table", argv[2]);
  } else die("unknown command", argv[1]);
  return 0;
}
