/*
 * fsim_timing.c - the cycle-approximate timing model (docs/fsim-timing.md).
 *
 * fsim is a Kahn network: what a job computes does not depend on timing, so
 * the model runs after the functional run, on the same instruction stream,
 * as a small discrete-event simulation of the RTL's structure:
 *
 *   fetch      reads the stream in bursts of up to 16 instructions into a
 *              16-entry buffer (a burst only when half of it is free) and
 *              dispatches one instruction per cycle, in order, stalling on
 *              a full command queue (loom_fetch.v);
 *   load, compute, store
 *              take an instruction, pop tokens, execute, push tokens
 *              (loom_insn_seq.v), one cycle per step;
 *   the engines
 *              GEMM and ALU: one micro-op per cycle (ALU with a vector
 *              operand: two) plus the pipeline drain; LOAD and STORE: the
 *              bounds check, then one burst per cycle split at 256 beats and
 *              at 4 KiB, never spanning two rows (loom_burst_gen.v);
 *   the bus    read requests are granted round-robin (fetch, load, compute)
 *              one per cycle, within the outstanding-burst limit of
 *              loom_axi_rd_arb.v and the DRAM model's (sim/tsim/
 *              dram_model.cpp); a burst's first beat comes `latency` cycles
 *              after its address and bursts are answered in order; reads and
 *              writes share one beat per cycle (a fluid model of the DRAM's
 *              R/W alternation, see "the bus" in fsim_timing_bus.c); at most `outstanding`
 *              write bursts wait for their response; the store's AW runs at
 *              most LenQ - 2 bursts ahead of its W.
 *
 * Every entity (the fetch requester, the dispatcher, the three modules, the
 * bus) says when its next step can happen given the others' state, or that
 * it waits for another to act; the loop always runs the earliest step (ties:
 * the bus first, then the read requesters in round-robin order), so
 * everything happens in time order.  A step is a burst, a bus event or a
 * phase of an instruction, never a cycle, so the model costs a tenth of
 * the functional run.  The ALU's interlock depends on the micro-ops, so the
 * functional run reports each ALU instruction's stall (fsim_timing_alu).
 *
 * The other constants are cycle costs of the RTL's fixed steps, each
 * pinned by a micro-benchmark on tsim (struct tm_consts in fsim_timing_int.h); the DRAM's
 * are tsim's defaults.  Segment bases count as 4 KiB aligned (tsim's
 * allocator and the runtime's give that), for the 4 KiB burst splits.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/fsim/fsim_timing_int.h"

/* ---- engines without the bus ---- */

static uint64_t loop_ops(uint32_t io, uint32_t ii, uint32_t ub, uint32_t ue) {
  return ue > ub ? (uint64_t)io * ii * (ue - ub) : 0;
}

/* Cycles from engine start to done for GEMM, ALU, QCFG, NOP. */
static uint64_t engine_cycles(const struct fsim_timing *tm, const struct loom_insn *in, uint32_t index) {
  switch (in->opcode) {
  case LOOM_OP_GEMM: {
    uint64_t n = loop_ops(in->gemm.iter_out, in->gemm.iter_in, in->gemm.uop_begin, in->gemm.uop_end);
    return n ? n + consts.gemm_fill + (in->gemm.dw ? tm->alu_stall[index] : 0) : 1;
  }
  case LOOM_OP_ALU: {
    uint64_t n = loop_ops(in->alu.iter_out, in->alu.iter_in, in->alu.uop_begin, in->alu.uop_end);
    return n ? n * (in->alu.use_imm || in->alu.alu_op == LOOM_ALU_EPI ? 1 : 2) + consts.alu_fill + tm->alu_stall[index] : 1;
  }
  default: return 1;
  }
}

