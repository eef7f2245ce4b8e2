/*
 * dram_model.cpp - AXI4 slave with latency, bandwidth, outstanding-request
 * limits, optional reordering, protocol checks, allowed windows and faults.
 *
 * One clock() per rising edge does three things in a fixed order:
 *   1. check what the master did against the AXI rules (VALID stability);
 *   2. take the handshakes of the cycle that just ended (using the outputs
 *      this model presented during it);
 *   3. plan the outputs of the next cycle from the new state only.
 * Bandwidth is a token bucket refilled by bytes_per_cycle each edge and
 * capped at max(bus word, bytes_per_cycle), so idle time does not bank
 * bursts above the configured rate.  A read beat pays when it is presented,
 * a write beat when WREADY is offered (refunded when the master does not
 * take it); R and W take turns when both want the last token.
 */
#include "sim/tsim/dram_model.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

static const int kMaxPrinted = 20;  // violations echoed to stderr per model instance
static const uint8_t kRespOkay = 0, kRespDecerr = 3;
static const uint8_t kBurstIncr = 1;

DramModel::DramModel(const dram_params &p, std::string *err) : p_(p), rng_(p.seed | 1) {
  if (p_.latency < 1) p_.latency = 1;
  if (p_.bytes_per_cycle < 1) p_.bytes_per_cycle = 1;
  if (p_.outstanding < 1) p_.outstanding = 1;
  if (p_.bus_bytes < 1 || p_.bus_bytes > DRAM_MAX_BUS_BYTES || (p_.bus_bytes & (p_.bus_bytes - 1))) {
    *err = "bus width must be a power of two of at most 64 bytes";
    return;
  }
  void *m = mmap(nullptr, p_.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (m == MAP_FAILED) {
    *err = "cannot map " + std::to_string(p_.size) + " bytes of simulated DRAM";
    return;
  }
  mem_ = static_cast<uint8_t *>(m);
  credit_cap_ = std::max<int64_t>(p_.bus_bytes, p_.bytes_per_cycle);
  credit_ = credit_cap_;
  plan_next_cycle();
}

DramModel::~DramModel() {
  if (mem_) munmap(mem_, p_.size);
}

void DramModel::violation(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::string text = std::string(buf) + " (cycle " + std::to_string(now_) + ")";
  if (stats_.violations == 0) first_violation_ = text;
  if (printed_ < (uint64_t)kMaxPrinted) {  // quiet() parks printed_ at the maximum
    printed_++;
    fprintf(stderr, "tsim: DRAM model: %s\n", text.c_str());
  }
  stats_.violations++;
}

uint64_t DramModel::rand_next() const {
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return rng_ * 0x2545F4914F6CDD1DULL;
}

void DramModel::fault_add(uint64_t addr, uint64_t size, uint8_t resp, bool reads, bool writes) {
  range r{addr, size, resp};
  r.reads = reads;
  r.writes = writes;
  faults_.push_back(r);
}

void DramModel::reset_bus() {
  reads_.clear();
  writes_.clear();
  bresps_.clear();
  writes_in_flight_ = 0;
  active_read_ = -1;
  out_ = axi_resp{};
  prev_ = axi_req{};
  prev_out_ = axi_resp{};
  wready_paid_ = false;
  credit_ = credit_cap_;
  plan_next_cycle();
}

bool DramModel::in_dram(uint64_t addr, uint64_t n) const {
  return addr >= p_.base && addr - p_.base <= p_.size && n <= p_.size - (addr - p_.base);
}

/* True when every byte of [addr, addr+n) lies in an allowed window whose
 * ends are widened to multiples of `align` (reads fetch whole bus words;
 * writes are checked byte by byte with align 1).  No windows: all allowed. */
bool DramModel::in_windows(uint64_t addr, uint64_t n, uint64_t align) const {
  if (windows_.empty()) return true;
  uint64_t a = addr, end = addr + n;
  while (a < end) {  // a: the first byte not yet known to be covered
    uint64_t next = a;
    for (const range &w : windows_) {
      uint64_t lo = w.addr & ~(align - 1), hi = (w.addr + w.size + align - 1) & ~(align - 1);
      if (w.size && a >= lo && a < hi) { next = std::min(hi, end); break; }
    }
    if (next == a) return false;
    a = next;
  }
  return true;
}

uint8_t DramModel::fault_resp(uint64_t addr, uint64_t n, bool write) const {
  for (const range &f : faults_)
    if ((write ? f.writes : f.reads) && addr < f.addr + f.size && f.addr < addr + n) return (uint8_t)f.resp;
  return kRespOkay;
}

uint64_t DramModel::beat_addr(const burst &b, uint32_t i) const {
  uint64_t bytes = 1ull << b.size;
  if (i == 0) return b.addr;
  return (b.addr & ~(bytes - 1)) + (uint64_t)i * bytes;
}

void DramModel::check_addr(const char *ch, uint8_t id, uint64_t addr, uint8_t len, uint8_t size,
                           uint8_t burst) {
  uint64_t bytes = 1ull << size;
  if (burst != kBurstIncr)
    violation("%s id %u addr 0x%llx: burst type %u is not INCR", ch, id, (unsigned long long)addr, burst);
  if (bytes > p_.bus_bytes)
    violation("%s id %u addr 0x%llx: size %u (%llu bytes) is wider than the %u-byte bus", ch, id,
              (unsigned long long)addr, size, (unsigned long long)bytes, p_.bus_bytes);
  if (addr & (bytes - 1))
    violation("%s id %u addr 0x%llx: address not aligned to the transfer size %llu", ch, id,
              (unsigned long long)addr, (unsigned long long)bytes);
  uint64_t end = (addr & ~(bytes - 1)) + (uint64_t)(len + 1) * bytes;
  if ((addr >> 12) != ((end - 1) >> 12))
    violation("%s id %u addr 0x%llx len %u size %u: burst crosses a 4 KiB boundary", ch, id,
              (unsigned long long)addr, len, size);
  if (!in_dram(addr & ~(bytes - 1), end - (addr & ~(bytes - 1))))
    violation("%s id %u addr 0x%llx len %u: outside the simulated DRAM [0x%llx, 0x%llx)", ch, id,
              (unsigned long long)addr, len, (unsigned long long)p_.base,
              (unsigned long long)(p_.base + p_.size));
}

/* AXI: once VALID is high it stays high, with the same payload, until the
 * handshake.  `prev_` was sampled in the cycle that `prev_out_` answered. */
void DramModel::check_stable(const axi_req &m) {
  if (prev_.arvalid && !prev_out_.arready &&
      (!m.arvalid || m.araddr != prev_.araddr || m.arlen != prev_.arlen || m.arid != prev_.arid ||
       m.arsize != prev_.arsize))
    violation("AR id %u addr 0x%llx: ARVALID dropped or payload changed before ARREADY", prev_.arid,
              (unsigned long long)prev_.araddr);
  if (prev_.awvalid && !prev_out_.awready &&
      (!m.awvalid || m.awaddr != prev_.awaddr || m.awlen != prev_.awlen || m.awid != prev_.awid ||
       m.awsize != prev_.awsize))
    violation("AW id %u addr 0x%llx: AWVALID dropped or payload changed before AWREADY", prev_.awid,
              (unsigned long long)prev_.awaddr);
  if (prev_.wvalid && !prev_out_.wready) {
    const char *what = !m.wvalid ? "WVALID dropped" : m.wlast != prev_.wlast ? "WLAST changed"
                     : m.wstrb != prev_.wstrb ? "WSTRB changed"
                     : memcmp(m.wdata, prev_.wdata, p_.bus_bytes) ? "WDATA changed" : nullptr;
    if (what) violation("W: %s before WREADY (burst %s)", what, writes_.empty() ? "without AW yet"
                                                                 : "in progress");
  }
}

void DramModel::accept_ar(const axi_req &m) {
  if (log_)
    fprintf(log_, "%llu AR id %u addr 0x%llx len %u size %u\n", (unsigned long long)now_, m.arid,
            (unsigned long long)m.araddr, m.arlen, m.arsize);
  check_addr("AR", m.arid, m.araddr, m.arlen, m.arsize, m.arburst);
  burst b{m.arid, m.arlen, m.arsize, m.araddr, now_ + p_.latency - 1, 0, kRespOkay, false};
  reads_.push_back(b);
  stats_.read_bursts++;
  stats_.max_reads_in_flight = std::max<uint64_t>(stats_.max_reads_in_flight, reads_.size());
}

void DramModel::accept_aw(const axi_req &m) {
  if (log_)
    fprintf(log_, "%llu AW id %u addr 0x%llx len %u size %u\n", (unsigned long long)now_, m.awid,
            (unsigned long long)m.awaddr, m.awlen, m.awsize);
  check_addr("AW", m.awid, m.awaddr, m.awlen, m.awsize, m.awburst);
  burst b{m.awid, m.awlen, m.awsize, m.awaddr, 0, 0, kRespOkay, false};
  writes_.push_back(b);
  writes_in_flight_++;
  stats_.write_bursts++;
  stats_.max_writes_in_flight = std::max<uint64_t>(stats_.max_writes_in_flight, writes_in_flight_);
}

/* One W beat for the oldest write burst: strobed bytes only, within the
 * lanes the beat's address and size allow. */
void DramModel::accept_w(const axi_req &m) {
  burst &b = writes_.front();
  uint64_t a = beat_addr(b, b.beat), word = a & ~(uint64_t)(p_.bus_bytes - 1);
  uint64_t bytes = 1ull << b.size;
  uint32_t lane_lo = (uint32_t)(a & (p_.bus_bytes - 1));
  uint32_t lane_hi = (uint32_t)(((a & ~(bytes - 1)) + bytes - 1) & (p_.bus_bytes - 1));
  bool last = b.beat == b.len;
  if (log_)
    fprintf(log_, "%llu W  id %u beat %u strb 0x%llx%s\n", (unsigned long long)now_, b.id, b.beat,
            (unsigned long long)m.wstrb, m.wlast ? " last" : "");
  if (m.wlast != last)
    violation("W id %u addr 0x%llx: WLAST %s on beat %u of a %u-beat burst", b.id, (unsigned long long)b.addr,
              m.wlast ? "set" : "missing", b.beat, b.len + 1u);
  for (uint32_t l = 0; l < p_.bus_bytes; l++) {
    if (!((m.wstrb >> l) & 1)) continue;
    uint64_t at = word + l;
    if (l < lane_lo || l > lane_hi)
      violation("W id %u beat %u addr 0x%llx: strobe on lane %u outside the transfer", b.id, b.beat,
                (unsigned long long)a, l);
    uint8_t resp = fault_resp(at, 1, true);
    if (!in_dram(at, 1)) resp = kRespDecerr;
    else if (!b.flagged && !in_windows(at, 1, 1)) {
      b.flagged = true;  // once per burst: the first byte tells the story
      violation("write of 0x%llx outside the job's segments (id %u, burst addr 0x%llx len %u)",
                (unsigned long long)at, b.id, (unsigned long long)b.addr, b.len);
    }
    if (resp == kRespOkay) mem_[at - p_.base] = m.wdata[l];
    b.resp = std::max(b.resp, resp);
  }
  stats_.write_beats++;
  if (++b.beat <= b.len) return;
  b.ready_cycle = now_ + p_.latency - 1;
  bresps_.push_back(b);
  writes_.pop_front();
}

void DramModel::take_handshakes(const axi_req &m) {
  if (out_.arready && m.arvalid) accept_ar(m);
  if (out_.awready && m.awvalid) accept_aw(m);
  if (out_.wready && m.wvalid) accept_w(m);
  else if (wready_paid_) credit_ = std::min(credit_ + (int64_t)p_.bus_bytes, credit_cap_);
  wready_paid_ = false;
  if (out_.rvalid && m.rready) {
    burst &b = reads_[active_read_];
    if (log_)
      fprintf(log_, "%llu R  id %u beat %u resp %u%s\n", (unsigned long long)now_, b.id, b.beat,
              out_.rresp, out_.rlast ? " last" : "");
    stats_.read_beats++;
    if (++b.beat > b.len) {
      reads_.erase(reads_.begin() + active_read_);
      active_read_ = -1;
    }
    out_.rvalid = false;
  }
  if (out_.bvalid && m.bready) {
    if (log_)
      fprintf(log_, "%llu B  id %u resp %u\n", (unsigned long long)now_, out_.bid, out_.bresp);
    out_.bvalid = false;
    writes_in_flight_--;
  }
}

/* Index of the next burst to serve from `q`: latency elapsed and no older
 * entry of the same ID; the oldest such, or a seeded random one when
 * reordering.  -1 when none is ready. */
int DramModel::pick(const std::deque<burst> &q) const {
  int eligible[64], n = 0;
  for (size_t i = 0; i < q.size() && n < 64; i++) {
    if (q[i].ready_cycle > now_) continue;
    bool older_same_id = false;
    for (size_t j = 0; j < i && !older_same_id; j++) older_same_id = q[j].id == q[i].id;
    if (!older_same_id) eligible[n++] = (int)i;
    if (!p_.reorder && n) break;
  }
  if (n == 0) return -1;
  return p_.reorder ? eligible[rand_next() % (uint64_t)n] : eligible[0];
}

bool DramModel::present_read_beat() {
  if (active_read_ < 0) active_read_ = pick(reads_);
  if (active_read_ < 0 || credit_ < (int64_t)p_.bus_bytes) return false;
  burst &b = reads_[active_read_];
  uint64_t a = beat_addr(b, b.beat), bytes = 1ull << b.size;
  uint64_t word = a & ~(uint64_t)(p_.bus_bytes - 1);
  uint8_t resp = fault_resp(a & ~(bytes - 1), bytes, false);
  if (!in_dram(word, p_.bus_bytes)) resp = kRespDecerr;
  else if (!b.flagged && !in_windows(a & ~(bytes - 1), bytes, p_.bus_bytes)) {
    b.flagged = true;
    violation("read of 0x%llx outside the job's segments and instruction stream (id %u, burst addr "
              "0x%llx len %u)", (unsigned long long)a, b.id, (unsigned long long)b.addr, b.len);
  }
  if (resp == kRespDecerr) memset(out_.rdata, 0, sizeof out_.rdata);
  else memcpy(out_.rdata, mem_ + (word - p_.base), p_.bus_bytes);
  out_.rvalid = true;
  out_.rid = b.id;
  out_.rresp = resp;
  out_.rlast = b.beat == b.len;
  credit_ -= p_.bus_bytes;
  return true;
}

bool DramModel::offer_write_beat() {
  if (writes_.empty() || credit_ < (int64_t)p_.bus_bytes) return false;
  credit_ -= p_.bus_bytes;
  wready_paid_ = true;
  out_.wready = true;
  return true;
}

void DramModel::present_b() {
  int i = pick(bresps_);
  if (i < 0) return;
  out_.bvalid = true;
  out_.bid = bresps_[i].id;
  out_.bresp = bresps_[i].resp;
  bresps_.erase(bresps_.begin() + i);
}

void DramModel::plan_next_cycle() {
  bool stalled = now_ < stall_until_;
  out_.arready = !stalled && reads_.size() < p_.outstanding;
  out_.awready = !stalled && writes_in_flight_ < p_.outstanding;
  out_.wready = false;
  if (stalled) return;  // presented R and B beats stay valid, as AXI requires
  bool r_wants = !out_.rvalid;
  if (rr_write_first_) {
    if (offer_write_beat()) rr_write_first_ = false;
    if (r_wants && present_read_beat()) rr_write_first_ = true;
  } else {
    if (r_wants && present_read_beat()) rr_write_first_ = true;
    if (offer_write_beat()) rr_write_first_ = false;
  }
  if (!out_.bvalid) present_b();
}

void DramModel::clock(const axi_req &m) {
  check_stable(m);
  take_handshakes(m);
  prev_ = m;
  prev_out_ = out_;
  credit_ = std::min(credit_ + (int64_t)p_.bytes_per_cycle, credit_cap_);
  plan_next_cycle();
  now_++;
}
