/*
 * test_hwconfig.c - configuration files and the rules every configuration
 * keeps (driver/core/hwconfig_file.c, hwconfig_rules.c).
 *
 * The central property: a file that repeats a named configuration (what
 * `loom config show NAME` prints) loads to exactly the named entry of the
 * generated table, rows and hash included, because loomgen and the loader
 * derive through the same code.  Then each rule of the ISA and the RTL is
 * broken on its own and must be reported against its key, and each kind of
 * bad file must name the file, the line and the key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loom/hwconfig.h"

static char *keys_text(const struct loom_hw_config *c) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  loom_hw_write_keys(f, c);
  fclose(f);
  return text;
}

static int parse(const char *text, struct loom_hw_config *c, char *msg, size_t n) {
  return loom_hw_config_parse(text, strlen(text), "t.cfg", c, msg, n);
}

static void assert_same(const struct loom_hw_config *a, const struct loom_hw_config *b) {
  assert_string_equal(a->name, b->name);
  assert_int_equal(a->hash, b->hash);
  assert_int_equal(a->inp_rows, b->inp_rows);
  assert_int_equal(a->wgt_rows, b->wgt_rows);
  assert_int_equal(a->acc_rows, b->acc_rows);
  assert_int_equal(a->uop_rows, b->uop_rows);
  assert_int_equal(a->out_rows, b->out_rows);
#define SAME(key, lo, hi, what) assert_int_equal(a->key, b->key);
  LOOM_HW_INT_KEYS(SAME)
#undef SAME
  assert_string_equal(a->part, b->part);
}

/* show -> parse -> derive gives every named configuration back. */
static void test_named_round_trip(void **state) {
  char msg[256];
  for (int i = 0; i < LOOM_CONFIG_COUNT; i++) {
    struct loom_hw_config c;
    char *text = keys_text(&loom_hw_configs[i]);
    assert_int_equal(parse(text, &c, msg, sizeof msg), 0);
    struct loom_hw_violation v[4];
    assert_int_equal(loom_hw_check(&c, v, 4), 0);
    loom_hw_derive(&c);
    assert_same(&c, &loom_hw_configs[i]);
    free(text);
  }
}

/* The hash covers the name and the hardware keys, not the clock, the
 * outstanding reads or the part (docs/configs.md). */
static void test_hash_keys(void **state) {
  struct loom_hw_config c = loom_hw_configs[0];
  uint32_t h = c.hash;
  c.clock_mhz = 333, c.max_outstanding_reads = 2;
  snprintf(c.part, sizeof c.part, "xck26-sfvc784-2LV-c");
  loom_hw_derive(&c);
  assert_int_equal(c.hash, h);
  snprintf(c.name, sizeof c.name, "other");
  loom_hw_derive(&c);
  assert_int_not_equal(c.hash, h);
  c = loom_hw_configs[0];
  c.token_queue_depth++;
  loom_hw_derive(&c);
  assert_int_not_equal(c.hash, h);
}

/* Comments, blank lines and spacing are free; keys in any order. */
static void test_syntax(void **state) {
  char msg[256];
  struct loom_hw_config c;
  const char *text =
      "# a comment\n\n"
      "part=xc7z020clg400-1   # trailing comment\n"
      "  name   =  tiny  \n"
      "batch = 1\nblock_in = 8\nblock_out = 8\ninp_kib = 2\nwgt_kib = 8\nacc_kib = 8\nuop_kib = 2\n"
      "bus_bits = 64\r\nclock_mhz = 100\ncmd_queue_depth = 8\ntoken_queue_depth = 8\n"
      "max_outstanding_reads = 4";
  assert_int_equal(parse(text, &c, msg, sizeof msg), 0);
  loom_hw_derive(&c);
  assert_int_equal(c.hash, loom_hw_config_by_name("tiny")->hash);
}

