/*
 * status.c - the names of statuses and data types, the one helper every
 * layer formats its error messages with, and the report of a broken
 * invariant.
 *
 * Three kinds of error are kept apart (STYLE.md): user input gets a status
 * code and a message (loom_fail); a bug in Loom stops the process with file
 * and line (LOOM_ASSERT); kernel code has its own errno ladder.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core.h"

static const char *const status_names[] = {
    [LOOM_OK] = "OK",
    [LOOM_E_INVALID] = "INVALID",
    [LOOM_E_NOMEM] = "NOMEM",
    [LOOM_E_IO] = "IO",
    [LOOM_E_FORMAT] = "FORMAT",
    [LOOM_E_CONFIG] = "CONFIG",
    [LOOM_E_JOB] = "JOB",
    [LOOM_E_TIMEOUT] = "TIMEOUT",
    [LOOM_E_UNSUPPORTED] = "UNSUPPORTED",
    [LOOM_E_NOTFOUND] = "NOTFOUND",
};
_Static_assert(sizeof status_names / sizeof status_names[0] == LOOM_STATUS_COUNT,
               "every loom_status needs a name");

/* NumPy-style names, as .npy headers and messages spell them. */
static const char *const dtype_names[] = {
    [LOOM_DT_INVALID] = "invalid", [LOOM_DT_I8] = "int8",     [LOOM_DT_U8] = "uint8",
    [LOOM_DT_I32] = "int32",       [LOOM_DT_F32] = "float32",  [LOOM_DT_I64] = "int64",
    [LOOM_DT_BOOL] = "bool",       [LOOM_DT_I16] = "int16",    [LOOM_DT_U16] = "uint16",
    [LOOM_DT_U32] = "uint32",      [LOOM_DT_U64] = "uint64",   [LOOM_DT_F16] = "float16",
    [LOOM_DT_BF16] = "bfloat16",   [LOOM_DT_F64] = "float64",
};
_Static_assert(sizeof dtype_names / sizeof dtype_names[0] == LOOM_DT_COUNT,
               "every loom_dtype needs a name");

static const unsigned char dtype_sizes[] = {
    [LOOM_DT_INVALID] = 0, [LOOM_DT_I8] = 1,  [LOOM_DT_U8] = 1,  [LOOM_DT_I32] = 4,
    [LOOM_DT_F32] = 4,     [LOOM_DT_I64] = 8, [LOOM_DT_BOOL] = 1, [LOOM_DT_I16] = 2,
    [LOOM_DT_U16] = 2,     [LOOM_DT_U32] = 4, [LOOM_DT_U64] = 8,  [LOOM_DT_F16] = 2,
    [LOOM_DT_BF16] = 2,    [LOOM_DT_F64] = 8,
};
_Static_assert(sizeof dtype_sizes == LOOM_DT_COUNT, "every loom_dtype needs a size");

/* Short names, as the assembler and the .loom messages spell them. */
const char *const loom_dtype_short_names[LOOM_DT_COUNT] = {
    [LOOM_DT_INVALID] = "-", [LOOM_DT_I8] = "i8",   [LOOM_DT_U8] = "u8",     [LOOM_DT_I32] = "i32",
    [LOOM_DT_F32] = "f32",   [LOOM_DT_I64] = "i64", [LOOM_DT_BOOL] = "bool", [LOOM_DT_I16] = "i16",
    [LOOM_DT_U16] = "u16",   [LOOM_DT_U32] = "u32", [LOOM_DT_U64] = "u64",   [LOOM_DT_F16] = "f16",
    [LOOM_DT_BF16] = "bf16", [LOOM_DT_F64] = "f64"};
_Static_assert(sizeof loom_dtype_short_names / sizeof loom_dtype_short_names[0] == LOOM_DT_COUNT,
               "every loom_dtype needs a short name");

const char *loom_status_name(loom_status s) {
  return (unsigned)s < LOOM_STATUS_COUNT ? status_names[s] : "?";
}

const char *loom_dtype_name(loom_dtype t) {
  return (unsigned)t < LOOM_DT_COUNT ? dtype_names[t] : "?";
}

size_t loom_dtype_size(loom_dtype t) { return (unsigned)t < LOOM_DT_COUNT ? dtype_sizes[t] : 0; }

loom_status loom_fail(char msg[LOOM_MSG_MAX], loom_status st, const char *fmt, ...) {
  if (msg) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, LOOM_MSG_MAX, fmt, ap);
    va_end(ap);
  }
  return st;
}

_Noreturn void loom_assert_fail(const char *file, int line, const char *what) {
  fprintf(stderr, "%s:%d: internal error (a bug in Loom): %s\n", file, line, what);
  abort();
}
