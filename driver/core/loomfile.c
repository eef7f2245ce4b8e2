/*
 * loomfile.c - reading and validating .loom files.
 *
 * A .loom file comes from anywhere (a download, a colleague, a fuzzer), and
 * what it describes reaches a DMA engine, so the parser trusts nothing:
 * every field of the header, the section table and every record is checked
 * before loom_file_parse returns, and a refusal names the file, the byte
 * offset of the offending field and what is wrong with it.  The order of
 * the checks is fixed: header, crc32, section table, then each section in
 * type order, then records that refer to other records (tensor -> buffer,
 * job -> INSNS and buffers, step -> jobs, tensors and DATA), then name
 * uniqueness, then HOSTCODE (format 1.1: native host code, whose entries
 * refer to steps), then JOBMETA (format 1.2: one record per job), then
 * KERNELS (format 1.3: host kernel steps, loomfile_kernels.c), then
 * SIGNATURE (format 1.4: its fields; the mac is the runtime's business,
 * hostcode_trust.c).  Each check only relies on fields checked before it, so
 * the arithmetic never sees an unchecked value; all of it is
 * overflow-checked and 64-bit.
 *
 * The parsed form points into one owned copy of the bytes: sections are
 * 8-byte aligned in the file and the copy is malloc-aligned, so records are
 * used in place.  That needs a little-endian host, which every platform Loom
 * targets is (x86-64, and ARM in its little-endian mode).
 *
 * Instruction bytes are not decoded here: a hostile stream is the hardware's
 * business (it stops with ILLEGAL), and a stream with an illegal instruction
 * is a valid way to test that.  loom_file_check_insns() (loomfile_records.c)
 * decodes them for the tools that want to know up front; the checks of
 * single records live there too.  docs/format.md is the normative
 * text for every rule below.
 */
#include "loomfile_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "loom/isa.h"
#include "readfile.h"
#include "core.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .loom reader uses records in place and needs a little-endian host"
#endif

/* ---- the parser ---- */


loom_status lf_bad(struct reader *r, uint64_t off, const char *fmt, ...) {
  if (!r->msg) return LOOM_E_FORMAT;
  int n = snprintf(r->msg, LOOM_MSG_MAX, "%s: offset 0x%" PRIx64 ": ", r->name, off);
  if (n < 0 || n >= LOOM_MSG_MAX) return LOOM_E_FORMAT;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->msg + n, (size_t)(LOOM_MSG_MAX - n), fmt, ap);
  va_end(ap);
  return LOOM_E_FORMAT;
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* A name for messages: printable ASCII, at most 40 characters. */
static const char *show(const char *s, char out[48]) {
  size_t i = 0;
  for (; s[i] && i < 40; i++) out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  if (s[i]) memcpy(out + 37, "...", 3);
  out[i] = 0;
  return out;
}

static loom_status check_header_fields(struct reader *r) {
  const uint8_t *p = r->p;
  uint32_t isa = rd32(p + LOOM_FILE_OFF_ISA_VERSION), flags = rd32(p + LOOM_FILE_OFF_FLAGS);
  if (isa != LOOM_ISA_VERSION)
    return lf_bad(r, LOOM_FILE_OFF_ISA_VERSION,
               "isa_version %u is not supported (this build implements ISA version %d; "
               "rebuild the program for it)", isa, LOOM_ISA_VERSION);
  if (flags) return lf_bad(r, LOOM_FILE_OFF_FLAGS, "flags 0x%x: no flags are defined (must be 0)", flags);
  for (unsigned i = LOOM_FILE_OFF_FLAGS + 4; i < LOOM_FILE_HEADER_SIZE; i++)
    if (p[i]) return lf_bad(r, i, "reserved header byte is 0x%02x, not 0", p[i]);
  return LOOM_OK;
}

