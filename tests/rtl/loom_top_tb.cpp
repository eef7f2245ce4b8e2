// loom_top_tb.cpp - RTL bring-up test of loom_top against fsim.
//
// A small Verilator testbench, not the tsim harness: one AXI4 memory with
// random latencies, random READY gaps and read data of different IDs
// interleaved beat by beat (AXI allows it, and it is harsher than the tsim
// DRAM model), an AXI4-Lite master, and a generator of random instruction
// streams.  Every job runs on the RTL and on fsim (linked in), and the
// test compares, bit for bit: ERR_STATUS and ERR_INSN; on success,
// NOFINISH and DEADLOCK (whose final state is schedule-independent) also
// every DRAM byte, the five SRAM buffers (read out of the Verilated model)
// and the exact counters.  The memory model flags any burst that crosses
// 4 KiB, exceeds 256 beats, or touches bytes outside the job's segments and
// instruction stream (reads: whole bus words, as AXI reads them).
//
// This file holds the run and the comparison; loom_top_tb_axi.cpp the
// memory, clock and registers; loom_top_tb_jobs.cpp the random streams;
// loom_top_tb.h what they share.
//
//   loom_top_tb [seed] [jobs] [mode]   mode: mix (default), tile, chaos
// Ends with "PASS" or "FAIL" and exits accordingly.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <string>
#include <vector>

#include "Vloom_top.h"
#include "verilated.h"

extern "C" {
#include "sim/fsim/fsim.h"
}

#include "loom_top_tb.h"

#ifndef TB_CONFIG
#define TB_CONFIG "tiny"
#endif

