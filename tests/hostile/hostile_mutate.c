/*
 * hostile_mutate.c - valid .loom image in, hostile mutant out.
 *
 * The base is parsed once to find its sections; mutations then edit a copy
 * of the raw bytes in place.  Instruction-level mutations decode an
 * instruction, change fields to values aimed at a check (the last DRAM row
 * of a segment and one past it, the last SRAM row and one past it, loop
 * extents at the field maximum) and encode it again, so the loader accepts
 * the file and the hardware checks are what must stop it.  Bit-flip
 * mutations do not aim at anything.  Every mutation except MUT_RAW_BITS
 * rewrites the crc32, so the loader looks past the checksum.
 *
 * Reproducibility: the random stream of mutant `index` depends only on
 * (seed, index) - never on earlier mutants - so one mutant can be replayed
 * alone (`hostile --replay INDEX`).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "driver/core/loomfile.h"
#include "hostile.h"
#include "loom/isa.h"

const char *const mut_names[MUT_COUNT] = {
    [MUT_SEGMENT] = "segment",       [MUT_HUGE_LOOP] = "huge-loop",
    [MUT_SRAM] = "sram-index",       [MUT_TOKENS] = "tokens",
    [MUT_NO_FINISH] = "no-finish",   [MUT_INSN_BITS] = "insn-bits",
    [MUT_RANDOM_INSN] = "random-insn", [MUT_UOP_DATA] = "uop-data",
    [MUT_JOB_TABLE] = "job-table",   [MUT_RECORD_BITS] = "record-bits",
    [MUT_RAW_BITS] = "raw-bits",
};
_Static_assert(sizeof mut_names / sizeof mut_names[0] == MUT_COUNT, "a name per mutation");

/* splitmix64 */
uint64_t hrng_next(struct hrng *r) {
  uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

uint32_t hrng_below(struct hrng *r, uint32_t n) { return n ? (uint32_t)(hrng_next(r) % n) : 0; }

/* A value for a field of `bits` bits: small, near the top, or anywhere. */
static uint32_t pick_field(struct hrng *r, unsigned bits) {
  uint32_t max = bits >= 32 ? UINT32_MAX : (1u << bits) - 1;
  switch (hrng_below(r, 3)) {
  case 0: return hrng_below(r, 17) & max;
  case 1: return max - (hrng_below(r, 3) & max);
  default: return (uint32_t)hrng_next(r) & max;
  }
}

/* ---- the image being mutated ---- */

struct img {
  uint8_t *p;
  size_t size;
  struct loom_file f;  /* parsed base: counts and section positions */
  size_t insns, data, buffers, jobs;  /* file offsets of sections */
  const struct loom_hw_config *cfg;
  struct hrng *r;
  char *what;
  size_t what_len;
};

static void note(struct img *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct img *m, const char *fmt, ...) {
  if (m->what_len >= 255) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(m->what + m->what_len, 256 - m->what_len, fmt, ap);
  va_end(ap);
  if (n > 0) m->what_len += (size_t)n < 256 - m->what_len ? (size_t)n : 255 - m->what_len;
}

static struct loom_file_job *job_rec(struct img *m, uint32_t j) {
  return (struct loom_file_job *)(m->p + m->jobs) + j;
}

static uint8_t *insn_at(struct img *m, uint32_t i) { return m->p + m->insns + (size_t)i * LOOM_INSN_BYTES; }

/* A random job, and in it a random instruction (stream index into INSNS)
 * for which `want(decoded)` holds; -1 when there is none. */
static long pick_insn(struct img *m, uint32_t *job, int (*want)(const struct loom_insn *)) {
  if (!m->f.job_count) return -1;
  /* The base's records, not the copy's: an earlier mutation may have
   * scrambled the copy's job table. */
  uint32_t j = hrng_below(m->r, m->f.job_count);
  const struct loom_file_job *jr = &m->f.jobs[j];
  uint32_t n = jr->insn_count, start = hrng_below(m->r, n);
  for (uint32_t k = 0; k < n; k++) {
    uint32_t i = jr->insn_first + (start + k) % n;
    struct loom_insn d;
    if (loom_insn_decode(insn_at(m, i), &d, NULL) != LOOM_ERR_NONE) continue;
    if (!want || want(&d)) {
      *job = j;
      return i;
    }
  }
  return -1;
}

static int is_mem(const struct loom_insn *d) { return d->opcode == LOOM_OP_LOAD || d->opcode == LOOM_OP_STORE; }
static int is_loop(const struct loom_insn *d) { return d->opcode == LOOM_OP_GEMM || d->opcode == LOOM_OP_ALU; }
static int is_finish(const struct loom_insn *d) { return d->opcode == LOOM_OP_FINISH; }

static int put(struct img *m, uint32_t i, const struct loom_insn *d) {
  uint8_t b[LOOM_INSN_BYTES];
  if (loom_insn_encode(d, b, NULL) != 0) return -1;
  memcpy(insn_at(m, i), b, sizeof b);
  return 0;
}

/* Bytes of the segment `seg` of job j (0 when unmapped). */
static uint64_t seg_bytes(struct img *m, uint32_t j, uint32_t seg) {
  uint32_t b = m->f.jobs[j].segments[seg];
  return b < m->f.buffer_count ? m->f.buffers[b].size : 0;
}

static uint32_t mem_buffer(const struct loom_insn *d) {
  return d->opcode == LOOM_OP_STORE ? LOOM_BUF_OUT : d->mem.buffer;
}

/* ---- instruction mutations ---- */

static int mut_segment(struct img *m) {
  uint32_t j;
  long i = pick_insn(m, &j, is_mem);
  if (i < 0) return -1;
  struct loom_insn d;
  loom_insn_decode(insn_at(m, (uint32_t)i), &d, NULL);
  struct loom_insn_mem *x = &d.mem;
  uint32_t r = loom_hw_row_bytes(m->cfg, (int)mem_buffer(&d), (int)x->src_int8);
  uint64_t rows = r ? seg_bytes(m, j, x->segment) / r : 0;
  if (!x->y_size) x->y_size = 1;
  if (!x->x_size) x->x_size = 1;
  switch (hrng_below(m->r, 5)) {
  case 0: { /* end exactly at the segment's end, or 1-2 rows past it */
    uint64_t span = (uint64_t)(x->y_size - 1) * x->x_stride + x->x_size, k = hrng_below(m->r, 3);
    x->dram_offset = rows + k >= span ? (uint32_t)((rows + k - span) & 0xFFFFFFF) : (uint32_t)k;
    note(m, "insn %ld: dram_offset %u (segment %u holds %llu rows)", i, x->dram_offset, x->segment,
         (unsigned long long)rows);
    break;
  }
  case 1:
    x->dram_offset = pick_field(m->r, 28);
    note(m, "insn %ld: dram_offset %u", i, x->dram_offset);
    break;
  case 2:
    x->segment = hrng_below(m->r, 8);
    note(m, "insn %ld: segment %u (%s)", i, x->segment, seg_bytes(m, j, x->segment) ? "mapped" : "unmapped");
    break;
  case 3:
    x->y_size = 2 + hrng_below(m->r, 8);
    x->x_stride = pick_field(m->r, 16);
    note(m, "insn %ld: y_size %u x_stride %u", i, x->y_size, x->x_stride);
    break;
  default:
    x->x_size = pick_field(m->r, 16);
    note(m, "insn %ld: x_size %u", i, x->x_size);
    break;
  }
  return put(m, (uint32_t)i, &d);
}

static int mut_huge_loop(struct img *m) {
  uint32_t j;
  long i = pick_insn(m, &j, is_loop);
  if (i < 0) return -1;
  struct loom_insn d;
  loom_insn_decode(insn_at(m, (uint32_t)i), &d, NULL);
  uint32_t *iter_out = d.opcode == LOOM_OP_GEMM ? &d.gemm.iter_out : &d.alu.iter_out;
  uint32_t *iter_in = d.opcode == LOOM_OP_GEMM ? &d.gemm.iter_in : &d.alu.iter_in;
  *iter_out = 16383 - hrng_below(m->r, 4);
  *iter_in = hrng_below(m->r, 2) ? 16383 : 1 + hrng_below(m->r, 64);
  note(m, "insn %ld: iter %u,%u", i, *iter_out, *iter_in);
  return put(m, (uint32_t)i, &d);
}

static int mut_sram(struct img *m) {
  uint32_t j;
  long i = pick_insn(m, &j, hrng_below(m->r, 2) ? is_mem : is_loop);
  if (i < 0) return -1;
  struct loom_insn d;
  loom_insn_decode(insn_at(m, (uint32_t)i), &d, NULL);
  if (is_mem(&d)) {
    uint32_t rows = loom_hw_buffer_rows(m->cfg, (int)mem_buffer(&d));
    d.mem.sram_base = hrng_below(m->r, 2) ? rows - hrng_below(m->r, 3) : pick_field(m->r, 16);
    note(m, "insn %ld: sram_base %u (%u rows)", i, d.mem.sram_base, rows);
  } else if (d.opcode == LOOM_OP_GEMM) {
    switch (hrng_below(m->r, 3)) {
    case 0: d.gemm.uop_end = pick_field(m->r, 14); break;
    case 1: d.gemm.acc_factor_out = pick_field(m->r, 11), d.gemm.iter_out |= 2; break;
    default: d.gemm.wgt_factor_in = pick_field(m->r, 10), d.gemm.inp_factor_in = pick_field(m->r, 11),
             d.gemm.iter_in |= 2;
    }
    note(m, "insn %ld: gemm uop %u:%u factors acc %u inp %u wgt %u", i, d.gemm.uop_begin, d.gemm.uop_end,
         d.gemm.acc_factor_out, d.gemm.inp_factor_in, d.gemm.wgt_factor_in);
  } else {
    if (hrng_below(m->r, 2)) d.alu.uop_end = pick_field(m->r, 14);
    else d.alu.src_factor_out = pick_field(m->r, 11), d.alu.iter_out |= 2;
    note(m, "insn %ld: alu uop %u:%u src_factor_out %u", i, d.alu.uop_begin, d.alu.uop_end,
         d.alu.src_factor_out);
  }
  return put(m, (uint32_t)i, &d);
}

static int mut_tokens(struct img *m) {
  uint32_t j, flips = 1 + hrng_below(m->r, 3);
  for (uint32_t k = 0; k < flips; k++) {
    long i = pick_insn(m, &j, NULL);
    if (i < 0) return -1;
    unsigned bit = 3 + hrng_below(m->r, 4); /* pop_prev, pop_next, push_prev, push_next */
    insn_at(m, (uint32_t)i)[0] ^= (uint8_t)(1u << bit);
    note(m, "insn %ld: token bit %u flipped; ", i, bit);
  }
  return 0;
}

static int mut_no_finish(struct img *m) {
  uint32_t j;
  long i = pick_insn(m, &j, is_finish);
  if (i < 0) return -1;
  struct loom_file_job *jr = job_rec(m, j);
  uint32_t first = m->f.jobs[j].insn_first;
  if (hrng_below(m->r, 2) && (uint32_t)i > first) {
    jr->insn_first = first;
    jr->insn_count = (uint32_t)i - first;
    note(m, "job %u: cut before its FINISH (insn %ld)", j, i);
    return 0;
  }
  struct loom_insn d = {.opcode = LOOM_OP_NOP};
  d.nop.queue = LOOM_Q_COMPUTE;
  note(m, "insn %ld: FINISH -> NOP", i);
  return put(m, (uint32_t)i, &d);
}

static int mut_insn_bits(struct img *m) {
  uint32_t j, flips = 1 + hrng_below(m->r, 4);
  for (uint32_t k = 0; k < flips; k++) {
    long i = pick_insn(m, &j, NULL);
    if (i < 0) return -1;
    unsigned bit = hrng_below(m->r, 128);
    insn_at(m, (uint32_t)i)[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    note(m, "insn %ld bit %u; ", i, bit);
  }
  return 0;
}

/* A random instruction that decodes, of a random kind, with fields that
 * are mostly small (so it often passes the checks and does something). */
static void random_insn(struct hrng *r, struct loom_insn *d) {
  static const uint32_t ops[] = {LOOM_OP_LOAD, LOOM_OP_STORE, LOOM_OP_GEMM, LOOM_OP_ALU,
                                 LOOM_OP_QCFG, LOOM_OP_NOP, LOOM_OP_FINISH};
  memset(d, 0, sizeof *d);
  d->opcode = ops[hrng_below(r, 7)];
  d->pop_prev = hrng_below(r, 4) == 0, d->pop_next = hrng_below(r, 4) == 0;
  d->push_prev = hrng_below(r, 4) == 0, d->push_next = hrng_below(r, 4) == 0;
  switch (d->opcode) {
  case LOOM_OP_LOAD: case LOOM_OP_STORE:
    d->mem.buffer = d->opcode == LOOM_OP_STORE ? LOOM_BUF_OUT : hrng_below(r, 4);
    d->mem.sram_base = pick_field(r, 16), d->mem.segment = hrng_below(r, 8);
    d->mem.dram_offset = hrng_below(r, 64), d->mem.y_size = hrng_below(r, 4);
    d->mem.x_size = hrng_below(r, 16), d->mem.x_stride = hrng_below(r, 32);
    break;
  case LOOM_OP_GEMM:
    d->gemm.reset = hrng_below(r, 2), d->gemm.uop_begin = hrng_below(r, 8);
    d->gemm.uop_end = hrng_below(r, 16), d->gemm.iter_out = hrng_below(r, 9);
    d->gemm.iter_in = hrng_below(r, 9), d->gemm.acc_factor_out = hrng_below(r, 9);
    d->gemm.inp_factor_in = hrng_below(r, 9), d->gemm.wgt_factor_in = hrng_below(r, 9);
    break;
  case LOOM_OP_ALU:
    d->alu.alu_op = hrng_below(r, 7), d->alu.use_imm = hrng_below(r, 2);
    d->alu.imm = d->alu.use_imm ? (int32_t)(hrng_next(r) & 0xFFFF) - 32768 : 0;
    d->alu.uop_begin = hrng_below(r, 8), d->alu.uop_end = hrng_below(r, 16);
    d->alu.iter_out = hrng_below(r, 9), d->alu.iter_in = hrng_below(r, 9);
    d->alu.dst_factor_out = hrng_below(r, 9), d->alu.src_factor_in = hrng_below(r, 9);
    break;
  case LOOM_OP_QCFG:
    d->qcfg.multiplier = (int32_t)hrng_next(r), d->qcfg.shift = hrng_below(r, 64);
    d->qcfg.zero_point = (int32_t)hrng_below(r, 256) - 128, d->qcfg.clamp_lo = -128;
    d->qcfg.clamp_hi = 127, d->qcfg.round_even = hrng_below(r, 2);
    break;
  case LOOM_OP_NOP:
    d->nop.queue = hrng_below(r, 3);
    break;
  }
}

static int mut_random_insn(struct img *m) {
  uint32_t j;
  long i = pick_insn(m, &j, NULL);
  if (i < 0) return -1;
  for (int tries = 0; tries < 32; tries++) {
    struct loom_insn d;
    uint8_t b[LOOM_INSN_BYTES];
    random_insn(m->r, &d);
    if (loom_insn_encode(&d, b, NULL) || loom_insn_decode(b, &d, NULL) != LOOM_ERR_NONE) continue;
    memcpy(insn_at(m, (uint32_t)i), b, sizeof b);
    note(m, "insn %ld: replaced by a random %s", i, loom_opcode_name(d.opcode));
    return 0;
  }
  return -1;
}

/* ---- data and record mutations ---- */

/* Micro-op tables: CONST buffers that a LOAD UOP of some job reads. */
static int mut_uop_data(struct img *m) {
  uint32_t j;
  for (int tries = 0; tries < 8; tries++) {
    long i = pick_insn(m, &j, is_mem);
    if (i < 0) return -1;
    struct loom_insn d;
    loom_insn_decode(insn_at(m, (uint32_t)i), &d, NULL);
    if (d.opcode != LOOM_OP_LOAD || d.mem.buffer != LOOM_BUF_UOP) continue;
    uint32_t b = m->f.jobs[j].segments[d.mem.segment];
    if (b >= m->f.buffer_count || m->f.buffers[b].kind != LOOM_BUFKIND_CONST) continue;
    const struct loom_file_buffer *fb = &m->f.buffers[b];
    uint32_t n = (uint32_t)(fb->size / LOOM_UOP_BYTES), k = hrng_below(m->r, n);
    if (!n) continue;
    uint8_t *u = m->p + m->data + fb->data_offset + (size_t)k * LOOM_UOP_BYTES;
    struct loom_uop v = {pick_field(m->r, 11), pick_field(m->r, 11), pick_field(m->r, 10)};
    loom_uop_encode(&v, u);
    note(m, "buffer %u uop %u = %u %u %u", b, k, v.acc, v.inp, v.wgt);
    return 0;
  }
  return -1;
}

static int mut_job_table(struct img *m) {
  if (!m->f.job_count) return -1;
  uint32_t j = hrng_below(m->r, m->f.job_count), s = hrng_below(m->r, 8), t = hrng_below(m->r, 8);
  struct loom_file_job *jr = job_rec(m, j);
  switch (hrng_below(m->r, 4)) {
  case 0: {
    uint32_t x = jr->segments[s];
    jr->segments[s] = jr->segments[t], jr->segments[t] = x;
    note(m, "job %u: segments %u and %u swapped", j, s, t);
    break;
  }
  case 1:
    jr->segments[s] = LOOM_FILE_NO_BUFFER;
    note(m, "job %u: segment %u unmapped", j, s);
    break;
  case 2:
    jr->segments[s] = hrng_below(m->r, m->f.buffer_count);
    note(m, "job %u: segment %u -> buffer %u", j, s, jr->segments[s]);
    break;
  default: {
    uint32_t first = hrng_below(m->r, m->f.insn_count);
    jr->insn_first = first;
    jr->insn_count = 1 + hrng_below(m->r, m->f.insn_count - first);
    note(m, "job %u: instructions [%u, +%u)", j, first, jr->insn_count);
  }
  }
  return 0;
}

/* Flips n random bits in [lo, hi), the native code image included: a
 * mutant is a file nobody signed (its SIGNATURE no longer matches), so the
 * runtime never loads its image (docs/hostcode.md) and the portable host
 * ops run; a flipped instruction or relocation cannot reach the CPU. */
static void flip_bits(struct img *m, size_t lo, size_t hi, uint32_t n) {
  for (uint32_t k = 0; k < n && hi > lo; k++) {
    size_t at = lo + hrng_below(m->r, (uint32_t)(hi - lo));
    unsigned bit = hrng_below(m->r, 8);
    m->p[at] ^= (uint8_t)(1u << bit);
    note(m, "byte 0x%zx bit %u; ", at, bit);
  }
}

static int mut_record_bits(struct img *m) {
  /* Header fields after the crc, the section table and the record sections:
   * everything but INSNS and DATA, which the other mutations cover. */
  size_t lo = LOOM_FILE_CRC_START, hi = m->size;
  if (hrng_below(m->r, 3)) lo = m->buffers < m->size ? m->buffers : lo;
  flip_bits(m, lo, hi, 1 + hrng_below(m->r, 3));
  return 0;
}

static int mut_raw_bits(struct img *m) {
  flip_bits(m, 0, m->size, 1 + hrng_below(m->r, 3));
  return 0;
}

static int apply(struct img *m, enum mut_kind k) {
  switch (k) {
  case MUT_SEGMENT: return mut_segment(m);
  case MUT_HUGE_LOOP: return mut_huge_loop(m);
  case MUT_SRAM: return mut_sram(m);
  case MUT_TOKENS: return mut_tokens(m);
  case MUT_NO_FINISH: return mut_no_finish(m);
  case MUT_INSN_BITS: return mut_insn_bits(m);
  case MUT_RANDOM_INSN: return mut_random_insn(m);
  case MUT_UOP_DATA: return mut_uop_data(m);
  case MUT_JOB_TABLE: return mut_job_table(m);
  case MUT_RECORD_BITS: return mut_record_bits(m);
  case MUT_RAW_BITS: return mut_raw_bits(m);
  case MUT_COUNT: break;
  }
  return -1;
}

static void fix_crc(uint8_t *p, size_t size) {
  uint32_t crc = (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), p + LOOM_FILE_CRC_START,
                                   size - LOOM_FILE_CRC_START);
  for (int i = 0; i < 4; i++) p[LOOM_FILE_OFF_CRC32 + i] = (uint8_t)(crc >> (8 * i));
}

static size_t sec_off(const struct img *m, const void *ptr) {
  return (size_t)((const uint8_t *)ptr - (const uint8_t *)m->f.storage);
}

int hostile_mutate(const uint8_t *base, size_t size, uint64_t seed, uint64_t index,
                   struct mutant *out) {
  char msg[LOOM_MSG_MAX];
  struct hrng r = {seed * UINT64_C(0x2545F4914F6CDD1D) ^ index};
  struct img m = {.size = size, .r = &r, .what = out->what};
  memset(out, 0, sizeof *out);
  m.what = out->what;
  if (loom_file_parse(base, size, "base", &m.f, msg) != LOOM_OK) return -1;
  m.p = malloc(size);
  memcpy(m.p, base, size);
  m.insns = sec_off(&m, m.f.insns), m.data = sec_off(&m, m.f.data);
  m.buffers = sec_off(&m, m.f.buffers), m.jobs = sec_off(&m, m.f.jobs);
  m.cfg = loom_hw_config_by_hash(m.f.config_hash);
  if (!m.cfg) m.cfg = loom_hw_config_by_name("tiny");
  hrng_next(&r);
  out->n_kinds = hrng_below(&r, 4) == 0 ? 2 : 1;
  int raw = 0;
  for (int k = 0; k < out->n_kinds; k++) {
    enum mut_kind kind = (enum mut_kind)hrng_below(&r, MUT_COUNT);
    for (int tries = 0; tries < 4 && apply(&m, kind) != 0; tries++) /* no target: another kind */
      kind = (enum mut_kind)hrng_below(&r, MUT_RECORD_BITS);
    out->kinds[k] = kind;
    raw |= kind == MUT_RAW_BITS;
    if (k + 1 < out->n_kinds) note(&m, " + ");
  }
  if (!raw) fix_crc(m.p, size);
  loom_file_free(&m.f);
  out->bytes = m.p;
  out->size = size;
  return 0;
}
