/*
 * fuzz.h - what the fuzz targets share.
 *
 * Each target (fuzz_*.c) defines LLVMFuzzerTestOneInput and is linked two
 * ways: with libFuzzer (clang -fsanitize=fuzzer, `make fuzz`, into
 * build-fuzz/), and with fuzz_main.c, a plain main() that replays files,
 * built by the ordinary compiler (`make`, `make SAN=1`) so CI replays the
 * seed corpora and every regression input under tests/regress/ without
 * clang.
 *
 * FUZZ_CHECK states a property that must hold for every input (a round
 * trip, a message format).  A violation prints what broke and aborts,
 * which libFuzzer records as a crash with the input that caused it.
 */
#ifndef LOOM_FUZZ_H
#define LOOM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                        \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s:%d: property violated: %s\n  ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                  \
      fputc('\n', stderr);                                                           \
      abort();                                                                       \
    }                                                                                \
  } while (0)

/* A user-input error must read "NAME: ...": the file first (STYLE.md). */
static inline int fuzz_names_file(const char *msg, const char *name) {
  size_t n = strlen(name);
  return msg[0] && strncmp(msg, name, n) == 0 && msg[n] == ':';
}

#endif
