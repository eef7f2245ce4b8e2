/*
 * kernel_registry.c - finding and running a host kernel by ONNX op type,
 * and reading a node's attributes.
 *
 * The registry is the concatenation of the family tables (each
 * kernels_<family>.c exports one, NULL-terminated).  An op type appears in
 * exactly one family (test_kernels_registry checks it).  loom_kernel_run is
 * the one entry the compiler and the runtime call: it checks the form of
 * the call (counts, ranks, dims, data pointers, the opset) so no kernel has
 * to, then hands over to the kernel, which checks the meaning.
 */
#include <string.h>

#include "kernel_util.h"

static const struct loom_kernel *const families[] = {
    loom_kernels_unary,  loom_kernels_binary, loom_kernels_variadic, loom_kernels_cast,
    loom_kernels_reduce, loom_kernels_softmax, loom_kernels_norm,    loom_kernels_shape,
    loom_kernels_move,   loom_kernels_index,  loom_kernels_select,   loom_kernels_resize,
    loom_kernels_sample, loom_kernels_matmul, loom_kernels_conv,     loom_kernels_pool,
    loom_kernels_rnn,    loom_kernels_quant,  loom_kernels_linalg,   loom_kernels_signal,
    loom_kernels_text,
};
#define N_FAMILIES (int)(sizeof families / sizeof families[0])

const struct loom_kernel *loom_kernel_find(const char *op) {
  if (!op) return NULL;
  for (int f = 0; f < N_FAMILIES; f++)
    for (const struct loom_kernel *k = families[f]; k->op; k++)
      if (!strcmp(k->op, op)) return k;
  return NULL;
}

int loom_kernel_count(void) {
  int n = 0;
  for (int f = 0; f < N_FAMILIES; f++)
    for (const struct loom_kernel *k = families[f]; k->op; k++) n++;
  return n;
}

const struct loom_kernel *loom_kernel_at(int i) {
  for (int f = 0; f < N_FAMILIES && i >= 0; f++)
    for (const struct loom_kernel *k = families[f]; k->op; k++)
      if (i-- == 0) return k;
  return NULL;
}

/* The form of one operand: a known dtype, rank and dims in range, no
 * overflowing element count, data for every element. */
static loom_status check_operand(const struct loom_kcall *c, const struct loom_kt *t,
                                 const char *side, int i) {
  if (!loom_kt_present(t)) return LOOM_OK;
  if ((unsigned)t->dtype >= LOOM_DT_COUNT)
    return KFAIL(c, LOOM_E_INVALID, "%s %d has an unknown dtype %d", side, i, (int)t->dtype);
  if (t->rank < 0 || t->rank > LOOM_KT_MAX_RANK)
    return KFAIL(c, LOOM_E_UNSUPPORTED, "%s %d has rank %d (at most %d)", side, i, t->rank,
                 LOOM_KT_MAX_RANK);
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++) {
    if (t->dims[d] < 0)
      return KFAIL(c, LOOM_E_INVALID, "%s %d has a negative dimension", side, i);
    if (t->dims[d] && n > INT64_MAX / 16 / t->dims[d])
      return KFAIL(c, LOOM_E_INVALID, "%s %d has too many elements", side, i);
    n *= t->dims[d];
  }
  if (n > 0 && !t->data) return KFAIL(c, LOOM_E_INVALID, "%s %d has no data", side, i);
  return LOOM_OK;
}

/* An attribute carries the value its kind says. */
static int attr_ok(const struct loom_kattr *a) {
  if (!a->name || (unsigned)a->kind >= LOOM_KATTR_KIND_COUNT || a->n < 0) return 0;
  switch (a->kind) {
  case LOOM_KATTR_STRING: return a->s != NULL;
  case LOOM_KATTR_INTS: return !a->n || a->ints;
  case LOOM_KATTR_FLOATS: return !a->n || a->floats;
  case LOOM_KATTR_STRINGS: return !a->n || a->strings;
  case LOOM_KATTR_TENSOR: return a->t && loom_kt_present(a->t) && a->t->rank >= 0 &&
                                 a->t->rank <= LOOM_KT_MAX_RANK && (a->t->data || !loom_kt_numel(a->t));
  default: return 1;
  }
}

