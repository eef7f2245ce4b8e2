/*
 * loomfile_records.c - the rules every .loom record obeys on its own: the
 * names and entry sizes of the section types, the checks of one BUFFERS or
 * TENSORS record (shared by the parser in loomfile.c and the assembler,
 * which refuses a bad record at its source line), and the decode check of
 * the instruction stream that the tools run up front
 * (loom_file_check_insns).  docs/format.md is the normative text.
 */
#include "loomfile.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "loom/isa.h"
#include "core.h"

_Static_assert(sizeof(struct loom_file_buffer) == 32, "BUFFERS record is 32 bytes");
_Static_assert(sizeof(struct loom_file_tensor) == 104, "TENSORS record is 104 bytes");
_Static_assert(offsetof(struct loom_file_tensor, dims) == 32, "tensor dims at 32");
_Static_assert(offsetof(struct loom_file_tensor, offset) == 80, "tensor offset at 80");
_Static_assert(offsetof(struct loom_file_tensor, scale) == 96, "tensor scale at 96");
_Static_assert(sizeof(struct loom_file_job) == 48, "JOBS record is 48 bytes");
_Static_assert(sizeof(struct loom_file_step) == 48, "STEPS record is 48 bytes");
_Static_assert(offsetof(struct loom_file_step, param_offset) == 32, "step params at 32");
_Static_assert(sizeof(struct loom_file_hostcode) == 32, "HOSTCODE header is 32 bytes");
_Static_assert(sizeof(struct loom_file_hostcode_entry) == 24, "HOSTCODE entry is 24 bytes");
_Static_assert(sizeof(struct loom_file_jobmeta) == 48, "JOBMETA record is 48 bytes");
_Static_assert(sizeof(struct loom_file_kernel) == 48, "KERNELS record is 48 bytes");
_Static_assert(sizeof(struct loom_file_kattr) == 32, "kernel attribute record is 32 bytes");
_Static_assert(sizeof(struct loom_file_signature) == 64, "SIGNATURE record is 64 bytes");

static const char *const section_names[LOOM_SEC_COUNT] = {
    [0] = "?",
    [LOOM_SEC_STRTAB] = "STRTAB",
    [LOOM_SEC_INSNS] = "INSNS",
    [LOOM_SEC_DATA] = "DATA",
    [LOOM_SEC_BUFFERS] = "BUFFERS",
    [LOOM_SEC_TENSORS] = "TENSORS",
    [LOOM_SEC_JOBS] = "JOBS",
    [LOOM_SEC_STEPS] = "STEPS",
    [LOOM_SEC_HOSTCODE] = "HOSTCODE",
    [LOOM_SEC_JOBMETA] = "JOBMETA",
    [LOOM_SEC_KERNELS] = "KERNELS",
    [LOOM_SEC_SIGNATURE] = "SIGNATURE",
};
_Static_assert(sizeof section_names / sizeof section_names[0] == LOOM_SEC_COUNT,
               "every section type needs a name");

static const uint32_t section_entry_sizes[LOOM_SEC_COUNT] = {
    [0] = 0,
    [LOOM_SEC_STRTAB] = 1,
    [LOOM_SEC_INSNS] = LOOM_INSN_BYTES,
    [LOOM_SEC_DATA] = 1,
    [LOOM_SEC_BUFFERS] = sizeof(struct loom_file_buffer),
    [LOOM_SEC_TENSORS] = sizeof(struct loom_file_tensor),
    [LOOM_SEC_JOBS] = sizeof(struct loom_file_job),
    [LOOM_SEC_STEPS] = sizeof(struct loom_file_step),
    [LOOM_SEC_HOSTCODE] = 1,
    [LOOM_SEC_JOBMETA] = sizeof(struct loom_file_jobmeta),
    [LOOM_SEC_KERNELS] = sizeof(struct loom_file_kernel),
    [LOOM_SEC_SIGNATURE] = sizeof(struct loom_file_signature),
};

const char *loom_section_name(uint32_t type) {
  return type < LOOM_SEC_COUNT ? section_names[type] : "?";
}

uint32_t loom_section_entry_size(uint32_t type) {
  return type < LOOM_SEC_COUNT ? section_entry_sizes[type] : 0;
}

/* ---- record checks shared with the assembler ---- */

static uint64_t elem_size(uint32_t dtype) {
  return dtype > LOOM_DT_INVALID && dtype < LOOM_DT_COUNT ? loom_dtype_size((loom_dtype)dtype) : 0;
}

