/*
 * fsim_timing_bus.c - the timing model's trace, data bus and DMA walk
 * (the model: fsim_timing.c; its state: fsim_timing_int.h).
 */
#include <stdlib.h>
#include <string.h>

#include "sim/fsim/fsim_timing_int.h"

/* ---- trace ---- */

void tm_trace(struct fsim_timing *tm, int module, int kind, uint32_t insn, uint32_t opcode,
                  uint64_t begin, uint64_t end) {
  if (!tm->tracing || end <= begin) return;
  if (tm->nev == tm->cap_ev) {
    size_t cap = tm->cap_ev ? 2 * tm->cap_ev : 1024;
    struct loom_trace_event *e = realloc(tm->ev, cap * sizeof *e);
    if (!e) return; /* the timeline is best effort; the counters stay right */
    tm->ev = e, tm->cap_ev = cap;
  }
  tm->ev[tm->nev++] = (struct loom_trace_event){begin, end, insn, (uint8_t)module, (uint8_t)kind,
                                                (uint16_t)opcode};
}

/* ---- the bus ----
 *
 * The data bus is a fluid model of the DRAM model's beat scheduler: one beat
 * per `beat_cycles` cycles in all; the head read burst (reads are answered
 * in order) and the head write burst share it half and half when both want
 * it (dram_model.cpp alternates R and W), and either has it whole when
 * alone.  Work is counted in half-cycles of the bus, so both rates are
 * whole numbers.  The bus is itself an entity of the event loop: its next
 * event is the next burst to start or finish, and bursts only ever join
 * after the bus time, so advancing it never has to be undone. */

static struct tm_burst *bq_at(struct tm_bq *q, uint32_t i) { return &q->b[(q->head + i) % TM_BQ_CAP]; }

static void bq_push(struct tm_bq *q, const struct tm_burst *b) {
  LOOM_ASSERT(q->count < TM_BQ_CAP && "more bursts in flight than the outstanding limits allow");
  *bq_at(q, q->count) = *b;
  q->count++;
}

static uint64_t slot_free(const uint64_t *ring, uint64_t grants, uint32_t max) {
  return grants >= max ? ring[grants % max] : 0;
}

/* Earliest cycle a read burst can be granted (TM_INF: when a burst in
 * flight finishes). */
uint64_t tm_rd_ready(const struct fsim_timing *tm, uint64_t t) {
  uint64_t r = t > tm->ar_free ? t : tm->ar_free, s = slot_free(tm->rd_slot, tm->rd_grants, tm->rd_max);
  return s > r ? s : r;
}

/* Takes a read slot and the AR channel at cycle `t` for requester `owner`. */
static void rd_grant(struct fsim_timing *tm, uint64_t t, int owner) {
  tm->rd_slot[tm->rd_grants % tm->rd_max] = TM_INF;
  tm->rd_grants++;
  tm->ar_free = t + 1;
  tm->rr_last = owner == TM_FETCH ? 0 : owner == LOOM_Q_LOAD ? 1 : 2;
}

/* Grants a read burst of `beats` at cycle `t`; `hold` is the cycles the R
 * channel is held (the micro-ops of a UOP load are written one per cycle
 * while their beat waits). */
static void rd_burst(struct fsim_timing *tm, uint64_t t, uint32_t beats, uint32_t hold, int owner) {
  uint64_t cycles = (uint64_t)beats * tm->beat_cycles;
  if (hold > cycles) cycles = hold;
  struct tm_burst b = {t + TM_DRAM_LATENCY + consts.rd_ar, 2 * cycles, owner, 0, tm->rd_grants, 0};
  rd_grant(tm, t, owner);
  bq_push(&tm->rq, &b);
}

/* A fetch burst of `n` instructions: one part per instruction, so that
 * each arrives (and can be dispatched) as its beats do. */
void tm_rd_fetch_burst(struct fsim_timing *tm, uint64_t t, uint32_t first, uint32_t n, uint32_t per) {
  for (uint32_t i = 0; i < n; i++) {
    struct tm_burst b = {t + TM_DRAM_LATENCY + consts.rd_ar, 2 * (uint64_t)per * tm->beat_cycles, TM_FETCH,
                         first + i, tm->rd_grants, i + 1 < n};
    bq_push(&tm->rq, &b);
  }
  rd_grant(tm, t, TM_FETCH);
}

/* Earliest cycle a write burst's address can be accepted. */
static uint64_t wr_ready(const struct fsim_timing *tm, uint64_t t) {
  uint64_t r = t > tm->aw_free ? t : tm->aw_free;
  uint64_t s = slot_free(tm->wr_slot, tm->wr_grants, TM_DRAM_OUTSTANDING);
  if (s > r) r = s;
  /* loom_store.v: an AW only while its W length queue has two free entries. */
  if (tm->aw_count - tm->w_done + 2 > TM_STORE_LENQ) return TM_INF;
  return r;
}

