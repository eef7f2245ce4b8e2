/*
 * dse_synth.c - a point's FPGA resources: Yosys synth_xilinx through
 * hw/synth/estimate.sh (the script `make board-estimates` runs), cached.
 *
 * Synthesis takes minutes per configuration (the default one about 3 on a
 * quiet machine, a 32x32 array much longer), so its results are kept in
 *
 *   CACHE/<HASH>-<family>[-uram]-<DIGEST>/{resources.txt,stat.txt,yosys.log,
 *                                          timing-<part>.{sum,txt}}
 *
 * (CACHE: loom_cache_dir("yosys"), ~/.cache/loom/yosys), where DIGEST
 * covers the configuration's Verilog header with the clock left out (the
 * clock changes no gate), the RTL and the synthesis scripts, so one
 * synthesis serves every sweep and every clock that visits the
 * configuration, and a change of the RTL starts afresh.  Synthesis runs in
 * a temporary directory renamed into place, under an flock per key, so
 * parallel points (or Slurm tasks sharing the cache) never synthesize one
 * configuration twice nor read half a result.
 *
 * Yosys maps for a family (xc7, xcup), not a part, so the result serves
 * every part of the family; the fit is then checked per part.  On a part
 * with UltraRAM, a configuration whose buffers do not fit its block RAM has
 * INP, ACC, OUT and UOP in UltraRAM, as the board flows do (docs/boards.md).
 * With `synth = estimate` in the spec there is no Yosys run: DSPs and block
 * RAM are the analytic counts of hwconfig_rules.c and LUTs and FFs are 0.
 *
 * Each synthesis also writes its flattened netlist, and loomsta
 * (BUILD/tools/loomsta, docs/rtl.md "Timing") estimates its Fmax with the
 * delay model of every known part of the family (timing-<part>.sum and
 * .txt); the netlist, a hundred megabytes, is then deleted.  `loom config
 * show` reads these estimates, `loom config fmax` and `loom dse` make them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "driver/lib/srctree.h"
#include "dse.h"
#include "loom/loom.h"

static const char *const synth_inputs[] = {"hw/synth/loom_synth.tcl", "hw/synth/estimate.sh",
                                           "hw/spec/loom_isa.def", "hw/spec/loom_regs.def",
                                           "scripts/loomsta.c", "scripts/loomsta_model.c",
                                           "scripts/loomsta_netlist.c", "scripts/loomsta_paths.c", NULL};

static void estimate(const struct loom_hw_part *p, const struct loom_hw_config *c, struct dse_resources *r) {
  int uram;
  struct loom_hw_memory m = loom_hw_memory_fit(c, p, LOOM_URAM_BUFFERS, &uram);
  memset(r, 0, sizeof *r);
  r->dsp = loom_hw_dsp_estimate(c);
  r->bram36 = (double)m.bram18 / 2;
  r->uram = m.uram;
  r->uram_used = uram;
}

static int read_resources(const char *dir, struct dse_resources *r) {
  char path[DSE_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/resources.txt", dir);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = fscanf(f, "%ld %ld %ld %lf %ld", &r->lut, &r->ff, &r->dsp, &r->bram36, &r->uram);
  fclose(f);
  return n == 5 ? 0 : -1;
}

/* The header without the clock: what Yosys sees. */
static char *synth_header(const struct loom_hw_config *c) {
  struct loom_hw_config k = *c;
  char *text = NULL;
  size_t len = 0;
  k.clock_mhz = 1;
  k.comment = NULL;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  loom_hw_write_vh(f, &k);
  fclose(f);
  return text;
}

/* Runs argv (from the source tree's top) with stdout and stderr to `log`;
 * its exit status, or -1. */
