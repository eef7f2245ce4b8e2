/*
 * fsimrig.h - the rig of fsim's unit tests (tests/unit/test_fsim_*.c): one
 * simulator, one instruction stream, eight segments.
 *
 * A test builds its stream in r->s with the stream helpers (stream.h),
 * fills segments with rig_segment(), and runs the stream as one job with
 * rig_run(), which empties the stream for the next job; fsim's SRAM, read
 * and written through rig_sram(), persists from job to job as on the
 * hardware.  Every rig carries its own fixed-seed random generator, so a
 * failing test reproduces.  Failures go through cmocka: a test needs no
 * error handling of its own.
 */
#ifndef LOOM_TEST_FSIMRIG_H
#define LOOM_TEST_FSIMRIG_H

#include <stddef.h>
#include <stdint.h>

#include "loom/hwconfig.h"
#include "sim/fsim/fsim.h"
#include "stream.h"

/* The configurations each test runs on. */
static const char *const configs[] = {"tiny", "default"};
#define NCONFIGS (sizeof configs / sizeof configs[0])

struct rig {
  const struct loom_hw_config *cfg;
  struct fsim *sim;
  struct stream s;
  struct fsim_job job;
  struct fsim_result res;
  uint64_t rng;
  uint32_t lanes; /* batch x block_out: int32 per ACC row */
};

/* ---- the rig ---- */

/* A rig for the configuration named `config`. */
struct rig *rig_new(const char *config);
void rig_free(struct rig *r);

/* (Re)allocates segment i with `bytes` bytes of `fill`. */
uint8_t *rig_segment(struct rig *r, int i, size_t bytes, uint8_t fill);

/* Runs the stream as one job (and empties it for the next); the error. */
uint32_t rig_run(struct rig *r);
/* The same, and the job must succeed. */
void rig_run_ok(struct rig *r);
/* The same, and the job must stop with `code` at `insn`, with `text` in
 * the message. */
void rig_expect_error(struct rig *r, uint32_t code, uint32_t insn, const char *text);

/* fsim's SRAM of `buffer` (its size in `*bytes` unless NULL). */
void *rig_sram(struct rig *r, int buffer, size_t *bytes);
/* Bytes of one row of `buffer` (ACC as int32). */
uint32_t rig_row_bytes(const struct rig *r, int buffer);

/* ---- random data, from the rig's own generator ---- */

uint32_t rig_rnd(struct rig *r);
/* Uniform in [lo, hi]. */
int32_t rig_rnd_in(struct rig *r, int32_t lo, int32_t hi);
/* Edge values (0, +-1, the int8 and int32 limits, ...), small or any. */
int32_t rig_rnd_edge32(struct rig *r);
void rig_fill_random(struct rig *r, uint8_t *p, size_t n);

/* ---- loading SRAM through the stream, and checking ACC ---- */

/* Emits LOAD ACC of `rows` rows of vals[] (int32) from segment `seg`. */
void rig_load_acc_rows(struct rig *r, int seg, uint32_t sram_row, const int32_t *vals,
                       uint32_t rows);
/* Emits LOAD of `rows` rows of an int8 buffer from `bytes`. */
void rig_load_bytes(struct rig *r, int seg, uint32_t buffer, uint32_t sram_row,
                    const uint8_t *bytes, uint32_t rows);
/* Emits LOAD UOP of a micro-op table from segment `seg` to UOP row 0; or of
 * n (acc, inp, wgt) triples. */
void rig_load_uop_table(struct rig *r, int seg, const struct stream_uops *u);
void rig_load_uops(struct rig *r, int seg, const uint32_t (*t)[3], uint32_t n);

/* ACC rows [0, rows) must hold want[], and OUT rows their sat8. */
void rig_check_acc(struct rig *r, const int32_t *want, uint32_t rows);

#endif
