/*
 * hostile_race.c - a static happens-before check of a .loom file's jobs:
 * does any job hold two instructions of different modules that touch the
 * same SRAM rows, one of them writing, with no token chain ordering them?
 *
 * (or the same DRAM bytes of a buffer).  Such a pair is a race: docs/isa.md orders instructions of one module by
 * the stream, and instructions of different modules only through tokens (a
 * push after the pushing instruction executes, a pop before the popping
 * one does), so the two accesses may happen in either order, and fsim's
 * schedule and the RTL's may pick different ones.  The runner uses it to
 * explain outputs that differ between fsim and tsim when no DRAM timing
 * makes tsim's own outputs change.
 *
 * Happens-before: each module's instructions get sequence numbers; an
 * instruction's vector clock is its predecessor's in the module, joined
 * with the clock of the push its pop consumes (the k-th pop of a token
 * queue takes the k-th push).  A happens-before B iff A's sequence number
 * is at most B's clock entry for A's module.
 *
 * Access sets are row intervals per SRAM buffer, and for LOAD and STORE the
 * byte interval of the DRAM buffer their segment maps (a LOAD reading what
 * a STORE of the same job writes races the same way), a superset of what an
 * instruction touches: LOAD and STORE exactly; GEMM and ALU over every
 * micro-op and loop iteration, from the micro-ops the same job loaded into
 * UOP from CONST data (UOP loads and GEMM/ALU are all compute-module
 * instructions, so stream order is execution order).  A micro-op whose
 * value is unknown (never loaded in this job, or loaded from a WORK buffer)
 * counts as touching its whole buffers.  ISA v2: a GEMM's `last` and an
 * ALU EPI read the whole PAR buffer and the activation table, a depthwise
 * GEMM's window the whole INP buffer, and a LOAD INP from OUT reads OUT
 * rows instead of DRAM.  Supersets can only add races, so
 * the check never calls a racy program race-free; the runner makes sure no
 * base is reported racy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/loomfile.h"
#include "hostile.h"
#include "loom/isa.h"

#define NQ LOOM_Q_COUNT
#define RACE_MAX_INSNS 8192u /* larger jobs are not analysed (never called racy) */

struct span {
  uint64_t lo, hi; /* rows [lo, hi); empty when lo >= hi */
};

struct access {
  struct span rd[LOOM_BUF_COUNT], wr[LOOM_BUF_COUNT];
  uint32_t dram_buf;      /* file buffer a LOAD reads or a STORE writes, or NO_BUFFER */
  struct span dram;       /* its bytes */
  int dram_write;
};

struct event {
  int module;
  uint32_t seq, index;       /* sequence number in the module, stream index */
  uint32_t clock[NQ];        /* vector clock (sequence numbers, 1-based; 0 = none) */
  struct access acc;
};

/* The UOP buffer as far as this job's LOADs define it. */
struct uops {
  struct loom_uop *v;
  uint8_t *known;
  uint32_t rows;
  struct loom_insn_gcfg gcfg; /* the compute module's last GCFG in this job */
  int gcfg_known;
};

static void widen(struct span *s, uint64_t lo, uint64_t hi) {
  if (lo >= hi) return;
  if (s->lo >= s->hi) *s = (struct span){lo, hi};
  if (lo < s->lo) s->lo = lo;
  if (hi > s->hi) s->hi = hi;
}

static int overlap(const struct span *a, const struct span *b) {
  return a->lo < a->hi && b->lo < b->hi && a->lo < b->hi && b->lo < a->hi;
}

/* The file buffer behind a job's segment, or NULL. */
static const struct loom_file_buffer *seg_buffer(const struct loom_file *f,
                                                 const struct loom_file_job *j, uint32_t seg) {
  uint32_t b = seg < LOOM_NUM_SEGMENTS ? j->segments[seg] : LOOM_FILE_NO_BUFFER;
  return b < f->buffer_count ? &f->buffers[b] : NULL;
}

