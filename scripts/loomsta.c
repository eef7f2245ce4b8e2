/*
 * loomsta - logic levels and an estimated Fmax from a Yosys netlist
 * (docs/rtl.md, "Timing").
 *
 *   loomsta [options] NETLIST.json
 *     --part PART       the delay model of a part's family and speed grade
 *                       (xc7z020clg400-1, xczu7ev-ffvc1156-2-e, ...)
 *     --model NAME      a model by name (--models lists them)
 *     --clock MHZ       the clock the design is meant to run at: exit 3 when
 *                       the estimated Fmax is below it
 *     --top N           paths listed (default 10): the worst into each
 *                       register or RAM port, one line per bus
 *     --detail N        cell-by-cell breakdown of the first N of them
 *     --summary FILE    "key value" lines for scripts (fmax_mhz, worst_ns, ...)
 *     --markdown FILE   the listed paths as a markdown table
 *     --models          list the models; --print-model: print the chosen one
 *
 * NETLIST is what hw/synth/loom_synth.tcl writes with LOOM_JSON=1: the
 * design flattened after `synth_xilinx`.  The estimate is the worst
 * register-to-register delay of each clock domain plus the model's clock
 * margin; see loomsta.h for what is a path and loomsta_model.c for where the
 * delays come from.
 */
#include <stdlib.h>
#include <string.h>

#include "scripts/loomsta.h"

typedef struct {
  const char *netlist, *part, *model, *summary, *markdown;
  double clock_mhz;
  int top, detail, print_model;
} options;

static void usage(void) {
  fprintf(stderr,
          "usage: loomsta [--part PART | --model NAME] [--clock MHZ] [--top N] [--detail N]\n"
          "               [--summary FILE] [--markdown FILE] [--print-model] NETLIST.json\n"
          "       loomsta --models\n");
  exit(2);
}

static int parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->top = 10;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if (!strcmp(a, "--models")) {
      sta_model_list(stdout);
      exit(0);
    } else if (!strcmp(a, "--print-model")) o->print_model = 1;
    else if (!strcmp(a, "--part") && more) o->part = argv[++i];
    else if (!strcmp(a, "--model") && more) o->model = argv[++i];
    else if (!strcmp(a, "--summary") && more) o->summary = argv[++i];
    else if (!strcmp(a, "--markdown") && more) o->markdown = argv[++i];
    else if ((!strcmp(a, "--clock") || !strcmp(a, "--top") || !strcmp(a, "--detail")) && more) {
      char *end;
      double v = strtod(argv[++i], &end);
      if (*end || v < 0 || v > 100000) {
        fprintf(stderr, "loomsta: %s: not a number: %s\n", a, argv[i]);
        exit(2);
      }
      if (a[2] == 'c') o->clock_mhz = v;
      else if (a[2] == 't') o->top = (int)v;
      else o->detail = (int)v;
    } else if (a[0] == '-' || o->netlist) {
      fprintf(stderr, "loomsta: unknown or incomplete option: %s\n", a);
      usage();
    } else o->netlist = a;
  }
  if (!o->netlist) usage();
  return 0;
}

/* One line per register bus, replicated block and memory pin: every index
 * is dropped ("u_alu.g_lane[3].u_lane.res6_q[7]" -> "u_alu.g_lane.u_lane.
 * res6_q", so sixteen identical lanes make one line) and so is the tile
 * of a block RAM ("u_acc.mem.0.7 DIADI[5]" -> "u_acc.mem DIADI": Yosys
 * names the tiles of a memory <memory>.<row>.<column>).  The line shows
 * the worst member. */
static void group_key(const char *name, char *key, size_t n) {
  size_t k = 0;
  for (const char *p = name; *p && k + 1 < n; p++) {
    size_t digits = *p == '[' ? strspn(p + 1, "0123456789") : 0;
    if (digits && p[1 + digits] == ']') p += 1 + digits;
    else key[k++] = *p;
  }
  key[k] = 0;
  char *sp = strchr(key, ' ');
  if (!sp || sp[1] == '(') return;
  char *end = sp;
  for (;;) {
    char *d = end;
    while (d > key && d[-1] >= '0' && d[-1] <= '9') d--;
    if (d == end || d == key || d[-1] != '.') break;
    end = d - 1;
  }
  memmove(end, sp, strlen(sp) + 1);
}

