/*
 * tsim_harness.cpp - the clocking harness around the Verilated loom_top.
 *
 * One cycle is: drive the DRAM model's (registered) outputs and the AXI-Lite
 * master's inputs, evaluate with clk low so the RTL's combinational outputs
 * settle, sample every master output (AXI4 and AXI-Lite), raise the clock
 * and evaluate, then let the DRAM model take the handshakes it saw.  Because
 * both sides only ever look at values sampled before the edge, the order of
 * the two models never matters, exactly as with two flip-flop designs on
 * one clock.
 *
 * The harness is the AXI-Lite master: a register access holds AWVALID/WVALID
 * (or ARVALID) until each handshake, then waits for the response.  Nothing
 * here knows the register map; libloom's hwregs.c does.
 *
 * Built by sim/tsim/module.mk with -fvisibility=hidden: only the tsim_*
 * functions leave the shared library, so libraries of several
 * configurations can be loaded in one process.
 */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "Vloom_top.h"
#include "verilated.h"
#include "verilated_sym_props.h"
#if VM_TRACE
#include "verilated_fst_c.h"
#endif

#include "loom_isa_gen.h"
#include "sim/tsim/dram_model.h"

#pragma GCC visibility push(default)
#include "sim/tsim/tsim.h"
#pragma GCC visibility pop

#define TSIM_STR2(x) #x
#define TSIM_STR(x) TSIM_STR2(x)

static const uint32_t kLiteTimeout = 10000;  // cycles an AXI-Lite transaction may take
static const uint32_t kResetCycles = 16;
static const uint64_t kDramBase = 0x100000000ull;  // 4 GiB: exercises the high address bits

// What the AXI-Lite slave showed before the last rising edge.
struct lite_seen {
  bool awready, wready, bvalid, arready, rvalid;
  uint8_t bresp, rresp;
  uint32_t rdata;
};

// The timeline recorder (tsim.h).  Slots: [module][kind] of the slice
// being extended, if any.
struct tl_open {
  bool on;
  uint64_t begin;
  uint32_t insn;
};

struct timeline {
  bool on;                  // recording
  const uint16_t *ev;       // loom_top.probe_ev, NULL without a probe
  const uint32_t *idx;      // loom_top.probe_idx, four words
  bool in_job;              // the last sampled cycle was a counted job cycle
  uint64_t now;             // counted cycles of the job so far
  tl_open open[4][3];
  std::vector<tsim_slice> slices;
  bool sorted;
};

struct tsim {
  VerilatedContext *ctx;
  Vloom_top *top;
  DramModel *dram;
#if VM_TRACE
  VerilatedFstC *fst;
#endif
  FILE *axi_log;
  tsim_options opt;
  uint64_t cycles;
  uint64_t next_progress;
  lite_seen lite;
  timeline tl;
  bool irq_dropped; // tsim_fault_interrupt: interrupt_o does not reach the CPU
};

// ---- moving bus words between Verilator signals and byte arrays ----

template <typename T> static void sig_to_bytes(const T &v, uint8_t *out, unsigned n) {
  uint64_t x = (uint64_t)v;
  for (unsigned i = 0; i < n; i++) out[i] = (uint8_t)(x >> (8 * i));
}

template <std::size_t W> static void sig_to_bytes(const VlWide<W> &v, uint8_t *out, unsigned n) {
  for (unsigned i = 0; i < n; i++) out[i] = (uint8_t)(v[i / 4] >> (8 * (i % 4)));
}

template <typename T> static void bytes_to_sig(T &v, const uint8_t *in, unsigned n) {
  uint64_t x = 0;
  for (unsigned i = 0; i < n; i++) x |= (uint64_t)in[i] << (8 * i);
  v = (T)x;
}

template <std::size_t W> static void bytes_to_sig(VlWide<W> &v, const uint8_t *in, unsigned n) {
  for (unsigned w = 0; w < W; w++) v[w] = 0;
  for (unsigned i = 0; i < n; i++) v[i / 4] |= (uint32_t)in[i] << (8 * (i % 4));
}