/* A LOAD UOP: the micro-ops it writes, known when they come from CONST data. */
static void load_uops(const struct loom_file *f, const struct loom_file_job *j,
                      const struct loom_insn_mem *m, struct uops *u) {
  const struct loom_file_buffer *b = seg_buffer(f, j, m->segment);
  for (uint32_t y = 0; y < m->y_size; y++)
    for (uint32_t x = 0; x < m->x_size; x++) {
      uint64_t row = (uint64_t)m->sram_base + (uint64_t)y * m->x_size + x;
      uint64_t off = ((uint64_t)m->dram_offset + (uint64_t)y * m->x_stride + x) * LOOM_UOP_BYTES;
      if (row >= u->rows) return;
      u->known[row] = b && b->kind == LOOM_BUFKIND_CONST && off + LOOM_UOP_BYTES <= b->size;
      if (u->known[row]) loom_uop_decode(f->data + b->data_offset + off, &u->v[row]);
    }
}

/* Rows base + i * fo + j * fi over the loops, for every base in [lo, hi]. */
static struct span loop_rows(uint64_t lo, uint64_t hi, uint32_t io, uint32_t ii, uint32_t fo,
                             uint32_t fi) {
  return (struct span){lo, hi + (uint64_t)(io - 1) * fo + (uint64_t)(ii - 1) * fi + 1};
}

/* Micro-op field ranges of [begin, end): min and max of acc, inp, wgt, or
 * the whole range when one is unknown. */
static void uop_ranges(const struct uops *u, uint32_t begin, uint32_t end, uint64_t lo[3],
                       uint64_t hi[3]) {
  for (int k = 0; k < 3; k++) lo[k] = UINT64_MAX, hi[k] = 0;
  for (uint32_t r = begin; r < end; r++) {
    uint64_t v[3] = {0, 0, 0};
    int known = r < u->rows && u->known[r];
    if (known) v[0] = u->v[r].acc, v[1] = u->v[r].inp, v[2] = u->v[r].wgt;
    for (int k = 0; k < 3; k++) {
      uint64_t vlo = known ? v[k] : 0, vhi = known ? v[k] : UINT32_MAX;
      if (vlo < lo[k]) lo[k] = vlo;
      if (vhi > hi[k]) hi[k] = vhi;
    }
  }
}

static void gemm_access(const struct loom_insn_gemm *g, const struct uops *u, struct access *a) {
  if (!g->iter_out || !g->iter_in || g->uop_end <= g->uop_begin) return;
  uint64_t lo[3], hi[3];
  uop_ranges(u, g->uop_begin, g->uop_end, lo, hi);
  widen(&a->rd[LOOM_BUF_UOP], g->uop_begin, g->uop_end);
  struct span acc = loop_rows(lo[0], hi[0], g->iter_out, g->iter_in, g->acc_factor_out,
                              g->acc_factor_in);
  widen(&a->wr[LOOM_BUF_ACC], acc.lo, acc.hi);
  widen(&a->wr[LOOM_BUF_OUT], acc.lo, acc.hi);
  if (g->last) widen(&a->rd[LOOM_BUF_PAR], 0, LOOM_PAR_ROWS), widen(&a->rd[LOOM_BUF_LUT], 0, 1);
  if (g->reset) return;
  widen(&a->rd[LOOM_BUF_ACC], acc.lo, acc.hi);
  struct span x = loop_rows(lo[1], hi[1], g->iter_out, g->iter_in, g->inp_factor_out,
                            g->inp_factor_in);
  struct span w = loop_rows(lo[2], hi[2], g->iter_out, g->iter_in, g->wgt_factor_out,
                            g->wgt_factor_in);
  if (g->dw) { /* the window: up to (kh - 1) rows and (kw - 1) columns further */
    const struct loom_insn_gcfg *c = &u->gcfg;
    uint64_t reach = (uint64_t)(c->dw_kh ? c->dw_kh - 1 : 0) * c->dw_row + (uint64_t)(c->dw_kw ? c->dw_kw - 1 : 0) * c->dw_col;
    x.hi = u->gcfg_known ? x.hi + reach : UINT32_MAX;
  }
  widen(&a->rd[LOOM_BUF_INP], x.lo, x.hi);
  widen(&a->rd[LOOM_BUF_WGT], w.lo, w.hi);
}