static void levels_text(const sta_path *p, char *buf, size_t n) {
  int k = snprintf(buf, n, "%d", p->n_levels);
  const char *sep = " (";
  for (int l = 1; l < STA_LV_COUNT && k < (int)n; l++)
    if (p->levels[l]) {
      k += snprintf(buf + k, n - (size_t)k, "%s%s %d", sep, sta_level_names[l], p->levels[l]);
      sep = ", ";
    }
  if (p->n_levels && k < (int)n) snprintf(buf + k, n - (size_t)k, ")");
}

/* The indices of the worst path of each of the first `top` buses. */
static int pick(const sta_result *r, int domain, int top, int *out) {
  const sta_graph *g = r->g;
  char (*keys)[512] = calloc((size_t)top + 1, sizeof *keys);
  int n = 0;
  for (int i = 0; i < r->n_paths && n < top; i++) {
    const sta_path *p = &r->paths[i];
    if (g->cells[p->end->cell].domain != domain) continue;
    char name[512], key[512];
    sta_end_name(g, p->end, name, sizeof name);
    group_key(name, key, sizeof key);
    int seen = 0;
    for (int k = 0; k < n && !seen; k++) seen = !strcmp(keys[k], key);
    if (seen) continue;
    snprintf(keys[n], sizeof keys[n], "%s", key);
    out[n++] = i;
  }
  free(keys);
  return n;
}

static void detail(FILE *f, const sta_result *r, const sta_path *p) {
  const sta_graph *g = r->g;
  int max = 4096, *nodes = malloc((size_t)max * sizeof *nodes);
  int n = sta_path_nodes(r, p, nodes, max);
  char name[512];
  double prev = 0;
  for (int i = 0; i < n; i++) {
    int v = nodes[i];
    double t = r->arrival[v];
    const char *type = i == 0 ? g->cells[g->starts[p->start].cell].type : g->cells[g->arcs[r->pred[v]].cell].type;
    sta_node_name(g, v, name, sizeof name);
    fprintf(f, "      %7.3f %+7.3f  %-9s %s%s\n", t, t - prev, type, name, i == 0 ? "  (clock to out)" : "");
    prev = t;
  }
  sta_end_name(g, p->end, name, sizeof name);
  fprintf(f, "      %7.3f %+7.3f  %-9s %s  (net %.3f, setup %.3f)\n", p->delay, p->delay - prev,
          g->cells[p->end->cell].type, name, p->end->net, p->end->setup);
  free(nodes);
}

static void row(FILE *f, FILE *md, const sta_result *r, int rank, const sta_path *p) {
  const sta_graph *g = r->g;
  char from[512], to[512], lv[128];
  sta_start_name(g, &g->starts[p->start], from, sizeof from);
  sta_end_name(g, p->end, to, sizeof to);
  levels_text(p, lv, sizeof lv);
  fprintf(f, "  %2d %7.3f  %-26s %s\n     %*s-> %s\n", rank, p->delay, lv, from, 36, "", to);
  if (md) fprintf(md, "| %d | %.2f | %s | `%s` | `%s` |\n", rank, p->delay, lv, from, to);
}

/* One clock domain: its worst path, its Fmax and its top paths. */
static double report_domain(FILE *f, FILE *md, const sta_result *r, int d, const options *o, const sta_path **worst) {
  const sta_graph *g = r->g;
  const sta_model *m = g->model;
  int ends = 0;
  *worst = NULL;
  for (int i = 0; i < r->n_paths; i++)
    if (g->cells[r->paths[i].end->cell].domain == d) {
      if (!*worst) *worst = &r->paths[i];
      ends++;
    }
  if (!*worst) return 0;
  double period = (*worst)->delay + m->clock_margin;
  double fmax = 1000.0 / period;
  fprintf(f, "clock %s: %d path ends; worst %.3f ns + %.3f ns clock margin = %.3f ns: estimated Fmax %.1f MHz",
          g->domains[d], ends, (*worst)->delay, m->clock_margin, period, fmax);
  if (o->clock_mhz > 0) fprintf(f, " (clock %.0f MHz: %s)", o->clock_mhz, fmax >= o->clock_mhz ? "met" : "NOT met");
  fprintf(f, "\n");
  int *top = malloc(((size_t)o->top + 1) * sizeof *top);
  int n = pick(r, d, o->top, top);
  fprintf(f, "top %d paths (the worst into each register or RAM port; ns, logic levels):\n", n);
  if (md) fprintf(md, "| # | ns | logic levels | from | to |\n|---|---|---|---|---|\n");
  for (int i = 0; i < n; i++) {
    row(f, md, r, i + 1, &r->paths[top[i]]);
    if (i < o->detail) detail(f, r, &r->paths[top[i]]);
  }
  free(top);
  return fmax;
}