/* Whether a file of minor version `minor` may store dtype dt. */
static int dtype_allowed(uint32_t dt, uint32_t minor) {
  return dt > LOOM_DT_INVALID && dt < (minor >= 3 ? LOOM_FILE_DT_COUNT_1_3 : LOOM_FILE_DT_COUNT);
}

static const char *dtype_text(uint32_t dt) {
  return dt < LOOM_DT_COUNT ? loom_dtype_short_names[dt] : "?";
}

/* a * b into *r; 0 when it overflows 64 bits. */
static int mul_ok(uint64_t a, uint64_t b, uint64_t *r) { return !__builtin_mul_overflow(a, b, r); }

/* Product of n factors into *r; 0 on overflow. */
static int product_ok(const uint64_t *f, int n, uint64_t *r) {
  uint64_t p = 1;
  for (int i = 0; i < n; i++)
    if (!mul_ok(p, f[i], &p)) return 0;
  *r = p;
  return 1;
}

/*   PLAIN  product(dims) * elemsize
 *   NCHWC  N * ceil(C/c) * H * W * c * elemsize      (rank 4)
 *   NC     N * ceil(C/c) * c * elemsize              (rank 2) */
uint64_t loom_file_tensor_bytes(const struct loom_file_tensor *t) {
  uint64_t es = elem_size(t->dtype), f[LOOM_MAX_RANK + 2], r;
  if (!es || t->rank > LOOM_MAX_RANK) return 0;
  for (uint32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] < 1) return 0;
    f[i] = (uint64_t)t->dims[i];
  }
  uint64_t c = t->layout_block;
  switch (t->layout) {
  case LOOM_LAYOUT_PLAIN:
    f[t->rank] = es;
    return product_ok(f, (int)t->rank + 1, &r) ? r : 0;
  case LOOM_LAYOUT_NCHWC:
    if (t->rank != 4 || c == 0) return 0;
    f[1] = (f[1] + c - 1) / c;
    f[4] = c;
    f[5] = es;
    return product_ok(f, 6, &r) ? r : 0;
  case LOOM_LAYOUT_NC:
    if (t->rank != 2 || c == 0) return 0;
    f[1] = (f[1] + c - 1) / c;
    f[2] = c;
    f[3] = es;
    return product_ok(f, 4, &r) ? r : 0;
  default: return 0;
  }
}

#define PROBLEM(off, ...) (*field = (off), snprintf(buf, 128, __VA_ARGS__), buf)

int loom_file_tensor_empty(const struct loom_file_tensor *t) {
  int zero = 0;
  if (t->layout != LOOM_LAYOUT_PLAIN || t->rank > LOOM_MAX_RANK) return 0;
  for (uint32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] < 0) return 0;
    zero |= t->dims[i] == 0;
  }
  return zero;
}

/* From 1.3 a plain tensor may have dims of 0 (no elements). */
static const char *tensor_dims_problem(const struct loom_file_tensor *t, uint32_t minor, uint32_t *field,
                                       char buf[128]) {
  int64_t least = minor >= 3 && t->layout == LOOM_LAYOUT_PLAIN ? 0 : 1;
  for (uint32_t i = 0; i < LOOM_MAX_RANK; i++) {
    uint32_t off = (uint32_t)offsetof(struct loom_file_tensor, dims) + 8 * i;
    if (i < t->rank && t->dims[i] < least)
      return PROBLEM(off, "dims[%u] = %" PRId64 " is %s", i, t->dims[i], least ? "not positive" : "negative");
    if (i >= t->rank && t->dims[i] != 0)
      return PROBLEM(off, "dims[%u] = %" PRId64 " is beyond rank %u and not 0", i, t->dims[i],
                     t->rank);
  }
  return NULL;
}

static const char *tensor_layout_problem(const struct loom_file_tensor *t, uint32_t *field,
                                         char buf[128]) {
  uint32_t block = (uint32_t)offsetof(struct loom_file_tensor, layout_block);
  uint32_t rank = (uint32_t)offsetof(struct loom_file_tensor, rank);
  switch (t->layout) {
  case LOOM_LAYOUT_PLAIN:
    if (t->layout_block) return PROBLEM(block, "layout_block %u of a plain tensor is not 0", t->layout_block);
    return NULL;
  case LOOM_LAYOUT_NCHWC:
    if (t->rank != 4) return PROBLEM(rank, "rank %u: the nchwc layout needs rank 4", t->rank);
    if (!t->layout_block) return PROBLEM(block, "layout_block is 0 for the nchwc layout");
    return NULL;
  case LOOM_LAYOUT_NC:
    if (t->rank != 2) return PROBLEM(rank, "rank %u: the nc layout needs rank 2", t->rank);
    if (!t->layout_block) return PROBLEM(block, "layout_block is 0 for the nc layout");
    return NULL;
  default:
    return PROBLEM((uint32_t)offsetof(struct loom_file_tensor, layout),
                   "layout %u is not defined (0 plain, 1 nchwc, 2 nc)", t->layout);
  }
}