/* ---- queues ---- */

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static struct tm_tokq *phase_tok(struct fsim_timing *tm, int m, enum tm_phase p) {
  static const int8_t map[LOOM_Q_COUNT][6] = {
      [LOOM_Q_LOAD] = {-1, -1, FSIM_TOK_C2L, -1, -1, FSIM_TOK_L2C},
      [LOOM_Q_COMPUTE] = {-1, FSIM_TOK_L2C, FSIM_TOK_S2C, -1, FSIM_TOK_C2L, FSIM_TOK_C2S},
      [LOOM_Q_STORE] = {-1, FSIM_TOK_C2S, -1, -1, FSIM_TOK_S2C, -1},
  };
  int q = map[m][p];
  return q < 0 ? NULL : &tm->tok[q];
}

static uint32_t phase_flag(const struct loom_insn *in, enum tm_phase p) {
  switch (p) {
  case TM_POP_PREV: return in->pop_prev;
  case TM_POP_NEXT: return in->pop_next;
  case TM_PUSH_PREV: return in->push_prev;
  case TM_PUSH_NEXT: return in->push_next;
  default: return 0;
  }
}

/* ---- modules ---- */

static int mod_drained(const struct tm_mod *mod) { return mod->phase == TM_IDLE && mod->q.count == 0; }

static uint64_t mod_ready(struct fsim_timing *tm, int m) {
  struct tm_mod *mod = &tm->mod[m];
  switch (mod->phase) {
  case TM_IDLE:
    if (mod->q.count == 0) return TM_INF;
    return max64(mod->t + mod->take_gap, mod->q.at[mod->q.head] + 1);
  case TM_POP_PREV:
  case TM_POP_NEXT: {
    struct tm_tokq *q = phase_tok(tm, m, mod->phase);
    if (q->count == 0) return TM_INF;
    return max64(mod->t, q->at[q->head] + 1);
  }
  case TM_PUSH_PREV:
  case TM_PUSH_NEXT: {
    struct tm_tokq *q = phase_tok(tm, m, mod->phase);
    if (q->count == q->cap) return TM_INF;
    return max64(mod->t, q->room_at);
  }
  case TM_EXEC:
    if (mod->insn.opcode == LOOM_OP_FINISH) {
      const struct tm_mod *l = &tm->mod[LOOM_Q_LOAD], *s = &tm->mod[LOOM_Q_STORE];
      if (!mod_drained(l) || !mod_drained(s)) return TM_INF;
      return max64(mod->t, max64(l->idle_at, s->idle_at));
    }
    if (mod->dma.active) {
      if (!tm_dma_walk_done(&mod->dma)) return max64(mod->t, tm_dma_ready(tm, mod));
      return mod->dma.pending ? TM_INF : max64(mod->t, mod->dma.last_done);
    }
    return mod->t;
  }
  return TM_INF;
}

static const int trace_module[LOOM_Q_COUNT] = {LOOM_MOD_LOAD, LOOM_MOD_COMPUTE, LOOM_MOD_STORE};

/* Moves past phases whose flag is clear (no cycle spent) from `p`. */
static void enter_phase(struct fsim_timing *tm, int m, enum tm_phase p, uint64_t t) {
  struct tm_mod *mod = &tm->mod[m];
  while ((p == TM_POP_PREV || p == TM_POP_NEXT || p == TM_PUSH_PREV || p == TM_PUSH_NEXT) &&
         !phase_flag(&mod->insn, p))
    p = p == TM_PUSH_NEXT ? TM_IDLE : p + 1;
  mod->phase = p;
  mod->t = t;
  if (p == TM_EXEC) {
    mod->exec_begin = t; /* start_q: the engine starts in the cycle the phase is entered */
    if (mod->insn.opcode == LOOM_OP_LOAD || mod->insn.opcode == LOOM_OP_STORE)
      tm_dma_start(tm, mod, mod->exec_begin);
    else
      mod->dma.active = 0;
    mod->t = mod->exec_begin;
  } else if (p == TM_IDLE) {
    mod->idle_at = t;
    mod->busy += t - mod->taken - 1; /* StIdle, where the take happens, is not busy */
  }
}