loom_status loom_kernel_run(const struct loom_kcall *c) {
  if (!c || !c->msg) return LOOM_E_INVALID;
  c->msg[0] = 0;
  const struct loom_kernel *k = loom_kernel_find(c->op);
  if (!k)
    return KFAIL(c, LOOM_E_UNSUPPORTED, "no host kernel for op %s", c->op ? c->op : "(null)");
  if (c->opset < 1 || c->opset > 17)
    return KFAIL(c, LOOM_E_UNSUPPORTED, "opset %d is outside the versions Loom's kernels know (1..17)",
                 c->opset);
  if (c->n_in < 0 || c->n_in > LOOM_KERNEL_MAX_IO || c->n_out < 0 ||
      c->n_out > LOOM_KERNEL_MAX_IO)
    return KFAIL(c, LOOM_E_UNSUPPORTED, "%d inputs and %d outputs (at most %d each)", c->n_in,
                 c->n_out, LOOM_KERNEL_MAX_IO);
  if ((c->n_in && !c->in) || (c->n_out && !c->out) || (c->n_attrs && !c->attrs) ||
      c->n_attrs < 0)
    return KFAIL(c, LOOM_E_INVALID, "operand or attribute array missing");
  loom_status st = LOOM_OK;
  for (int i = 0; i < c->n_in && st == LOOM_OK; i++) st = check_operand(c, &c->in[i], "input", i);
  for (int i = 0; i < c->n_out && st == LOOM_OK; i++)
    st = check_operand(c, &c->out[i], "output", i);
  for (int i = 0; i < c->n_attrs && st == LOOM_OK; i++)
    if (!attr_ok(&c->attrs[i])) st = KFAIL(c, LOOM_E_INVALID, "attribute %d is malformed", i);
  if (st != LOOM_OK) return st;
  return k->fn(c);
}

loom_status loom_kernel_capacity(const struct loom_kcall *c, int k, struct loom_kt *out) {
  if (!c || !c->msg || !out) return LOOM_E_INVALID;
  const struct loom_kernel *kern = loom_kernel_find(c->op);
  if (!kern || !(kern->flags & LOOM_KERNEL_DYNAMIC))
    return KFAIL(c, LOOM_E_INVALID, "%s has no data-dependent output", c->op ? c->op : "(null)");
  if (k < 0 || k >= c->n_out || c->n_in < 1 || !c->in || !loom_kt_present(&c->in[0]) || c->in[0].rank < 0 ||
      c->in[0].rank > LOOM_KT_MAX_RANK)
    return KFAIL(c, LOOM_E_INVALID, "no input or output %d to bound", k);
  return kern->capacity(c, k, out);
}

/* ---- attributes ---- */

const struct loom_kattr *loom_kattr_find(const struct loom_kcall *c, const char *name) {
  for (int i = 0; i < c->n_attrs; i++)
    if (!strcmp(c->attrs[i].name, name)) return &c->attrs[i];
  return NULL;
}

int64_t loom_kattr_int(const struct loom_kcall *c, const char *name, int64_t dflt) {
  const struct loom_kattr *a = loom_kattr_find(c, name);
  return a && a->kind == LOOM_KATTR_INT ? a->i : dflt;
}

float loom_kattr_float(const struct loom_kcall *c, const char *name, float dflt) {
  const struct loom_kattr *a = loom_kattr_find(c, name);
  if (a && a->kind == LOOM_KATTR_FLOAT) return a->f;
  if (a && a->kind == LOOM_KATTR_INT) return (float)a->i;
  return dflt;
}

const char *loom_kattr_string(const struct loom_kcall *c, const char *name, const char *dflt) {
  const struct loom_kattr *a = loom_kattr_find(c, name);
  return a && a->kind == LOOM_KATTR_STRING && a->s ? a->s : dflt;
}

int loom_kattr_ints(const struct loom_kcall *c, const char *name, const int64_t **v) {
  const struct loom_kattr *a = loom_kattr_find(c, name);
  if (!a || a->kind != LOOM_KATTR_INTS) return -1;
  *v = a->ints;
  return a->n;
}

int loom_kattr_floats(const struct loom_kcall *c, const char *name, const float **v) {
  const struct loom_kattr *a = loom_kattr_find(c, name);
  if (!a || a->kind != LOOM_KATTR_FLOATS) return -1;
  *v = a->floats;
  return a->n;
}
