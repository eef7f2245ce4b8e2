/*
 * hwconfig.c - lookups over the generated configuration table.
 */
#include "loom/hwconfig.h"

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
