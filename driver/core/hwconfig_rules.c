/*
 * hwconfig_rules.c - what a hardware configuration's keys imply: buffer
 * rows, the hash, the rules of the ISA and the RTL, the on-chip memory and
 * DSPs it takes, and its Verilog, Tcl and text forms.
 *
 * Compiled into scripts/loomgen (the named configurations of
 * hw/spec/loom_configs.def) and into libloom_core (configurations from
 * files), so both derive every value the same way; that is what lets a
 * configuration file stand in for a named configuration hash for hash.
 * Hence no generated header here: the ISA version and the micro-op field
 * widths are read from hw/spec/loom_isa.def itself.
 *
 * The hash is zlib's crc32 of a canonical text of the keys that decide what
 * a binary may do (docs/isa.md): the ISA version, the name, the array shape,
 * the buffer sizes, the bus and the queue depths.  The clock, the
 * outstanding reads and the part do not change what a binary computes, so
 * they stay out of it.
 *
 * The rules are those the RTL checks at elaboration (hw/rtl/loom_top.v and
 * its submodules) and those of the ISA's fields: a configuration that
 * passes here elaborates, and every buffer row is addressable by a
 * micro-op.
 */
#include "loom/hwconfig_rules.h"

#include <stdarg.h>
#include <string.h>
#include <zlib.h>

#include "hw/spec/loom_isa.def"

/* Field widths of the ISA as constants: W_UOP_acc, W_GEMM_uop_begin, ... */
#define AS_WIDTH(f, n, l, w, s, c) W_##f##_##n = w,
enum { LOOM_ISA_FIELDS(AS_WIDTH) LOOM_UOP_FIELDS(AS_WIDTH) };
#undef AS_WIDTH

const char *const loom_hw_ram_insts[LOOM_HW_RAM_COUNT] = {"u_inp0", "u_inp1", "u_wgt", "u_acc",
                                                          "u_out",  "u_uop",  "u_par"};

static int is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

static int log2i(long v) {
  int l = 0;
  while ((1L << l) < v) l++;
  return l;
}

/* Row bytes of INP, WGT, ACC, OUT, UOP (docs/configs.md). */
static void row_bytes(const struct loom_hw_config *c, long b[LOOM_HW_BUFFER_COUNT]) {
  b[0] = (long)c->batch * c->block_in;
  b[1] = (long)c->block_out * c->block_in;
  b[2] = (long)c->batch * c->block_out * 4;
  b[3] = (long)c->batch * c->block_out;
  b[4] = 4;
}

static long rows_of(long kib, long bytes) { return bytes > 0 ? kib * 1024 / bytes : 0; }

static void canonical(const struct loom_hw_config *c, char *buf, size_t n) {
  snprintf(buf, n,
           "loom-isa=%d;name=%s;batch=%d;block_in=%d;block_out=%d;inp_kib=%d;"
           "wgt_kib=%d;acc_kib=%d;uop_kib=%d;bus_bits=%d;cmdq=%d;tokq=%d;",
           LOOM_ISA_VERSION, c->name, c->batch, c->block_in, c->block_out, c->inp_kib,
           c->wgt_kib, c->acc_kib, c->uop_kib, c->bus_bits, c->cmd_queue_depth,
           c->token_queue_depth);
}

void loom_hw_derive(struct loom_hw_config *c) {
  long b[LOOM_HW_BUFFER_COUNT];
  char text[256];
  row_bytes(c, b);
  c->inp_rows = (int)rows_of(c->inp_kib, b[0]);
  c->wgt_rows = (int)rows_of(c->wgt_kib, b[1]);
  c->acc_rows = (int)rows_of(c->acc_kib, b[2]);
  c->uop_rows = (int)rows_of(c->uop_kib, b[4]);
  c->out_rows = c->acc_rows;
  canonical(c, text, sizeof text);
  c->hash = (uint32_t)crc32(0L, (const Bytef *)text, (uInt)strlen(text));
}

/* ---- rules ---- */

struct checker {
  struct loom_hw_violation *v;
  int max, n;
};

