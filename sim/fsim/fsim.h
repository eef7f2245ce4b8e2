/*
 * fsim.h - the functional simulator: executes Loom instruction streams
 * bit-exactly per docs/isa.md.
 *
 * fsim models the three modules, their command queues and the four token
 * queues with the configuration's capacities, so it agrees with the RTL on
 * results, error codes, the failing instruction and on deadlock.  It keeps
 * its SRAM state between jobs (as the hardware does) and resets the
 * requantization registers at the start of each job.  DRAM is the caller's
 * memory: each segment is a host pointer and a size.
 */
#ifndef LOOM_FSIM_H
#define LOOM_FSIM_H

#include <stddef.h>
#include <stdint.h>

#include "loom/hwconfig.h"

struct fsim;

struct fsim_segment {
  uint8_t *data; /* host memory standing for the segment; NULL when unmapped */
  uint64_t size; /* bytes; 0 when unmapped */
};

struct fsim_job {
  const uint8_t *insns; /* insn_count x 16 bytes */
  uint32_t insn_count;
  struct fsim_segment seg[LOOM_NUM_SEGMENTS];
  /* Work budget standing in for a timeout: 0 = unlimited, otherwise the job
   * stops with LOOM_ERR_TIMEOUT at the first LOAD/STORE or micro-op that
   * would take the total past it.  Work = micro-ops of GEMM/ALU + DRAM rows
   * of LOAD/STORE (padding rows included) + 1 per other instruction; a
   * hostile but legal stream cannot hang fsim.  Bounds and index checks come
   * before the charge, so an error the hardware raises before the budget
   * runs out (SEGMENT, SRAM) is reported as that error. */
  uint64_t work_budget;
  /* Optional: called from inside the job with the work done so far (as the
   * budget counts it) every FSIM_PROGRESS_WORK units, for the progress
   * display of a long job (a 3.4 GMAC convolution takes a minute). */
  void (*progress)(void *ctx, uint64_t work);
  void *progress_ctx;
};

#define FSIM_PROGRESS_WORK (UINT64_C(1) << 18) /* a few milliseconds of fsim */

struct fsim_result {
  uint32_t error;     /* enum loom_error */
  uint32_t err_insn;  /* stream index of the failing instruction */
  uint64_t counters[LOOM_CNT_COUNT]; /* exact counters; timed ones are 0 */
  char message[512];  /* human-readable detail of the error, "" when none */
};

/* Creates a simulator for `cfg`; NULL when out of memory. */
struct fsim *fsim_create(const struct loom_hw_config *cfg);
void fsim_destroy(struct fsim *sim);

/* Runs one job to completion or error.  Returns the job's error code (also
 * in res->error).  Never aborts on a malformed stream. */
uint32_t fsim_run(struct fsim *sim, const struct fsim_job *job, struct fsim_result *res);

/* The timing model (fsim_timing.c, docs/fsim-timing.md).  Off by default.
 * When on, every job that ends without error also gets the cycle counters
 * (CYCLES, *_BUSY, *_TOKEN_STALL, *_MEM_STALL) estimated for the RTL with
 * tsim's default DRAM model.  Returns 0, or -1 when out of memory. */
int fsim_set_timing(struct fsim *sim, int on);

/* With the timing model on: the DRAM model's bytes per cycle (a power of
 * two; tsim's option bw=), instead of tsim's default 8.  -1 when the
 * timing model is off or the rate is not a power of two. */
int fsim_set_dram_bw(struct fsim *sim, uint32_t bytes_per_cycle);

/* With the timing model on: record each job's timeline (on != 0) and read
 * the last one, sorted by begin; NULL and 0 when none. */
struct loom_trace_event;
void fsim_set_trace(struct fsim *sim, int on);
const struct loom_trace_event *fsim_trace(const struct fsim *sim, size_t *count);

/* A testing aid (off by default): run the modules one instruction at a
 * time, store first, then compute, then load, instead of each as far as it
 * can go with load first.  A program whose tokens order every access gives
 * the same result either way; one that lacks a token reads data before its
 * load (or after its overwrite) in one of the two orders. */
void fsim_set_reverse_schedule(struct fsim *sim, int on);

/* Direct SRAM access for tests and debugging; NULL for a bad buffer. */
void *fsim_sram(struct fsim *sim, int buffer, size_t *bytes);

#endif
