/*
 * srctree.h - Loom's source tree and the user's cache, for what is built
 * on demand from the sources: tsim models of configuration files
 * (tsim_cache.c) and Yosys estimates of `loom dse` (driver/cli/dse_synth.c).
 */
#ifndef LOOM_SRCTREE_H
#define LOOM_SRCTREE_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

#define LOOM_TREE_PATH_MAX 1024

struct loom_srctree {
  char root[LOOM_TREE_PATH_MAX]; /* holds hw/, sim/, the Makefile */
  char build[64];                /* make's BUILD, relative to root: "build", "build-san" */
};

/* $LOOM_ROOT (BUILD from $BUILD, else "build"), else the ancestor of the
 * running program that holds sim/tsim/module.mk, with BUILD the directory
 * the program sits in below it (build/bin/loom -> root ., BUILD build).
 * 0 when there is none. */
int loom_srctree_find(struct loom_srctree *t);

/* crc32 of `seed`, the files `files` (NULL-terminated, relative to the
 * root) and every RTL file hw/rtl/loom_rtl.f lists: a digest of what a
 * model or a synthesis is made of.  LOOM_OK, or a message naming the file
 * that cannot be read. */
loom_status loom_srctree_digest(const struct loom_srctree *t, const char *seed,
                                const char *const files[], uint32_t *out, char msg[LOOM_MSG_MAX]);

/* The cache directory `what` ("tsim", "yosys") under $LOOM_CACHE, else
 * $XDG_CACHE_HOME/loom, else ~/.cache/loom, created if needed.  0 or -1. */
int loom_cache_dir(const char *what, char *out, size_t n);

/* mkdir -p; rm -rf. */
int loom_mkdirs(const char *path);
void loom_remove_tree(const char *dir);

/* Holds an exclusive flock on `path` (created if needed), printing
 * `waiting` on stderr when someone else holds it; the descriptor to close
 * for releasing it, or -1. */
int loom_lock_file(const char *path, const char *waiting);

#endif
