/*
 * dse_validate.c - `loom dse --validate K`: the K best points run on tsim,
 * the RTL under Verilator, to say how far fsim's timing model was off.
 * "Points" here are cores: the best point of each core, since the same core
 * at another clock runs the same cycles.
 *
 * Each network is compiled again for the point and run once on zero
 * inputs, as for the sweep, with the same DRAM rate; tsim builds the
 * point's model on first use and caches it (driver/lib/tsim_cache.c), so a
 * first validation takes minutes per configuration plus the simulation
 * (ResNet-18 is minutes of Verilator per point).  The error is
 * (model - tsim) / tsim of the accelerator cycles; the table and
 * OUT/validation.{txt,json} give it per point and network, and the largest
 * magnitude.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dse.h"
#include "loom/loom.h"

struct check {
  int point;
  uint64_t model[DSE_MAX_NETS], rtl[DSE_MAX_NETS];
  int ok[DSE_MAX_NETS];
  char error[DSE_MAX_NETS][256];
};

static double err_pct(uint64_t model, uint64_t rtl) {
  return rtl ? 100.0 * ((double)model - (double)rtl) / (double)rtl : 0;
}

static void write_outputs(const struct dse_spec *s, const struct dse_result *r, const struct check *c, int k,
                          const char *table, size_t table_len) {
  char path[DSE_PATH_MAX + 32], *text = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/validation.txt", s->out);
  if (dse_write_file(path, table, table_len)) fprintf(stderr, "loom: %s: cannot write\n", path);
  FILE *f = open_memstream(&text, &len);
  if (!f) return;
  fprintf(f, "{\n  \"points\": [\n");
  for (int i = 0; i < k; i++) {
    fprintf(f, "    {\"id\": \"%s\", \"networks\": {", r[c[i].point].name);
    for (int j = 0; j < s->n_nets; j++) {
      fprintf(f, "%s\"%s\": ", j ? ", " : "", s->nets[j].name);
      if (c[i].ok[j])
        fprintf(f, "{\"model_cycles\": %llu, \"tsim_cycles\": %llu, \"error_pct\": %.3f}",
                (unsigned long long)c[i].model[j], (unsigned long long)c[i].rtl[j], err_pct(c[i].model[j], c[i].rtl[j]));
      else fprintf(f, "{\"error\": \"tsim run failed\"}");
    }
    fprintf(f, "}}%s\n", i + 1 < k ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  fclose(f);
  snprintf(path, sizeof path, "%s/validation.json", s->out);
  if (dse_write_file(path, text, len)) fprintf(stderr, "loom: %s: cannot write\n", path);
  free(text);
}

static void validate_point(const struct dse_spec *s, const struct dse_result *r, struct check *c) {
  char msg[LOOM_MSG_MAX];
  for (int j = 0; j < s->n_nets; j++) {
    struct dse_net_result rtl;
    c->model[j] = r->net[j].cycles;
    fprintf(stderr, "loom dse: validating %s on %s with tsim\n", r->name, s->nets[j].name);
    c->ok[j] = dse_run_net(s, &r->cfg, j, "tsim", NULL, &rtl, msg, sizeof msg) == 0;
    if (c->ok[j]) c->rtl[j] = rtl.cycles;
    else snprintf(c->error[j], sizeof c->error[j], "%.250s", msg);
  }
}

/* Keeps the first (best) point of each core: the same core at another clock
 * has the same cycles, on tsim too.  Returns how many are left. */
static int distinct_cores(const struct dse_result *r, int *order, int m) {
  int k = 0;
  for (int i = 0; i < m; i++) {
    int seen = 0;
    for (int j = 0; j < k && !seen; j++) seen = !strcmp(r[order[j]].cfg.name, r[order[i]].cfg.name);
    if (!seen) order[k++] = order[i];
  }
  return k;
}

int dse_validate(const struct dse_spec *s, const struct dse_result *r, int n, int k) {
  int *order = calloc((size_t)n + 1, sizeof *order), failed = 0;
  if (!order) return cli_error("out of memory"), -1;
  int m = dse_rank(s, r, n, order);
  if (m == 0) return free(order), cli_error("--validate: no point of the sweep fits %s", s->part->name), -1;
  m = distinct_cores(r, order, m);
  if (k > m) k = m;
  struct check *c = calloc((size_t)k, sizeof *c);
  char *text = NULL;
  size_t len = 0;
  FILE *t = c ? open_memstream(&text, &len) : NULL;
  if (!t) return free(order), free(c), cli_error("out of memory"), -1;
  double worst = 0;
  fprintf(t, "%-22s %-12s %12s %12s %8s\n", "point", "network", "model", "tsim", "error");
  for (int i = 0; i < k; i++) {
    c[i].point = order[i];
    validate_point(s, &r[order[i]], &c[i]);
    for (int j = 0; j < s->n_nets; j++) {
      if (!c[i].ok[j]) {
        failed++;
        fprintf(t, "%-22s %-12s tsim failed: %s\n", r[order[i]].name, s->nets[j].name, c[i].error[j]);
        continue;
      }
      double e = err_pct(c[i].model[j], c[i].rtl[j]);
      if (fabs(e) > fabs(worst)) worst = e;
      fprintf(t, "%-22s %-12s %12llu %12llu %+7.2f%%\n", r[order[i]].name, s->nets[j].name,
              (unsigned long long)c[i].model[j], (unsigned long long)c[i].rtl[j], e);
    }
  }
  fprintf(t, "largest error of fsim's timing model against tsim: %+.2f%% (%d best cores)\n", worst, k);
  fclose(t);
  fputs(text, stdout);
  write_outputs(s, r, c, k, text, len);
  free(text);
  free(c);
  free(order);
  return failed ? cli_error("--validate: %d tsim runs failed (see %s/validation.txt)", failed, s->out), -1 : 0;
}
