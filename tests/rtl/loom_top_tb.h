// loom_top_tb.h - what the three files of the loom_top bring-up test share
// (tests/rtl/run_top.sh builds them into one program):
//
//   loom_top_tb.cpp       the run: its state, one job on the RTL and on fsim
//                         compared, main();
//   loom_top_tb_axi.cpp   the RTL's surroundings: the AXI4 memory with random
//                         latencies, the clock, the AXI4-Lite registers, the
//                         SRAMs read out of the Verilated model;
//   loom_top_tb_jobs.cpp  the random instruction streams (tile, chaos, perf).
//
// Everything lives in namespace tb, away from Verilator's and fsim's names.
#ifndef LOOM_TOP_TB_H
#define LOOM_TOP_TB_H

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "Vloom_top.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

extern "C" {
#include "loom/hwconfig.h"
#include "loom/isa.h"
}

namespace tb {

// ---- loom_top_tb.cpp: the run's state

extern const struct loom_hw_config *cfg;
extern Vloom_top *top;
extern std::mt19937_64 rng;
extern uint64_t now;  // clock cycles since the start
extern int failures;  // mismatches so far

inline uint64_t rnd(uint64_t n) { return n ? rng() % n : 0; }
inline bool chance(int pct) { return (int)rnd(100) < pct; }

#define CHECK(cond, ...)                 \
  do {                                   \
    if (!(cond)) {                       \
      fprintf(stderr, "MISMATCH: ");     \
      fprintf(stderr, __VA_ARGS__);      \
      fprintf(stderr, "\n");             \
      failures++;                        \
    }                                    \
  } while (0)

// ---- loom_top_tb_axi.cpp: memory, clock, registers, SRAM

const uint64_t DRAM_BASE = 0x0000004000000000ull;  // exercises high address bits
const uint64_t DRAM_SIZE = 1u << 20;
extern std::vector<uint8_t> dram;
// What a job may touch: its segments and its instruction stream.
struct window { uint64_t addr, size; };
extern std::vector<window> windows;
extern uint64_t fault_lo, fault_hi;  // SLVERR range (bus addresses)
extern int rd_pct, wr_pct, lat_max;  // READY percentages, latest response
#if VM_TRACE
extern VerilatedVcdC *tfp;
#endif

void tick();
void reg_write(uint32_t off, uint32_t v);
uint32_t reg_read(uint32_t off);
bool bus_drained();  // no burst outstanding on any channel
void rtl_sram(int buf, std::vector<uint8_t> &out);

// ---- loom_top_tb_jobs.cpp: random instruction streams

struct job {
  std::vector<uint8_t> insns;
  uint64_t seg_base[8], seg_size[8];  // offsets into dram (base) and sizes
};

void gen_tile(job &j);
void gen_chaos(job &j);
void gen_perf(job &j, int what);
void fill_dram(const job &j);

}  // namespace tb

#endif