/* A stored integer tensor may be presented to the user as f32 (quantized:
 * scale > 0); otherwise the user sees the stored type. */
static const char *tensor_quant_problem(const struct loom_file_tensor *t, uint32_t *field,
                                        char buf[128]) {
  uint32_t ud = (uint32_t)offsetof(struct loom_file_tensor, user_dtype);
  uint32_t zp = (uint32_t)offsetof(struct loom_file_tensor, zero_point);
  if (!isfinite(t->scale) || signbit(t->scale))
    return PROBLEM((uint32_t)offsetof(struct loom_file_tensor, scale),
                   "scale %g is not a finite number >= 0", (double)t->scale);
  if (t->user_dtype != t->dtype &&
      (t->user_dtype != LOOM_DT_F32 || t->dtype == LOOM_DT_F32 || !(t->scale > 0)))
    return PROBLEM(ud, "user_dtype %s differs from dtype %s (only f32 over a quantized integer "
                   "dtype with scale > 0 may differ)", dtype_text(t->user_dtype), dtype_text(t->dtype));
  if (t->zero_point && !(t->scale > 0))
    return PROBLEM(zp, "zero_point %d without a scale", t->zero_point);
  if (t->scale > 0 && t->dtype != LOOM_DT_I8 && t->dtype != LOOM_DT_U8 && t->dtype != LOOM_DT_I32)
    return PROBLEM((uint32_t)offsetof(struct loom_file_tensor, scale),
                   "scale %g on a %s tensor (only i8, u8 and i32 are quantized)", (double)t->scale, dtype_text(t->dtype));
  if ((t->dtype == LOOM_DT_I8 && (t->zero_point < -128 || t->zero_point > 127)) ||
      (t->dtype == LOOM_DT_U8 && (t->zero_point < 0 || t->zero_point > 255)) ||
      (t->dtype == LOOM_DT_F32 && t->zero_point))
    return PROBLEM(zp, "zero_point %d is outside the range of %s", t->zero_point, dtype_text(t->dtype));
  return NULL;
}

static const char *tensor_size_problem(const struct loom_file_tensor *t, uint64_t buffer_size,
                                       uint32_t *field, char buf[128]) {
  uint64_t want = loom_file_tensor_bytes(t), end;
  if (!want && !loom_file_tensor_empty(t))
    return PROBLEM((uint32_t)offsetof(struct loom_file_tensor, dims),
                   "the stored size of dims overflows 64 bits");
  if (t->bytes != want)
    return PROBLEM((uint32_t)offsetof(struct loom_file_tensor, bytes),
                   "bytes %" PRIu64 " does not match dtype, layout and dims (%" PRIu64 ")",
                   t->bytes, want);
  if (__builtin_add_overflow(t->offset, t->bytes, &end) || end > buffer_size)
    return PROBLEM((uint32_t)offsetof(struct loom_file_tensor, offset),
                   "offset %" PRIu64 " + bytes %" PRIu64 " exceeds its buffer (%" PRIu64 " bytes)",
                   t->offset, t->bytes, buffer_size);
  return NULL;
}

const char *loom_file_tensor_problem(const struct loom_file_tensor *t, uint64_t buffer_size,
                                     uint32_t *field, char buf[128]) {
  return loom_file_tensor_problem_v(t, buffer_size, LOOM_FILE_VERSION_MINOR, field, buf);
}

static const char *dtype_problem(uint32_t dt, uint32_t minor, uint32_t off, const char *what, uint32_t *field,
                                 char buf[128]) {
  if (dtype_allowed(dt, minor)) return NULL;
  if (dtype_allowed(dt, LOOM_FILE_VERSION_MINOR))
    return PROBLEM(off, "%s %s needs format version 1.3, the file is 1.%u", what, dtype_text(dt), minor);
  return PROBLEM(off, "%s %u is not defined (1 i8, 2 u8, 3 i32, 4 f32; 5..%d from 1.3)", what, dt, LOOM_DT_COUNT - 1);
}

