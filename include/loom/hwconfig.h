/*
 * hwconfig.h - the named hardware configurations as C sees them.
 *
 * The table itself (loom_hw_configs[]) and the enums of the ISA are generated
 * by scripts/loomgen.c from hw/spec/ (*.def files); this header only declares the
 * lookups; the struct and what is derived from its keys are
 * hwconfig_rules.h's.  Every parameter a compiler pass or a simulator needs
 * is in the struct, so nothing else restates a buffer size.
 *
 * A configuration is named (the table) or read from a `key = value` file
 * (loom_hw_config_load); loom_hw_config_resolve() takes either, which is
 * how every tool that takes a configuration name also takes a file.
 */
#ifndef LOOM_HWCONFIG_H
#define LOOM_HWCONFIG_H

#include <stdint.h>

#include "loom/hwconfig_rules.h"
#include "loom_isa_gen.h"

extern const struct loom_hw_config loom_hw_configs[LOOM_CONFIG_COUNT];

extern const struct loom_hw_part loom_hw_parts[LOOM_PART_COUNT];

/* Looks a configuration up by name or by hash; NULL when there is none. */
const struct loom_hw_config *loom_hw_config_by_name(const char *name);
const struct loom_hw_config *loom_hw_config_by_hash(uint32_t hash);

/* Looks a part up by name (bitstreams/boards.def); NULL when unknown. */
const struct loom_hw_part *loom_hw_part_by_name(const char *name);

/* ---- hwconfig_file.c: configurations from files ----
 *
 * Functions return 0, or -1 with a one-line message in msg[msg_size] that
 * names the file (and the line and key when there is one). */

/* Reads a configuration file: `key = value` lines, `#` comments, every key
 * of hwconfig_rules.h exactly once.  Only the syntax and each value's range
 * are checked (loom config check reports the rules). */
int loom_hw_config_read(const char *path, struct loom_hw_config *out, char *msg, size_t msg_size);

/* The same from text in memory (`path` names it in messages). */
int loom_hw_config_parse(const char *text, size_t len, const char *path,
                         struct loom_hw_config *out, char *msg, size_t msg_size);

/* Reads, checks against the rules (the first broken one is the message)
 * and derives a configuration file. */
int loom_hw_config_load(const char *path, struct loom_hw_config *out, char *msg, size_t msg_size);

/* A configuration name (the table) or else the path of a configuration
 * file, loaded into *out.  Every --config and config= option goes through
 * here.  A word without '/' or '.' that names neither a configuration nor
 * an existing file returns 1 (msg lists the names; callers may say it
 * their own way); a file that cannot be loaded returns -1. */
int loom_hw_config_resolve(const char *name_or_path, struct loom_hw_config *out, char *msg,
                           size_t msg_size);

/* "tiny, default, large": the named configurations, for messages. */
void loom_hw_config_names(char *out, size_t n);

/* Bytes of one DRAM row for LOAD/STORE of `buffer` (src_int8: LOAD ACC of
 * int8 data).  0 for an invalid buffer. */
uint32_t loom_hw_row_bytes(const struct loom_hw_config *cfg, int buffer, int src_int8);

/* Rows of an on-chip buffer; 0 for an invalid buffer. */
uint32_t loom_hw_buffer_rows(const struct loom_hw_config *cfg, int buffer);

/* Peak MACs per cycle: batch * block_in * block_out. */
static inline uint32_t loom_hw_peak_macs(const struct loom_hw_config *cfg) {
  return (uint32_t)(cfg->batch * cfg->block_in * cfg->block_out);
}

#endif
