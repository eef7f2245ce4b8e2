/*
 * dse_report.c - what a sweep found: OUT/results.json, OUT/results.csv, a
 * table on stdout, and the Pareto front of modelled latency against LUTs
 * and against DSPs (OUT/pareto_{lut,dsp}.{png,svg}, from OUT/pareto.dat and
 * OUT/pareto.gp); the table is also OUT/table.txt.
 *
 * Latency is the sum over the sweep's networks of each one's accelerator
 * cycles at the point's clock; "best" is the lowest such sum among the
 * points that fit the part.  A point is on a front when no other fitting
 * point is at least as good in both latency and that resource and better
 * in one.  Everything here is made from the result files alone, in the
 * sweep's point order, with no times and no host names, so a local run and
 * a Slurm run write the same bytes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "dse.h"
#include "loom/loom.h"

enum front { FRONT_LUT, FRONT_DSP, FRONT_COUNT };
static const char *const front_names[FRONT_COUNT] = {"lut", "dsp"};

static double resource(const struct dse_result *r, int front) {
  return front == FRONT_LUT ? (double)r->res.lut : (double)r->res.dsp;
}

static int usable(const struct dse_result *r) { return r->status == DSE_DONE && r->fits; }

/* A point has a figure for the resource: LUTs come from Yosys only. */
static int measured(const struct dse_result *r, int front) {
  return r->status == DSE_DONE && (front == FRONT_DSP || r->res.yosys);
}

/* on[i] for every point: is it on the latency-vs-resource front? */
static void pareto(const struct dse_spec *s, const struct dse_result *r, int n, int front, int *on) {
  for (int i = 0; i < n; i++) {
    on[i] = usable(&r[i]) && measured(&r[i], front);
    double ti = dse_total_ms(s, &r[i]), ri = resource(&r[i], front);
    for (int j = 0; j < n && on[i]; j++) {
      if (j == i || !usable(&r[j]) || !measured(&r[j], front)) continue;
      double tj = dse_total_ms(s, &r[j]), rj = resource(&r[j], front);
      if (tj <= ti && rj <= ri && (tj < ti || rj < ri)) on[i] = 0;
    }
  }
}

int dse_rank(const struct dse_spec *s, const struct dse_result *r, int n, int *order) {
  int m = 0;
  for (int i = 0; i < n; i++)
    if (usable(&r[i])) order[m++] = i;
  /* insertion sort: stable, and sweeps are small */
  for (int i = 1; i < m; i++)
    for (int j = i; j > 0 && dse_total_ms(s, &r[order[j]]) < dse_total_ms(s, &r[order[j - 1]]); j--) {
      int t = order[j];
      order[j] = order[j - 1], order[j - 1] = t;
    }
  return m;
}

static double utilization(const struct dse_result *r, int i) {
  double peak = (double)loom_hw_peak_macs(&r->cfg);
  return r->net[i].cycles ? (double)r->net[i].macs / ((double)r->net[i].cycles * peak) : 0;
}

/* ---- JSON ---- */

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
    else fputc(*s, f);
  }
  fputc('"', f);
}

static void json_point(FILE *f, const struct dse_spec *s, const struct dse_result *r, const int *on) {
  struct loom_hw_config c = r->cfg;
  fprintf(f, "    {\"id\": ");
  json_string(f, r->name);
  fprintf(f, ", \"name\": \"%s\", \"hash\": \"0x%08X\", \"status\": \"%s\", \"error\": ", c.name,
          c.hash, dse_status_names[r->status]);
  json_string(f, r->error);
  fprintf(f, ",\n     \"config\": {");
  for (int k = 0; k < DSE_KEY_COUNT; k++) fprintf(f, "\"%s\": %d, ", dse_key_names[k], *dse_key_field(&c, k));
  fprintf(f, "\"part\": \"%s\"}, \"peak_macs_per_cycle\": %u", c.part, loom_hw_peak_macs(&c));
  if (r->status == DSE_DONE) {
    fprintf(f, ",\n     \"networks\": {");
    for (int i = 0; i < s->n_nets; i++)
      fprintf(f, "%s\"%s\": {\"cycles\": %llu, \"macs\": %llu, \"jobs\": %d, \"utilization\": %.4f, \"latency_ms\": %.4f}",
              i ? ", " : "", s->nets[i].name, (unsigned long long)r->net[i].cycles,
              (unsigned long long)r->net[i].macs, r->net[i].jobs, utilization(r, i), dse_latency_ms(r, i));
    fprintf(f, "},\n     \"total_ms\": %.4f, \"fmax_mhz_estimate\": ", dse_total_ms(s, r));
    if (r->res.fmax_mhz > 0) fprintf(f, "%.1f", r->res.fmax_mhz);
    else fprintf(f, "null");
    fprintf(f, ", \"resources\": {\"lut\": %ld, \"ff\": %ld, \"dsp\": %ld, "
               "\"bram36\": %.1f, \"uram\": %ld, \"source\": \"%s\", \"uram_buffers\": %s}, \"fits\": %s, "
               "\"pareto_lut\": %s, \"pareto_dsp\": %s",
            r->res.lut, r->res.ff, r->res.dsp, r->res.bram36, r->res.uram,
            r->res.yosys ? "yosys" : "estimate", r->res.uram_used ? "true" : "false",
            r->fits ? "true" : "false", on[0] ? "true" : "false", on[1] ? "true" : "false");
  }
  fprintf(f, "}");
}