static unsigned bus_bytes(const Vloom_top *top) { return (unsigned)sizeof(top->m_axi_wdata_o); }

// ---- driving the ports ----

static void drive_dram(tsim *t) {
  Vloom_top *top = t->top;
  axi_resp r;
  t->dram->drive(&r);
  top->m_axi_awready_i = r.awready;
  top->m_axi_wready_i = r.wready;
  top->m_axi_bvalid_i = r.bvalid;
  top->m_axi_bid_i = r.bid;
  top->m_axi_bresp_i = r.bresp;
  top->m_axi_arready_i = r.arready;
  top->m_axi_rvalid_i = r.rvalid;
  top->m_axi_rid_i = r.rid;
  top->m_axi_rresp_i = r.rresp;
  top->m_axi_rlast_i = r.rlast;
  bytes_to_sig(top->m_axi_rdata_i, r.rdata, bus_bytes(top));
}

static void sample_master(const Vloom_top *top, axi_req *m) {
  m->awvalid = top->m_axi_awvalid_o;
  m->awid = top->m_axi_awid_o;
  m->awaddr = top->m_axi_awaddr_o;
  m->awlen = top->m_axi_awlen_o;
  m->awsize = top->m_axi_awsize_o;
  m->awburst = top->m_axi_awburst_o;
  m->wvalid = top->m_axi_wvalid_o;
  m->wlast = top->m_axi_wlast_o;
  m->wstrb = (uint64_t)top->m_axi_wstrb_o;
  sig_to_bytes(top->m_axi_wdata_o, m->wdata, bus_bytes(top));
  m->bready = top->m_axi_bready_o;
  m->arvalid = top->m_axi_arvalid_o;
  m->arid = top->m_axi_arid_o;
  m->araddr = top->m_axi_araddr_o;
  m->arlen = top->m_axi_arlen_o;
  m->arsize = top->m_axi_arsize_o;
  m->arburst = top->m_axi_arburst_o;
  m->rready = top->m_axi_rready_o;
}

static void sample_lite(const Vloom_top *top, lite_seen *l) {
  l->awready = top->s_axil_awready_o;
  l->wready = top->s_axil_wready_o;
  l->bvalid = top->s_axil_bvalid_o;
  l->bresp = top->s_axil_bresp_o;
  l->arready = top->s_axil_arready_o;
  l->rvalid = top->s_axil_rvalid_o;
  l->rresp = top->s_axil_rresp_o;
  l->rdata = top->s_axil_rdata_o;
}

static void dump_trace(tsim *t, uint64_t when) {
#if VM_TRACE
  if (t->fst) t->fst->dump(when);
#else
  (void)t;
  (void)when;
#endif
}

// ---- timelines ----

static void tl_close(timeline *tl, unsigned mod, unsigned kind) {
  tl_open *o = &tl->open[mod][kind];
  if (!o->on) return;
  tl->slices.push_back(tsim_slice{o->begin, tl->now, o->insn, (uint8_t)mod, (uint8_t)kind, 0});
  tl->sorted = false;
  o->on = false;
}

static void tl_close_all(timeline *tl) {
  for (unsigned m = 0; m < 4; m++)
    for (unsigned k = 0; k < 3; k++) tl_close(tl, m, k);
}

// One cycle of a (module, kind) run: extends, ends or starts its slice.
static void tl_track(timeline *tl, unsigned mod, unsigned kind, bool active, uint32_t insn) {
  tl_open *o = &tl->open[mod][kind];
  if (o->on && (!active || o->insn != insn)) tl_close(tl, mod, kind);
  if (active && !o->on) *o = tl_open{true, tl->now, insn};
}

