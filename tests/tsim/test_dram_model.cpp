/*
 * test_dram_model.cpp - the DRAM model on its own, driven by a scripted AXI
 * master in software (no RTL): latency, bandwidth, outstanding limit,
 * reordering across IDs (never within one), data and strobes, every
 * protocol check, allowed windows and fault injection.
 *
 * Each cycle the master looks at what the model presents (drive), sets its
 * own outputs without looking at READY (as AXI requires of VALID), and the
 * model takes the edge (clock).  Plain C++ with a CHECK macro: the model is
 * C++ and has no C interface of its own.
 */
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "sim/tsim/dram_model.h"

static int failures;

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                            \
    }                                                                        \
  } while (0)

static const uint64_t kBase = 0x100000000ull;

static dram_params params(uint32_t latency, uint32_t bpc, uint32_t outstanding, int reorder) {
  return dram_params{kBase, 1u << 20, 8, latency, bpc, outstanding, reorder, 7};
}

struct read_req { uint8_t id, len; uint64_t addr; };
struct beat { uint8_t id, resp; bool last; uint64_t cycle; uint8_t data[8]; };

/* Issues `reqs` on AR back to back, takes every R beat; returns them. */
static std::vector<beat> run_reads(DramModel &m, const std::vector<read_req> &reqs, uint64_t max_cycles) {
  std::vector<beat> got;
  size_t next = 0, expect_beats = 0;
  for (const read_req &r : reqs) expect_beats += r.len + 1u;
  for (uint64_t c = 0; c < max_cycles && got.size() < expect_beats; c++) {
    axi_resp o;
    m.drive(&o);
    axi_req q{};
    q.rready = true;
    if (o.rvalid) {
      beat b{o.rid, o.rresp, o.rlast, c, {}};
      memcpy(b.data, o.rdata, 8);
      got.push_back(b);
    }
    if (next < reqs.size()) {
      q.arvalid = true, q.arid = reqs[next].id, q.araddr = reqs[next].addr;
      q.arlen = reqs[next].len, q.arsize = 3, q.arburst = 1;
      if (o.arready) next++;
    }
    m.clock(q);
  }
  return got;
}

/* One write burst of `n` beats of 8 bytes with strobe `strb`; returns BRESP. */
static int write_burst(DramModel &m, uint64_t addr, uint8_t n, const uint8_t *data, uint8_t strb,
                       bool wrong_last = false) {
  bool aw_done = false;
  uint8_t sent = 0;
  for (int c = 0; c < 10000; c++) {
    axi_resp o;
    m.drive(&o);
    axi_req q{};
    q.bready = true;
    if (o.bvalid) {
      m.clock(q);
      return o.bresp;
    }
    if (!aw_done) q.awvalid = true, q.awid = 3, q.awaddr = addr, q.awlen = n - 1, q.awsize = 3, q.awburst = 1;
    if (sent < n) {
      q.wvalid = true, q.wstrb = strb, q.wlast = (sent == n - 1) != wrong_last;
      memcpy(q.wdata, data + 8 * sent, 8);
    }
    if (q.awvalid && o.awready) aw_done = true;
    if (q.wvalid && o.wready) sent++;
    m.clock(q);
  }
  return -1;
}

static void test_latency_and_data() {
  std::string err;
  DramModel m(params(32, 8, 8, 0), &err);
  CHECK(err.empty());
  for (int i = 0; i < 64; i++) m.mem()[0x100 + i] = (uint8_t)i;
  std::vector<beat> b = run_reads(m, {{1, 3, kBase + 0x100}}, 1000);
  CHECK(b.size() == 4);
  CHECK(b[0].cycle == 32);            /* AR handshake in cycle 0 */
  CHECK(b[3].cycle == 35 && b[3].last);
  CHECK(b[2].data[0] == 16 && b[2].data[7] == 23);
  CHECK(m.violation_count() == 0);
}

static void test_bandwidth_and_outstanding() {
  std::string err;
  DramModel m(params(20, 4, 4, 0), &err);
  std::vector<read_req> reqs;
  for (int i = 0; i < 16; i++) reqs.push_back({(uint8_t)(i % 4), 15, kBase + 0x1000 + 128ull * i});
  std::vector<beat> b = run_reads(m, reqs, 100000);
  CHECK(b.size() == 256);
  double cycles = (double)(b.back().cycle - b.front().cycle + 1);
  CHECK(cycles >= 2 * 256 - 2 && cycles <= 2 * 256 + 4); /* 4 B/cycle on an 8-byte bus */
  CHECK(m.stats().max_reads_in_flight == 4);
}

