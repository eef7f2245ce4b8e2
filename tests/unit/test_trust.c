/*
 * test_trust.c - consent to run native code (driver/core/hostcode_trust.c):
 * HMAC-SHA256 against RFC 4231's test vectors (through the multi-part
 * interface, split at every position), the user's key (where it lives, made
 * 0600 on first use and the same key afterwards, refused when others may
 * read it or it is malformed), and the SIGNATURE section: a signed file
 * verifies with its key only, every byte of it is covered (a change
 * anywhere, the crc32 made right again, is "changed"), re-signing keeps
 * one record, and the parser's rules for the section.
 * tests/cli/test_native_consent.sh checks what the runtime does with it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "driver/core/asm.h"
#include "driver/core/hostcode_format.h"
#include "driver/core/loomfile.h"

/* ---- RFC 4231, test cases 1-4, 6, 7 (case 5 truncates the output) ---- */

static size_t unhex(const char *h, uint8_t *out) {
  size_t n = 0;
  for (; h[0] && h[1]; h += 2) {
    unsigned v;
    sscanf(h, "%2x", &v);
    out[n++] = (uint8_t)v;
  }
  return n;
}

static void test_rfc4231(void **state) {
  static const struct {
    const char *key, *data, *mac;
  } v[] = {
      {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
       "4869205468657265",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"4a656665",
       "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
       "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {"0102030405060708090a0b0c0d0e0f10111213141516171819",
       "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
       "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b657920466972"
       "7374",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
       "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b657920616e"
       "642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565647320746f206265"
       "20686173686564206265666f7265206265696e6720757365642062792074686520484d414320616c676f726974686d2e",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    uint8_t key[256], data[256], want[32], got[32];
    size_t kn = unhex(v[i].key, key), dn = unhex(v[i].data, data);
    unhex(v[i].mac, want);
    for (size_t a = 0; a <= dn; a += 7) /* three parts, split at a and (a + dn) / 2 */
      for (size_t b = a; b <= dn; b += dn / 3 + 1) {
        struct loom_span parts[] = {{data, a}, {data + a, b - a}, {data + b, dn - b}};
        assert_int_equal(loom_hmac_sha256(key, kn, parts, 3, got), 0);
        if (memcmp(got, want, 32)) fail_msg("RFC 4231 case %zu differs (split %zu/%zu)", i, a, b);
      }
  }
}

/* ---- the key ---- */

struct env {
  char dir[64], key[128];
};

static int setup(void **state) {
  struct env *e = calloc(1, sizeof *e);
  snprintf(e->dir, sizeof e->dir, "/tmp/loom-trust-XXXXXX");
  assert_non_null(mkdtemp(e->dir));
  snprintf(e->key, sizeof e->key, "%s/sub/key", e->dir);
  setenv("LOOM_KEY_FILE", e->key, 1);
  *state = e;
  return 0;
}

static int teardown(void **state) {
  struct env *e = *state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", e->dir);
  assert_int_equal(system(cmd), 0);
  unsetenv("LOOM_KEY_FILE");
  free(e);
  return 0;
}

static void test_key_path(void **state) {
  char path[4096], msg[LOOM_MSG_MAX];
  assert_int_equal(loom_key_path(path, sizeof path, msg), LOOM_OK);
  assert_string_equal(path, ((struct env *)*state)->key);
  unsetenv("LOOM_KEY_FILE");
  setenv("XDG_CONFIG_HOME", "/xdg", 1);
  assert_int_equal(loom_key_path(path, sizeof path, msg), LOOM_OK);
  assert_string_equal(path, "/xdg/loom/key");
  setenv("XDG_CONFIG_HOME", "relative", 1); /* ignored, as the XDG spec says */
  setenv("HOME", "/home/u", 1);
  assert_int_equal(loom_key_path(path, sizeof path, msg), LOOM_OK);
  assert_string_equal(path, "/home/u/.config/loom/key");
  unsetenv("XDG_CONFIG_HOME");
}

static void test_key_made_once(void **state) {
  struct env *e = *state;
  struct loom_key a, b;
  char msg[LOOM_MSG_MAX];
  struct stat st;
  assert_int_equal(loom_key_load(0, &a, msg), LOOM_E_NOTFOUND);
  assert_int_equal(stat(e->key, &st), -1); /* the runtime never makes one */
  assert_int_equal(loom_key_load(1, &a, msg), LOOM_OK);
  assert_int_equal(stat(e->key, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0600);
  char dir[128];
  snprintf(dir, sizeof dir, "%s/sub", e->dir);
  assert_int_equal(stat(dir, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0700);
  assert_int_equal(loom_key_load(1, &b, msg), LOOM_OK); /* the same key, not a new one */
  assert_memory_equal(a.bytes, b.bytes, sizeof a.bytes);
  assert_memory_equal(a.id, b.id, sizeof a.id);
  assert_int_equal(chmod(e->key, 0640), 0);
  assert_int_equal(loom_key_load(0, &b, msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "chmod 600 it"));
  FILE *f = fopen(e->key, "w");
  fputs("not a key\n", f);
  fclose(f);
  assert_int_equal(chmod(e->key, 0600), 0);
  assert_int_equal(loom_key_load(1, &b, msg), LOOM_E_INVALID); /* never overwritten */
  assert_non_null(strstr(msg, "not a Loom signing key"));
}

/* ---- signatures ---- */

static uint8_t *gemm_file(size_t *n) {
  struct loom_file_builder *b;
  char msg[LOOM_MSG_MAX];
  if (loom_asm_file("tests/asm/gemm64.s", NULL, &b, msg)) fail_msg("%s", msg);
  uint8_t *p = loom_file_builder_finish(b, n);
  loom_file_builder_free(b);
  return p;
}

static enum loom_sig_state state_of(const uint8_t *p, size_t n, const struct loom_key *k) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(p, n, "s.loom", &f, msg)) return LOOM_SIG_COUNT; /* refused by the parser */
  enum loom_sig_state s = loom_file_signed_by(&f, k);
  loom_file_free(&f);
  return s;
}

static void fix_crc(uint8_t *p, size_t n) {
  uint32_t crc = (uint32_t)crc32(crc32(0, Z_NULL, 0), p + 32, (uInt)(n - 32));
  memcpy(p + 24, &crc, 4);
}

static void test_sign_and_verify(void **state) {
  struct loom_key k, other;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_key_load(1, &k, msg), LOOM_OK);
  memcpy(&other, &k, sizeof k);
  other.bytes[0] ^= 1;
  other.id[0] ^= 1;
  size_t n, m, m2;
  uint8_t *p = gemm_file(&n), *s, *s2;
  assert_int_equal(state_of(p, n, &k), LOOM_SIG_NONE);
  assert_int_equal(loom_file_sign(p, n, "s.loom", &k, &s, &m, msg), LOOM_OK);
  struct loom_file f;
  assert_int_equal(loom_file_parse(s, m, "s.loom", &f, msg), LOOM_OK);
  assert_int_equal(f.version_minor, 4);
  assert_non_null(f.signature);
  loom_file_free(&f);
  assert_int_equal(state_of(s, m, &k), LOOM_SIG_MINE);
  assert_int_equal(state_of(s, m, &other), LOOM_SIG_OTHER_KEY);
  assert_int_equal(state_of(s, m, NULL), LOOM_SIG_OTHER_KEY);
  memcpy(other.id, k.id, sizeof k.id); /* a forged key id does not help */
  assert_int_equal(state_of(s, m, &other), LOOM_SIG_CHANGED);
  /* re-signing replaces the record */
  assert_int_equal(loom_file_sign(s, m, "s.loom", &k, &s2, &m2, msg), LOOM_OK);
  assert_int_equal(m2, m);
  assert_memory_equal(s, s2, m);
  free(s2);
  /* every byte is covered: any change (the crc made right again) is seen */
  uint8_t *bad = malloc(m);
  int changed = 0, refused = 0;
  for (size_t at = 0; at < m; at++) {
    if (at >= 24 && at < 28) continue; /* the crc itself */
    memcpy(bad, s, m);
    bad[at] ^= 0x20;
    fix_crc(bad, m);
    enum loom_sig_state st = state_of(bad, m, &k);
    if (st == LOOM_SIG_MINE) fail_msg("a change at byte %zu of %zu still verifies", at, m);
    changed += st == LOOM_SIG_CHANGED, refused += st == LOOM_SIG_COUNT;
  }
  print_message("%zu bytes: %d changes seen by the mac, %d by the parser\n", m, changed, refused);
  free(bad);
  free(p);
  free(s);
}