static loom_status check_header(struct reader *r) {
  const uint8_t *p = r->p;
  if (memcmp(p, LOOM_FILE_MAGIC, 8)) return lf_bad(r, 0, "not a .loom file (bad magic)");
  unsigned major = rd16(p + LOOM_FILE_OFF_MAJOR);
  r->minor = rd16(p + LOOM_FILE_OFF_MINOR);
  if (major != LOOM_FILE_VERSION_MAJOR)
    return lf_bad(r, LOOM_FILE_OFF_MAJOR, "format version %u.%u is not supported (this reader reads %d.x)",
               major, r->minor, LOOM_FILE_VERSION_MAJOR);
  uint32_t hs = rd32(p + LOOM_FILE_OFF_HEADER_SIZE);
  if (hs != LOOM_FILE_HEADER_SIZE)
    return lf_bad(r, LOOM_FILE_OFF_HEADER_SIZE, "header_size %u is not %d", hs, LOOM_FILE_HEADER_SIZE);
  uint64_t fs = rd64(p + LOOM_FILE_OFF_FILE_SIZE);
  if (fs != r->size)
    return lf_bad(r, LOOM_FILE_OFF_FILE_SIZE, "file_size %" PRIu64 " does not match the file's %" PRIu64
               " bytes (truncated or padded?)", fs, r->size);
  uint32_t want = rd32(p + LOOM_FILE_OFF_CRC32);
  uint32_t got = (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), p + LOOM_FILE_CRC_START,
                                   (z_size_t)(r->size - LOOM_FILE_CRC_START));
  if (want != got)
    return lf_bad(r, LOOM_FILE_OFF_CRC32, "crc32 0x%08x does not match the contents (0x%08x)", want, got);
  return check_header_fields(r);
}

static loom_status check_table(struct reader *r, uint32_t *count) {
  const uint8_t *p = r->p;
  uint64_t tbl = rd64(p + LOOM_FILE_OFF_SECTION_TABLE), end;
  *count = rd32(p + LOOM_FILE_OFF_SECTION_COUNT);
  if (*count > LOOM_FILE_MAX_SECTIONS)
    return lf_bad(r, LOOM_FILE_OFF_SECTION_COUNT, "section_count %u exceeds %d", *count,
               LOOM_FILE_MAX_SECTIONS);
  if (tbl % 8)
    return lf_bad(r, LOOM_FILE_OFF_SECTION_TABLE, "section_table_offset 0x%" PRIx64
               " is not 8-byte aligned", tbl);
  if (tbl < LOOM_FILE_HEADER_SIZE)
    return lf_bad(r, LOOM_FILE_OFF_SECTION_TABLE, "section_table_offset 0x%" PRIx64
               " overlaps the header", tbl);
  if (__builtin_add_overflow(tbl, (uint64_t)*count * LOOM_FILE_SECTION_ENTRY_SIZE, &end) ||
      end > r->size)
    return lf_bad(r, LOOM_FILE_OFF_SECTION_TABLE, "section table (%u entries at 0x%" PRIx64
               ") extends past the end of the file", *count, tbl);
  r->table_end = end;
  return LOOM_OK;
}

/* A known section type, or an unknown one a newer writer may add.  A 1.0
 * file holds only the seven 1.0 types; from 1.1 on, a type this reader
 * does not know is skipped (the crc rules out a corrupted type field, so
 * it was written on purpose). */
static loom_status check_entry_type(struct reader *r, uint32_t i, uint64_t e, uint32_t type) {
  uint64_t tbl = rd64(r->p + LOOM_FILE_OFF_SECTION_TABLE);
  /* HOSTCODE came in 1.1, JOBMETA in 1.2, KERNELS in 1.3, SIGNATURE in 1.4 */
  uint32_t need = type > LOOM_SEC_STEPS && type < LOOM_SEC_COUNT ? type - LOOM_SEC_STEPS : 0;
  if (type == 0 || (type > LOOM_SEC_STEPS && r->minor == 0 && !need))
    return lf_bad(r, e, "section %u: type %u is not defined", i, type);
  if (r->minor < need)
    return lf_bad(r, e, "section %u: type %u (%s) needs format version 1.%u, the file is 1.%u", i, type,
               loom_section_name(type), need, r->minor);
  for (uint32_t j = 0; j < i; j++)
    if (rd32(r->p + tbl + (uint64_t)j * LOOM_FILE_SECTION_ENTRY_SIZE) == type)
      return lf_bad(r, e, "section %u: a second %s section (type %u; the first is section %u)", i,
                 loom_section_name(type), type, j);
  return LOOM_OK;
}

