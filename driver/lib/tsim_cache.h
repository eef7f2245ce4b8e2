/*
 * tsim_cache.h - Verilator models of configuration files, built on first
 * use and cached by configuration hash (tsim_cache.c, docs/tsim.md).
 */
#ifndef LOOM_TSIM_CACHE_H
#define LOOM_TSIM_CACHE_H

#include <stddef.h>

#include "backend.h"

/* The path of the tsim library of configuration c (`trace`: the variant
 * with FST tracing) in the model cache, building it first when it is not
 * there.  Building needs Loom's source tree (found beside the running
 * program, or $LOOM_ROOT), make and Verilator, takes minutes and reports
 * its progress on stderr.  The cache is loom_cache_dir("tsim") (srctree.h). */
loom_status loom_tsim_cached_model(const struct loom_hw_config *c, int trace, char *path,
                                   size_t n, char msg[LOOM_MSG_MAX]);

#endif
