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
//   loom_top_tb [seed] [jobs] [mode]   mode: mix (default), tile, chaos
// Ends with "PASS" or "FAIL" and exits accordingly.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "Vloom_top.h"
#include "Vloom_top___024root.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

extern "C" {
#include "loom/hwconfig.h"
#include "loom/isa.h"
#include "sim/fsim/fsim.h"
}

#ifndef TB_CONFIG
#define TB_CONFIG "tiny"
#endif

static const struct loom_hw_config *cfg;
static Vloom_top *top;
static std::mt19937_64 rng;
static uint64_t now;
static int failures;

static uint64_t rnd(uint64_t n) { return n ? rng() % n : 0; }
static bool chance(int pct) { return (int)rnd(100) < pct; }

#define CHECK(cond, ...)                 \
  do {                                   \
    if (!(cond)) {                       \
      fprintf(stderr, "MISMATCH: ");     \
      fprintf(stderr, __VA_ARGS__);      \
      fprintf(stderr, "\n");             \
      failures++;                        \
    }                                    \
  } while (0)

// ---------------------------------------------------------------- DRAM
static const uint64_t DRAM_BASE = 0x0000004000000000ull;  // exercises high address bits
static const uint64_t DRAM_SIZE = 1u << 20;
static std::vector<uint8_t> dram(DRAM_SIZE);
struct window { uint64_t addr, size; };
static std::vector<window> windows;
static uint64_t fault_lo = 1, fault_hi = 0;  // SLVERR range (bus addresses)

static unsigned bus_bytes() { return (unsigned)cfg->bus_bits / 8; }

static bool in_windows(uint64_t a, uint64_t n, uint64_t align) {
  for (uint64_t i = 0; i < n; i++) {
    bool ok = false;
    for (const window &w : windows) {
      uint64_t lo = w.addr & ~(align - 1), hi = (w.addr + w.size + align - 1) & ~(align - 1);
      if (w.size && a + i >= lo && a + i < hi) ok = true;
    }
    if (!ok) return false;
  }
  return true;
}

struct burst {
  unsigned id, len, beat;
  uint64_t addr, ready_at;
};
static std::deque<burst> rd_q, wr_q, b_q;
static int cur_read = -1;  // index in rd_q of the beat presented, -1 none
static int rd_pct, wr_pct, lat_max;

static void check_burst(const char *ch, uint64_t addr, unsigned len, unsigned size, unsigned type) {
  uint64_t bytes = 1ull << size;
  uint64_t end = addr + (uint64_t)(len + 1) * bytes;
  CHECK(type == 1, "%s burst type %u", ch, type);
  CHECK(bytes == bus_bytes(), "%s size %u", ch, size);
  CHECK((addr & (bytes - 1)) == 0, "%s unaligned 0x%" PRIx64, ch, addr);
  CHECK((addr >> 12) == ((end - 1) >> 12), "%s 0x%" PRIx64 " len %u crosses 4 KiB", ch, addr, len);
  CHECK(addr >= DRAM_BASE && end <= DRAM_BASE + DRAM_SIZE, "%s 0x%" PRIx64 " outside DRAM", ch, addr);
}

// Bus data helpers for 64- and 128-bit buses.
template <typename T> static void put_bytes(T &dst, const uint8_t *src, unsigned n) {
  memcpy((void *)&dst, src, n);
}
template <typename T> static void get_bytes(const T &src, uint8_t *dst, unsigned n) {
  memcpy(dst, (const void *)&src, n);
}