static void header(FILE *f, const sta_graph *g, const char *path) {
  fprintf(f, "loomsta: %s: %d cells: %d LUT, %d MUXF, %d CARRY, %d FF, %d RAM, %d DSP\n", path, g->n_cells,
          g->counts[STA_LV_LUT], g->counts[STA_LV_MUXF], g->counts[STA_LV_CARRY], g->n_ffs, g->n_rams, g->n_dsps);
  fprintf(f, "model %s: %s\n", g->model->name, g->model->what);
}

static void summary(const char *path, const sta_result *r, double fmax, const sta_path *w) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "loomsta: %s: cannot write\n", path);
    exit(1);
  }
  const sta_graph *g = r->g;
  char from[512], to[512];
  sta_start_name(g, &g->starts[w->start], from, sizeof from);
  sta_end_name(g, w->end, to, sizeof to);
  fprintf(f, "model %s\nfmax_mhz %.1f\nworst_ns %.3f\nclock_margin_ns %.3f\nlevels %d\ndeepest_levels %d\n"
          "path_ends %d\nworst_from %s\nworst_to %s\n",
          g->model->name, fmax, w->delay, g->model->clock_margin, w->n_levels, r->deepest_levels, r->n_paths,
          from, to);
  fclose(f);
}

int main(int argc, char **argv) {
  options o;
  parse(argc, argv, &o);
  const sta_model *m = o.model ? sta_model_find(o.model) : o.part ? sta_model_for_part(o.part) : sta_model_find("xc7-1");
  if (!m) {
    fprintf(stderr, "loomsta: no delay model for %s %s (loomsta --models)\n", o.model ? "model" : "part",
            o.model ? o.model : o.part);
    return 2;
  }
  if (o.print_model) sta_model_print(stdout, m);
  sta_graph *g = sta_graph_load(o.netlist, m);
  if (!g) return 1;
  sta_result r;
  if (sta_analyze(g, &r)) {
    sta_graph_free(g);
    return 1;
  }
  header(stdout, g, o.netlist);
  FILE *md = NULL;
  if (o.markdown && !(md = fopen(o.markdown, "w"))) {
    fprintf(stderr, "loomsta: %s: cannot write\n", o.markdown);
    return 1;
  }
  double fmax = 0;
  const sta_path *worst = NULL;
  for (int d = 0; d < g->n_domains; d++) {
    const sta_path *w;
    double f = report_domain(stdout, md, &r, d, &o, &w);
    if (w && (!worst || f < fmax)) fmax = f, worst = w;
  }
  if (md) fclose(md);
  if (!worst) {
    fprintf(stderr, "loomsta: %s: no register-to-register path\n", o.netlist);
    return 1;
  }
  if (r.deepest >= 0) {
    char to[512];
    sta_end_name(g, r.paths[r.deepest].end, to, sizeof to);
    printf("deepest path: %d logic levels, into %s\n", r.deepest_levels, to);
  }
  if (r.cross_domain) printf("%d path ends reached from another clock domain (not timed)\n", r.cross_domain);
  if (o.summary) summary(o.summary, &r, fmax, worst);
  int below = o.clock_mhz > 0 && fmax < o.clock_mhz;
  if (below)
    fprintf(stderr, "loomsta: estimated Fmax %.1f MHz is below the clock of %.0f MHz\n", fmax, o.clock_mhz);
  sta_result_free(&r);
  sta_graph_free(g);
  return below ? 3 : 0;
}