// Samples the probe with the values the coming clock edge commits, exactly
// what the counters add (the layout is documented in loom_top.v).
static void tl_sample(timeline *tl) {
  uint32_t ev = *tl->ev;
  if (!(ev & 1u)) {
    if (tl->in_job) tl_close_all(tl);
    tl->in_job = false;
    return;
  }
  if (!tl->in_job) {
    tl->slices.clear();
    tl->sorted = true;
    tl->now = 0;
    tl->in_job = true;
  }
  for (unsigned m = 0; m < 3; m++) {
    uint32_t bits = ev >> (1 + 4 * m);
    for (unsigned k = 0; k < 3; k++) tl_track(tl, m + 1, k, (bits >> k) & 1u, tl->idx[m]);
  }
  tl_track(tl, 0, TSIM_SLICE_INSN, (ev >> 13) & 1u, tl->idx[3]);
  tl_track(tl, 0, TSIM_SLICE_MEM_WAIT, (ev >> 15) & 1u, tl->idx[3]);
  tl->now++;
}

static bool tl_slice_before(const tsim_slice &a, const tsim_slice &b) {
  if (a.begin != b.begin) return a.begin < b.begin;
  if (a.module != b.module) return a.module < b.module;
  return a.kind < b.kind;
}

// The probe's storage in the model, found by name; false without one.
static bool tl_bind(tsim *t) {
  const VerilatedScope *sc = t->ctx->scopeFind("loom_top.loom_top");
  const VerilatedVar *ev = sc ? sc->varFind("probe_ev") : nullptr;
  const VerilatedVar *idx = sc ? sc->varFind("probe_idx") : nullptr;
  if (!ev || !idx || ev->vltype() != VLVT_UINT16 || idx->vltype() != VLVT_WDATA) return false;
  t->tl.ev = static_cast<const uint16_t *>(ev->datap());
  t->tl.idx = static_cast<const uint32_t *>(idx->datap());
  return true;
}

extern "C" int tsim_timeline_record(tsim *t, int on) {
  if (!t->tl.ev && !tl_bind(t)) return -1;
  t->tl.on = on != 0;
  return 0;
}

extern "C" const tsim_slice *tsim_timeline(tsim *t, size_t *count) {
  timeline *tl = &t->tl;
  if (tl->in_job) tl_close_all(tl);
  if (!tl->sorted) std::stable_sort(tl->slices.begin(), tl->slices.end(), tl_slice_before);
  tl->sorted = true;
  *count = tl->slices.size();
  return tl->slices.data();
}

// ---- one clock cycle ----

static void cycle(tsim *t) {
  Vloom_top *top = t->top;
  axi_req m;
  drive_dram(t);
  top->clk_i = 0;
  top->eval();
  if (t->tl.on) tl_sample(&t->tl);
  dump_trace(t, 2 * t->cycles);
  sample_master(top, &m);
  sample_lite(top, &t->lite);
  top->clk_i = 1;
  top->eval();
  dump_trace(t, 2 * t->cycles + 1);
  t->dram->clock(m);
  t->cycles++;
  if (t->opt.progress && t->cycles >= t->next_progress) {
    t->next_progress = t->cycles + t->opt.progress_interval;
    t->opt.progress(t->opt.progress_user, t->cycles);
  }
}

// ---- AXI-Lite master ----

static void lite_idle(Vloom_top *top) {
  top->s_axil_awvalid_i = 0;
  top->s_axil_wvalid_i = 0;
  top->s_axil_bready_i = 0;
  top->s_axil_arvalid_i = 0;
  top->s_axil_rready_i = 0;
}

static int lite_fail(tsim *t, const char *what, uint32_t offset) {
  char buf[160];
  snprintf(buf, sizeof buf, "AXI-Lite %s of register 0x%03x %s", what, offset,
           t->lite.bvalid || t->lite.rvalid ? "answered with an error response"
                                            : "got no response within 10000 cycles");
  t->dram->violation("%s", buf);
  lite_idle(t->top);
  return -1;
}