static loom_status check_entry_range(struct reader *r, uint32_t i, uint64_t e, uint32_t type,
                                     uint64_t off, uint64_t size) {
  uint64_t end;
  const char *tn = loom_section_name(type);
  if (off % 8)
    return lf_bad(r, e + 8, "section %u (%s): offset 0x%" PRIx64 " is not 8-byte aligned", i, tn, off);
  if (__builtin_add_overflow(off, size, &end) || end > r->size)
    return lf_bad(r, e + 8, "section %u (%s): offset 0x%" PRIx64 " + size 0x%" PRIx64
               " exceeds the file (0x%" PRIx64 " bytes)", i, tn, off, size, r->size);
  if (off < r->table_end)
    return lf_bad(r, e + 8, "section %u (%s): offset 0x%" PRIx64 " overlaps the header or the section"
               " table (which end at 0x%" PRIx64 ")", i, tn, off, r->table_end);
  return LOOM_OK;
}

static loom_status check_entry_records(struct reader *r, uint32_t i, uint64_t e, uint32_t type,
                                       uint64_t size) {
  uint32_t es = rd32(r->p + e + 24), want = loom_section_entry_size(type);
  const char *tn = loom_section_name(type);
  if (want ? es != want : es == 0)
    return lf_bad(r, e + 24, "section %u (%s): entry_size %u, expected %u", i, tn, es, want ? want : 1);
  if (size % es)
    return lf_bad(r, e + 16, "section %u (%s): size %" PRIu64 " is not a multiple of the %u-byte record",
               i, tn, size, es);
  if (rd32(r->p + e + 28))
    return lf_bad(r, e + 28, "section %u (%s): reserved field is not 0", i, tn);
  return LOOM_OK;
}

static loom_status check_entry(struct reader *r, uint32_t i) {
  uint64_t e = rd64(r->p + LOOM_FILE_OFF_SECTION_TABLE) + (uint64_t)i * LOOM_FILE_SECTION_ENTRY_SIZE;
  uint32_t type = rd32(r->p + e);
  uint64_t off = rd64(r->p + e + 8), size = rd64(r->p + e + 16);
  loom_status st;
  if ((st = check_entry_type(r, i, e, type))) return st;
  if (rd32(r->p + e + 4))
    return lf_bad(r, e + 4, "section %u (%s): flags are not 0", i, loom_section_name(type));
  if ((st = check_entry_range(r, i, e, type, off, size))) return st;
  if ((st = check_entry_records(r, i, e, type, size))) return st;
  if (type < LOOM_SEC_COUNT) r->sec[type] = (struct section){1, off, size};
  return LOOM_OK;
}

/* Non-empty sections may not share a byte (unknown types included). */
static loom_status check_overlaps(struct reader *r, uint32_t count) {
  uint64_t tbl = rd64(r->p + LOOM_FILE_OFF_SECTION_TABLE);
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *a = r->p + tbl + (uint64_t)i * LOOM_FILE_SECTION_ENTRY_SIZE;
    for (uint32_t j = 0; j < i; j++) {
      const uint8_t *b = r->p + tbl + (uint64_t)j * LOOM_FILE_SECTION_ENTRY_SIZE;
      uint64_t ao = rd64(a + 8), as = rd64(a + 16), bo = rd64(b + 8), bs = rd64(b + 16);
      if (as && bs && ao < bo + bs && bo < ao + as)
        return lf_bad(r, tbl + (uint64_t)i * LOOM_FILE_SECTION_ENTRY_SIZE + 8,
                   "section %u (%s) overlaps section %u (%s)", i, loom_section_name(rd32(a)), j,
                   loom_section_name(rd32(b)));
    }
  }
  return LOOM_OK;
}

static loom_status check_sections(struct reader *r) {
  uint32_t count;
  loom_status st;
  if ((st = check_table(r, &count))) return st;
  for (uint32_t i = 0; i < count; i++)
    if ((st = check_entry(r, i))) return st;
  if ((st = check_overlaps(r, count))) return st;
  if (!r->sec[LOOM_SEC_STRTAB].present)
    return lf_bad(r, LOOM_FILE_OFF_SECTION_COUNT, "the file has no STRTAB section");
  return LOOM_OK;
}

