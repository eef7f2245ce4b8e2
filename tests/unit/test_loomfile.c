/*
 * test_loomfile.c - the .loom reader, validator and builder.
 *
 * One sample file built with the builder exercises every record type and
 * layout; it must parse back field for field.  Then each validation rule of
 * docs/format.md is broken on purpose (with the crc fixed up afterwards, so
 * that the rule itself, not the checksum, has to catch it) and the message
 * must name the right field and offset.  Truncation at every length and a
 * seeded bit-flip loop check that nothing a fuzzer could produce crashes
 * the parser.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "filebytes.h"
#include "driver/core/asm.h"
#include "driver/core/loomfile.h"
#include "loom/isa.h"

#define NB LOOM_FILE_NO_BUFFER

/* ---- the sample file ---- */

static void encode(const struct loom_insn *in, uint8_t *out) {
  const char *bad = NULL;
  assert_int_equal(loom_insn_encode(in, out, &bad), 0);
}

static uint32_t sample_insns(struct loom_file_builder *b) {
  uint8_t code[3 * LOOM_INSN_BYTES];
  struct loom_insn load = {.opcode = LOOM_OP_LOAD, .mem = {.buffer = LOOM_BUF_UOP, .segment = 3, .y_size = 1, .x_size = 2, .x_stride = 2}};
  struct loom_insn gemm = {.opcode = LOOM_OP_GEMM, .gemm = {.uop_end = 2, .iter_out = 4, .iter_in = 1}};
  struct loom_insn fin = {.opcode = LOOM_OP_FINISH};
  encode(&load, code);
  encode(&gemm, code + 16);
  encode(&fin, code + 32);
  return loom_fb_insns(b, code, 3);
}

static void sample_buffers(struct loom_file_builder *b) {
  uint8_t weights[64], uops[8] = {1, 0, 0, 0, 2, 0, 0, 0};
  for (int i = 0; i < 64; i++) weights[i] = (uint8_t)(i * 7);
  struct loom_file_buffer w = {.name = loom_fb_string(b, "weights"), .kind = LOOM_BUFKIND_CONST, .size = 64, .align = 64};
  w.data_offset = loom_fb_data(b, weights, 64, 64);
  struct loom_file_buffer act = {.name = loom_fb_string(b, "act"), .kind = LOOM_BUFKIND_WORK, .size = 4096, .align = 4096};
  struct loom_file_buffer u = {.name = loom_fb_string(b, "uops"), .kind = LOOM_BUFKIND_CONST, .size = 8, .align = 64};
  u.data_offset = loom_fb_data(b, uops, 8, 64);
  assert_int_equal(loom_fb_buffer(b, &w), 0);
  assert_int_equal(loom_fb_buffer(b, &act), 1);
  assert_int_equal(loom_fb_buffer(b, &u), 2);
}

static void sample_tensors(struct loom_file_builder *b) {
  struct loom_file_tensor t[5] = {
      {.name = loom_fb_string(b, "x"), .role = LOOM_ROLE_INPUT, .dtype = LOOM_DT_I8, .user_dtype = LOOM_DT_I8,
       .rank = 2, .buffer = 1, .dims = {1, 8}},
      {.name = loom_fb_string(b, "y"), .role = LOOM_ROLE_OUTPUT, .dtype = LOOM_DT_I8, .user_dtype = LOOM_DT_F32,
       .rank = 2, .buffer = 1, .dims = {1, 8}, .offset = 64, .scale = 0.5f, .zero_point = -3},
      {.name = loom_fb_string(b, "feat"), .dtype = LOOM_DT_I8, .user_dtype = LOOM_DT_I8, .layout = LOOM_LAYOUT_NCHWC,
       .layout_block = 8, .rank = 4, .buffer = 1, .dims = {1, 20, 3, 3}, .offset = 256},
      {.name = loom_fb_string(b, "bias"), .dtype = LOOM_DT_I32, .user_dtype = LOOM_DT_I32, .layout = LOOM_LAYOUT_NC,
       .layout_block = 16, .rank = 2, .buffer = 1, .dims = {2, 20}, .offset = 1024},
      {.name = loom_fb_string(b, "w"), .dtype = LOOM_DT_I8, .user_dtype = LOOM_DT_I8, .rank = 2, .buffer = 0,
       .dims = {8, 8}},
  };
  for (uint32_t i = 0; i < 5; i++) assert_int_equal(loom_fb_tensor(b, &t[i]), i);
}