extern "C" int tsim_reg_write(tsim *t, uint32_t offset, uint32_t value) {
  Vloom_top *top = t->top;
  top->s_axil_awaddr_i = offset & 0xFFF;
  top->s_axil_awvalid_i = 1;
  top->s_axil_wdata_i = value;
  top->s_axil_wstrb_i = 0xF;
  top->s_axil_wvalid_i = 1;
  top->s_axil_bready_i = 1;
  for (uint32_t n = 0; n < kLiteTimeout; n++) {
    cycle(t);
    if (top->s_axil_awvalid_i && t->lite.awready) top->s_axil_awvalid_i = 0;
    if (top->s_axil_wvalid_i && t->lite.wready) top->s_axil_wvalid_i = 0;
    if (t->lite.bvalid) {
      if (t->lite.bresp != 0) return lite_fail(t, "write", offset);
      lite_idle(top);
      return 0;
    }
  }
  return lite_fail(t, "write", offset);
}

extern "C" int tsim_reg_read(tsim *t, uint32_t offset, uint32_t *value) {
  Vloom_top *top = t->top;
  *value = 0xFFFFFFFFu;
  top->s_axil_araddr_i = offset & 0xFFF;
  top->s_axil_arvalid_i = 1;
  top->s_axil_rready_i = 1;
  for (uint32_t n = 0; n < kLiteTimeout; n++) {
    cycle(t);
    if (top->s_axil_arvalid_i && t->lite.arready) top->s_axil_arvalid_i = 0;
    if (t->lite.rvalid) {
      if (t->lite.rresp != 0) return lite_fail(t, "read", offset);
      *value = t->lite.rdata;
      lite_idle(top);
      return 0;
    }
  }
  return lite_fail(t, "read", offset);
}

// ---- life cycle ----

extern "C" void tsim_options_default(tsim_options *o) {
  memset(o, 0, sizeof *o);
  o->dram_latency = 32;
  o->dram_bytes_per_cycle = 8;
  o->dram_outstanding = 8;
  o->dram_size = 256ull << 20;
  o->dram_seed = 1;
  o->progress_interval = 1000000;
}

extern "C" uint32_t tsim_api_version(void) { return TSIM_API_VERSION; }
extern "C" const char *tsim_config_name(void) { return TSIM_STR(TSIM_CONFIG); }
extern "C" uint32_t tsim_config_hash(void) { return TSIM_CONFIG_HASH; }
extern "C" int tsim_has_trace(void) { return VM_TRACE; }

extern "C" void tsim_hard_reset(tsim *t) {
  lite_idle(t->top);
  t->top->rst_ni = 0;
  // Reset drops VALIDs mid-handshake (a stalled AR, say): that is the
  // reset's right, not a protocol violation, so the model forgets the
  // handshakes in flight at the reset edge as well as after it.
  t->dram->reset_bus();
  for (uint32_t i = 0; i < kResetCycles; i++) cycle(t);
  t->dram->reset_bus();
  t->top->rst_ni = 1;
  for (uint32_t i = 0; i < 4; i++) cycle(t);
}

static bool open_trace(tsim *t, const char *path, char *msg, size_t n) {
#if VM_TRACE
  t->fst = new VerilatedFstC;
  t->top->trace(t->fst, 99);
  t->fst->open(path);
  if (!t->fst->isOpen()) {
    snprintf(msg, n, "%s: cannot open the FST trace file", path);
    return false;
  }
  return true;
#else
  snprintf(msg, n,
           "%s: this tsim library was built without tracing; build the tracing one with "
           "`make tsim-trace CONFIG=%s`",
           path, TSIM_STR(TSIM_CONFIG));
  return false;
#endif
}

extern "C" tsim *tsim_create(const tsim_options *o, char *msg, size_t msg_size) {
  tsim_options def;
  if (!o) {
    tsim_options_default(&def);
    o = &def;
  }
  tsim *t = new tsim();
  t->opt = *o;
  if (!t->opt.progress_interval) t->opt.progress_interval = 1000000;
  t->next_progress = t->opt.progress_interval;
  t->ctx = new VerilatedContext;
  t->ctx->traceEverOn(o->trace_path != nullptr);
  t->top = new Vloom_top(t->ctx, "loom_top");
  dram_params p{kDramBase, o->dram_size, bus_bytes(t->top), o->dram_latency, o->dram_bytes_per_cycle,
                o->dram_outstanding, (int)o->dram_reorder, o->dram_seed};
  std::string err;
  t->dram = new DramModel(p, &err);
  if (err.empty() && o->axi_log_path && !(t->axi_log = fopen(o->axi_log_path, "w")))
    err = std::string(o->axi_log_path) + ": cannot open the AXI log";
  if (t->axi_log) t->dram->log_to(t->axi_log);
  if (!err.empty() || (o->trace_path && !open_trace(t, o->trace_path, msg, msg_size))) {
    if (!err.empty()) snprintf(msg, msg_size, "tsim: %s", err.c_str());
    tsim_destroy(t);
    return nullptr;
  }
  tsim_hard_reset(t);
  return t;
}

