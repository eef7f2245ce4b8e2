/*
 * test_jobmeta.c - the JOBMETA section of .loom format 1.2 (docs/format.md)
 * and what the runtime makes of it (loom_model_job_info).
 *
 * A two-job file with metadata must parse back field for field, say 1.2,
 * keep its metadata through loom_file_builder_from, and load on fsim with
 * the names and figures in loom_job_info.  Each validation rule is broken
 * on purpose, with the crc fixed up so the rule itself has to catch it, and
 * the message must name the field's file offset.  A file without JOBMETA
 * (1.0) still loads, with "job N" names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "filebytes.h"
#include "driver/core/loomfile.h"
#include "loom/isa.h"
#include "loom/loom.h"

#define NB LOOM_FILE_NO_BUFFER

/* Offset of the section table entry of `type`, or 0. */
static size_t entry_of(const uint8_t *p, uint32_t type) {
  size_t tbl = (size_t)rd64(p + LOOM_FILE_OFF_SECTION_TABLE);
  for (uint32_t i = 0; i < rd32(p + LOOM_FILE_OFF_SECTION_COUNT); i++)
    if (rd32(p + tbl + 32 * i) == type) return tbl + 32 * i;
  return 0;
}

/* Two FINISH-only jobs on the tiny config, each run by a step; with
 * metadata when `meta`. */
static uint8_t *build(int meta, size_t *n) {
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_TINY_HASH);
  assert_non_null(b);
  uint8_t code[LOOM_INSN_BYTES];
  struct loom_insn fin = {.opcode = LOOM_OP_FINISH};
  assert_int_equal(loom_insn_encode(&fin, code, NULL), 0);
  uint32_t first = loom_fb_insns(b, code, 1);
  for (uint32_t i = 0; i < 2; i++) {
    struct loom_file_job j = {.insn_first = first, .insn_count = 1, .segments = {NB, NB, NB, NB, NB, NB, NB, NB}};
    struct loom_file_step s = {.kind = LOOM_STEP_JOB, .index = i, .inputs = {NB, NB, NB, NB}, .outputs = {NB, NB}};
    assert_int_equal(loom_fb_job(b, &j), i);
    assert_int_equal(loom_fb_step(b, &s), i);
    struct loom_file_jobmeta m = {.name = loom_fb_string(b, i ? "fc1" : "conv1"),
                                  .op = loom_fb_string(b, i ? "fc" : "conv 3x3/1"),
                                  .macs = 1000 + i, .est_cycles = 2000 + i, .dma_bytes = 3000 + i,
                                  .min_bytes = 400 + i};
    if (meta) assert_int_equal(loom_fb_jobmeta(b, &m), i);
  }
  uint8_t *p = loom_file_builder_finish(b, n);
  assert_non_null(p);
  loom_file_builder_free(b);
  return p;
}

static void expect_reject(const uint8_t *p, size_t n, const char *want) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_E_FORMAT);
  if (!strstr(msg, want)) fail_msg("message '%s' lacks '%s'", msg, want);
}

static void test_round_trip(void **state) {
  (void)state;
  size_t n;
  uint8_t *p = build(1, &n);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_OK);
  assert_int_equal(f.version_minor, 2);
  assert_non_null(f.jobmeta);
  assert_string_equal(loom_file_string(&f, f.jobmeta[1].name), "fc1");
  assert_string_equal(loom_file_string(&f, f.jobmeta[0].op), "conv 3x3/1");
  assert_int_equal(f.jobmeta[1].macs, 1001);
  assert_int_equal(f.jobmeta[1].est_cycles, 2001);
  assert_int_equal(f.jobmeta[1].dma_bytes, 3001);
  assert_int_equal(f.jobmeta[1].min_bytes, 401);
  /* a builder from the file keeps it */
  struct loom_file_builder *b = loom_file_builder_from(&f);
  size_t n2;
  uint8_t *q = loom_file_builder_finish(b, &n2);
  assert_int_equal(n2, n);
  assert_memory_equal(q, p, n);
  free(q);
  loom_file_builder_free(b);
  loom_file_free(&f);
  free(p);
  /* without metadata the file stays 1.0 */
  p = build(0, &n);
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_OK);
  assert_int_equal(f.version_minor, 0);
  assert_null(f.jobmeta);
  loom_file_free(&f);
  free(p);
}

static void test_refusals(void **state) {
  (void)state;
  size_t n;
  uint8_t *p = build(1, &n);
  size_t e = entry_of(p, LOOM_SEC_JOBMETA), s = (size_t)rd64(p + e + 8), r1 = s + 48;
  char want[96];
  assert_true(e != 0);
  struct { size_t at; uint32_t v; const char *what; } cases[] = {
      {r1 + 0, 9999, "JOBMETA 1: name 9999 is not the start"},
      {r1 + 4, 0, "JOBMETA 1: op 0 is not the start"},
      {r1 + 40, 1, "JOBMETA 1: flags are not 0"},
      {r1 + 44, 7, "JOBMETA 1: reserved field is not 0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint32_t old = rd32(p + cases[i].at);
    wr32(p + cases[i].at, cases[i].v);
    fix_crc(p, n);
    snprintf(want, sizeof want, "offset 0x%zx: %s", cases[i].at, cases[i].what);
    expect_reject(p, n, want);
    wr32(p + cases[i].at, old);
  }
  /* one record short */
  wr32(p + e + 16, 48);
  fix_crc(p, n);
  snprintf(want, sizeof want, "offset 0x%zx: JOBMETA: 1 records for 2 jobs", s);
  expect_reject(p, n, want);
  wr32(p + e + 16, 96);
  /* JOBMETA in a 1.1 file */
  p[LOOM_FILE_OFF_MINOR] = 1;
  fix_crc(p, n);
  expect_reject(p, n, "type 9 (JOBMETA) needs format version 1.2, the file is 1.1");
  p[LOOM_FILE_OFF_MINOR] = 2;
  fix_crc(p, n);
  struct loom_file f;
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, NULL), LOOM_OK);
  loom_file_free(&f);
  free(p);
}

static void test_model_info(void **state) {
  (void)state;
  loom_device *dev;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_device_open("fsim", "config=tiny", &dev, msg), LOOM_OK);
  for (int meta = 0; meta < 2; meta++) {
    size_t n;
    uint8_t *p = build(meta, &n);
    loom_model *m;
    assert_int_equal(loom_model_load_memory(dev, p, n, "m.loom", &m, msg), LOOM_OK);
    assert_int_equal(loom_model_run(m, 0), LOOM_OK);
    const struct loom_job_info *ji = loom_model_job_info(m, 1);
    assert_int_equal(ji->has_meta, meta);
    assert_string_equal(ji->name, meta ? "fc1" : "job 1");
    assert_int_equal(ji->macs, meta ? 1001 : 0);
    assert_int_equal(ji->insn_count, 1);
    assert_int_equal(loom_model_step_count(m), 2);
    assert_true(loom_model_step(m, 1)->is_job);
    assert_string_equal(loom_model_step(m, 0)->name, meta ? "conv1" : "job 0");
    assert_null(loom_model_job_info(m, 2));
    size_t count = 1;
    assert_null(loom_model_job_trace(m, 0, &count));
    assert_int_equal(count, 0);
    loom_model_free(m);
    free(p);
  }
  loom_device_close(dev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_model_info),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