static void sample_program(struct loom_file_builder *b) {
  uint8_t params[16] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  struct loom_file_job j = {.insn_first = sample_insns(b), .insn_count = 3,
                            .segments = {1, 0, NB, 2, NB, NB, NB, NB}};
  assert_int_equal(loom_fb_job(b, &j), 0);
  struct loom_file_step s0 = {.kind = LOOM_STEP_JOB, .index = 0, .inputs = {NB, NB, NB, NB}, .outputs = {NB, NB}};
  struct loom_file_step s1 = {.kind = LOOM_STEP_HOST, .index = 7, .inputs = {1, NB, 3, NB}, .outputs = {0, NB}};
  s1.param_offset = loom_fb_data(b, params, sizeof params, 8);
  s1.param_size = sizeof params;
  assert_int_equal(loom_fb_step(b, &s0), 0);
  assert_int_equal(loom_fb_step(b, &s1), 1);
}

static struct loom_file_builder *sample_builder(void) {
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_TINY_HASH);
  assert_non_null(b);
  sample_buffers(b);
  sample_tensors(b);
  sample_program(b);
  return b;
}

static uint8_t *sample(size_t *n) {
  struct loom_file_builder *b = sample_builder();
  uint8_t *p = loom_file_builder_finish(b, n);
  assert_non_null(p);
  loom_file_builder_free(b);
  return p;
}

/* ---- byte poking ---- */


/* File offset of field `field` of record `i` of a section. */
static size_t rec(const uint8_t *p, uint32_t type, uint32_t i, size_t field) {
  return section_offset(p, type) + i * loom_section_entry_size(type) + field;
}

/* Parses and expects a refusal whose message contains each needle. */
static void expect_reject_n(const uint8_t *p, size_t n, const char *const *needles) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX] = "";
  loom_status st = loom_file_parse(p, n, "m.loom", &f, msg);
  if (st == LOOM_OK) {
    loom_file_free(&f);
    fail_msg("accepted; expected: %s", needles[0]);
  }
  assert_int_equal(st, LOOM_E_FORMAT);
  for (; *needles; needles++)
    if (!strstr(msg, *needles)) fail_msg("message '%s' lacks '%s'", msg, *needles);
}

#define expect_reject(p, n, ...) expect_reject_n(p, n, (const char *const[]){__VA_ARGS__, NULL})

/* ---- round trip ---- */

static void test_roundtrip(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_OK);
  assert_int_equal(f.version_major, 1);
  assert_int_equal(f.version_minor, 0);
  assert_int_equal(f.config_hash, LOOM_CONFIG_TINY_HASH);
  assert_int_equal(f.isa_version, LOOM_ISA_VERSION);
  assert_int_equal(f.file_size, n);
  assert_int_equal(f.insn_count, 3);
  assert_int_equal(f.buffer_count, 3);
  assert_int_equal(f.tensor_count, 5);
  assert_int_equal(f.job_count, 1);
  assert_int_equal(f.step_count, 2);
  assert_string_equal(loom_file_string(&f, f.buffers[0].name), "weights");
  assert_string_equal(loom_file_string(&f, f.buffers[1].name), "act");
  assert_int_equal(f.buffers[1].kind, LOOM_BUFKIND_WORK);
  assert_int_equal(f.buffers[1].size, 4096);
  assert_int_equal(f.buffers[1].align, 4096);
  for (int i = 0; i < 64; i++) assert_int_equal(f.data[f.buffers[0].data_offset + i], (uint8_t)(i * 7));
  assert_int_equal(f.data[f.buffers[2].data_offset + 4], 2);
  const struct loom_file_tensor *y = &f.tensors[1];
  assert_string_equal(loom_file_string(&f, y->name), "y");
  assert_int_equal(y->role, LOOM_ROLE_OUTPUT);
  assert_int_equal(y->user_dtype, LOOM_DT_F32);
  assert_true(y->scale == 0.5f);
  assert_int_equal(y->zero_point, -3);
  assert_int_equal(y->offset, 64);
  assert_int_equal(y->bytes, 8);
  assert_int_equal(f.tensors[2].bytes, 1 * 3 * 3 * 3 * 8);
  assert_int_equal(f.tensors[3].bytes, 2 * 2 * 16 * 4);
  assert_int_equal(f.tensors[2].dims[1], 20);
  assert_int_equal(f.tensors[2].dims[4], 0);
  assert_int_equal(f.jobs[0].insn_count, 3);
  assert_int_equal(f.jobs[0].segments[3], 2);
  assert_int_equal(f.jobs[0].segments[2], NB);
  assert_int_equal(f.steps[1].kind, LOOM_STEP_HOST);
  assert_int_equal(f.steps[1].index, 7);
  assert_int_equal(f.steps[1].inputs[2], 3);
  assert_int_equal(f.steps[1].param_size, 16);
  assert_int_equal(f.data[f.steps[1].param_offset], 9);
  struct loom_insn d;
  assert_int_equal(loom_insn_decode(f.insns + 16, &d, NULL), LOOM_ERR_NONE);
  assert_int_equal(d.opcode, LOOM_OP_GEMM);
  assert_int_equal(d.gemm.iter_out, 4);
  assert_int_equal(loom_file_check_insns(&f, "m.loom", msg), LOOM_OK);
  loom_file_free(&f);
  free(p);
}

