/*
 * dse_eval.c - one point of a sweep: compile every network for its
 * configuration, count cycles with fsim's timing model, get its resources
 * (dse_synth.c), and record the outcome in OUT/points/ID.txt.
 *
 * A network is compiled as `loom compile --config FILE --calib DIR
 * --host-triple none` would (the compiler's entry point, in memory), loaded
 * on fsim with timing=1 and run once on zero inputs: what the accelerator
 * does does not depend on the values, so the cycles are those of any input.
 * Host steps run on the CPU and are not in the cycles (docs/dse.md says
 * what that leaves out).  The DRAM model moves bus_bits / 8 bytes per cycle
 * unless the spec sets dram_bytes_per_cycle, and tsim gets the same rate
 * when the point is validated (dse_validate.c).
 *
 * Points that differ only in clock share everything but the latency: the
 * first one evaluated is copied for the others (same_hardware).
 *
 * The result file is line-oriented text (`key value...`), written through
 * a temporary file and rename, so a reader sees it whole or not at all; it
 * carries the spec's digest so a changed network or a rebuilt loom makes
 * it stale.  Times are in the file but never in the reports, which must
 * not depend on who ran the point, or when.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "driver/core/readfile.h"
#include "driver/lib/srctree.h"
#include "dse.h"
#include "loom/loom.h"
#include "sw_compiler/compile.h"

const char *const dse_status_names[DSE_STATUS_COUNT] = {"done", "invalid", "unsupported", "failed"};

/* ---- files ---- */

int dse_write_file(const char *path, const char *text, size_t len) {
  char tmp[DSE_PATH_MAX + 32];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return -1;
  int ok = fwrite(text, 1, len, f) == len;
  ok = fclose(f) == 0 && ok;
  if (ok && rename(tmp, path) == 0) return 0;
  unlink(tmp);
  return -1;
}

void dse_point_id(const struct loom_hw_config *c, char *out, size_t n) {
  snprintf(out, n, "%.*s-%dMHz", LOOM_HW_NAME_MAX - 1, c->name, c->clock_mhz);
}

/* OUT/configs/NAME.cfg: the point as a configuration file, for devices and
 * for the user (every point can be compiled for and built from it). */
int dse_config_file(const struct dse_spec *s, const struct loom_hw_config *c, char *path, size_t n) {
  char dir[DSE_PATH_MAX + 16], *text = NULL;
  size_t len = 0;
  snprintf(dir, sizeof dir, "%s/configs", s->out);
  if (snprintf(path, n, "%s/%s-%dMHz.cfg", dir, c->name, c->clock_mhz) >= (int)n) return -1;
  if (access(path, R_OK) == 0) return 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return -1;
  fprintf(f, "# a point of the sweep %s (loom dse); hash 0x%08X\n", s->path, c->hash);
  loom_hw_write_keys(f, c);
  fclose(f);
  int rc = loom_mkdirs(dir) || dse_write_file(path, text, len) ? -1 : 0;
  free(text);
  return rc;
}

/* ---- running a network ---- */

static int zero_inputs(loom_model *m, char *msg, size_t n) {
  for (int i = 0; i < loom_model_input_count(m); i++) {
    const struct loom_tensor_info *t = loom_model_input(m, i);
    size_t count = 1;
    for (int d = 0; d < t->rank; d++) count *= (size_t)t->dims[d];
    void *data = calloc(count ? count : 1, loom_dtype_size(t->dtype));
    if (!data) return snprintf(msg, n, "out of memory"), -1;
    loom_status st = loom_model_set_input(m, t->name, t->dtype, t->rank, t->dims, data);
    free(data);
    if (st != LOOM_OK) return snprintf(msg, n, "input '%s': %s", t->name, loom_status_name(st)), -1;
  }
  return 0;
}

static void sum_jobs(const loom_model *m, struct dse_net_result *out) {
  memset(out, 0, sizeof *out);
  out->jobs = loom_model_job_count(m);
  for (int j = 0; j < out->jobs; j++) {
    out->cycles += loom_model_job_result(m, j)->counters[LOOM_CNT_CYCLES];
    out->macs += loom_model_job_info(m, j)->macs;
  }
}

