/*
 * loomfile_kernels.c - validation of KERNELS (format 1.3): the ONNX
 * operators a model runs on the host kernels.
 *
 * A record names its op (STRTAB), the opset whose semantics apply, and
 * two arrays in DATA: the tensor indices of its operands and results, and
 * its attributes (struct loom_file_kattr), whose lists and strings point
 * further into DATA and STRTAB.  Everything a runtime will follow is
 * checked here, in record order and field by field, so that the runtime can
 * build a kernel call from the parsed file without another bounds check:
 * every offset inside DATA and aligned for its element type, every tensor
 * index valid (results present and plain, operands plain or absent),
 * counts bounded, every string a STRTAB string, reserved fields 0.
 * docs/format.md is the normative text.
 */
#include "loomfile_int.h"

#include <inttypes.h>
#include <stddef.h>

#include "kernel.h"

/* [off, off + n * size) inside DATA and `align`-aligned. */
static int data_range_ok(const struct loom_file *f, uint64_t off, uint64_t n, uint64_t size, uint64_t align) {
  uint64_t bytes, end;
  return off % align == 0 && !__builtin_mul_overflow(n, size, &bytes) && !__builtin_add_overflow(off, bytes, &end) &&
         end <= f->data_size;
}

/* Offset 0 (the empty string) or the start of a string of STRTAB. */
static int string_ok(const struct loom_file *f, uint64_t off) {
  return off == 0 || (off < f->strtab_size && lf_name_ok(f, (uint32_t)off));
}

static loom_status check_io(struct reader *r, uint32_t i, const struct loom_file_kernel *k, uint64_t at) {
  const struct loom_file *f = r->f;
  const uint32_t *io = loom_file_kernel_io(f, k);
  for (uint32_t j = 0; j < k->n_in + k->n_out; j++) {
    int result = j >= k->n_in;
    uint32_t t = io[j];
    if (t == LOOM_FILE_NO_BUFFER && !result) continue;
    if (t >= f->tensor_count)
      return lf_bad(r, at, "KERNELS %u: %s %u names tensor %u (the file has %u)", i, result ? "result" : "operand",
                    result ? j - k->n_in : j, t, f->tensor_count);
    if (f->tensors[t].layout != LOOM_LAYOUT_PLAIN)
      return lf_bad(r, at, "KERNELS %u: tensor %u is not plain (kernels read and write C order)", i, t);
  }
  return LOOM_OK;
}

/* The values of list attribute a: element size and alignment by kind. */
static loom_status check_list(struct reader *r, uint32_t i, uint32_t j, const struct loom_file_kattr *a, uint64_t at) {
  const struct loom_file *f = r->f;
  uint64_t es = a->kind == LOOM_KATTR_INTS ? 8 : 4;
  if (a->count > LOOM_FILE_KATTR_MAX_COUNT)
    return lf_bad(r, at + 8, "KERNELS %u: attribute %u has %" PRIu64 " values (at most %u)", i, j, a->count,
                  LOOM_FILE_KATTR_MAX_COUNT);
  if (!data_range_ok(f, a->value, a->count, es, es))
    return lf_bad(r, at + 16, "KERNELS %u: attribute %u: values at DATA offset %" PRIu64 " are outside DATA or"
                  " not %" PRIu64 "-byte aligned", i, j, a->value, es);
  if (a->kind == LOOM_KATTR_STRINGS) {
    const uint32_t *v = (const uint32_t *)(f->data + a->value);
    for (uint64_t n = 0; n < a->count; n++)
      if (!string_ok(f, v[n]))
        return lf_bad(r, at + 16, "KERNELS %u: attribute %u: string %" PRIu64 " is not a STRTAB string", i, j, n);
  }
  return LOOM_OK;
}

