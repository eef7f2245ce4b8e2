/*
 * model_kernel.c - KERNEL steps of a model (format 1.3): an ONNX operator
 * run through the portable host kernels (driver/core/kernel.h).
 *
 * The step's KERNELS record names the op, the opset, the tensors (plain, in
 * mapped buffers) and the attributes (in DATA and STRTAB, all checked by the
 * parser); this file turns them into one loom_kcall.  Results of a kernel
 * flagged dynamic (NonZero, Unique, NonMaxSuppression, ...) arrive with
 * their descriptors' dims as a capacity; the kernel reports the dims it
 * wrote, and the model keeps them as the tensors' current dims for the
 * steps after it and for loom_model_output.  Writes are synced to the
 * device right after the step, as for every host step.
 */
#include <stdlib.h>
#include <string.h>

#include "driver/core/kernel.h"
#include "model_int.h"

/* A kernel step: its op must have a kernel here, its tensors be valid. */
loom_status model_check_kernel_step(loom_model *m, uint32_t i, const struct loom_file_step *s, char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = &m->file;
  if (s->index >= f->kernel_count) return model_bad(m, msg, "step", i, "runs an invalid kernel index");
  const struct loom_file_kernel *k = &f->kernels[s->index];
  const char *op = loom_file_string(f, k->op);
  if (!loom_kernel_find(op))
    return loom_fail(msg, LOOM_E_UNSUPPORTED, "%s: step %u: no kernel for op %s in this runtime", m->name, i, op);
  const uint32_t *io = loom_file_kernel_io(f, k);
  for (uint32_t j = 0; j < k->n_in + k->n_out; j++)
    if (io[j] != LOOM_FILE_NO_BUFFER && (io[j] >= f->tensor_count || f->tensors[io[j]].layout != LOOM_LAYOUT_PLAIN))
      return model_bad(m, msg, "step", i, "names an invalid or blocked tensor");
  return LOOM_OK;
}

static void kt_of(loom_model *m, uint32_t t, struct loom_kt *k) {
  const struct loom_file_tensor *d = &m->file.tensors[t];
  k->dtype = (loom_dtype)d->dtype;
  k->rank = (int)d->rank;
  memcpy(k->dims, m->dims[t], sizeof m->dims[t]); /* the .loom's ranks stop at LOOM_MAX_RANK */
  k->data = model_tensor_data(m, d);
}

/* The step's attributes as kernel attributes (strings from STRTAB, lists
 * from DATA, tensors from their buffers; the parser checked every offset). */
static void kattrs_of(loom_model *m, const struct loom_file_kernel *k, struct loom_kattr *ka, struct loom_kt *kts,
                      const char **strs) {
  const struct loom_file *f = &m->file;
  const struct loom_file_kattr *a = loom_file_kernel_attrs(f, k);
  for (uint32_t j = 0; j < k->n_attrs; j++) {
    struct loom_kattr *x = &ka[j];
    memset(x, 0, sizeof *x);
    x->name = loom_file_string(f, a[j].name);
    x->kind = (enum loom_kattr_kind)a[j].kind;
    x->n = (int)a[j].count;
    switch (a[j].kind) {
    case LOOM_KATTR_INT: x->i = (int64_t)a[j].value; break;
    case LOOM_KATTR_FLOAT: {
      uint32_t bits = (uint32_t)a[j].value;
      memcpy(&x->f, &bits, sizeof x->f);
      break;
    }
    case LOOM_KATTR_STRING: x->s = loom_file_string(f, (uint32_t)a[j].value); break;
    case LOOM_KATTR_INTS: x->ints = (const int64_t *)(f->data + a[j].value); break;
    case LOOM_KATTR_FLOATS: x->floats = (const float *)(f->data + a[j].value); break;
    case LOOM_KATTR_STRINGS: {
      const uint32_t *off = (const uint32_t *)(f->data + a[j].value);
      for (uint64_t n = 0; n < a[j].count; n++) strs[n] = loom_file_string(f, off[n]);
      x->strings = strs;
      strs += a[j].count;
      break;
    }
    case LOOM_KATTR_TENSOR: kt_of(m, (uint32_t)a[j].value, &kts[j]), x->t = &kts[j]; break;
    default: break;
    }
  }
}