__attribute__((format(printf, 3, 4))) static void broken(struct checker *k, const char *key,
                                                        const char *fmt, ...) {
  if (k->n < k->max) {
    va_list ap;
    va_start(ap, fmt);
    k->v[k->n].key = key;
    vsnprintf(k->v[k->n].what, sizeof k->v[k->n].what, fmt, ap);
    va_end(ap);
  }
  k->n++;
}

static void check_name(struct checker *k, const char *name) {
  if (!name[0]) broken(k, "name", "must not be empty");
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_' || *p == '-' || *p == '.')) {
      broken(k, "name", "'%s' may hold only letters, digits, '_', '-' and '.'", name);
      return;
    }
}

/* A buffer of `kib` KiB with rows of `bytes`: a power-of-two row count that
 * the micro-op field of `field_w` bits can index. */
static void check_rows(struct checker *k, const char *key, const char *buf, long kib, long bytes,
                       int field_w, const char *field) {
  if (bytes <= 0) return;
  if (kib * 1024 % bytes) {
    broken(k, key, "%ld KiB is not a whole number of %s rows of %ld bytes", kib, buf, bytes);
    return;
  }
  long rows = kib * 1024 / bytes;
  if (!is_pow2(rows))
    broken(k, key, "%s rows must be a power of two (%ld KiB / %ld bytes = %ld rows)", buf, kib,
           bytes, rows);
  else if (rows > (1L << field_w))
    broken(k, key, "%ld %s rows exceed the %ld the ISA's %d-bit %s field can address", rows, buf,
           1L << field_w, field_w, field);
}

/* A row of `bytes` must be a power of two of whole bus words (loom_load,
 * loom_store, loom_compute move rows as bus beats). */
static void check_row_width(struct checker *k, const char *key, const char *what, long bytes,
                            int bus_bits) {
  if (!is_pow2(bytes))
    broken(k, key, "an %s row (%ld bytes) must be a power of two bytes", what, bytes);
  else if (bus_bits >= 8 && bytes * 8 % bus_bits)
    broken(k, key, "an %s row (%ld bits) must be a whole number of %d-bit bus words", what,
           bytes * 8, bus_bits);
}

static void check_shape(struct checker *k, const struct loom_hw_config *c) {
  if (c->batch != 1 && c->batch != 2 && c->batch != 4) broken(k, "batch", "must be 1, 2 or 4");
  if (!is_pow2(c->block_in)) broken(k, "block_in", "must be a power of two (the GEMM sum tree)");
  else if (16 + log2i(c->block_in) > 32)
    broken(k, "block_in", "%d is too wide: a dot product must fit 32 bits", c->block_in);
  if (!is_pow2(c->block_out) || c->block_out < 2)
    broken(k, "block_out", "must be an even power of two (two products share a DSP)");
  else if (c->block_out != c->block_in)
    broken(k, "block_out", "must equal block_in (ISA v2: depthwise GEMMs and LOAD INP from OUT "
           "pair input lane o with output lane o)");
  check_row_width(k, "block_in", "INP", (long)c->batch * c->block_in, c->bus_bits);
  check_row_width(k, "block_out", "OUT", (long)c->batch * c->block_out, c->bus_bits);
}

static void check_buffers(struct checker *k, const struct loom_hw_config *c) {
  long b[LOOM_HW_BUFFER_COUNT];
  row_bytes(c, b);
  check_rows(k, "inp_kib", "INP", c->inp_kib, b[0], W_UOP_inp, "micro-op inp");
  check_rows(k, "wgt_kib", "WGT", c->wgt_kib, b[1], W_UOP_wgt, "micro-op wgt");
  check_rows(k, "acc_kib", "ACC", c->acc_kib, b[2], W_UOP_acc, "micro-op acc");
  check_rows(k, "uop_kib", "UOP", c->uop_kib, b[4], W_GEMM_uop_begin, "GEMM uop_begin");
}

static void check_machine(struct checker *k, const struct loom_hw_config *c) {
  if (c->bus_bits != 64 && c->bus_bits != 128)
    broken(k, "bus_bits", "must be 64 or 128 (the fetch unit's bus)");
  if (c->clock_mhz < 1 || c->clock_mhz > 1000) broken(k, "clock_mhz", "must be 1..1000");
  if (c->cmd_queue_depth < 1 || c->cmd_queue_depth > 1024)
    broken(k, "cmd_queue_depth", "must be 1..1024");
  if (c->token_queue_depth < 1 || c->token_queue_depth > 1024)
    broken(k, "token_queue_depth", "must be 1..1024");
  if (c->max_outstanding_reads < 1 || c->max_outstanding_reads > 64)
    broken(k, "max_outstanding_reads", "must be 1..64 (the read arbiter's ID space)");
}

