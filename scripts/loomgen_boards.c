/*
 * loomgen_boards.c - loomgen's board commands (bitstreams/boards.def):
 * the board list, each board's Tcl, on-chip memory use, device-tree overlays,
 * and the Vitis RTL kernel description.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "scripts/loomgen.h"

/* ---- boards (bitstreams/boards.def) ---- */

const struct config *find_config(const char *name) {
  int i;
  for (i = 0; i < COUNT(configs); i++)
    if (!strcmp(configs[i].name, name)) return &configs[i];
  die("unknown configuration", name);
  return NULL;
}

const struct part *find_part(const char *name) {
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
void check_boards(void) {
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


struct memory_use board_memory(const struct board *b) {
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

void boards_list(void) {
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

void board_tcl(const char *dir) {
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

void dtso(const char *name, const char *path) {
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


/* The kernel arguments are the registers a job writes (docs/registers.md,
 * "Programming sequence" step 3), in register order: every 64-bit pair
 * becomes one 8-byte argument.  Bases are global-memory pointers on the
 * master port, so v++ connects that port to the bank XRT allocates from. */
int kernel_args(struct karg *a) {
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

const char *karg_type(const struct karg *a) {
  return a->pointer ? "void*" : a->size == 8 ? "ulong" : "uint";
}

/* The control window: every register and counter, rounded up to a power of
 * two of at least 4 KiB (the smallest AXI-Lite segment Vivado assigns). */
static unsigned ctrl_range(void) {
  unsigned end = LOOM_REG_COUNTER_BASE + LOOM_REG_COUNTER_STRIDE * COUNT(counters), r = 0x1000;
  while (r < end) r <<= 1;
  return r;
}

void kernel_xml(const char *cfg, const char *path) {
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

void vitis_cfg(const char *name, const char *path) {
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

