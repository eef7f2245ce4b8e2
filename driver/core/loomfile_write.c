/*
 * loomfile_write.c - the .loom builder: collects records, lays out a file.
 *
 * Records go into one growable byte array per section, in the order they
 * are added; their indices are what the caller uses to refer to them.  The
 * layout is decided only in loom_file_builder_finish(), and it is fixed:
 *
 *   header | section table (7 entries) | STRTAB INSNS DATA BUFFERS TENSORS JOBS STEPS
 *
 * every section 8-byte aligned, all seven always present (possibly empty),
 * padding zero.  The same records added in the same order therefore give
 * the same bytes, which is what lets the assembler round-trip exactly.
 * A file with native host code gets an eighth entry, HOSTCODE, after STEPS
 * and says version 1.1; one with job metadata gets a ninth, JOBMETA (and an
 * eighth, HOSTCODE, empty if need be) and says 1.2; one with kernel steps or
 * a tensor of a host-side type (int64, bool, ...) gets a tenth, KERNELS (the
 * two before it empty if need be), and says 1.3; a signed one an eleventh,
 * SIGNATURE (the ones before it present, empty if need be) and says 1.4;
 * without any of them the file stays 1.0, byte for byte what it was before
 * 1.1 existed.
 *
 * Strings are interned through a small open-addressing table of STRTAB
 * offsets, so a model with thousands of names stays linear.  Offset 0 is
 * the empty string.  Out-of-memory is remembered in `failed` rather than
 * reported by every adder, so callers check once, at finish.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "loom/isa.h"
#include "loomfile.h"
#include "outfile.h"

struct bytes {
  uint8_t *p;
  size_t len, cap;
};

struct loom_file_builder {
  uint32_t config_hash;
  struct bytes strtab, insns, data, buffers, tensors, jobs, steps;
  struct bytes hostcode;  /* the whole HOSTCODE section; empty: none */
  struct bytes jobmeta;   /* JOBMETA records; empty: none */
  struct bytes kernels;   /* KERNELS records; empty: none */
  int need_1_3;           /* a tensor has a dtype of format 1.3 */
  struct bytes signature; /* the SIGNATURE record; empty: none */
  uint32_t *slots; /* STRTAB offset + 1 per slot, 0 = empty */
  size_t slot_cap, slot_used;
  int failed;
};

static int bytes_reserve(struct bytes *b, size_t more) {
  if (more > SIZE_MAX - b->len) return -1;
  if (b->len + more <= b->cap) return 0;
  size_t n = b->cap ? b->cap : 256;
  while (n < b->len + more) {
    if (n > SIZE_MAX / 2) return -1;
    n *= 2;
  }
  uint8_t *p = realloc(b->p, n);
  if (!p) return -1;
  b->p = p;
  b->cap = n;
  return 0;
}

/* Appends n bytes (zeros when src is NULL); -1 when out of memory. */
static int bytes_put(struct bytes *b, const void *src, size_t n) {
  if (n == 0) return 0;
  if (bytes_reserve(b, n)) return -1;
  if (src) memcpy(b->p + b->len, src, n);
  else memset(b->p + b->len, 0, n);
  b->len += n;
  return 0;
}

/* Zero-pads to a multiple of `align` (a power of two, or 0/1 for none). */
static int bytes_align(struct bytes *b, uint64_t align) {
  if (align < 2) return 0;
  size_t pad = (size_t)((align - b->len % align) % align);
  return bytes_put(b, NULL, pad);
}

/* Appends one record; returns its index or UINT32_MAX. */
static uint32_t add_record(struct loom_file_builder *b, struct bytes *sec, const void *rec,
                           size_t size) {
  size_t n = sec->len / size;
  if (b->failed || n >= UINT32_MAX || bytes_put(sec, rec, size)) {
    b->failed = 1;
    return UINT32_MAX;
  }
  return (uint32_t)n;
}

struct loom_file_builder *loom_file_builder_new(uint32_t config_hash) {
  struct loom_file_builder *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->config_hash = config_hash;
  if (bytes_put(&b->strtab, "", 1)) {
    free(b);
    return NULL;
  }
  return b;
}