static int run_logged(const struct loom_srctree *t, const char *log, char *const argv[]) {
  char gen[LOOM_TREE_PATH_MAX + 80];
  snprintf(gen, sizeof gen, "%s/%s/gen", t->root, t->build);
  pid_t pid = fork();
  if (pid == 0) {
    FILE *f = freopen(log, "w", stdout);
    if (!f || dup2(1, 2) < 0 || chdir(t->root) != 0 || setenv("GEN", gen, 1) != 0 ||
        setenv("LOOM_JSON", "1", 1) != 0)
      _exit(127);
    execv(argv[0], argv);
    _exit(127);
  }
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_script(const struct loom_srctree *t, const char *vh, const char *family,
                      const char *uram, const char *dir) {
  char log[DSE_PATH_MAX + 128];
  snprintf(log, sizeof log, "%s/estimate.log", dir);
  char *argv[] = {"/bin/sh", "hw/synth/estimate.sh", (char *)vh, (char *)family, (char *)uram, (char *)dir, NULL};
  return run_logged(t, log, argv) == 0 ? 0 : -1;
}

/* loomsta on dir/netlist.json for every known part of the family, then the
 * netlist goes. */
static int run_sta(const struct loom_srctree *t, const char *family, const char *dir, char *msg, size_t n) {
  char sta[LOOM_TREE_PATH_MAX + 80], net[DSE_PATH_MAX + 160];
  snprintf(sta, sizeof sta, "%s/%s/tools/loomsta", t->root, t->build);
  snprintf(net, sizeof net, "%s/netlist.json", dir);
  if (access(sta, X_OK) != 0) return snprintf(msg, n, "%s missing (make %s/tools/loomsta)", sta, t->build), -1;
  for (int i = 0; i < LOOM_PART_COUNT; i++) {
    const struct loom_hw_part *p = &loom_hw_parts[i];
    if (strcmp(p->family, family)) continue;
    char sum[DSE_PATH_MAX + 256], log[DSE_PATH_MAX + 256];
    snprintf(sum, sizeof sum, "%s/timing-%s.sum", dir, p->name);
    snprintf(log, sizeof log, "%s/timing-%s.txt", dir, p->name);
    char *argv[] = {sta, "--part", (char *)p->name, "--top", "10", "--detail", "3", "--summary", sum, net, NULL};
    if (run_logged(t, log, argv) != 0) return snprintf(msg, n, "loomsta failed: see %s", log), -1;
  }
  unlink(net);
  return 0;
}

/* fmax_mhz of loomsta's summary for the part (0: none). */
static double read_fmax(const char *dir, const char *part) {
  char path[DSE_PATH_MAX + 256], line[600];
  double v = 0;
  snprintf(path, sizeof path, "%s/timing-%s.sum", dir, part);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "fmax_mhz %lf", &v) == 1) break;
  fclose(f);
  return v > 0 ? v : 0;
}

/* Synthesizes into a temporary directory beside `final` and renames it. */
static int synthesize(const struct loom_srctree *t, const char *cache, const char *final,
                      const char *header, const char *family, int uram, char *msg, size_t n) {
  char tmp[DSE_PATH_MAX + 32], vh[DSE_PATH_MAX + 48];
  snprintf(tmp, sizeof tmp, "%s/.synth-XXXXXX", cache);
  if (!mkdtemp(tmp)) return snprintf(msg, n, "cannot create %s: %s", tmp, strerror(errno)), -1;
  chmod(tmp, 0755); /* mkdtemp's 0700 would hide the result from other users of a shared cache */
  snprintf(vh, sizeof vh, "%s/config.vh", tmp);
  if (dse_write_file(vh, header, strlen(header)))
    return loom_remove_tree(tmp), snprintf(msg, n, "cannot write %s", vh), -1;
  if (run_script(t, vh, family, uram ? LOOM_URAM_BUFFERS : "", tmp))
    return snprintf(msg, n, "Yosys failed: see %s/estimate.log and yosys.log", tmp), -1;
  if (run_sta(t, family, tmp, msg, n)) return -1;
  if (rename(tmp, final) != 0) loom_remove_tree(tmp); /* someone else was first */
  return 0;
}