static void test_builder_write_and_read(void **state) {
  char path[] = "/tmp/test_loomfile_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  struct loom_file_builder *b = sample_builder();
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_builder_write(b, path, msg), LOOM_OK);
  struct loom_file f;
  assert_int_equal(loom_file_read(path, &f, msg), LOOM_OK);
  assert_int_equal(f.tensor_count, 5);
  loom_file_free(&f);
  /* an invalid record is refused before anything is written */
  struct loom_file_tensor bad = {.name = loom_fb_string(b, "bad"), .dtype = LOOM_DT_I8, .user_dtype = LOOM_DT_I8,
                                 .rank = 1, .buffer = 9, .dims = {4}};
  loom_fb_tensor(b, &bad);
  assert_int_equal(loom_file_builder_write(b, path, msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "refusing to write an invalid file"));
  assert_non_null(strstr(msg, "tensor 5 'bad': buffer 9 is not a buffer index"));
  loom_file_builder_free(b);
  unlink(path);
  assert_int_equal(loom_file_read(path, &f, msg), LOOM_E_NOTFOUND);
}

static void test_strings_interned(void **state) {
  struct loom_file_builder *b = loom_file_builder_new(0);
  uint32_t a = loom_fb_string(b, "alpha"), c = loom_fb_string(b, "beta");
  assert_int_equal(loom_fb_string(b, ""), 0);
  assert_int_equal(a, 1);
  assert_int_equal(loom_fb_string(b, "alpha"), a);
  char name[32];
  for (int i = 0; i < 1000; i++) snprintf(name, sizeof name, "n%d", i), loom_fb_string(b, name);
  assert_int_equal(loom_fb_string(b, "beta"), c);
  assert_int_equal(loom_fb_string(b, "n500"), loom_fb_string(b, "n500"));
  loom_file_builder_free(b);
}

static void test_tensor_bytes(void **state) {
  struct loom_file_tensor t = {.dtype = LOOM_DT_F32, .rank = 3, .dims = {2, 3, 4}};
  assert_int_equal(loom_file_tensor_bytes(&t), 96);
  t.rank = 0;
  assert_int_equal(loom_file_tensor_bytes(&t), 4);
  t = (struct loom_file_tensor){.dtype = LOOM_DT_I8, .layout = LOOM_LAYOUT_NCHWC, .layout_block = 16, .rank = 4,
                                .dims = {2, 17, 5, 7}};
  assert_int_equal(loom_file_tensor_bytes(&t), 2 * 2 * 5 * 7 * 16);
  t.rank = 3;
  assert_int_equal(loom_file_tensor_bytes(&t), 0);
  t = (struct loom_file_tensor){.dtype = LOOM_DT_I32, .layout = LOOM_LAYOUT_NC, .layout_block = 8, .rank = 2,
                                .dims = {3, 8}};
  assert_int_equal(loom_file_tensor_bytes(&t), 3 * 8 * 4);
  t = (struct loom_file_tensor){.dtype = LOOM_DT_I8, .rank = 3, .dims = {INT64_C(1) << 40, 1 << 20, 1 << 10}};
  assert_int_equal(loom_file_tensor_bytes(&t), 0);
  t.dims[1] = -1;
  assert_int_equal(loom_file_tensor_bytes(&t), 0);
}

/* ---- refusals ---- */

static void test_truncated_every_length(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  for (size_t len = 0; len < n; len++) {
    uint8_t *q = malloc(len ? len : 1);
    memcpy(q, p, len);
    expect_reject(q, len, len < 64 ? "shorter than the 64-byte header" : "file_size");
    free(q);
  }
  free(p);
}

static void test_header(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  p[1] ^= 1;
  expect_reject(p, n, "m.loom: offset 0x0: not a .loom file (bad magic)");
  p[1] ^= 1;
  p[8] = 2;
  expect_reject(p, n, "m.loom: offset 0x8: format version 2.0 is not supported");
  p[8] = 1;
  p[10] = 9; /* a newer minor version is accepted (minor is outside the crc) */
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_OK);
  assert_int_equal(f.version_minor, 9);
  loom_file_free(&f);
  p[10] = 0;
  p[12] = 65;
  expect_reject(p, n, "offset 0xc: header_size 65 is not 64");
  p[12] = 64;
  wr64(p + 16, n + 8);
  expect_reject(p, n, "offset 0x10: file_size ", "does not match the file's");
  wr64(p + 16, n);
  p[n - 1] ^= 0x40;
  expect_reject(p, n, "m.loom: offset 0x18: crc32 0x", "does not match the contents (0x");
  p[n - 1] ^= 0x40;
  wr32(p + 32, 2);
  fix_crc(p, n);
  expect_reject(p, n, "offset 0x20: isa_version 2 is not supported");
  wr32(p + 32, 1);
  wr32(p + 48, 4);
  fix_crc(p, n);
  expect_reject(p, n, "offset 0x30: flags 0x4");
  wr32(p + 48, 0);
  p[60] = 1;
  fix_crc(p, n);
  expect_reject(p, n, "offset 0x3c: reserved header byte is 0x01, not 0");
  free(p);
}