static loom_status check_attr(struct reader *r, uint32_t i, uint32_t j, const struct loom_file_kattr *a, uint64_t at) {
  const struct loom_file *f = r->f;
  if (!lf_name_ok(f, a->name))
    return lf_bad(r, at, "KERNELS %u: attribute %u: name %u is not the start of a non-empty string in STRTAB", i, j,
                  a->name);
  if (a->kind >= LOOM_KATTR_KIND_COUNT)
    return lf_bad(r, at + 4, "KERNELS %u: attribute %u: kind %u is not defined (0 int, 1 float, 2 string, 3 ints,"
                  " 4 floats, 5 strings, 6 tensor)", i, j, a->kind);
  if (a->reserved) return lf_bad(r, at + 24, "KERNELS %u: attribute %u: reserved field is not 0", i, j);
  switch (a->kind) {
  case LOOM_KATTR_INTS: case LOOM_KATTR_FLOATS: case LOOM_KATTR_STRINGS: return check_list(r, i, j, a, at);
  default: break;
  }
  if (a->count != 1) return lf_bad(r, at + 8, "KERNELS %u: attribute %u: count of a single value is not 1", i, j);
  if (a->kind == LOOM_KATTR_FLOAT && a->value >> 32)
    return lf_bad(r, at + 16, "KERNELS %u: attribute %u: float bits above 32", i, j);
  if (a->kind == LOOM_KATTR_STRING && !string_ok(f, a->value))
    return lf_bad(r, at + 16, "KERNELS %u: attribute %u: value %" PRIu64 " is not a STRTAB string", i, j, a->value);
  if (a->kind == LOOM_KATTR_TENSOR && a->value >= f->tensor_count)
    return lf_bad(r, at + 16, "KERNELS %u: attribute %u: tensor %" PRIu64 " does not exist (the file has %u)", i, j,
                  a->value, f->tensor_count);
  return LOOM_OK;
}

static loom_status check_kernel(struct reader *r, uint32_t i) {
  const struct loom_file *f = r->f;
  const struct loom_file_kernel *k = &f->kernels[i];
  loom_status st;
  if (!lf_name_ok(f, k->op))
    return lf_bad(r, lf_rec_off(r, LOOM_SEC_KERNELS, i, 0), "KERNELS %u: op %u is not the start of a non-empty"
                  " string in STRTAB", i, k->op);
  if (k->opset == 0) return lf_bad(r, lf_rec_off(r, LOOM_SEC_KERNELS, i, 4), "KERNELS %u: opset is 0", i);
  if (k->n_in > LOOM_FILE_KERNEL_MAX_IO || k->n_out == 0 || k->n_out > LOOM_FILE_KERNEL_MAX_IO)
    return lf_bad(r, lf_rec_off(r, LOOM_SEC_KERNELS, i, 8), "KERNELS %u: %u operands and %u results (1 to %d"
                  " results, at most %d operands)", i, k->n_in, k->n_out, LOOM_FILE_KERNEL_MAX_IO,
                  LOOM_FILE_KERNEL_MAX_IO);
  uint64_t io_at = lf_rec_off(r, LOOM_SEC_KERNELS, i, 16), attr_at = lf_rec_off(r, LOOM_SEC_KERNELS, i, 24);
  if (!data_range_ok(f, k->io_offset, (uint64_t)k->n_in + k->n_out, 4, 4))
    return lf_bad(r, io_at, "KERNELS %u: the tensor list at DATA offset %" PRIu64 " is outside DATA or not"
                  " 4-byte aligned", i, k->io_offset);
  if ((st = check_io(r, i, k, io_at))) return st;
  if (k->n_attrs > LOOM_FILE_KERNEL_MAX_ATTRS || !data_range_ok(f, k->attr_offset, k->n_attrs, 32, 8))
    return lf_bad(r, attr_at, "KERNELS %u: %u attributes at DATA offset %" PRIu64 " are too many, outside DATA"
                  " or not 8-byte aligned", i, k->n_attrs, k->attr_offset);
  const struct loom_file_kattr *a = loom_file_kernel_attrs(f, k);
  uint64_t data_at = r->sec[LOOM_SEC_DATA].off + k->attr_offset;
  for (uint32_t j = 0; j < k->n_attrs; j++)
    if ((st = check_attr(r, i, j, &a[j], data_at + 32 * (uint64_t)j))) return st;
  if (k->flags & ~LOOM_FILE_KERNEL_DYNAMIC)
    return lf_bad(r, lf_rec_off(r, LOOM_SEC_KERNELS, i, 36), "KERNELS %u: flags 0x%x: only bit 0 (dynamic) is"
                  " defined", i, k->flags);
  if (k->reserved) return lf_bad(r, lf_rec_off(r, LOOM_SEC_KERNELS, i, 40), "KERNELS %u: reserved field is not 0", i);
  return LOOM_OK;
}

loom_status lf_check_kernels(struct reader *r) {
  loom_status st;
  if (!r->f->kernel_count) r->f->kernels = NULL;
  for (uint32_t i = 0; i < r->f->kernel_count; i++)
    if ((st = check_kernel(r, i))) return st;
  return LOOM_OK;
}