// Moore outputs for the cycle ahead.
static void dram_drive() {
  unsigned bb = bus_bytes();
  top->m_axi_arready_i = chance(rd_pct) && rd_q.size() < 12;
  top->m_axi_awready_i = chance(wr_pct) && wr_q.size() < 6;
  top->m_axi_wready_i = !wr_q.empty() && chance(wr_pct);
  top->m_axi_bvalid_i = !b_q.empty() && b_q.front().ready_at <= now;
  top->m_axi_bid_i = b_q.empty() ? 0 : b_q.front().id;
  top->m_axi_bresp_i = b_q.empty() ? 0 : (unsigned)b_q.front().beat;  // beat holds the resp
  // Read data: any ready burst, oldest of its ID; IDs interleave per beat.
  cur_read = -1;
  top->m_axi_rvalid_i = 0;
  if (chance(rd_pct)) {
    std::vector<int> cand;
    for (size_t i = 0; i < rd_q.size(); i++) {
      bool oldest = true;
      for (size_t j = 0; j < i; j++)
        if (rd_q[j].id == rd_q[i].id) oldest = false;
      if (oldest && rd_q[i].ready_at <= now) cand.push_back((int)i);
    }
    if (!cand.empty()) cur_read = cand[rnd(cand.size())];
  }
  if (cur_read >= 0) {
    burst &b = rd_q[cur_read];
    uint64_t a = b.addr + (uint64_t)b.beat * bb;
    uint8_t buf[64] = {0};
    if (a >= DRAM_BASE && a + bb <= DRAM_BASE + DRAM_SIZE) memcpy(buf, &dram[a - DRAM_BASE], bb);
    CHECK(in_windows(a, bb, bb), "read of 0x%" PRIx64 " outside the job's windows", a);
    put_bytes(top->m_axi_rdata_i, buf, bb);
    top->m_axi_rvalid_i = 1;
    top->m_axi_rid_i = b.id;
    top->m_axi_rlast_i = b.beat == b.len;
    top->m_axi_rresp_i = (a >= fault_lo && a <= fault_hi) ? 2 : 0;
  }
}

// AXI: a VALID, once raised, stays with its payload until READY.
struct held {
  bool pending = false;
  uint64_t a = 0, b = 0, c = 0;
};
static held ar_h, aw_h, w_h;

static void check_held(held &h, const char *ch, bool valid, bool ready, uint64_t a, uint64_t b,
                       uint64_t c) {
  if (h.pending) CHECK(valid && h.a == a && h.b == b && h.c == c, "%s changed before READY", ch);
  h.pending = valid && !ready;
  h.a = a;
  h.b = b;
  h.c = c;
}

// Handshakes seen before the rising edge.
static void dram_take() {
  unsigned bb = bus_bytes();
  {
    uint8_t wd[64] = {0};
    get_bytes(top->m_axi_wdata_o, wd, bb);
    uint64_t wsum = 0;
    for (unsigned i = 0; i < bb; i++) wsum = wsum * 131 + wd[i];
    check_held(ar_h, "AR", top->m_axi_arvalid_o, top->m_axi_arready_i, top->m_axi_araddr_o,
               top->m_axi_arlen_o, top->m_axi_arid_o);
    check_held(aw_h, "AW", top->m_axi_awvalid_o, top->m_axi_awready_i, top->m_axi_awaddr_o,
               top->m_axi_awlen_o, top->m_axi_awid_o);
    check_held(w_h, "W", top->m_axi_wvalid_o, top->m_axi_wready_i, wsum, (uint64_t)top->m_axi_wstrb_o,
               top->m_axi_wlast_o);
  }
  if (top->m_axi_arvalid_o && top->m_axi_arready_i) {
    check_burst("AR", top->m_axi_araddr_o, top->m_axi_arlen_o, top->m_axi_arsize_o, top->m_axi_arburst_o);
    rd_q.push_back({top->m_axi_arid_o, top->m_axi_arlen_o, 0, top->m_axi_araddr_o,
                    now + 1 + rnd(lat_max)});
  }
  if (cur_read >= 0 && top->m_axi_rready_o) {
    burst &b = rd_q[cur_read];
    if (b.beat == b.len) rd_q.erase(rd_q.begin() + cur_read);
    else b.beat++;
  }
  if (top->m_axi_wvalid_o && top->m_axi_wready_i) {
    burst &b = wr_q.front();
    uint64_t a = b.addr + (uint64_t)b.beat * bb;
    uint8_t buf[64];
    get_bytes(top->m_axi_wdata_o, buf, bb);
    uint64_t strb = top->m_axi_wstrb_o;
    for (unsigned i = 0; i < bb; i++) {
      if (!((strb >> i) & 1)) continue;
      CHECK(in_windows(a + i, 1, 1), "write of 0x%" PRIx64 " outside the job's segments", a + i);
      if (a + i >= DRAM_BASE && a + i < DRAM_BASE + DRAM_SIZE) dram[a + i - DRAM_BASE] = buf[i];
    }
    CHECK(top->m_axi_wlast_o == (b.beat == b.len), "WLAST at beat %u of %u", b.beat, b.len + 1);
    bool err = (a >= fault_lo && a <= fault_hi);
    if (err) b.ready_at = 2;  // reuse: worst response
    if (b.beat == b.len) {
      b_q.push_back({b.id, 0, (unsigned)(b.ready_at == 2 ? 2 : 0), 0, now + 1 + rnd(lat_max)});
      wr_q.pop_front();
    } else {
      b.beat++;
    }
  }
  if (top->m_axi_awvalid_o && top->m_axi_awready_i) {
    check_burst("AW", top->m_axi_awaddr_o, top->m_axi_awlen_o, top->m_axi_awsize_o, top->m_axi_awburst_o);
    wr_q.push_back({top->m_axi_awid_o, top->m_axi_awlen_o, 0, top->m_axi_awaddr_o, 0});
  }
  if (top->m_axi_bvalid_i && top->m_axi_bready_o) b_q.pop_front();
}