static void test_section_table(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  wr32(p + 36, 65);
  fix_crc(p, n);
  expect_reject(p, n, "offset 0x24: section_count 65 exceeds 64");
  wr32(p + 36, 7);
  wr64(p + 40, 68);
  fix_crc(p, n);
  expect_reject(p, n, "offset 0x28: section_table_offset 0x44 is not 8-byte aligned");
  wr64(p + 40, 32);
  fix_crc(p, n);
  expect_reject(p, n, "section_table_offset 0x20 overlaps the header");
  wr64(p + 40, n - 64);
  fix_crc(p, n);
  expect_reject(p, n, "section table (7 entries at", "extends past the end of the file");
  free(p);
}

static void test_section_bounds(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  size_t e = section_entry(p, LOOM_SEC_DATA);
  uint64_t off = rd64(p + e + 8);
  char want[64];
  snprintf(want, sizeof want, "offset 0x%zx: section 2 (DATA): offset", e + 8);
  wr64(p + e + 8, n);
  fix_crc(p, n);
  expect_reject(p, n, want, "exceeds the file");
  wr64(p + e + 8, off);
  wr64(p + e + 16, UINT64_MAX - 7); /* offset + size overflows */
  fix_crc(p, n);
  expect_reject(p, n, "section 2 (DATA)", "exceeds the file");
  wr64(p + e + 16, 8);
  wr64(p + e + 8, off + 4);
  fix_crc(p, n);
  expect_reject(p, n, "section 2 (DATA): offset", "is not 8-byte aligned");
  wr64(p + e + 8, 64);
  fix_crc(p, n);
  expect_reject(p, n, "overlaps the header or the section table (which end at 0x120)");
  free(p);
}

static void test_section_overlap_and_duplicates(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  size_t t = section_entry(p, LOOM_SEC_TENSORS);
  wr64(p + t + 8, section_offset(p, LOOM_SEC_BUFFERS));
  wr64(p + t + 16, 104);
  fix_crc(p, n);
  expect_reject(p, n, "section 4 (TENSORS) overlaps section 3 (BUFFERS)");
  free(p);
  p = sample(&n);
  wr32(p + section_entry(p, LOOM_SEC_STEPS), LOOM_SEC_JOBS);
  fix_crc(p, n);
  expect_reject(p, n, "section 6: a second JOBS section (type 6; the first is section 5)");
  free(p);
  p = sample(&n);
  wr32(p + section_entry(p, LOOM_SEC_STEPS), 42);
  fix_crc(p, n);
  expect_reject(p, n, "section 6: type 42 is not defined");
  p[10] = 1; /* from a newer minor version: skipped */
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_OK);
  assert_int_equal(f.step_count, 0);
  loom_file_free(&f);
  free(p);
  p = sample(&n);
  wr32(p + section_entry(p, LOOM_SEC_STRTAB), 42);
  p[10] = 1;
  fix_crc(p, n);
  expect_reject(p, n, "offset 0x24: the file has no STRTAB section");
  free(p);
}

static void test_section_records(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  size_t e = section_entry(p, LOOM_SEC_TENSORS);
  wr32(p + e + 24, 96);
  fix_crc(p, n);
  expect_reject(p, n, "section 4 (TENSORS): entry_size 96, expected 104");
  wr32(p + e + 24, 104);
  wr64(p + e + 16, rd64(p + e + 16) - 8);
  fix_crc(p, n);
  expect_reject(p, n, "section 4 (TENSORS): size 512 is not a multiple of the 104-byte record");
  wr64(p + e + 16, rd64(p + e + 16) + 8);
  wr32(p + e + 28, 1);
  fix_crc(p, n);
  expect_reject(p, n, "section 4 (TENSORS): reserved field is not 0");
  wr32(p + e + 28, 0);
  wr32(p + e + 4, 1);
  fix_crc(p, n);
  expect_reject(p, n, "section 4 (TENSORS): flags are not 0");
  free(p);
}

static size_t strtab_last(const uint8_t *p) {
  size_t e = section_entry(p, LOOM_SEC_STRTAB);
  return (size_t)(rd64(p + e + 8) + rd64(p + e + 16) - 1);
}
static size_t strtab_first(const uint8_t *p) { return section_offset(p, LOOM_SEC_STRTAB); }