static void exec_done(struct fsim_timing *tm, int m, uint64_t end) {
  struct tm_mod *mod = &tm->mod[m];
  /* loom_load.v and loom_store.v leave StDone a cycle after reporting done:
   * idle (for FINISH) at once, the next instruction a cycle later. */
  mod->take_gap = mod->dma.active && m != LOOM_Q_COMPUTE ? consts.dma_gap : 0;
  tm_trace(tm, trace_module[m], LOOM_TRACE_INSN, mod->index, mod->insn.opcode, mod->exec_begin, end);
  if (mod->dma.active) {
    /* the RTL counts the cycles of the transfer without a beat at hand */
    uint64_t moving = mod->dma.moving, span = mod->dma.last_done - mod->dma.first;
    if (span > moving) mod->mem_stall += span - moving;
    tm_trace(tm, trace_module[m], LOOM_TRACE_MEM_WAIT, mod->index, mod->insn.opcode, mod->dma.first,
          mod->dma.first + TM_DRAM_LATENCY + consts.rd_ar + consts.rd_r < end
              ? mod->dma.first + TM_DRAM_LATENCY + consts.rd_ar + consts.rd_r : end);
  }
  enter_phase(tm, m, TM_PUSH_PREV, end);
}

static void tok_wait(struct fsim_timing *tm, int m, uint64_t t) {
  struct tm_mod *mod = &tm->mod[m];
  if (t > mod->t) {
    mod->tok_stall += t - mod->t;
    tm_trace(tm, trace_module[m], LOOM_TRACE_TOKEN_WAIT, mod->index, mod->insn.opcode, mod->t, t);
  }
}

static void mod_act(struct fsim_timing *tm, int m, uint64_t t) {
  struct tm_mod *mod = &tm->mod[m];
  switch (mod->phase) {
  case TM_IDLE: {
    struct tm_cmdq *q = &mod->q;
    mod->index = q->idx[q->head];
    const char *why;
    loom_insn_decode(tm->insns + (size_t)mod->index * LOOM_INSN_BYTES, &mod->insn, &why);
    if (q->count == q->cap) q->room_at = t + 1;
    q->head = (q->head + 1) % q->cap;
    q->count--;
    mod->taken = t;
    enter_phase(tm, m, TM_POP_PREV, t + consts.take);
    return;
  }
  case TM_POP_PREV:
  case TM_POP_NEXT: {
    struct tm_tokq *q = phase_tok(tm, m, mod->phase);
    tok_wait(tm, m, t);
    if (q->count == q->cap) q->room_at = t + 1;
    q->head = (q->head + 1) % q->cap;
    q->count--;
    enter_phase(tm, m, mod->phase + 1, t + consts.token);
    return;
  }
  case TM_PUSH_PREV:
  case TM_PUSH_NEXT: {
    struct tm_tokq *q = phase_tok(tm, m, mod->phase);
    tok_wait(tm, m, t);
    q->at[(q->head + q->count) % q->cap] = t;
    q->count++;
    enter_phase(tm, m, mod->phase == TM_PUSH_NEXT ? TM_IDLE : mod->phase + 1, t + consts.token);
    return;
  }
  case TM_EXEC:
    if (mod->insn.opcode == LOOM_OP_FINISH) {
      tm->finished = 1;
      tm->end = t; /* finish_go: done in the cycle FINISH executes */
      mod->busy += t - mod->taken;
      return;
    }
    if (mod->dma.active) {
      if (!tm_dma_walk_done(&mod->dma)) tm_dma_step(tm, m, t);
      else exec_done(tm, m, tm_dma_end(mod));
      return;
    }
    if (mod->insn.opcode == LOOM_OP_LOAD || mod->insn.opcode == LOOM_OP_STORE) {
      exec_done(tm, m, mod->dma.first); /* empty transfer: the check only */
      return;
    }
    exec_done(tm, m, t + engine_cycles(tm, &mod->insn, mod->index));
    return;
  }
}

