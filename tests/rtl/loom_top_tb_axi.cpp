// loom_top_tb_axi.cpp - loom_top's surroundings in the bring-up test
// (loom_top_tb.h): one AXI4 memory, the clock, the AXI4-Lite master, and
// the SRAMs read out of the Verilated model.
//
// The memory answers with random latencies (up to lat_max cycles), random
// READY gaps (rd_pct / wr_pct percent of cycles ready) and read data of
// different IDs interleaved beat by beat: AXI allows it, and it is harsher
// than the tsim DRAM model.  It checks every burst (INCR, full bus width,
// aligned, inside DRAM, not crossing 4 KiB), that a VALID keeps its payload
// until READY, that WLAST falls on the last beat, and that no byte outside
// the job's windows is read (whole bus words, as AXI reads them) or
// written.  Bus addresses in [fault_lo, fault_hi] answer SLVERR.
#include <cinttypes>
#include <cstring>
#include <deque>

#include "Vloom_top___024root.h"
#include "loom_top_tb.h"

namespace tb {

// ---------------------------------------------------------------- DRAM
std::vector<uint8_t> dram(DRAM_SIZE);
std::vector<window> windows;
uint64_t fault_lo = 1, fault_hi = 0;

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
int rd_pct, wr_pct, lat_max;

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

bool bus_drained() { return rd_q.empty() && wr_q.empty() && b_q.empty(); }

// ---------------------------------------------------------------- clock and registers
#if VM_TRACE
VerilatedVcdC *tfp;
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
void tick() {
  half_low();
  half_high();
}

void reg_write(uint32_t off, uint32_t v) {
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

uint32_t reg_read(uint32_t off) {
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

void rtl_sram(int buf, std::vector<uint8_t> &out) {
  Vloom_top___024root *r = top->rootp;
  unsigned lanes = (unsigned)(cfg->batch * cfg->block_out), ib = (unsigned)(cfg->batch * cfg->block_in);
  switch (buf) {
  case LOOM_BUF_UOP: sram_bytes(r->loom_top__DOT__u_uop__DOT__g_auto__DOT__mem, cfg->uop_rows, 4, out); break;
  case LOOM_BUF_WGT:
    sram_bytes(r->loom_top__DOT__u_wgt__DOT__g_auto__DOT__mem, cfg->wgt_rows, cfg->block_in * cfg->block_out, out);
    break;
  case LOOM_BUF_INP: // two banks by row parity: row k is row k >> 1 of bank k & 1
    out.resize((size_t)cfg->inp_rows * ib);
    for (unsigned k = 0; k < (unsigned)cfg->inp_rows; k++)
      memcpy(&out[(size_t)k * ib],
             k & 1 ? (const void *)&r->loom_top__DOT__u_inp1__DOT__g_auto__DOT__mem[k >> 1]
                   : (const void *)&r->loom_top__DOT__u_inp0__DOT__g_auto__DOT__mem[k >> 1],
             ib);
    break;
  case LOOM_BUF_ACC: sram_bytes(r->loom_top__DOT__u_acc__DOT__g_auto__DOT__mem, cfg->acc_rows, lanes * 4, out); break;
  case LOOM_BUF_PAR: // biases in the low half, multipliers in the high half, as fsim's rows
    sram_bytes(r->loom_top__DOT__u_par__DOT__g_block__DOT__mem, LOOM_PAR_ROWS, lanes * 8, out);
    break;
  case LOOM_BUF_LUT: // every lane holds the same table (LOAD LUT writes them all): lane 0's
    sram_bytes(r->loom_top__DOT__u_compute__DOT__u_alu__DOT__g_lut__BRA__0__KET____DOT__lut, 256, 1, out);
    break;
  default: sram_bytes(r->loom_top__DOT__u_out__DOT__g_auto__DOT__mem, cfg->acc_rows, lanes, out); break;
  }
}

}  // namespace tb