static void test_strings(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  p[strtab_last(p)] = 'z';
  fix_crc(p, n);
  expect_reject(p, n, "STRTAB does not end with a NUL byte");
  free(p);
  p = sample(&n);
  p[strtab_first(p)] = 'z';
  fix_crc(p, n);
  expect_reject(p, n, "STRTAB does not start with a NUL byte");
  free(p);
  p = sample(&n);
  wr32(p + rec(p, LOOM_SEC_BUFFERS, 0, 0), 2); /* inside "weights" */
  fix_crc(p, n);
  char want[96];
  snprintf(want, sizeof want, "offset 0x%zx: buffer 0: name offset 2 is not the start", rec(p, LOOM_SEC_BUFFERS, 0, 0));
  expect_reject(p, n, want);
  wr32(p + rec(p, LOOM_SEC_BUFFERS, 0, 0), 100000);
  fix_crc(p, n);
  expect_reject(p, n, "buffer 0: name offset 100000 is not the start");
  wr32(p + rec(p, LOOM_SEC_BUFFERS, 0, 0), 0);
  fix_crc(p, n);
  expect_reject(p, n, "buffer 0: name offset 0 is not the start of a non-empty string");
  free(p);
  p = sample(&n);
  wr32(p + rec(p, LOOM_SEC_TENSORS, 1, 0), rd32(p + rec(p, LOOM_SEC_TENSORS, 0, 0)));
  fix_crc(p, n);
  expect_reject(p, n, "tensor 1: name 'x' is already used by tensor 0");
  free(p);
}

static void test_buffers(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  size_t b0 = rec(p, LOOM_SEC_BUFFERS, 0, 0);
  uint64_t dsize = rd64(p + section_entry(p, LOOM_SEC_DATA) + 16);
  char want[128];
  wr64(p + b0 + 16, dsize - 32);
  fix_crc(p, n);
  snprintf(want, sizeof want, "offset 0x%zx: buffer 0 'weights': data [%llu, +64) is outside DATA (%llu bytes)",
           b0 + 16, (unsigned long long)(dsize - 32), (unsigned long long)dsize);
  expect_reject(p, n, want);
  wr64(p + b0 + 16, UINT64_MAX - 8);
  fix_crc(p, n);
  expect_reject(p, n, "buffer 0 'weights': data [", "is outside DATA");
  wr64(p + b0 + 16, 0);
  wr32(p + b0 + 24, 96);
  fix_crc(p, n);
  expect_reject(p, n, "buffer 0 'weights': align 96 is not a power of two >= 64");
  wr32(p + b0 + 24, 32);
  fix_crc(p, n);
  expect_reject(p, n, "align 32 is not a power of two >= 64");
  wr32(p + b0 + 24, 64);
  wr32(p + b0 + 28, 1);
  fix_crc(p, n);
  expect_reject(p, n, "buffer 0 'weights': reserved field is 1, not 0");
  wr32(p + b0 + 28, 0);
  wr32(p + b0 + 4, 2);
  fix_crc(p, n);
  expect_reject(p, n, "buffer 0 'weights': kind 2 is not defined");
  wr32(p + b0 + 4, 0);
  wr64(p + b0 + 8, 0);
  fix_crc(p, n);
  expect_reject(p, n, "buffer 0 'weights': size 0 is not in 1..");
  free(p);
  p = sample(&n);
  wr64(p + rec(p, LOOM_SEC_BUFFERS, 1, 16), 64);
  fix_crc(p, n);
  expect_reject(p, n, "buffer 1 'act': data_offset 64 of a work buffer is not 0");
  free(p);
}