/* Points the loom_file's arrays into the copy. */
static void map_sections(struct reader *r) {
  struct loom_file *f = r->f;
  const struct section *s = r->sec;
#define COUNT(T, sz) ((uint32_t)(s[T].size / (sz)))
  f->strtab = (const char *)r->p + s[LOOM_SEC_STRTAB].off;
  f->strtab_size = s[LOOM_SEC_STRTAB].size;
  f->insns = r->p + s[LOOM_SEC_INSNS].off;
  f->insn_count = COUNT(LOOM_SEC_INSNS, LOOM_INSN_BYTES);
  f->data = r->p + s[LOOM_SEC_DATA].off;
  f->data_size = s[LOOM_SEC_DATA].size;
  f->buffers = (const struct loom_file_buffer *)(r->p + s[LOOM_SEC_BUFFERS].off);
  f->buffer_count = COUNT(LOOM_SEC_BUFFERS, sizeof(struct loom_file_buffer));
  f->tensors = (const struct loom_file_tensor *)(r->p + s[LOOM_SEC_TENSORS].off);
  f->tensor_count = COUNT(LOOM_SEC_TENSORS, sizeof(struct loom_file_tensor));
  f->jobs = (const struct loom_file_job *)(r->p + s[LOOM_SEC_JOBS].off);
  f->job_count = COUNT(LOOM_SEC_JOBS, sizeof(struct loom_file_job));
  f->steps = (const struct loom_file_step *)(r->p + s[LOOM_SEC_STEPS].off);
  f->step_count = COUNT(LOOM_SEC_STEPS, sizeof(struct loom_file_step));
  f->kernels = (const struct loom_file_kernel *)(r->p + s[LOOM_SEC_KERNELS].off);
  f->kernel_count = COUNT(LOOM_SEC_KERNELS, sizeof(struct loom_file_kernel));
#undef COUNT
  /* The 4 GiB cap keeps every count below 2^32. */
  LOOM_ASSERT(s[LOOM_SEC_INSNS].size / LOOM_INSN_BYTES <= UINT32_MAX);
}

static loom_status check_strtab(struct reader *r) {
  const struct section *s = &r->sec[LOOM_SEC_STRTAB];
  if (s->size == 0) return lf_bad(r, s->off, "STRTAB is empty (it must hold at least the empty string)");
  if (r->p[s->off] != 0) return lf_bad(r, s->off, "STRTAB does not start with a NUL byte");
  if (r->p[s->off + s->size - 1] != 0)
    return lf_bad(r, s->off + s->size - 1, "STRTAB does not end with a NUL byte");
  return LOOM_OK;
}

/* File offset of field `field` of record `i` of section `type`. */
uint64_t lf_rec_off(const struct reader *r, uint32_t type, uint32_t i, uint32_t field) {
  return r->sec[type].off + (uint64_t)i * loom_section_entry_size(type) + field;
}

int lf_name_ok(const struct loom_file *f, uint32_t off) {
  return off < f->strtab_size && (off == 0 || f->strtab[off - 1] == 0) && f->strtab[off] != 0;
}

static loom_status check_name(struct reader *r, uint32_t type, uint32_t i, uint32_t off,
                              const char *what) {
  if (!lf_name_ok(r->f, off))
    return lf_bad(r, lf_rec_off(r, type, i, 0), "%s %u: name offset %u is not the start of a non-empty"
               " string in STRTAB (%" PRIu64 " bytes)", what, i, off, r->f->strtab_size);
  return LOOM_OK;
}

static loom_status check_buffers(struct reader *r) {
  const struct loom_file *f = r->f;
  uint64_t total = 0;
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    const struct loom_file_buffer *b = &f->buffers[i];
    loom_status st = check_name(r, LOOM_SEC_BUFFERS, i, b->name, "buffer");
    if (st) return st;
    char why[128], nm[48];
    uint32_t field;
    if (loom_file_buffer_problem(b, f->data_size, &field, why))
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_BUFFERS, i, field), "buffer %u '%s': %s", i,
                 show(f->strtab + b->name, nm), why);
    if (__builtin_add_overflow(total, b->size, &total) || total > LOOM_FILE_MAX_BUFFER_BYTES)
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_BUFFERS, i, offsetof(struct loom_file_buffer, size)),
                 "buffer %u '%s' (%" PRIu64 " bytes) takes the model's buffers to %" PRIu64
                 " bytes, past the limit of %" PRIu64 " bytes of device memory per model",
                 i, show(f->strtab + b->name, nm), b->size, total, LOOM_FILE_MAX_BUFFER_BYTES);
  }
  return LOOM_OK;
}