/* The cached synthesis of c for part p (resources and Fmax into r, its
 * directory into dir): 1, 0 when it is not cached and !run, -1 with msg. */
static int yosys(const struct loom_hw_part *p, int run, const struct loom_hw_config *c, struct dse_resources *r,
                 char *dir, size_t dn, char *msg, size_t n) {
  struct loom_srctree t;
  char cache[DSE_PATH_MAX], final[DSE_PATH_MAX + 96], lock[DSE_PATH_MAX + 112], waiting[160], why[LOOM_MSG_MAX];
  uint32_t digest;
  if (!loom_srctree_find(&t)) return snprintf(msg, n, "Loom's source tree is not beside this program: set LOOM_ROOT"), -1;
  if (loom_cache_dir("yosys", cache, sizeof cache)) return snprintf(msg, n, "no usable cache directory"), -1;
  char *header = synth_header(c);
  if (!header) return snprintf(msg, n, "out of memory"), -1;
  if (loom_srctree_digest(&t, header, synth_inputs, &digest, why) != LOOM_OK)
    return free(header), snprintf(msg, n, "%s", why), -1;
  snprintf(final, sizeof final, "%s/%08X-%s%s-%08X", cache, c->hash, p->family, r->uram_used ? "-uram" : "", digest);
  snprintf(lock, sizeof lock, "%s.lock", final);
  snprintf(waiting, sizeof waiting, "loom: %s: waiting for another synthesis of it", c->name);
  int rc = 0, fd = -1, uram = r->uram_used, missing = 0;
  if (read_resources(final, r) != 0) {
    if (!run) missing = 1, snprintf(msg, n, "not in the synthesis cache %s", cache);
    else if ((fd = loom_lock_file(lock, waiting)) < 0) rc = -1, snprintf(msg, n, "cannot lock %s", lock);
    else if (read_resources(final, r) != 0)
      rc = synthesize(&t, cache, final, header, p->family, uram, msg, n) || read_resources(final, r);
  }
  if (rc && !msg[0]) snprintf(msg, n, "no resources in %s", final);
  if (fd >= 0) close(fd);
  free(header);
  r->yosys = rc == 0 && !missing;
  r->uram_used = uram;
  r->fmax_mhz = r->yosys ? read_fmax(final, p->name) : 0;
  if (dir) snprintf(dir, dn, "%s", final);
  return rc ? -1 : !missing;
}

int dse_synth(const struct dse_spec *s, const struct loom_hw_config *c, struct dse_resources *r,
              char *msg, size_t n) {
  msg[0] = '\0';
  estimate(s->part, c, r);
  /* Not worth minutes of Yosys: the estimates already exceed the part. */
  if (!s->synth || !dse_fits(r, s->part)) return 0;
  return yosys(s->part, 1, c, r, NULL, 0, msg, n) < 0 ? -1 : 0;
}

int dse_fmax(const struct loom_hw_config *c, const struct loom_hw_part *p, int run, double *mhz,
             char *report, size_t report_n, char *msg, size_t n) {
  struct dse_resources r;
  char dir[DSE_PATH_MAX + 96];
  msg[0] = '\0';
  estimate(p, c, &r);
  int rc = yosys(p, run, c, &r, dir, sizeof dir, msg, n);
  if (rc <= 0) return rc;
  if (r.fmax_mhz <= 0) return snprintf(msg, n, "no timing estimate for %s in %s", p->name, dir), -1;
  *mhz = r.fmax_mhz;
  snprintf(report, report_n, "%s/timing-%s.txt", dir, p->name);
  return 1;
}

int dse_meets_clock(const struct dse_resources *r, const struct loom_hw_config *c) {
  return r->fmax_mhz <= 0 || c->clock_mhz <= r->fmax_mhz;
}

int dse_fits(const struct dse_resources *r, const struct loom_hw_part *p) {
  return r->lut <= p->lut && r->ff <= p->ff && r->dsp <= p->dsp && r->bram36 <= (double)p->bram36 &&
         r->uram <= p->uram;
}