/* ---- fetch ---- */

/* The requester: a burst for as many instructions as the buffer has room
 * for, once half of it is free or the rest of the stream fits. */
static uint32_t fetch_burst_len(const struct fsim_timing *tm) {
  uint32_t left = tm->insn_count - tm->fetch_req;
  uint32_t room = TM_FETCH_BUF - (tm->fetch_req - tm->fetch_disp);
  if (left == 0 || (room < TM_FETCH_BUF / 2 && left > room)) return 0;
  uint32_t n = left < room ? left : room;
  if (n > TM_FETCH_BURST) n = TM_FETCH_BURST;
  uint32_t to_4k = (uint32_t)((4096 - ((uint64_t)tm->fetch_req * LOOM_INSN_BYTES) % 4096) / LOOM_INSN_BYTES);
  return n < to_4k ? n : to_4k;
}

static uint64_t fetch_ready(const struct fsim_timing *tm) {
  if (tm->fetch_disp > tm->finish_index || !fetch_burst_len(tm)) return TM_INF;
  return tm_rd_ready(tm, tm->fetch_t);
}

static void fetch_act(struct fsim_timing *tm, uint64_t t) {
  uint32_t n = fetch_burst_len(tm), per = LOOM_INSN_BYTES / tm->bus_bytes ? LOOM_INSN_BYTES / tm->bus_bytes : 1;
  for (uint32_t i = 0; i < n; i++) tm->arrive[tm->fetch_req + i] = TM_INF;
  tm_rd_fetch_burst(tm, t, tm->fetch_req, n, per);
  tm->fetch_req += n;
  tm->fetch_t = t + 1;
}

static uint64_t disp_ready(const struct fsim_timing *tm) {
  uint32_t i = tm->fetch_disp;
  if (i > tm->finish_index || i >= tm->fetch_req || tm->arrive[i] == TM_INF) return TM_INF;
  struct loom_insn in;
  const char *why;
  loom_insn_decode(tm->insns + (size_t)i * LOOM_INSN_BYTES, &in, &why);
  const struct tm_cmdq *q = &tm->mod[loom_insn_queue(&in)].q;
  if (q->count == q->cap) return TM_INF;
  return max64(max64(tm->disp_t, tm->arrive[i] + consts.dispatch), q->room_at);
}

static void disp_act(struct fsim_timing *tm, uint64_t t) {
  uint32_t i = tm->fetch_disp++;
  struct loom_insn in;
  const char *why;
  loom_insn_decode(tm->insns + (size_t)i * LOOM_INSN_BYTES, &in, &why);
  struct tm_cmdq *q = &tm->mod[loom_insn_queue(&in)].q;
  uint32_t k = (q->head + q->count) % q->cap;
  q->idx[k] = i, q->at[k] = t;
  q->count++;
  tm->disp_t = t + 1;
  tm_trace(tm, LOOM_MOD_FETCH, LOOM_TRACE_INSN, i, in.opcode, tm->arrive[i], t + 1);
}

/* ---- ALU interlock ----
 *
 * loom_alu.v checks the row a micro-op reads first (the source of a vector
 * operand, else the destination; EPI reads one row: the source in its
 * moving form) against the destinations of the micro-ops accepted in the
 * Lat = 8 cycles before (its pipeline); the second read of a vector
 * operand follows unchecked.  So a micro-op waits until every earlier one
 * writing a row it reads was accepted at least Lat + 1 cycles before.  The
 * functional run calls this with the instruction's micro-ops decoded; the
 * stall is kept for the timed run. */

#define TM_ALU_RING 16 /* > Lat + 1: every micro-op that can still be in flight */

struct tm_alu_slot {
  uint32_t row;
  uint64_t accept;
};