static loom_status check_tensors(struct reader *r) {
  const struct loom_file *f = r->f;
  for (uint32_t i = 0; i < f->tensor_count; i++) {
    const struct loom_file_tensor *t = &f->tensors[i];
    loom_status st = check_name(r, LOOM_SEC_TENSORS, i, t->name, "tensor");
    if (st) return st;
    char why[128], nm[48];
    uint32_t field;
    show(f->strtab + t->name, nm);
    if (t->buffer >= f->buffer_count)
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_TENSORS, i, offsetof(struct loom_file_tensor, buffer)),
                 "tensor %u '%s': buffer %u is not a buffer index (the file has %u)", i, nm,
                 t->buffer, f->buffer_count);
    if (loom_file_tensor_problem_v(t, f->buffers[t->buffer].size, r->minor, &field, why))
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_TENSORS, i, field), "tensor %u '%s': %s", i, nm, why);
  }
  return LOOM_OK;
}

static loom_status check_job(struct reader *r, uint32_t i) {
  const struct loom_file *f = r->f;
  const struct loom_file_job *j = &f->jobs[i];
  if ((uint64_t)j->insn_first + j->insn_count > f->insn_count)
    return lf_bad(r, lf_rec_off(r, LOOM_SEC_JOBS, i, 0), "job %u: instructions [%u, %u + %u) are outside"
               " INSNS (%u instructions)", i, j->insn_first, j->insn_first, j->insn_count, f->insn_count);
  if (j->insn_count == 0) return lf_bad(r, lf_rec_off(r, LOOM_SEC_JOBS, i, 4), "job %u has no instructions", i);
  for (uint32_t s = 0; s < 8; s++)
    if (j->segments[s] != LOOM_FILE_NO_BUFFER && j->segments[s] >= f->buffer_count)
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_JOBS, i, 8 + 4 * s), "job %u: segments[%u] = %u is not a"
                 " buffer index (the file has %u buffers)", i, s, j->segments[s], f->buffer_count);
  if (j->flags) return lf_bad(r, lf_rec_off(r, LOOM_SEC_JOBS, i, 40), "job %u: flags are not 0", i);
  if (j->reserved) return lf_bad(r, lf_rec_off(r, LOOM_SEC_JOBS, i, 44), "job %u: reserved field is not 0", i);
  return LOOM_OK;
}

/* Tensor slots of a step: 4 inputs then 2 outputs, at record offset 8. */
static loom_status check_step_tensors(struct reader *r, uint32_t i, int must_be_unused) {
  const struct loom_file_step *s = &r->f->steps[i];
  for (uint32_t k = 0; k < 6; k++) {
    uint32_t v = k < 4 ? s->inputs[k] : s->outputs[k - 4];
    const char *slot = k < 4 ? "inputs" : "outputs";
    uint32_t idx = k < 4 ? k : k - 4;
    if (v == LOOM_FILE_NO_BUFFER) continue;
    if (must_be_unused)
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_STEPS, i, 8 + 4 * k), "step %u: a %s step has %s[%u] = %u"
                 " (must be 0x%x, unused)", i, s->kind == LOOM_STEP_JOB ? "job" : "kernel", slot, idx, v,
                 LOOM_FILE_NO_BUFFER);
    if (v >= r->f->tensor_count)
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_STEPS, i, 8 + 4 * k), "step %u: %s[%u] = %u is not a tensor"
                 " index (the file has %u tensors)", i, slot, idx, v, r->f->tensor_count);
  }
  return LOOM_OK;
}

static loom_status check_step(struct reader *r, uint32_t i) {
  const struct loom_file *f = r->f;
  const struct loom_file_step *s = &f->steps[i];
  uint64_t end, po = lf_rec_off(r, LOOM_SEC_STEPS, i, 32);
  if (s->kind == LOOM_STEP_JOB) {
    if (s->index >= f->job_count)
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_STEPS, i, 4), "step %u: job %u does not exist (the file has"
                 " %u jobs)", i, s->index, f->job_count);
    if (s->param_offset || s->param_size)
      return lf_bad(r, po, "step %u: a job step has parameters (must be 0)", i);
    return check_step_tensors(r, i, 1);
  }
  if (s->kind == LOOM_STEP_KERNEL && r->minor >= 3) {
    if (s->index >= f->kernel_count)
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_STEPS, i, 4), "step %u: kernel %u does not exist (the file has"
                    " %u KERNELS records)", i, s->index, f->kernel_count);
    if (s->param_offset || s->param_size)
      return lf_bad(r, po, "step %u: a kernel step has parameters (must be 0)", i);
    return check_step_tensors(r, i, 1);
  }
  if (s->kind != LOOM_STEP_HOST)
    return lf_bad(r, lf_rec_off(r, LOOM_SEC_STEPS, i, 0), "step %u: kind %u is not defined (1 job, 2 host%s)",
               i, s->kind, r->minor >= 3 ? ", 3 kernel" : "");
  if (__builtin_add_overflow(s->param_offset, s->param_size, &end) || end > f->data_size)
    return lf_bad(r, po, "step %u: parameters [%" PRIu64 ", +%" PRIu64 ") are outside DATA (%" PRIu64
               " bytes)", i, s->param_offset, s->param_size, f->data_size);
  return check_step_tensors(r, i, 0);
}