/* Replaces the line of `key` in tiny's text by `line` ("" drops it). */
static char *edit(const char *key, const char *line) {
  char *text = keys_text(loom_hw_config_by_name("tiny")), *out = malloc(strlen(text) + 256);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "%s = ", key);
  out[0] = '\0';
  for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
    strcat(out, strncmp(l, prefix, strlen(prefix)) ? l : line);
    if (strncmp(l, prefix, strlen(prefix)) || line[0]) strcat(out, "\n");
  }
  free(text);
  return out;
}

static void expect_parse_error(const char *text, const char *want) {
  char msg[256];
  struct loom_hw_config c;
  assert_int_equal(parse(text, &c, msg, sizeof msg), -1);
  if (!strstr(msg, want)) fail_msg("message '%s' lacks '%s'", msg, want);
}

static void test_bad_files(void **state) {
  char *t;
  expect_parse_error(t = edit("batch", "batch = 1\nbtach = 1"), "t.cfg:3: unknown key 'btach'"), free(t);
  expect_parse_error(t = edit("batch", "batch = 1\nbatch = 2"), "t.cfg:3: key 'batch' repeats line 2"), free(t);
  expect_parse_error(t = edit("wgt_kib", ""), "t.cfg: missing key wgt_kib"), free(t);
  expect_parse_error(t = edit("bus_bits", "bus_bits = 64x"), "t.cfg:9: key 'bus_bits': '64x' is not a whole number"), free(t);
  expect_parse_error(t = edit("bus_bits", "bus_bits = -64"), "key 'bus_bits': '-64' is not a whole number"), free(t);
  expect_parse_error(t = edit("batch", "batch = 99999999999999999999"), "key 'batch'"), free(t);
  expect_parse_error(t = edit("clock_mhz", "clock_mhz ="), "t.cfg:10: key 'clock_mhz' has no value"), free(t);
  expect_parse_error(t = edit("clock_mhz", "clock_mhz 100"), "t.cfg:10: 'clock_mhz 100' is not of the form key = value"), free(t);
  expect_parse_error(t = edit("part", "part = a b"), "key 'part': 'a b' must be one word"), free(t);
  expect_parse_error(t = edit("name", "name = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "key 'name': 'aaaa"), free(t);
  char nul[] = "name = x\0\n";
  char msg[256];
  struct loom_hw_config c;
  assert_int_equal(loom_hw_config_parse(nul, sizeof nul - 1, "n.cfg", &c, msg, sizeof msg), -1);
  assert_string_equal(msg, "n.cfg: not a text file (it holds NUL bytes)");
}

/* Each rule, broken alone on tiny, is reported against its key. */
static void expect_rule(const char *key, const char *line, const char *want_key, const char *want) {
  char msg[256], *t = edit(key, line);
  struct loom_hw_config c;
  struct loom_hw_violation v[LOOM_HW_MAX_VIOLATIONS];
  assert_int_equal(parse(t, &c, msg, sizeof msg), 0);
  int n = loom_hw_check(&c, v, LOOM_HW_MAX_VIOLATIONS);
  int found = 0;
  for (int i = 0; i < n; i++) found |= !strcmp(v[i].key, want_key) && strstr(v[i].what, want);
  if (!found) fail_msg("%s: no violation of '%s' saying '%s' (%d found, first %s: %s)", line, want_key, want, n,
                       n ? v[0].key : "-", n ? v[0].what : "-");
  free(t);
}

static void test_rules(void **state) {
  expect_rule("batch", "batch = 3", "batch", "must be 1, 2 or 4");
  expect_rule("block_in", "block_in = 12", "block_in", "must be a power of two (the GEMM sum tree)");
  expect_rule("block_in", "block_in = 12", "block_in", "an INP row (12 bytes) must be a power of two bytes");
  expect_rule("block_out", "block_out = 12", "block_out", "even power of two");
  expect_rule("inp_kib", "inp_kib = 3", "inp_kib", "INP rows must be a power of two");
  expect_rule("inp_kib", "inp_kib = 64", "inp_kib", "exceed the 2048 the ISA's 11-bit micro-op inp field");
  expect_rule("wgt_kib", "wgt_kib = 128", "wgt_kib", "exceed the 1024 the ISA's 10-bit micro-op wgt field");
  expect_rule("acc_kib", "acc_kib = 128", "acc_kib", "micro-op acc field");
  expect_rule("uop_kib", "uop_kib = 64", "uop_kib", "GEMM uop_begin field");
  expect_rule("bus_bits", "bus_bits = 256", "bus_bits", "must be 64 or 128");
  expect_rule("bus_bits", "bus_bits = 128", "block_in", "whole number of 128-bit bus words");
  expect_rule("max_outstanding_reads", "max_outstanding_reads = 65", "max_outstanding_reads", "1..64");
  expect_rule("name", "name = a;b", "name", "may hold only letters");
}

static void test_part_budget(void **state) {
  struct loom_hw_violation v[4];
  const struct loom_hw_part *z7 = loom_hw_part_by_name("xc7z020clg400-1");
  const struct loom_hw_part *k26 = loom_hw_part_by_name("xck26-sfvc784-2LV-c");
  assert_non_null(z7);
  assert_non_null(k26);
  assert_null(loom_hw_part_by_name("xc7z999"));
  assert_int_equal(loom_hw_check_part(loom_hw_config_by_name("default"), z7, LOOM_URAM_BUFFERS, v, 4), 0);
  /* the DSP estimate is what Yosys maps the default core to (docs/rtl.md) */
  assert_int_equal(loom_hw_dsp_estimate(loom_hw_config_by_name("default")), 198);
  const struct loom_hw_config *large = loom_hw_config_by_name("large");
  assert_int_equal(loom_hw_check_part(large, z7, LOOM_URAM_BUFFERS, v, 4), 2);
  assert_string_equal(v[0].key, "part");
  assert_non_null(strstr(v[0].what, "DSP budget"));
  assert_non_null(strstr(v[1].what, "BRAM budget"));
  /* the K26 has UltraRAM, but large's WGT and UOP need 236 BRAM36 of its 144 */
  assert_int_equal(loom_hw_check_part(large, k26, LOOM_URAM_BUFFERS, v, 4), 1);
  assert_non_null(strstr(v[0].what, "236.0 BRAM36 and 56 URAM288"));
  struct loom_hw_config half = *large;
  half.wgt_kib = 512;
  loom_hw_derive(&half);
  assert_int_equal(loom_hw_check_part(&half, k26, LOOM_URAM_BUFFERS, v, 4), 0);
}

static void test_resolve(void **state) {
  char msg[256], path[] = "/tmp/loom_test_hwconfig_XXXXXX";
  struct loom_hw_config c;
  assert_int_equal(loom_hw_config_resolve("tiny", &c, msg, sizeof msg), 0);
  assert_int_equal(c.hash, loom_hw_config_by_name("tiny")->hash);
  assert_int_equal(loom_hw_config_resolve("huge", &c, msg, sizeof msg), 1);
  assert_non_null(strstr(msg, "unknown hardware configuration 'huge' (known: tiny, default, large"));
  assert_int_equal(loom_hw_config_resolve("no/such.cfg", &c, msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "no/such.cfg"));
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  char *t = edit("block_in", "block_in = 12");
  FILE *f = fdopen(fd, "w");
  fputs(t, f);
  fclose(f);
  free(t);
  assert_int_equal(loom_hw_config_resolve(path, &c, msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "key 'block_in': must be a power of two"));
  assert_non_null(strstr(msg, path));
  remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_named_round_trip), cmocka_unit_test(test_hash_keys),
      cmocka_unit_test(test_syntax),           cmocka_unit_test(test_bad_files),
      cmocka_unit_test(test_rules),            cmocka_unit_test(test_part_budget),
      cmocka_unit_test(test_resolve),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