// ---------------------------------------------------------------- clock and registers
#if VM_TRACE
static VerilatedVcdC *tfp;
#define TRACE_DUMP(t) \
  do {                \
    if (tfp) tfp->dump(t); \
  } while (0)
#else
#define TRACE_DUMP(t) \
  do {                \
  } while (0)
#endif

static void half_low() {
  dram_drive();
  top->clk_i = 0;
  top->eval();
  TRACE_DUMP(2 * now);
}
static void half_high() {
  dram_take();
  top->clk_i = 1;
  top->eval();
  TRACE_DUMP(2 * now + 1);
  now++;
}
static void tick() {
  half_low();
  half_high();
}

static void reg_write(uint32_t off, uint32_t v) {
  top->s_axil_awaddr_i = off;
  top->s_axil_wdata_i = v;
  top->s_axil_wstrb_i = 0xF;
  top->s_axil_awvalid_i = 1;
  top->s_axil_wvalid_i = 1;
  top->s_axil_bready_i = 1;
  for (;;) {
    half_low();
    bool fire = top->s_axil_awready_o && top->s_axil_wready_o;
    half_high();
    if (fire) break;
  }
  top->s_axil_awvalid_i = 0;
  top->s_axil_wvalid_i = 0;
  while (!top->s_axil_bvalid_o) tick();
  tick();
  top->s_axil_bready_i = 0;
}

static uint32_t reg_read(uint32_t off) {
  top->s_axil_araddr_i = off;
  top->s_axil_arvalid_i = 1;
  top->s_axil_rready_i = 1;
  for (;;) {
    half_low();
    bool fire = top->s_axil_arready_o;
    half_high();
    if (fire) break;
  }
  top->s_axil_arvalid_i = 0;
  while (!top->s_axil_rvalid_o) tick();
  uint32_t v = top->s_axil_rdata_o;
  tick();
  top->s_axil_rready_i = 0;
  return v;
}

// ---------------------------------------------------------------- SRAM of the RTL
template <typename M> static void sram_bytes(const M &mem, unsigned rows, unsigned row_bytes,
                                             std::vector<uint8_t> &out) {
  out.resize((size_t)rows * row_bytes);
  for (unsigned r = 0; r < rows; r++) memcpy(&out[(size_t)r * row_bytes], (const void *)&mem[r], row_bytes);
}
template <typename M> static void sram_load(M &mem, unsigned rows, unsigned row_bytes, const uint8_t *in) {
  for (unsigned r = 0; r < rows; r++) memcpy((void *)&mem[r], in + (size_t)r * row_bytes, row_bytes);
}