static loom_status check_jobs_steps(struct reader *r) {
  loom_status st;
  for (uint32_t i = 0; i < r->f->job_count; i++)
    if ((st = check_job(r, i))) return st;
  for (uint32_t i = 0; i < r->f->step_count; i++)
    if ((st = check_step(r, i))) return st;
  return LOOM_OK;
}

/* ---- unique names: sort (name, index) pairs, compare neighbours ---- */

struct named {
  const char *name;
  uint32_t index;
};

static int cmp_named(const void *a, const void *b) {
  const struct named *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Names of `count` records of `type` (name at record offset 0). */
static loom_status check_unique(struct reader *r, uint32_t type, uint32_t count, const char *what) {
  if (count < 2) return LOOM_OK;
  struct named *v = malloc(sizeof *v * count);
  if (!v) {
    if (r->msg) snprintf(r->msg, LOOM_MSG_MAX, "%s: out of memory", r->name);
    return LOOM_E_NOMEM;
  }
  for (uint32_t i = 0; i < count; i++)
    v[i] = (struct named){r->f->strtab + rd32(r->p + lf_rec_off(r, type, i, 0)), i};
  qsort(v, count, sizeof *v, cmp_named);
  loom_status st = LOOM_OK;
  char nm[48];
  for (uint32_t i = 1; i < count && !st; i++)
    if (!strcmp(v[i].name, v[i - 1].name))
      st = lf_bad(r, lf_rec_off(r, type, v[i].index, 0), "%s %u: name '%s' is already used by %s %u", what,
               v[i].index, show(v[i].name, nm), what, v[i - 1].index);
  free(v);
  return st;
}

/* ---- HOSTCODE (1.1) ----
 *
 *   header (32 bytes) | entries (24 bytes each) | ELF image
 *
 * The image is checked here only for what a reader needs to tell whether
 * it is meant for this machine (the ELF magic and a whole ELF header); the
 * runtime checks the rest before it loads one (hostcode.c). */

/* Right after the entries (32 + 24 n: always 8-aligned). */
static uint64_t hostcode_image_offset(uint32_t entry_count) {
  return sizeof(struct loom_file_hostcode) + (uint64_t)entry_count * sizeof(struct loom_file_hostcode_entry);
}

static loom_status check_hostcode_header(struct reader *r, const struct loom_file_hostcode *h) {
  const struct section *s = &r->sec[LOOM_SEC_HOSTCODE];
  uint64_t want = hostcode_image_offset(h->entry_count);
  if (!lf_name_ok(r->f, h->triple))
    return lf_bad(r, s->off, "HOSTCODE: triple %u is not the start of a non-empty string in STRTAB", h->triple);
  if (h->cpu && !lf_name_ok(r->f, h->cpu))
    return lf_bad(r, s->off + 4, "HOSTCODE: cpu %u is not 0 or the start of a non-empty string in STRTAB", h->cpu);
  if (h->abi != LOOM_HOSTCODE_ABI)
    return lf_bad(r, s->off + 8, "HOSTCODE: entry-point ABI %u is not supported (this reader implements %d)",
               h->abi, LOOM_HOSTCODE_ABI);
  if (want > s->size)
    return lf_bad(r, s->off + 12, "HOSTCODE: %u entries do not fit the section (%" PRIu64 " bytes)",
               h->entry_count, s->size);
  if (h->image_offset != want)
    return lf_bad(r, s->off + 16, "HOSTCODE: image_offset %" PRIu64 " is not %" PRIu64
               " (right after the entries)", h->image_offset, want);
  if (h->image_size != s->size - want)
    return lf_bad(r, s->off + 24, "HOSTCODE: image_size %" PRIu64 " does not reach the end of the"
               " section (%" PRIu64 " bytes from image_offset)", h->image_size, s->size - want);
  const uint8_t *img = r->p + s->off + want;
  if (h->image_size < 52 || memcmp(img, "\x7f" "ELF", 4))
    return lf_bad(r, s->off + want, "HOSTCODE: the image is not an ELF file");
  return LOOM_OK;
}

static loom_status check_hostcode_entry(struct reader *r, const struct loom_file_hostcode_entry *e,
                                        uint32_t i, uint64_t at) {
  const struct loom_file *f = r->f;
  if (e->step >= f->step_count || f->steps[e->step].kind != LOOM_STEP_HOST)
    return lf_bad(r, at, "HOSTCODE entry %u: step %u is not a host step", i, e->step);
  if (i > 0 && e->step <= e[-1].step)
    return lf_bad(r, at, "HOSTCODE entry %u: step %u does not follow step %u (entries are sorted by"
               " step, each step once)", i, e->step, e[-1].step);
  if (!lf_name_ok(f, e->symbol))
    return lf_bad(r, at + 4, "HOSTCODE entry %u: symbol %u is not the start of a non-empty string in"
               " STRTAB", i, e->symbol);
  if (e->flags) return lf_bad(r, at + 16, "HOSTCODE entry %u: flags are not 0", i);
  if (e->reserved) return lf_bad(r, at + 20, "HOSTCODE entry %u: reserved field is not 0", i);
  return LOOM_OK;
}

static loom_status check_hostcode(struct reader *r) {
  const struct section *s = &r->sec[LOOM_SEC_HOSTCODE];
  if (!s->present || s->size == 0) return LOOM_OK; /* empty is the same as absent */
  if (s->size < sizeof(struct loom_file_hostcode))
    return lf_bad(r, s->off, "HOSTCODE: %" PRIu64 " bytes is shorter than its 32-byte header", s->size);
  const struct loom_file_hostcode *h = (const void *)(r->p + s->off);
  loom_status st = check_hostcode_header(r, h);
  const struct loom_file_hostcode_entry *e = (const void *)(h + 1);
  for (uint32_t i = 0; i < h->entry_count && !st; i++)
    st = check_hostcode_entry(r, &e[i], i, s->off + sizeof *h + (uint64_t)i * sizeof *e);
  if (st) return st;
  r->f->hostcode = h;
  r->f->hostcode_entries = e;
  r->f->hostcode_image = r->p + s->off + h->image_offset;
  return LOOM_OK;
}

/* ---- JOBMETA (1.2): one record per job, in job order ---- */

static loom_status check_jobmeta(struct reader *r) {
  const struct section *s = &r->sec[LOOM_SEC_JOBMETA];
  const struct loom_file *f = r->f;
  if (!s->present || s->size == 0) return LOOM_OK; /* empty is the same as absent */
  uint64_t n = s->size / sizeof(struct loom_file_jobmeta);
  if (n != f->job_count)
    return lf_bad(r, s->off, "JOBMETA: %" PRIu64 " records for %u jobs (one per job, in job order)", n,
               f->job_count);
  const struct loom_file_jobmeta *m = (const void *)(r->p + s->off);
  for (uint32_t i = 0; i < f->job_count; i++) {
    if (!lf_name_ok(f, m[i].name))
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_JOBMETA, i, 0), "JOBMETA %u: name %u is not the start of a"
                 " non-empty string in STRTAB", i, m[i].name);
    if (!lf_name_ok(f, m[i].op))
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_JOBMETA, i, 4), "JOBMETA %u: op %u is not the start of a"
                 " non-empty string in STRTAB", i, m[i].op);
    if (m[i].flags) return lf_bad(r, lf_rec_off(r, LOOM_SEC_JOBMETA, i, 40), "JOBMETA %u: flags are not 0", i);
    if (m[i].reserved)
      return lf_bad(r, lf_rec_off(r, LOOM_SEC_JOBMETA, i, 44), "JOBMETA %u: reserved field is not 0", i);
  }
  r->f->jobmeta = m;
  return LOOM_OK;
}

