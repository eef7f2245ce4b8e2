/*
 * irtext.h - IR graphs from their text form, for the IR tests
 * (tests/unit/test_ir*.c, test_pass_*.c): parse_ok() parses or fails the
 * test, eval_ok() runs a graph of one input on the reference interpreter.
 *
 * Static inline, so that it adds no symbol to the programs that link the
 * other test helpers.
 */
#ifndef LOOM_TEST_IRTEXT_H
#define LOOM_TEST_IRTEXT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sw_compiler/compiler.h"

static inline struct ir_graph *parse_ok(const char *text) {
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  if (!g) fail_msg("parse failed: %s", err.msg);
  return g;
}

/* Infers shapes, runs g on one input x (dense, its dtype) and returns
 * output 0 (malloc'd), or fails the test. */
static inline void *eval_ok(struct ir_graph *g, const void *x) {
  struct ir_error err = {{0}};
  if (ir_pass_shape_infer(g, &err)) fail_msg("%s", err.msg);
  void *outs[4] = {0};
  const void *ins[1] = {x};
  if (ir_eval_ref(g, ins, outs, &err)) fail_msg("%s", err.msg);
  for (int i = 1; i < g->n_outputs; i++) free(outs[i]);
  return outs[0];
}

#endif
