/*
 * fuzz_asm.c - libFuzzer target for the assembler and disassembler
 * (driver/core/asm.h).
 *
 * The input is assembler source.  Properties (docs/asm.md):
 *   - a refusal names the source ("fuzz.s:LINE:COL: ..." or "fuzz.s: ...");
 *   - an accepted program serializes, and the bytes pass loom_file_parse;
 *   - disassembling those bytes and assembling the listing again gives the
 *     identical bytes ("for every file the assembler produces,
 *     disassembling and assembling again gives the identical bytes").
 * Programs that would hold more than FUZZ_ASM_MAX_BYTES of constant data
 * are skipped: the assembler refuses more than LOOM_ASM_MAX_DATA (256 MiB;
 * test_limits checks that), but anything near it would only measure
 * memory.  A line with .zero or const and a number above the cap is
 * skipped before assembly; the output size is checked after.
 */
#include "fuzz.h"

#include "driver/core/asm.h"

#define FUZZ_ASM_MAX_BYTES (16u << 20)

/* The bytes of an assembled program, or NULL with the message in msg. */
static uint8_t *assemble(const char *text, size_t len, const char *name, size_t *size,
                         char msg[LOOM_MSG_MAX]) {
  struct loom_file_builder *b = NULL;
  if (loom_asm_string(text, len, name, NULL, &b, msg) != LOOM_OK) {
    FUZZ_CHECK(b == NULL, "builder returned on failure");
    return NULL;
  }
  uint8_t *bytes = loom_file_builder_finish(b, size);
  loom_file_builder_free(b);
  if (!bytes) snprintf(msg, LOOM_MSG_MAX, "%s: finish failed", name);
  return bytes;
}

static char *disassemble(const uint8_t *bytes, size_t size, size_t *len) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  loom_status st = loom_file_parse(bytes, size, "asm-out.loom", &f, msg);
  FUZZ_CHECK(st == LOOM_OK, "the assembler wrote a file the parser refuses: %s", msg);
  char *text = NULL;
  FILE *out = open_memstream(&text, len);
  FUZZ_CHECK(out != NULL, "open_memstream");
  st = loom_disasm(&f, out, msg);
  FUZZ_CHECK(st == LOOM_OK, "disasm failed: %s", msg);
  fclose(out);
  loom_file_free(&f);
  return text;
}

/* 1 when a .zero or const line names a number past the cap. */
static int asks_for_huge_data(const char *p, size_t n) {
  size_t line = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i < n && p[i] != '\n') continue;
    char buf[256];
    size_t len = i - line < sizeof buf - 1 ? i - line : sizeof buf - 1;
    memcpy(buf, p + line, len);
    buf[len] = 0;
    for (char *c = buf; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    if (strstr(buf, ".zero") || strstr(buf, "const"))
      for (char *c = buf; *c; c++)
        if (*c >= '0' && *c <= '9' && strtoull(c, NULL, 0) > FUZZ_ASM_MAX_BYTES) return 1;
    line = i + 1;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char msg[LOOM_MSG_MAX] = "";
  if (asks_for_huge_data((const char *)data, size)) return 0;
  size_t n1 = 0, n2 = 0, tlen = 0;
  uint8_t *first = assemble((const char *)data, size, "fuzz.s", &n1, msg);
  if (!first) {
    FUZZ_CHECK(fuzz_names_file(msg, "fuzz.s"), "message '%s'", msg);
    return 0;
  }
  if (n1 > FUZZ_ASM_MAX_BYTES) {
    free(first);
    return 0;
  }
  char *text = disassemble(first, n1, &tlen);
  uint8_t *second = assemble(text, tlen, "listing.s", &n2, msg);
  FUZZ_CHECK(second != NULL, "the listing does not assemble: %s\n--- listing ---\n%s", msg, text);
  FUZZ_CHECK(n1 == n2 && !memcmp(first, second, n1),
             "disassemble + assemble changed the bytes (%zu -> %zu)\n--- listing ---\n%s", n1, n2,
             text);
  free(first);
  free(second);
  free(text);
  return 0;
}