namespace tb {

const struct loom_hw_config *cfg;
Vloom_top *top;
std::mt19937_64 rng;
uint64_t now;
int failures;

static uint64_t INSN_OFF = 0xF0000;  // instruction stream inside dram (moves per job)
static struct fsim *fs;
static uint64_t last_cnt[LOOM_CNT_COUNT];

static bool fault_job;
static uint64_t soft_reset_at;
static int soft_resets;
static int outcome[LOOM_ERR_COUNT];

// ---------------------------------------------------------------- one job, RTL against fsim
static int run_job(const job &j, int jobno, const char *mode, bool race_free) {
  uint32_t count = (uint32_t)(j.insns.size() / 16);
  memcpy(&dram[INSN_OFF], j.insns.data(), j.insns.size());
  std::vector<uint8_t> ref = dram;  // fsim's DRAM
  std::vector<uint8_t> pre_dram = dram;

  // fsim
  struct fsim_job fj;
  memset(&fj, 0, sizeof fj);
  fj.insns = j.insns.data();
  fj.insn_count = count;
  for (int s = 0; s < 8; s++) {
    fj.seg[s].data = j.seg_size[s] ? &ref[j.seg_base[s]] : nullptr;  // ref's storage never moves
    fj.seg[s].size = j.seg_size[s];
  }
  struct fsim_result fr;
  fsim_run(fs, &fj, &fr);

  // RTL
  windows.clear();
  windows.push_back({DRAM_BASE + INSN_OFF, (uint64_t)count * 16});
  for (int s = 0; s < 8; s++) windows.push_back({DRAM_BASE + j.seg_base[s], j.seg_size[s]});
  reg_write(0x10, (uint32_t)(DRAM_BASE + INSN_OFF));
  reg_write(0x14, (uint32_t)((DRAM_BASE + INSN_OFF) >> 32));
  reg_write(0x18, count);
  for (int s = 0; s < 8; s++) {
    uint64_t b = DRAM_BASE + j.seg_base[s];
    reg_write(0x20 + 16 * s, (uint32_t)b);
    reg_write(0x24 + 16 * s, (uint32_t)(b >> 32));
    reg_write(0x28 + 16 * s, (uint32_t)j.seg_size[s]);
    reg_write(0x2C + 16 * s, (uint32_t)(j.seg_size[s] >> 32));
  }
  reg_write(0x0C, 3);
  reg_write(0x08, 1);
  reg_write(0x04, 1);
  if (soft_reset_at) {
    // Start, abort part-way with SOFT_RESET, check that everything drained
    // and nothing was signalled, then run the job again for real.
    reg_write(0x00, 1);
    for (uint64_t c = 0; c < soft_reset_at && !top->interrupt_o; c++) tick();
    bool finished = top->interrupt_o;
    reg_write(0xB4, 1);
    uint64_t t1 = now;
    while ((reg_read(0x00) & 4) == 0 || reg_read(0xB4) != 0) {
      if (now - t1 > 100000) {
        CHECK(false, "job %d: SOFT_RESET did not return to idle", jobno);
        return 1;
      }
    }
    CHECK(bus_drained(), "job %d: bus not drained after SOFT_RESET", jobno);
    if (!finished) CHECK(!top->interrupt_o, "job %d: interrupt after SOFT_RESET", jobno);
    CHECK(reg_read(0xAC) == 0, "job %d: ERR_STATUS not cleared by SOFT_RESET", jobno);
    reg_write(0x0C, 3);
    soft_resets++;
    // SRAM now holds a partial job: make fsim start from the same state.
    memcpy(&dram[0], &pre_dram[0], dram.size());
    for (int b = 0; b < LOOM_BUF_COUNT; b++) {
      std::vector<uint8_t> rtl;
      rtl_sram(b, rtl);
      size_t n;
      uint8_t *f = (uint8_t *)fsim_sram(fs, b, &n);
      memcpy(f, rtl.data(), n < rtl.size() ? n : rtl.size());
    }
    std::copy(dram.begin(), dram.end(), ref.begin());
    fsim_run(fs, &fj, &fr);
  }
  reg_write(0x00, 1);
  uint64_t t0 = now;
  uint64_t timeout = getenv("TB_TIMEOUT") ? strtoull(getenv("TB_TIMEOUT"), nullptr, 0) : 200000;
  while (!top->interrupt_o) {
    tick();
    if (now - t0 > timeout) {
      fprintf(stderr, "job %d (%s): timeout\n", jobno, mode);
      failures++;
      return 1;
    }
  }
  uint32_t ctrl = reg_read(0x00);
  CHECK(ctrl & 2, "CTRL.DONE not set (0x%x)", ctrl);
  CHECK(ctrl & 4, "CTRL.IDLE not set (0x%x)", ctrl);
  CHECK(!(reg_read(0x00) & 2), "CTRL.DONE not cleared by the read");
  uint32_t err = reg_read(0xAC), err_insn = reg_read(0xB0);
  uint64_t cnt[LOOM_CNT_COUNT];
  for (int c = 0; c < LOOM_CNT_COUNT; c++) {
    uint64_t lo = reg_read(0x100 + 8 * c);
    cnt[c] = lo | (uint64_t)reg_read(0x104 + 8 * c) << 32;
  }
  reg_write(0x0C, 1);
  CHECK(!top->interrupt_o, "interrupt still high after ISR clear");
  memcpy(last_cnt, cnt, sizeof cnt);

  int before = failures;
  if (err < LOOM_ERR_COUNT) outcome[err]++;
  if (fault_job && err == LOOM_ERR_BUS) {
    fr.error = err;  // fsim knows no bus faults: an injected SLVERR was hit
    fr.err_insn = err_insn;
  }
  CHECK(err == fr.error && err_insn == fr.err_insn,
        "job %d (%s): RTL error %s at insn %u, fsim %s at insn %u (%s)", jobno, mode,
        loom_error_name(err), err_insn, loom_error_name(fr.error), fr.err_insn, fr.message);
  if (getenv("TB_DUMP") && (err != fr.error || err_insn != fr.err_insn)) {
    for (uint32_t i = 0; i < count; i++) {
      struct loom_insn d;
      const char *why = "";
      int e = loom_insn_decode(&j.insns[16 * i], &d, &why);
      fprintf(stderr, "  insn %2u: %-6s q%d tok %u%u%u%u", i, loom_opcode_name(d.opcode),
              e ? -1 : loom_insn_queue(&d), d.pop_prev, d.pop_next, d.push_prev, d.push_next);
      if (e) fprintf(stderr, " ILLEGAL (%s)", why);
      else if (d.opcode <= LOOM_OP_STORE)
        fprintf(stderr, " %s base %u seg %u off %u y %u x %u stride %u pad %u%u%u%u",
                loom_buffer_name(d.mem.buffer), d.mem.sram_base, d.mem.segment, d.mem.dram_offset,
                d.mem.y_size, d.mem.x_size, d.mem.x_stride, d.mem.y_pad_top, d.mem.y_pad_bottom,
                d.mem.x_pad_left, d.mem.x_pad_right);
      fprintf(stderr, "\n");
    }
    for (int s = 0; s < 8; s++) fprintf(stderr, "  seg %d size %" PRIu64 "\n", s, j.seg_size[s]);
  }
  bool deterministic = fr.error == LOOM_ERR_NONE || fr.error == LOOM_ERR_NOFINISH ||
                       fr.error == LOOM_ERR_DEADLOCK;
  if (deterministic && err == fr.error) {
    for (int c = LOOM_CNT_GEMM_OPS; c < LOOM_CNT_COUNT; c++)
      CHECK(cnt[c] == fr.counters[c], "job %d: counter %s RTL %" PRIu64 " fsim %" PRIu64, jobno,
            loom_counter_name((uint32_t)c), cnt[c], fr.counters[c]);
  }
  if (deterministic && err == fr.error && race_free) {
    for (size_t i = 0; i < dram.size(); i++)
      if (dram[i] != ref[i]) {
        CHECK(false, "job %d: DRAM byte 0x%zx RTL %02x fsim %02x", jobno, i, dram[i], ref[i]);
        break;
      }
    const char *const *names = loom_buffer_names;
    for (int b = 0; b < LOOM_BUF_COUNT; b++) {
      std::vector<uint8_t> rtl;
      rtl_sram(b, rtl);
      size_t n;
      const uint8_t *f = (const uint8_t *)fsim_sram(fs, b, &n);
      CHECK(n == rtl.size(), "SRAM %s size", names[b]);
      for (size_t i = 0; i < n && i < rtl.size(); i++)
        if (rtl[i] != f[i]) {
          CHECK(false, "job %d: SRAM %s byte %zu (row %zu) RTL %02x fsim %02x", jobno, names[b], i,
                i / (n / loom_hw_buffer_rows(cfg, b)), rtl[i], f[i]);
          break;
        }
    }
  }
  if (!deterministic || !race_free || failures != before) {
    // Resynchronise fsim's SRAM with the RTL's (contents after an aborted
    // job depend on timing) so later jobs compare again.
    for (int b = 0; b < LOOM_BUF_COUNT; b++) {
      std::vector<uint8_t> rtl;
      rtl_sram(b, rtl);
      size_t n;
      uint8_t *f = (uint8_t *)fsim_sram(fs, b, &n);
      memcpy(f, rtl.data(), n < rtl.size() ? n : rtl.size());
    }
  }
  CHECK(cnt[LOOM_CNT_CYCLES] > 0, "CYCLES is zero");
  return failures != before;
}

}  // namespace tb