void fsim_timing_alu(struct fsim_timing *tm, uint32_t index, const struct loom_insn_alu *in,
                     const struct loom_uop *uops) {
  struct tm_alu_slot ring[TM_ALU_RING] = {{0, 0}};
  uint32_t live = 0, head = 0, lat = consts.alu_lat;
  uint64_t c = lat + 1, stall = 0; /* first-read cycle of the next micro-op; nothing in flight yet */
  int epi = in->alu_op == LOOM_ALU_EPI, vec = !in->use_imm && !epi;
  if (index >= tm->alu_cap) return;
  for (uint32_t i = 0; i < in->iter_out; i++)
    for (uint32_t j = 0; j < in->iter_in; j++)
      for (uint32_t u = in->uop_begin; u < in->uop_end; u++) {
        uint32_t d = uops[u].acc + i * in->dst_factor_out + j * in->dst_factor_in;
        uint32_t sr = uops[u].inp + i * in->src_factor_out + j * in->src_factor_in;
        uint32_t row = epi && !in->use_imm ? sr : d;
        uint64_t t = c;
        for (uint32_t k = 0; k < live; k++) {
          const struct tm_alu_slot *e = &ring[(head + k) % TM_ALU_RING];
          if ((e->row == row || (vec && e->row == sr)) && e->accept + lat + 1 > t) t = e->accept + lat + 1;
        }
        stall += t - c;
        uint64_t acc = t + (uint64_t)vec;
        /* keep the micro-ops accepted in the last Lat cycles */
        while (live && ring[head].accept + lat + 1 <= acc + 1) head = (head + 1) % TM_ALU_RING, live--;
        if (live == TM_ALU_RING) head = (head + 1) % TM_ALU_RING, live--;
        ring[(head + live) % TM_ALU_RING] = (struct tm_alu_slot){d, acc};
        live++;
        c = acc + 1;
      }
  tm->alu_stall[index] = stall;
}

/* A depthwise GEMM's extra cycles over one per micro-op: each micro-op
 * reads its window's new taps from the INP banks, at least two cycles
 * (loom_dw_gemm_cycles; docs/rtl.md). */
void fsim_timing_dw(struct fsim_timing *tm, uint32_t index, const struct loom_insn_gemm *g,
                    const struct loom_insn_gcfg *gc, const struct loom_uop *uops, uint32_t block_in) {
  if (index >= tm->alu_cap) return;
  uint64_t n = (uint64_t)g->iter_out * g->iter_in * (g->uop_end - g->uop_begin);
  tm->alu_stall[index] = loom_dw_gemm_cycles(g, gc, uops, block_in) - n;
}

void fsim_timing_begin(struct fsim_timing *tm, const struct fsim_job *job) {
  if (tm->alu_cap < job->insn_count) {
    uint64_t *a = realloc(tm->alu_stall, job->insn_count * sizeof *a);
    if (!a) {
      tm->alu_cap = 0; /* no interlock stalls then: an underestimate, never a crash */
      return;
    }
    tm->alu_stall = a, tm->alu_cap = job->insn_count;
  }
  memset(tm->alu_stall, 0, job->insn_count * sizeof *tm->alu_stall);
}

/* ---- the run ---- */

static int cmp_event(const void *a, const void *b) {
  const struct loom_trace_event *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->module > y->module) - (x->module < y->module);
}

