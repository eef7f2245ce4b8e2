/*
 * version.c - what the library says it is: its version, from the one
 * place it is written (the top-level VERSION file, turned into
 * build/gen/loom_version.h by the Makefile), and the size of its counter
 * table, for bindings without the C header (driver/python/loom).
 */
#include "loom_version.h"
#include "runtime.h"

const char *loom_version(void) { return LOOM_VERSION; }

uint32_t loom_counter_count(void) { return LOOM_CNT_COUNT; }