static int run_on(const struct dse_spec *s, const uint8_t *bytes, size_t size, int net,
                  const char *backend, const char *options, struct dse_net_result *out, char *msg,
                  size_t n) {
  char why[LOOM_MSG_MAX];
  loom_device *dev = NULL;
  loom_model *m = NULL;
  int rc = -1;
  if (loom_device_open(backend, options, &dev, why) != LOOM_OK) snprintf(msg, n, "%s", why);
  else if (loom_model_load_memory(dev, bytes, size, s->nets[net].name, &m, why) != LOOM_OK)
    snprintf(msg, n, "%s", why);
  else if (zero_inputs(m, msg, n) == 0) {
    if (loom_model_run(m, 0) != LOOM_OK) snprintf(msg, n, "%s", loom_device_error(dev));
    else sum_jobs(m, out), rc = 0;
  }
  loom_model_free(m);
  loom_device_close(dev);
  return rc;
}

int dse_run_net(const struct dse_spec *s, const struct loom_hw_config *c, int net, const char *backend,
                const char *extra, struct dse_net_result *out, char *msg, size_t n) {
  char cfg[DSE_PATH_MAX + 64], options[2 * DSE_PATH_MAX];
  struct compile_options o = {.hw = c, .calib = s->nets[net].calib[0] ? s->nets[net].calib : NULL, .flags = COMPILE_IM2COL};
  struct compile_result r;
  struct ir_error err = {{0}};
  if (dse_config_file(s, c, cfg, sizeof cfg))
    return snprintf(msg, n, "cannot write the configuration file into %s/configs", s->out), -1;
  if (compile_onnx(s->nets[net].path, &o, &r, &err)) {
    compile_result_free(&r);
    return snprintf(msg, n, "%s", err.msg), -2;
  }
  int bw = s->dram_bw ? s->dram_bw : c->bus_bits / 8;
  snprintf(options, sizeof options, "config=%s,bw=%d%s%s", cfg, bw, extra ? "," : "", extra ? extra : "");
  int rc = run_on(s, r.bytes, r.size, net, backend, options, out, msg, n);
  compile_result_free(&r);
  return rc;
}

/* ---- a point ---- */

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A current result of the same hardware at another clock (OUT/points/
 * NAME-*MHz.txt): cycles, resources and the compiler's verdict do not
 * depend on the clock, so they are copied rather than computed again. */
static int same_hardware(const struct dse_spec *s, const struct dse_point *p, struct dse_result *r) {
  char dir[DSE_PATH_MAX + 16], id[DSE_ID_MAX];
  size_t n = strlen(p->cfg.name);
  struct dse_result *o = malloc(sizeof *o);
  int found = 0;
  snprintf(dir, sizeof dir, "%s/points", s->out);
  DIR *d = o ? opendir(dir) : NULL;
  for (struct dirent *e; d && !found && (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < n + 8 || strncmp(e->d_name, p->cfg.name, n) || e->d_name[n] != '-' ||
        strcmp(e->d_name + len - 7, "MHz.txt"))
      continue;
    snprintf(id, sizeof id, "%.*s", (int)(len - 4), e->d_name);
    found = dse_result_read(s, id, o) == 0 && o->cfg.hash == p->cfg.hash &&
            (o->status == DSE_DONE || o->status == DSE_UNSUPPORTED);
  }
  if (d) closedir(d);
  if (found) {
    r->status = o->status;
    memcpy(r->net, o->net, sizeof r->net);
    r->res = o->res;
    snprintf(r->error, sizeof r->error, "%s", o->error);
  }
  free(o);
  return found;
}

