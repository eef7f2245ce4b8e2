/*
 * fuzz_hostcode.c - libFuzzer target for the checks a native-code image
 * passes before the runtime dlopens it (driver/core/hostcode_elf.c).
 *
 * The input is an ELF image as a .loom file's HOSTCODE carries it.  The
 * checks read hostile bytes (program headers, the dynamic section at its
 * virtual address, both hash tables, symbols, relocations) and must never
 * read outside them; ASan says so.  Properties checked on every input:
 *   - a refusal gives a non-empty reason, and the same one twice (the checks
 *     depend on the bytes alone);
 *   - an image the checks accept has a machine the header parser accepts.
 * The image is never loaded: accepting means "no code runs at dlopen", not
 * "safe to call", and the fuzzer does not test the dynamic loader.
 */
#include "fuzz.h"

#include "driver/core/hostcode_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[128] = "", again[128] = "";
  struct loom_hostcode_machine m;
  int machine = loom_hostcode_elf_machine(data, size, &m, why);
  FUZZ_CHECK(machine == 0 || why[0], "machine refused without a reason");
  int rc = loom_hostcode_elf_check(data, size, why);
  FUZZ_CHECK(rc == 0 || why[0], "image refused without a reason");
  FUZZ_CHECK(loom_hostcode_elf_check(data, size, again) == rc && (rc == 0 || !strcmp(why, again)),
             "two checks of the same bytes differ: '%s' vs '%s'", why, again);
  FUZZ_CHECK(rc != 0 || machine == 0, "accepted an image whose header is refused");
  return 0;
}