static void alu_access(const struct loom_insn_alu *in, const struct uops *u, struct access *a) {
  if (!in->iter_out || !in->iter_in || in->uop_end <= in->uop_begin) return;
  uint64_t lo[3], hi[3];
  uop_ranges(u, in->uop_begin, in->uop_end, lo, hi);
  widen(&a->rd[LOOM_BUF_UOP], in->uop_begin, in->uop_end);
  struct span d = loop_rows(lo[0], hi[0], in->iter_out, in->iter_in, in->dst_factor_out,
                            in->dst_factor_in);
  widen(&a->rd[LOOM_BUF_ACC], d.lo, d.hi);
  widen(&a->wr[LOOM_BUF_ACC], d.lo, d.hi);
  widen(&a->wr[LOOM_BUF_OUT], d.lo, d.hi);
  if (in->alu_op == LOOM_ALU_EPI) widen(&a->rd[LOOM_BUF_PAR], 0, LOOM_PAR_ROWS), widen(&a->rd[LOOM_BUF_LUT], 0, 1);
  if (in->use_imm) return;
  struct span s = loop_rows(lo[1], hi[1], in->iter_out, in->iter_in, in->src_factor_out,
                            in->src_factor_in);
  widen(&a->rd[LOOM_BUF_ACC], s.lo, s.hi);
}

/* The DRAM bytes of the transfer, as a span of the buffer its segment maps. */
static void dram_access(const struct loom_file_job *j, const struct loom_hw_config *cfg,
                        const struct loom_insn *in, struct access *a) {
  const struct loom_insn_mem *m = &in->mem;
  int out = in->opcode == LOOM_OP_STORE;
  uint32_t r = loom_hw_row_bytes(cfg, out ? LOOM_BUF_OUT : (int)m->buffer, out ? 0 : (int)m->src_int8);
  uint64_t last = (uint64_t)m->dram_offset + (uint64_t)(m->y_size - 1) * m->x_stride + m->x_size;
  a->dram_buf = m->segment < LOOM_NUM_SEGMENTS ? j->segments[m->segment] : LOOM_FILE_NO_BUFFER;
  a->dram = (struct span){(uint64_t)m->dram_offset * r, last * r};
  a->dram_write = out;
}

static void mem_access(const struct loom_file_job *j, const struct loom_hw_config *cfg,
                       const struct loom_insn *in, struct access *a) {
  const struct loom_insn_mem *m = &in->mem;
  if (!m->x_size || !m->y_size) return;
  if (in->opcode == LOOM_OP_LOAD && m->src_out) /* OUT rows, no DRAM */
    widen(&a->rd[LOOM_BUF_OUT], m->dram_offset,
          (uint64_t)m->dram_offset + (uint64_t)(m->y_size - 1) * m->x_stride + m->x_size);
  else
    dram_access(j, cfg, in, a);
  if (in->opcode == LOOM_OP_STORE) {
    widen(&a->rd[LOOM_BUF_OUT], m->sram_base, (uint64_t)m->sram_base + (uint64_t)m->y_size * m->x_size);
    return;
  }
  uint64_t h = (uint64_t)m->y_pad_top + m->y_size + m->y_pad_bottom;
  uint64_t w = (uint64_t)m->x_pad_left + m->x_size + m->x_pad_right;
  if (m->buffer >= LOOM_BUF_COUNT) return;
  widen(&a->wr[m->buffer], m->sram_base, m->sram_base + h * w);
  if (m->buffer == LOOM_BUF_ACC) widen(&a->wr[LOOM_BUF_OUT], m->sram_base, m->sram_base + h * w);
}

