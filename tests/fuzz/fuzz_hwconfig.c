/*
 * fuzz_hwconfig.c - libFuzzer target for configuration files
 * (loom_hw_config_parse, driver/core/hwconfig_file.c) and the rules
 * (hwconfig_rules.c).
 *
 * Properties checked on every input:
 *   - a refusal names the file ("fuzz.cfg: ..." or "fuzz.cfg:LINE: ...");
 *   - an accepted file survives `loom config show`: its keys written out and
 *     parsed again give the same configuration;
 *   - the rules never crash, and a configuration they accept derives rows
 *     that are powers of two within the ISA's index fields, with a part
 *     budget check that never crashes either.
 */
#include "fuzz.h"

#include "loom/hwconfig.h"

static int pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

static void check_round_trip(const struct loom_hw_config *a) {
  char msg[256], *text = NULL;
  size_t len = 0;
  struct loom_hw_config b;
  FILE *f = open_memstream(&text, &len);
  FUZZ_CHECK(f != NULL, "open_memstream");
  loom_hw_write_keys(f, a);
  fclose(f);
  FUZZ_CHECK(loom_hw_config_parse(text, len, "re.cfg", &b, msg, sizeof msg) == 0, "re-parse failed: %s", msg);
  FUZZ_CHECK(!strcmp(a->name, b.name) && !strcmp(a->part, b.part), "name or part changed");
#define SAME(key, lo, hi, what) FUZZ_CHECK(a->key == b.key, "%s changed", #key);
  LOOM_HW_INT_KEYS(SAME)
#undef SAME
  free(text);
}

static void check_rules(struct loom_hw_config *c) {
  struct loom_hw_violation v[LOOM_HW_MAX_VIOLATIONS];
  int n = loom_hw_check(c, v, LOOM_HW_MAX_VIOLATIONS);
  FUZZ_CHECK(n >= 0, "negative count");
  if (n) return;
  loom_hw_derive(c);
  FUZZ_CHECK(pow2(c->inp_rows) && c->inp_rows <= 2048 && pow2(c->wgt_rows) && c->wgt_rows <= 1024 &&
                 pow2(c->acc_rows) && c->acc_rows <= 2048 && pow2(c->uop_rows) && c->uop_rows <= 8192,
             "rows %d %d %d %d", c->inp_rows, c->wgt_rows, c->acc_rows, c->uop_rows);
  for (int i = 0; i < LOOM_PART_COUNT; i++)
    FUZZ_CHECK(loom_hw_check_part(c, &loom_hw_parts[i], LOOM_URAM_BUFFERS, v, LOOM_HW_MAX_VIOLATIONS) >= 0,
               "part check");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char msg[256] = "";
  struct loom_hw_config c;
  if (loom_hw_config_parse((const char *)data, size, "fuzz.cfg", &c, msg, sizeof msg)) {
    FUZZ_CHECK(!strncmp(msg, "fuzz.cfg:", 9), "message '%s'", msg);
    return 0;
  }
  check_round_trip(&c);
  check_rules(&c);
  return 0;
}