int main(int argc, char **argv) {
  using namespace tb;
  Verilated::commandArgs(argc, argv);
  uint64_t seed = argc > 1 ? strtoull(argv[1], nullptr, 0) : 1;
  int jobs = argc > 2 ? atoi(argv[2]) : 40;
  std::string mode = argc > 3 ? argv[3] : "mix";
  rng.seed(seed);
  cfg = loom_hw_config_by_name(TB_CONFIG);
  fs = fsim_create(cfg);
  top = new Vloom_top;
#if VM_TRACE
  if (getenv("TB_TRACE")) {
    Verilated::traceEverOn(true);
    tfp = new VerilatedVcdC;
    top->trace(tfp, 99);
    tfp->open(getenv("TB_TRACE"));
  }
#endif
  top->rst_ni = 0;
  for (int i = 0; i < 5; i++) tick();
  top->rst_ni = 1;
  tick();

  CHECK(reg_read(0xA0) == LOOM_HW_ID, "ID");
  CHECK(reg_read(0xA8) == cfg->hash, "CONFIG_HASH 0x%x", reg_read(0xA8));
  CHECK((reg_read(0xA4) & 0xFFFF) == LOOM_ISA_VERSION, "VERSION");
  CHECK(reg_read(0x00) & 4, "not idle after reset");
  // The SRAMs start as zero in both models.
  for (int b = 0; b < LOOM_BUF_COUNT; b++) {
    std::vector<uint8_t> rtl;
    rtl_sram(b, rtl);
    size_t n;
    uint8_t *f = (uint8_t *)fsim_sram(fs, b, &n);
    memcpy(f, rtl.data(), n < rtl.size() ? n : rtl.size());
  }

  int bad_jobs = 0;
  if (mode == "perf") {
    static const char *what[] = {"GEMM", "ALU imm", "ALU vector", "GEMM 1 row"};
    rd_pct = wr_pct = 100;
    lat_max = 1;
    for (int w = 0; w < 4; w++) {
      job j;
      gen_perf(j, w);
      fill_dram(j);
      for (uint32_t u = 0; u < 64; u++) {  // distinct rows: no hazards
        struct loom_uop uo = {w == 3 ? 0 : u, u % 32, u % 32};  // 3: all on one ACC row
        loom_uop_encode(&uo, &dram[j.seg_base[2] + 4 * u]);
      }
      bad_jobs += run_job(j, w, "perf", true);
      printf("%-10s 1024 micro-ops: COMPUTE_BUSY %" PRIu64 " cycles (incl. UOP load), CYCLES %" PRIu64 "\n",
             what[w], last_cnt[LOOM_CNT_COMPUTE_BUSY], last_cnt[LOOM_CNT_CYCLES]);
    }
    jobs = 0;
  }
  for (int k = 0; k < jobs; k++) {
    rd_pct = 30 + (int)rnd(71);
    wr_pct = 30 + (int)rnd(71);
    lat_max = 1 + (int)rnd(40);
    job j;
    bool tile = mode == "tile" || (mode == "mix" && chance(50));
    if (tile) gen_tile(j);
    else gen_chaos(j);
    fill_dram(j);
    fault_lo = 1;
    fault_hi = 0;
    INSN_OFF = 0xF0000 + (chance(50) ? 4096 - 16 * rnd(24) : 16 * rnd(256));
    if (!tile && chance(3)) j.insns.clear();  // INSN_COUNT 0: NOFINISH at once
    fault_job = chance(8);
    soft_reset_at = chance(10) ? 1 + rnd(3000) : 0;
    if (fault_job) {  // SLVERR somewhere in a segment
      fault_lo = DRAM_BASE + (chance(20) ? INSN_OFF + 16 * rnd(j.insns.size() / 16 + 1)
                                         : j.seg_base[rnd(8)] + rnd(4096));
      fault_hi = fault_lo + 64;
    }
    bad_jobs += run_job(j, k, tile ? "tile" : "chaos", tile);
    if (failures > 20) break;
  }
#if VM_TRACE
  if (tfp) tfp->close();
#endif
  delete top;
  fsim_destroy(fs);
  printf("outcomes:");
  for (int e = 0; e < LOOM_ERR_COUNT; e++)
    if (outcome[e]) printf(" %s %d", loom_error_name((uint32_t)e), outcome[e]);
  printf("\n");
  printf("soft resets: %d\n", soft_resets);
  printf("loom_top_tb %s seed %" PRIu64 ": %d jobs, %d failing, %" PRIu64 " cycles\n", TB_CONFIG,
         seed, jobs, bad_jobs, now);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