static void rtl_sram(int buf, std::vector<uint8_t> &out) {
  Vloom_top___024root *r = top->rootp;
  unsigned lanes = (unsigned)(cfg->batch * cfg->block_out);
  switch (buf) {
  case LOOM_BUF_UOP: sram_bytes(r->loom_top__DOT__u_uop__DOT__mem, cfg->uop_rows, 4, out); break;
  case LOOM_BUF_WGT: sram_bytes(r->loom_top__DOT__u_wgt__DOT__mem, cfg->wgt_rows, cfg->block_in * cfg->block_out, out); break;
  case LOOM_BUF_INP: sram_bytes(r->loom_top__DOT__u_inp__DOT__mem, cfg->inp_rows, cfg->batch * cfg->block_in, out); break;
  case LOOM_BUF_ACC: sram_bytes(r->loom_top__DOT__u_acc__DOT__mem, cfg->acc_rows, lanes * 4, out); break;
  default: sram_bytes(r->loom_top__DOT__u_out__DOT__mem, cfg->acc_rows, lanes, out); break;
  }
}

// ---------------------------------------------------------------- jobs
struct job {
  std::vector<uint8_t> insns;
  uint64_t seg_base[8], seg_size[8];  // offsets into dram (base) and sizes
};

static uint64_t INSN_OFF = 0xF0000;  // instruction stream inside dram (moves per job)

static void emit(job &j, const struct loom_insn &in) {
  uint8_t b[16];
  const char *bad = nullptr;
  if (loom_insn_encode(&in, b, &bad)) {
    fprintf(stderr, "tb bug: field %s does not fit\n", bad ? bad : "?");
    exit(2);
  }
  j.insns.insert(j.insns.end(), b, b + 16);
}

static struct loom_insn mem_insn(int op, int buf, uint32_t base, int seg, uint32_t off, uint32_t y,
                                 uint32_t x, uint32_t stride) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = (uint32_t)op;
  in.mem.buffer = (uint32_t)buf;
  in.mem.sram_base = base;
  in.mem.segment = (uint32_t)seg;
  in.mem.dram_offset = off;
  in.mem.y_size = y;
  in.mem.x_size = x;
  in.mem.x_stride = stride;
  return in;
}

static uint32_t row_bytes(int buf, int src_int8) { return loom_hw_row_bytes(cfg, buf, src_int8); }

// A random transfer that fits `rows` SRAM rows and mostly its segment.
static void rand_xfer(struct loom_insn &in, uint32_t rows, uint64_t seg_size, bool pads) {
  uint32_t r = row_bytes((int)in.mem.buffer, (int)in.mem.src_int8);
  if (pads) {
    in.mem.y_pad_top = (uint32_t)rnd(3);
    in.mem.y_pad_bottom = (uint32_t)rnd(3);
    in.mem.x_pad_left = (uint32_t)rnd(3);
    in.mem.x_pad_right = (uint32_t)rnd(3);
    in.mem.pad_value = (int32_t)rnd(256) - 128;
  }
  uint32_t ph = in.mem.y_pad_top + in.mem.y_pad_bottom, pw = in.mem.x_pad_left + in.mem.x_pad_right;
  uint32_t x = 1 + (uint32_t)rnd(6), y = 1 + (uint32_t)rnd(4);
  if (chance(12)) {  // long rows: bursts split at 256 beats and 4 KiB
    x = 1 + (uint32_t)rnd(rows);
    y = 1 + (uint32_t)rnd(2);
  }
  while ((y + ph) * (x + pw) > rows && x > 1) x--;
  while ((y + ph) * (x + pw) > rows && y > 1) y--;
  // fits its segment (strides add at most 3 rows)
  while (((uint64_t)(y - 1) * (x + 3) + x) * r > seg_size && (x > 1 || y > 1)) {
    if (x > 1) x = (x + 1) / 2;
    else y--;
  }
  in.mem.x_size = x;
  in.mem.y_size = y;
  in.mem.x_stride = x + (uint32_t)rnd(4);
  uint32_t used = (y + ph) * (x + pw);
  in.mem.sram_base = used <= rows ? (uint32_t)rnd(rows - used + 1) : 0;
  uint64_t span = (uint64_t)(y - 1) * in.mem.x_stride + x;
  uint64_t max_off = seg_size / r > span ? seg_size / r - span : 0;
  in.mem.dram_offset = (uint32_t)rnd(max_off + 1);
}

