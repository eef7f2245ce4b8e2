/*
 * compile_inputs.c - fixing the model's input shapes (loom compile
 * --input-shape NAME=D0,D1,...).
 *
 * Models from exporters that allow dynamic axes leave some dimensions of
 * their inputs symbolic ("batch", "sequence", "DynamicDimension.0").  A
 * compiled model has one shape per tensor, so every such dimension must be
 * given.  A shape given for an input replaces its declared dims: where the
 * model declares a number, the given one must equal it; the rank must be the
 * declared one.  After that every input dimension must be known, and the
 * first that is not is refused with a message naming the input, the
 * dimension (by index and by the model's name for it) and the flag, with an
 * example of the flag filled in from what is known.
 */
#include <stdio.h>
#include <string.h>

#include "sw_compiler/compile.h"

static const char *dim_name(const struct ir_graph *g, int t, int d) {
  for (int i = 0; i < g->n_dim_names; i++)
    if (g->dim_names[i].tensor == t && g->dim_names[i].dim == d) return g->dim_names[i].name;
  return "";
}

static int apply(struct ir_graph *g, const struct compile_input_shape *s, struct ir_error *err) {
  int t = ir_tensor_find(g, s->name);
  if (t < 0 || !g->tensors[t].is_input) {
    char names[300] = "";
    size_t n = 0;
    for (int i = 0; i < g->n_inputs && n < sizeof names; i++)
      n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", g->tensors[g->inputs[i]].name);
    return ir_fail_at(err, g->source, NULL, "--input-shape %s: the model has no input '%s' (its inputs: %s)", s->name,
                      s->name, names);
  }
  struct ir_tensor *x = &g->tensors[t];
  if (x->rank >= 0 && x->rank != s->rank)
    return ir_fail_at(err, g->source, NULL, "--input-shape %s: %d dimensions given, the input has %d", s->name, s->rank,
                      x->rank);
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 1 || s->dims[i] > IR_MAX_DIM)
      return ir_fail_at(err, g->source, NULL, "--input-shape %s: dimension %d is %lld, must be 1 to %lld", s->name, i,
                        (long long)s->dims[i], (long long)IR_MAX_DIM);
    if (x->rank >= 0 && x->dims[i] >= 0 && x->dims[i] != s->dims[i])
      return ir_fail_at(err, g->source, NULL, "--input-shape %s: dimension %d is %lld in the model, not %lld", s->name,
                        i, (long long)x->dims[i], (long long)s->dims[i]);
  }
  x->rank = s->rank;
  memcpy(x->dims, s->dims, (size_t)s->rank * sizeof *x->dims);
  return 0;
}

/* "NAME=1,3,?,224" with the known dims, 1 in place of unknown ones. */
static void example(const struct ir_tensor *x, char *buf, size_t len) {
  size_t n = (size_t)snprintf(buf, len, "%s=", x->name);
  for (int i = 0; i < x->rank && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)(x->dims[i] >= 0 ? x->dims[i] : 1));
}

int compile_fix_inputs(struct ir_graph *g, const struct compile_input_shape *shapes, int n, struct ir_error *err) {
  for (int i = 0; i < n; i++)
    if (apply(g, &shapes[i], err)) return -1;
  for (int i = 0; i < g->n_inputs; i++) {
    const struct ir_tensor *x = &g->tensors[g->inputs[i]];
    char ex[256];
    if (x->rank < 0)
      return ir_fail_at(err, g->source, NULL, "input '%s' has no declared shape: give it with --input-shape %s=D0,D1,...",
                        x->name, x->name);
    for (int d = 0; d < x->rank; d++) {
      if (x->dims[d] >= 0) continue;
      const char *dn = dim_name(g, g->inputs[i], d);
      example(x, ex, sizeof ex);
      return ir_fail_at(err, g->source, NULL,
                        "input '%s': dimension %d%s%s%s is not fixed; give every dimension with --input-shape %s",
                        x->name, d, dn[0] ? " ('" : "", dn, dn[0] ? "')" : "", ex);
    }
  }
  return 0;
}
