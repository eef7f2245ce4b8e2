/*
 * dram_model.h - the AXI4 slave that stands for DRAM in tsim.
 *
 * The harness samples the accelerator's AXI master outputs before each rising
 * edge (struct axi_req), lets the model take the handshakes at the edge
 * (clock()), and drives the slave outputs the model computes from its state
 * alone (drive(): a Moore machine, so there is no combinational path back
 * into the RTL and the order of evaluation is irrelevant).
 *
 * What the model does, and why (docs/tsim.md has the user-facing version):
 *  - latency: the first beat of a read burst is available `latency` cycles
 *    after its AR handshake; a write response `latency` cycles after WLAST.
 *  - bandwidth: one token bucket shared by reads and writes fills by
 *    `bytes_per_cycle` each cycle; every beat costs a full bus word.  So the
 *    average throughput is bytes_per_cycle whatever the mix.
 *  - outstanding: at most `outstanding` read bursts and `outstanding` write
 *    bursts in flight; ARREADY/AWREADY drop beyond that.
 *  - reordering (optional, seeded): among read bursts (and write responses)
 *    whose latency has elapsed, one of a different ID may overtake an older
 *    one, as an interconnect with several memory ports does.  Bursts of the
 *    same ID always complete in order and beats of bursts never interleave.
 *  - checks: every AXI rule the slave can observe (burst type, size wider
 *    than the bus, address not aligned to the size, 4 KiB crossing, WLAST
 *    position, strobes outside the transfer's lanes, VALID dropped or payload
 *    changed before READY, access outside the DRAM) and every access outside
 *    the "allowed windows" (the job's segments and instruction stream) is a
 *    violation: printed on stderr at once and kept for the caller to fail
 *    the test with.  The model keeps running after a violation so the test
 *    can also report what the accelerator did next.
 *  - faults: SLVERR/DECERR on an address range, and a stall of N cycles
 *    during which the slave accepts and returns nothing.
 */
#ifndef LOOM_TSIM_DRAM_MODEL_H
#define LOOM_TSIM_DRAM_MODEL_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#define DRAM_MAX_BUS_BYTES 64

struct dram_params {
  uint64_t base;            // bus address of byte 0
  uint64_t size;            // bytes
  uint32_t bus_bytes;       // data bus width in bytes (power of two)
  uint32_t latency;         // cycles, see above
  uint32_t bytes_per_cycle; // bandwidth
  uint32_t outstanding;     // bursts in flight per direction
  int reorder;              // 1: reads/B of different IDs may overtake
  uint64_t seed;            // for reordering
};

// The master's outputs as sampled before a rising edge.
struct axi_req {
  bool awvalid, wvalid, wlast, bready, arvalid, rready;
  uint8_t awid, awlen, awsize, awburst, arid, arlen, arsize, arburst;
  uint64_t awaddr, araddr;
  uint64_t wstrb;
  uint8_t wdata[DRAM_MAX_BUS_BYTES];
};

// The slave's outputs, valid for the whole next cycle.
struct axi_resp {
  bool awready, wready, bvalid, arready, rvalid, rlast;
  uint8_t bid, bresp, rid, rresp;
  uint8_t rdata[DRAM_MAX_BUS_BYTES];
};

struct dram_stats {
  uint64_t read_bursts, read_beats, write_bursts, write_beats;
  uint64_t max_reads_in_flight, max_writes_in_flight;
  uint64_t violations;
};

class DramModel {
public:
  DramModel(const dram_params &p, std::string *err);
  ~DramModel();
  DramModel(const DramModel &) = delete;
  DramModel &operator=(const DramModel &) = delete;

  void drive(axi_resp *o) const { *o = out_; }
  void clock(const axi_req &m);
  void reset_bus();  // drop every transaction in flight (accelerator reset)

  uint8_t *mem() { return mem_; }
  const dram_params &params() const { return p_; }
  const dram_stats &stats() const { return stats_; }

  void window_clear() { windows_.clear(); }
  void window_add(uint64_t addr, uint64_t size) { windows_.push_back({addr, size, 0}); }
  void fault_add(uint64_t addr, uint64_t size, uint8_t resp, bool reads, bool writes);
  void fault_clear() { faults_.clear(); }
  void stall(uint64_t cycles) { stall_until_ = now_ + cycles; }
  // Logs every handshake (one line each) to `f`, or stops logging (NULL).
  void log_to(FILE *f) { log_ = f; }
  // Stops echoing violations to stderr (tests that provoke them on purpose).
  void quiet() { printed_ = UINT64_MAX; }

  uint64_t violation_count() const { return stats_.violations; }
  const std::string &first_violation() const { return first_violation_; }
  void violations_clear() { stats_.violations = 0; first_violation_.clear(); }
  // Records (and echoes to stderr) a violation; the harness reports its own here too.
  void violation(const char *fmt, ...) __attribute__((format(printf, 2, 3)));

private:
  struct range { uint64_t addr, size; uint32_t resp; bool reads = true, writes = true; };
  struct burst {
    uint8_t id, len, size;
    uint64_t addr;
    uint64_t ready_cycle; // first beat (reads) or B response (writes) not before
    uint32_t beat;        // beats done
    uint8_t resp;         // worst response so far (writes)
    bool flagged;         // a window violation of this burst was reported
  };

  void take_handshakes(const axi_req &m);
  void accept_ar(const axi_req &m);
  void accept_aw(const axi_req &m);
  void accept_w(const axi_req &m);
  void check_addr(const char *ch, uint8_t id, uint64_t addr, uint8_t len, uint8_t size,
                  uint8_t burst);
  void check_stable(const axi_req &m);
  void plan_next_cycle();
  bool present_read_beat();
  bool offer_write_beat();
  void present_b();
  int pick(const std::deque<burst> &q) const;
  uint64_t beat_addr(const burst &b, uint32_t i) const;
  uint8_t fault_resp(uint64_t addr, uint64_t n, bool write) const;
  bool in_windows(uint64_t addr, uint64_t n, uint64_t align) const;
  bool in_dram(uint64_t addr, uint64_t n) const;
  uint64_t rand_next() const;

  dram_params p_;
  uint8_t *mem_ = nullptr;
  uint64_t now_ = 0;
  uint64_t stall_until_ = 0;
  int64_t credit_ = 0;
  int64_t credit_cap_ = 0;
  bool rr_write_first_ = false;
  mutable uint64_t rng_;

  std::deque<burst> reads_;   // accepted AR, oldest first; front may be streaming
  int active_read_ = -1;      // index into reads_ of the burst being returned
  std::deque<burst> writes_;  // accepted AW whose data is incomplete, oldest first
  std::deque<burst> bresps_;  // writes waiting for their B response
  uint32_t writes_in_flight_ = 0;

  axi_resp out_{};
  bool wready_paid_ = false;
  axi_req prev_{};       // master outputs of the previous cycle
  axi_resp prev_out_{};  // what this model presented in that cycle

  std::vector<range> windows_;
  std::vector<range> faults_;
  dram_stats stats_{};
  std::string first_violation_;
  uint64_t printed_ = 0;  // violations echoed to stderr, never reset
  FILE *log_ = nullptr;   // handshake log, see log_to()
};

#endif
