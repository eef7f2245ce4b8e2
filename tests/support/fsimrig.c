/*
 * fsimrig.c - the rig of fsim's unit tests (fsimrig.h).
 */
#include "fsimrig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "filebytes.h"
#include "ref_ops.h"

/* ---- the rig ---- */

struct rig *rig_new(const char *config) {
  struct rig *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->cfg = loom_hw_config_by_name(config);
  assert_non_null(r->cfg);
  r->sim = fsim_create(r->cfg);
  assert_non_null(r->sim);
  stream_init(&r->s);
  r->rng = 0x1234567u;
  r->lanes = (uint32_t)(r->cfg->batch * r->cfg->block_out);
  return r;
}

void rig_free(struct rig *r) {
  for (int i = 0; i < LOOM_NUM_SEGMENTS; i++) free(r->job.seg[i].data);
  stream_free(&r->s);
  fsim_destroy(r->sim);
  free(r);
}

uint8_t *rig_segment(struct rig *r, int i, size_t bytes, uint8_t fill) {
  free(r->job.seg[i].data);
  r->job.seg[i].data = malloc(bytes ? bytes : 1);
  assert_non_null(r->job.seg[i].data);
  memset(r->job.seg[i].data, fill, bytes);
  r->job.seg[i].size = bytes;
  return r->job.seg[i].data;
}

uint32_t rig_run(struct rig *r) {
  if (r->s.error) fail_msg("stream field %s does not encode", r->s.error);
  r->job.insns = r->s.bytes;
  r->job.insn_count = r->s.count;
  uint32_t err = fsim_run(r->sim, &r->job, &r->res);
  stream_free(&r->s);
  stream_init(&r->s);
  return err;
}

void rig_run_ok(struct rig *r) {
  if (rig_run(r) != LOOM_ERR_NONE) fail_msg("%s: %s", r->cfg->name, r->res.message);
}

void rig_expect_error(struct rig *r, uint32_t code, uint32_t insn, const char *text) {
  uint32_t err = rig_run(r);
  if (err != code || r->res.err_insn != insn || !strstr(r->res.message, text))
    fail_msg("%s: got %s at insn %u (\"%s\"), want %s at insn %u with \"%s\"", r->cfg->name,
             loom_error_name(err), r->res.err_insn, r->res.message, loom_error_name(code), insn,
             text);
  assert_int_equal(r->res.error, code);
}

void *rig_sram(struct rig *r, int buffer, size_t *bytes) {
  void *p = fsim_sram(r->sim, buffer, bytes);
  assert_non_null(p);
  return p;
}

uint32_t rig_row_bytes(const struct rig *r, int buffer) {
  return loom_hw_row_bytes(r->cfg, buffer, 0);
}

/* ---- random data (a 64-bit LCG, seeded by rig_new) ---- */

uint32_t rig_rnd(struct rig *r) {
  r->rng = r->rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(r->rng >> 32);
}

int32_t rig_rnd_in(struct rig *r, int32_t lo, int32_t hi) {
  return (int32_t)((int64_t)lo + (int64_t)(rig_rnd(r) % (uint32_t)((int64_t)hi - lo + 1)));
}

int32_t rig_rnd_edge32(struct rig *r) {
  static const int32_t edges[] = {0, 1, -1, 2, -2, 3, -3, 127, 128, -128, -129, 255, 32767,
                                  -32768, 65536, INT32_MAX, INT32_MIN, INT32_MAX - 1,
                                  INT32_MIN + 1, 1 << 30, -(1 << 30)};
  uint32_t pick = rig_rnd(r) % 3;
  if (pick == 0) return edges[rig_rnd(r) % (sizeof edges / sizeof edges[0])];
  if (pick == 1) return rig_rnd_in(r, -300, 300);
  return (int32_t)rig_rnd(r);
}

void rig_fill_random(struct rig *r, uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)rig_rnd(r);
}

/* ---- loading SRAM through the stream, and checking ACC ---- */

void rig_load_acc_rows(struct rig *r, int seg, uint32_t sram_row, const int32_t *vals,
                       uint32_t rows) {
  uint8_t *d = rig_segment(r, seg, (size_t)rows * r->lanes * 4, 0);
  for (size_t i = 0; i < (size_t)rows * r->lanes; i++) wr32(d + 4 * i, (uint32_t)vals[i]);
  stream_load(&r->s, 0, LOOM_BUF_ACC, sram_row, (uint32_t)seg, 0, rows);
}

void rig_load_bytes(struct rig *r, int seg, uint32_t buffer, uint32_t sram_row,
                    const uint8_t *bytes, uint32_t rows) {
  uint32_t rb = loom_hw_row_bytes(r->cfg, (int)buffer, 0);
  memcpy(rig_segment(r, seg, (size_t)rows * rb, 0), bytes, (size_t)rows * rb);
  stream_load(&r->s, 0, buffer, sram_row, (uint32_t)seg, 0, rows);
}

void rig_load_uop_table(struct rig *r, int seg, const struct stream_uops *u) {
  assert_int_equal(u->error, 0);
  rig_load_bytes(r, seg, LOOM_BUF_UOP, 0, u->bytes, u->count);
}

void rig_load_uops(struct rig *r, int seg, const uint32_t (*t)[3], uint32_t n) {
  struct stream_uops u;
  stream_uops_init(&u);
  for (uint32_t i = 0; i < n; i++) stream_uops_add(&u, t[i][0], t[i][1], t[i][2]);
  rig_load_uop_table(r, seg, &u);
  stream_uops_free(&u);
}

/* OUT must be sat8(ACC) on rows [0, rows). */
static void check_out_mirrors_acc(struct rig *r, uint32_t rows) {
  const int32_t *acc = rig_sram(r, LOOM_BUF_ACC, NULL);
  const int8_t *out = rig_sram(r, LOOM_BUF_OUT, NULL);
  for (size_t i = 0; i < (size_t)rows * r->lanes; i++)
    if (out[i] != ref_sat8(acc[i])) fail_msg("OUT[%zu] = %d, ACC %d", i, out[i], acc[i]);
}

void rig_check_acc(struct rig *r, const int32_t *want, uint32_t rows) {
  const int32_t *acc = rig_sram(r, LOOM_BUF_ACC, NULL);
  for (size_t i = 0; i < (size_t)rows * r->lanes; i++)
    if (acc[i] != want[i])
      fail_msg("%s: ACC row %zu lane %zu = %d, want %d", r->cfg->name, i / r->lanes, i % r->lanes,
               acc[i], want[i]);
  check_out_mirrors_acc(r, rows);
}
