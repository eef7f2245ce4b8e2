/*
 * tsim_cache.c - the Verilator models of configuration files: built on
 * first use, cached by configuration hash, shared by every process.
 *
 * A named configuration's model is a build product (make tsim CONFIG=NAME,
 * build/tsim/NAME/); a configuration file's is made here the first time a
 * tsim device opens it, with the same make rules (the tsim-model target of
 * sim/tsim/module.mk), into
 *
 *   CACHE/<HASH>-<DIGEST>[-trace][-san]/libloom_tsim.so   (+ build.log, config.txt)
 *
 * CACHE is $LOOM_CACHE/tsim, $XDG_CACHE_HOME/loom/tsim or ~/.cache/loom/tsim.
 * HASH is the configuration's hash.  It leaves out keys the RTL still
 * depends on (max_outstanding_reads), and the RTL itself changes under a
 * hash, so DIGEST (crc32) covers what the model is made of: the Verilog
 * header of the configuration, the RTL sources, the harness and its build
 * rules.  Change any of them and the next use builds a new model.
 *
 * Concurrent first uses (a DSE on several cores, a Slurm array) must not
 * corrupt the cache and should not build twice: a builder takes an flock on
 * CACHE/<key>.lock (a second one waits, then finds the model), builds in a
 * private temporary directory and renames it into place, so a reader only
 * ever sees a complete directory.  A build takes minutes; progress goes to
 * stderr every few seconds.
 *
 * The source tree and make's BUILD are srctree.c's: the ancestor of the
 * running program that holds the Makefile, and the build directory it sits
 * in, so a build-san program gets a sanitized model.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver/core/core.h"
#include "srctree.h"
#include "tsim_cache.h"

#define CACHE_PATH_MAX 1024                 /* the cache, the root */
#define DIR_MAX (CACHE_PATH_MAX + 64)        /* a model directory in the cache */
#define FILE_MAX (DIR_MAX + 64)              /* a file in one */
#define PROGRESS_SECONDS 10

/* Files a model is made of besides the RTL, relative to the root. */
static const char *const model_inputs[] = {
    "hw/lint/verilator_waivers.vlt", "hw/spec/loom_isa.def", "hw/spec/loom_regs.def",
    "sim/tsim/tsim_harness.cpp", "sim/tsim/dram_model.cpp", "sim/tsim/tsim.h",
    "sim/tsim/dram_model.h", "sim/tsim/module.mk", NULL};

/* ---- what the model is made of ---- */

static char *config_header(const struct loom_hw_config *c) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  loom_hw_write_vh(f, c);
  fclose(f);
  return text;
}

static int write_text(const char *dir, const char *name, const char *text) {
  char path[FILE_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  int ok = fputs(text, f) >= 0;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

static int write_keys(const char *dir, const struct loom_hw_config *c) {
  char path[FILE_MAX];
  snprintf(path, sizeof path, "%s/config.txt", dir);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  loom_hw_write_keys(f, c);
  return fclose(f);
}

/* ---- the build ---- */

static long count_objects(const char *dir) {
  char obj[FILE_MAX];
  long n = 0;
  snprintf(obj, sizeof obj, "%s/obj", dir);
  DIR *d = opendir(obj);
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    n += len > 2 && !strcmp(e->d_name + len - 2, ".o");
  }
  if (d) closedir(d);
  return n;
}

static pid_t start_make(const struct loom_srctree *t, const char *dir, const struct loom_hw_config *c,
                        int trace) {
  char a_build[96], a_dir[FILE_MAX], a_name[64], a_hash[48], a_trace[32], log[FILE_MAX];
  snprintf(a_build, sizeof a_build, "BUILD=%s", t->build);
  snprintf(a_dir, sizeof a_dir, "TSIM_MODEL_DIR=%s", dir);
  snprintf(a_name, sizeof a_name, "TSIM_MODEL_NAME=cfg_%08X", c->hash);
  snprintf(a_hash, sizeof a_hash, "TSIM_MODEL_HASH=0x%08X", c->hash);
  snprintf(a_trace, sizeof a_trace, "TSIM_MODEL_TRACE=%d", trace);
  snprintf(log, sizeof log, "%s/build.log", dir);
  pid_t pid = fork();
  if (pid != 0) return pid;
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0 || chdir(t->root) != 0) _exit(127);
  dup2(fd, 1), dup2(fd, 2), close(fd);
  const char *san = strstr(t->build, "san") ? "SAN=1" : "SAN=0";
  execlp("make", "make", "--no-print-directory", "tsim-model", a_build, san, a_dir, a_name,
         a_hash, a_trace, (char *)NULL);
  _exit(127);
}