static void json(FILE *f, const struct dse_spec *s, const struct dse_result *r, int n, int *const on[FRONT_COUNT],
                 const int *order, int m) {
  const struct loom_hw_part *p = s->part;
  fprintf(f, "{\n  \"spec\": ");
  json_string(f, s->path);
  fprintf(f, ",\n  \"part\": {\"name\": \"%s\", \"family\": \"%s\", \"lut\": %ld, \"ff\": %ld, \"dsp\": %ld, "
             "\"bram36\": %ld, \"uram\": %ld},\n",
          p->name, p->family, p->lut, p->ff, p->dsp, p->bram36, p->uram);
  if (s->dram_bw) fprintf(f, "  \"dram_bytes_per_cycle\": %d,\n", s->dram_bw);
  else fprintf(f, "  \"dram_bytes_per_cycle\": \"bus_bits/8\",\n");
  fprintf(f, "  \"networks\": [");
  for (int i = 0; i < s->n_nets; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", s->nets[i].name);
  fprintf(f, "],\n  \"best\": [");
  for (int i = 0; i < m; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", r[order[i]].name);
  fprintf(f, "],\n  \"points\": [\n");
  for (int i = 0; i < n; i++) {
    int flags[FRONT_COUNT] = {on[0][i], on[1][i]};
    json_point(f, s, &r[i], flags);
    fprintf(f, "%s\n", i + 1 < n ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
}

/* ---- CSV ---- */

static void csv(FILE *f, const struct dse_spec *s, const struct dse_result *r, int n, int *const on[FRONT_COUNT]) {
  fprintf(f, "id,name,hash,status");
  for (int k = 0; k < DSE_KEY_COUNT; k++) fprintf(f, ",%s", dse_key_names[k]);
  fprintf(f, ",part");
  for (int i = 0; i < s->n_nets; i++) fprintf(f, ",%s_cycles,%s_ms", s->nets[i].name, s->nets[i].name);
  fprintf(f, ",total_ms,fmax_mhz_estimate,lut,ff,dsp,bram36,uram,resources,fits,pareto_lut,pareto_dsp\n");
  for (int j = 0; j < n; j++) {
    struct loom_hw_config c = r[j].cfg;
    fprintf(f, "%s,%s,0x%08X,%s", r[j].name, c.name, c.hash, dse_status_names[r[j].status]);
    for (int k = 0; k < DSE_KEY_COUNT; k++) fprintf(f, ",%d", *dse_key_field(&c, k));
    fprintf(f, ",%s", c.part);
    int done = r[j].status == DSE_DONE;
    for (int i = 0; i < s->n_nets; i++)
      if (done) fprintf(f, ",%llu,%.4f", (unsigned long long)r[j].net[i].cycles, dse_latency_ms(&r[j], i));
      else fprintf(f, ",,");
    if (done && r[j].res.fmax_mhz > 0) fprintf(f, ",%.4f,%.1f", dse_total_ms(s, &r[j]), r[j].res.fmax_mhz);
    else if (done) fprintf(f, ",%.4f,", dse_total_ms(s, &r[j]));
    if (done)
      fprintf(f, ",%ld,%ld,%ld,%.1f,%ld,%s,%d,%d,%d\n", r[j].res.lut, r[j].res.ff,
              r[j].res.dsp, r[j].res.bram36, r[j].res.uram, r[j].res.yosys ? "yosys" : "estimate", r[j].fits,
              on[0][j], on[1][j]);
    else fprintf(f, ",,,,,,,,,,,\n");
  }
}

/* ---- the table ---- */

static void table_row(FILE *f, const struct dse_spec *s, const struct dse_result *r, const char *rank,
                      const int *on) {
  const struct loom_hw_config *c = &r->cfg;
  char shape[32];
  snprintf(shape, sizeof shape, "%dx%dx%d", c->batch, c->block_in, c->block_out);
  char fmax[16] = "-";
  if (r->res.fmax_mhz > 0) snprintf(fmax, sizeof fmax, "%.0f", r->res.fmax_mhz);
  fprintf(f, "%-4s %-20s %-8s %4d/%4d/%4d/%3d %3d %4d %5s", rank, r->name, shape, c->inp_kib, c->wgt_kib,
          c->acc_kib, c->uop_kib, c->bus_bits, c->clock_mhz, fmax);
  if (r->status != DSE_DONE) {
    fprintf(f, "  %s: %s\n", dse_status_names[r->status], r->error);
    return;
  }
  for (int i = 0; i < s->n_nets; i++) fprintf(f, " %10.3f", dse_latency_ms(r, i));
  char lut[24];
  snprintf(lut, sizeof lut, r->res.yosys ? "%ld" : "-", r->res.lut);
  fprintf(f, " %7s %5ld%s %6.1f%s %-4s%s%s\n", lut, r->res.dsp, r->res.yosys ? "" : "*", r->res.bram36,
          r->res.yosys ? "" : "*", r->fits ? "yes" : "no", on[0] ? " L" : "", on[1] ? " D" : "");
}

static void table(FILE *f, const struct dse_spec *s, const struct dse_result *r, int n, int *const on[FRONT_COUNT],
                  const int *order, int m) {
  fprintf(f, "%-4s %-20s %-8s %-18s %3s %4s %5s", "rank", "point", "shape", "inp/wgt/acc/uop KiB", "bus", "MHz", "Fmax");
  for (int i = 0; i < s->n_nets; i++) fprintf(f, " %10.10s", s->nets[i].name);
  fprintf(f, " %7s %5s %7s %s\n", "LUT", "DSP", "BRAM36", "fits front");
  int *listed = calloc((size_t)n, sizeof *listed);
  for (int k = 0; k < m; k++) {
    char rank[16];
    int i = order[k], flags[FRONT_COUNT] = {on[0][i], on[1][i]};
    snprintf(rank, sizeof rank, "%d", k + 1);
    table_row(f, s, &r[i], rank, flags);
    if (listed) listed[i] = 1;
  }
  for (int i = 0; i < n; i++) {
    int flags[FRONT_COUNT] = {0, 0};
    if (!listed || !listed[i]) table_row(f, s, &r[i], "-", flags);
  }
  free(listed);
  fprintf(f, "latency in ms at each point's clock (MHz; accelerator cycles, fsim's timing model); "
             "Fmax: estimated from the Yosys netlist (loomsta, docs/rtl.md \"Timing\"), - without a Yosys run; "
             "fits: the part's resources and a clock at or below the estimated Fmax; "
             "* estimated (no Yosys run); front: L latency-vs-LUT, D latency-vs-DSP\n");
}

/* ---- the figures ---- */

/* OUT/pareto_{lut,dsp}.dat: the points with a figure for the resource;
 * how many there are. */
static int write_plot_data(const struct dse_spec *s, const struct dse_result *r, int n, int front,
                           const int *on, double *max) {
  char path[DSE_PATH_MAX + 32];
  int count = 0;
  snprintf(path, sizeof path, "%s/pareto_%s.dat", s->out, front_names[front]);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "# %s total_ms fits front id\n", front_names[front]);
  *max = front == FRONT_LUT ? (double)s->part->lut : (double)s->part->dsp;
  for (int i = 0; i < n; i++) {
    if (!measured(&r[i], front)) continue;
    count++, fprintf(f, "%.0f %.6f %d %d %s\n", resource(&r[i], front), dse_total_ms(s, &r[i]), r[i].fits, on[i],
                     r[i].name);
    if (resource(&r[i], front) > *max) *max = resource(&r[i], front);
  }
  return fclose(f) ? -1 : count;
}

static int run_gnuplot(const char *script) {
  pid_t pid = fork();
  if (pid == 0) {
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The figures of the fronts that have data; 0, or -1 when gnuplot fails. */
static int plots(const struct dse_spec *s, const int count[FRONT_COUNT], const double max[FRONT_COUNT]) {
  char path[DSE_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/pareto.gp", s->out);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  for (int front = 0; front < FRONT_COUNT; front++)
    for (int svg = 0; svg < 2 && count[front] > 0; svg++) {
      const char *what = front == FRONT_LUT ? "LUTs" : "DSP slices", *name = front_names[front];
      long cap = front == FRONT_LUT ? s->part->lut : s->part->dsp;
      fprintf(f, "set terminal %s size 1000,700 font 'sans,10'\nset output '%s/pareto_%s.%s'\n",
              svg ? "svg" : "pngcairo", s->out, name, svg ? "svg" : "png");
      fprintf(f, "set title \"modelled latency against %s on %s (%d networks)\" noenhanced\n", what,
              s->part->name, s->n_nets);
      fprintf(f, "set xlabel '%s (%s)' noenhanced\nset ylabel 'latency, ms (sum of the networks)'\n"
                 "set logscale y\nset grid\nset key below horizontal\nset xrange [0:%.0f]\n",
              what, front == FRONT_LUT ? "Yosys synth_xilinx" : "Yosys, or estimated", 1.08 * max[front]);
      fprintf(f, "set arrow 1 from %ld, graph 0 to %ld, graph 1 nohead dt 2 lc rgb '#d62728'\n", cap, cap);
      fprintf(f, "set label 1 '%s' at %ld, graph 0.04 right offset -0.5,0 tc rgb '#d62728'\n", s->part->name, cap);
      fprintf(f, "plot '%s/pareto_%s.dat' using ($3 == 0 ? $1 : 1/0):2 with points pt 6 lc rgb '#999999' "
                 "title 'does not fit', \\\n"
                 "     '' using ($3 == 1 ? $1 : 1/0):2 with points pt 7 lc rgb '#1f77b4' title 'fits', \\\n"
                 "     '< awk \"\\$4 == 1\" %s/pareto_%s.dat | sort -g -k1' using 1:2 with steps "
                 "lw 2 lc rgb '#d62728' title 'Pareto front', \\\n"
                 "     '< awk \"\\$4 == 1\" %s/pareto_%s.dat' using 1:2 with points pt 5 ps 1.3 lc rgb '#d62728' "
                 "notitle\n",
              s->out, name, s->out, name, s->out, name);
      fprintf(f, "unset arrow 1\nunset label 1\n");
    }
  if (fclose(f)) return -1;
  return count[0] + count[1] ? run_gnuplot(path) : 0;
}

int dse_report(const struct dse_spec *s, const struct dse_result *r, int n, FILE *out) {
  char path[DSE_PATH_MAX + 32];
  int *on[FRONT_COUNT], *order = calloc((size_t)n + 1, sizeof *order), rc = 0;
  for (int k = 0; k < FRONT_COUNT; k++) on[k] = calloc((size_t)n + 1, sizeof *on[k]);
  if (!order || !on[0] || !on[1]) return cli_error("out of memory"), -1;
  for (int k = 0; k < FRONT_COUNT; k++) pareto(s, r, n, k, on[k]);
  int m = dse_rank(s, r, n, order);
  const char *names[] = {"results.json", "results.csv", "table.txt"};
  for (int w = 0; w < 3 && !rc; w++) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return cli_error("out of memory"), -1;
    if (w == 0) json(f, s, r, n, on, order, m);
    else if (w == 1) csv(f, s, r, n, on);
    else table(f, s, r, n, on, order, m);
    fclose(f);
    snprintf(path, sizeof path, "%s/%s", s->out, names[w]);
    if (dse_write_file(path, text, len)) rc = cli_error("%s: cannot write", path);
    if (w == 2 && out) fwrite(text, 1, len, out);
    free(text);
  }
  int count[FRONT_COUNT] = {0, 0};
  double max[FRONT_COUNT] = {0, 0};
  for (int k = 0; k < FRONT_COUNT && !rc; k++)
    if ((count[k] = write_plot_data(s, r, n, k, on[k], &max[k])) < 0) rc = cli_error("%s: cannot write plot data", s->out);
  if (!rc && plots(s, count, max))
    fprintf(stderr, "loom: %s/pareto_*.png: gnuplot failed (the JSON, CSV and table are written)\n", s->out);
  if (!rc && !count[FRONT_LUT] && out)
    fprintf(out, "no LUT figure: no point was synthesized (synth = estimate, or none fits by estimate)\n");
  free(order);
  free(on[0]);
  free(on[1]);
  return rc;
}
