/*
 * fsim_sched.c - fetch, the command and token queues, and the modules.
 *
 * The machine of docs/isa.md is four sequential processes:
 *
 *   fetch    reads instruction i, decodes it (ILLEGAL stops the job here, in
 *            stream order), waits for room in its module's command queue,
 *            pushes it; stops after dispatching FINISH.
 *   load, compute, store
 *            take the next instruction from their command queue, pop tokens
 *            (prev, then next; waiting while empty), execute, push tokens
 *            (prev, then next; waiting while full).
 *
 * Each process is a state machine here (struct fsim_fetch, enum fsim_phase)
 * and fsim_schedule() runs them round-robin, each as far as it can go.
 * Because every wait is a blocking read or write of a bounded FIFO, the
 * result does not depend on this order, so the cheapest fair order is as
 * good as the RTL's cycle-by-cycle one.  When a whole round makes no
 * progress nothing ever will: the job either drained without FINISH
 * (NOFINISH) or is deadlocked, and the report names every waiting
 * instruction and the queue it waits on.
 *
 * FINISH executes in compute once load and store are idle with empty
 * queues; fetch dispatches nothing after it, so later instructions are never
 * read.  The job ends when FINISH executes, so its push flags have no
 * effect.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/fsim/fsim_internal.h"

static const char *const tokq_names[] = {"L2C", "C2L", "C2S", "S2C"};
_Static_assert(sizeof tokq_names / sizeof tokq_names[0] == FSIM_TOK_COUNT,
               "a name per token queue");

/* The token queue each phase of each module uses; -1 where the module has no
 * such neighbour (loom_insn_decode rejects those flags). */
static const int8_t phase_tokq[LOOM_Q_COUNT][FSIM_PHASE_COUNT] = {
    [LOOM_Q_LOAD] = {-1, -1, FSIM_TOK_C2L, -1, -1, FSIM_TOK_L2C},
    [LOOM_Q_COMPUTE] = {-1, FSIM_TOK_L2C, FSIM_TOK_S2C, -1, FSIM_TOK_C2L, FSIM_TOK_C2S},
    [LOOM_Q_STORE] = {-1, FSIM_TOK_C2S, -1, -1, FSIM_TOK_S2C, -1},
};

static const char *const module_names[LOOM_Q_COUNT] = {"load", "compute", "store"};

static const int insn_counter[LOOM_Q_COUNT] = {LOOM_CNT_INSN_LOAD, LOOM_CNT_INSN_COMPUTE,
                                               LOOM_CNT_INSN_STORE};

_Static_assert(LOOM_Q_COUNT == 3, "one row per module in the tables above");
_Static_assert(LOOM_OP_COUNT == 8, "dispatch() handles every opcode");

/* ---- command queues ---- */

static int cmdq_full(const struct fsim_cmdq *q) { return q->count == q->cap; }

static void cmdq_push(struct fsim_cmdq *q, const struct fsim_slot *s) {
  LOOM_ASSERT(!cmdq_full(q));
  q->slots[(q->head + q->count) % q->cap] = *s;
  q->count++;
}

static int cmdq_pop(struct fsim_cmdq *q, struct fsim_slot *s) {
  if (q->count == 0) return 0;
  *s = q->slots[q->head];
  q->head = (q->head + 1) % q->cap;
  q->count--;
  return 1;
}

/* ---- fetch ---- */

/* Reads and decodes the next instruction into fetch's hand; 0 at the end of
 * the stream or on an illegal encoding. */
static int fetch_read(struct fsim *sim) {
  struct fsim_run_state *st = &sim->st;
  struct fsim_fetch *f = &st->fetch;
  const char *why = "invalid encoding";
  if (f->next >= st->job->insn_count) {
    f->done = 1;
    return 0;
  }
  f->held.index = f->next++;
  st->res->counters[LOOM_CNT_BYTES_RD_INSN] += LOOM_INSN_BYTES;
  const uint8_t *bytes = st->job->insns + (size_t)f->held.index * LOOM_INSN_BYTES;
  if (loom_insn_decode(bytes, &f->held.insn, &why) != LOOM_ERR_NONE) {
    fsim_fail(sim, LOOM_ERR_ILLEGAL, &f->held, "illegal instruction: %s", why);
    return 0;
  }
  f->holding = 1;
  return 1;
}

static int fetch_step(struct fsim *sim) {
  struct fsim_fetch *f = &sim->st.fetch;
  if (f->done || (!f->holding && !fetch_read(sim))) return 0;
  struct fsim_cmdq *q = &sim->st.mod[loom_insn_queue(&f->held.insn)].q;
  if (cmdq_full(q)) return 0;
  cmdq_push(q, &f->held);
  f->holding = 0;
  if (f->held.insn.opcode == LOOM_OP_FINISH) f->done = 1;
  return 1;
}

/* ---- modules ---- */