/* The section's rules: version 1.4, one record, known algorithm, zeros. */
static void test_signature_section_rules(void **state) {
  struct loom_key k;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_key_load(1, &k, msg), LOOM_OK);
  size_t n, m;
  uint8_t *p = gemm_file(&n), *s;
  assert_int_equal(loom_file_sign(p, n, "s.loom", &k, &s, &m, msg), LOOM_OK);
  struct loom_file f;
  assert_int_equal(loom_file_parse(s, m, "s.loom", &f, msg), LOOM_OK);
  size_t sig = (size_t)((const uint8_t *)f.signature - (const uint8_t *)f.storage);
  loom_file_free(&f);
  uint8_t *bad = malloc(m);
  static const struct {
    int in_record; /* else in the file header */
    size_t at;
    uint8_t value;
    const char *why;
  } cases[] = {
      {0, LOOM_FILE_OFF_MINOR, 3, "needs format version 1.4"},
      {1, 0, 2, "algorithm 2 is not supported"},
      {1, 4, 1, "flags are not 0"},
      {1, 63, 1, "reserved bytes are not 0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memcpy(bad, s, m);
    bad[cases[i].in_record ? sig + cases[i].at : cases[i].at] = cases[i].value;
    fix_crc(bad, m);
    assert_int_equal(loom_file_parse(bad, m, "s.loom", &f, msg), LOOM_E_FORMAT);
    if (!strstr(msg, cases[i].why)) fail_msg("'%s' lacks '%s'", msg, cases[i].why);
  }
  free(bad);
  free(p);
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rfc4231),
      cmocka_unit_test_setup_teardown(test_key_path, setup, teardown),
      cmocka_unit_test_setup_teardown(test_key_made_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sign_and_verify, setup, teardown),
      cmocka_unit_test_setup_teardown(test_signature_section_rules, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