struct fsim_timing *fsim_timing_create(const struct loom_hw_config *cfg) {
  struct fsim_timing *tm = calloc(1, sizeof *tm);
  if (!tm) return NULL;
  tm->cfg = cfg;
  tm->dram_bw = TM_DRAM_BYTES_PER_CYCLE;
  tm->rd_max = (uint32_t)(cfg->max_outstanding_reads > 0 ? cfg->max_outstanding_reads : 1);
  if (tm->rd_max > TM_DRAM_OUTSTANDING) tm->rd_max = TM_DRAM_OUTSTANDING; /* the DRAM's limit too */
  tm->rd_slot = calloc(tm->rd_max, sizeof *tm->rd_slot);
  int ok = tm->rd_slot != NULL;
  for (int m = 0; m < LOOM_Q_COUNT && ok; m++) {
    struct tm_cmdq *q = &tm->mod[m].q;
    q->cap = (uint32_t)cfg->cmd_queue_depth;
    q->idx = calloc(q->cap, sizeof *q->idx);
    q->at = calloc(q->cap, sizeof *q->at);
    ok = q->idx && q->at;
  }
  for (int k = 0; k < FSIM_TOK_COUNT && ok; k++) {
    tm->tok[k].cap = (uint32_t)cfg->token_queue_depth;
    tm->tok[k].at = calloc(tm->tok[k].cap, sizeof *tm->tok[k].at);
    ok = tm->tok[k].at != NULL;
  }
  if (!ok) {
    fsim_timing_destroy(tm);
    return NULL;
  }
  return tm;
}

void fsim_timing_destroy(struct fsim_timing *tm) {
  if (!tm) return;
  free(tm->rd_slot);
  for (int m = 0; m < LOOM_Q_COUNT; m++) free(tm->mod[m].q.idx), free(tm->mod[m].q.at);
  for (int k = 0; k < FSIM_TOK_COUNT; k++) free(tm->tok[k].at);
  free(tm->arrive);
  free(tm->alu_stall);
  free(tm->ev);
  free(tm);
}

void fsim_timing_set_trace(struct fsim_timing *tm, int on) { tm->tracing = on; }

/* The DRAM's rate: tsim's option bw=, which the DSE sets to the bus width
 * of a board whose memory port keeps up with the accelerator's bus. */
void fsim_timing_set_dram_bw(struct fsim_timing *tm, uint32_t bytes_per_cycle) {
  tm->dram_bw = bytes_per_cycle ? bytes_per_cycle : TM_DRAM_BYTES_PER_CYCLE;
}

const struct loom_trace_event *fsim_timing_trace(const struct fsim_timing *tm, size_t *count) {
  *count = tm->nev;
  return tm->ev;
}

/* Whether entity `e`'s next step is a read burst request. */
static int reads_next(const struct fsim_timing *tm, int e) {
  if (e == TM_FETCH) return 1;
  if (e != LOOM_Q_LOAD && e != LOOM_Q_COMPUTE) return 0;
  const struct tm_mod *mod = &tm->mod[e];
  return mod->phase == TM_EXEC && mod->dma.active && !tm_dma_walk_done(&mod->dma);
}

/* Which of the entities ready at `best` steps first: the bus (its bursts
 * finishing free slots for the others), then the read requesters in
 * loom_axi_rd_arb.v's round-robin order after the last granted, then the
 * rest. */
static int pick(const struct fsim_timing *tm, const uint64_t *rt, uint64_t best) {
  static const int by_port[3] = {TM_FETCH, LOOM_Q_LOAD, LOOM_Q_COMPUTE};
  if (rt[TM_BUS] == best) return TM_BUS;
  for (uint32_t k = 1; k <= 3; k++) {
    int e = by_port[(tm->rr_last + k) % 3];
    if (rt[e] == best && reads_next(tm, e)) return e;
  }
  for (int e = 0; e < TM_ENTITIES; e++)
    if (rt[e] == best) return e;
  return TM_BUS;
}

