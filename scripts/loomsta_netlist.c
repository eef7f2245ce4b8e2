/*
 * loomsta_netlist.c - the timing graph of a flat Yosys netlist.
 *
 * Nodes are the netlist's bits (Yosys numbers every net bit) plus five inner
 * nodes per DSP slice.  Every combinational cell becomes arcs from its input
 * bits to its output bits whose delay is the net into the cell plus the
 * cell's own delay; every sequential cell becomes path ends (its data,
 * enable and reset pins, with their setup time) and path starts (its
 * outputs, with their clock-to-out).  The net delay grows with the fanout of
 * the driving bit, except on the dedicated wires Vivado does not route: a
 * carry chain (CO to the next CI), a LUT into the MUXF7/8 of its slice, a
 * LUT into the carry or the flip-flop it alone drives, DSP cascades.
 *
 * Cell types are matched by name; a type the model does not know is an
 * error (a new primitive must be described, not silently ignored).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "scripts/loomsta.h"

const char *const sta_level_names[STA_LV_COUNT] = {"-", "LUT", "MUXF", "CARRY", "DSP", "RAM"};

typedef enum { K_LUT, K_MUXF, K_CARRY, K_FF, K_BUF, K_CONST, K_BRAM, K_URAM, K_DSP, K_LUTRAM, K_SRL } kind;

typedef struct {
  sta_graph *g;
  const sta_model *m;
  int *driver;         /* driving cell per bit, -1 */
  const char **dport;  /* its output port */
  int *fanout;         /* input pins per bit */
  const char **ctype;  /* cell types, by index */
  json_t **cjson;      /* cell objects, by index */
  int next_vnode;
} ctx;