// A VTA-like double-buffered tile program: no token imbalance, indices in
// range; exercises every instruction and both ALU operand forms.
static void gen_tile(job &j) {
  unsigned lanes = (unsigned)(cfg->batch * cfg->block_out);
  uint32_t uop_n = 1 + (uint32_t)rnd(24);
  int tiles = 1 + (int)rnd(5);
  // segments: 0 inp, 1 wgt, 2 uop, 3 acc, 4 out
  uint64_t at = 0;
  uint64_t sizes[5] = {16384, 65536, 4096, 32768, 16384};
  for (int s = 0; s < 8; s++) j.seg_base[s] = j.seg_size[s] = 0;
  for (int s = 0; s < 5; s++) {
    j.seg_base[s] = at;
    j.seg_size[s] = sizes[s] - (chance(30) ? rnd(64) * 4 : 0);
    at += sizes[s] + 4096 * rnd(2);
  }
  struct loom_insn in;
  // micro-ops, at any 4-byte alignment
  in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_UOP, (uint32_t)rnd(64), 2, (uint32_t)rnd(200), 1, uop_n, uop_n);
  uint32_t uop_base = in.mem.sram_base;
  if (chance(50)) {  // two rows of micro-ops
    in.mem.y_size = 2;
    in.mem.x_size = (uop_n + 1) / 2;
    in.mem.x_stride = in.mem.x_size + (uint32_t)rnd(3);
    uop_n = 2 * in.mem.x_size;
  }
  emit(j, in);
  uint32_t inp_rows_used = 32, wgt_rows_used = 32, acc_rows_used = 64;
  for (int t = 0; t < tiles; t++) {
    // load: INP with padding, WGT
    in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_INP, 0, 0, 0, 1, 1, 1);
    rand_xfer(in, inp_rows_used, j.seg_size[0], chance(60));
    in.pop_next = t > 0;
    emit(j, in);
    in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_WGT, 0, 1, 0, 1, 1, 1);
    rand_xfer(in, wgt_rows_used, j.seg_size[1], false);
    in.push_next = 1;
    emit(j, in);
    // compute
    in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_ACC, 0, 3, 0, 1, 1, 1);
    in.mem.src_int8 = chance(50);
    rand_xfer(in, acc_rows_used, j.seg_size[3], chance(50));
    in.pop_prev = 1;
    in.pop_next = t > 0;
    emit(j, in);
    int ops = 1 + (int)rnd(5);
    for (int k = 0; k < ops; k++) {
      memset(&in, 0, sizeof in);
      if (chance(50)) {
        in.opcode = LOOM_OP_GEMM;
        in.gemm.reset = chance(15);
        in.gemm.uop_begin = uop_base + (uint32_t)rnd(uop_n);
        in.gemm.uop_end = in.gemm.uop_begin + 1 + (uint32_t)rnd(uop_base + uop_n - in.gemm.uop_begin);
        in.gemm.iter_out = 1 + (uint32_t)rnd(3);
        in.gemm.iter_in = 1 + (uint32_t)rnd(3);
        in.gemm.acc_factor_out = (uint32_t)rnd(8);
        in.gemm.acc_factor_in = (uint32_t)rnd(4);
        in.gemm.inp_factor_out = (uint32_t)rnd(6);
        in.gemm.inp_factor_in = (uint32_t)rnd(3);
        in.gemm.wgt_factor_out = (uint32_t)rnd(5);
        in.gemm.wgt_factor_in = (uint32_t)rnd(3);
      } else if (chance(30)) {
        in.opcode = LOOM_OP_QCFG;
        in.qcfg.multiplier = (int32_t)(uint32_t)rng();
        if (chance(50)) in.qcfg.multiplier = (int32_t)((1u << 30) + rnd(1u << 30));
        in.qcfg.shift = (uint32_t)rnd(64);
        in.qcfg.zero_point = (int32_t)rnd(256) - 128;
        in.qcfg.clamp_lo = (int32_t)rnd(256) - 128;
        in.qcfg.clamp_hi = chance(80) ? 127 : (int32_t)rnd(256) - 128;
        in.qcfg.round_even = chance(50);
      } else {
        in.opcode = LOOM_OP_ALU;
        in.alu.alu_op = (uint32_t)rnd(LOOM_ALU_COUNT);
        in.alu.use_imm = chance(50);
        in.alu.imm = (int32_t)rnd(65536) - 32768;
        if (chance(30)) in.alu.imm = (int32_t)rnd(40) - 4;
        in.alu.uop_begin = uop_base + (uint32_t)rnd(uop_n);
        in.alu.uop_end = in.alu.uop_begin + 1 + (uint32_t)rnd(uop_base + uop_n - in.alu.uop_begin);
        in.alu.iter_out = 1 + (uint32_t)rnd(3);
        in.alu.iter_in = 1 + (uint32_t)rnd(3);
        in.alu.dst_factor_out = (uint32_t)rnd(8);
        in.alu.dst_factor_in = (uint32_t)rnd(3);
        in.alu.src_factor_out = (uint32_t)rnd(8);
        in.alu.src_factor_in = (uint32_t)rnd(3);
      }
      emit(j, in);
    }
    memset(&in, 0, sizeof in);
    in.opcode = LOOM_OP_NOP;
    in.nop.queue = LOOM_Q_COMPUTE;
    in.push_prev = 1;
    in.push_next = 1;
    emit(j, in);
    // store
    in = mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT, 0, 4, 0, 1, 1, 1);
    rand_xfer(in, acc_rows_used, j.seg_size[4], false);
    in.pop_prev = 1;
    in.push_prev = 1;
    emit(j, in);
  }
  (void)lanes;
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_FINISH;
  emit(j, in);
}