int loom_hw_check(const struct loom_hw_config *c, struct loom_hw_violation *v, int max) {
  struct checker k = {v, max, 0};
  check_name(&k, c->name);
  check_shape(&k, c);
  check_buffers(&k, c);
  check_machine(&k, c);
  if (!c->part[0]) broken(&k, "part", "must not be empty");
  return k.n;
}

/* ---- resources ---- */

static long tiles(long rows, long bits, long depth, long width) {
  return ((rows + depth - 1) / depth) * ((bits + width - 1) / width);
}

/* In RAMB18 units: the cheapest single aspect ratio of RAMB36 or RAMB18. */
static long bram18_units(long rows, long bits) {
  static const long b36[][2] = {{512, 72},  {1024, 36}, {2048, 18}, {4096, 9},
                                {8192, 4},  {16384, 2}, {32768, 1}};
  static const long b18[][2] = {{512, 36}, {1024, 18}, {2048, 9}, {4096, 4}, {8192, 2}, {16384, 1}};
  long best = -1, n;
  for (size_t i = 0; i < sizeof b36 / sizeof b36[0]; i++)
    if (n = 2 * tiles(rows, bits, b36[i][0], b36[i][1]), best < 0 || n < best) best = n;
  for (size_t i = 0; i < sizeof b18 / sizeof b18[0]; i++)
    if (n = tiles(rows, bits, b18[i][0], b18[i][1]), n < best) best = n;
  return best;
}

static int listed(const char *list, const char *inst) {
  size_t n = strlen(inst);
  for (const char *p = list ? strstr(list, inst) : NULL; p; p = strstr(p + 1, inst))
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n])) return 1;
  return 0;
}

struct loom_hw_memory loom_hw_memory(const struct loom_hw_config *c, const char *uram_buffers) {
  long b[LOOM_HW_BUFFER_COUNT];
  row_bytes(c, b);
  /* in loom_hw_ram_insts' order; PAR holds two ACC rows per row */
  long rows[LOOM_HW_RAM_COUNT] = {c->inp_rows / 2, c->inp_rows / 2, c->wgt_rows, c->acc_rows,
                                  c->acc_rows,     c->uop_rows,     LOOM_PAR_ROWS};
  long bytes[LOOM_HW_RAM_COUNT] = {b[0], b[0], b[1], b[2], b[3], b[4], 2 * b[2]};
  struct loom_hw_memory m = {0, 0, 0};
  for (int i = 0; i < LOOM_HW_RAM_COUNT; i++) {
    m.kib += rows[i] * bytes[i] / 1024;
    if (listed(uram_buffers, loom_hw_ram_insts[i])) m.uram += tiles(rows[i], 8 * bytes[i], 4096, 72);
    else m.bram18 += bram18_units(rows[i], 8 * bytes[i]);
  }
  return m;
}

struct loom_hw_memory loom_hw_memory_fit(const struct loom_hw_config *c,
                                         const struct loom_hw_part *p, const char *uram_buffers,
                                         int *use_uram) {
  struct loom_hw_memory m = loom_hw_memory(c, NULL);
  *use_uram = 0;
  if (m.bram18 <= 2 * p->bram36 || p->uram == 0) return m;
  *use_uram = 1;
  return loom_hw_memory(c, uram_buffers);
}

long loom_hw_dsp_estimate(const struct loom_hw_config *c) {
  long lanes = (long)c->batch * c->block_out;
  return lanes * c->block_in / 2 + 4 * lanes + 6;
}