static void test_tensors(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  size_t t0 = rec(p, LOOM_SEC_TENSORS, 0, 0), t1 = rec(p, LOOM_SEC_TENSORS, 1, 0);
  char want[128];
  wr64(p + t0 + 40, (uint64_t)-3);
  fix_crc(p, n);
  snprintf(want, sizeof want, "m.loom: offset 0x%zx: tensor 0 'x': dims[1] = -3 is not positive", t0 + 40);
  expect_reject(p, n, want);
  wr64(p + t0 + 40, 8);
  wr64(p + t0 + 48, 1);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 0 'x': dims[2] = 1 is beyond rank 2 and not 0");
  wr64(p + t0 + 48, 0);
  wr64(p + t0 + 88, 9);
  fix_crc(p, n);
  snprintf(want, sizeof want, "offset 0x%zx: tensor 0 'x': bytes 9 does not match dtype, layout and dims (8)", t0 + 88);
  expect_reject(p, n, want);
  wr64(p + t0 + 88, 8);
  wr64(p + t0 + 80, 4090);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 0 'x': offset 4090 + bytes 8 exceeds its buffer (4096 bytes)");
  wr64(p + t0 + 80, UINT64_MAX - 2);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 0 'x': offset", "exceeds its buffer");
  wr64(p + t0 + 80, 0);
  wr32(p + t0 + 24, 7);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 0 'x': rank 7 exceeds 6");
  wr32(p + t0 + 24, 2);
  wr32(p + t0 + 28, 3);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 0 'x': buffer 3 is not a buffer index (the file has 3)");
  wr32(p + t0 + 28, 1);
  wr32(p + t0 + 4, 3);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 0 'x': role 3 is not defined");
  wr32(p + t0 + 4, 1);
  wr32(p + t0 + 8, 0);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 0 'x': dtype 0 is not defined");
  wr32(p + t0 + 8, 1);
  wr32(p + t0 + 16, 1);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 0 'x': rank 2: the nchwc layout needs rank 4");
  wr32(p + t0 + 16, 0);
  wr32(p + t0 + 20, 4);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 0 'x': layout_block 4 of a plain tensor is not 0");
  wr32(p + t0 + 20, 0);
  wr32(p + t0 + 12, LOOM_DT_F32);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 0 'x': user_dtype f32 differs from dtype i8");
  wr32(p + t0 + 12, LOOM_DT_I8);
  fix_crc(p, n);
  free(p);
  p = sample(&n);
  wr32(p + t1 + 100, 200); /* zero point outside int8 */
  fix_crc(p, n);
  expect_reject(p, n, "tensor 1 'y': zero_point 200 is outside the range of i8");
  wr32(p + t1 + 100, 0);
  float nan = NAN, neg = -1.0f;
  memcpy(p + t1 + 96, &nan, 4);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 1 'y': scale nan is not a finite number >= 0");
  memcpy(p + t1 + 96, &neg, 4);
  fix_crc(p, n);
  expect_reject(p, n, "tensor 1 'y': scale -1 is not a finite number >= 0");
  free(p);
}

static void test_jobs_and_steps(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  size_t j0 = rec(p, LOOM_SEC_JOBS, 0, 0), s1 = rec(p, LOOM_SEC_STEPS, 1, 0), s0 = rec(p, LOOM_SEC_STEPS, 0, 0);
  char want[128];
  wr32(p + j0 + 4, 100);
  fix_crc(p, n);
  snprintf(want, sizeof want, "offset 0x%zx: job 0: instructions [0, 0 + 100) are outside INSNS (3 instructions)", j0);
  expect_reject(p, n, want);
  wr32(p + j0 + 0, UINT32_MAX);
  wr32(p + j0 + 4, 2);
  fix_crc(p, n);
  expect_reject(p, n, "job 0: instructions [4294967295, 4294967295 + 2) are outside INSNS");
  wr32(p + j0 + 0, 0);
  wr32(p + j0 + 4, 0);
  fix_crc(p, n);
  expect_reject(p, n, "job 0 has no instructions");
  wr32(p + j0 + 4, 3);
  wr32(p + j0 + 8 + 4 * 2, 9);
  fix_crc(p, n);
  snprintf(want, sizeof want, "offset 0x%zx: job 0: segments[2] = 9 is not a buffer index (the file has 3 buffers)",
           j0 + 16);
  expect_reject(p, n, want);
  wr32(p + j0 + 16, NB);
  wr32(p + j0 + 44, 5);
  fix_crc(p, n);
  expect_reject(p, n, "job 0: reserved field is not 0");
  wr32(p + j0 + 44, 0);
  wr32(p + j0 + 40, 1);
  fix_crc(p, n);
  expect_reject(p, n, "job 0: flags are not 0");
  wr32(p + j0 + 40, 0);
  wr32(p + s0 + 4, 1);
  fix_crc(p, n);
  expect_reject(p, n, "step 0: job 1 does not exist (the file has 1 jobs)");
  wr32(p + s0 + 4, 0);
  wr32(p + s0 + 8, 0);
  fix_crc(p, n);
  expect_reject(p, n, "step 0: a job step has inputs[0] = 0");
  wr32(p + s0 + 8, NB);
  wr32(p + s0, 3);
  fix_crc(p, n);
  expect_reject(p, n, "step 0: kind 3 is not defined (1 job, 2 host)");
  wr32(p + s0, 1);
  wr32(p + s1 + 24 + 4, 5);
  fix_crc(p, n);
  expect_reject(p, n, "step 1: outputs[1] = 5 is not a tensor index (the file has 5 tensors)");
  wr32(p + s1 + 28, NB);
  wr64(p + s1 + 40, 1 << 20);
  fix_crc(p, n);
  expect_reject(p, n, "step 1: parameters [", "are outside DATA");
  free(p);
}