// Random queues and tokens (deadlocks, NOFINISH, FINISH anywhere), with at
// most one instruction that can raise an error (a bad segment, SRAM range,
// micro-op index or encoding), so that the reported error does not depend
// on timing.  Chaos programs race on the shared buffers (nothing orders a
// STORE after the GEMM that fills OUT), so only schedule-independent state
// is compared: the error, its index and the exact counters.
static void gen_chaos(job &j) {
  // segments 0..5: 16 KiB; 6: 64 bytes; 7: unmapped.  Micro-ops come from
  // segment 2, which fill_dram() fills with in-range micro-ops.
  for (int s = 0; s < 8; s++) {
    j.seg_base[s] = (uint64_t)s * (16384 + 4096);
    j.seg_size[s] = s < 6 ? 16384 : s == 6 ? 64 : 0;
  }
  int n = 1 + (int)rnd(40);
  int bad = chance(40) ? (int)rnd(n) : -1;
  for (int i = 0; i < n; i++) {
    struct loom_insn in;
    memset(&in, 0, sizeof in);
    int kind = (int)rnd(100);
    int q;
    bool make_bad = i == bad;
    if (kind < 30) {
      int buf = (int)rnd(4);
      int seg = buf == LOOM_BUF_UOP ? 2 : (int)rnd(6);
      in = mem_insn(LOOM_OP_LOAD, buf, 0, seg, 0, 1, 1, 1);
      in.mem.src_int8 = buf == LOOM_BUF_ACC && chance(50);
      rand_xfer(in, buf == LOOM_BUF_UOP ? 64 : 48, buf == LOOM_BUF_UOP ? 4096 : 16384,
                (buf == LOOM_BUF_INP || buf == LOOM_BUF_ACC) && chance(50));
      if (chance(5)) in.mem.x_size = 0;
      if (make_bad) {
        switch (rnd(3)) {
        case 0: in.mem.segment = 6 + (uint32_t)rnd(2); break;
        case 1: in.mem.dram_offset += 100000; break;
        default: in.mem.sram_base = loom_hw_buffer_rows(cfg, buf) - (uint32_t)rnd(3); break;
        }
      }
      q = (buf == LOOM_BUF_INP || buf == LOOM_BUF_WGT) ? LOOM_Q_LOAD : LOOM_Q_COMPUTE;
    } else if (kind < 45) {
      in = mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT, 0, (int)rnd(6), 0, 1, 1, 1);
      rand_xfer(in, 48, 16384, false);
      if (make_bad) {
        if (chance(50)) in.mem.segment = 6 + (uint32_t)rnd(2);
        else in.mem.sram_base = (uint32_t)cfg->acc_rows - (uint32_t)rnd(3);
      }
      q = LOOM_Q_STORE;
    } else if (kind < 60) {
      in.opcode = LOOM_OP_GEMM;
      in.gemm.reset = chance(20);
      in.gemm.uop_begin = (uint32_t)rnd(64);
      in.gemm.uop_end = in.gemm.uop_begin + (uint32_t)rnd(8);
      in.gemm.iter_out = (uint32_t)rnd(3);
      in.gemm.iter_in = (uint32_t)rnd(3);
      in.gemm.acc_factor_out = (uint32_t)rnd(40);
      in.gemm.inp_factor_out = (uint32_t)rnd(40);
      in.gemm.wgt_factor_out = (uint32_t)rnd(40);
      in.gemm.acc_factor_in = (uint32_t)rnd(3);
      if (make_bad) {
        in.gemm.iter_out = 3;
        switch (rnd(4)) {
        case 0: in.gemm.acc_factor_out = 2000; break;
        case 1: in.gemm.inp_factor_out = 2000; break;
        case 2: in.gemm.wgt_factor_out = 1000; break;
        default: in.gemm.uop_begin = (uint32_t)cfg->uop_rows - 2; in.gemm.uop_end = in.gemm.uop_begin + 4; break;
        }
      }
      q = LOOM_Q_COMPUTE;
    } else if (kind < 72) {
      in.opcode = LOOM_OP_ALU;
      in.alu.alu_op = (uint32_t)rnd(LOOM_ALU_COUNT);
      in.alu.use_imm = chance(50);
      in.alu.imm = (int32_t)rnd(65536) - 32768;
      in.alu.uop_begin = (uint32_t)rnd(64);
      in.alu.uop_end = in.alu.uop_begin + (uint32_t)rnd(8);
      in.alu.iter_out = (uint32_t)rnd(3);
      in.alu.iter_in = (uint32_t)rnd(3);
      in.alu.dst_factor_out = (uint32_t)rnd(60);
      in.alu.src_factor_out = (uint32_t)rnd(60);
      if (make_bad) {
        in.alu.iter_out = 3;
        in.alu.use_imm = 0;
        if (chance(50)) in.alu.dst_factor_out = 2000;
        else in.alu.src_factor_out = 2000;
      }
      q = LOOM_Q_COMPUTE;
    } else if (kind < 77) {
      in.opcode = LOOM_OP_QCFG;
      in.qcfg.multiplier = (int32_t)(uint32_t)rng();
      in.qcfg.shift = (uint32_t)rnd(64);
      in.qcfg.clamp_lo = -128;
      in.qcfg.clamp_hi = 127;
      q = LOOM_Q_COMPUTE;
    } else if (kind < 80) {
      in.opcode = LOOM_OP_FINISH;
      q = LOOM_Q_COMPUTE;
    } else {
      in.opcode = LOOM_OP_NOP;
      in.nop.queue = (uint32_t)rnd(3);
      q = (int)in.nop.queue;
    }
    if (chance(40)) {
      in.pop_prev = chance(50) && q != LOOM_Q_LOAD;
      in.push_prev = chance(50) && q != LOOM_Q_LOAD;
      in.pop_next = chance(50) && q != LOOM_Q_STORE;
      in.push_next = chance(50) && q != LOOM_Q_STORE;
    }
    emit(j, in);
    if (make_bad && chance(25)) {  // or make it illegal, in one of several ways
      uint8_t *b = &j.insns[j.insns.size() - 16];
      switch (rnd(4)) {
      case 0: loom_bits_set(b, 127, 1, 1); break;                            // reserved
      case 1: loom_bits_set(b, 0, 3, 7); break;                              // opcode 7
      case 2: loom_bits_set(b, 3, 1, 1); loom_bits_set(b, 5, 1, 1); break;   // tokens
      default: loom_bits_set(b, 7, 3, 5 + (unsigned)rnd(3)); break;          // buffer/op/queue
      }
    }
  }
  if (chance(70)) {
    struct loom_insn in;
    memset(&in, 0, sizeof in);
    in.opcode = LOOM_OP_FINISH;
    emit(j, in);
  }
}