void loom_file_builder_free(struct loom_file_builder *b) {
  if (!b) return;
  struct bytes *all[] = {&b->strtab, &b->insns, &b->data,     &b->buffers, &b->tensors, &b->jobs,
                         &b->steps,  &b->hostcode, &b->jobmeta, &b->kernels, &b->signature};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]->p);
  free(b->slots);
  free(b);
}

/* ---- string interning ---- */

static uint64_t str_hash(const char *s) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211u;
  return h;
}

/* The slot holding `s`, or the empty slot where it belongs. */
static size_t str_slot(const struct loom_file_builder *b, const char *s) {
  size_t i = (size_t)(str_hash(s) & (b->slot_cap - 1));
  while (b->slots[i] && strcmp((const char *)b->strtab.p + b->slots[i] - 1, s))
    i = (i + 1) & (b->slot_cap - 1);
  return i;
}

static int str_grow(struct loom_file_builder *b) {
  size_t old_cap = b->slot_cap;
  uint32_t *old = b->slots;
  size_t cap = old_cap ? old_cap * 2 : 64;
  b->slots = calloc(cap, sizeof *b->slots);
  if (!b->slots) {
    b->slots = old;
    return -1;
  }
  b->slot_cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i]) b->slots[str_slot(b, (const char *)b->strtab.p + old[i] - 1)] = old[i];
  free(old);
  return 0;
}

uint32_t loom_fb_string(struct loom_file_builder *b, const char *s) {
  if (b->failed) return UINT32_MAX;
  if (!*s) return 0;
  if (2 * (b->slot_used + 1) > b->slot_cap && str_grow(b)) goto fail;
  size_t i = str_slot(b, s);
  if (b->slots[i]) return b->slots[i] - 1;
  size_t off = b->strtab.len, n = strlen(s) + 1;
  if (off + n > UINT32_MAX || bytes_put(&b->strtab, s, n)) goto fail;
  b->slots[i] = (uint32_t)off + 1;
  b->slot_used++;
  return (uint32_t)off;
fail:
  b->failed = 1;
  return UINT32_MAX;
}

/* ---- the adders ---- */

uint64_t loom_fb_data(struct loom_file_builder *b, const void *bytes, uint64_t size, uint32_t align) {
  if (b->failed || size > SIZE_MAX || bytes_align(&b->data, align)) goto fail;
  uint64_t off = b->data.len;
  if (bytes_put(&b->data, bytes, (size_t)size)) goto fail;
  return off;
fail:
  b->failed = 1;
  return UINT64_MAX;
}

uint32_t loom_fb_insns(struct loom_file_builder *b, const uint8_t *insns, uint32_t count) {
  size_t first = b->insns.len / LOOM_INSN_BYTES;
  if (b->failed || first + count > UINT32_MAX ||
      bytes_put(&b->insns, insns, (size_t)count * LOOM_INSN_BYTES)) {
    b->failed = 1;
    return UINT32_MAX;
  }
  return (uint32_t)first;
}

uint32_t loom_fb_buffer(struct loom_file_builder *b, const struct loom_file_buffer *buf) {
  return add_record(b, &b->buffers, buf, sizeof *buf);
}

uint32_t loom_fb_tensor(struct loom_file_builder *b, const struct loom_file_tensor *t) {
  if (t->dtype >= LOOM_FILE_DT_COUNT || t->user_dtype >= LOOM_FILE_DT_COUNT || loom_file_tensor_empty(t)) b->need_1_3 = 1;
  struct loom_file_tensor copy = *t;
  if (!copy.bytes) copy.bytes = loom_file_tensor_bytes(&copy);
  return add_record(b, &b->tensors, &copy, sizeof copy);
}

uint32_t loom_fb_job(struct loom_file_builder *b, const struct loom_file_job *j) {
  return add_record(b, &b->jobs, j, sizeof *j);
}

uint32_t loom_fb_step(struct loom_file_builder *b, const struct loom_file_step *s) {
  return add_record(b, &b->steps, s, sizeof *s);
}

void loom_fb_signature(struct loom_file_builder *b, const struct loom_file_signature *s) {
  b->signature.len = 0;
  if (!b->failed && bytes_put(&b->signature, s, sizeof *s)) b->failed = 1;
}

uint32_t loom_fb_jobmeta(struct loom_file_builder *b, const struct loom_file_jobmeta *m) {
  return add_record(b, &b->jobmeta, m, sizeof *m);
}