static uint64_t string_count(const struct loom_file *f, const struct loom_file_kernel *k) {
  const struct loom_file_kattr *a = loom_file_kernel_attrs(f, k);
  uint64_t n = 0;
  for (uint32_t j = 0; j < k->n_attrs; j++)
    if (a[j].kind == LOOM_KATTR_STRINGS) n += a[j].count;
  return n;
}

/* Results of a dynamic kernel keep the dims it reports (never above the
 * capacity: a kernel that grew them is a broken kernel). */
static loom_status keep_dims(loom_model *m, uint32_t i, const struct loom_file_kernel *k, const uint32_t *io,
                             const struct loom_kt *out) {
  for (uint32_t j = 0; j < k->n_out; j++) {
    const struct loom_file_tensor *d = &m->file.tensors[io[k->n_in + j]];
    for (uint32_t a = 0; a < d->rank; a++)
      if (out[j].dims[a] < 0 || out[j].dims[a] > d->dims[a])
        return loom_fail(m->dev->msg, LOOM_E_INVALID, "step %u (%s): result %u dim %u is %lld, past its capacity %lld",
                         i, loom_file_string(&m->file, k->op), j, a, (long long)out[j].dims[a], (long long)d->dims[a]);
    memcpy(m->dims[io[k->n_in + j]], out[j].dims, sizeof m->dims[0]);
  }
  for (int o = 0; o < m->n_out; o++) memcpy(m->out[o].info.dims, m->dims[m->out[o].index], sizeof m->out[o].info.dims);
  return LOOM_OK;
}

loom_status model_run_kernel(loom_model *m, uint32_t i, const struct loom_file_step *s) {
  const struct loom_file *f = &m->file;
  const struct loom_file_kernel *k = &f->kernels[s->index];
  const uint32_t *io = loom_file_kernel_io(f, k);
  const char *op = loom_file_string(f, k->op);
  struct loom_kt *kt = calloc((size_t)k->n_in + k->n_out + k->n_attrs + 1, sizeof *kt);
  struct loom_kattr *ka = calloc((size_t)k->n_attrs + 1, sizeof *ka);
  const char **strs = calloc((size_t)string_count(f, k) + 1, sizeof *strs);
  if (!kt || !ka || !strs) {
    free(kt), free(ka), free(strs);
    return loom_fail(m->dev->msg, LOOM_E_NOMEM, "step %u (%s): out of memory", i, op);
  }
  for (uint32_t j = 0; j < k->n_in + k->n_out; j++) {
    if (io[j] == LOOM_FILE_NO_BUFFER) kt[j].dtype = LOOM_DT_INVALID;
    else kt_of(m, io[j], &kt[j]);
  }
  kattrs_of(m, k, ka, kt + k->n_in + k->n_out, strs);
  char why[LOOM_MSG_MAX] = "";
  struct loom_kcall call = {.op = op, .opset = (int)k->opset, .in = kt, .n_in = (int)k->n_in, .out = kt + k->n_in,
                            .n_out = (int)k->n_out, .attrs = ka, .n_attrs = (int)k->n_attrs, .msg = why};
  loom_status st = loom_kernel_run(&call);
  if (st != LOOM_OK) st = loom_fail(m->dev->msg, st, "step %u (%s): %s", i, op, why[0] ? why : loom_status_name(st));
  if (st == LOOM_OK && (k->flags & LOOM_FILE_KERNEL_DYNAMIC)) st = keep_dims(m, i, k, io, kt + k->n_in);
  for (uint32_t j = 0; j < k->n_out && st == LOOM_OK; j++)
    st = loom_buffer_sync(m->bufs[f->tensors[io[k->n_in + j]].buffer], LOOM_SYNC_TO_DEVICE);
  free(kt), free(ka), free(strs);
  return st;
}