void dse_eval_point(const struct dse_spec *s, const struct dse_point *p, struct dse_result *r) {
  char msg[LOOM_MSG_MAX];
  double t0 = now_seconds();
  memset(r, 0, sizeof *r);
  r->cfg = p->cfg;
  dse_point_id(&p->cfg, r->name, sizeof r->name);
  if (!p->valid) {
    r->status = DSE_INVALID;
    snprintf(r->error, sizeof r->error, "%s", p->why);
    return;
  }
  char cfg[DSE_PATH_MAX + 64];
  if (dse_config_file(s, &p->cfg, cfg, sizeof cfg)) {
    r->status = DSE_FAILED;
    snprintf(r->error, sizeof r->error, "cannot write %.300s", cfg);
    return;
  }
  if (same_hardware(s, p, r)) {
    r->fits = r->status == DSE_DONE && dse_fits(&r->res, s->part) && dse_meets_clock(&r->res, &p->cfg);
    r->seconds = now_seconds() - t0;
    return;
  }
  r->status = DSE_DONE;
  for (int i = 0; i < s->n_nets && r->status == DSE_DONE; i++) {
    int rc = dse_run_net(s, &p->cfg, i, "fsim", "timing=1", &r->net[i], msg, sizeof msg);
    if (rc == 0) continue;
    r->status = rc == -2 ? DSE_UNSUPPORTED : DSE_FAILED;
    snprintf(r->error, sizeof r->error, "%.60s: %.300s", s->nets[i].name, msg);
  }
  if (r->status == DSE_DONE && dse_synth(s, &p->cfg, &r->res, msg, sizeof msg)) {
    r->status = DSE_FAILED;
    snprintf(r->error, sizeof r->error, "synthesis: %.360s", msg);
  }
  r->fits = r->status == DSE_DONE && dse_fits(&r->res, s->part) && dse_meets_clock(&r->res, &p->cfg);
  r->seconds = now_seconds() - t0;
}

double dse_latency_ms(const struct dse_result *r, int i) {
  return (double)r->net[i].cycles / (r->cfg.clock_mhz * 1e3);
}

double dse_total_ms(const struct dse_spec *s, const struct dse_result *r) {
  double t = 0;
  for (int i = 0; i < s->n_nets; i++) t += dse_latency_ms(r, i);
  return t;
}

/* ---- the result file ---- */

static void result_text(const struct dse_spec *s, const struct dse_result *r, FILE *f) {
  fprintf(f, "# a point of %s, written by loom dse (docs/dse.md)\n", s->path);
  fprintf(f, "digest %08X\nid %s\nstatus %s\n", s->digest, r->name, dse_status_names[r->status]);
  if (r->error[0]) fprintf(f, "error %s\n", r->error);
  fprintf(f, "config name = %s\n", r->cfg.name);
  for (int k = 0; k < DSE_KEY_COUNT; k++) {
    struct loom_hw_config c = r->cfg;
    fprintf(f, "config %s = %d\n", dse_key_names[k], *dse_key_field(&c, k));
  }
  fprintf(f, "config part = %s\n", r->cfg.part);
  if (r->status == DSE_DONE) {
    for (int i = 0; i < s->n_nets; i++)
      fprintf(f, "net %s %llu %llu %d\n", s->nets[i].name, (unsigned long long)r->net[i].cycles,
              (unsigned long long)r->net[i].macs, r->net[i].jobs);
    fprintf(f, "res %ld %ld %ld %.1f %ld %d %d %.1f\nfits %d\n", r->res.lut, r->res.ff, r->res.dsp,
            r->res.bram36, r->res.uram, r->res.yosys, r->res.uram_used, r->res.fmax_mhz, r->fits);
  }
  fprintf(f, "seconds %.1f\nend\n", r->seconds);
}

int dse_result_write(const struct dse_spec *s, const struct dse_result *r) {
  char dir[DSE_PATH_MAX + 16], path[DSE_PATH_MAX + 96], *text = NULL;
  size_t len = 0;
  snprintf(dir, sizeof dir, "%s/points", s->out);
  snprintf(path, sizeof path, "%s/%s.txt", dir, r->name);
  FILE *f = open_memstream(&text, &len);
  if (!f) return -1;
  result_text(s, r, f);
  fclose(f);
  int rc = loom_mkdirs(dir) || dse_write_file(path, text, len) ? -1 : 0;
  free(text);
  return rc;
}

