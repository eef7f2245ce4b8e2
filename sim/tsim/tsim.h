/*
 * tsim.h - C API of the Verilator RTL simulator (build/tsim/<config>/libloom_tsim.so).
 *
 * One shared library per hardware configuration holds the Verilated
 * `loom_top`, a thin clocking harness and the DRAM model (an AXI4 slave with
 * latency, bandwidth and outstanding-request limits; sim/tsim/dram_model.h).
 * Everything a job needs goes through this API:
 *
 *   registers  tsim_reg_read/tsim_reg_write run one AXI4-Lite transaction,
 *              clocking the model until it completes;
 *   time       tsim_step lets cycles pass; tsim_cycles counts them;
 *   memory     tsim_dram is the host view of DRAM, which the accelerator sees
 *              at bus address tsim_dram_base() (above 4 GiB on purpose, so
 *              64-bit addressing is exercised);
 *   checking   allowed windows, fault injection and violations (below).
 *
 * libloom's `tsim` backend dlopen()s the library and looks the functions up
 * by name; tests may also link it directly.  TSIM_API_VERSION changes
 * whenever a declaration here does, and the backend refuses a mismatch.
 * Every instance is independent (its own VerilatedContext); the library
 * keeps no global mutable state.  Functions never abort on bad arguments:
 * they return -1 (or NULL) and, for tsim_create, say why in `msg`.
 */
#ifndef LOOM_TSIM_H
#define LOOM_TSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TSIM_API_VERSION 2

struct tsim;

/* Called every `progress_interval` cycles with the cycle count so far. */
typedef void (*tsim_progress_fn)(void *user, uint64_t cycles);

struct tsim_options {
  uint32_t dram_latency;         /* cycles from AR to first beat / WLAST to B (default 32) */
  uint32_t dram_bytes_per_cycle; /* shared read+write bandwidth (default 8) */
  uint32_t dram_outstanding;     /* bursts in flight per direction (default 8) */
  uint64_t dram_size;            /* bytes of DRAM (default 256 MiB) */
  uint32_t dram_reorder;         /* 1: reads of different IDs may return out of order */
  uint64_t dram_seed;            /* seed of that reordering */
  const char *trace_path;        /* FST waveform file, NULL for none */
  tsim_progress_fn progress;     /* NULL for none */
  void *progress_user;
  uint64_t progress_interval;    /* cycles between calls (default 1M) */
  const char *axi_log_path;      /* log of every AXI4 handshake, NULL for none */
};

struct tsim_dram_stats {
  uint64_t read_bursts, read_beats, write_bursts, write_beats;
  uint64_t max_reads_in_flight, max_writes_in_flight;
  uint64_t violations;
};

/* The defaults above. */
void tsim_options_default(struct tsim_options *o);

/* Version of this header the library was built from (TSIM_API_VERSION). */
uint32_t tsim_api_version(void);

/* Name and hash of the configuration the library was built for, and
 * whether it was built with FST tracing. */
const char *tsim_config_name(void);
uint32_t tsim_config_hash(void);
int tsim_has_trace(void);

/* Builds the model, resets it (rst_ni low for a few cycles) and maps DRAM.
 * NULL on failure with the reason in msg. */
struct tsim *tsim_create(const struct tsim_options *o, char *msg, size_t msg_size);
void tsim_destroy(struct tsim *t);

/* One AXI4-Lite transaction.  0, or -1 when the slave did not answer
 * within 10000 cycles or answered with an error response (a violation is
 * recorded); a failed read yields 0xFFFFFFFF. */
int tsim_reg_read(struct tsim *t, uint32_t offset, uint32_t *value);
int tsim_reg_write(struct tsim *t, uint32_t offset, uint32_t value);

/* Lets `cycles` clock cycles pass. */
void tsim_step(struct tsim *t, uint64_t cycles);

/* Steps until interrupt_o is high or `max_cycles` have passed; returns 1 if
 * the interrupt is high. */
int tsim_wait_interrupt(struct tsim *t, uint64_t max_cycles);

/* Level of interrupt_o now. */
int tsim_interrupt(const struct tsim *t);

/* Cycles since tsim_create. */
uint64_t tsim_cycles(const struct tsim *t);

/* Pulses rst_ni (hardware reset of the accelerator and the DRAM model's
 * transactions in flight; DRAM contents are kept). */
void tsim_hard_reset(struct tsim *t);

/* ---- DRAM ---- */

uint8_t *tsim_dram(struct tsim *t, uint64_t *size);
uint64_t tsim_dram_base(const struct tsim *t);
void tsim_dram_stats(const struct tsim *t, struct tsim_dram_stats *s);

/* Allowed windows: once any is set, every read or write outside their union
 * is a violation (reads are checked by bus word, writes by strobed byte). */
void tsim_window_clear(struct tsim *t);
int tsim_window_add(struct tsim *t, uint64_t bus_addr, uint64_t size);

/* Fault injection: accesses overlapping [bus_addr, bus_addr+size) answer
 * `resp` (2 SLVERR, 3 DECERR) on reads and/or writes; writes there are
 * dropped.  tsim_fault_stall: the DRAM accepts and returns nothing for the
 * next `cycles` cycles. */
int tsim_fault_add(struct tsim *t, uint64_t bus_addr, uint64_t size, uint32_t resp, int reads,
                   int writes);
void tsim_fault_clear(struct tsim *t);
void tsim_fault_stall(struct tsim *t, uint64_t cycles);

/* A dropped interrupt: with drop != 0, interrupt_o no longer reaches the
 * CPU (tsim_wait_interrupt and tsim_interrupt see it low) until called
 * again with 0; the RTL itself is unaffected. */
void tsim_fault_interrupt(struct tsim *t, int drop);

/* AXI protocol violations and accesses outside the windows seen so far:
 * returns how many, and copies the first one's description into `first`. */
uint64_t tsim_violations(const struct tsim *t, char *first, size_t n);
void tsim_violations_clear(struct tsim *t);

/* ---- timelines (docs/profiling.md) ----
 *
 * While recording is on, the harness samples the RTL's timeline probe
 * (probe_ev, probe_idx in loom_top.v: the signals the performance counters
 * count) every cycle of a job and turns each run of cycles into a slice:
 * one per instruction per module, one per run of token waits, one per run
 * of DRAM waits.  Times count the job's cycles from 0, the first cycle
 * CYCLES counts.  Recording off costs one test per cycle. */
enum tsim_slice_kind { TSIM_SLICE_INSN, TSIM_SLICE_TOKEN_WAIT, TSIM_SLICE_MEM_WAIT };

struct tsim_slice {
  uint64_t begin, end; /* [begin, end) in cycles of the job */
  uint32_t insn;       /* stream index of the instruction */
  uint8_t module;      /* 0 fetch, 1 load, 2 compute, 3 store */
  uint8_t kind;        /* enum tsim_slice_kind */
  uint16_t reserved;
};

/* Starts (on != 0) or stops recording from the next job on.  -1 when the
 * RTL of this library has no timeline probe (the register-only stub). */
int tsim_timeline_record(struct tsim *t, int on);

/* The slices of the last (or current) job, sorted by begin (then module,
 * then kind, so an instruction precedes the waits inside it); slices still
 * open end now.  Valid until the next call into the library. */
const struct tsim_slice *tsim_timeline(struct tsim *t, size_t *count);

#ifdef __cplusplus
}
#endif
#endif