/* ---- SIGNATURE (1.4): one record; the mac is checked by hostcode_trust.c ---- */

static loom_status check_signature(struct reader *r) {
  const struct section *s = &r->sec[LOOM_SEC_SIGNATURE];
  if (!s->present || s->size == 0) return LOOM_OK; /* empty is the same as absent */
  const struct loom_file_signature *g = (const void *)(r->p + s->off);
  static const uint8_t zero[sizeof g->reserved];
  if (s->size != sizeof *g)
    return lf_bad(r, s->off, "SIGNATURE: %" PRIu64 " records (one, or the section empty)", s->size / sizeof *g);
  if (g->algorithm != LOOM_SIGNATURE_HMAC_SHA256)
    return lf_bad(r, s->off, "SIGNATURE: algorithm %u is not supported (1: HMAC-SHA256)", g->algorithm);
  if (g->flags) return lf_bad(r, s->off + 4, "SIGNATURE: flags are not 0");
  if (memcmp(g->reserved, zero, sizeof zero)) return lf_bad(r, s->off + 48, "SIGNATURE: reserved bytes are not 0");
  r->f->signature = g;
  return LOOM_OK;
}

static loom_status check_records(struct reader *r) {
  loom_status st;
  map_sections(r);
  if ((st = check_strtab(r))) return st;
  if ((st = check_buffers(r))) return st;
  if ((st = check_tensors(r))) return st;
  if ((st = check_jobs_steps(r))) return st;
  if ((st = check_unique(r, LOOM_SEC_BUFFERS, r->f->buffer_count, "buffer"))) return st;
  if ((st = check_unique(r, LOOM_SEC_TENSORS, r->f->tensor_count, "tensor"))) return st;
  if ((st = check_hostcode(r))) return st;
  if ((st = check_jobmeta(r))) return st;
  if ((st = lf_check_kernels(r))) return st;
  return check_signature(r);
}