static int starts_with(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

static int classify(const char *t, kind *k) {
  if ((starts_with(t, "LUT") && t[3] >= '1' && t[3] <= '6' && !t[4]) || !strcmp(t, "INV")) *k = K_LUT;
  else if (!strcmp(t, "MUXF7") || !strcmp(t, "MUXF8") || !strcmp(t, "MUXF9")) *k = K_MUXF;
  else if (!strcmp(t, "CARRY4") || !strcmp(t, "CARRY8")) *k = K_CARRY;
  else if (starts_with(t, "FDRE") || starts_with(t, "FDSE") || starts_with(t, "FDCE") || starts_with(t, "FDPE"))
    *k = K_FF;
  else if (starts_with(t, "BUFG") || starts_with(t, "BUFH") || starts_with(t, "BUFCE") || !strcmp(t, "IBUF") ||
           !strcmp(t, "IBUFG") || !strcmp(t, "OBUF"))
    *k = K_BUF;
  else if (!strcmp(t, "GND") || !strcmp(t, "VCC")) *k = K_CONST;
  else if (starts_with(t, "RAMB18E") || starts_with(t, "RAMB36E")) *k = K_BRAM;
  else if (starts_with(t, "URAM288")) *k = K_URAM;
  else if (!strcmp(t, "DSP48E1") || !strcmp(t, "DSP48E2")) *k = K_DSP;
  else if (starts_with(t, "RAM") && (strstr(t, "X1") || starts_with(t, "RAM32M") || starts_with(t, "RAM64M")))
    *k = K_LUTRAM;
  else if (!strcmp(t, "SRL16E") || !strcmp(t, "SRLC16E") || !strcmp(t, "SRLC32E")) *k = K_SRL;
  else return -1;
  return 0;
}

static int is_lut_like(const char *t) {
  return starts_with(t, "LUT") || !strcmp(t, "INV") || starts_with(t, "MUXF") || starts_with(t, "CARRY");
}

/* ---- growing arrays ---- */

static void *grow(void *p, int *cap, int need, size_t size) {
  if (need <= *cap) return p;
  int n = *cap ? *cap * 2 : 1024;
  while (n < need) n *= 2;
  p = realloc(p, (size_t)n * size);
  if (!p) {
    fprintf(stderr, "loomsta: out of memory\n");
    exit(1);
  }
  *cap = n;
  return p;
}

static void add_arc(ctx *x, int from, int to, double delay, sta_level lv, int cell) {
  sta_graph *g = x->g;
  g->arcs = grow(g->arcs, &g->cap_arcs, g->n_arcs + 1, sizeof *g->arcs);
  g->arcs[g->n_arcs++] = (sta_arc){from, to, (float)delay, (uint8_t)lv, cell};
}

static void add_start(ctx *x, int node, int cell, double cko) {
  sta_graph *g = x->g;
  g->starts = grow(g->starts, &g->cap_starts, g->n_starts + 1, sizeof *g->starts);
  g->starts[g->n_starts++] = (sta_start){node, cell, (float)cko};
}

static void add_end(ctx *x, int node, int cell, double net, double setup, const char *pin, int bit) {
  sta_graph *g = x->g;
  g->ends = grow(g->ends, &g->cap_ends, g->n_ends + 1, sizeof *g->ends);
  g->ends[g->n_ends++] = (sta_end){node, cell, (float)net, (float)setup, pin, bit};
}

/* ---- JSON helpers ---- */

static int bit_of(json_t *v) { return json_is_integer(v) ? (int)json_integer_value(v) : -1; }

/* Yosys writes integer parameters as binary strings, strings as themselves. */
static long param_int(json_t *cell, const char *name, long dflt) {
  json_t *v = json_object_get(json_object_get(cell, "parameters"), name);
  if (json_is_integer(v)) return (long)json_integer_value(v);
  if (!json_is_string(v)) return dflt;
  const char *s = json_string_value(v);
  if (s[0] && strspn(s, "01") == strlen(s)) return strtol(s, NULL, 2);
  return strtol(s, NULL, 10);
}

static int param_is(json_t *cell, const char *name, const char *value, int dflt) {
  json_t *v = json_object_get(json_object_get(cell, "parameters"), name);
  if (!json_is_string(v)) return dflt;
  return !strncmp(json_string_value(v), value, strlen(value));
}

static int is_input(json_t *cell, const char *port) {
  const char *d = json_string_value(json_object_get(json_object_get(cell, "port_directions"), port));
  return d && !strcmp(d, "input");
}

/* A flip-flop's clock is C; every other primitive's clock pin has CLK in
 * its name (CLK, WCLK, CLKARDCLK).  A DSP's C is its third operand. */
static int is_clock_pin(const char *type, const char *port) {
  return starts_with(type, "FD") ? !strcmp(port, "C") : strstr(port, "CLK") != NULL;
}

/* ---- nets ---- */

/* The routing from bit b into port `port` of a cell of type `type`. */
static double net_into(ctx *x, int b, const char *type, const char *port) {
  int d = x->driver[b];
  if (d < 0) return sta_net(x->m, x->fanout[b]);
  const char *dt = x->ctype[d];
  int fo = x->fanout[b];
  if (starts_with(type, "CARRY") && starts_with(port, "CI") && starts_with(dt, "CARRY")) return 0;
  if (starts_with(type, "MUXF") && port[0] == 'I' && (starts_with(dt, "LUT") || starts_with(dt, "MUXF"))) return 0;
  if (starts_with(type, "CARRY") && (port[0] == 'S' || starts_with(port, "DI")) && starts_with(dt, "LUT") && fo == 1)
    return 0;
  if (starts_with(type, "FD") && !strcmp(port, "D") && fo == 1 && is_lut_like(dt)) return 0;
  if (starts_with(type, "DSP") && (!strcmp(port, "PCIN") || !strcmp(port, "ACIN") || !strcmp(port, "BCIN") ||
                                   !strcmp(port, "CARRYCASCIN") || !strcmp(port, "MULTSIGNIN")))
    return 0;
  return sta_net(x->m, fo);
}

/* ---- cells ---- */

/* Calls fn for every bit of every input (dir 1) or output (dir 0) port. */
#define FOR_PINS(cell, dir, port, i, b, body)                                         \
  do {                                                                                \
    const char *port;                                                                 \
    json_t *bits_;                                                                    \
    json_object_foreach(json_object_get(cell, "connections"), port, bits_) {          \
      if (is_input(cell, port) != (dir)) continue;                                    \
      for (int i = 0; i < (int)json_array_size(bits_); i++) {                         \
        int b = bit_of(json_array_get(bits_, i));                                     \
        if (b < 0) continue;                                                          \
        body;                                                                         \
      }                                                                               \
    }                                                                                 \
  } while (0)

static void comb_cell(ctx *x, int c, json_t *cell, double delay, sta_level lv) {
  FOR_PINS(cell, 1, ip, i, a, {
    double n = net_into(x, a, x->ctype[c], ip);
    FOR_PINS(cell, 0, op, j, y, add_arc(x, a, y, n + delay, lv, c));
  });
}

/* S[j]/DI[j] reach CO[k] and O[k] for k >= j; CI reaches them all. */
static void carry_cell(ctx *x, int c, json_t *cell) {
  const sta_model *m = x->m;
  const char *t = x->ctype[c];
  FOR_PINS(cell, 1, ip, j, a, {
    double n = net_into(x, a, t, ip);
    int chain = starts_with(ip, "CI") || !strcmp(ip, "CYINIT");
    int from = chain ? (!strcmp(ip, "CI_TOP") ? 4 : 0) : j;
    FOR_PINS(cell, 0, op, k, y, {
      if (k < from) continue;
      double d = !chain ? m->carry_in : op[0] == 'C' ? m->carry_through : m->carry_out;
      add_arc(x, a, y, n + d, STA_LV_CARRY, c);
    });
  });
}

static void ff_cell(ctx *x, int c, json_t *cell) {
  const sta_model *m = x->m;
  FOR_PINS(cell, 1, ip, i, a, {
    if (is_clock_pin(x->ctype[c], ip)) continue;
    double setup = !strcmp(ip, "D") ? m->ff_setup_d : !strcmp(ip, "CE") ? m->ff_setup_ce : m->ff_setup_sr;
    add_end(x, a, c, net_into(x, a, x->ctype[c], ip), setup, ip, i);
  });
  FOR_PINS(cell, 0, op, i, y, {
    add_start(x, y, c, m->ff_cko);
    x->g->cells[c].q_node = y;
  });
  x->g->n_ffs++;
}

/* Block RAM and UltraRAM: every input is an end, every output a start. */
static void ram_cell(ctx *x, int c, json_t *cell, int uram) {
  const sta_model *m = x->m;
  FOR_PINS(cell, 1, ip, i, a, {
    if (is_clock_pin(x->ctype[c], ip)) continue;
    int di = starts_with(ip, "DI") || starts_with(ip, "DIN");
    double setup = uram ? m->uram_setup : di ? m->bram_setup_di : m->bram_setup;
    add_end(x, a, c, net_into(x, a, x->ctype[c], ip), setup, ip, i);
  });
  FOR_PINS(cell, 0, op, i, y, {
    int port_b = strstr(op, "DOB") || strstr(op, "DOUTB") || strstr(op, "DOPB") || strstr(op, "DOUTPB") ||
                 !strcmp(op, "DOUT_B");
    double cko;
    if (uram) cko = param_is(cell, port_b ? "OREG_B" : "OREG_A", "TRUE", 1) ? m->uram_cko_reg : m->uram_cko;
    else cko = param_int(cell, port_b ? "DOB_REG" : "DOA_REG", 0) ? m->bram_cko_reg : m->bram_cko;
    add_start(x, y, c, cko);
  });
  x->g->n_rams++;
}

/* LUT RAM: the write side (data, write enable, write address) ends paths;
 * the read address passes through to the outputs like a LUT; the outputs
 * also start paths at the write clock.  SRL: the same with D and CE. */
static void lutram_cell(ctx *x, int c, json_t *cell, int srl) {
  const sta_model *m = x->m;
  const char *t = x->ctype[c];
  FOR_PINS(cell, 1, ip, i, a, {
    if (is_clock_pin(x->ctype[c], ip)) continue;
    double n = net_into(x, a, t, ip);
    int data = !strcmp(ip, "D") || starts_with(ip, "DI") || !strcmp(ip, "WE") || !strcmp(ip, "CE");
    int read_only = starts_with(ip, "DPRA") || (starts_with(ip, "ADDR") && strcmp(ip, "ADDRD") && strcmp(ip, "ADDRH"));
    if (srl) read_only = !data;
    if (!read_only) add_end(x, a, c, n, srl ? m->srl_setup : m->lutram_setup, ip, i);
    if (!data) FOR_PINS(cell, 0, op, j, y, add_arc(x, a, y, n + m->lut, STA_LV_RAM, c));
  });
  FOR_PINS(cell, 0, op, i, y, add_start(x, y, c, srl ? m->srl_cko : m->lutram_cko));
}

/* DSP48E1/E2 as five inner nodes:
 *   va    multiplier operands (after the A/B/D/INMODE registers)
 *   vmi   multiplier result, into MREG      vmo  out of MREG
 *   vc    ALU operands (C, PCIN, OPMODE, ALUMODE, CARRYIN after their registers)
 *   vp    ALU result, into PREG; the outputs follow PREG.
 * A stage whose register is used ends paths at its input and starts them at
 * its output; otherwise it is an arc.  Register parameters absent from the
 * netlist take the primitive's default (1). */
static int dsp_reg(json_t *cell, const char *port) {
  static const struct { const char *port, *param; } regs[] = {
      {"ACIN", "AREG"}, {"A", "AREG"}, {"BCIN", "BREG"}, {"B", "BREG"}, {"D", "DREG"},
      {"INMODE", "INMODEREG"}, {"C", "CREG"}, {"OPMODE", "OPMODEREG"}, {"ALUMODE", "ALUMODEREG"},
      {"CARRYINSEL", "CARRYINSELREG"}, {"CARRYIN", "CARRYINREG"},
  };
  for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
    if (!strcmp(port, regs[i].port)) return (int)param_int(cell, regs[i].param, 1);
  return 0;   /* cascades: never registered */
}

static int dsp_mult_side(const char *port) {
  return !strcmp(port, "A") || !strcmp(port, "ACIN") || !strcmp(port, "B") || !strcmp(port, "BCIN") ||
         !strcmp(port, "D") || !strcmp(port, "INMODE");
}

static void dsp_cell(ctx *x, int c, json_t *cell) {
  const sta_model *m = x->m;
  const char *t = x->ctype[c];
  int va = x->next_vnode, vmi = va + 1, vmo = va + 2, vc = va + 3, vp = va + 4;
  static const char *const stage[5] = {"(operands)", "(product)", "(MREG)", "(ALU operands)", "(ALU)"};
  x->next_vnode += 5;
  for (int i = 0; i < 5; i++) {
    x->g->node_name[va + i] = stage[i];   /* sta_node_name adds the cell */
    x->g->vnode_cell[va + i - x->g->n_bits] = c;
  }
  int mult = !param_is(cell, "USE_MULT", "NONE", 0);
  int preadd = param_is(cell, "USE_DPORT", "TRUE", 0) || param_is(cell, "AMULTSEL", "AD", 0);
  int started[5] = {0};
  FOR_PINS(cell, 1, ip, i, a, {
    if (is_clock_pin(x->ctype[c], ip)) continue;
    double n = net_into(x, a, t, ip);
    int to = dsp_mult_side(ip) ? va : vc;
    if (starts_with(ip, "CE") || starts_with(ip, "RST")) add_end(x, a, c, n, m->dsp_setup, ip, i);
    else if (dsp_reg(cell, ip)) {
      add_end(x, a, c, n, m->dsp_setup, ip, i);
      if (!started[to - va]++) add_start(x, to, c, m->dsp_cko);
    } else add_arc(x, a, to, n, STA_LV_NONE, c);
  });
  double d_mult = (mult ? m->dsp_mult : 0) + (preadd ? m->dsp_preadd : 0);
  add_arc(x, va, vmi, d_mult, mult ? STA_LV_DSP : STA_LV_NONE, c);
  if (mult && param_int(cell, "MREG", 1)) {
    add_end(x, vmi, c, 0, m->dsp_setup, "MREG", 0);
    add_start(x, vmo, c, m->dsp_cko);
  } else add_arc(x, vmi, vmo, 0, STA_LV_NONE, c);
  add_arc(x, vmo, vp, m->dsp_alu, STA_LV_DSP, c);
  add_arc(x, vc, vp, m->dsp_alu, STA_LV_DSP, c);
  int preg = (int)param_int(cell, "PREG", 1);
  if (preg) add_end(x, vp, c, 0, m->dsp_setup, "PREG", 0);
  FOR_PINS(cell, 0, op, i, y, {
    if (starts_with(op, "ACOUT") || starts_with(op, "BCOUT")) {
      if (dsp_reg(cell, op[0] == 'A' ? "A" : "B")) add_start(x, y, c, m->dsp_cko);
      else add_arc(x, va, y, 0, STA_LV_NONE, c);
    } else if (preg) add_start(x, y, c, m->dsp_cko_p);
    else add_arc(x, vp, y, 0, STA_LV_NONE, c);
  });
  x->g->n_dsps++;
}

static int build_cell(ctx *x, int c, json_t *cell) {
  kind k;
  const sta_model *m = x->m;
  if (classify(x->ctype[c], &k)) return -1;
  switch (k) {
    case K_LUT: comb_cell(x, c, cell, m->lut, STA_LV_LUT); break;
    case K_MUXF: comb_cell(x, c, cell, m->muxf, STA_LV_MUXF); break;
    case K_CARRY: carry_cell(x, c, cell); break;
    case K_BUF: comb_cell(x, c, cell, 0, STA_LV_NONE); break;
    case K_CONST: break;
    case K_FF: ff_cell(x, c, cell); break;
    case K_BRAM: ram_cell(x, c, cell, 0); break;
    case K_URAM: ram_cell(x, c, cell, 1); break;
    case K_DSP: dsp_cell(x, c, cell); break;
    case K_LUTRAM: lutram_cell(x, c, cell, 0); break;
    case K_SRL: lutram_cell(x, c, cell, 1); break;
  }
  static const sta_level lv[] = {STA_LV_LUT, STA_LV_MUXF, STA_LV_CARRY};
  if (k <= K_CARRY) x->g->counts[lv[k]]++;
  return 0;
}

/* ---- names ---- */

/* Which of the names of a bit reports it best: a visible name, one of the
 * design's registers (`_q`, `_q2`, ...), the shorter. */
static int name_rank(const char *name, int hidden) {
  int r = hidden ? 1 << 20 : 0;
  const char *q = strstr(name, "_q");
  if (!q || (q[2] && (q[2] < '0' || q[2] > '9'))) r += 1 << 16;
  return r + (int)strlen(name);
}

static void name_bits(sta_graph *g, json_t *netnames) {
  const char *name;
  json_t *net;
  int *rank = malloc((size_t)g->n_bits * sizeof *rank);
  for (int b = 0; b < g->n_bits; b++) rank[b] = 1 << 30;
  json_object_foreach(netnames, name, net) {
    json_t *bits = json_object_get(net, "bits");
    int r = name_rank(name, (int)json_integer_value(json_object_get(net, "hide_name")));
    int n = (int)json_array_size(bits);
    for (int i = 0; i < n; i++) {
      int b = bit_of(json_array_get(bits, i));
      if (b < 0 || b >= g->n_bits || r >= rank[b]) continue;
      rank[b] = r;
      g->node_name[b] = name;
      g->node_index[b] = n > 1 ? i : -1;
    }
  }
  free(rank);
}

void sta_node_name(const sta_graph *g, int node, char *buf, size_t n) {
  if (node >= g->n_bits) {
    /* A DSP inner node: the cell that owns it, then the stage. */
    snprintf(buf, n, "%s %s", g->cells[g->vnode_cell[node - g->n_bits]].name, g->node_name[node]);
  } else if (!g->node_name[node]) snprintf(buf, n, "bit %d", node);
  else if (g->node_index[node] < 0) snprintf(buf, n, "%s", g->node_name[node]);
  else snprintf(buf, n, "%s[%d]", g->node_name[node], g->node_index[node]);
}

/* ---- clock domains ---- */

static int clock_bit(const char *type, json_t *cell) {
  int clk = -1;
  FOR_PINS(cell, 1, ip, i, a, {
    if (clk < 0 && is_clock_pin(type, ip)) clk = a;
  });
  return clk;
}

/* The net a clock pin is driven from, through clock and I/O buffers. */
static int domain_of(ctx *x, int b) {
  sta_graph *g = x->g;
  kind k;
  for (int hops = 0; hops < 16 && x->driver[b] >= 0; hops++) {
    int d = x->driver[b];
    if (classify(x->ctype[d], &k) || k != K_BUF) break;
    int in = -1;
    FOR_PINS(x->cjson[d], 1, ip, i, a, {
      if (in < 0 && (!strcmp(ip, "I") || !strcmp(ip, "I0"))) in = a;
    });
    if (in < 0) break;
    b = in;
  }
  char name[512];
  sta_node_name(g, b, name, sizeof name);
  for (int i = 0; i < g->n_domains; i++)
    if (!strcmp(g->domains[i], name)) return i;
  g->domains = realloc(g->domains, (size_t)(g->n_domains + 1) * sizeof *g->domains);
  char *copy = malloc(strlen(name) + 1);
  strcpy(copy, name);
  g->domains[g->n_domains] = copy;
  return g->n_domains++;
}

/* ---- loading ---- */

static json_t *top_module(json_t *doc) {
  json_t *mods = json_object_get(doc, "modules"), *mod, *only = NULL;
  const char *name;
  int n = 0;
  json_object_foreach(mods, name, mod) {
    json_t *top = json_object_get(json_object_get(mod, "attributes"), "top");
    const char *s = json_string_value(top);
    if ((json_is_integer(top) && json_integer_value(top)) || (s && strchr(s, '1'))) return mod;
    only = mod;
    n++;
  }
  return n == 1 ? only : NULL;
}

static int max_bit(json_t *mod) {
  int mx = -1;
  const char *k;
  json_t *v, *bits;
  size_t i;
  json_t *cell;
  json_object_foreach(json_object_get(mod, "cells"), k, cell) {
    const char *port;
    json_object_foreach(json_object_get(cell, "connections"), port, bits) {
      json_array_foreach(bits, i, v) if (bit_of(v) > mx) mx = bit_of(v);
    }
  }
  json_object_foreach(json_object_get(mod, "netnames"), k, cell) {
    json_array_foreach(json_object_get(cell, "bits"), i, v) if (bit_of(v) > mx) mx = bit_of(v);
  }
  return mx;
}

static int fail(const char *path, const char *what, const char *arg) {
  fprintf(stderr, "loomsta: %s: %s%s\n", path, what, arg ? arg : "");
  return -1;
}

static int build(ctx *x, json_t *mod, const char *path) {
  sta_graph *g = x->g;
  json_t *cells = json_object_get(mod, "cells"), *cell;
  const char *name;
  int c = 0;
  json_object_foreach(cells, name, cell) {
    const char *type = json_string_value(json_object_get(cell, "type"));
    if (!type) return fail(path, "a cell without a type: ", name);
    g->cells[c] = (sta_cell){name, type, -1, -1};
    x->ctype[c] = type;
    x->cjson[c] = cell;
    FOR_PINS(cell, 1, ip, i, a, x->fanout[a]++);
    FOR_PINS(cell, 0, op, i, y, {
      x->driver[y] = c;
      x->dport[y] = op;
    });
    c++;
  }
  for (c = 0; c < g->n_cells; c++) {
    kind k;
    if (classify(x->ctype[c], &k))
      return fail(path, "no delay model for cell type ", x->ctype[c]);
    if (k == K_DSP) g->n_nodes += 5;
  }
  g->node_name = realloc(g->node_name, (size_t)g->n_nodes * sizeof *g->node_name);
  g->vnode_cell = calloc((size_t)(g->n_nodes - g->n_bits) + 1, sizeof *g->vnode_cell);
  for (c = 0; c < g->n_cells; c++) {
    if (build_cell(x, c, x->cjson[c])) return fail(path, "no delay model for cell type ", x->ctype[c]);
    kind k;
    classify(x->ctype[c], &k);
    if (k >= K_FF && k != K_BUF && k != K_CONST) {
      int clk = clock_bit(x->ctype[c], x->cjson[c]);
      g->cells[c].domain = clk < 0 ? -1 : domain_of(x, clk);
    }
  }
  return 0;
}

sta_graph *sta_graph_load(const char *path, const sta_model *m) {
  json_error_t err;
  json_t *doc = json_load_file(path, 0, &err);
  if (!doc) {
    fprintf(stderr, "loomsta: %s: %s (line %d)\n", path, err.text, err.line);
    return NULL;
  }
  json_t *mod = top_module(doc);
  if (!mod || !json_is_object(json_object_get(mod, "cells"))) {
    fail(path, "no top module with cells (a Yosys write_json netlist?)", NULL);
    json_decref(doc);
    return NULL;
  }
  sta_graph *g = calloc(1, sizeof *g);
  g->model = m;
  g->json = doc;
  g->n_bits = max_bit(mod) + 1;
  g->n_nodes = g->n_bits;
  g->n_cells = (int)json_object_size(json_object_get(mod, "cells"));
  g->cells = calloc((size_t)g->n_cells + 1, sizeof *g->cells);
  g->node_name = calloc((size_t)g->n_bits + 1, sizeof *g->node_name);
  g->node_index = calloc((size_t)g->n_bits + 1, sizeof *g->node_index);
  name_bits(g, json_object_get(mod, "netnames"));
  ctx x = {.g = g, .m = m, .next_vnode = g->n_bits};
  x.driver = malloc(((size_t)g->n_bits + 1) * sizeof *x.driver);
  for (int b = 0; b < g->n_bits; b++) x.driver[b] = -1;
  x.dport = calloc((size_t)g->n_bits + 1, sizeof *x.dport);
  x.fanout = calloc((size_t)g->n_bits + 1, sizeof *x.fanout);
  x.ctype = calloc((size_t)g->n_cells + 1, sizeof *x.ctype);
  x.cjson = calloc((size_t)g->n_cells + 1, sizeof *x.cjson);
  int rc = build(&x, mod, path);
  free(x.driver);
  free(x.dport);
  free(x.fanout);
  free(x.ctype);
  free(x.cjson);
  if (rc) {
    sta_graph_free(g);
    return NULL;
  }
  return g;
}

void sta_graph_free(sta_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_domains; i++) free((void *)g->domains[i]);
  free(g->domains);
  free(g->cells);
  free(g->node_name);
  free(g->node_index);
  free(g->vnode_cell);
  free(g->arcs);
  free(g->starts);
  free(g->ends);
  json_decref(g->json);
  free(g);
}
