/*
 * srctree.c - where Loom's sources are, what a build product made from them
 * depends on, and where such products are cached (srctree.h).
 *
 * Models and estimates that are built on demand are keyed by a digest of
 * their inputs rather than by timestamps: the cache is shared by every
 * worktree and every node of a cluster that mounts the same home, so only
 * the content can say whether two of them may share a product.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "driver/core/core.h"
#include "driver/core/readfile.h"
#include "srctree.h"

static int has_rules(const char *root) {
  char p[LOOM_TREE_PATH_MAX + 32];
  snprintf(p, sizeof p, "%s/sim/tsim/module.mk", root);
  return access(p, R_OK) == 0;
}

int loom_srctree_find(struct loom_srctree *t) {
  const char *env = getenv("LOOM_ROOT"), *build = getenv("BUILD");
  snprintf(t->build, sizeof t->build, "%s", build && build[0] && !strchr(build, '/') ? build : "build");
  if (env && env[0]) return snprintf(t->root, sizeof t->root, "%s", env), has_rules(t->root);
  char exe[LOOM_TREE_PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = '\0';
  for (int up = 0; up < 4; up++) {
    char *slash = strrchr(exe, '/');
    if (!slash || slash == exe) return 0;
    *slash = '\0';
    if (has_rules(exe)) return snprintf(t->root, sizeof t->root, "%s", exe), 1;
    /* exe is a directory below the candidate root: remember it as BUILD */
    const char *base = strrchr(exe, '/');
    if (base) snprintf(t->build, sizeof t->build, "%s", base + 1);
  }
  return 0;
}

static loom_status crc_file(uLong *crc, const char *root, const char *rel, char msg[LOOM_MSG_MAX]) {
  char path[LOOM_TREE_PATH_MAX + 512];
  uint8_t *data;
  size_t size;
  snprintf(path, sizeof path, "%s/%s", root, rel);
  loom_status st = loom_read_file(path, UINT64_C(1) << 26, &data, &size, msg);
  if (st != LOOM_OK) return st;
  *crc = crc32(*crc, (const Bytef *)rel, (uInt)strlen(rel));
  *crc = crc32(*crc, data, (uInt)size);
  free(data);
  return LOOM_OK;
}

loom_status loom_srctree_digest(const struct loom_srctree *t, const char *seed,
                                const char *const files[], uint32_t *out, char msg[LOOM_MSG_MAX]) {
  char path[LOOM_TREE_PATH_MAX + 32], line[512];
  uLong crc = crc32(0L, (const Bytef *)seed, (uInt)strlen(seed));
  loom_status st = crc_file(&crc, t->root, "hw/rtl/loom_rtl.f", msg);
  for (int i = 0; st == LOOM_OK && files[i]; i++) st = crc_file(&crc, t->root, files[i], msg);
  snprintf(path, sizeof path, "%s/hw/rtl/loom_rtl.f", t->root);
  FILE *f = st == LOOM_OK ? fopen(path, "r") : NULL;
  while (f && st == LOOM_OK && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] && line[0] != '#') st = crc_file(&crc, t->root, line, msg);
  }
  if (f) fclose(f);
  *out = (uint32_t)crc;
  return st;
}

int loom_mkdirs(const char *path) {
  char p[LOOM_TREE_PATH_MAX];
  snprintf(p, sizeof p, "%s", path);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
    *s = '/';
  }
  return mkdir(p, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

int loom_cache_dir(const char *what, char *out, size_t n) {
  const char *env = getenv("LOOM_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int len;
  if (env && env[0]) len = snprintf(out, n, "%s/%s", env, what);
  else if (xdg && xdg[0]) len = snprintf(out, n, "%s/loom/%s", xdg, what);
  else if (home && home[0]) len = snprintf(out, n, "%s/.cache/loom/%s", home, what);
  else return -1;
  return len > 0 && (size_t)len < n && loom_mkdirs(out) == 0 ? 0 : -1;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  return remove(path);
}

void loom_remove_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

int loom_lock_file(const char *path, const char *waiting) {
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (waiting) fprintf(stderr, "%s\n", waiting);
    if (flock(fd, LOCK_EX) != 0) return close(fd), -1;
  }
  return fd;
}