static int find_net(const struct dse_spec *s, const char *name) {
  for (int i = 0; i < s->n_nets; i++)
    if (!strcmp(s->nets[i].name, name)) return i;
  return -1;
}

/* One line of a result file; -1 when it is not what result_text writes. */
static int result_line(const struct dse_spec *s, char *line, struct dse_result *r, FILE *cfg,
                       int *nets, int *end) {
  char word[64], name[64];
  unsigned long long cycles, macs;
  unsigned digest;
  int n = 0, jobs, i;
  if (line[0] == '#' || !line[0]) return 0;
  if (sscanf(line, "%63s %n", word, &n) != 1) return -1;
  const char *rest = line + n;
  if (!strcmp(word, "digest")) return sscanf(rest, "%x", &digest) == 1 && digest == s->digest ? 0 : -1;
  if (!strcmp(word, "id")) return snprintf(r->name, sizeof r->name, "%s", rest), 0;
  if (!strcmp(word, "error")) return snprintf(r->error, sizeof r->error, "%s", rest), 0;
  if (!strcmp(word, "config")) return fprintf(cfg, "%s\n", rest) < 0 ? -1 : 0;
  if (!strcmp(word, "seconds")) return sscanf(rest, "%lf", &r->seconds) == 1 ? 0 : -1;
  if (!strcmp(word, "fits")) return sscanf(rest, "%d", &r->fits) == 1 ? 0 : -1;
  if (!strcmp(word, "end")) return *end = 1, 0;
  if (!strcmp(word, "status")) {
    for (int k = 0; k < DSE_STATUS_COUNT; k++)
      if (!strcmp(rest, dse_status_names[k])) return r->status = (enum dse_status)k, 0;
    return -1;
  }
  if (!strcmp(word, "net")) {
    if (sscanf(rest, "%63s %llu %llu %d", name, &cycles, &macs, &jobs) != 4 || (i = find_net(s, name)) < 0) return -1;
    r->net[i] = (struct dse_net_result){cycles, macs, jobs};
    return ++*nets, 0;
  }
  if (!strcmp(word, "res"))
    return sscanf(rest, "%ld %ld %ld %lf %ld %d %d %lf", &r->res.lut, &r->res.ff, &r->res.dsp, &r->res.bram36,
                  &r->res.uram, &r->res.yosys, &r->res.uram_used, &r->res.fmax_mhz) == 8 ? 0 : -1;
  return -1;
}

int dse_result_read(const struct dse_spec *s, const char *name, struct dse_result *r) {
  char path[DSE_PATH_MAX + 96], msg[LOOM_MSG_MAX], *cfg_text = NULL;
  uint8_t *text;
  size_t size, cfg_len = 0;
  int nets = 0, end = 0, rc = 0;
  snprintf(path, sizeof path, "%s/points/%s.txt", s->out, name);
  memset(r, 0, sizeof *r);
  r->status = DSE_STATUS_COUNT;
  if (loom_read_file(path, 1u << 20, &text, &size, msg) != LOOM_OK) return -1;
  FILE *cfg = open_memstream(&cfg_text, &cfg_len);
  if (!cfg) return free(text), -1;
  for (char *line = (char *)text, *nl; line && !rc; line = nl ? nl + 1 : NULL) {
    if ((nl = strchr(line, '\n'))) *nl = '\0';
    rc = result_line(s, line, r, cfg, &nets, &end);
  }
  fclose(cfg);
  free(text);
  if (!rc) rc = loom_hw_config_parse(cfg_text, cfg_len, path, &r->cfg, msg, sizeof msg);
  free(cfg_text);
  if (!rc && r->status != DSE_INVALID) loom_hw_derive(&r->cfg);
  if (rc || !end || r->status == DSE_STATUS_COUNT || strcmp(r->name, name) ||
      (r->status == DSE_DONE && nets != s->n_nets))
    return -1;
  return 0;
}