static void access_of(const struct loom_file *f, const struct loom_file_job *j,
                      const struct loom_insn *in, struct uops *u, struct access *a) {
  const struct loom_hw_config *cfg = loom_hw_config_by_hash(f->config_hash);
  memset(a, 0, sizeof *a);
  a->dram_buf = LOOM_FILE_NO_BUFFER;
  switch (in->opcode) {
  case LOOM_OP_LOAD:
    mem_access(j, cfg, in, a);
    if (in->mem.buffer == LOOM_BUF_UOP) load_uops(f, j, &in->mem, u);
    break;
  case LOOM_OP_STORE: mem_access(j, cfg, in, a); break;
  case LOOM_OP_GEMM: gemm_access(&in->gemm, u, a); break;
  case LOOM_OP_ALU: alu_access(&in->alu, u, a); break;
  case LOOM_OP_GCFG: u->gcfg = in->gcfg, u->gcfg_known = 1; break;
  default: break;
  }
}

static int conflict(const struct access *a, const struct access *b) {
  if (a->dram_buf != LOOM_FILE_NO_BUFFER && a->dram_buf == b->dram_buf &&
      (a->dram_write || b->dram_write) && overlap(&a->dram, &b->dram))
    return 1;
  for (int k = 0; k < LOOM_BUF_COUNT; k++)
    if (overlap(&a->wr[k], &b->wr[k]) || overlap(&a->wr[k], &b->rd[k]) ||
        overlap(&a->rd[k], &b->wr[k]))
      return 1;
  return 0;
}

static int hb(const struct event *a, const struct event *b) {
  return a->seq <= b->clock[a->module];
}

/* ---- clocks ---- */

/* Token queue `from` -> `to` (adjacent modules) as an index 0..3. */
static int tokq(int from, int to) { return to > from ? from : 2 + to; }

struct tokens {
  const struct event **push[4]; /* the pushing events of each queue, in order */
  size_t npush[4], npop[4];
};

/* Joins the clocks of the pushes e's pops consume; 0 when one is missing
 * (the pop would wait forever). */
static int take_pops(struct tokens *t, const struct loom_insn *in, struct event *e) {
  int m = e->module, from[2] = {m - 1, m + 1}, pops[2] = {(int)in->pop_prev, (int)in->pop_next};
  for (int s = 0; s < 2; s++) {
    if (!pops[s] || from[s] < 0 || from[s] >= NQ) continue;
    int q = tokq(from[s], m);
    if (t->npop[q] >= t->npush[q]) return 0;
    const struct event *p = t->push[q][t->npop[q]++];
    for (int k = 0; k < NQ; k++)
      if (p->clock[k] > e->clock[k]) e->clock[k] = p->clock[k];
  }
  return 1;
}

static void give_pushes(struct tokens *t, const struct loom_insn *in, const struct event *e) {
  int m = e->module, to[2] = {m - 1, m + 1}, push[2] = {(int)in->push_prev, (int)in->push_next};
  if (in->opcode == LOOM_OP_FINISH) return;
  for (int s = 0; s < 2; s++)
    if (push[s] && to[s] >= 0 && to[s] < NQ) {
      int q = tokq(m, to[s]);
      t->push[q][t->npush[q]++] = e;
    }
}

/* Events of job j in a dataflow order (each module advances while its pops
 * are satisfied); returns how many could be placed. */
