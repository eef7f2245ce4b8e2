/*
 * bench_config.c - prints a hardware configuration as JSON, for the
 * benchmark scripts (tests/bench/run_bench.sh).
 *
 *   bench_config [NAME]      (default: default)
 *
 * The figures come from the generated configuration table
 * (hw/spec/loom_configs.def through build/gen), so the roofline ceilings in
 * results.json and in the plots are never typed in by hand:
 *   peak_macs_per_cycle   BATCH x BLOCK_IN x BLOCK_OUT
 *   dram_bytes_per_cycle  the DRAM bus width in bytes (one beat per cycle)
 */
#include <stdio.h>

#include "loom/hwconfig.h"

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "default";
  const struct loom_hw_config *c = loom_hw_config_by_name(name);
  if (!c) return fprintf(stderr, "bench_config: no hardware configuration '%s'\n", name), 1;
  printf("{\"name\": \"%s\", \"hash\": \"0x%08X\", \"batch\": %d, \"block_in\": %d, \"block_out\": %d, "
         "\"peak_macs_per_cycle\": %u, \"bus_bits\": %d, \"dram_bytes_per_cycle\": %d, \"clock_mhz\": %d, "
         "\"inp_kib\": %d, \"wgt_kib\": %d, \"acc_kib\": %d, \"uop_kib\": %d, \"part\": \"%s\"}\n",
         c->name, (unsigned)c->hash, c->batch, c->block_in, c->block_out, loom_hw_peak_macs(c), c->bus_bits,
         c->bus_bits / 8, c->clock_mhz, c->inp_kib, c->wgt_kib, c->acc_kib, c->uop_kib, c->part);
  return 0;
}
