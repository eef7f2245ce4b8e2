/*
 * hwconfig.c - lookups over the generated configuration and part tables.
 * Configurations from files are hwconfig_file.c's, the rules every
 * configuration keeps hwconfig_rules.c's.
 */
#include "loom/hwconfig.h"

#include <stdio.h>
#include <string.h>

const struct loom_hw_config *loom_hw_config_by_name(const char *name) {
  for (int i = 0; i < LOOM_CONFIG_COUNT; i++)
    if (name && !strcmp(loom_hw_configs[i].name, name)) return &loom_hw_configs[i];
  return NULL;
}

const struct loom_hw_config *loom_hw_config_by_hash(uint32_t hash) {
  for (int i = 0; i < LOOM_CONFIG_COUNT; i++)
    if (loom_hw_configs[i].hash == hash) return &loom_hw_configs[i];
  return NULL;
}

void loom_hw_config_names(char *out, size_t n) {
  size_t len = 0;
  if (n) out[0] = '\0';
  for (int i = 0; i < LOOM_CONFIG_COUNT; i++) {
    const char *name = loom_hw_configs[i].name;
    size_t need = strlen(name) + (i ? 2 : 0);
    if (len + need + 1 > n) break;
    if (i) memcpy(out + len, ", ", 2);
    memcpy(out + len + (i ? 2 : 0), name, strlen(name) + 1);
    len += need;
  }
}

const struct loom_hw_part *loom_hw_part_by_name(const char *name) {
  for (int i = 0; i < LOOM_PART_COUNT; i++)
    if (name && !strcmp(loom_hw_parts[i].name, name)) return &loom_hw_parts[i];
  return NULL;
}

uint32_t loom_hw_row_bytes(const struct loom_hw_config *cfg, int buffer, int src_int8) {
  switch (buffer) {
  case LOOM_BUF_UOP: return 4;
  case LOOM_BUF_WGT: return (uint32_t)(cfg->block_out * cfg->block_in);
  case LOOM_BUF_INP: return (uint32_t)(cfg->batch * cfg->block_in);
  case LOOM_BUF_ACC: return (uint32_t)(cfg->batch * cfg->block_out * (src_int8 ? 1 : 4));
  case LOOM_BUF_OUT: return (uint32_t)(cfg->batch * cfg->block_out);
  case LOOM_BUF_PAR: return (uint32_t)(cfg->batch * cfg->block_out * 8); /* biases, then multipliers */
  case LOOM_BUF_LUT: return LOOM_LUT_ENTRIES;
  default: return 0;
  }
}

uint32_t loom_hw_buffer_rows(const struct loom_hw_config *cfg, int buffer) {
  switch (buffer) {
  case LOOM_BUF_UOP: return (uint32_t)cfg->uop_rows;
  case LOOM_BUF_WGT: return (uint32_t)cfg->wgt_rows;
  case LOOM_BUF_INP: return (uint32_t)cfg->inp_rows;
  case LOOM_BUF_ACC: return (uint32_t)cfg->acc_rows;
  case LOOM_BUF_OUT: return (uint32_t)cfg->out_rows;
  case LOOM_BUF_PAR: return LOOM_PAR_ROWS;
  case LOOM_BUF_LUT: return 1;
  default: return 0;
  }
}