static size_t place_events(const struct loom_file *f, const struct loom_file_job *j,
                           const struct loom_insn *insns, uint32_t n, struct event *ev,
                           struct tokens *t, struct uops *u) {
  uint32_t next[NQ] = {0, 0, 0}, seq[NQ] = {0, 0, 0}, last[NQ] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
  size_t placed = 0;
  for (int progress = 1; progress;) {
    progress = 0;
    for (int m = 0; m < NQ; m++) {
      while (next[m] < n && loom_insn_queue(&insns[next[m]]) != m) next[m]++;
      if (next[m] >= n) continue;
      struct event *e = &ev[next[m]];
      memset(e, 0, sizeof *e);
      e->module = m, e->index = next[m];
      if (last[m] != UINT32_MAX) memcpy(e->clock, ev[last[m]].clock, sizeof e->clock);
      size_t saved[4];
      memcpy(saved, t->npop, sizeof saved);
      if (!take_pops(t, &insns[next[m]], e)) {
        memcpy(t->npop, saved, sizeof saved);
        continue;
      }
      e->seq = e->clock[m] = ++seq[m];
      access_of(f, j, &insns[next[m]], u, &e->acc);
      give_pushes(t, &insns[next[m]], e);
      last[m] = next[m]++;
      placed++, progress = 1;
    }
  }
  return placed;
}

/* ---- the check ---- */

/* Decoded instructions of job j up to its first FINISH or undecodable one. */
static uint32_t decode_job(const struct loom_file *f, const struct loom_file_job *j,
                           struct loom_insn *out) {
  uint32_t n = 0;
  for (; n < j->insn_count; n++) {
    const uint8_t *p = f->insns + ((size_t)j->insn_first + n) * LOOM_INSN_BYTES;
    if (loom_insn_decode(p, &out[n], NULL) != LOOM_ERR_NONE) break;
    if (out[n].opcode == LOOM_OP_FINISH) return n + 1;
  }
  return n;
}

static int job_race(const struct loom_file *f, const struct loom_file_job *j, uint32_t uop_rows,
                    char *what, size_t wn) {
  struct loom_insn *insns = calloc(j->insn_count + 1, sizeof *insns);
  struct event *ev = calloc(j->insn_count + 1, sizeof *ev);
  struct tokens t;
  memset(&t, 0, sizeof t);
  struct uops u = {.v = calloc(uop_rows, sizeof *u.v), .known = calloc(uop_rows, 1), .rows = uop_rows};
  for (int q = 0; q < 4; q++) t.push[q] = calloc(j->insn_count + 1, sizeof *t.push[q]);
  int race = 0;
  if (insns && ev && u.v && u.known && t.push[0] && t.push[1] && t.push[2] && t.push[3]) {
    uint32_t n = decode_job(f, j, insns);
    size_t placed = place_events(f, j, insns, n, ev, &t, &u);
    if (placed < n) n = 0; /* a pop that never gets its token: the job cannot complete */
    if (n > RACE_MAX_INSNS) n = 0; /* pairs grow as n^2: no explanation for huge jobs */
    for (uint32_t a = 0; a < n && !race; a++)
      for (uint32_t b = a + 1; b < n && !race; b++)
        if (ev[a].module != ev[b].module && !hb(&ev[a], &ev[b]) && !hb(&ev[b], &ev[a]) &&
            conflict(&ev[a].acc, &ev[b].acc)) {
          race = 1;
          if (what) snprintf(what, wn, "insns %u (%s) and %u (%s) touch the same SRAM rows unordered",
                             a, loom_opcode_name(insns[a].opcode), b, loom_opcode_name(insns[b].opcode));
        }
  }
  for (int q = 0; q < 4; q++) free(t.push[q]);
  free(u.v), free(u.known), free(ev), free(insns);
  return race;
}

int hostile_races(const uint8_t *bytes, size_t size, char *what, size_t wn) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(bytes, size, "m", &f, msg) != LOOM_OK) return 0;
  const struct loom_hw_config *cfg = loom_hw_config_by_hash(f.config_hash);
  uint32_t uop_rows = cfg ? loom_hw_buffer_rows(cfg, LOOM_BUF_UOP) : 0;
  int race = 0;
  for (uint32_t j = 0; j < f.job_count && !race && uop_rows; j++)
    race = job_race(&f, &f.jobs[j], uop_rows, what, wn);
  loom_file_free(&f);
  return race;
}
