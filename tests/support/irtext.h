/*
 * irtext.h - IR graphs from their text form, for the IR tests
 * (tests/unit/test_ir*.c): parse_ok() parses or fails the test.
 *
 * Static inline, so that it adds no symbol to the programs that link the
 * other test helpers.
 */
#ifndef LOOM_TEST_IRTEXT_H
#define LOOM_TEST_IRTEXT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sw_compiler/compiler.h"

static inline struct ir_graph *parse_ok(const char *text) {
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  if (!g) fail_msg("parse failed: %s", err.msg);
  return g;
}

#endif