static uint32_t phase_flag(const struct loom_insn *in, enum fsim_phase p) {
  switch (p) {
  case FSIM_PHASE_POP_PREV: return in->pop_prev;
  case FSIM_PHASE_POP_NEXT: return in->pop_next;
  case FSIM_PHASE_PUSH_PREV: return in->push_prev;
  case FSIM_PHASE_PUSH_NEXT: return in->push_next;
  default: return 0;
  }
}

static void advance(struct fsim_module *mod) {
  mod->phase = mod->phase == FSIM_PHASE_PUSH_NEXT ? FSIM_PHASE_IDLE : mod->phase + 1;
}

/* The token queue module `m` waits on in its current phase, or -1. */
static int waiting_tokq(const struct fsim_module *mod, int m) {
  if (!phase_flag(&mod->cur.insn, mod->phase)) return -1;
  int t = phase_tokq[m][mod->phase];
  LOOM_ASSERT(t >= 0 && "loom_insn_decode rejects token flags a queue lacks");
  return t;
}

static int token_pop(struct fsim *sim, int m) {
  struct fsim_module *mod = &sim->st.mod[m];
  int t = waiting_tokq(mod, m);
  if (t >= 0) {
    if (sim->st.tokens[t] == 0) return 0;
    sim->st.tokens[t]--;
  }
  advance(mod);
  return 1;
}

static int token_push(struct fsim *sim, int m) {
  struct fsim_module *mod = &sim->st.mod[m];
  int t = waiting_tokq(mod, m);
  if (t >= 0) {
    if (sim->st.tokens[t] >= (uint32_t)sim->cfg->token_queue_depth) return 0;
    sim->st.tokens[t]++;
  }
  advance(mod);
  return 1;
}

static uint32_t dispatch(struct fsim *sim, const struct fsim_slot *s) {
  switch (s->insn.opcode) {
  case LOOM_OP_LOAD: return fsim_load(sim, s);
  case LOOM_OP_STORE: return fsim_store(sim, s);
  case LOOM_OP_GEMM: return fsim_gemm(sim, s);
  case LOOM_OP_ALU: return fsim_alu(sim, s);
  case LOOM_OP_QCFG: fsim_qcfg(sim, s); return LOOM_ERR_NONE;
  case LOOM_OP_GCFG: fsim_gcfg(sim, s); return LOOM_ERR_NONE;
  case LOOM_OP_NOP: return LOOM_ERR_NONE;
  default: LOOM_ASSERT(0 && "FINISH is the scheduler's, the rest never pass decode"); return 0;
  }
}

static int drained(const struct fsim_module *mod) {
  return mod->phase == FSIM_PHASE_IDLE && mod->q.count == 0;
}

/* FINISH: waits until load and store are idle with empty queues. */
static int finish(struct fsim *sim) {
  struct fsim_run_state *st = &sim->st;
  if (!drained(&st->mod[LOOM_Q_LOAD]) || !drained(&st->mod[LOOM_Q_STORE])) return 0;
  st->res->counters[LOOM_CNT_INSN_COMPUTE]++;
  st->finished = 1;
  return 0;
}

/* Adds `work` to the job's total; 0 (and TIMEOUT) when it breaks the budget.
 * LOAD and STORE charge their rows after their bounds checks, GEMM and ALU
 * each micro-op after its index checks, so an error the hardware raises
 * before the budget runs out is reported as that error, not TIMEOUT.  The
 * job's progress hook hangs here too: the one place all work passes. */
int fsim_charge(struct fsim *sim, const struct fsim_slot *s, uint64_t work) {
  struct fsim_run_state *st = &sim->st;
  st->work += work;
  if (st->job->progress && st->work >= st->next_progress) {
    st->next_progress = st->work + FSIM_PROGRESS_WORK;
    st->job->progress(st->job->progress_ctx, st->work);
  }
  if (!st->job->work_budget || st->work <= st->job->work_budget) return 1;
  fsim_fail(sim, LOOM_ERR_TIMEOUT, s, "work budget of %llu micro-ops and DRAM rows exhausted",
            (unsigned long long)st->job->work_budget);
  return 0;
}

/* Instructions that charge their own work (fsim_charge) as they execute. */
static int charges_itself(uint32_t opcode) {
  return opcode == LOOM_OP_LOAD || opcode == LOOM_OP_STORE || opcode == LOOM_OP_GEMM ||
         opcode == LOOM_OP_ALU;
}

static int execute(struct fsim *sim, int m) {
  struct fsim_module *mod = &sim->st.mod[m];
  if (mod->cur.insn.opcode == LOOM_OP_FINISH) return finish(sim);
  if (!charges_itself(mod->cur.insn.opcode) && !fsim_charge(sim, &mod->cur, 1)) return 0;
  if (dispatch(sim, &mod->cur) != LOOM_ERR_NONE) return 0;
  sim->st.res->counters[insn_counter[m]]++;
  advance(mod);
  return 1;
}