uint32_t loom_fb_kernel(struct loom_file_builder *b, const struct loom_file_kernel *k) {
  return add_record(b, &b->kernels, k, sizeof *k);
}

/* ---- HOSTCODE ---- */

static int cmp_entry(const void *a, const void *b) {
  const struct loom_file_hostcode_entry *x = a, *y = b;
  return (x->step > y->step) - (x->step < y->step);
}

/* header | entries sorted by step | image (docs/format.md). */
int loom_fb_hostcode(struct loom_file_builder *b, uint32_t triple, uint32_t cpu,
                     const struct loom_file_hostcode_entry *entries, uint32_t entry_count,
                     const void *image, uint64_t image_size) {
  size_t esize = (size_t)entry_count * sizeof *entries;
  struct loom_file_hostcode h = {.triple = triple, .cpu = cpu, .abi = LOOM_HOSTCODE_ABI,
                                 .entry_count = entry_count, .image_size = image_size};
  h.image_offset = sizeof h + esize; /* 32 + 24 n: 8-aligned */
  b->hostcode.len = 0;
  if (b->failed || image_size > SIZE_MAX - h.image_offset ||
      bytes_reserve(&b->hostcode, (size_t)(h.image_offset + image_size)))
    return b->failed = 1, -1;
  bytes_put(&b->hostcode, &h, sizeof h);
  bytes_put(&b->hostcode, entries, esize);
  qsort(b->hostcode.p + sizeof h, entry_count, sizeof *entries, cmp_entry);
  bytes_put(&b->hostcode, image, (size_t)image_size);
  return 0;
}

/* ---- a builder from a parsed file ---- */

static int copy_section(struct loom_file_builder *b, struct bytes *dst, const void *src, uint64_t n) {
  if (b->failed || n > SIZE_MAX || bytes_put(dst, src, (size_t)n)) return b->failed = 1, -1;
  return 0;
}

/* Interns every string of a copied STRTAB (the first of equal ones wins). */
static int intern_all(struct loom_file_builder *b) {
  for (size_t off = 1; off < b->strtab.len;) {
    const char *s = (const char *)b->strtab.p + off;
    size_t n = strlen(s) + 1;
    if (n > 1) {
      if (2 * (b->slot_used + 1) > b->slot_cap && str_grow(b)) return -1;
      size_t i = str_slot(b, s);
      if (!b->slots[i]) b->slots[i] = (uint32_t)off + 1, b->slot_used++;
    }
    off += n;
  }
  return 0;
}

struct loom_file_builder *loom_file_builder_from(const struct loom_file *f) {
  struct loom_file_builder *b = loom_file_builder_new(f->config_hash);
  if (!b) return NULL;
  b->strtab.len = 0;
  copy_section(b, &b->strtab, f->strtab, f->strtab_size);
  copy_section(b, &b->insns, f->insns, (uint64_t)f->insn_count * LOOM_INSN_BYTES);
  copy_section(b, &b->data, f->data, f->data_size);
  copy_section(b, &b->buffers, f->buffers, (uint64_t)f->buffer_count * sizeof *f->buffers);
  copy_section(b, &b->tensors, f->tensors, (uint64_t)f->tensor_count * sizeof *f->tensors);
  copy_section(b, &b->jobs, f->jobs, (uint64_t)f->job_count * sizeof *f->jobs);
  copy_section(b, &b->steps, f->steps, (uint64_t)f->step_count * sizeof *f->steps);
  if (f->jobmeta) copy_section(b, &b->jobmeta, f->jobmeta, (uint64_t)f->job_count * sizeof *f->jobmeta);
  if (f->kernels) copy_section(b, &b->kernels, f->kernels, (uint64_t)f->kernel_count * sizeof *f->kernels);
  b->need_1_3 = f->version_minor >= 3;
  if (b->failed || intern_all(b)) {
    loom_file_builder_free(b);
    return NULL;
  }
  return b;
}

/* ---- layout ---- */

static void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, (uint16_t)v); wr16(p + 2, (uint16_t)(v >> 16)); }
static void wr64(uint8_t *p, uint64_t v) { wr32(p, (uint32_t)v); wr32(p + 4, (uint32_t)(v >> 32)); }

#define NSEC (LOOM_SEC_COUNT - 1) /* all types, in type order */