const char *loom_file_tensor_problem_v(const struct loom_file_tensor *t, uint64_t buffer_size, uint32_t minor,
                                       uint32_t *field, char buf[128]) {
  const char *p;
  if (t->role >= LOOM_ROLE_COUNT)
    return PROBLEM((uint32_t)offsetof(struct loom_file_tensor, role),
                   "role %u is not defined (0 internal, 1 input, 2 output)", t->role);
  if ((p = dtype_problem(t->dtype, minor, (uint32_t)offsetof(struct loom_file_tensor, dtype), "dtype", field, buf)))
    return p;
  if ((p = dtype_problem(t->user_dtype, minor, (uint32_t)offsetof(struct loom_file_tensor, user_dtype), "user_dtype",
                         field, buf)))
    return p;
  if (t->rank > LOOM_MAX_RANK)
    return PROBLEM((uint32_t)offsetof(struct loom_file_tensor, rank), "rank %u exceeds %d",
                   t->rank, LOOM_MAX_RANK);
  if ((p = tensor_dims_problem(t, minor, field, buf))) return p;
  if ((p = tensor_layout_problem(t, field, buf))) return p;
  if ((p = tensor_quant_problem(t, field, buf))) return p;
  return tensor_size_problem(t, buffer_size, field, buf);
}

const char *loom_file_buffer_problem(const struct loom_file_buffer *b, uint64_t data_size,
                                     uint32_t *field, char buf[128]) {
  uint64_t end;
  if (b->kind >= LOOM_BUFKIND_COUNT)
    return PROBLEM((uint32_t)offsetof(struct loom_file_buffer, kind),
                   "kind %u is not defined (0 const, 1 work)", b->kind);
  if (b->size == 0 || b->size > LOOM_FILE_MAX_SIZE)
    return PROBLEM((uint32_t)offsetof(struct loom_file_buffer, size),
                   "size %" PRIu64 " is not in 1..%" PRIu64, b->size, LOOM_FILE_MAX_SIZE);
  if (b->align < 64 || (b->align & (b->align - 1)))
    return PROBLEM((uint32_t)offsetof(struct loom_file_buffer, align),
                   "align %u is not a power of two >= 64", b->align);
  if (b->reserved)
    return PROBLEM((uint32_t)offsetof(struct loom_file_buffer, reserved),
                   "reserved field is %u, not 0", b->reserved);
  uint32_t doff = (uint32_t)offsetof(struct loom_file_buffer, data_offset);
  if (b->kind == LOOM_BUFKIND_WORK && b->data_offset)
    return PROBLEM(doff, "data_offset %" PRIu64 " of a work buffer is not 0", b->data_offset);
  if (b->kind == LOOM_BUFKIND_CONST &&
      (__builtin_add_overflow(b->data_offset, b->size, &end) || end > data_size))
    return PROBLEM(doff, "data [%" PRIu64 ", +%" PRIu64 ") is outside DATA (%" PRIu64 " bytes)",
                   b->data_offset, b->size, data_size);
  return NULL;
}

#undef PROBLEM

/* The first job whose range holds instruction `i`, or -1. */
static long job_of(const struct loom_file *f, uint32_t i) {
  for (uint32_t j = 0; j < f->job_count; j++)
    if (i >= f->jobs[j].insn_first && i - f->jobs[j].insn_first < f->jobs[j].insn_count) return j;
  return -1;
}

loom_status loom_file_check_insns(const struct loom_file *f, const char *name,
                                  char msg[LOOM_MSG_MAX]) {
  for (uint32_t i = 0; i < f->insn_count; i++) {
    const uint8_t *b = f->insns + (size_t)i * LOOM_INSN_BYTES;
    struct loom_insn d;
    const char *why = "?";
    if (loom_insn_decode(b, &d, &why) == LOOM_ERR_NONE) continue;
    if (!msg) return LOOM_E_FORMAT;
    uint64_t off = (uint64_t)(b - (const uint8_t *)f->storage);
    long j = job_of(f, i);
    char where[64] = "";
    if (j >= 0)
      snprintf(where, sizeof where, " (job %ld, instruction %u of the job)", j,
               i - f->jobs[j].insn_first);
    snprintf(msg, LOOM_MSG_MAX, "%s: offset 0x%" PRIx64 ": instruction %u%s is illegal: %s",
             name ? name : "<memory>", off, i, where, why);
    return LOOM_E_FORMAT;
  }
  return LOOM_OK;
}

/* ---- KERNELS (1.3) ---- */

const uint32_t *loom_file_kernel_io(const struct loom_file *f, const struct loom_file_kernel *k) {
  return (const uint32_t *)(f->data + k->io_offset);
}

const struct loom_file_kattr *loom_file_kernel_attrs(const struct loom_file *f, const struct loom_file_kernel *k) {
  return (const struct loom_file_kattr *)(f->data + k->attr_offset);
}