static int module_step(struct fsim *sim, int m) {
  struct fsim_module *mod = &sim->st.mod[m];
  switch (mod->phase) {
  case FSIM_PHASE_IDLE:
    if (!cmdq_pop(&mod->q, &mod->cur)) return 0;
    advance(mod);
    return 1;
  case FSIM_PHASE_POP_PREV:
  case FSIM_PHASE_POP_NEXT: return token_pop(sim, m);
  case FSIM_PHASE_EXEC: return execute(sim, m);
  case FSIM_PHASE_PUSH_PREV:
  case FSIM_PHASE_PUSH_NEXT: return token_push(sim, m);
  default: LOOM_ASSERT(0 && "bad phase"); return 0;
  }
}

/* ---- the end: NOFINISH or DEADLOCK ---- */

/* printf onto the end of buf[n], which already holds *k bytes; truncates. */
static void appendf(char *buf, size_t n, size_t *k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void appendf(char *buf, size_t n, size_t *k, const char *fmt, ...) {
  if (*k + 1 >= n) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + *k, n - *k, fmt, ap);
  va_end(ap);
  if (w > 0) *k = *k + (size_t)w < n ? *k + (size_t)w : n - 1;
}

/* Appends "insn N (LABEL) in MODULE waits ..." for a stuck module. */
static void describe_wait(const struct fsim *sim, int m, char *buf, size_t n, size_t *k) {
  const struct fsim_module *mod = &sim->st.mod[m];
  char label[48];
  fsim_insn_label(&mod->cur.insn, label, sizeof label);
  appendf(buf, n, k, "insn %u (%s) in %s ", mod->cur.index, label, module_names[m]);
  if (mod->phase == FSIM_PHASE_EXEC) {
    appendf(buf, n, k, "waits for the load and store modules to drain");
    return;
  }
  const char *tokq = tokq_names[waiting_tokq(mod, m)];
  if (mod->phase <= FSIM_PHASE_POP_NEXT)
    appendf(buf, n, k, "waits to pop the empty %s token queue", tokq);
  else
    appendf(buf, n, k, "waits to push the full %s token queue", tokq);
}

static void report_deadlock(struct fsim *sim) {
  const struct fsim_fetch *f = &sim->st.fetch;
  char msg[sizeof sim->st.res->message];
  size_t k = 0;
  uint32_t first = UINT32_MAX;
  appendf(msg, sizeof msg, &k, "deadlock");
  for (int m = 0; m < LOOM_Q_COUNT; m++) {
    const struct fsim_module *mod = &sim->st.mod[m];
    if (mod->phase == FSIM_PHASE_IDLE) continue;
    appendf(msg, sizeof msg, &k, first == UINT32_MAX ? ": " : "; ");
    if (mod->cur.index < first) first = mod->cur.index;
    describe_wait(sim, m, msg, sizeof msg, &k);
  }
  if (f->holding) {
    char label[48];
    fsim_insn_label(&f->held.insn, label, sizeof label);
    appendf(msg, sizeof msg, &k, "; fetch holds insn %u (%s) for the full %s command queue",
            f->held.index, label, loom_queue_name((uint32_t)loom_insn_queue(&f->held.insn)));
  }
  LOOM_ASSERT(first != UINT32_MAX && "a deadlock has a waiting instruction");
  fsim_fail_at(sim, LOOM_ERR_DEADLOCK, first, "%s", msg);
}

static void report_stuck(struct fsim *sim) {
  const struct fsim_run_state *st = &sim->st;
  int all_drained = st->fetch.done && !st->fetch.holding;
  for (int m = 0; m < LOOM_Q_COUNT; m++) all_drained = all_drained && drained(&st->mod[m]);
  if (all_drained)
    fsim_fail_at(sim, LOOM_ERR_NOFINISH, st->job->insn_count,
                 "the stream of %u instructions ended without FINISH", st->job->insn_count);
  else
    report_deadlock(sim);
}

/* ---- the round-robin ---- */

static int stopped(const struct fsim *sim) {
  return sim->st.res->error != LOOM_ERR_NONE || sim->st.finished;
}

static int run_fetch(struct fsim *sim) {
  int any = 0;
  while (!stopped(sim) && fetch_step(sim)) any = 1;
  return any;
}

static int run_module(struct fsim *sim, int m) {
  int any = 0;
  while (!stopped(sim) && module_step(sim, m)) any = 1;
  return any;
}

void fsim_schedule(struct fsim *sim) {
  while (!stopped(sim)) {
    int progress = run_fetch(sim);
    for (int m = 0; m < LOOM_Q_COUNT; m++) {
      if (!sim->reverse_schedule) progress |= run_module(sim, m);
      else if (!stopped(sim)) progress |= module_step(sim, LOOM_Q_COUNT - 1 - m);
    }
    if (!progress && !stopped(sim)) report_stuck(sim);
  }
}