static void test_reorder() {
  std::string err;
  DramModel m(params(16, 8, 8, 1), &err);
  std::vector<read_req> reqs;
  for (int i = 0; i < 64; i++) reqs.push_back({(uint8_t)(i % 3), 1, kBase + 16ull * i});
  for (int i = 0; i < 64; i++) memcpy(m.mem() + 16 * i, &i, 4);
  std::vector<beat> b = run_reads(m, reqs, 100000);
  CHECK(b.size() == 128);
  int last_per_id[3] = {-1, -1, -1}, overtakes = 0, prev = -1;
  for (size_t i = 0; i < b.size(); i += 2) {
    int idx;
    memcpy(&idx, b[i].data, 4);
    CHECK(idx % 3 == b[i].id);
    CHECK(idx > last_per_id[b[i].id]); /* same ID: in order */
    last_per_id[b[i].id] = idx;
    if (idx < prev) overtakes++;
    prev = idx;
    CHECK(!b[i].last && b[i + 1].last && b[i + 1].id == b[i].id); /* no interleaving */
  }
  CHECK(overtakes > 0);
}

static void test_writes_strobes_and_last() {
  std::string err;
  DramModel m(params(8, 8, 8, 0), &err);
  m.quiet();
  uint8_t data[16];
  for (int i = 0; i < 16; i++) data[i] = (uint8_t)(0xA0 + i);
  CHECK(write_burst(m, kBase + 0x200, 2, data, 0x0F) == 0);
  CHECK(m.mem()[0x200] == 0xA0 && m.mem()[0x203] == 0xA3 && m.mem()[0x204] == 0);
  CHECK(m.mem()[0x208] == 0xA8 && m.mem()[0x20C] == 0);
  CHECK(m.violation_count() == 0);
  write_burst(m, kBase + 0x300, 2, data, 0xFF, true);
  CHECK(m.violation_count() >= 1);
  CHECK(m.first_violation().find("WLAST") != std::string::npos);
}

/* Each bad request is reported with a message naming the rule. */
static void expect_violation(const read_req &r, uint8_t size, uint8_t burst, const char *what) {
  std::string err;
  DramModel m(params(4, 8, 8, 0), &err);
  m.quiet();
  axi_resp o;
  m.drive(&o);
  axi_req q{};
  q.arvalid = true, q.arid = r.id, q.araddr = r.addr, q.arlen = r.len, q.arsize = size, q.arburst = burst;
  m.clock(q);
  CHECK(m.violation_count() >= 1);
  CHECK(m.first_violation().find(what) != std::string::npos);
}

static void test_protocol_checks() {
  expect_violation({0, 3, kBase + 0xFF0}, 3, 1, "4 KiB");
  expect_violation({0, 0, kBase + 0x104}, 3, 1, "not aligned");
  expect_violation({0, 0, kBase + 0x100}, 4, 1, "wider than");
  expect_violation({0, 0, kBase + 0x100}, 3, 0, "not INCR");
  expect_violation({0, 0, 0x1000}, 3, 1, "outside the simulated DRAM");
  std::string err;
  DramModel m(params(4, 8, 1, 0), &err);
  m.quiet();
  axi_req q{};
  q.arvalid = true, q.araddr = kBase, q.arsize = 3, q.arburst = 1;
  axi_resp o;
  m.drive(&o);
  m.clock(q); /* accepted: the one outstanding slot is taken */
  q.araddr = kBase + 64;
  m.drive(&o);
  CHECK(!o.arready);
  m.clock(q); /* waits, not accepted */
  q.arvalid = false;
  m.clock(q); /* dropped VALID before READY */
  CHECK(m.first_violation().find("ARVALID dropped") != std::string::npos);
}

static void test_windows_and_faults() {
  std::string err;
  DramModel m(params(4, 8, 8, 0), &err);
  m.quiet();
  m.window_add(kBase + 0x1000, 100);
  run_reads(m, {{0, 12, kBase + 0x1000}}, 1000); /* 104 bytes: the last word is widened */
  CHECK(m.violation_count() == 0);
  run_reads(m, {{0, 13, kBase + 0x1000}}, 1000);
  CHECK(m.violation_count() == 1);
  uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  write_burst(m, kBase + 0x1060, 1, data, 0x0F); /* bytes 96..99: inside */
  CHECK(m.violation_count() == 1);
  write_burst(m, kBase + 0x1060, 1, data, 0x1F); /* byte 100: outside */
  CHECK(m.violation_count() == 2);
  m.window_clear();
  m.violations_clear();
  m.fault_add(kBase + 0x2008, 8, 2, true, false);
  std::vector<beat> b = run_reads(m, {{0, 2, kBase + 0x2000}}, 1000);
  CHECK(b.size() == 3 && b[0].resp == 0 && b[1].resp == 2 && b[2].resp == 0);
  m.fault_add(kBase + 0x3000, 8, 3, false, true);
  CHECK(write_burst(m, kBase + 0x3000, 1, data, 0xFF) == 3);
  CHECK(m.mem()[0x3000] == 0);
  m.stall(50);
  b = run_reads(m, {{0, 0, kBase}}, 1000);
  CHECK(b.size() == 1 && b[0].cycle >= 50);
  CHECK(m.violation_count() == 0);
}

int main() {
  test_latency_and_data();
  test_bandwidth_and_outstanding();
  test_reorder();
  test_writes_strobes_and_last();
  test_protocol_checks();
  test_windows_and_faults();
  printf("test_dram_model: %s (%d failed checks)\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