static void test_check_insns(void **state) {
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_TINY_HASH);
  uint8_t code[3 * LOOM_INSN_BYTES];
  struct loom_insn nop = {.opcode = LOOM_OP_NOP, .nop = {.queue = LOOM_Q_COMPUTE}};
  struct loom_insn fin = {.opcode = LOOM_OP_FINISH};
  encode(&nop, code);
  encode(&nop, code + 16);
  encode(&fin, code + 32);
  code[32 + 15] |= 0x80; /* a reserved FINISH bit */
  struct loom_file_job j = {.insn_first = loom_fb_insns(b, code, 3), .insn_count = 3,
                            .segments = {NB, NB, NB, NB, NB, NB, NB, NB}};
  loom_fb_job(b, &j);
  size_t n;
  uint8_t *p = loom_file_builder_finish(b, &n);
  loom_file_builder_free(b);
  struct loom_file f;
  char msg[LOOM_MSG_MAX], want[160];
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_OK); /* the parser leaves insns alone */
  assert_int_equal(loom_file_check_insns(&f, "m.loom", msg), LOOM_E_FORMAT);
  snprintf(want, sizeof want, "m.loom: offset 0x%zx: instruction 2 (job 0, instruction 2 of the job) is illegal: "
           "reserved bits set", section_offset(p, LOOM_SEC_INSNS) + 32);
  assert_string_equal(msg, want);
  loom_file_free(&f);
  free(p);
}

/* xorshift64*, so the loop is the same on every run. */
static uint64_t rnd(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717u;
}

/* Whatever a flipped file holds, parsing either refuses it or yields a
 * file every consumer can walk. */
static void flip_and_parse(const uint8_t *orig, size_t n, uint64_t *seed, int fix, int *accepted) {
  uint8_t *p = malloc(n);
  memcpy(p, orig, n);
  int flips = 1 + (int)(rnd(seed) % 3);
  for (int k = 0; k < flips; k++) {
    size_t bit = (size_t)(rnd(seed) % (n * 8));
    p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
  if (fix) fix_crc(p, n);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(p, n, "m.loom", &f, msg) == LOOM_OK) {
    ++*accepted;
    loom_file_check_insns(&f, "m.loom", msg);
    FILE *null = fopen("/dev/null", "w");
    assert_int_equal(loom_disasm(&f, null, msg), LOOM_OK);
    fclose(null);
    for (uint32_t i = 0; i < f.tensor_count; i++)
      assert_true(f.tensors[i].offset + f.tensors[i].bytes <= f.buffers[f.tensors[i].buffer].size);
    loom_file_free(&f);
  }
  free(p);
}

static void test_bit_flips(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  uint64_t seed = 0x10025eedULL;
  int raw = 0, fixed = 0;
  for (int i = 0; i < 20000; i++) flip_and_parse(p, n, &seed, 0, &raw);
  for (int i = 0; i < 20000; i++) flip_and_parse(p, n, &seed, 1, &fixed);
  /* flips outside the crc's reach (config hash, minor version) still parse */
  assert_true(raw < 2000);
  assert_true(fixed > 100);
  free(p);
}

/* ---- HOSTCODE (format 1.1) ---- */

/* The sample plus native code for its host step (step 1): a fake image
 * (an ELF magic and zeros; the parser checks no more of it). */
static uint8_t *sample_hostcode(size_t *n) {
  struct loom_file_builder *b = sample_builder();
  uint8_t image[80] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  for (int i = 8; i < 80; i++) image[i] = (uint8_t)i;
  struct loom_file_hostcode_entry e = {.step = 1, .symbol = loom_fb_string(b, "loom_step_1"), .signature = 0x1234};
  assert_int_equal(loom_fb_hostcode(b, loom_fb_string(b, "aarch64-unknown-linux-gnu"), loom_fb_string(b, "generic"),
                                    &e, 1, image, sizeof image), 0);
  uint8_t *p = loom_file_builder_finish(b, n);
  assert_non_null(p);
  loom_file_builder_free(b);
  return p;
}

static void test_hostcode_roundtrip(void **state) {
  size_t n;
  uint8_t *p = sample_hostcode(&n);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(p, n, "m.loom", &f, msg)) fail_msg("%s", msg);
  assert_int_equal(f.version_minor, 1);
  assert_int_equal(rd32(p + 36), 8); /* eight sections */
  assert_non_null(f.hostcode);
  assert_string_equal(loom_file_string(&f, f.hostcode->triple), "aarch64-unknown-linux-gnu");
  assert_string_equal(loom_file_string(&f, f.hostcode->cpu), "generic");
  assert_int_equal(f.hostcode->abi, LOOM_HOSTCODE_ABI);
  assert_int_equal(f.hostcode->entry_count, 1);
  assert_int_equal(f.hostcode->image_offset, 56);
  assert_int_equal(f.hostcode->image_size, 80);
  assert_int_equal(f.hostcode_entries[0].step, 1);
  assert_string_equal(loom_file_string(&f, f.hostcode_entries[0].symbol), "loom_step_1");
  assert_true(f.hostcode_entries[0].signature == 0x1234);
  assert_int_equal(f.hostcode_image[8], 8);
  assert_int_equal(f.hostcode_image[79], 79);
  assert_int_equal(f.step_count, 2); /* everything else as before */
  loom_file_free(&f);
  free(p);
  /* the sample without HOSTCODE stays a 1.0 file */
  p = sample(&n);
  assert_int_equal(p[10], 0);
  assert_int_equal(rd32(p + 36), 7);
  free(p);
}

