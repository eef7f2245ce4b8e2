/*
 * test_loomfile_refusals.c - the .loom validator: the rules of
 * docs/format.md broken on purpose, one at a time.
 *
 * Each rule is broken in a copy of the sample file (tests/support/
 * loomsample.c) with the crc fixed up afterwards, so that the rule itself,
 * not the checksum, has to catch it, and the message must name the right
 * field and offset.  Truncation at every length and a seeded bit-flip loop
 * check that nothing a fuzzer could produce crashes the parser.  Round
 * trips and HOSTCODE: test_loomfile.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "filebytes.h"
#include "loomsample.h"
#include "driver/core/asm.h"
#include "driver/core/loomfile.h"
#include "loom/isa.h"

#define NB LOOM_FILE_NO_BUFFER

/* ---- byte poking ---- */

/* File offset of field `field` of record `i` of a section. */
static size_t rec(const uint8_t *p, uint32_t type, uint32_t i, size_t field) {
  return section_offset(p, type) + i * loom_section_entry_size(type) + field;
}


/* ---- refusals ---- */

static void test_truncated_every_length(void **state) {
  size_t n;
  uint8_t *p = loomsample(&n);
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
  uint8_t *p = loomsample(&n);
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
  wr32(p + 32, 1); /* an ISA version 1 binary: refused, naming both versions */
  fix_crc(p, n);
  expect_reject(p, n, "offset 0x20: isa_version 1 is not supported (this build implements ISA version 2;");
  wr32(p + 32, 3);
  fix_crc(p, n);
  expect_reject(p, n, "offset 0x20: isa_version 3 is not supported");
  wr32(p + 32, LOOM_ISA_VERSION);
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
  uint8_t *p = loomsample(&n);
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
  uint8_t *p = loomsample(&n);
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
  uint8_t *p = loomsample(&n);
  size_t t = section_entry(p, LOOM_SEC_TENSORS);
  wr64(p + t + 8, section_offset(p, LOOM_SEC_BUFFERS));
  wr64(p + t + 16, 104);
  fix_crc(p, n);
  expect_reject(p, n, "section 4 (TENSORS) overlaps section 3 (BUFFERS)");
  free(p);
  p = loomsample(&n);
  wr32(p + section_entry(p, LOOM_SEC_STEPS), LOOM_SEC_JOBS);
  fix_crc(p, n);
  expect_reject(p, n, "section 6: a second JOBS section (type 6; the first is section 5)");
  free(p);
  p = loomsample(&n);
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
  p = loomsample(&n);
  wr32(p + section_entry(p, LOOM_SEC_STRTAB), 42);
  p[10] = 1;
  fix_crc(p, n);
  expect_reject(p, n, "offset 0x24: the file has no STRTAB section");
  free(p);
}

static void test_section_records(void **state) {
  size_t n;
  uint8_t *p = loomsample(&n);
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
  uint8_t *p = loomsample(&n);
  p[strtab_last(p)] = 'z';
  fix_crc(p, n);
  expect_reject(p, n, "STRTAB does not end with a NUL byte");
  free(p);
  p = loomsample(&n);
  p[strtab_first(p)] = 'z';
  fix_crc(p, n);
  expect_reject(p, n, "STRTAB does not start with a NUL byte");
  free(p);
  p = loomsample(&n);
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
  p = loomsample(&n);
  wr32(p + rec(p, LOOM_SEC_TENSORS, 1, 0), rd32(p + rec(p, LOOM_SEC_TENSORS, 0, 0)));
  fix_crc(p, n);
  expect_reject(p, n, "tensor 1: name 'x' is already used by tensor 0");
  free(p);
}

static void test_buffers(void **state) {
  size_t n;
  uint8_t *p = loomsample(&n);
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
  p = loomsample(&n);
  wr64(p + rec(p, LOOM_SEC_BUFFERS, 1, 16), 64);
  fix_crc(p, n);
  expect_reject(p, n, "buffer 1 'act': data_offset 64 of a work buffer is not 0");
  free(p);
}

static void test_tensors(void **state) {
  size_t n;
  uint8_t *p = loomsample(&n);
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
  p = loomsample(&n);
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
  uint8_t *p = loomsample(&n);
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
  loomsample_encode(&nop, code);
  loomsample_encode(&nop, code + 16);
  loomsample_encode(&fin, code + 32);
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
  uint8_t *p = loomsample(&n);
  uint64_t seed = 0x10025eedULL;
  int raw = 0, fixed = 0;
  for (int i = 0; i < 20000; i++) flip_and_parse(p, n, &seed, 0, &raw);
  for (int i = 0; i < 20000; i++) flip_and_parse(p, n, &seed, 1, &fixed);
  /* flips outside the crc's reach (config hash, minor version) still parse */
  assert_true(raw < 2000);
  assert_true(fixed > 100);
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
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
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