/* A write burst whose address goes at `t` and whose data is ready from
 * `data_at`. */
static void wr_burst(struct fsim_timing *tm, uint64_t t, uint64_t data_at, uint32_t beats) {
  uint64_t s = t + consts.aw_to_w;
  struct tm_burst b = {s > data_at ? s : data_at, 2 * (uint64_t)beats * tm->beat_cycles, LOOM_Q_STORE, 0,
                       tm->wr_grants, 0};
  tm->wr_slot[tm->wr_grants % TM_DRAM_OUTSTANDING] = TM_INF;
  tm->wr_grants++;
  tm->aw_count++;
  tm->aw_free = t + 1;
  bq_push(&tm->wq, &b);
}

static int bq_active(struct tm_bq *q, uint64_t t) { return q->count && bq_at(q, 0)->at <= t; }

/* The next cycle at which a burst starts or finishes, with nothing new. */
uint64_t tm_bus_next(struct fsim_timing *tm) {
  uint64_t t = tm->bus_t, next = TM_INF;
  int r = bq_active(&tm->rq, t), w = bq_active(&tm->wq, t);
  uint64_t rate = r && w ? 1 : 2;
  if (r) next = t + (bq_at(&tm->rq, 0)->rem + rate - 1) / rate;
  else if (tm->rq.count && bq_at(&tm->rq, 0)->at < next) next = bq_at(&tm->rq, 0)->at;
  if (w) {
    uint64_t e = t + (bq_at(&tm->wq, 0)->rem + rate - 1) / rate;
    if (e < next) next = e;
  } else if (tm->wq.count && bq_at(&tm->wq, 0)->at < next) {
    next = bq_at(&tm->wq, 0)->at;
  }
  return next;
}

static void rd_finished(struct fsim_timing *tm, const struct tm_burst *b, uint64_t last);
static void wr_finished(struct fsim_timing *tm, const struct tm_burst *b, uint64_t last);

/* Runs the bus to cycle `t` (at most tm_bus_next()), finishing bursts there. */
void tm_bus_act(struct fsim_timing *tm, uint64_t t) {
  int r = bq_active(&tm->rq, tm->bus_t), w = bq_active(&tm->wq, tm->bus_t);
  uint64_t rate = r && w ? 1 : 2, dt = t - tm->bus_t;
  struct tm_burst *hr = r ? bq_at(&tm->rq, 0) : NULL, *hw = w ? bq_at(&tm->wq, 0) : NULL;
  if (hr) hr->rem = hr->rem > dt * rate ? hr->rem - dt * rate : 0;
  if (hw) hw->rem = hw->rem > dt * rate ? hw->rem - dt * rate : 0;
  tm->bus_t = t;
  if (hr && hr->rem == 0) {
    struct tm_burst b = *hr;
    tm->rq.head = (tm->rq.head + 1) % TM_BQ_CAP, tm->rq.count--;
    rd_finished(tm, &b, t - 1);
  }
  if (hw && hw->rem == 0) {
    struct tm_burst b = *hw;
    tm->wq.head = (tm->wq.head + 1) % TM_BQ_CAP, tm->wq.count--;
    wr_finished(tm, &b, t - 1);
  }
}

/* ---- DMA ---- */

static uint32_t row_bytes(const struct fsim_timing *tm, const struct loom_insn_mem *m) {
  return loom_hw_row_bytes(tm->cfg, (int)m->buffer, (int)m->src_int8);
}

/* Sets up the burst walk of a LOAD or STORE starting its engine at `t`.
 * Segment bases are taken as 4 KiB aligned (tsim's allocator and the
 * runtime's give at least that), so only offsets decide the 4 KiB splits. */
void tm_dma_start(struct fsim_timing *tm, struct tm_mod *mod, uint64_t t) {
  const struct loom_insn_mem *m = &mod->insn.mem;
  struct tm_dma *d = &mod->dma;
  uint64_t r = row_bytes(tm, m);
  memset(d, 0, sizeof *d);
  d->first = t + consts.check;
  if (m->x_size == 0 || m->y_size == 0) return;
  if (m->src_out) { /* loom_move: one INP row per cycle from OUT, no DRAM */
    d->first += (uint64_t)(m->y_pad_top + m->y_size + m->y_pad_bottom) * (m->x_pad_left + m->x_size + m->x_pad_right) +
                consts.move_tail;
    return;
  }
  d->active = 1;
  d->is_store = mod->insn.opcode == LOOM_OP_STORE;
  d->hold_bytes = m->buffer == LOOM_BUF_UOP ? LOOM_UOP_BYTES : m->buffer == LOOM_BUF_LUT ? 1 : 0;
  d->row_addr = (uint64_t)m->dram_offset * r;
  d->stride = (uint64_t)m->x_stride * r;
  d->row_bytes = (uint64_t)m->x_size * r;
  d->rows_left = m->y_size;
  d->next_issue = d->first;
  d->last_done = d->first;
  d->cells = (uint64_t)(m->y_pad_top + m->y_size + m->y_pad_bottom) *
             (m->x_pad_left + m->x_size + m->x_pad_right);
}