static void reset_run(struct fsim_timing *tm, const struct fsim_job *job) {
  for (int m = 0; m < LOOM_Q_COUNT; m++) {
    struct tm_mod *mod = &tm->mod[m];
    struct tm_cmdq q = mod->q;
    memset(mod, 0, sizeof *mod);
    q.head = q.count = 0, q.room_at = 0;
    mod->q = q;
  }
  for (int k = 0; k < FSIM_TOK_COUNT; k++) tm->tok[k].head = tm->tok[k].count = 0, tm->tok[k].room_at = 0;
  tm->bus_t = 0;
  tm->rq.head = tm->rq.count = tm->wq.head = tm->wq.count = 0;
  tm->aw_count = tm->w_done = 0;
  tm->bus_bytes = (uint32_t)tm->cfg->bus_bits / 8;
  tm->beat_cycles = tm->bus_bytes / tm->dram_bw ? tm->bus_bytes / tm->dram_bw : 1;
  tm->rd_grants = tm->wr_grants = tm->ar_free = tm->aw_free = 0;
  tm->rr_last = 0;
  tm->now = 0;
  memset(tm->rd_slot, 0, tm->rd_max * sizeof *tm->rd_slot);
  memset(tm->wr_slot, 0, sizeof tm->wr_slot);
  tm->insns = job->insns;
  tm->insn_count = job->insn_count;
  tm->fetch_req = tm->fetch_disp = 0;
  tm->fetch_t = consts.fetch_lat;
  tm->disp_t = 0;
  tm->finished = 0;
  tm->end = 0;
  tm->nev = 0;
}

/* The stream index of the first FINISH (the functional run ended there). */
static uint32_t find_finish(const struct fsim_job *job) {
  for (uint32_t i = 0; i < job->insn_count; i++) {
    struct loom_insn in;
    const char *why;
    if (loom_insn_decode(job->insns + (size_t)i * LOOM_INSN_BYTES, &in, &why) == LOOM_ERR_NONE &&
        in.opcode == LOOM_OP_FINISH)
      return i;
  }
  return job->insn_count;
}

int fsim_timing_run(struct fsim_timing *tm, const struct fsim_job *job, uint64_t counters[LOOM_CNT_COUNT]) {
  reset_run(tm, job);
  if (!counters) return -1;
  tm->finish_index = find_finish(job);
  if (tm->finish_index >= job->insn_count || tm->alu_cap < job->insn_count) return -1;
  if (tm->arrive_cap < job->insn_count) {
    uint64_t *a = realloc(tm->arrive, job->insn_count * sizeof *a);
    if (!a) return -1;
    tm->arrive = a, tm->arrive_cap = job->insn_count;
  }
  while (!tm->finished) {
    uint64_t rt[TM_ENTITIES], best = TM_INF;
    rt[TM_BUS] = tm_bus_next(tm);
    rt[TM_FETCH] = fetch_ready(tm);
    rt[TM_DISPATCH] = disp_ready(tm);
    for (int m = 0; m < LOOM_Q_COUNT; m++) rt[m] = mod_ready(tm, m);
    for (int e = 0; e < TM_ENTITIES; e++)
      if (rt[e] < best) best = rt[e];
    if (best == TM_INF) return -1; /* cannot happen after a clean functional run */
    int who = pick(tm, rt, best);
    if (best < tm->now) best = tm->now; /* a step never goes back in time */
    tm->now = best;
    if (who == TM_BUS) tm_bus_act(tm, best);
    else if (who == TM_FETCH) fetch_act(tm, best);
    else if (who == TM_DISPATCH) disp_act(tm, best);
    else mod_act(tm, who, best);
  }
  static const int busy[LOOM_Q_COUNT] = {LOOM_CNT_LOAD_BUSY, LOOM_CNT_COMPUTE_BUSY, LOOM_CNT_STORE_BUSY};
  counters[LOOM_CNT_CYCLES] = tm->end;
  for (int m = 0; m < LOOM_Q_COUNT; m++) {
    counters[busy[m]] = tm->mod[m].busy;
    counters[busy[m] + 1] = tm->mod[m].tok_stall;
    counters[busy[m] + 2] = tm->mod[m].mem_stall;
  }
  if (tm->tracing && tm->nev) qsort(tm->ev, tm->nev, sizeof *tm->ev, cmp_event);
  return 0;
}