static double since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* Waits for make, printing progress; its exit status. */
static int wait_make(pid_t pid, const char *dir, const struct loom_hw_config *c) {
  struct timespec t0;
  int status = 0;
  double next = PROGRESS_SECONDS;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    usleep(200 * 1000);
    if (since(&t0) < next) continue;
    long objs = count_objects(dir);
    fprintf(stderr, "tsim: building the model of '%s' (0x%08X): %.0f s, %s%ld objects\n", c->name,
            c->hash, since(&t0), objs ? "compiling C++, " : "verilating, ", objs);
    next += PROGRESS_SECONDS;
  }
  fprintf(stderr, "tsim: model of '%s' (0x%08X) %s after %.0f s\n", c->name, c->hash,
          WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "built" : "failed", since(&t0));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Builds into a temporary directory and renames it to `final`. */
static loom_status build_model(const struct loom_srctree *t, const char *cache, const char *final,
                               const struct loom_hw_config *c, const char *vh, int trace,
                               char msg[LOOM_MSG_MAX]) {
  char tmp[DIR_MAX], inc[FILE_MAX];
  snprintf(tmp, sizeof tmp, "%s/.build-XXXXXX", cache);
  if (!mkdtemp(tmp)) return loom_fail(msg, LOOM_E_IO, "tsim: cannot create %s: %s", tmp, strerror(errno));
  chmod(tmp, 0755); /* mkdtemp's 0700 would hide the model from other users of a shared cache */
  snprintf(inc, sizeof inc, "%s/inc", tmp);
  if (mkdir(inc, 0777) != 0 || write_text(inc, "loom_cfg.vh", vh) || write_keys(tmp, c)) {
    loom_remove_tree(tmp);
    return loom_fail(msg, LOOM_E_IO, "tsim: cannot write into %s", tmp);
  }
  fprintf(stderr, "tsim: no model of config '%s' (0x%08X) in %s yet: building it (a few minutes; "
                  "log %s/build.log)\n", c->name, c->hash, cache, tmp);
  pid_t pid = start_make(t, tmp, c, trace);
  if (pid < 0) {
    loom_remove_tree(tmp);
    return loom_fail(msg, LOOM_E_IO, "tsim: cannot start make: %s", strerror(errno));
  }
  if (wait_make(pid, tmp, c) != 0)
    return loom_fail(msg, LOOM_E_UNSUPPORTED,
                     "tsim: building the model of config '%s' failed (make tsim-model in %s); "
                     "see %s/build.log",
                     c->name, t->root, tmp);
  loom_remove_tree(inc); /* keep the library, the log and config.txt */
  char obj[FILE_MAX];
  snprintf(obj, sizeof obj, "%s/obj", tmp);
  loom_remove_tree(obj);
  if (rename(tmp, final) != 0) loom_remove_tree(tmp); /* another process was first: use its model */
  return LOOM_OK;
}

static loom_status locked_build(const struct loom_srctree *t, const char *cache, const char *final,
                                const char *lib, const struct loom_hw_config *c, const char *vh,
                                int trace, char msg[LOOM_MSG_MAX]) {
  char lock[FILE_MAX], waiting[160];
  snprintf(lock, sizeof lock, "%s.lock", final);
  snprintf(waiting, sizeof waiting, "tsim: another process is building the model of '%s' (0x%08X); waiting",
           c->name, c->hash);
  int fd = loom_lock_file(lock, waiting);
  if (fd < 0) return loom_fail(msg, LOOM_E_IO, "tsim: cannot lock %s: %s", lock, strerror(errno));
  loom_status st = access(lib, R_OK) == 0 ? LOOM_OK : build_model(t, cache, final, c, vh, trace, msg);
  close(fd); /* releases the lock */
  return st;
}

loom_status loom_tsim_cached_model(const struct loom_hw_config *c, int trace, char *path,
                                   size_t n, char msg[LOOM_MSG_MAX]) {
  struct loom_srctree t;
  char cache[CACHE_PATH_MAX], final[DIR_MAX];
  uint32_t digest;
  if (!loom_srctree_find(&t))
    return loom_fail(msg, LOOM_E_UNSUPPORTED,
                     "tsim: config '%s' is a configuration file and its model is built from Loom's "
                     "source tree, which is not beside this program: set LOOM_ROOT",
                     c->name);
  if (loom_cache_dir("tsim", cache, sizeof cache))
    return loom_fail(msg, LOOM_E_IO, "tsim: no usable model cache (set LOOM_CACHE or XDG_CACHE_HOME)");
  char *vh = config_header(c);
  if (!vh) return loom_fail(msg, LOOM_E_NOMEM, "tsim: out of memory");
  loom_status st = loom_srctree_digest(&t, vh, model_inputs, &digest, msg);
  if (st == LOOM_OK) {
    snprintf(final, sizeof final, "%s/%08X-%08X%s%s", cache, c->hash, digest, trace ? "-trace" : "",
             strstr(t.build, "san") ? "-san" : "");
    snprintf(path, n, "%s/libloom_tsim.so", final);
    if (access(path, R_OK) != 0) st = locked_build(&t, cache, final, path, c, vh, trace, msg);
  }
  free(vh);
  return st;
}