/* The next burst of the walk: its address and beats; advances the walk. */
static uint32_t dma_next_burst(struct fsim_timing *tm, struct tm_dma *d, uint32_t *uops) {
  uint64_t bus = tm->bus_bytes;
  if (d->rem_beats == 0) {
    uint64_t lo = d->row_addr & ~(bus - 1), hi = (d->row_addr + d->row_bytes + bus - 1) & ~(bus - 1);
    d->addr = lo;
    d->row_lo = d->row_addr, d->row_hi = d->row_addr + d->row_bytes;
    d->rem_beats = (uint32_t)((hi - lo) / bus);
    d->row_addr += d->stride;
    d->rows_left--;
  }
  uint32_t to_4k = (uint32_t)((4096 - (d->addr & 4095)) / bus);
  uint32_t len = d->rem_beats < TM_MAX_BEATS ? d->rem_beats : TM_MAX_BEATS;
  if (len > to_4k) len = to_4k;
  /* A UOP beat is held while its micro-ops of this row are written, one
   * per cycle (loom_compute_ld.v); a LUT beat while its bytes are, one per
   * cycle (loom_load.v). */
  uint64_t a = d->addr > d->row_lo ? d->addr : d->row_lo, b = d->addr + (uint64_t)len * bus;
  if (b > d->row_hi) b = d->row_hi;
  *uops = d->hold_bytes ? (uint32_t)((b - a) / d->hold_bytes) : len;
  d->addr += (uint64_t)len * bus;
  d->rem_beats -= len;
  return len;
}

int tm_dma_walk_done(const struct tm_dma *d) { return d->rem_beats == 0 && d->rows_left == 0; }

/* Earliest cycle the next burst of `mod`'s transfer can go. */
uint64_t tm_dma_ready(const struct fsim_timing *tm, const struct tm_mod *mod) {
  const struct tm_dma *d = &mod->dma;
  return d->is_store ? wr_ready(tm, d->next_issue) : tm_rd_ready(tm, d->next_issue);
}

/* Issues one burst at `t`. */
void tm_dma_step(struct fsim_timing *tm, int m, uint64_t t) {
  struct tm_mod *mod = &tm->mod[m];
  struct tm_dma *d = &mod->dma;
  uint32_t hold;
  uint32_t beats = dma_next_burst(tm, d, &hold);
  if (d->is_store) {
    /* OUT rows are read one per cycle from the start of the run; the W
     * beats of this burst need theirs. */
    uint32_t r = row_bytes(tm, &mod->insn.mem);
    uint64_t data_at = d->first + consts.out_lead + d->beats * tm->bus_bytes / (r ? r : 1);
    wr_burst(tm, t, data_at, beats);
  } else {
    rd_burst(tm, t, beats, hold, m);
  }
  d->beats += beats;
  d->moving += hold > (uint64_t)beats * tm->beat_cycles ? hold : (uint64_t)beats * tm->beat_cycles;
  d->bursts++;
  d->pending++;
  d->next_issue = t + 1;
}

static void rd_finished(struct fsim_timing *tm, const struct tm_burst *b, uint64_t last) {
  if (!b->more) tm->rd_slot[b->grant % tm->rd_max] = last + 1;
  if (b->owner == TM_FETCH) {
    tm->arrive[b->aux] = last + consts.rd_r;
    return;
  }
  struct tm_dma *d = &tm->mod[b->owner].dma;
  d->pending--;
  if (last + consts.rd_r > d->last_done) d->last_done = last + consts.rd_r;
}

static void wr_finished(struct fsim_timing *tm, const struct tm_burst *b, uint64_t last) {
  uint64_t bresp = last + TM_DRAM_LATENCY + consts.wr_tail;
  struct tm_dma *d = &tm->mod[LOOM_Q_STORE].dma;
  tm->wr_slot[b->grant % TM_DRAM_OUTSTANDING] = last + TM_DRAM_LATENCY + 1;
  tm->w_done++;
  d->pending--;
  if (bresp > d->last_done) d->last_done = bresp;
}

/* When the engine reports done, once every burst has finished. */
uint64_t tm_dma_end(const struct tm_mod *mod) {
  const struct tm_dma *d = &mod->dma;
  if (!d->active) return d->first;
  uint64_t e = d->last_done + (d->is_store ? 0 : consts.rd_tail);
  if (mod->insn.mem.buffer == LOOM_BUF_ACC) e += consts.acc_tail;
  /* loom_pad_walk: data rows and padding share one SRAM write port. */
  if (d->first + d->cells + consts.pad_tail > e) e = d->first + d->cells + consts.pad_tail;
  return e;
}