static loom_status parse_fail(char msg[LOOM_MSG_MAX], loom_status st, const char *name,
                              const char *what, uint64_t size) {
  if (msg) snprintf(msg, LOOM_MSG_MAX, "%s: %s (%" PRIu64 " bytes)", name, what, size);
  return st;
}

loom_status loom_file_parse(const void *bytes, size_t size, const char *name,
                            struct loom_file *out, char msg[LOOM_MSG_MAX]) {
  memset(out, 0, sizeof *out);
  if (!name) name = "<memory>";
  if (size < LOOM_FILE_HEADER_SIZE)
    return parse_fail(msg, LOOM_E_FORMAT, name, "file is shorter than the 64-byte header", size);
  if ((uint64_t)size > LOOM_FILE_MAX_SIZE)
    return parse_fail(msg, LOOM_E_FORMAT, name, "file exceeds the 4 GiB limit", size);
  uint8_t *copy = malloc(size);
  if (!copy) return parse_fail(msg, LOOM_E_NOMEM, name, "out of memory copying the file", size);
  memcpy(copy, bytes, size);
  struct reader r = {.p = copy, .size = size, .name = name, .msg = msg, .f = out};
  loom_status st = check_header(&r);
  if (!st) st = check_sections(&r);
  if (!st) st = check_records(&r);
  if (st) {
    free(copy);
    memset(out, 0, sizeof *out);
    return st;
  }
  out->version_major = LOOM_FILE_VERSION_MAJOR;
  out->version_minor = r.minor;
  out->config_hash = rd32(copy + LOOM_FILE_OFF_CONFIG_HASH);
  out->isa_version = rd32(copy + LOOM_FILE_OFF_ISA_VERSION);
  out->storage = copy;
  out->file_size = size;
  return LOOM_OK;
}

loom_status loom_file_read(const char *path, struct loom_file *out, char msg[LOOM_MSG_MAX]) {
  uint8_t *bytes;
  size_t size;
  memset(out, 0, sizeof *out);
  loom_status st = loom_read_file(path, LOOM_FILE_MAX_SIZE, &bytes, &size, msg);
  if (st) return st;
  st = loom_file_parse(bytes, size, path, out, msg);
  free(bytes);
  return st;
}

void loom_file_free(struct loom_file *f) {
  if (!f) return;
  free(f->storage);
  memset(f, 0, sizeof *f);
}

const char *loom_file_string(const struct loom_file *f, uint32_t off) {
  return off < f->strtab_size ? f->strtab + off : "";
}
