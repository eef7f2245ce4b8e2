/*
 * dse_synth.c - a point's FPGA resources: Yosys synth_xilinx through
 * hw/synth/estimate.sh (the script `make board-estimates` runs), cached.
 *
 * Synthesis takes minutes per configuration (the default one about 3 on a
 * quiet machine, a 32x32 array much longer), so its results are kept in
 *
 *   CACHE/<HASH>-<family>[-uram]-<DIGEST>/{resources.txt,stat.txt,yosys.log}
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
                                           "hw/spec/loom_isa.def", "hw/spec/loom_regs.def", NULL};

static void estimate(const struct dse_spec *s, const struct loom_hw_config *c, struct dse_resources *r) {
  int uram;
  struct loom_hw_memory m = loom_hw_memory_fit(c, s->part, LOOM_URAM_BUFFERS, &uram);
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

static int run_script(const struct loom_srctree *t, const char *vh, const char *family,
                      const char *uram, const char *dir) {
  char gen[LOOM_TREE_PATH_MAX + 80], log[DSE_PATH_MAX + 128];
  snprintf(gen, sizeof gen, "%s/%s/gen", t->root, t->build);
  snprintf(log, sizeof log, "%s/estimate.log", dir);
  pid_t pid = fork();
  if (pid == 0) {
    FILE *f = freopen(log, "w", stdout);
    if (!f || dup2(1, 2) < 0 || chdir(t->root) != 0 || setenv("GEN", gen, 1) != 0) _exit(127);
    execl("/bin/sh", "sh", "hw/synth/estimate.sh", vh, family, uram, dir, (char *)NULL);
    _exit(127);
  }
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
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
  if (rename(tmp, final) != 0) loom_remove_tree(tmp); /* someone else was first */
  return 0;
}

static int yosys(const struct dse_spec *s, const struct loom_hw_config *c, struct dse_resources *r,
                 char *msg, size_t n) {
  struct loom_srctree t;
  char cache[DSE_PATH_MAX], final[DSE_PATH_MAX + 96], lock[DSE_PATH_MAX + 112], waiting[160], why[LOOM_MSG_MAX];
  uint32_t digest;
  if (!loom_srctree_find(&t)) return snprintf(msg, n, "Loom's source tree is not beside this program: set LOOM_ROOT"), -1;
  if (loom_cache_dir("yosys", cache, sizeof cache)) return snprintf(msg, n, "no usable cache directory"), -1;
  char *header = synth_header(c);
  if (!header) return snprintf(msg, n, "out of memory"), -1;
  if (loom_srctree_digest(&t, header, synth_inputs, &digest, why) != LOOM_OK)
    return free(header), snprintf(msg, n, "%s", why), -1;
  snprintf(final, sizeof final, "%s/%08X-%s%s-%08X", cache, c->hash, s->part->family, r->uram_used ? "-uram" : "", digest);
  snprintf(lock, sizeof lock, "%s.lock", final);
  snprintf(waiting, sizeof waiting, "loom dse: %s: waiting for another synthesis of it", c->name);
  int rc = 0, fd = -1, uram = r->uram_used;
  if (read_resources(final, r) != 0) {
    if ((fd = loom_lock_file(lock, waiting)) < 0) rc = -1, snprintf(msg, n, "cannot lock %s", lock);
    else if (read_resources(final, r) != 0)
      rc = synthesize(&t, cache, final, header, s->part->family, uram, msg, n) || read_resources(final, r);
  }
  if (rc && !msg[0]) snprintf(msg, n, "no resources in %s", final);
  if (fd >= 0) close(fd);
  free(header);
  r->yosys = rc == 0;
  r->uram_used = uram;
  return rc ? -1 : 0;
}

int dse_synth(const struct dse_spec *s, const struct loom_hw_config *c, struct dse_resources *r,
              char *msg, size_t n) {
  msg[0] = '\0';
  estimate(s, c, r);
  /* Not worth minutes of Yosys: the estimates already exceed the part. */
  if (!s->synth || !dse_fits(r, s->part)) return 0;
  return yosys(s, c, r, msg, n);
}

int dse_fits(const struct dse_resources *r, const struct loom_hw_part *p) {
  return r->lut <= p->lut && r->ff <= p->ff && r->dsp <= p->dsp && r->bram36 <= (double)p->bram36 &&
         r->uram <= p->uram;
}
