/*
 * loomsta.h - the map of loomsta, the timing estimate of a Yosys netlist
 * (docs/rtl.md, "Timing").
 *
 * loomsta reads the flat netlist that `synth_xilinx` leaves (Yosys
 * `write_json`: Xilinx primitives, nets as bit numbers) and finds the longest
 * register-to-register paths.  Registers, block and Ultra RAMs, LUT RAM and
 * shift-register writes and the pipeline registers of DSP slices are the
 * boundaries; LUTs, MUXF7/8/9, CARRY4/8 chains, LUT-RAM and shift-register
 * reads and unregistered DSP stages are the logic between them.  Each path
 * gets a delay from a per-family model (loomsta_model.c: clock-to-out, LUT,
 * carry, DSP and RAM delays and setup times, a net delay that grows with
 * fanout) and a count of logic levels, and the worst path of each clock
 * domain gives the estimated Fmax.
 *
 * It is a build-machine tool like loomgen: C11, no project libraries, Jansson
 * for the JSON.  The graph is built once (loomsta_netlist.c), propagated
 * once in topological order (loomsta_paths.c) and reported (loomsta.c).
 */
#ifndef LOOMSTA_H
#define LOOMSTA_H

#include <stdint.h>
#include <stdio.h>

/* ---- loomsta_model.c: delays per family and speed grade (ns) ---- */

typedef struct {
  const char *name;        /* model name: xc7-1, xcup-2, ... */
  const char *family;      /* synth_xilinx -family of its netlists */
  const char *what;        /* devices and grade, for reports */
  double clock_margin;     /* clock uncertainty and skew, taken off the period */
  double ff_cko;           /* FF clock to Q */
  double ff_setup_d, ff_setup_ce, ff_setup_sr;
  double lut;              /* LUT input to output */
  double muxf;             /* MUXF7/8/9 input to output */
  double carry_in;         /* CARRY4/8: S or DI input to a CO or O output */
  double carry_through;    /* CI to CO (the chain) */
  double carry_out;        /* CI to O (the sum leaving the chain) */
  double net_base;         /* a routed net of fanout 1 */
  double net_fanout;       /* added per doubling of the fanout */
  double lutram_cko, lutram_setup;   /* LUT RAM: write clock to output; D/WE/address setup */
  double srl_cko, srl_setup;         /* SRL16/32 */
  double bram_cko, bram_cko_reg;     /* block RAM clock to DOUT, without / with output register */
  double bram_setup;                 /* block RAM address, enable, write-enable setup */
  double bram_setup_di;              /* block RAM data-in setup */
  double uram_cko, uram_cko_reg, uram_setup;
  double dsp_setup;        /* setup of any DSP register */
  double dsp_cko;          /* clock to out of an inner DSP register (A, B, C, D, M) */
  double dsp_cko_p;        /* P register to the fabric */
  double dsp_preadd, dsp_mult, dsp_alu;   /* unregistered DSP stages */
} sta_model;

const sta_model *sta_model_find(const char *name);
const sta_model *sta_model_for_part(const char *part);   /* NULL if unknown */
void sta_model_list(FILE *f);
void sta_model_print(FILE *f, const sta_model *m);
double sta_net(const sta_model *m, int fanout);

/* ---- loomsta_netlist.c: the timing graph of a Yosys JSON netlist ---- */

/* What a logic level is, for the per-path counts (Vivado's "Logic Levels"). */
typedef enum {
  STA_LV_NONE,    /* wires, clock buffers, DSP cascades */
  STA_LV_LUT,     /* LUT1..LUT6 */
  STA_LV_MUXF,    /* MUXF7, MUXF8, MUXF9 */
  STA_LV_CARRY,   /* CARRY4, CARRY8 */
  STA_LV_DSP,     /* an unregistered DSP stage */
  STA_LV_RAM,     /* LUT RAM or SRL read */
  STA_LV_COUNT
} sta_level;

extern const char *const sta_level_names[STA_LV_COUNT];

/* An arc: `to` settles `delay` after `from` (net into the cell included). */
typedef struct {
  int from, to;
  float delay;
  uint8_t level;   /* sta_level of the cell crossed */
  int cell;
} sta_arc;

/* A path start: `node` is valid `cko` after the clock edge of `cell`. */
typedef struct {
  int node, cell;
  float cko;
} sta_start;

/* A path end: `node` must settle `net + setup` before the clock edge of
 * `cell` (`net` is the routing from the node to the register's pin). */
typedef struct {
  int node, cell;
  float net, setup;
  const char *pin;   /* the register's pin, for names */
  int bit;           /* its bit within the pin */
} sta_end;

typedef struct {
  const char *name, *type;
  int domain;        /* clock domain (index into domains), -1 if combinational */
  int q_node;        /* for FFs: the Q node, whose net names the register */
} sta_cell;

typedef struct {
  const sta_model *model;
  const char *top;
  int n_bits;        /* Yosys bit numbers are nodes 0..n_bits-1 */
  int n_nodes;       /* plus the DSP slices' inner nodes */
  const char **node_name;   /* best net name per node (NULL: unnamed) */
  int *node_index;          /* its bit within that net (-1: scalar) */
  int *vnode_cell;          /* the DSP cell of each inner node (node - n_bits) */
  sta_cell *cells;
  int n_cells;
  sta_arc *arcs;
  int n_arcs, cap_arcs;
  sta_start *starts;
  int n_starts, cap_starts;
  sta_end *ends;
  int n_ends, cap_ends;
  const char **domains;
  int n_domains;
  int counts[STA_LV_COUNT];   /* cells per level kind */
  int n_ffs, n_rams, n_dsps;
  void *json;               /* the parsed document, owner of the strings */
} sta_graph;

/* Reads FILE; on failure prints "loomsta: FILE: what" and returns NULL. */
sta_graph *sta_graph_load(const char *path, const sta_model *m);
void sta_graph_free(sta_graph *g);

/* ---- loomsta_paths.c: arrival times and the worst paths ---- */

typedef struct {
  const sta_end *end;
  double delay;      /* clock-to-out + logic + nets + setup (clock margin excluded) */
  int start;         /* index into starts, -1 if the end is never reached */
  int levels[STA_LV_COUNT];
  int n_levels;
} sta_path;

typedef struct {
  const sta_graph *g;
  float *arrival;    /* per node, -1 if no start reaches it */
  int *pred;         /* arc that set the arrival, -1 at a start */
  int *src;          /* start that set it */
  int *depth;        /* most logic levels from any start */
  sta_path *paths;   /* one per end, worst first */
  int n_paths;
  int cross_domain;  /* ends reached from another clock domain (not timed) */
  int deepest;       /* index into paths of the end with the most levels */
  int deepest_levels;
} sta_result;

/* Fails (prints, returns -1) on a combinational loop. */
int sta_analyze(const sta_graph *g, sta_result *r);
void sta_result_free(sta_result *r);
/* The nodes of path p from its start to its end, into out (at most max). */
int sta_path_nodes(const sta_result *r, const sta_path *p, int *out, int max);
/* "u_a.b_q[3]": the register or RAM pin a start or an end names. */
void sta_start_name(const sta_graph *g, const sta_start *s, char *buf, size_t n);
void sta_end_name(const sta_graph *g, const sta_end *e, char *buf, size_t n);
void sta_node_name(const sta_graph *g, int node, char *buf, size_t n);

#endif