extern "C" void tsim_destroy(tsim *t) {
  if (!t) return;
#if VM_TRACE
  if (t->fst) {
    t->fst->close();
    delete t->fst;
  }
#endif
  // The probe's public signals give the model scopes, and a scope erases
  // itself from the calling thread's context, not from its model's: make
  // that this instance's context (another instance's may already be gone),
  // and leave no pointer to it behind.
  Verilated::threadContextp(t->ctx);
  t->top->final();
  delete t->top;
  delete t->ctx;
  Verilated::threadContextp(nullptr);
  delete t->dram;
  if (t->axi_log) fclose(t->axi_log);
  delete t;
}

// ---- time ----

extern "C" void tsim_step(tsim *t, uint64_t cycles) {
  for (uint64_t i = 0; i < cycles; i++) cycle(t);
}

static bool irq_seen(const tsim *t) { return t->top->interrupt_o && !t->irq_dropped; }

extern "C" int tsim_wait_interrupt(tsim *t, uint64_t max_cycles) {
  for (uint64_t i = 0; i < max_cycles && !irq_seen(t); i++) cycle(t);
  return irq_seen(t) ? 1 : 0;
}

extern "C" int tsim_interrupt(const tsim *t) { return irq_seen(t) ? 1 : 0; }
extern "C" uint64_t tsim_cycles(const tsim *t) { return t->cycles; }

// ---- DRAM, windows, faults, violations ----

extern "C" uint8_t *tsim_dram(tsim *t, uint64_t *size) {
  if (size) *size = t->dram->params().size;
  return t->dram->mem();
}

extern "C" uint64_t tsim_dram_base(const tsim *t) { return t->dram->params().base; }

extern "C" void tsim_dram_stats(const tsim *t, struct tsim_dram_stats *s) {
  const dram_stats &d = t->dram->stats();
  s->read_bursts = d.read_bursts;
  s->read_beats = d.read_beats;
  s->write_bursts = d.write_bursts;
  s->write_beats = d.write_beats;
  s->max_reads_in_flight = d.max_reads_in_flight;
  s->max_writes_in_flight = d.max_writes_in_flight;
  s->violations = d.violations;
}

extern "C" void tsim_window_clear(tsim *t) { t->dram->window_clear(); }

extern "C" int tsim_window_add(tsim *t, uint64_t bus_addr, uint64_t size) {
  if (size == 0 || bus_addr + size < bus_addr) return -1;
  t->dram->window_add(bus_addr, size);
  return 0;
}

extern "C" int tsim_fault_add(tsim *t, uint64_t bus_addr, uint64_t size, uint32_t resp, int reads,
                              int writes) {
  if (size == 0 || (resp != 2 && resp != 3)) return -1;
  t->dram->fault_add(bus_addr, size, (uint8_t)resp, reads != 0, writes != 0);
  return 0;
}

extern "C" void tsim_fault_clear(tsim *t) { t->dram->fault_clear(); }
extern "C" void tsim_fault_stall(tsim *t, uint64_t cycles) { t->dram->stall(cycles); }
extern "C" void tsim_fault_interrupt(tsim *t, int drop) { t->irq_dropped = drop != 0; }

extern "C" uint64_t tsim_violations(const tsim *t, char *first, size_t n) {
  if (first && n) snprintf(first, n, "%s", t->dram->first_violation().c_str());
  return t->dram->violation_count();
}

extern "C" void tsim_violations_clear(tsim *t) { t->dram->violations_clear(); }
