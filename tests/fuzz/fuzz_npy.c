/*
 * fuzz_npy.c - libFuzzer target for the .npy reader (loom_npy_parse).
 *
 * Properties checked on every input:
 *   - a refusal names the file ("fuzz.npy: ...");
 *   - an accepted array survives the round trip encode -> parse with the
 *     same dtype, shape and bytes, and encoding is stable (encoding the
 *     re-parsed array gives the same bytes again).
 */
#include "fuzz.h"

#include "driver/core/npy.h"

static void check_round_trip(const struct loom_npy *a) {
  char msg[LOOM_MSG_MAX];
  uint8_t *enc = NULL, *enc2 = NULL;
  size_t n = 0, n2 = 0;
  struct loom_npy b;
  loom_status st = loom_npy_encode(a->dtype, a->rank, a->dims, a->data, &enc, &n, msg);
  FUZZ_CHECK(st == LOOM_OK, "encode of a parsed array failed: %s", msg);
  st = loom_npy_parse(enc, n, "re.npy", &b, msg);
  FUZZ_CHECK(st == LOOM_OK, "parse of an encoded array failed: %s", msg);
  FUZZ_CHECK(b.dtype == a->dtype && b.rank == a->rank, "dtype/rank changed");
  FUZZ_CHECK(!memcmp(b.dims, a->dims, sizeof a->dims), "dims changed");
  FUZZ_CHECK(b.bytes == a->bytes && !memcmp(b.data, a->data, a->bytes), "data changed");
  st = loom_npy_encode(b.dtype, b.rank, b.dims, b.data, &enc2, &n2, msg);
  FUZZ_CHECK(st == LOOM_OK && n2 == n && !memcmp(enc, enc2, n), "encoding is not stable");
  free(enc);
  free(enc2);
  loom_npy_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char msg[LOOM_MSG_MAX] = "";
  struct loom_npy a;
  loom_status st = loom_npy_parse(data, size, "fuzz.npy", &a, msg);
  if (st != LOOM_OK) {
    FUZZ_CHECK(st == LOOM_E_FORMAT, "status %d", (int)st);
    FUZZ_CHECK(fuzz_names_file(msg, "fuzz.npy"), "message '%s'", msg);
    return 0;
  }
  check_round_trip(&a);
  loom_npy_free(&a);
  return 0;
}