/* A builder made from a parsed file writes the same bytes; HOSTCODE is
 * dropped and can be added again. */
static void test_builder_from(void **state) {
  size_t n, m, k;
  uint8_t *p = sample(&n), *h = sample_hostcode(&k);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_OK);
  struct loom_file_builder *b = loom_file_builder_from(&f);
  assert_non_null(b);
  uint8_t *q = loom_file_builder_finish(b, &m);
  assert_int_equal(m, n);
  assert_memory_equal(p, q, n);
  free(q);
  assert_int_equal(loom_fb_string(b, "weights"), f.buffers[0].name); /* interned again */
  loom_file_builder_free(b);
  loom_file_free(&f);
  assert_int_equal(loom_file_parse(h, k, "m.loom", &f, msg), LOOM_OK);
  b = loom_file_builder_from(&f);
  q = loom_file_builder_finish(b, &m);
  assert_int_equal(q[10], 0); /* back to 1.0 */
  loom_file_free(&f);
  assert_int_equal(loom_file_parse(q, m, "m.loom", &f, msg), LOOM_OK);
  assert_null(f.hostcode);
  loom_file_free(&f);
  loom_file_builder_free(b);
  free(p), free(q), free(h);
}

static void test_hostcode_refusals(void **state) {
  size_t n;
  uint8_t *p = sample_hostcode(&n);
  size_t hc = section_offset(p, LOOM_SEC_HOSTCODE), e = hc + 32;
  p[10] = 0;
  expect_reject(p, n, "section 7: type 8 (HOSTCODE) needs format version 1.1, the file is 1.0");
  p[10] = 1;
#define POKE32(off, v, ...)          \
  do {                               \
    uint32_t old = rd32(p + (off));  \
    wr32(p + (off), (v));            \
    fix_crc(p, n);                   \
    expect_reject(p, n, __VA_ARGS__); \
    wr32(p + (off), old);            \
  } while (0)
  POKE32(hc, 3, "HOSTCODE: triple 3 is not the start of a non-empty string");
  POKE32(hc + 8, 2, "HOSTCODE: entry-point ABI 2 is not supported (this reader implements 1)");
  POKE32(hc + 12, 1000, "HOSTCODE: 1000 entries do not fit the section");
  POKE32(hc + 12, 2, "HOSTCODE: image_offset 56 is not 80");
  POKE32(hc + 16, 64, "HOSTCODE: image_offset 64 is not 56");
  POKE32(hc + 24, 72, "HOSTCODE: image_size 72 does not reach the end of the section");
  POKE32(hc + 56, 0x464c457e, "HOSTCODE: the image is not an ELF file");
  POKE32(e, 0, "HOSTCODE entry 0: step 0 is not a host step");
  POKE32(e, 2, "HOSTCODE entry 0: step 2 is not a host step");
  POKE32(e + 4, 2, "HOSTCODE entry 0: symbol 2 is not the start of a non-empty string");
  POKE32(e + 16, 1, "HOSTCODE entry 0: flags are not 0");
  POKE32(e + 20, 1, "HOSTCODE entry 0: reserved field is not 0");
  size_t t = section_entry(p, LOOM_SEC_HOSTCODE);
  uint64_t size = rd64(p + t + 16);
  wr64(p + t + 16, 16);
  fix_crc(p, n);
  expect_reject(p, n, "HOSTCODE: 16 bytes is shorter than its 32-byte header");
  wr64(p + t + 16, size);
#undef POKE32
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_builder_write_and_read),
      cmocka_unit_test(test_strings_interned),
      cmocka_unit_test(test_tensor_bytes),
      cmocka_unit_test(test_truncated_every_length),
      cmocka_unit_test(test_header),
      cmocka_unit_test(test_section_table),
      cmocka_unit_test(test_section_bounds),
      cmocka_unit_test(test_section_overlap_and_duplicates),
      cmocka_unit_test(test_section_records),
      cmocka_unit_test(test_strings),
      cmocka_unit_test(test_buffers),
      cmocka_unit_test(test_tensors),
      cmocka_unit_test(test_jobs_and_steps),
      cmocka_unit_test(test_check_insns),
      cmocka_unit_test(test_bit_flips),
      cmocka_unit_test(test_hostcode_roundtrip),
      cmocka_unit_test(test_builder_from),
      cmocka_unit_test(test_hostcode_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