// Pre-fill DRAM segments with random bytes (micro-ops made mostly valid).
static void fill_dram(const job &j) {
  for (auto &b : dram) b = (uint8_t)rng();
  // micro-ops in segment 2 of tile jobs: keep indices small
  unsigned lanes = (unsigned)(cfg->batch * cfg->block_out);
  (void)lanes;
  for (uint64_t o = 0; o + 4 <= j.seg_size[2] && o < 4096; o += 4) {
    struct loom_uop u = {(uint32_t)rnd(64), (uint32_t)rnd(32), (uint32_t)rnd(32)};
    uint8_t b[4];
    loom_uop_encode(&u, b);
    memcpy(&dram[j.seg_base[2] + o], b, 4);
  }
}

static struct fsim *fs;
static uint64_t last_cnt[LOOM_CNT_COUNT];

// Throughput probes: a job of one UOP load and one long loop instruction.
static void gen_perf(job &j, int what) {
  for (int s = 0; s < 8; s++) j.seg_base[s] = j.seg_size[s] = 0;
  j.seg_base[2] = 0;
  j.seg_size[2] = 4096;
  struct loom_insn in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_UOP, 0, 2, 0, 1, 64, 64);
  emit(j, in);
  memset(&in, 0, sizeof in);
  if (what == 0 || what == 3) {  // GEMM: 4 x 4 x 64 micro-ops
    in.opcode = LOOM_OP_GEMM;
    in.gemm.uop_begin = 0;
    in.gemm.uop_end = 64;
    in.gemm.iter_out = 4;
    in.gemm.iter_in = 4;
  } else {  // ALU: same loop, immediate (1) or vector (2) operand
    in.opcode = LOOM_OP_ALU;
    in.alu.alu_op = what == 1 ? LOOM_ALU_ADD : LOOM_ALU_MAX;
    in.alu.use_imm = what == 1;
    in.alu.imm = 3;
    in.alu.uop_begin = 0;
    in.alu.uop_end = 64;
    in.alu.iter_out = 4;
    in.alu.iter_in = 4;
  }
  emit(j, in);
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_FINISH;
  emit(j, in);
}

static bool fault_job;
static uint64_t soft_reset_at;
static int soft_resets;
static int outcome[LOOM_ERR_COUNT];

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
    CHECK(rd_q.empty() && wr_q.empty() && b_q.empty(), "job %d: bus not drained after SOFT_RESET",
          jobno);
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
    static const char *names[] = {"UOP", "WGT", "INP", "ACC", "OUT"};
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

int main(int argc, char **argv) {
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