static void write_header(uint8_t *p, uint64_t size, uint32_t config_hash, int nsec) {
  memcpy(p, LOOM_FILE_MAGIC, 8);
  wr16(p + LOOM_FILE_OFF_MAJOR, LOOM_FILE_VERSION_MAJOR);
  /* the last section decides: HOSTCODE came in 1.1, JOBMETA in 1.2, KERNELS in 1.3, SIGNATURE in 1.4 */
  wr16(p + LOOM_FILE_OFF_MINOR, (uint16_t)(nsec > LOOM_SEC_STEPS ? nsec - LOOM_SEC_STEPS : 0));
  wr32(p + LOOM_FILE_OFF_HEADER_SIZE, LOOM_FILE_HEADER_SIZE);
  wr64(p + LOOM_FILE_OFF_FILE_SIZE, size);
  wr32(p + LOOM_FILE_OFF_CONFIG_HASH, config_hash);
  wr32(p + LOOM_FILE_OFF_ISA_VERSION, LOOM_ISA_VERSION);
  wr32(p + LOOM_FILE_OFF_SECTION_COUNT, (uint32_t)nsec);
  wr64(p + LOOM_FILE_OFF_SECTION_TABLE, LOOM_FILE_HEADER_SIZE);
}

uint8_t *loom_file_builder_finish(struct loom_file_builder *b, size_t *size) {
  const struct bytes *sec[NSEC] = {&b->strtab, &b->insns,   &b->data,    &b->buffers, &b->tensors, &b->jobs,
                                   &b->steps,  &b->hostcode, &b->jobmeta, &b->kernels, &b->signature};
  int nsec = b->signature.len              ? LOOM_SEC_SIGNATURE
             : b->kernels.len || b->need_1_3 ? LOOM_SEC_KERNELS
             : b->jobmeta.len                ? LOOM_SEC_JOBMETA
             : b->hostcode.len               ? LOOM_SEC_HOSTCODE
                                             : LOOM_SEC_STEPS;
  uint64_t off[NSEC], end = LOOM_FILE_HEADER_SIZE + (uint64_t)nsec * LOOM_FILE_SECTION_ENTRY_SIZE;
  if (b->failed) return NULL;
  for (int i = 0; i < nsec; i++) {
    off[i] = (end + 7) & ~(uint64_t)7;
    end = off[i] + sec[i]->len;
  }
  if (end > LOOM_FILE_MAX_SIZE || end > SIZE_MAX) return NULL;
  uint8_t *p = calloc(1, (size_t)end);
  if (!p) return NULL;
  write_header(p, end, b->config_hash, nsec);
  for (int i = 0; i < nsec; i++) {
    uint8_t *e = p + LOOM_FILE_HEADER_SIZE + i * LOOM_FILE_SECTION_ENTRY_SIZE;
    wr32(e, (uint32_t)(LOOM_SEC_STRTAB + i));
    wr64(e + 8, off[i]);
    wr64(e + 16, sec[i]->len);
    wr32(e + 24, loom_section_entry_size((uint32_t)(LOOM_SEC_STRTAB + i)));
    if (sec[i]->len) memcpy(p + off[i], sec[i]->p, sec[i]->len);
  }
  uint32_t crc = (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), p + LOOM_FILE_CRC_START,
                                   (z_size_t)(end - LOOM_FILE_CRC_START));
  wr32(p + LOOM_FILE_OFF_CRC32, crc);
  *size = (size_t)end;
  return p;
}

loom_status loom_file_builder_write(struct loom_file_builder *b, const char *path,
                                    char msg[LOOM_MSG_MAX]) {
  size_t size;
  uint8_t *p = loom_file_builder_finish(b, &size);
  if (!p) {
    if (msg) snprintf(msg, LOOM_MSG_MAX, "%s: out of memory, or the model exceeds the 4 GiB limit", path);
    return LOOM_E_NOMEM;
  }
  struct loom_file f;
  char why[LOOM_MSG_MAX];
  loom_status st = loom_file_parse(p, size, path, &f, why);
  if (st) {
    if (msg) snprintf(msg, LOOM_MSG_MAX, "refusing to write an invalid file: %.440s", why);
    free(p);
    return st == LOOM_E_NOMEM ? st : LOOM_E_INVALID;
  }
  loom_file_free(&f);
  st = loom_outfile_write(path, p, size, msg);
  free(p);
  return st;
}