int loom_hw_check_part(const struct loom_hw_config *c, const struct loom_hw_part *p,
                       const char *uram_buffers, struct loom_hw_violation *v, int max) {
  struct checker k = {v, max, 0};
  long dsp = loom_hw_dsp_estimate(c);
  if (dsp > p->dsp)
    broken(&k, "part", "DSP budget: %dx%dx%d needs about %ld DSPs, %s has %ld", c->batch,
           c->block_in, c->block_out, dsp, p->name, p->dsp);
  int uram;
  struct loom_hw_memory m = loom_hw_memory_fit(c, p, uram_buffers, &uram);
  if (m.bram18 > 2 * p->bram36 || m.uram > p->uram) {
    if (uram)
      broken(&k, "part", "BRAM budget: the buffers (%ld KiB) need %ld.%ld BRAM36 and %ld URAM288 "
                         "with %s in UltraRAM; %s has %ld and %ld",
             m.kib, m.bram18 / 2, 5 * (m.bram18 % 2), m.uram, uram_buffers, p->name, p->bram36,
             p->uram);
    else
      broken(&k, "part", "BRAM budget: the buffers (%ld KiB) need %ld.%ld BRAM36, %s has %ld",
             m.kib, m.bram18 / 2, 5 * (m.bram18 % 2), p->name, p->bram36);
  }
  return k.n;
}

/* ---- text forms ---- */

void loom_hw_write_keys(FILE *f, const struct loom_hw_config *c) {
  fprintf(f, "name = %s\n", c->name);
#define AS_LINE(key, lo, hi, what) fprintf(f, "%s = %d\n", #key, c->key);
  LOOM_HW_INT_KEYS(AS_LINE)
#undef AS_LINE
  fprintf(f, "part = %s\n", c->part);
}

void loom_hw_write_vh(FILE *f, const struct loom_hw_config *c) {
  fprintf(f, "// Generated by Loom (driver/core/hwconfig_rules.c). Do not edit.\n");
  fprintf(f, "// Configuration '%s': %s\n", c->name, c->comment ? c->comment : "from a configuration file");
  fprintf(f, "`ifndef LOOM_CFG_VH\n`define LOOM_CFG_VH\n");
  fprintf(f, "`define LOOM_CFG_NAME \"%s\"\n`define LOOM_CFG_HASH 32'h%08X\n", c->name, c->hash);
  fprintf(f, "`define LOOM_CFG_BATCH %d\n`define LOOM_CFG_BLOCK_IN %d\n`define LOOM_CFG_BLOCK_OUT %d\n",
          c->batch, c->block_in, c->block_out);
  fprintf(f, "`define LOOM_CFG_INP_ROWS %d\n`define LOOM_CFG_WGT_ROWS %d\n"
             "`define LOOM_CFG_ACC_ROWS %d\n`define LOOM_CFG_UOP_ROWS %d\n",
          c->inp_rows, c->wgt_rows, c->acc_rows, c->uop_rows);
  fprintf(f, "`define LOOM_CFG_INP_ADDR_W %d\n`define LOOM_CFG_WGT_ADDR_W %d\n"
             "`define LOOM_CFG_ACC_ADDR_W %d\n`define LOOM_CFG_UOP_ADDR_W %d\n",
          log2i(c->inp_rows), log2i(c->wgt_rows), log2i(c->acc_rows), log2i(c->uop_rows));
  fprintf(f, "`define LOOM_CFG_BUS_BITS %d\n`define LOOM_CFG_CLOCK_MHZ %d\n", c->bus_bits,
          c->clock_mhz);
  fprintf(f, "`define LOOM_CFG_CMD_QUEUE_DEPTH %d\n`define LOOM_CFG_TOKEN_QUEUE_DEPTH %d\n"
             "`define LOOM_CFG_MAX_OUTSTANDING_READS %d\n",
          c->cmd_queue_depth, c->token_queue_depth, c->max_outstanding_reads);
  fprintf(f, "`endif\n");
}

void loom_hw_write_tcl(FILE *f, const struct loom_hw_config *c) {
  fprintf(f, "# Generated by Loom (driver/core/hwconfig_rules.c). Do not edit.\n");
  fprintf(f, "set loom_cfg [dict create name %s hash 0x%08X batch %d block_in %d block_out %d "
             "bus_bits %d clock_mhz %d part %s]\n",
          c->name, c->hash, c->batch, c->block_in, c->block_out, c->bus_bits, c->clock_mhz,
          c->part);
}
